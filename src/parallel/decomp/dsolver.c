/* The decomposed solver (see dsolver.h): the placements, setup and teardown; the schedule
 * and the run are in dsolver_run.c. */
#include "parallel/decomp/dsolver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/precision.h"
#include "core/timer.h"
#include "core/tuning.h"
#include "methods/jacobi/cpu/jacobi3d_pencil.h"
#include "runtime/cpu/fpmode.h"
#include "runtime/cpu/sysmem.h"
#include "runtime/cpu/team.h"

/* ------------------------------------------------ the host placement */

static hr_status host_sweep(void *ctx, const hr_sweep_args *a, int lane)
{
    (void)ctx;
    (void)lane;
    hri_cpu_sweep_box(a);
    return HR_OK;
}

static hr_status host_residual(void *ctx, const hr_resid_args *a, hr_norm2 *r, hr_norm2 *b)
{
    (void)ctx;
    hri_cpu_residual_box(a, r, b);
    return HR_OK;
}

static hr_status host_pack(void *ctx, int face, const hr_grid_layout *l, const void *origin, const hr_box *b,
                           void *buf)
{
    (void)ctx;
    (void)face;
    hri_pack_box(l, origin, b, buf);
    return HR_OK;
}

static hr_status host_unpack(void *ctx, int face, const hr_grid_layout *l, void *origin, const hr_box *b,
                             const void *buf)
{
    (void)ctx;
    (void)face;
    hri_unpack_box(l, origin, b, buf);
    return HR_OK;
}

const hr_field_ops hri_field_ops_host = {"host",    0,           host_sweep, host_residual,
                                        host_pack, host_unpack, NULL,       NULL};

static hr_status host_sync(void *ctx, int lane)
{
    (void)ctx;
    (void)lane;
    return HR_OK;
}

const hr_field_ops hri_field_ops_host_queued = {"host (queued)", 1,           host_sweep, host_residual,
                                               host_pack,       host_unpack, host_sync,  NULL};

#ifndef HR_HAVE_CUDA
/* Without CUDA: no device placement (the solver refuses --backend gpu through create). */
static hr_status nogpu_create(hr_dsolver *s, hr_dsub *d, int device, char *err, size_t es)
{
    (void)s;
    (void)d;
    (void)device;
    if (err && es) snprintf(err, es, "backend: gpu: this build has no CUDA support");
    return HR_ERR_NO_DEVICE;
}

const hr_field_ops hri_field_ops_gpu = {"gpu (not built)", 0,           host_sweep, host_residual,
                                       host_pack,         host_unpack, NULL,       NULL};
const hr_dplace_ops hri_dplace_gpu = {nogpu_create, NULL, NULL, NULL, NULL, NULL, NULL};

int hri_dsolver_gpu_count(void)
{
    return 0;
}

hr_status hri_transport_cuda_create(int count, const int *device, hr_transport **out)
{
    (void)count;
    (void)device;
    *out = NULL;
    return HR_ERR_NO_DEVICE;
}
#endif

/* Where subdomain id lives: GPU o->device + id * G / count (G = max(1, o->gpus)). */
static int device_of(const hr_dsolver *s, int id)
{
    const int g = s->o.gpus > 1 ? s->o.gpus : 1;
    return s->o.device + (int)((long)id * g / s->d.count);
}

static void set_err(char *err, size_t size, const char *msg)
{
    if (err && size) snprintf(err, size, "%s", msg);
}

/* Fills the whole local array: boundary ring and interior (init values), and h^2 f at
 * every local point that is a global interior point (the ghost zone is swept too). */
