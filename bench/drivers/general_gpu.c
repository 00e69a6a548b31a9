/*
 * The general-problem engine on the GPU (methods/stencil/cuda):
 *
 *   general_gpu --json OUT.json [--quick | --tiny] [--parts jacobi,mg] [--repeats R]
 *
 * (--tiny: small grids that check the driver itself, e.g. on the host emulation)
 * 1. copy: cudaMemcpy device to device (2 x 1 GiB buffers, read + written bytes), median of
 *    R after two untimed copies, at the start and at the end; the library's copy kernel
 *    (hr_measure_device_bandwidth) beside it;
 * 2. jacobi: the finest level's weighted Jacobi sweep (the star-stencil kernel) of a general
 *    problem, 2-D 8192^2 and 3-D 512^3 (--quick: 4096^2, 256^3) with a Neumann face (y-) and
 *    a coefficient field, through the backend's table: GB/s under the byte model "6 arrays x
 *    8 bytes per unknown in 2-D, 7 in 3-D" (u, b, diag, one coupling per axis read, the
 *    result written), median of R blocks of sweeps after an untimed block, for the default
 *    block shape and several others (bx x by threads, h lines a thread marches; 0: the
 *    default rule), each with its ratio to the cudaMemcpy rate of the run; the answer checked:
 *    3 sweeps on the GPU bitwise equal to the CPU backend's (all host threads);
 * 3. mg: multigrid V(2,2) cycles (red-black smoother) to a relative residual of 1e-8 from a
 *    zero guess, through hr_grid_solver on the GPU: constant coefficient (a = 2) with
 *    Dirichlet faces, a coefficient field with Dirichlet faces, mixed faces (x periodic,
 *    y-/z- Neumann, the others Dirichlet) with a = 1, at 8191^2 and 8000^2, 511^3 and 500^3
 *    (--quick: 2047^2 / 2000^2, 127^3 / 120^3), the manufactured right-hand side; at 2^k - 1
 *    also the model problem (a = 1, Dirichlet 0), which the model multigrid engine runs, for
 *    comparison. Time: the iteration loop (hr_result.time_s), median of 3 solves; set-up
 *    apart.
 *
 * Exit status: 0; 1 when an answer check fails or a case does not converge; 2 usage; 77 no
 * GPU. The JSON is written to OUT.json.tmp and renamed at the end.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "hetrelax/hetrelax.h"
#include "methods/stencil/cuda/stencil_cuda.h"
#include "methods/stencil/stencil_kernels.h"
#include "runtime/cuda/cuda_api.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int cmp_d(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A message made safe for a JSON string (quotes and backslashes become '). */
static const char *clean(char *s)
{
    for (char *c = s; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '\'';
    return s;
}

/* ------------------------------------------------------------------ copy */

/* cudaMemcpy device to device of `bytes`: (read + written bytes) / s, median of reps. */
static double memcpy_gbps(size_t bytes, int reps)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double ms[64], g = 0.0;
    if (reps > 64) reps = 64;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
        cudaMemset(a, 0x3c, bytes) != cudaSuccess || cudaEventCreate(&e0) != cudaSuccess ||
        cudaEventCreate(&e1) != cudaSuccess)
        goto done;
    for (int r = -2; r < reps; r++) {
        float t = 0.0f;
        if (cudaEventRecord(e0, 0) != cudaSuccess ||
            cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0) != cudaSuccess ||
            cudaEventRecord(e1, 0) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
            cudaEventElapsedTime(&t, e0, e1) != cudaSuccess)
            goto done;
        if (r >= 0) ms[r] = t;
    }
    g = 2.0 * (double)bytes / (median(ms, reps) * 1e-3) * 1e-9;
done:
    (void)cudaGetLastError();
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return g;
}

/* ------------------------------------------------------------------ the problems */

