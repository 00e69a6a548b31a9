/*
 * The ordering of the red-black GPU solvers' host code, checked without a GPU: the real
 * src/methods/redblack/cuda/redblack_gpu.cu and redblack_gpu2.cu (launches rewritten into calls by
 * tests/methods/redblack/rb_order_emu.sh) run against the recording runtime of emu_cuda/cuda_runtime.h,
 * driven as the solver drives them (src/methods/redblack/redblack_gpu_desc.c): create (fills, f, upload),
 * iterations, downloads that the host then reads (residual checks, the solution), a restart
 * and the tuner's resets (the host rewrites its grid and uploads it), shape changes, free.
 * Every two accesses to the same bytes, one a write, by the host, a copy, a fill or a kernel,
 * must be ordered by streams, events and host synchronisations (emu_cuda_order.cpp; pairs
 * of kernels inside the iterations are bench/experiments/mgpu_rb2_model.py's, row by row). Covers every
 * one-GPU version (pinned and pageable host grids, f array or not, 2-D and 3-D, rb-tuned's
 * shape changes) and rb-mgpu on 2, 3, 4 slabs on one and on several devices in each scheme
 * (streaming, graphs, kernel copies; on two slabs the in-place fused and v1).
 * Prints every unordered pair (the two operations, file:line, streams); exit 1 if any.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/grid.h"
#include "core/stencil.h"
#include "cuda_runtime.h"
#include "methods/redblack/cuda/redblack_gpu.h"

/* the tuning cache's lookup (src/methods/jacobi/cuda/gpu_tune.cu): no entry */
extern "C" int hri_gpu_rb_shape_lookup(const hr_tuning *, int, const char *, const char *, int, int, int,
                                      int *, const char **)
{
    return 0;
}