static void init_sub(const hr_dsolver *s, hr_dsub *d)
{
    const hr_run_problem *p = &s->p;
    const hr_subdomain *g = &d->g;
    for (int q = 0; q < 2; q++)
        hri_grid_init_rows(&d->u[q], 0, hr_layout_outer(&g->l), p->boundary);
    if (d->hf.base) hri_grid_init_rows(&d->hf, 0, hr_layout_outer(&g->l), 0.0);
    if (p->init == HR_INIT_ZERO && !d->hf.base) return;
    const int n[3] = {p->nx, p->ny, p->nz};
    for (int k = 0; k < hr_subdomain_span(g, 2); k++)
        for (int i = 0; i < hr_subdomain_span(g, 1); i++)
            for (int j = 0; j < hr_subdomain_span(g, 0); j++) {
                const int G[3] = {hr_subdomain_global(g, 0, j), hr_subdomain_global(g, 1, i),
                                  hr_subdomain_global(g, 2, k)};
                int inside = 1;
                for (int a = 0; a < p->dim; a++)
                    inside &= G[a] >= 1 && G[a] <= n[a];
                if (!inside) continue;
                if (p->init != HR_INIT_ZERO) {
                    const double v = hri_problem_init_at(p, s->o.init_values, G[1], G[0], G[2]);
                    hri_grid_set3(&d->u[0], i, j, k, v);
                    hri_grid_set3(&d->u[1], i, j, k, v);
                }
                if (d->hf.base)
                    hri_grid_set3(&d->hf, i, j, k, hri_problem_rhs_at(p, s->o.rhs_values, G[1], G[0], G[2]));
            }
}

static hr_status bind_phases(hr_dsolver *s)
{
    const int maxmsg = 2 * s->p.dim * s->nlocal;
    hr_halo_msg *snd = calloc((size_t)maxmsg, sizeof *snd), *rcv = calloc((size_t)maxmsg, sizeof *rcv);
    hr_status st = HR_OK;
    if (!snd || !rcv) st = HR_ERR_NO_MEMORY;
    for (int ph = 0; ph < s->nphases && st == HR_OK; ph++) {
        int ns = 0, nr = 0;
        for (int l = 0; l < s->nlocal; l++) {
            const hr_dsub *d = &s->subs[l];
            for (int a = 0; a < 3; a++)
                for (int side = 0; side < 2; side++) {
                    if (!hr_dsolver_phase_has_axis(s, ph, a) || d->g.nb[a][side] < 0 || s->mapped) continue;
                    snd[ns++] = (hr_halo_msg){d->g.id, d->g.nb[a][side], 2 * a + side, d->sbuf[a][side],
                                              d->bytes[a][side]};
                    rcv[nr++] = (hr_halo_msg){d->g.nb[a][side], d->g.id, 2 * a + (1 - side), d->rbuf[a][side],
                                              d->bytes[a][side]};
                }
        }
        st = s->t->ops->bind(s->t, ph, snd, ns, rcv, nr);
    }
    free(snd);
    free(rcv);
    return st;
}

/* Mapped ghost planes: can this run have them? One host subdomain per process, 3-D,
 * split along z only, ghost 1, a transport that maps grids. */
static int want_mapped(const hr_dsolver *s, const int parts[3], int ghost)
{
    return s->t->ops->grid_share && s->o.tuning.mpi_mapped >= 0 && s->p.dim == 3 && parts[0] == 1 &&
           parts[1] == 1 && ghost == 1 && s->d.count > 1 && s->t->nlocal == 1 && !s->dplace &&
           s->fops == &hri_field_ops_host;
}

/* Mapped grids: the plane stride rounded up to whole pages (the windows other processes
 * map); (0, 0, 0) sits at offset < plane, inside window 0. */
static void pad_planes_to_pages(hr_grid_layout *l)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE) / l->esize;
    l->plane = (l->offset + l->pitch * ((size_t)l->ny + 2) + page - 1) / page * page;
    l->count = l->plane * ((size_t)l->nz + 2);
}

/* The shared-grid description of grid `which` of d (its layout already padded). */
static int shared_grid(const hr_dsolver *s, const hr_dsub *d, int which, hr_shared_grid *sg)
{
    const hr_grid_layout *l = &d->g.l;
    *sg = (hr_shared_grid){d->g.id, which, l->nz + 2, l->plane * l->esize, {-1, -1}, {0, 0}};
    for (int side = 0; side < 2; side++) {
        hr_subdomain nb;
        sg->nb[side] = d->g.nb[2][side];
        if (sg->nb[side] >= 0 && !hri_subdomain_init(&s->d, sg->nb[side], l->esize, &nb)) return 0;
        if (sg->nb[side] >= 0) sg->nb_planes[side] = nb.l.nz + 2;
    }
    return 1;
}

