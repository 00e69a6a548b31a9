/* The MPI entry points (include/hetrelax/mpi.h): the decomposed solver with the MPI
 * transport, and the collective error handling that keeps every rank in step. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/precision.h"
#include "core/tuning.h"
#include "hetrelax/mpi.h"
#include "parallel/decomp/dsolver.h"
#include "parallel/transport/cuda/transport_ipc.h"
#include "parallel/transport/cuda/transport_nccl.h"
#include "parallel/transport/mpi/transport_mpi.h"

struct hr_mpi_solver {
    MPI_Comm comm; /* our duplicate, errors returned rather than fatal */
    int rank, size;
    int parts[3], ghost;
    hr_mpi_transport transport; /* resolved: host, device, nccl or peer */
    int device_first;           /* the lowest rank of its node on its GPU */
    double max_halo_bytes;
    hr_dsolver *ds;
    int running; /* inside hr_mpi_solver_run: its monitor must not re-enter */
};

/* the thread's one error channel (hr_last_error()): every handle's messages go there */
#define mpi_error (hri_last_error_buf())

const char *hr_mpi_last_error(void)
{
    return hr_last_error();
}

hr_status hr_mpi_resolve_decomp(const hr_options *o, int ranks, const int req[3], int ghost, int out[3],
                                char *why, size_t ws)
{
    if (!o || !out || ranks < 1) return hri_invalid_arg(why, ws, "decomp: bad arguments");
    hr_options v = *o;
    v.gpus = 0; /* GPUs per node of GPU ranks: hri_dsolver_create and pick_device check it */
    hr_status st = hr_options_validate(&v, why, ws);
    if (st != HR_OK) return st;
    const int dim = hri_options_dim(o);
    int given[3] = {0, 0, 0};
    for (int a = 0; a < dim && req; a++)
        given[a] = req[a];
    if (req && dim == 2 && req[2] > 1)
        return hri_invalid_arg(why, ws, "decomp: a 2-D grid takes AxB (got a third factor %d)", req[2]);
    long fixed = 1;
    int free_axes = 0;
    for (int a = 0; a < dim; a++) {
        if (given[a] < 0) return hri_invalid_arg(why, ws, "decomp: factors must be >= 1");
        if (given[a] == 0)
            free_axes++;
        else
            fixed *= given[a];
    }
    if (free_axes == 0 && fixed != ranks)
        return hri_invalid_arg(why, ws,
                              "decomp: %d subdomains but %d ranks run (the product must equal the ranks)",
                              (int)(fixed > 0x7fffffff ? 0x7fffffff : fixed), ranks);
    if (free_axes > 0 && (fixed > ranks || ranks % fixed != 0))
        return hri_invalid_arg(why, ws, "decomp: the given factors (product %d) do not divide %d ranks",
                              (int)(fixed > 0x7fffffff ? 0x7fffffff : fixed), ranks);
    /* MPI_Dims_create fills the free axes with balanced factors, largest first; its
     * dims[0] is the slowest axis (y in 2-D, z in 3-D): contiguous faces are the large ones */
    int dims[3] = {0, 0, 0};
    for (int a = 0; a < dim; a++)
        dims[dim - 1 - a] = given[a];
    /* GPU ranks with no factors given: slabs along the slowest axis, whose faces are
     * contiguous (packed by one copy, swept by the aligned kernels; x splits cost strided
     * faces and an unaligned first column), as long as every slab keeps a few planes */
    const int slow = hri_options_extent(o, dim - 1);
    if (free_axes == dim && o->backend == HR_BACKEND_GPU && ranks > 1 &&
        slow / ranks >= (ghost > 2 ? 2 * ghost : 4)) {
        dims[0] = ranks;
        for (int a = 1; a < dim; a++)
            dims[a] = 1;
    }
    if (free_axes > 0 && dims[0] == 0 && MPI_Dims_create(ranks, dim, dims) != MPI_SUCCESS)
        return hri_invalid_arg(why, ws, "decomp: MPI_Dims_create failed for %d ranks", ranks);
    out[2] = 1;
    for (int a = 0; a < dim; a++)
        out[a] = dims[dim - 1 - a];
    hr_decomp d;
    const int n[3] = {hri_options_extent(o, 0), hri_options_extent(o, 1), hri_options_extent(o, 2)};
    return hri_decomp_init(&d, dim, n, out, ghost, why, ws);
}

