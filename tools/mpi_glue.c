/* MPI for the grid commands (see mpi_glue.h). */
#include "mpi_glue.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifdef HR_HAVE_MPI
#include "hetrelax/mpi.h"
#endif

/* --decomp AxB[xC]: digits only, each part >= 1 (0 is not accepted on the command line). */
static int parse_decomp(const char *cmd, const hr_flag *f, const char *arg)
{
    int *d = f->target, n = 0;
    const char *p = arg;
    int v[3] = {0, 0, 0};
    while (n < 3) {
        long x = 0;
        const char *start = p;
        while (*p >= '0' && *p <= '9' && x <= 1 << 24)
            x = x * 10 + (*p++ - '0');
        if (p == start || x < 1 || x > 1 << 24) break;
        v[n++] = (int)x;
        if (*p == '\0') {
            if (n < 2) break;
            memcpy(d, v, sizeof v);
            return 0;
        }
        if (*p != 'x') break;
        p++;
    }
    return hr_flag_error(cmd, f, "'%s': want AxB or AxBxC, parts >= 1 (x, y[, z])", arg);
}

void hr_mpi_cli_flags(hr_flagset *fs, hr_mpi_cli_args *m)
{
    memset(m, 0, sizeof *m);
    m->ghost = 1;
    hr_flags_group(fs, "decomposition (MPI)");
    hr_flags_add(fs,
                 hr_flag_custom("decomp", m->decomp, NULL, parse_decomp, "AxB[xC]",
                                "subdomains along x, y[, z]; the product is the rank count\n"
                                "(default under mpirun: MPI_Dims_create, most parts along the slowest axis;\n"
                                "GPU ranks: slabs along the slowest axis)"));
    hr_flags_add(
        fs, hr_flag_int("ghost", &m->ghost, 1, 64, "G",
                        "ghost layers, exchanged every G sweeps (redundant sweeps in between; default 1)"));
    hr_flags_add(
        fs, hr_flag_switch("no-overlap", &m->no_overlap, 1,
                           "exchange, then sweep (default with G = 1: sweep the inner points meanwhile)"));
    static const char *const transports[] = {"auto", "host", "device", "nccl", "peer", NULL};
    hr_flags_add(fs, hr_flag_choice("transport", &m->transport, transports,
                                    "GPU ranks' halos: MPI on pinned host buffers (host), MPI on device\n"
                                    "buffers (device: CUDA-aware MPI), NCCL (nccl: one rank per GPU),\n"
                                    "CUDA IPC, faces packed into the neighbour's GPU memory (peer: every\n"
                                    "rank on one node); auto (default): peer when every rank is on one\n"
                                    "node, else device when MPI is CUDA-aware, else host"));
}

#ifdef HR_HAVE_MPI

static int mpi_on;

int hr_mpi_cli_init(int *argc, char ***argv)
{
    if (!hr_mpi_launched()) return 0;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "hetrelax: MPI_Init_thread failed\n");
        return HR_EXIT_FAIL;
    }
    mpi_on = 1;
    const char *all = getenv("HETRELAX_MPI_ALL_OUTPUT");
    if (hr_mpi_cli_rank() > 0 && !(all && strcmp(all, "1") == 0)) {
        /* one message per run: rank 0 speaks for all */
        fflush(stdout);
        fflush(stderr);
        const int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
    }
    return 0;
}

int hr_mpi_cli_finalize(int rc)
{
    if (!mpi_on) return rc;
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    mpi_on = 0;
    return rc;
}