static hr_status alloc_grids(hr_dsolver *s, hr_dsub *d, int grids)
{
    const int huge = hr_tune_on(s->o.tuning.hugepages, 0);
    if (!s->mapped) {
        HR_TRY(hri_grid_alloc_huge(&d->u[0], &d->g.l, huge));
        HR_TRY(hri_grid_alloc_huge(&d->u[1], &d->g.l, huge));
    } else {
        pad_planes_to_pages(&d->g.l);
        for (int q = 0; q < 2; q++) {
            hr_shared_grid sg;
            if (!shared_grid(s, d, q, &sg)) return HR_ERR_NO_MEMORY;
            d->u[q].l = d->g.l;
            d->u[q].base = s->t->ops->grid_share(s->t, &sg);
            if (!d->u[q].base) return HR_ERR_IO;
        }
    }
    if (grids == 3) HR_TRY(hri_grid_alloc_huge(&d->hf, &d->g.l, huge));
    return HR_OK;
}

static void free_grids(hr_dsolver *s, hr_dsub *d)
{
    const hr_grid_layout *l = &d->g.l; /* mapped: padded before any grid was made */
    for (int q = 0; q < 2; q++) {
        const hr_shared_grid sg = {d->g.id, q, l->nz + 2, l->plane * l->esize, {-1, -1}, {0, 0}};
        if (!s->mapped)
            hri_grid_free(&d->u[q]);
        else if (d->u[q].base)
            s->t->ops->grid_free(s->t, d->u[q].base, &sg);
        d->u[q].base = NULL;
    }
    hri_grid_free(&d->hf);
}

static hr_status alloc_sub(hr_dsolver *s, hr_dsub *d, int id, size_t esize, char *err, size_t es)
{
    if (!hri_subdomain_init(&s->d, id, esize, &d->g)) {
        set_err(err, es, "n: the subdomain is too large");
        return HR_ERR_NO_MEMORY;
    }
    const int grids = s->p.rhs == HR_RHS_SPIKE || s->p.rhs == HR_RHS_ZERO ? 2 : 3;
    if (hr_layout_bytes(&d->g.l) > hri_host_available_bytes() / (size_t)grids / (size_t)s->nlocal) {
        set_err(err, es, "n: the subdomains do not fit in the available memory");
        return HR_ERR_NO_MEMORY;
    }
    {
        const hr_status st = alloc_grids(s, d, grids);
        if (st != HR_OK) set_err(err, es, "n: no memory for the grids");
        HR_TRY(st);
    }
    if (d->hf.base) {
        d->rhs = (hr_rhs_view){hr_grid_origin(&d->hf), -1, -1, -1};
    } else {
        d->rhs = hri_subdomain_spike(&d->g, s->p.spike_i, s->p.spike_j, s->p.spike_k);
    }
    d->org[0] = hr_grid_origin(&d->u[0]);
    d->org[1] = hr_grid_origin(&d->u[1]);
    d->device = -1;
    if (s->p.dim == 3 && !s->dplace) {
        /* the cpu-threads 3-D kernel's blocking (pencils in the L2, streaming stores when the
         * grids exceed the cache share) for the same bits: without it a rank sweeps 1.5x
         * slower than a thread of cpu-threads (docs/results/mpi-cpu.md) */
        const int threads = s->o.backend == HR_BACKEND_CPU_THREADS && s->o.threads > 1 ? s->o.threads : 1;
        if (s->o.tuning.dsolver_pencil >= 0)
            hri_pencil_default_choice(&d->g.l, d->g.l.ny, grids, threads, &d->pencil_rows, &d->pencil_stream);
    }
    init_sub(s, d);
    for (int q = 0; s->mapped && q < 2; q++) { /* the ghost windows become the neighbours' planes */
        hr_shared_grid sg;
        if (!shared_grid(s, d, q, &sg) || s->t->ops->grid_link(s->t, d->u[q].base, &sg) != HR_OK) {
            set_err(err, es, "transport: cannot map the neighbours' planes");
            return HR_ERR_IO;
        }
    }
    if (s->dplace) { /* device grids from the initialised host grids */
        d->device = device_of(s, id);
        const hr_status st = s->dplace->create(s, d, d->device, err, es);
        if (st != HR_OK && err && es && !err[0] && s->err[0]) snprintf(err, es, "%s", s->err);
        if (st != HR_OK) return st;
    }
    const int corners = s->nphases > 1;
    for (int a = 0; a < s->p.dim; a++)
        for (int side = 0; side < 2; side++) {
            if (d->g.nb[a][side] < 0 || s->mapped) continue;
            const hr_box b = hri_subdomain_face(&d->g, s->d.ghost, a, side, 0, corners);
            const size_t bytes = hr_box_points(&b) * esize;
            d->bytes[a][side] = bytes;
            if (d->ctx) {
                const int dev = s->t->device_buffers;
                d->sbuf[a][side] = s->dplace->buf_alloc(d->ctx, 2 * a + side, 0, bytes, dev);
                d->rbuf[a][side] = s->dplace->buf_alloc(d->ctx, 2 * a + side, 1, bytes, dev);
            } else {
                d->sbuf[a][side] = s->t->ops->alloc(s->t, bytes);
                d->rbuf[a][side] = s->t->ops->alloc(s->t, bytes);
            }
            if (!d->sbuf[a][side] || !d->rbuf[a][side]) {
                set_err(err, es, "n: no memory for the halo buffers");
                return HR_ERR_NO_MEMORY;
            }
        }
    return HR_OK;
}