/* Every rank learns the first failing rank's status and message; the same on all. A rank
 * whose only complaint is `minor` (options that differ from another rank's) yields to a rank
 * with a real one, whose message says more. */
static hr_status agree_first(MPI_Comm comm, int rank, int size, hr_status st, int minor, char *msg,
                             size_t msize)
{
    int first = st != HR_OK ? (minor ? size + rank : rank) : 2 * size;
    if (MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
        snprintf(msg, msize, "MPI_Allreduce failed");
        return HR_ERR_IO;
    }
    if (first == 2 * size) return HR_OK;
    first %= size;
    int code = (int)st;
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, (int)msize, MPI_CHAR, first, comm);
    msg[msize - 1] = '\0';
    return (hr_status)code;
}

static hr_status agree(MPI_Comm comm, int rank, int size, hr_status st, char *msg, size_t msize)
{
    return agree_first(comm, rank, size, st, 0, msg, msize);
}

/* What decides the messages and the loop must be the same on every rank, or ranks would
 * wait for messages or collectives that never come. Collective: every rank calls it. */
static hr_status same_everywhere(MPI_Comm comm, const hr_options *o, const int decomp[3], int ghost,
                                 hr_mpi_transport tr, char *why, size_t ws, int report)
{
    /* the knobs that change which messages a rank sends or waits for */
    static const char *const names[] = {"dim",
                                        "nx",
                                        "ny",
                                        "nz",
                                        "precision",
                                        "ghost",
                                        "decomp",
                                        "decomp",
                                        "decomp",
                                        "iters",
                                        "tol",
                                        "check",
                                        "monitor",
                                        "divtol",
                                        "rhs",
                                        "omega",
                                        "backend",
                                        "gpus",
                                        "transport",
                                        "tuning.mpi_mapped",
                                        "tuning.mpi_inplace",
                                        "tuning.mpi_shm",
                                        "tuning.mpi_cuda_aware",
                                        "tuning.dsolver_queued"};
    enum { N = 24 };
    const hr_tuning *tu = &o->tuning;
    double v[2 * N] = {hri_options_dim(o),
                       hri_options_extent(o, 0),
                       hri_options_extent(o, 1),
                       hri_options_extent(o, 2),
                       o->precision,
                       ghost,
                       decomp ? decomp[0] : 0,
                       decomp ? decomp[1] : 0,
                       decomp ? decomp[2] : 0,
                       (double)o->iters,
                       o->tol,
                       (double)o->check_every,
                       (double)(o->monitor ? o->monitor_every : 0),
                       o->divtol,
                       o->rhs,
                       o->omega,
                       o->backend,
                       o->gpus,
                       tr,
                       hr_tune_on(tu->mpi_mapped, 1),
                       hr_tune_on(tu->mpi_inplace, 1),
                       hr_tune_on(tu->mpi_shm, 1),
                       hr_tune_on(tu->mpi_cuda_aware, 1),
                       hr_tune_on(tu->dsolver_queued, 0)};
    for (int i = 0; i < N; i++)
        v[N + i] = -v[i]; /* max of -x: the min */
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2 * N, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) return HR_ERR_IO;
    for (int i = 0; i < N; i++)
        if (!(v[i] == -v[N + i])) {
            if (report)
                snprintf(why, ws, "%s: differs between ranks (give every rank the same options)", names[i]);
            return HR_ERR_INVALID_ARG;
        }
    return HR_OK;
}

/* GPU ranks: device = this rank's rank among the ranks of its node modulo the GPUs used
 * there (o->gpus when given, else all present). Collective over comm (split by node). */