/* The coefficient field 1 + 0.5 sin(2 pi x) sin(2 pi y) (sin(2 pi z)) at the cell centres. */
static double *coef_field(int dim, const int n[3])
{
    const size_t cnt = (size_t)n[0] * n[1] * (dim == 3 ? n[2] : 1);
    double *c = malloc(cnt * sizeof *c);
    if (!c) return NULL;
    size_t q = 0;
    for (int k = 0; k < (dim == 3 ? n[2] : 1); k++) {
        const double sz = dim == 3 ? sin(2.0 * M_PI * (k + 0.5) / n[2]) : 1.0;
        for (int j = 0; j < n[1]; j++) {
            const double sy = sin(2.0 * M_PI * (j + 0.5) / n[1]) * sz;
            for (int i = 0; i < n[0]; i++)
                c[q++] = 1.0 + 0.5 * sin(2.0 * M_PI * (i + 0.5) / n[0]) * sy;
        }
    }
    return c;
}

/* ------------------------------------------------------------------ the Jacobi sweep */

typedef struct jshape {
    int bx, by, h;
    double gbps;
} jshape;

static const int shapes2[][3] = {{0, 0, 0},   {128, 2, 16}, {128, 2, 32}, {128, 1, 32}, {256, 1, 32},
                                 {64, 4, 32}, {32, 8, 32},  {128, 4, 64}, {256, 2, 8},  {512, 1, 16}};
static const int shapes3[][3] = {{0, 0, 0},    {64, 4, 16}, {64, 4, 32},  {32, 8, 32},  {32, 4, 32},
                                 {128, 2, 32}, {64, 8, 32}, {32, 16, 16}, {128, 4, 16}, {64, 2, 64}};
#define NSHAPES 10

typedef struct jrec {
    int dim, n;
    long sweeps;
    int reps, ok, nshapes;
    double bytes_per_sweep;
    jshape sh[NSHAPES];
    char why[200];
} jrec;

/* Median seconds per sweep of `reps` blocks of `sweeps` (ping-pong u <-> t) after one untimed block. */
static double time_jacobi(const hr_st_backend *k, hr_st_exec *ex, const hr_sop *dA, double **u, double **t,
                          const double *b, long sweeps, int reps)
{
    double sec[64];
    for (int r = -1; r < reps; r++) {
        hri_st_cuda_sync(ex);
        const double t0 = hr_now();
        for (long s = 0; s < sweeps; s++) {
            k->jacobi(ex, dA, *u, b, *t, 0.8);
            double *w = *u;
            *u = *t, *t = w;
        }
        if (hri_st_cuda_sync(ex) != HR_OK) return NAN;
        if (r >= 0) sec[r] = (hr_now() - t0) / (double)sweeps;
    }
    return median(sec, reps);
}