static hr_status check_options(const hr_options *o, char *err, size_t es)
{
    hr_options v = *o;
    v.gpus = 0; /* here: GPUs the subdomains spread over (the library's check is the chain's) */
    HR_TRY(hr_options_validate(&v, err, es));
    if (o->gpus < 0 || o->gpus > 64) {
        set_err(err, es, "gpus: must be between 1 and 64");
        return HR_ERR_INVALID_ARG;
    }
    if (o->gpus > 1 && o->backend != HR_BACKEND_GPU) {
        set_err(err, es, "gpus: needs --backend gpu");
        return HR_ERR_INVALID_ARG;
    }
    if (o->flush_subnormals && !HR_FP_CAN_FLUSH) {
        set_err(err, es,
                "flush_subnormals: this CPU architecture has no flush-to-zero switch the library knows");
        return HR_ERR_UNSUPPORTED;
    }
    if (o->backend == HR_BACKEND_HYBRID) {
        set_err(err, es, "backend: hybrid: decomposed runs place subdomains on CPUs or on GPUs");
        return HR_ERR_UNSUPPORTED;
    }
    if (o->backend == HR_BACKEND_GPU && o->kernel && strcmp(o->kernel, "tuned") != 0) {
        set_err(err, es, "kernel: decomposed GPU runs sweep each subdomain with the box form of tuned");
        return HR_ERR_INVALID_ARG;
    }
    if (o->backend != HR_BACKEND_GPU && o->kernel && strcmp(o->kernel, "seq") != 0) {
        set_err(err, es, "kernel: decomposed runs sweep each subdomain with seq");
        return HR_ERR_INVALID_ARG;
    }
    if (o->method != HR_METHOD_JACOBI) {
        /* the colour phases would need an exchange each; refused rather than run as Jacobi */
        set_err(err, es, "method: decomposed runs do Jacobi only so far");
        return HR_ERR_UNSUPPORTED;
    }
    return HR_OK;
}

hr_status hri_dsolver_create(const hr_options *o, const int parts[3], int ghost, hr_transport *t,
                            hr_dsolver **out, char *err, size_t es)
{
    *out = NULL;
    set_err(err, es, "");
    hr_status st = check_options(o, err, es);
    hr_dsolver *s = st == HR_OK ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        t->ops->destroy(t);
        return st != HR_OK ? st : HR_ERR_NO_MEMORY;
    }
    s->t = t;
    s->fops = &hri_field_ops_host;
    if (o->backend == HR_BACKEND_GPU) {
        s->fops = &hri_field_ops_gpu;
        s->dplace = &hri_dplace_gpu;
    } else if (o->tuning.dsolver_queued > 0) { /* tests: the device schedule on CPU ranks */
        s->fops = &hri_field_ops_host_queued;
    }
    s->o = *o;
    hri_problem_resolve(o, &s->p);
    s->o.dim = s->p.dim;
    if (s->o.divtol == 0.0) s->o.divtol = 1e3;
    const int n[3] = {s->p.nx, s->p.ny, s->p.nz};
    HR_CHECK_GOTO(st, hri_decomp_init(&s->d, s->p.dim, n, parts, ghost, err, es), fail);
    if (t->first < 0 || t->nlocal < 1 || t->first + t->nlocal > s->d.count) {
        set_err(err, es, "decomp: the subdomain count differs from the processes");
        st = HR_ERR_INVALID_ARG;
        goto fail;
    }
    s->nphases = ghost > 1 ? s->p.dim : 1;
    s->overlap = 1;
    s->inplace = s->o.tuning.mpi_inplace >= 0;
    s->progress_phase = -1;
    s->mapped = want_mapped(s, parts, ghost);
    s->nlocal = t->nlocal;
    s->subs = calloc((size_t)s->nlocal, sizeof *s->subs);
    s->norms = calloc((size_t)s->nlocal * 2, sizeof *s->norms);
    if (!s->subs || !s->norms) {
        st = HR_ERR_NO_MEMORY;
        goto fail;
    }
    const double t0 = hr_now();
    const size_t esize = hr_prec_bytes(o->precision);
    for (int l = 0; l < s->nlocal; l++)
        HR_CHECK_GOTO(st, alloc_sub(s, &s->subs[l], t->first + l, esize, err, es), fail);
    HR_CHECK_GOTO(st, bind_phases(s), fail);
    /* cpu-threads: each process sweeps its boxes with a team (threads per process) */
    if (o->backend == HR_BACKEND_CPU_THREADS && o->threads > 1) {
        st = hri_team_create(o->threads, o->bind, &s->team);
        if (st != HR_OK) {
            set_err(err, es,
                    st == HR_ERR_UNSUPPORTED ? "bind: built without hwloc"
                                             : "threads: cannot start the team");
            goto fail;
        }
    }
    hri_dsolver_trace_open(s);
    s->t_setup = hr_now() - t0;
    s->o.kernel = NULL;
    s->o.rhs_values = s->o.init_values = NULL;
    *out = s;
    return HR_OK;