static hr_status pick_device(MPI_Comm comm, const hr_options *o, hr_mpi_transport tr, hr_options *lo,
                             int *first, char *why, size_t ws)
{
    MPI_Comm node;
    int lrank = 0, lsize = 1, size = 1;
    MPI_Comm_size(comm, &size);
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &lrank);
        MPI_Comm_size(node, &lsize);
        MPI_Comm_free(&node);
    }
    /* every rank of a node sees the same lsize, so every rank agrees on this */
    if (tr == HR_MPI_TRANSPORT_PEER && lsize != size)
        return hri_invalid_arg(why, ws,
                              "transport: peer: every rank must run on one node (%d of %d ranks here): "
                              "use host, device or nccl across nodes",
                              lsize, size);
    const int present = hri_dsolver_gpu_count();
    if (present == 0) {
        hri_invalid_arg(why, ws, "backend: gpu: no CUDA device on this node (or a build without CUDA)");
        return HR_ERR_NO_DEVICE;
    }
    int use = present;
    if (o->gpus > 0) {
        if (o->gpus > present)
            return hri_invalid_arg(why, ws, "gpus: %d GPUs per node asked, but %d present", o->gpus, present);
        if (lsize > o->gpus)
            return hri_invalid_arg(
                why, ws,
                "gpus: %d ranks on this node for %d GPU(s): with --gpus run one rank per GPU "
                "(without it ranks share GPUs, local rank modulo the GPUs present)",
                lsize, o->gpus);
        use = o->gpus;
    }
    if (tr == HR_MPI_TRANSPORT_NCCL && lsize > use)
        return hri_invalid_arg(
            why, ws,
            "transport: nccl: %d ranks on this node for %d GPU(s): NCCL takes one rank per GPU "
            "(run at most %d ranks per node, or --transport host)",
            lsize, use, use);
    lo->device = lrank % use;
    lo->gpus = 1;
    *first = lrank < use;
    return HR_OK;
}

const char *hr_mpi_transport_name(hr_mpi_transport tr)
{
    static const char *const names[] = {"auto", "host", "device", "nccl", "peer"};
    return (int)tr >= 0 && (int)tr < 5 ? names[tr] : NULL;
}

int hr_mpi_have_nccl(void)
{
    return hri_nccl_available();
}

/* What a transport needs that this build, library or backend may not give (local: every
 * rank finds the same). */
static hr_status check_transport(const hr_options *o, hr_mpi_transport tr, char *why, size_t ws)
{
    if (!hr_mpi_transport_name(tr))
        return hri_invalid_arg(why, ws, "transport: unknown transport %d", (int)tr);
    const char *name = hr_mpi_transport_name(tr);
    if (tr == HR_MPI_TRANSPORT_NCCL && !hri_nccl_available())
        return hri_invalid_arg(
            why, ws,
            "transport: nccl: this build has no NCCL (configure where CMake finds nccl.h and libnccl: "
            "NCCL_HOME, HETRELAX_ENABLE_NCCL)");
    if (tr == HR_MPI_TRANSPORT_PEER && !hri_ipc_available())
        return hri_invalid_arg(why, ws, "transport: peer: this build has no CUDA");
    if ((tr == HR_MPI_TRANSPORT_NCCL || tr == HR_MPI_TRANSPORT_DEVICE || tr == HR_MPI_TRANSPORT_PEER) &&
        o->backend != HR_BACKEND_GPU)
        return hri_invalid_arg(why, ws, "transport: %s moves device buffers: it needs --backend gpu (not %s)",
                              name, hr_backend_name(o->backend));
    if (tr == HR_MPI_TRANSPORT_DEVICE && !hri_mpi_cuda_aware(&o->tuning))
        return hri_invalid_arg(
            why, ws,
            "transport: device: this MPI library does not take device pointers (not CUDA-aware, or "
            "tuning.mpi_cuda_aware off): use host or nccl");
    return HR_OK;
}

/* NCCL on top of the MPI transport *t (collective; every rank arrives here with HR_OK):
 * rank 0 makes the communicator's id, every rank gets it and joins on its device. */
static hr_status wrap_nccl(MPI_Comm comm, int rank, int size, int device, const hr_tuning *tune,
                           hr_transport **t)
{
    unsigned char id[HR_NCCL_ID_BYTES];
    memset(id, 0, sizeof id);
    int code = rank == 0 ? (int)hri_nccl_unique_id(id, mpi_error, HR_LAST_ERROR_SIZE) : (int)HR_OK;
    if (MPI_Bcast(&code, 1, MPI_INT, 0, comm) != MPI_SUCCESS ||
        MPI_Bcast(id, HR_NCCL_ID_BYTES, MPI_BYTE, 0, comm) != MPI_SUCCESS) {
        snprintf(mpi_error, HR_LAST_ERROR_SIZE, "nccl: MPI_Bcast of the communicator id failed");
        return HR_ERR_IO;
    }
    if (code != HR_OK) return (hr_status)code; /* rank 0's message wins the agreement */
    hr_transport *n = NULL;
    const double timeout = tune->nccl_timeout > 0 ? tune->nccl_timeout : tune->nccl_timeout < 0 ? 0.0 : 120.0;
    const hr_status st =
        hri_transport_nccl_create(*t, size, device, id, timeout, &n, mpi_error, HR_LAST_ERROR_SIZE);
    if (st == HR_OK) *t = n; /* it owns the MPI transport now */
    return st;
}

