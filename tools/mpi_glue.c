/* MPI for the grid commands (see mpi_glue.h). */
#include "mpi_glue.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tuning_env.h"

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

/* ------------------------------------------------------------------ agreements */

enum { STAGE_PARSED = 1, STAGE_SOLVE, STAGE_END };
static const char *const stage_names[] = {"", "parsing", "the solve", "the end"};

static int ended = -1;        /* >= 0: a failed agreement ended all talk; the agreed status */
static int parsed_done;       /* the agreement after parsing happened */
static const char *agree_cmd; /* the command, for messages */
static long long argv_hash, env_hash;
static char argv_text[400], env_text[400];

enum { MSG = 1024 };

/* FNV-1a, kept to 62 bits so that the hash and its negation fit a long long */
static unsigned long long fnv(unsigned long long h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static void append(char *buf, size_t size, const char *s)
{
    const size_t len = strlen(buf);
    if (len + 1 < size) snprintf(buf + len, size - len, "%s", s);
}

/* What every rank must share: the command line (less the program's path) and the tuning
 * knobs its HETRELAX_* variables give, which decide code paths and so which collectives a
 * rank makes (HETRELAX_MPI_ALL_OUTPUT, which only keeps a rank's output, and variables that
 * leave every knob at its default may differ). */
static void fingerprint(int argc, char **argv)
{
    unsigned long long h = 14695981039346656037ULL;
    argv_text[0] = '\0';
    for (int i = 1; i < argc; i++) {
        h = fnv(h, argv[i], strlen(argv[i]) + 1); /* with its NUL: "a b" is not "ab" */
        if (i > 1) append(argv_text, sizeof argv_text, " ");
        append(argv_text, sizeof argv_text, argv[i]);
    }
    argv_hash = (long long)(h >> 2);
    hri_tuning_env_fingerprint(env_text, sizeof env_text, &h);
    env_hash = (long long)(h >> 2);
}

/* Ranks > 0: the last few KiB written to stderr, for the agreement to pass on; fprintf
 * to stderr (ours and the library's) lands here, raw writes to fd 2 in /dev/null. */
static char tail[4096];
static size_t tail_len;
static int tail_on; /* 0: HETRELAX_MPI_ALL_OUTPUT=1 (the rank printed itself) or no glibc */

#ifdef __GLIBC__
static ssize_t tail_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    if (n >= sizeof tail) {
        memcpy(tail, buf + n - sizeof tail, sizeof tail);
        tail_len = sizeof tail;
        return (ssize_t)n;
    }
    if (tail_len + n > sizeof tail) { /* drop the oldest bytes */
        const size_t drop = tail_len + n - sizeof tail;
        memmove(tail, tail + drop, tail_len - drop);
        tail_len -= drop;
    }
    memcpy(tail + tail_len, buf, n);
    tail_len += n;
    return (ssize_t)n;
}

static void tail_capture(void)
{
    cookie_io_functions_t io = {.read = NULL, .write = tail_write, .seek = NULL, .close = NULL};
    FILE *f = fopencookie(NULL, "w", io);
    if (!f) return;
    setvbuf(f, NULL, _IONBF, 0);
    stderr = f; /* glibc: stderr is an ordinary variable */
    tail_on = 1;
}
#else
static void tail_capture(void) {}
#endif

/* This rank's error: the last "hetrelax ..." line it printed that is not a warning, else
 * its last line. */
static void tail_message(char *out, size_t size)
{
    out[0] = '\0';
    const char *best = NULL, *last = NULL;
    size_t best_len = 0, last_len = 0;
    for (size_t i = 0; i < tail_len;) {
        size_t j = i;
        while (j < tail_len && tail[j] != '\n')
            j++;
        if (j > i) {
            last = tail + i;
            last_len = j - i;
            if (last_len > 9 && memcmp(last, "hetrelax", 8) == 0 &&
                !memmem(last, last_len, ": warning:", 10)) {
                best = last;
                best_len = last_len;
            }
        }
        i = j + 1;
    }
    if (!best) {
        best = last;
        best_len = last_len;
    }
    if (best) snprintf(out, size, "%.*s", (int)(best_len < size ? best_len : size - 1), best);
}

/* Rank 0 prints rank r's line with the rank named: "hetrelax CMD: rank r: rest". */
static void print_from(int r, const char *line)
{
    const char *cmd = agree_cmd ? agree_cmd : "";
    const char *colon = strncmp(line, "hetrelax", 8) == 0 ? strstr(line, ": ") : NULL;
    if (colon)
        fprintf(stderr, "%.*s: rank %d: %s\n", (int)(colon - line), line, r, colon + 2);
    else
        fprintf(stderr, "hetrelax%s%s: rank %d: %s\n", cmd[0] ? " " : "", cmd, r, line);
}

/* One agreement (see mpi_glue.h): collective over MPI_COMM_WORLD, the same calls on every
 * rank whatever the stage, and the same outcome everywhere. Returns 0 when all is well. */