namespace
{

struct host_grids {
    hr_grid_layout l;
    std::vector<unsigned char> u, f;
};

host_grids grids(int dim, int nx, int ny, int nz, size_t esize, bool f)
{
    host_grids h;
    hr_layout_init(&h.l, dim, nx, ny, nz, esize);
    h.u.assign(h.l.count * esize, 0);
    if (f) h.f.assign(h.l.count * esize, 0);
    emu_host_access("the host fills its grid", h.u.data(), h.u.size(), true);
    if (f) emu_host_access("the host fills f", h.f.data(), h.f.size(), true);
    return h;
}

hr_gpu_rb_params params(const host_grids &h, int variant, bool pinned)
{
    hr_gpu_rb_params p;
    std::memset(&p, 0, sizeof p);
    p.variant = variant;
    p.dim = h.l.dim;
    p.nx = h.l.nx;
    p.ny = h.l.ny;
    p.nz = h.l.nz;
    p.esize = h.l.esize;
    p.pitch = h.l.pitch;
    p.plane = h.l.plane;
    p.offset = h.l.offset;
    p.count = h.l.count;
    p.omega = 1.0;
    p.spike_i = h.f.empty() ? HR_SPIKE_INDEX(h.l.ny) : -1;
    p.spike_j = HR_SPIKE_INDEX(h.l.nx);
    p.spike_k = h.l.dim == 3 ? HR_SPIKE_INDEX(h.l.nz) : 0;
    p.hf_host = h.f.empty() ? nullptr : h.f.data();
    p.pinned = pinned;
    return p;
}

/* The solver's calls on one state (one GPU or several), as redblack_gpu_desc.c makes them. */
struct ops {
    hr_status (*iterations)(void *g, long count, char *err, size_t n);
    hr_status (*download)(void *g, void *u, double *t, char *err, size_t n);
    hr_status (*upload)(void *g, const void *u, double *t, char *err, size_t n);
};

long failures;

void call(hr_status rc, const char *what, const char *err, const std::string &label)
{
    if (rc != HR_OK) {
        std::printf("FAILED %s in %s: %s\n", what, label.c_str(), err);
        failures++;
    }
}

/* sweeps / sync_host / upload of the solver glue, each with what the host does around it */
void sweeps(const ops &o, void *g, long n, const std::string &label)
{
    char err[256] = "";
    emu_set_phase(1);
    call(o.iterations(g, n, err, sizeof err), "iterations", err, label);
    emu_set_phase(0);
}

void sync_host(const ops &o, void *g, host_grids &h, const std::string &label)
{
    char err[256] = "";
    double t;
    call(o.download(g, h.u.data(), &t, err, sizeof err), "download", err, label);
    emu_host_access("the host reads the downloaded grid (residual, solution)", h.u.data(), h.u.size(), false);
}

void restart(const ops &o, void *g, host_grids &h, const std::string &label)
{
    char err[256] = "";
    double t;
    emu_host_access("the host rewrites its grid (restart, the tuner's reset)", h.u.data(), h.u.size(), true);
    call(o.upload(g, h.u.data(), &t, err, sizeof err), "upload", err, label);
}

/* the run: checks mid-run, the end, a restart, the end again */
void run(const ops &o, void *g, host_grids &h, const std::string &label)
{
    sweeps(o, g, 3, label);
    sync_host(o, g, h, label);
    sweeps(o, g, 4, label);
    sync_host(o, g, h, label);
    restart(o, g, h, label);
    sweeps(o, g, 3, label);
    sync_host(o, g, h, label);
}

void release(host_grids &h)
{
    emu_host_access("the host frees its grid", h.u.data(), h.u.size(), true);
    if (!h.f.empty()) emu_host_access("the host frees f", h.f.data(), h.f.size(), true);
}

hr_status one_it(void *g, long c, char *e, size_t n)
{
    return hri_gpu_rb_iterations((hr_gpu_rb *)g, c, e, n);
}
hr_status one_down(void *g, void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb_download((hr_gpu_rb *)g, u, t, e, n);
}
hr_status one_up(void *g, const void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb_upload((hr_gpu_rb *)g, u, t, e, n);
}
hr_status two_it(void *g, long c, char *e, size_t n)
{
    return hri_gpu_rb2_iterations((hr_gpu_rb2 *)g, c, e, n);
}
hr_status two_down(void *g, void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb2_download((hr_gpu_rb2 *)g, u, t, e, n);
}
hr_status two_up(void *g, const void *u, double *t, char *e, size_t n)
{
    return hri_gpu_rb2_upload((hr_gpu_rb2 *)g, u, t, e, n);
}
const ops one_gpu = {one_it, one_down, one_up}, slabs = {two_it, two_down, two_up};

const char *const names[HR_GPU_RB_COUNT] = {"rb-v1",  "rb-v2",    "rb-v3",     "rb-v4",
                                            "rb-ldg", "rb-tuned", "rb-inplace"};

/* One GPU; rb-tuned also through the tuner's loop (hri_gpu_rb_tune): per shape a reset and
 * upload, sweeps, a download compared on the host, then timed sweeps. */
long one(int variant, int dim, size_t esize, bool pinned, bool f)
{
    const std::string label = std::string(names[variant]) + (dim == 3 ? " 3-D" : " 2-D") +
                              (esize == 8 ? " double" : " single") + (pinned ? " pinned" : " pageable") +
                              (f ? " f" : " spike");
    emu_reset(1);
    host_grids h = grids(dim, 37, 29, 9, esize, f);
    hr_gpu_rb_params p = params(h, variant, pinned);
    hr_gpu_rb *g = nullptr;
    char name[128], err[256] = "";
    int shape[3];
    double t;
    const long f0 = failures;
    call(hri_gpu_rb_create(&p, h.u.data(), &g, name, sizeof name, shape, &t, err, sizeof err), "create", err,
         label);
    if (failures == f0) {
        run(one_gpu, g, h, label);
        if (variant == HR_GPU_RB_TUNED) {
            const int cands[][3] = {{128, 1, 8}, {64, 18, 4}, {32, 2, 2}};
            for (auto &c : cands) {
                call(hri_gpu_rb_set_shape(g, c[0], c[1], c[2], err, sizeof err), "shape", err, label);
                restart(one_gpu, g, h, label);
                sweeps(one_gpu, g, 3, label);
                sync_host(one_gpu, g, h, label);
                for (int r = 0; r < 4; r++)
                    sweeps(one_gpu, g, 3, label);
            }
        }
    }
    hri_gpu_rb_free(g);
    release(h);
    return emu_check(label.c_str());
}

/* rb-mgpu on ng slabs (the knobs tuning.rb2_* pick the scheme; one: every slab on device 0). */
long many(const char *var, const char *val, int ng, bool one_device, bool pinned, bool f, size_t esize)
{
    const std::string label = "rb-mgpu on " + std::to_string(ng) + " slabs, " +
                              (var ? std::string(var) + "=" + val : std::string("stream")) +
                              (one_device ? ", one device" : ", one device each") +
                              (esize == 8 ? ", double" : ", single") + (pinned ? ", pinned" : ", pageable") +
                              (f ? ", f" : ", spike");
    emu_reset(one_device ? 1 : ng);
    host_grids h = grids(2, 37, 29, 1, esize, f);
    hr_gpu_rb_params p = params(h, HR_GPU_RB_V1, pinned);
    p.gpus = ng;
    if (var && std::string(var) == "rb2_graph") p.tune.rb2_graph = std::atoi(val);
    if (var && std::string(var) == "rb2_kcopy") p.tune.rb2_kcopy = HR_TUNE_ON;
    if (var && std::string(var) == "rb2_old") p.tune.rb2_old = HR_TUNE_ON;
    if (var && std::string(var) == "rb2_v1") p.tune.rb2_v1 = HR_TUNE_ON;
    if (one_device) p.tune.rb2_one = HR_TUNE_ON;
    hr_gpu_rb2 *g = nullptr;
    char name[128], err[256] = "";
    double t;
    const long f0 = failures;
    call(hri_gpu_rb2_create(&p, h.u.data(), &g, name, sizeof name, &t, err, sizeof err), "create", err, label);
    if (failures == f0) run(slabs, g, h, label);
    hri_gpu_rb2_free(g);
    release(h);
    return emu_check(label.c_str());
}

} // namespace