hr_status hr_mpi_solver_create(const hr_options *o, const int decomp[3], int ghost, MPI_Comm comm,
                               hr_mpi_solver **out)
{
    return hr_mpi_solver_create_transport(o, decomp, ghost, HR_MPI_TRANSPORT_AUTO, comm, out);
}

hr_status hr_mpi_solver_create_transport(const hr_options *o, const int decomp[3], int ghost,
                                         hr_mpi_transport tr, MPI_Comm comm, hr_mpi_solver **out)
{
    mpi_error[0] = '\0';
    if (!out) return HR_ERR_INVALID_ARG;
    *out = NULL;
    if (!o) { /* before any collective: every rank that passes NULL returns here */
        snprintf(mpi_error, HR_LAST_ERROR_SIZE, "options: NULL");
        return HR_ERR_INVALID_ARG;
    }
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        snprintf(mpi_error, HR_LAST_ERROR_SIZE, "MPI is not initialised (call MPI_Init_thread first)");
        return HR_ERR_INVALID_ARG;
    }
    hr_mpi_solver *s = calloc(1, sizeof *s);
    MPI_Comm dup = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS) {
        free(s);
        snprintf(mpi_error, HR_LAST_ERROR_SIZE, "MPI_Comm_dup failed");
        return HR_ERR_IO;
    }
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(dup, &rank);
    MPI_Comm_size(dup, &size);
    hr_status st = s ? HR_OK : HR_ERR_NO_MEMORY;
    int parts[3] = {1, 1, 1};
    if (st == HR_OK) st = hr_mpi_resolve_decomp(o, size, decomp, ghost, parts, mpi_error, HR_LAST_ERROR_SIZE);
    if (st == HR_OK) st = check_transport(o, tr, mpi_error, HR_LAST_ERROR_SIZE);
    /* o->gpus: GPUs per node of GPU ranks (pick_device); CPU ranks have none to spread over */
    if (st == HR_OK && o->gpus > 0 && o->backend != HR_BACKEND_GPU)
        st = hri_invalid_arg(mpi_error, HR_LAST_ERROR_SIZE,
                            "gpus: needs --backend gpu (GPUs per node for GPU ranks; these are %s)",
                            hr_backend_name(o->backend));
    const hr_status same =
        same_everywhere(dup, o, decomp, ghost, tr, mpi_error, HR_LAST_ERROR_SIZE, st == HR_OK);
    int minor = st == HR_OK && same != HR_OK;
    if (st == HR_OK) st = same;
    hr_options lo = *o;
    /* auto on GPU ranks: device memory to device memory where every rank shares the node
     * (CUDA IPC, the fastest there), else what the MPI library takes */
    const int on_node_all = hri_mpi_all_on_node(dup);
    int first_on_dev = 0;
    if (tr == HR_MPI_TRANSPORT_AUTO && o->backend == HR_BACKEND_GPU && hri_ipc_available() && on_node_all)
        tr = HR_MPI_TRANSPORT_PEER;
    /* every rank calls the node split when the backend (agreed just now) is gpu */
    if (o->backend == HR_BACKEND_GPU && same == HR_OK) {
        const hr_status pd =
            pick_device(dup, o, tr, &lo, &first_on_dev, st == HR_OK ? mpi_error : NULL, HR_LAST_ERROR_SIZE);
        if (st == HR_OK) st = pd;
    }
    /* every rank: halos through shared memory when all ranks share this node (CPU ranks;
     * GPU ranks keep MPI, staged or CUDA-aware) */
    char shm[48];
    const int on_node = hri_mpi_shm_setup(dup, &o->tuning, shm);
    hr_transport *t = NULL;
    if (st == HR_OK)
        st = hri_transport_mpi_create(dup, on_node && lo.backend != HR_BACKEND_GPU ? shm : NULL, &o->tuning,
                                     &t);
    /* GPU ranks: where MPI's message buffers live (auto: as the library allows) */
    if (st == HR_OK && tr == HR_MPI_TRANSPORT_HOST) t->device_buffers = 0;
    if (st == HR_OK && tr == HR_MPI_TRANSPORT_DEVICE) t->device_buffers = 1;
    /* every rank, whatever its transport (a rank whose --transport differs must not wait
     * alone): no rank may enter ncclCommInitRank, which waits for all, while another failed */
    if (st != HR_OK && !mpi_error[0]) snprintf(mpi_error, HR_LAST_ERROR_SIZE, "%s", hr_status_string(st));
    st = agree_first(dup, rank, size, st, minor, mpi_error, HR_LAST_ERROR_SIZE);
    minor = 0;
    if (st == HR_OK && tr == HR_MPI_TRANSPORT_NCCL)
        st = wrap_nccl(dup, rank, size, lo.device, &o->tuning, &t);
    if (st == HR_OK && tr == HR_MPI_TRANSPORT_PEER) { /* local; the agreement below settles it */
        hr_transport *n = NULL;
        st = hri_transport_ipc_create(t, lo.device, &n, mpi_error, HR_LAST_ERROR_SIZE);
        if (st == HR_OK) t = n; /* it owns the MPI transport now */
    }
    if (st == HR_OK) {
        st = hri_dsolver_create(&lo, parts, ghost, t, &s->ds, mpi_error, HR_LAST_ERROR_SIZE);
        t = NULL; /* taken by the solver, also on failure */
    }
    if (t) t->ops->destroy(t);
    if (st != HR_OK && !mpi_error[0]) snprintf(mpi_error, HR_LAST_ERROR_SIZE, "%s", hr_status_string(st));
    st = agree_first(dup, rank, size, st, minor, mpi_error, HR_LAST_ERROR_SIZE);
    if (st != HR_OK) {
        if (s) hri_dsolver_free(s->ds);
        free(s);
        MPI_Comm_free(&dup);
        return st;
    }
    s->comm = dup;
    s->rank = rank;
    s->size = size;
    memcpy(s->parts, parts, sizeof parts);
    s->ghost = ghost;
    s->device_first = first_on_dev;
    s->transport = tr == HR_MPI_TRANSPORT_NCCL || tr == HR_MPI_TRANSPORT_PEER ? tr
                   : s->ds->subs[0].ctx && s->ds->t->device_buffers           ? HR_MPI_TRANSPORT_DEVICE
                                                                              : HR_MPI_TRANSPORT_HOST;
    double bytes = 0.0;
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++)
            bytes += (double)s->ds->subs[0].bytes[a][side];
    s->max_halo_bytes = bytes;
    MPI_Allreduce(MPI_IN_PLACE, &s->max_halo_bytes, 1, MPI_DOUBLE, MPI_MAX, dup);
    *out = s;
    return HR_OK;
}