static void jacobi_case(int dim, int n, int reps, long max_sweeps, jrec *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->dim = dim, rec->n = n, rec->reps = reps;
    hr_problem p;
    hr_problem_init_model(&p, dim, n, n, dim == 3 ? n : 0);
    hr_problem_set_bc(&p, HR_FACE_Y_MINUS, HR_BC_NEUMANN, 0.0, NULL);
    hr_problem_set_rhs(&p, HR_RHS_MANUFACTURED, NULL);
    const int nn[3] = {n, n, dim == 3 ? n : 1}, per[3] = {0, 0, 0};
    double *coef = coef_field(dim, nn);
    hr_problem_set_coef(&p, 1.0, coef);
    hr_sgrid g;
    hri_sgrid_init(&g, dim, nn, per);
    rec->bytes_per_sweep = (dim == 3 ? 7.0 : 6.0) * 8.0 * (double)g.count;
    rec->sweeps = (long)ceil(4.5e11 / rec->bytes_per_sweep); /* about 0.15 s a block at 3 TB/s */
    if (rec->sweeps < 5) rec->sweeps = 5;
    if (rec->sweeps > max_sweeps) rec->sweeps = max_sweeps;
    hr_sop A;
    double *b = hri_sgrid_alloc(&g), *u = hri_sgrid_alloc(&g), *t = hri_sgrid_alloc(&g),
           *hg = hri_sgrid_alloc(&g);
    const hr_st_backend *k = hri_st_cuda_backend();
    hr_st_exec ex = {NULL, NULL, 0, NULL, NULL, 0};
    hr_sop dA;
    memset(&dA, 0, sizeof dA);
    double *du = NULL, *dt = NULL, *db = NULL;
    hr_team *team = NULL;
    if (!coef || !b || !u || !t || !hg || hri_sop_alloc(&A, &g, 0) != HR_OK) {
        snprintf(rec->why, sizeof rec->why, "no host memory");
        goto done;
    }
    if (hri_discretize(&p, NULL, &A, b, NULL) != HR_OK) {
        snprintf(rec->why, sizeof rec->why, "discretize: %s", hr_last_error());
        goto done;
    }
    for (int z = 0; z < g.n[2]; z++) /* a start with every scale in it */
        for (int y = 0; y < g.n[1]; y++)
            for (int x = 0; x < g.n[0]; x++)
                u[hr_sgrid_index(&g, x, y, z)] =
                    sin(0.37 * x + 0.11 * y) * cos(0.05 * z) + ((x ^ y ^ z) & 1) * 0.25;
    if (k->open(&ex, 0, (size_t)g.n[1] * g.n[2]) != HR_OK || k->twin_op(&ex, &A, &dA) != HR_OK ||
        !(du = k->alloc(&ex, &g)) || !(dt = k->alloc(&ex, &g)) || !(db = k->alloc(&ex, &g))) {
        snprintf(rec->why, sizeof rec->why, "device: no memory or no device (%s)", hri_st_cuda_error(&ex));
        goto done;
    }
    k->upload(&ex, &g, db, b);
    const int(*sh)[3] = dim == 3 ? shapes3 : shapes2;
    rec->nshapes = NSHAPES;
    for (int s = 0; s < NSHAPES; s++) {
        jshape *j = &rec->sh[s];
        j->bx = sh[s][0], j->by = sh[s][1], j->h = sh[s][2];
        if (hri_st_cuda_set_shape(&ex, dim, j->bx ? j->bx : (dim == 3 ? 64 : 128),
                                 j->by ? j->by : (dim == 3 ? 4 : 2), j->h) != HR_OK) {
            j->gbps = NAN;
            continue;
        }
        k->upload(&ex, &g, du, u);
        const double sec = time_jacobi(k, &ex, &dA, &du, &dt, db, rec->sweeps, reps);
        j->gbps = rec->bytes_per_sweep / sec * 1e-9;
        printf("  jacobi %d-D n %d shape %3dx%-2dx%-2d %8.1f GB/s\n", dim, n, j->bx, j->by, j->h, j->gbps);
        fflush(stdout);
    }
    /* the answer: 3 sweeps from u, default shape, against the CPU backend on every host thread */
    hri_st_cuda_set_shape(&ex, dim, dim == 3 ? 64 : 128, dim == 3 ? 4 : 2, 0);
    k->upload(&ex, &g, du, u);
    for (int s = 0; s < 3; s++) {
        k->jacobi(&ex, &dA, du, db, dt, 0.8);
        double *w = du;
        du = dt, dt = w;
    }
    k->download(&ex, &g, hg, du);
    const size_t lines = (size_t)g.n[1] * g.n[2];
    hr_st_exec cx = {NULL, malloc(lines * sizeof(double)), lines, NULL, NULL, 0};
    if (hri_team_create(hri_cpu_count(), HR_BIND_NONE, &team) == HR_OK) cx.team = team;
    for (int s = 0; s < 3; s++) {
        hri_st_cpu.jacobi(&cx, &A, u, b, t, 0.8);
        double *w = u;
        u = t, t = w;
    }
    free(cx.part);
    size_t bad = 0;
    for (size_t q = 0; q < g.padded; q++)
        bad += memcmp(&u[q], &hg[q], sizeof(double)) != 0;
    rec->ok = bad == 0 && hri_st_cuda_sync(&ex) == HR_OK;
    if (!rec->ok)
        snprintf(rec->why, sizeof rec->why, "%zu values differ from the CPU backend after 3 sweeps (%s)", bad,
                 hri_st_cuda_error(&ex));
done:
    if (ex.dev) {
        k->release(&ex, du), k->release(&ex, dt), k->release(&ex, db);
        if (dA.diag) k->free_op(&ex, &dA);
        k->close(&ex);
    }
    hri_team_free(team);
    hri_sop_free(&A);
    free(b), free(u), free(t), free(hg), free(coef);
}