int hr_mpi_cli_rank(void)
{
    int r = 0;
    if (mpi_on) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int hr_mpi_cli_size(void)
{
    int n = 1;
    if (mpi_on) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* Parts a --decomp asks for (1 when not given). */
static long decomp_parts(const hr_mpi_cli_args *m)
{
    return m->decomp[0] > 0 ? (long)m->decomp[0] * m->decomp[1] * (m->decomp[2] > 0 ? m->decomp[2] : 1) : 1;
}

int hr_mpi_cli_wanted(const hr_mpi_cli_args *m)
{
    /* a --transport under mpirun asks for the MPI run even on one rank */
    return hr_mpi_cli_size() > 1 || decomp_parts(m) > 1 ||
           (mpi_on && (m->transport != 0 || m->transport_given));
}

/* "field: reason" from the library as "hetrelax CMD: --field: reason" */
static int refuse(const char *cmd, hr_status st, const char *msg)
{
    if (hr_mpi_cli_rank() != 0) return st == HR_ERR_INVALID_ARG ? HR_EXIT_USAGE : HR_EXIT_FAIL;
    if (st == HR_ERR_INVALID_ARG && strchr(msg, ':')) {
        fprintf(stderr, "hetrelax %s: --%s\n", cmd, msg);
        return HR_EXIT_USAGE;
    }
    fprintf(stderr, "hetrelax %s: %s%s%s\n", cmd, hr_status_string(st), msg[0] ? ": " : "", msg);
    return st == HR_ERR_INVALID_ARG ? HR_EXIT_USAGE : HR_EXIT_FAIL;
}

int hr_mpi_cli_solve(const char *cmd, const hr_options *o, const hr_mpi_cli_args *m, int local_rc,
                     hr_result *r, double *sol, size_t count, json_object **mpi_json)
{
    if (mpi_json) *mpi_json = NULL;
    if (!mpi_on) {
        /* not started by mpirun: one process cannot hold several subdomains' ranks */
        if (local_rc) return local_rc;
        fprintf(stderr,
                "hetrelax %s: --decomp: %ld subdomains need as many MPI ranks (run under mpirun -np %ld)\n",
                cmd, decomp_parts(m), decomp_parts(m));
        return HR_EXIT_USAGE;
    }
    MPI_Allreduce(MPI_IN_PLACE, &local_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (local_rc != 0) return local_rc;
    hr_mpi_solver *s;
    const int *dec = m->decomp[0] > 0 ? m->decomp : NULL;
    hr_options lo = *o;
    if (m->gpus > 0) lo.gpus = m->gpus; /* GPU ranks: the library checks it against the node */
    hr_status st = hr_mpi_solver_create_transport(&lo, dec, m->ghost, (hr_mpi_transport)m->transport,
                                                  MPI_COMM_WORLD, &s);
    if (st != HR_OK) return refuse(cmd, st, hr_mpi_last_error());
    hr_mpi_solver_set_overlap(s, !m->no_overlap);
    if (m->measure_gpus) { /* every GPU measured once, at the same time: the sum is the reference */
        hr_mpi_info mi;
        double mine = 0.0;
        hr_mpi_solver_info(s, &mi);
        if (mi.device_first && hr_measure_device_bandwidth(mi.device, 0, 5, &mine) != HR_OK) mine = 0.0;
        if ((st = hr_mpi_solver_set_reference(s, mine)) != HR_OK) {
            hr_mpi_solver_free(s);
            return refuse(cmd, st, "measuring the GPUs' copy bandwidth");
        }
    }
    if (m->ready && hr_mpi_cli_rank() == 0) m->ready(m->ready_arg);
    st = hr_mpi_solver_run(s, r);
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        hr_mpi_solver_free(s);
        return refuse(cmd, st, hr_mpi_last_error());
    }
    const int diverged = st == HR_ERR_DIVERGED;
    int want = hr_mpi_cli_rank() == 0 && sol != NULL;
    MPI_Bcast(&want, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (want && (st = hr_mpi_solver_gather_solution(s, HR_PREC_DOUBLE, sol, count, 0)) != HR_OK) {
        hr_mpi_solver_free(s);
        return refuse(cmd, st, hr_mpi_last_error());
    }
    hr_mpi_info info;
    hr_mpi_solver_info(s, &info);
    double t[6] = {info.pack_s, info.transfer_s, info.unpack_s, info.hidden_s, info.wait_s, info.compute_s};
    MPI_Allreduce(MPI_IN_PLACE, t, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (mpi_json && hr_mpi_cli_rank() == 0) {
        json_object *j = json_object_new_object(), *d = json_object_new_array();
        for (int a = 0; a < (o->dim == 3 ? 3 : 2); a++)
            json_object_array_add(d, json_object_new_int(info.decomp[a]));
        json_object_object_add(j, "ranks", json_object_new_int(info.ranks));
        json_object_object_add(j, "decomp", d);
        json_object_object_add(j, "ghost", json_object_new_int(info.ghost));
        json_object_object_add(j, "overlap", json_object_new_boolean(!m->no_overlap && info.ghost == 1));
        json_object_object_add(j, "exchanges", json_object_new_int64(info.exchanges));
        json_object_object_add(j, "pack_s", hr_json_number(t[0]));
        json_object_object_add(j, "transfer_s", hr_json_number(t[1]));
        json_object_object_add(j, "unpack_s", hr_json_number(t[2]));
        json_object_object_add(j, "hidden_s", hr_json_number(t[3]));
        if (info.device >= 0) { /* GPU ranks: the device overlap's split, where messages lived */
            json_object_object_add(j, "wait_s", hr_json_number(t[4]));
            json_object_object_add(j, "compute_s", hr_json_number(t[5]));
            json_object_object_add(j, "hidden_fraction",
                                   hr_json_number(t[3] + t[4] > 0 ? t[3] / (t[3] + t[4]) : 0.0));
            json_object_object_add(
                j, "buffers",
                json_object_new_string(info.transport == HR_MPI_TRANSPORT_NCCL   ? "device (NCCL)"
                                       : info.transport == HR_MPI_TRANSPORT_PEER ? "device (CUDA IPC)"
                                       : info.device_buffers                     ? "device (CUDA-aware MPI)"
                                                                                 : "pinned host (staged)"));
        }
        json_object_object_add(j, "transport", json_object_new_string(hr_mpi_transport_name(info.transport)));
        json_object_object_add(j, "halo_bytes", hr_json_number(info.halo_bytes));
        json_object_object_add(j, "max_halo_bytes", hr_json_number(info.max_halo_bytes));
        *mpi_json = j;
    }
    hr_mpi_solver_free(s);
    return diverged ? HR_EXIT_FAIL : 0;
}

#else /* no MPI in this build */

int hr_mpi_cli_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int hr_mpi_cli_finalize(int rc)
{
    return rc;
}

int hr_mpi_cli_rank(void)
{
    return 0;
}

int hr_mpi_cli_size(void)
{
    return 1;
}

int hr_mpi_cli_wanted(const hr_mpi_cli_args *m)
{
    return m->decomp[0] > 0 && (long)m->decomp[0] * m->decomp[1] * (m->decomp[2] > 0 ? m->decomp[2] : 1) > 1;
}

int hr_mpi_cli_solve(const char *cmd, const hr_options *o, const hr_mpi_cli_args *m, int local_rc,
                     hr_result *r, double *sol, size_t count, json_object **mpi_json)
{
    (void)o;
    (void)m;
    (void)r;
    (void)sol;
    (void)count;
    if (mpi_json) *mpi_json = NULL;
    if (local_rc) return local_rc;
    fprintf(stderr, "hetrelax %s: --decomp: built without MPI\n", cmd);
    return HR_EXIT_USAGE;
}

#endif