hr_status hr_mpi_solver_run(hr_mpi_solver *s, hr_result *res)
{
    mpi_error[0] = '\0';
    if (!s) return HR_ERR_INVALID_ARG;
    /* every rank's monitor is called at the same point, so every rank refuses alike */
    if (__atomic_exchange_n(&s->running, 1, __ATOMIC_ACQ_REL)) {
        snprintf(mpi_error, HR_LAST_ERROR_SIZE,
                 "run: called during a run of the same solver (from its monitor)");
        return HR_ERR_INVALID_ARG;
    }
    hr_status st = hri_dsolver_run(s->ds, res);
    __atomic_store_n(&s->running, 0, __ATOMIC_RELEASE);
    const hr_dsolver *ds = s->ds;
    if (res && ds->dplace)
        snprintf(res->device_name, sizeof res->device_name, "%d GPU ranks (%.40s), decomp %dx%dx%d, ghost %d",
                 s->size, ds->dplace->device_name(ds->subs[0].ctx), s->parts[0], s->parts[1], s->parts[2],
                 s->ghost);
    else if (res)
        snprintf(res->device_name, sizeof res->device_name, "%d MPI ranks (%s%s), decomp %dx%dx%d, ghost %d",
                 s->size, ds->t->ops->name, ds->mapped ? ", mapped planes" : "", s->parts[0], s->parts[1],
                 s->parts[2], s->ghost);
    /* a diverged run diverges on every rank (the residual is global); other errors may be
     * local, so settle the status together */
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        const char *why = ds->err[0] ? ds->err : ds->t->err; /* the placement's, else the transport's */
        snprintf(mpi_error, HR_LAST_ERROR_SIZE, "run: %s%s%.200s", hr_status_string(st), why[0] ? ": " : "",
                 why);
    }
    return agree(s->comm, s->rank, s->size, st, mpi_error, HR_LAST_ERROR_SIZE);
}