/* ------------------------------------------------------------------ multigrid */

typedef struct mrec {
    const char *kind;
    int dim, n, ok, levels;
    long iterations;
    double time_s, setup_s, rel;
    char engine[24], why[200];
} mrec;

static void mg_case(const char *kind, int dim, int n, mrec *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->kind = kind, rec->dim = dim, rec->n = n;
    rec->time_s = rec->setup_s = rec->rel = NAN;
    hr_problem p;
    hr_problem_init_model(&p, dim, n, n, dim == 3 ? n : 0);
    hr_problem_set_rhs(&p, HR_RHS_MANUFACTURED, NULL);
    double *coef = NULL;
    const int nn[3] = {n, n, n};
    if (!strcmp(kind, "dirichlet-const")) {
        hr_problem_set_coef(&p, 2.0, NULL);
    } else if (!strcmp(kind, "dirichlet-coef")) {
        coef = coef_field(dim, nn);
        hr_problem_set_coef(&p, 1.0, coef);
    } else if (!strcmp(kind, "mixed-bc")) {
        hr_problem_set_bc(&p, HR_FACE_X_MINUS, HR_BC_PERIODIC, 0.0, NULL);
        hr_problem_set_bc(&p, HR_FACE_Y_MINUS, HR_BC_NEUMANN, 0.0, NULL);
        if (dim == 3) hr_problem_set_bc(&p, HR_FACE_Z_MINUS, HR_BC_NEUMANN, 0.0, NULL);
    } /* "model": the model problem */
    hr_grid_options o;
    hr_grid_options_default(&o);
    o.method = HR_METHOD_MG;
    o.cycle = HR_CYCLE_V;
    o.backend = HR_BACKEND_GPU;
    o.tol = 1e-8;
    o.max_iters = 100;
    const double t0 = hr_now();
    hr_grid_solver *s = NULL;
    if (hr_grid_solver_create(&p, &o, &s) != HR_OK) {
        snprintf(rec->why, sizeof rec->why, "create: %s", hr_last_error());
        free(coef);
        return;
    }
    rec->setup_s = hr_now() - t0;
    hr_grid_info info;
    hr_grid_solver_info(s, &info);
    snprintf(rec->engine, sizeof rec->engine, "%s", info.general ? "general" : info.engine);
    double t[3];
    hr_result r;
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++) {
        ok = hr_grid_solver_solve(s, NULL, NULL, &r) == HR_OK && r.reason == HR_REASON_CONVERGED;
        t[i] = r.time_s;
    }
    if (ok) {
        rec->ok = 1;
        rec->time_s = median(t, 3);
        rec->iterations = r.iterations;
        rec->rel = r.relative_residual;
        rec->levels = r.levels;
    } else {
        snprintf(rec->why, sizeof rec->why, "solve: %s (reason %s)", hr_grid_solver_last_error(s),
                 hr_reason_string(r.reason));
    }
    hr_grid_solver_free(s);
    free(coef);
}

/* ------------------------------------------------------------------ main */