fail:
    if (err && es && !err[0]) snprintf(err, es, "%s", hr_status_string(st));
    hri_dsolver_free(s);
    return st;
}

void hri_dsolver_free(hr_dsolver *s)
{
    if (!s) return;
    hri_dsolver_trace_close(s);
    for (int l = 0; s->subs && l < s->nlocal; l++) {
        hr_dsub *d = &s->subs[l];
        free_grids(s, d);
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                void *b[2] = {d->sbuf[a][side], d->rbuf[a][side]};
                for (int q = 0; q < 2; q++) {
                    if (!b[q]) continue;
                    if (d->ctx)
                        s->dplace->buf_free(d->ctx, b[q]);
                    else
                        s->t->ops->release(s->t, b[q]);
                }
            }
        if (d->ctx) s->dplace->destroy(d->ctx);
    }
    if (s->team) hri_team_free(s->team);
    free(s->subs);
    free(s->norms);
    if (s->t) s->t->ops->destroy(s->t);
    hri_history_free(&s->hist);
    free(s);
}

hr_status hri_inproc_solver_create(const hr_options *o, const int parts[3], int ghost, hr_dsolver **out,
                                  char *err, size_t es)
{
    *out = NULL;
    const int dim = hri_options_dim(o);
    long count = (long)parts[0] * parts[1] * (dim == 3 ? parts[2] : 1);
    if (parts[0] < 1 || parts[1] < 1 || (dim == 3 && parts[2] < 1) || count > 1 << 24) {
        set_err(err, es, "decomp: parts must be >= 1");
        return HR_ERR_INVALID_ARG;
    }
    hr_transport *t;
    if (o->backend == HR_BACKEND_GPU) {
        /* device buffers and peer copies; the placement of each id as hri_dsolver_create's */
        int *dev = malloc((size_t)count * sizeof *dev);
        if (!dev) return HR_ERR_NO_MEMORY;
        const int g = o->gpus > 1 ? o->gpus : 1;
        for (long id = 0; id < count; id++)
            dev[id] = o->device + (int)(id * g / count);
        const int have = hri_dsolver_gpu_count();
        hr_status st = HR_OK;
        if (have == 0) {
            set_err(err, es, "backend: gpu: no CUDA device (or a build without CUDA)");
            st = HR_ERR_NO_DEVICE;
        } else if (o->device < 0 || o->device + g > have) {
            if (err && es)
                snprintf(err, es, "gpus: %d GPUs from device %d, but %d present", g, o->device, have);
            st = HR_ERR_INVALID_ARG;
        }
        if (st == HR_OK) st = hri_transport_cuda_create((int)count, dev, &t);
        free(dev);
        HR_TRY(st);
        return hri_dsolver_create(o, parts, ghost, t, out, err, es);
    }
    HR_TRY(hri_transport_inproc_create((int)count, &t));
    return hri_dsolver_create(o, parts, ghost, t, out, err, es);
}