hr_status hr_mpi_solver_gather_solution(const hr_mpi_solver *s, hr_precision prec, void *dst, size_t count,
                                        int root)
{
    mpi_error[0] = '\0';
    if (!s || !hr_prec_is_storage(prec)) return HR_ERR_INVALID_ARG;
    const hr_dsolver *ds = s->ds;
    const size_t ues = hr_prec_bytes(prec);
    const size_t total = (size_t)ds->p.nx * ds->p.ny * ds->p.nz;
    const hr_subdomain *g = &ds->subs[0].g;
    const size_t mine = (size_t)g->n[0] * g->n[1] * g->n[2] * ues;
    hr_status st = root < 0 || root >= s->size ? HR_ERR_INVALID_ARG : HR_OK;
    if (st == HR_OK && s->rank == root && (!dst || count < total)) st = HR_ERR_INVALID_ARG;
    if (st == HR_OK && (total * ues > (size_t)0x7fffffff)) st = HR_ERR_UNSUPPORTED; /* int counts */
    char *block = st == HR_OK ? malloc(mine ? mine : 1) : NULL;
    char *all = st == HR_OK && s->rank == root ? malloc(total * ues) : NULL;
    int *counts = st == HR_OK && s->rank == root ? malloc(2 * (size_t)s->size * sizeof *counts) : NULL;
    if (st == HR_OK && (!block || (s->rank == root && (!all || !counts)))) st = HR_ERR_NO_MEMORY;
    if (st != HR_OK) snprintf(mpi_error, HR_LAST_ERROR_SIZE, "gather: %s", hr_status_string(st));
    st = agree(s->comm, s->rank, s->size, st, mpi_error, HR_LAST_ERROR_SIZE);
    if (st == HR_OK) {
        int *displs = counts ? counts + s->size : NULL;
        if (s->rank == root) {
            int at = 0;
            for (int r = 0; r < s->size; r++) {
                hr_subdomain q;
                hri_subdomain_init(&ds->d, r, 4, &q);
                counts[r] = (int)((size_t)q.n[0] * q.n[1] * q.n[2] * ues);
                displs[r] = at;
                at += counts[r];
            }
        }
        hri_dsolver_own_to_block(ds, 0, prec, block);
        if (MPI_Gatherv(block, (int)mine, MPI_BYTE, all, counts, displs, MPI_BYTE, root, s->comm) !=
            MPI_SUCCESS)
            st = HR_ERR_IO;
        if (st == HR_OK && s->rank == root)
            for (int r = 0; r < s->size; r++)
                hri_block_to_global(&ds->d, r, prec, all + displs[r], dst);
    }
    free(block);
    free(all);
    free(counts);
    return st;
}