static int has(const char *list, const char *name)
{
    if (!list) return 1;
    const size_t len = strlen(name);
    for (const char *q = list; *q;) {
        const char *c = strchr(q, ',');
        const size_t l = c ? (size_t)(c - q) : strlen(q);
        if (l == len && !strncmp(q, name, len)) return 1;
        if (!c) break;
        q = c + 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *json = NULL, *parts = NULL;
    int quick = 0, tiny = 0, reps = 7;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--json") && a + 1 < argc)
            json = argv[++a];
        else if (!strcmp(argv[a], "--quick"))
            quick = 1;
        else if (!strcmp(argv[a], "--tiny"))
            tiny = quick = 1;
        else if (!strcmp(argv[a], "--parts") && a + 1 < argc)
            parts = argv[++a];
        else if (!strcmp(argv[a], "--repeats") && a + 1 < argc && atoi(argv[a + 1]) >= 1 &&
                 atoi(argv[a + 1]) <= 64)
            reps = atoi(argv[++a]);
        else {
            fprintf(stderr, "usage: general_gpu --json OUT.json [--quick | --tiny] [--parts jacobi,mg] "
                            "[--repeats 1..64]\n");
            return 2;
        }
    }
    if (!json) {
        fprintf(
            stderr,
            "usage: general_gpu --json OUT.json [--quick | --tiny] [--parts jacobi,mg] [--repeats 1..64]\n");
        return 2;
    }
    if (hri_cuda_device_count() < 1 || !hri_st_cuda_backend()) {
        fprintf(stderr, "general_gpu: no CUDA device\n");
        return 77;
    }
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", json);
    FILE *js = fopen(tmp, "w");
    if (!js) {
        perror(tmp);
        return 1;
    }
    char dev[128] = "";
    hr_gpu_name(0, dev, sizeof dev);
    const size_t cbytes = (size_t)1 << 30;
    const double copy0 = memcpy_gbps(cbytes, reps);
    double kcopy = 0.0;
    hr_measure_device_bandwidth(0, 0, reps, &kcopy);
    printf("device %s: cudaMemcpy device to device %.1f GB/s, copy kernel %.1f GB/s\n", dev, copy0, kcopy);
    fprintf(js, "{\"device\": \"%s\", \"quick\": %s, \"repeats\": %d,\n", dev, quick ? "true" : "false",
            reps);
    int status = 0;
    /* 2. the Jacobi sweep */
    fprintf(js, "\"jacobi\": [");
    if (has(parts, "jacobi")) {
        const int jd[2][2] = {{2, tiny ? 200 : quick ? 4096 : 8192}, {3, tiny ? 40 : quick ? 256 : 512}};
        for (int c = 0; c < 2; c++) {
            jrec rec;
            jacobi_case(jd[c][0], jd[c][1], reps, tiny ? 4 : 100000, &rec);
            double best = 0.0;
            int bi = 0;
            for (int s = 0; s < rec.nshapes; s++)
                if (rec.sh[s].gbps > best) best = rec.sh[s].gbps, bi = s;
            printf("jacobi %d-D %d^%d (Neumann y-, coefficient field): default %.1f GB/s = %.1f%% of "
                   "cudaMemcpy; best "
                   "%dx%dx%d %.1f GB/s = %.1f%%; answer %s%s%s\n",
                   rec.dim, rec.n, rec.dim, rec.sh[0].gbps, 100.0 * rec.sh[0].gbps / copy0, rec.sh[bi].bx,
                   rec.sh[bi].by, rec.sh[bi].h, best, 100.0 * best / copy0,
                   rec.ok ? "bitwise = CPU" : "WRONG", rec.why[0] ? ": " : "", rec.why);
            status |= !rec.ok;
            fprintf(js,
                    "%s\n  {\"dim\": %d, \"n\": %d, \"problem\": \"Neumann y-, coefficient field, "
                    "manufactured f\", "
                    "\"omega\": 0.8, \"byte_model\": \"%d arrays x 8 bytes per unknown\", "
                    "\"bytes_per_sweep\": %.0f, "
                    "\"sweeps_per_block\": %ld, \"ok\": %s, \"check\": \"3 sweeps bitwise equal to the CPU "
                    "backend\", \"why\": \"%s\", \"shapes\": [",
                    c ? "," : "", rec.dim, rec.n, rec.dim == 3 ? 7 : 6, rec.bytes_per_sweep, rec.sweeps,
                    rec.ok ? "true" : "false", clean(rec.why));
            for (int s = 0; s < rec.nshapes; s++)
                fprintf(js,
                        "%s{\"bx\": %d, \"by\": %d, \"h\": %d, \"default\": %s, \"gbps\": %.1f, "
                        "\"ratio_memcpy\": %.4f}",
                        s ? ", " : "", rec.sh[s].bx, rec.sh[s].by, rec.sh[s].h, s == 0 ? "true" : "false",
                        isfinite(rec.sh[s].gbps) ? rec.sh[s].gbps : -1.0,
                        isfinite(rec.sh[s].gbps) ? rec.sh[s].gbps / copy0 : -1.0);
            fprintf(
                js,
                "], \"best\": {\"bx\": %d, \"by\": %d, \"h\": %d, \"gbps\": %.1f, \"ratio_memcpy\": %.4f}}",
                rec.sh[bi].bx, rec.sh[bi].by, rec.sh[bi].h, best, best / copy0);
            fflush(js);
        }
    }
    fprintf(js, "\n],\n\"mg\": [");
    /* 3. multigrid */
    if (has(parts, "mg")) {
        const int md[4][2] = {{2, tiny    ? 255
                                  : quick ? 2047
                                          : 8191},
                              {2, tiny    ? 250
                                  : quick ? 2000
                                          : 8000},
                              {3, tiny    ? 31
                                  : quick ? 127
                                          : 511},
                              {3, tiny    ? 30
                                  : quick ? 120
                                          : 500}};
        const char *kinds[] = {"dirichlet-const", "dirichlet-coef", "mixed-bc", "model"};
        int first = 1;
        for (int c = 0; c < 4; c++)
            for (int k = 0; k < 4; k++) {
                const int n = md[c][1];
                if (k == 3 && ((n + 1) & n) != 0) continue; /* the model engine runs 2^k - 1 only */
                mrec rec;
                mg_case(kinds[k], md[c][0], n, &rec);
                printf("mg V %d-D %5d %-16s %-8s %s %3ld cycles %8.3f s (%.2f ms a cycle), set-up %.1f s, "
                       "residual "
                       "%.2e, %d levels%s%s\n",
                       rec.dim, rec.n, rec.kind, rec.engine, rec.ok ? "ok    " : "FAILED", rec.iterations,
                       rec.time_s, rec.iterations ? 1e3 * rec.time_s / rec.iterations : 0.0, rec.setup_s,
                       rec.rel, rec.levels, rec.why[0] ? ": " : "", rec.why);
                fflush(stdout);
                status |= !rec.ok;
                fprintf(js,
                        "%s\n  {\"dim\": %d, \"n\": %d, \"case\": \"%s\", \"engine\": \"%s\", \"ok\": %s, "
                        "\"iterations\": %ld, \"time_s\": %.6f, \"per_cycle_s\": %.6f, \"setup_s\": %.3f, "
                        "\"relative_residual\": %.3e, \"levels\": %d, \"why\": \"%s\"}",
                        first ? "" : ",", rec.dim, rec.n, rec.kind, rec.engine, rec.ok ? "true" : "false",
                        rec.iterations, isfinite(rec.time_s) ? rec.time_s : -1.0,
                        rec.iterations && isfinite(rec.time_s) ? rec.time_s / rec.iterations : -1.0,
                        isfinite(rec.setup_s) ? rec.setup_s : -1.0, isfinite(rec.rel) ? rec.rel : -1.0,
                        rec.levels, clean(rec.why));
                fflush(js);
                first = 0;
            }
    }
    const double copy1 = memcpy_gbps(cbytes, reps);
    printf("cudaMemcpy device to device at the end %.1f GB/s\n", copy1);
    fprintf(js,
            "\n],\n\"copy\": {\"memcpy_d2d_gbps_start\": %.1f, \"memcpy_d2d_gbps_end\": %.1f, "
            "\"copy_kernel_gbps\": "
            "%.1f, \"bytes\": %zu, \"model\": \"read + written bytes, median of %d after 2 untimed\"},\n"
            "\"ratio_base\": \"memcpy_d2d_gbps_start\", \"status\": %d}\n",
            copy0, copy1, kcopy, cbytes, reps, status);
    if (fclose(js) != 0 || rename(tmp, json) != 0) {
        perror(json);
        return 1;
    }
    return status;
}