static int agreement(const char *cmd, int stage, int rc)
{
    if (!mpi_on) return rc;
    if (ended >= 0) return ended > rc ? ended : rc; /* talk is over: never wait for anyone */
    if (cmd) agree_cmd = cmd;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int status = rc > 0 ? rc : 0;
    /* maxima; a negation gives the minimum */
    long long v[8] = {status,    stage,      -stage,   status ? size - rank : 0,
                      argv_hash, -argv_hash, env_hash, -env_hash};
    fflush(stdout);
    if (MPI_Allreduce(MPI_IN_PLACE, v, 8, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
        fprintf(stderr, "hetrelax: MPI_Allreduce failed\n");
        ended = HR_EXIT_FAIL;
        return ended;
    }
    enum {
        FAILED = 1,
        ARGV,
        ENV,
        STAGE
    } kind = v[0]            ? FAILED
             : v[4] != -v[5] ? ARGV
             : v[6] != -v[7] ? ENV
             : v[1] != -v[2] ? STAGE
                             : 0;
    if (!kind) {
        tail_len = 0;
        return rc;
    }
    /* the rank that speaks: the lowest failing one, or the lowest that differs from rank 0 */
    int who = (int)(size - v[3]);
    if (kind != FAILED) {
        long long z[3] = {stage, argv_hash, env_hash};
        MPI_Bcast(z, 3, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        const int differs = kind == ARGV ? z[1] != argv_hash : kind == ENV ? z[2] != env_hash : z[0] != stage;
        int key = differs ? size - rank : 0;
        MPI_Allreduce(MPI_IN_PLACE, &key, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        who = size - key;
    }
    char msg[MSG] = "";
    if (rank == who) {
        if (kind == FAILED) {
            if (tail_on) tail_message(msg, sizeof msg);
            if (!msg[0])
                snprintf(msg, sizeof msg, "stopped with status %d%s", status,
                         tail_on ? " (no message)" : " (see its own output)");
        } else if (kind == ARGV)
            snprintf(msg, sizeof msg, "%s", argv_text);
        else if (kind == ENV)
            snprintf(msg, sizeof msg, "%s", env_text);
        else
            snprintf(msg, sizeof msg, "%s", stage_names[stage]);
    }
    if (who != 0) MPI_Bcast(msg, MSG, MPI_CHAR, who, MPI_COMM_WORLD);
    ended = kind == FAILED ? (int)v[0] : kind == STAGE ? HR_EXIT_FAIL : HR_EXIT_USAGE;
    if (rank == 0 && who != 0) {
        const char *c = agree_cmd ? agree_cmd : "";
        const char *sp = c[0] ? " " : "";
        if (kind == FAILED)
            print_from(who, msg);
        else if (kind == ARGV)
            fprintf(stderr,
                    "hetrelax%s%s: rank %d was started with another command line than rank 0 ('%s' against "
                    "'%s'): give every rank the same\n",
                    sp, c, who, msg, argv_text);
        else if (kind == ENV)
            fprintf(stderr,
                    "hetrelax%s%s: rank %d runs with other HETRELAX_* settings than rank 0 (%s against %s): "
                    "give every rank the same\n",
                    sp, c, who, msg, env_text);
        else
            fprintf(stderr,
                    "hetrelax%s%s: rank %d reached %s while rank 0 reached %s (the ranks took other paths)\n",
                    sp, c, who, msg, stage_names[stage]);
    }
    tail_len = 0;
    return ended;
}

/* Started by mpiexec/mpirun/srun: the launcher's variables say so. */
static int launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                       "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

int hr_mpi_cli_init(int *argc, char ***argv)
{
    if (!launched()) return 0;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "hetrelax: MPI_Init_thread failed\n");
        return HR_EXIT_FAIL;
    }
    mpi_on = 1;
    fingerprint(*argc, *argv);
    const char *all = getenv("HETRELAX_MPI_ALL_OUTPUT");
    if (hr_mpi_cli_rank() > 0 && !(all && strcmp(all, "1") == 0)) {
        /* one message per run: rank 0 speaks for all, and passes on what only another found */
        fflush(stdout);
        fflush(stderr);
        const int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        tail_capture();
    }
    return 0;
}

int hr_mpi_cli_parsed(const char *cmd, int rc)
{
    if (!mpi_on || parsed_done) return rc;
    parsed_done = 1;
    const int st = agreement(cmd, STAGE_PARSED, rc);
    return st ? st : rc;
}

int hr_mpi_cli_finalize(int rc)
{
    if (!mpi_on) return rc;
    rc = agreement(NULL, STAGE_END, rc);
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
    if ((local_rc = agreement(cmd, STAGE_SOLVE, local_rc)) != 0) return local_rc;
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

/* A library message on rank 0 as the one-process command says it: at create, a refusal
 * "hetrelax CMD: --field: reason" (exit 2); later "hetrelax CMD: [what: ]status: --field:
 * reason". Returns the status, the same on every rank. */
static int refuse_grid(const char *cmd, const hr_mpi_cli_args *m, hr_status st, int at_create,
                       const char *what, const char *msg)
{
    const int usage = st == HR_ERR_INVALID_ARG || st == HR_ERR_UNSUPPORTED ||
                      (at_create && (st == HR_ERR_NO_DEVICE || st == HR_ERR_NO_MEMORY));
    if (hr_mpi_cli_rank() != 0) return usage ? HR_EXIT_USAGE : HR_EXIT_FAIL;
    char line[MSG];
    if (m->flagify)
        m->flagify(m->flagify_arg, msg, line, sizeof line);
    else
        snprintf(line, sizeof line, "%s", msg);
    if (at_create && usage)
        fprintf(stderr, "hetrelax %s: %s%s\n", cmd, st == HR_ERR_NO_MEMORY ? "out of memory: " : "", line);
    else
        fprintf(stderr, "hetrelax %s: %s%s%s: %s\n", cmd, what, what[0] ? ": " : "", hr_status_string(st),
                line);
    return usage ? HR_EXIT_USAGE : HR_EXIT_FAIL;
}

int hr_mpi_cli_solve_grid(const char *cmd, const hr_problem *p, const hr_grid_options *go,
                          const hr_mpi_cli_args *m, int local_rc, hr_grid_info *info, hr_result *r,
                          double *sol, size_t count, json_object **mpi_json)
{
    if (mpi_json) *mpi_json = NULL;
    if (info) memset(info, 0, sizeof *info);
    if (!mpi_on) {
        if (local_rc) return local_rc;
        fprintf(stderr,
                "hetrelax %s: --decomp: %ld subdomains need as many MPI ranks (run under mpirun -np %ld)\n",
                cmd, decomp_parts(m), decomp_parts(m));
        return HR_EXIT_USAGE;
    }
    if ((local_rc = agreement(cmd, STAGE_SOLVE, local_rc)) != 0) return local_rc;
    /* from here every call is collective and agreed by the library: the same status everywhere */
    hr_grid_solver *s = NULL;
    hr_status st = hr_grid_solver_create_mpi(p, go, MPI_COMM_WORLD, &s);
    if (st != HR_OK) return refuse_grid(cmd, m, st, 1, "", hr_last_error());
    hr_grid_info gi;
    hr_grid_solver_info(s, &gi);
    if (info) *info = gi;
    if (m->ready && hr_mpi_cli_rank() == 0) m->ready(m->ready_arg);
    st = hr_grid_solver_solve(s, NULL, NULL, r);
    int rc = 0;
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        rc = refuse_grid(cmd, m, st, 0, "", hr_grid_solver_last_error(s));
        hr_grid_solver_free(s);
        return rc;
    }
    const int diverged = st == HR_ERR_DIVERGED;
    const int root = hr_mpi_cli_rank() == 0;
    int want = root && sol != NULL;
    MPI_Bcast(&want, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (want &&
        (st = hr_grid_solver_solution(s, HR_PREC_DOUBLE, root ? sol : NULL, root ? count : 0)) != HR_OK) {
        refuse_grid(cmd, m, st, 0, "copying the solution", hr_grid_solver_last_error(s));
        hr_grid_solver_free(s);
        return HR_EXIT_FAIL;
    }
    if (mpi_json && root) {
        /* a slab of the last axis per rank: the decomposition 1 x .. x ranks */
        json_object *j = json_object_new_object(), *d = json_object_new_array();
        for (int a = 0; a < p->dim; a++)
            json_object_array_add(d, json_object_new_int(a == p->dim - 1 ? gi.ranks : 1));
        json_object_object_add(j, "ranks", json_object_new_int(gi.ranks));
        json_object_object_add(j, "decomp", d);
        json_object_object_add(j, "slab_axis", json_object_new_string(p->dim == 3 ? "z" : "y"));
        if (gi.transport)
            json_object_object_add(j, "transport",
                                   json_object_new_string(hr_mpi_transport_name((hr_mpi_transport)gi.transport)));
        *mpi_json = j;
    }
    hr_grid_solver_free(s);
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

int hr_mpi_cli_parsed(const char *cmd, int rc)
{
    (void)cmd;
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

int hr_mpi_cli_solve_grid(const char *cmd, const hr_problem *p, const hr_grid_options *go,
                          const hr_mpi_cli_args *m, int local_rc, hr_grid_info *info, hr_result *r,
                          double *sol, size_t count, json_object **mpi_json)
{
    (void)p;
    (void)go;
    (void)m;
    (void)r;
    (void)sol;
    (void)count;
    if (info) memset(info, 0, sizeof *info);
    if (mpi_json) *mpi_json = NULL;
    if (local_rc) return local_rc;
    fprintf(stderr, "hetrelax %s: --decomp: built without MPI\n", cmd);
    return HR_EXIT_USAGE;
}

#endif