int main()
{
    long bad = 0, cases = 0, ops_seen = 0;
    for (int v = 0; v < HR_GPU_RB_COUNT; v++)
        for (int k = 0; k < 8; k++) {
            const bool pinned = k & 1, f = k & 2;
            const size_t esize = k & 4 ? 8 : 4;
            bad += one(v, 2, esize, pinned, f);
            ops_seen += emu_ops();
            cases++;
            if (v == HR_GPU_RB_V1 || v == HR_GPU_RB_LDG) {
                bad += one(v, 3, esize, pinned, f);
                cases++;
            }
        }
    const char *const modes[][2] = {
        {nullptr, nullptr}, {"rb2_graph", "2"}, {"rb2_kcopy", "1"}, {"rb2_old", "1"}, {"rb2_v1", "1"}};
    for (int m = 0; m < 5; m++)
        for (int ng = 2; ng <= (m < 3 ? 4 : 2); ng++)
            for (int k = 0; k < 8; k++) {
                const bool one_device = k & 1, pinned = k & 2, f = k & 4;
                bad += many(modes[m][0], modes[m][1], ng, one_device, pinned, f, ((k >> 1) + ng) & 1 ? 8 : 4);
                ops_seen += emu_ops();
                cases++;
            }
    bad += failures;
    std::printf("rb_order_emu: %ld runs of the red-black GPU host code (%ld device and host operations), "
                "%ld unordered conflicting pairs or failures\n",
                cases, ops_seen, bad);
    return bad ? 1 : 0;
}