hr_status hr_mpi_solver_write_raw(const hr_mpi_solver *s, const char *path, hr_precision prec)
{
    mpi_error[0] = '\0';
    if (!s || !path || !hr_prec_is_storage(prec)) return HR_ERR_INVALID_ARG;
    const hr_dsolver *ds = s->ds;
    const hr_subdomain *g = &ds->subs[0].g;
    const int dim = ds->p.dim;
    const size_t ues = hr_prec_bytes(prec);
    const size_t mine = (size_t)g->n[0] * g->n[1] * g->n[2];
    hr_status st = mine * ues > (size_t)0x7fffffff ? HR_ERR_UNSUPPORTED : HR_OK; /* int counts */
    void *block = st == HR_OK ? malloc(mine ? mine * ues : 1) : NULL;
    if (st == HR_OK && !block) st = HR_ERR_NO_MEMORY;
    if (st != HR_OK) snprintf(mpi_error, HR_LAST_ERROR_SIZE, "output: %s", hr_status_string(st));
    st = agree(s->comm, s->rank, s->size, st, mpi_error, HR_LAST_ERROR_SIZE);
    if (st != HR_OK) {
        free(block);
        return st;
    }
    hri_dsolver_own_to_block(ds, 0, prec, block);
    /* the file is the whole interior, x fastest: each rank's block is a subarray of it */
    const MPI_Datatype et = prec == HR_PREC_SINGLE ? MPI_FLOAT : MPI_DOUBLE;
    int sizes[3], sub[3], starts[3];
    for (int a = 0; a < dim; a++) { /* C order: slowest axis first */
        sizes[dim - 1 - a] = ds->d.n[a];
        sub[dim - 1 - a] = g->n[a];
        starts[dim - 1 - a] = g->off[a];
    }
    MPI_Datatype ft;
    MPI_Type_create_subarray(dim, sizes, sub, starts, MPI_ORDER_C, et, &ft);
    MPI_Type_commit(&ft);
    MPI_File f;
    int e = MPI_File_open(s->comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f);
    if (e == MPI_SUCCESS) {
        int e2 = MPI_File_set_size(f, 0); /* an older, longer file must not keep its tail */
        if (e2 == MPI_SUCCESS) e2 = MPI_File_set_view(f, 0, et, ft, "native", MPI_INFO_NULL);
        if (e2 == MPI_SUCCESS) e2 = MPI_File_write_all(f, block, (int)mine, et, MPI_STATUS_IGNORE);
        const int e3 = MPI_File_close(&f);
        e = e2 != MPI_SUCCESS ? e2 : e3;
    }
    MPI_Type_free(&ft);
    free(block);
    st = e == MPI_SUCCESS ? HR_OK : HR_ERR_IO;
    if (st != HR_OK) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(e, msg, &len);
        snprintf(mpi_error, HR_LAST_ERROR_SIZE, "output: '%.100s': %.120s", path, msg);
    }
    return agree(s->comm, s->rank, s->size, st, mpi_error, HR_LAST_ERROR_SIZE);
}

hr_status hr_mpi_solver_info(const hr_mpi_solver *s, hr_mpi_info *out)
{
    if (!s || !out) return HR_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    out->ranks = s->size;
    memcpy(out->decomp, s->parts, sizeof s->parts);
    out->ghost = s->ghost;
    out->exchanges = s->ds->xt.rounds;
    out->pack_s = s->ds->xt.pack;
    out->transfer_s = s->ds->xt.transfer;
    out->unpack_s = s->ds->xt.unpack;
    out->hidden_s = s->ds->xt.hidden;
    out->wait_s = s->ds->xt.wait;
    out->compute_s = s->ds->xt.compute;
    out->device = s->ds->subs[0].device;
    out->device_buffers = s->ds->subs[0].ctx && s->ds->t->device_buffers;
    out->transport = s->transport;
    out->device_first = out->device >= 0 && s->device_first;
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            out->halo_bytes += (double)s->ds->subs[0].bytes[a][side];
            out->messages += s->ds->subs[0].bytes[a][side] > 0;
        }
    out->max_halo_bytes = s->max_halo_bytes;
    return HR_OK;
}

hr_status hr_mpi_solver_set_overlap(hr_mpi_solver *s, int on)
{
    if (!s) return HR_ERR_INVALID_ARG;
    s->ds->overlap = on != 0;
    return HR_OK;
}

hr_status hr_mpi_solver_set_reference(hr_mpi_solver *s, double gbps)
{
    if (!s) return HR_ERR_INVALID_ARG;
    double sum = gbps > 0 ? gbps : 0.0;
    if (MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, s->comm) != MPI_SUCCESS) return HR_ERR_IO;
    s->ds->o.reference_gbps = sum;
    return HR_OK;
}

void hr_mpi_solver_free(hr_mpi_solver *s)
{
    if (!s) return;
    if (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE)) return; /* from the monitor: the run holds s */
    hri_dsolver_free(s->ds);
    MPI_Comm_free(&s->comm);
    free(s);
}
