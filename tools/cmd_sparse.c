/* hetrelax sparse: A x = b for a sparse matrix (Matrix Market file or generated). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_flags.h"
#include "hetrelax/sparse.h"
#include "methods/sparse/sparse_internal.h"
#include "runtime/cuda/cuda_api.h" /* device memory, for the estimate */
#include "tuning_cli.h"

#define CMD "sparse"

/* Human-readable output; stderr when the JSON goes to stdout. */
static FILE *hout;

typedef struct sp_args {
    hr_sparse_options o;
    const char *matrix, *gen, *json, *output, *rhs, *x0, *fault;
    int analyze, quiet, list, monitor_given, block_given, threads_given, keep_diverged;
    uint64_t seed;
} sp_args;

typedef struct history {
    long *it;
    double *res;
    size_t len, cap;
    int print;
    int absolute; /* b = 0: the residuals are absolute */
} history;

static int list_methods(void)
{
    hr_cli_listing_output();
    printf("%-8s %-12s %s\n", "method", "backend", "summary");
    hr_entry_info m;
    for (int i = 0; hr_registry_info_at(HR_KIND_SPARSE, i, &m) == HR_OK; i++)
        printf("%-8s %-12s %s\n", m.name, hr_backend_name(m.backend), m.summary);
    return HR_EXIT_OK;
}

/* FRACTION@ITER[:recover=R] */
static int parse_fault(const char *s, hr_sparse_options *o)
{
    char *end;
    errno = 0;
    double f = strtod(s, &end);
    if (end == s || *end != '@' || errno || !(f > 0.0 && f <= 1.0)) goto bad;
    const char *p = end + 1;
    if (*p < '0' || *p > '9') goto bad;
    long it = strtol(p, &end, 10);
    if (errno || it < 0) goto bad;
    long rec = -1;
    if (*end == ':') {
        if (strncmp(end + 1, "recover=", 8) != 0) goto bad;
        p = end + 9;
        if (*p < '0' || *p > '9') goto bad;
        rec = strtol(p, &end, 10);
        if (errno || rec < 0) goto bad;
    }
    if (*end) goto bad;
    o->fault_fraction = f;
    o->fault_iter = it;
    o->fault_recover = rec;
    return 0;
bad:
    return hr_cli_usage_error(CMD, "--fault",
                              "expected FRACTION@ITER[:recover=R] with 0 < FRACTION <= 1, got '%s'", s);
}

static int parse_fault_flag(const char *cmd, const hr_flag *f, const char *arg)
{
    (void)cmd;
    sp_args *a = f->target;
    a->fault = arg;
    return parse_fault(arg, &a->o);
}

static int parse_tau(const char *cmd, const hr_flag *f, const char *arg)
{
    (void)cmd;
    hr_sparse_options *o = f->target;
    int rc = 0;
    if (strcmp(arg, "auto") == 0)
        o->tau = HR_SPARSE_TAU_AUTO;
    else if (!(rc = hr_cli_double(CMD, "--tau", arg, 0.0, 2.0, &o->tau)) && (o->tau <= 0.0 || o->tau >= 2.0))
        rc = hr_cli_usage_error(CMD, "--tau", "%g: must be 'auto' or in (0, 2)", o->tau);
    return rc;
}

static int parse_method(const char *cmd, const hr_flag *f, const char *arg)
{
    hr_entry_info m;
    int rc = hr_cli_entry(cmd, "--method", arg, HR_KIND_SPARSE, &m);
    if (!rc) ((hr_sparse_options *)f->target)->method = m.name;
    return rc;
}

static int parse_args(int argc, char **argv, sp_args *a)
{
    static const char *const comms[] = {"auto", "amc", "dc", "dk", NULL};
    static hr_flagset fs; /* static: large, and one parse per process */
    hr_sparse_options *o = &a->o;
    long seed = (long)a->seed;
    hr_flags_init(
        &fs, CMD, "sparse (--matrix FILE.mtx | --gen NAME:SIZE) [options]",
        "Solves A x = b by relaxation (Anzt et al.: Jacobi, Gauss-Seidel, block-asynchronous\n"
        "async-(K)) or conjugate gradient, and reports the true relative residual\n"
        "||b - A x|| / ||b|| recomputed at the end.\n",
        "A global iteration updates every component once (async-(K): K local sweeps per\n"
        "block). Outputs are written to a temporary file and renamed into place.\n" HR_CLI_EXIT_HELP);
    hr_flags_group(&fs, "problem");
    hr_flags_add(&fs, hr_flag_string("matrix", &a->matrix, "FILE",
                                     "Matrix Market 'coordinate' file (real|integer|pattern,\n"
                                     "general|symmetric; symmetric is expanded on read)"));
    hr_flags_add(&fs,
                 hr_flag_string("gen", &a->gen, "NAME:SIZE",
                                "trefethen:N, laplace2d:M, laplace3d:M, fv2d:M,\nrandom-spd:N:DENSITY:SEED"));
    hr_flags_add(&fs, hr_flag_string("rhs", &a->rhs, "ones|random|FILE",
                                     "right-hand side (default ones; FILE: Matrix Market array)"));
    hr_flags_add(&fs, hr_flag_string("x0", &a->x0, "zero|ones|random|FILE", "initial guess (default zero)"));
    hr_flags_add(&fs, hr_flag_long("seed", &seed, 0, 2147483647L, "S",
                                   "seed of --rhs random / --x0 random (default 1)"));
    hr_flags_group(&fs, "method");
    hr_flags_add(&fs, hr_flag_custom("method", o, NULL, parse_method, hr_cli_entry_metavar(HR_KIND_SPARSE),
                                     "(default jacobi)"));
    hr_flags_placement(&fs, &o->backend, NULL, &o->threads, NULL, NULL, &o->bind, NULL);
    hr_flags_set_help(&fs, "backend", "(default: the method's first backend)");
    hr_flags_set_help(&fs, "bind", "bind threads to cores (default none)");
    hr_flags_add(&fs, hr_flag_int("local-iters", &o->local_iters, 1, 1000, "K",
                                  "local Jacobi sweeps per block for async-(K) (default 5)"));
    hr_flags_add(&fs, hr_flag_int("block", &o->block, 1, 1 << 24, "B",
                                  "rows per block for async (default 128; 256 on the gpu backend,\n"
                                  "tuned on an H100: docs/gpu-sparse.md)"));
    hr_flags_add(&fs, hr_flag_custom("tau", o, NULL, parse_tau, "auto|VALUE",
                                     "jacobi: x += tau D^-1 (b - A x); auto: 2/(lambda_1 + lambda_n)\n"
                                     "of D^-1 A. Without --tau, plain Jacobi is refused when rho(B) >= 1;\n"
                                     "--tau 1 forces it"));
    hr_flags_add(&fs, hr_flag_custom("fault", a, NULL, parse_fault_flag, "FRACTION@ITER[:recover=R]",
                                     "from global iteration ITER a random FRACTION of the components\n"
                                     "is no longer updated; with recover=R again after R iterations\n"
                                     "(jacobi, gs, gs-mc, async; Anzt et al. section 4.5)"));
    hr_flags_add(&fs, hr_flag_int("gpus", &o->gpus, 1, 64, "N",
                                  "gpu async: split the rows over N GPUs (Anzt et al. section 3.4)"));
    hr_flags_add(&fs, hr_flag_choice("comm", HR_ENUM_TARGET(&o->comm), comms,
                                     "gpu async: exchange x through host memory (amc, default for\n"
                                     "N > 1), peer copies to/from GPU 0 (dc) or direct peer access (dk)"));
    hr_flags_find(&fs, "comm")->metavar = "amc|dc|dk";
    hr_flags_group(&fs, "stopping");
    hr_flags_iteration(&fs, NULL, &o->tol, &o->check_every, NULL, &o->divtol);
    hr_flags_set_help(&fs, "tol", "stop when the relative residual < X (default 1e-10; 0: never)");
    hr_flags_add(&fs, hr_flag_long("max-iters", &o->max_iters, 0, 1000000000L, "N",
                                   "global iterations at most (default 10000)"));
    hr_flags_set_help(&fs, "check", "residual check interval (default 1)");
    hr_flags_set_help(&fs, "divtol",
                      "diverged when the residual grows above X times the initial one\n(default 1e4)");
    hr_flags_group(&fs, "output");
    hr_flags_iteration(&fs, NULL, NULL, NULL, &o->monitor_every, NULL);
    hr_flags_set_help(&fs, "monitor", "print the residual every K iterations (default 10; 0: off)");
    hr_flags_add(&fs, hr_flag_switch("analyze", &a->analyze, 1,
                                     "estimate rho(B), rho(|B|) of B = I - D^-1 A and print them"));
    hr_flags_output(&fs, &a->json, &a->output, NULL, NULL, NULL);
    hr_flags_set_help(&fs, "output", "write x as a Matrix Market array");
    hr_flags_add(&fs, hr_flag_switch("keep-diverged", &a->keep_diverged, 1, HR_CLI_KEEP_DIVERGED_HELP));
    hr_flags_add(&fs, hr_flag_switch("list-methods", &a->list, 1, "list methods and backends"));
    hr_flags_output(&fs, NULL, NULL, &a->quiet, NULL, NULL);
    static hr_tuning_flags tf;
    hr_flags_tuning(&fs, &tf, &a->o.tuning, NULL);
    int rc = hr_flags_parse(&fs, argc, argv);
    if (rc) return rc;
    a->seed = (uint64_t)seed;
    a->block_given = hr_flags_seen(&fs, "block") > 0;
    a->threads_given = hr_flags_seen(&fs, "threads") + hr_flags_seen(&fs, "bind") > 0;
    if (!a->block_given && o->backend == HR_BACKEND_GPU) o->block = 256;
    if (a->list) return 0;
    if (!a->matrix == !a->gen)
        return hr_cli_usage_error(CMD, "--matrix", "give exactly one of --matrix FILE and --gen NAME:SIZE");
    const unsigned caps = hr_cli_entry_caps(HR_KIND_SPARSE, o->method);
    char names[128];
    if (a->fault && !(caps & HR_CAP_FAULTS))
        return hr_cli_usage_error(
            CMD, "--fault", "not defined for %s (%s)", o->method,
            hr_cli_entry_join(HR_KIND_SPARSE, HR_CAP_FAULTS, ", ", names, sizeof names));
    if ((o->gpus > 1 || o->comm != HR_SPARSE_COMM_AUTO) &&
        (strcmp(o->method, "async") != 0 || o->backend != HR_BACKEND_GPU))
        return hr_cli_usage_error(CMD, o->gpus > 1 ? "--gpus" : "--comm",
                                  "only for --method async --backend gpu");
    if (o->tau != 0.0 && !(caps & HR_CAP_TAU))
        return hr_cli_usage_error(CMD, "--tau", "only for --method %s",
                                  hr_cli_entry_join(HR_KIND_SPARSE, HR_CAP_TAU, "|", names, sizeof names));
    return 0;
}

/* ones | zero | random | FILE into a new vector of length n. */
static int make_vector(const char *flag, const char *spec, int n, uint64_t seed, double **out)
{
    *out = NULL;
    const int is_x0 = strcmp(flag, "--x0") == 0;
    if (strcmp(spec, "ones") == 0 || (is_x0 && strcmp(spec, "zero") == 0) || strcmp(spec, "random") == 0) {
        double *v = malloc((size_t)n * sizeof *v);
        if (!v) return hr_cli_usage_error(CMD, flag, "out of memory for %d values", n);
        uint64_t s = seed + (is_x0 ? 7919 : 0); /* rhs and x0 differ for one seed */
        for (int i = 0; i < n; i++)
            v[i] = spec[0] == 'o' ? 1.0 : spec[0] == 'z' ? 0.0 : 2.0 * hr_uniform01(&s) - 1.0;
        *out = v;
        return 0;
    }
    hr_mm_error e;
    int len = 0;
    hr_status st = hr_mm_read_vector(spec, out, &len, &e);
    if (st != HR_OK) {
        if (e.line > 0) return hr_cli_usage_error(CMD, flag, "%s:%ld: %s", spec, e.line, e.msg);
        return hr_cli_usage_error(CMD, flag, "%s: %s", spec, e.msg[0] ? e.msg : hr_status_string(st));
    }
    if (len != n) {
        free(*out);
        *out = NULL;
        return hr_cli_usage_error(CMD, flag, "%s has %d values, the matrix has %d rows", spec, len, n);
    }
    return 0;
}

static int monitor_cb(long it, double res, void *user)
{
    history *h = user;
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        long *ni = realloc(h->it, cap * sizeof *ni);
        if (ni) h->it = ni;
        double *nr = realloc(h->res, cap * sizeof *nr);
        if (nr) h->res = nr;
        if (!ni || !nr) return 0; /* history is best effort; the run goes on */
        h->cap = cap;
    }
    h->it[h->len] = it;
    h->res[h->len++] = res;
    if (h->print) {
        fprintf(hout, "  iteration %8ld   %s %.6e\n", it, hr_cli_residual_label(h->absolute), res);
        fflush(hout);
    }
    return 0;
}

/* What write_vec writes: x as a Matrix Market array. */
typedef struct vec_src {
    const double *x;
    int n;
    const char *note;
} vec_src;

/* x into the temporary file tmp; 0 or an errno value (an hr_cli_writer). */
static int write_vec(const char *tmp, void *ctx)
{
    const vec_src *v = ctx;
    errno = 0;
    return hr_mm_write_vector(tmp, v->x, v->n, v->note) == HR_OK ? 0 : errno ? errno : EIO;
}

static const char *method_label(const hr_sparse_options *o, char *buf, size_t size)
{
    if (strcmp(o->method, "async") == 0)
        snprintf(buf, size, "async-(%d), block %d", o->local_iters, o->block);
    else
        snprintf(buf, size, "%s", o->method);
    return buf;
}

static json_object *to_json(const sp_args *a, const hr_csr *A, const hr_sparse_result *r,
                            const hr_spectral *sp, int threads, const history *h, const char *source)
{
    const hr_sparse_options *o = &a->o;
    json_object *j = json_object_new_object();
    char date[32];
    hr_cli_date(date, sizeof date);
    json_object_object_add(j, "command", json_object_new_string("sparse"));
    json_object_object_add(j, "matrix", hr_json_text(source));
    json_object_object_add(j, "n", json_object_new_int64(A->n_rows));
    json_object_object_add(j, "nnz", json_object_new_int64(A->nnz));
    json_object_object_add(j, "method", json_object_new_string(o->method));
    json_object_object_add(j, "backend", json_object_new_string(r->backend));
    json_object_object_add(j, "threads", json_object_new_int(threads));
    if (strcmp(r->backend, "gpu") == 0) {
        static const char *const comm[] = {"none", "amc", "dc", "dk"};
        char dev[96] = "";
        hr_gpu_name(o->device, dev, sizeof dev);
        json_object_object_add(j, "device", hr_json_text(dev));
        json_object_object_add(j, "gpus", json_object_new_int(o->gpus > 1 ? o->gpus : 1));
        json_object_object_add(
            j, "comm",
            json_object_new_string(o->comm == HR_SPARSE_COMM_AUTO && o->gpus > 1 ? "amc" : comm[o->comm]));
    }
    if (strcmp(o->method, "async") == 0) {
        json_object_object_add(j, "local_iters", json_object_new_int(o->local_iters));
        json_object_object_add(j, "block", json_object_new_int(o->block));
    }
    if (hr_cli_entry_caps(HR_KIND_SPARSE, o->method) & HR_CAP_TAU)
        json_object_object_add(j, "tau", hr_json_number(r->tau));
    if (r->colors > 0) json_object_object_add(j, "colors", json_object_new_int(r->colors));
    json_object_object_add(j, "rhs", hr_json_text(a->rhs));
    json_object_object_add(j, "tol", json_object_new_double(o->tol));
    json_object_object_add(j, "max_iters", json_object_new_int64(o->max_iters));
    json_object_object_add(j, "check_every", json_object_new_int64(o->check_every));
    json_object_object_add(j, "iterations", json_object_new_int64(r->iterations));
    json_object_object_add(j, "time_s", json_object_new_double(r->time_s));
    json_object_object_add(j, "time_iter_s", json_object_new_double(r->time_iter_s));
    json_object_object_add(j, "time_per_iter_s", json_object_new_double(r->time_per_iter_s));
    json_object_object_add(j, "time_setup_s", json_object_new_double(r->time_setup_s));
    json_object_object_add(j, "initial_residual", hr_json_number(r->initial_residual));
    json_object_object_add(j, "relative_residual", hr_json_number(r->relative_residual));
    json_object_object_add(j, "converged", json_object_new_boolean(r->reason == HR_REASON_CONVERGED));
    if (h->absolute) json_object_object_add(j, "residual_absolute", json_object_new_boolean(1));
    json_object_object_add(j, "reason", json_object_new_string(hr_reason_string(r->reason)));
    if (sp) {
        json_object_object_add(j, "rho_B", hr_json_number(sp->rho_B));
        json_object_object_add(j, "rho_absB", hr_json_number(sp->rho_absB));
        json_object_object_add(j, "lambda_min", hr_json_number(sp->lambda_min));
        json_object_object_add(j, "lambda_max", hr_json_number(sp->lambda_max));
        json_object_object_add(j, "spectral_steps", json_object_new_int(sp->steps));
    }
    if (o->fault_fraction > 0.0) {
        json_object *f = json_object_new_object();
        json_object_object_add(f, "fraction", json_object_new_double(o->fault_fraction));
        json_object_object_add(f, "iteration", json_object_new_int64(o->fault_iter));
        json_object_object_add(f, "recover",
                               o->fault_recover >= 0 ? json_object_new_int64(o->fault_recover) : NULL);
        json_object_object_add(f, "components", json_object_new_int64(r->faulty_components));
        json_object_object_add(j, "fault", f);
    }
    json_object *hist = json_object_new_array();
    for (size_t i = 0; i < h->len; i++) {
        json_object *e = json_object_new_array();
        json_object_array_add(e, json_object_new_int64(h->it[i]));
        json_object_array_add(e, hr_json_number(h->res[i]));
        json_object_array_add(hist, e);
    }
    json_object_object_add(j, "history", hist);
    json_object_object_add(j, "tuning", hr_tuning_json(&o->tuning));
    json_object_object_add(j, "commit", json_object_new_string(hr_cli_commit()));
    json_object_object_add(j, "date", json_object_new_string(date));
    return j;
}

static int load_matrix(const sp_args *a, hr_csr **A)
{
    if (a->gen) {
        char why[256] = "";
        hr_status st = hr_sparse_generate(a->gen, A, why, sizeof why);
        if (st != HR_OK) return hr_cli_usage_error(CMD, "--gen", "%s", why[0] ? why : hr_status_string(st));
        return 0;
    }
    hr_mm_error e;
    hr_status st = hr_mm_read_csr(a->matrix, A, &e);
    if (st == HR_OK) return 0;
    if (e.line > 0) return hr_cli_usage_error(CMD, "--matrix", "%s:%ld: %s", a->matrix, e.line, e.msg);
    return hr_cli_usage_error(CMD, "--matrix", "%s: %s", a->matrix, e.msg[0] ? e.msg : hr_status_string(st));
}

/* The gpu backend without the GPUs it needs: one line naming the flag, before any work
 * (the library says the same, but only after the matrix is built). */
static int check_gpus(const hr_sparse_options *o)
{
    if (o->backend != HR_BACKEND_GPU || !hri_entry_find(HR_KIND_SPARSE, HR_BACKEND_GPU, o->method, 0))
        return 0;
    hr_sysinfo si;
    memset(&si, 0, sizeof si);
    hr_sysinfo_get(&si);
    const int want = o->gpus > 1 ? o->gpus : 1;
    if (si.gpus <= o->device)
        return hr_cli_usage_error(CMD, "--backend", "gpu: no CUDA device %d (found %d)", o->device, si.gpus);
    if (o->device + want > si.gpus)
        return hr_cli_usage_error(CMD, "--gpus", "%d GPUs asked, %d present", want, si.gpus);
    return 0;
}

/* The flag a library message is about: it starts with the option's name ("divtol: ...");
 * else what it mentions. */
static const char *flag_of(const char *msg, hr_status st);

/* One line for a refusal of the library: the flag, and the message without the field name
 * that the flag repeats. */
static int library_refusal(const char *msg, hr_status st, const char *flag)
{
    if (!flag) flag = flag_of(msg, st);
    const size_t k = strlen(flag + 2);
    if (strncmp(msg, flag + 2, k) == 0 && msg[k] == ':') msg += k + 1 + (msg[k + 1] == ' ');
    return hr_cli_usage_error(CMD, flag, "%s", msg);
}

static const char *flag_of(const char *msg, hr_status st)
{
    static const struct {
        const char *prefix, *flag;
    } known[] = {{"tau", "--tau"},
                 {"gpus:", "--gpus"},
                 {"block:", "--block"},
                 {"divtol:", "--divtol"},
                 {"tol:", "--tol"},
                 {"check:", "--check"},
                 {"monitor:", "--monitor"},
                 {"max-iters:", "--max-iters"},
                 {"local-iters:", "--local-iters"},
                 {"threads:", "--threads"},
                 {"fault:", "--fault"},
                 {"backend:", "--backend"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strncmp(msg, known[i].prefix, strlen(known[i].prefix)) == 0) return known[i].flag;
    return st == HR_ERR_NO_DEVICE || strstr(msg, "backend") ? "--backend" : "--method";
}

/* The whole run's memory, before any of it is touched: generating (triplets and the CSR at
 * once), then solving (the CSR, b and x, the method's vectors, the spectral estimate), and
 * a GPU method's device memory. n and nnz: the matrix's (for --gen, before it is built).
 * `built`: A exists already (its bytes are used, not available). 0 or exit 2 (printed). */
static int check_memory(const sp_args *a, const char *flag, const char *source, int64_t n, int64_t nnz,
                        double gen_peak, int built, int want_spectral)
{
    const hr_entry *m = hri_entry_find(HR_KIND_SPARSE, a->o.backend, a->o.method, 0);
    const double csr = built ? 0.0 : hri_csr_bytes(n, nnz), vec = 16.0 * (double)n,
                 meth = m ? hri_sparse_solve_host_bytes(m, &a->o, n, nnz) : 0.0,
                 spec = want_spectral ? hri_sparse_spectral_bytes(n) : 0.0;
    const double solve = csr + vec + meth + spec, need = gen_peak > solve ? gen_peak : solve,
                 avail = (double)hr_available_memory();
    char b[2][32], parts[256];
    if (need > avail) {
        size_t len = 0;
        if (gen_peak > 0)
            len += (size_t)snprintf(parts + len, sizeof parts - len, "generating %s; ",
                                    hri_sparse_bytes_text(gen_peak, b[0], sizeof b[0]));
        len += (size_t)snprintf(parts + len, sizeof parts - len, "solving: ");
        if (csr > 0)
            len += (size_t)snprintf(parts + len, sizeof parts - len, "CSR %s + ",
                                    hri_sparse_bytes_text(csr, b[0], sizeof b[0]));
        len += (size_t)snprintf(parts + len, sizeof parts - len, "b and x %s + %s %s",
                                hri_sparse_bytes_text(vec, b[0], sizeof b[0]), a->o.method,
                                hri_sparse_bytes_text(meth, b[1], sizeof b[1]));
        if (spec > 0)
            snprintf(parts + len, sizeof parts - len, " + spectral estimate %s",
                     hri_sparse_bytes_text(spec, b[0], sizeof b[0]));
        return hr_cli_usage_error(
            CMD, flag, "'%s' (n = %lld, %lld entries): the run needs %s (%s), %s available", source,
            (long long)n, (long long)nnz, hri_sparse_bytes_text(need, b[0], sizeof b[0]), parts,
            hri_sparse_bytes_text(avail, b[1], sizeof b[1]));
    }
    size_t dfree = 0, dtotal = 0;
    const double dev = m ? hri_sparse_solve_device_bytes(m, &a->o, n, nnz) : 0.0;
    if (dev > 0.0 && hri_cuda_device_memory(a->o.device, &dfree, &dtotal) == HR_OK && dev > (double)dfree)
        return hr_cli_usage_error(
            CMD, "--backend",
            "gpu: '%s' (n = %lld, %lld entries) with %s needs about %s of device memory, "
            "%s free on device %d",
            source, (long long)n, (long long)nnz, a->o.method, hri_sparse_bytes_text(dev, b[0], sizeof b[0]),
            hri_sparse_bytes_text((double)dfree, b[1], sizeof b[1]), a->o.device);
    return 0;
}

/* Outputs, opened (as temporary files) before the matrix is read and the solve runs. */
static hr_atomic out_file, json_file;
static int out_open, json_open;

static int run(sp_args *a)
{
    hr_csr *A = NULL;
    hr_sparse_solver *solver = NULL;
    double *b = NULL, *x = NULL;
    history h = {0};
    int rc = check_gpus(&a->o);
    if (rc) return rc;
    const char *source = a->gen ? a->gen : a->matrix;
    const int want_spectral = a->analyze || strcmp(a->o.method, "async") == 0;
    if (a->gen) { /* the whole run, before the generator touches any of it */
        int64_t gn = 0, gnnz = 0;
        double peak = 0.0;
        char why[256] = "";
        if (hri_sparse_generate_size(a->gen, &gn, &gnnz, &peak, why, sizeof why) != HR_OK)
            return hr_cli_usage_error(CMD, "--gen", "%s", why);
        if ((rc = check_memory(a, "--gen", source, gn, gnnz, peak, 0, want_spectral)) != 0) return rc;
    }
    rc = load_matrix(a, &A);
    if (rc) return rc;
    /* a file's matrix is known now (the reader checked its own needs): the rest of the run */
    if (!a->gen && (rc = check_memory(a, "--matrix", source, A->n_rows, A->nnz, 0.0, 1, want_spectral)) != 0)
        goto out;
    int bad;
    if (A->n_rows != A->n_cols) {
        rc = hr_cli_usage_error(CMD, "--matrix", "%s is %d x %d: a solve needs a square matrix", source,
                                A->n_rows, A->n_cols);
        goto out;
    }
    if ((hr_cli_entry_caps(HR_KIND_SPARSE, a->o.method) & HR_CAP_NEEDS_DIAGONAL) &&
        hr_csr_check_diagonal(A, &bad) != HR_OK) {
        rc = hr_cli_usage_error(CMD, "--matrix",
                                "%s: row %d has a %s diagonal entry (--method %s divides by it)", source,
                                bad + 1, A->diag[bad] < 0 ? "missing" : "zero", a->o.method);
        goto out;
    }
    if ((rc = make_vector("--rhs", a->rhs, A->n_rows, a->seed, &b)) != 0) goto out;
    if ((rc = make_vector("--x0", a->x0, A->n_rows, a->seed, &x)) != 0) goto out;
    char label[64];
    int threads = a->o.threads;
    if (threads <= 0) {
        hr_sysinfo si;
        threads = hr_sysinfo_get(&si) == HR_OK && si.pus > 0 ? si.pus : 1;
    }

    /* the library's checks of the options and the matrix (and the method's setup) before
     * any line of the report: a refusal is one line */
    h.print = !a->quiet && a->o.monitor_every > 0;
    a->o.monitor = monitor_cb;
    a->o.monitor_user = &h;
    hr_sparse_result r;
    hr_status st = hr_sparse_solver_create(A, &a->o, &solver, &r);
    if (st != HR_OK) {
        if (st == HR_ERR_INVALID_ARG || st == HR_ERR_UNSUPPORTED || st == HR_ERR_NO_DEVICE ||
            st == HR_ERR_NO_MEMORY)
            rc = library_refusal(r.message, st,
                                 st == HR_ERR_NO_MEMORY ? (a->gen ? "--gen" : "--matrix") : NULL);
        else {
            fprintf(stderr, "hetrelax sparse: %s\n", r.message);
            rc = HR_EXIT_FAIL;
        }
        goto out;
    }
    fprintf(hout, "matrix    %s: n = %d, nnz = %lld\n", source, A->n_rows, (long long)A->nnz);
    hr_spectral sp, *spp = NULL;
    if (want_spectral && hr_csr_check_diagonal(A, NULL) == HR_OK) {
        hr_status st = hr_sparse_spectral(A, 0, &sp);
        if (st == HR_OK) {
            spp = &sp;
            if (a->analyze) {
                fprintf(hout, "analysis  rho(B) = %.4f, rho(|B|) = %.4f (B = I - D^-1 A; %s, %d steps)\n",
                        sp.rho_B, sp.rho_absB, sp.symmetric ? "Lanczos" : "power iteration", sp.steps);
                if (sp.symmetric)
                    fprintf(hout,
                            "          eig(D^-1 A) in [%.6g, %.6g], cond = %.4g, tau = 2/(l1+ln) = %.6g\n",
                            sp.lambda_min, sp.lambda_max, sp.lambda_max / sp.lambda_min, sp.tau);
                if (sp.rho_B >= 1.0)
                    fprintf(hout, "          rho(B) >= 1: Jacobi diverges; use --method jacobi --tau auto\n");
            }
            if (sp.rho_absB >= 1.0)
                fprintf(stderr,
                        "hetrelax sparse: warning: rho(|B|) = %.4f >= 1: asynchronous convergence is "
                        "not guaranteed\n",
                        sp.rho_absB);
        } else {
            fprintf(stderr, "hetrelax sparse: warning: spectral estimate failed: %s\n", hr_status_string(st));
        }
    } else if (a->analyze) {
        fprintf(stderr, "hetrelax sparse: warning: --analyze needs a non-zero diagonal\n");
    }
    fprintf(hout, "method    %s on %s", method_label(&a->o, label, sizeof label),
            a->o.backend == HR_BACKEND_AUTO ? "default backend" : hr_backend_name(a->o.backend));
    fprintf(hout, ", tol %g, at most %ld iterations\n", a->o.tol, a->o.max_iters);
    if (a->o.fault_fraction > 0.0) {
        fprintf(hout, "fault     %g of the components stop at iteration %ld, ", a->o.fault_fraction,
                a->o.fault_iter);
        if (a->o.fault_recover >= 0)
            fprintf(hout, "recovered after %ld iterations\n", a->o.fault_recover);
        else
            fprintf(hout, "never recovered\n");
    }

    h.absolute = 1; /* b = 0: ||b - A x|| is reported as it is */
    for (int i = 0; i < A->n_rows && h.absolute; i++)
        if (b[i] != 0.0) h.absolute = 0;
    st = hr_sparse_solver_solve(solver, b, x, &r);
    if (st != HR_OK && st != HR_ERR_DIVERGED) {
        if (st == HR_ERR_INVALID_ARG || st == HR_ERR_UNSUPPORTED || st == HR_ERR_NO_DEVICE)
            rc = library_refusal(r.message, st, NULL);
        else {
            fprintf(stderr, "hetrelax sparse: %s\n", r.message);
            rc = HR_EXIT_FAIL;
        }
        goto out;
    }
    if (r.warning[0]) fprintf(stderr, "hetrelax sparse: warning: %s\n", r.warning);
    if ((hr_cli_entry_caps(HR_KIND_SPARSE, a->o.method) & HR_CAP_TAU) && r.tau != 1.0)
        fprintf(hout, "          tau = %.6g\n", r.tau);
    if (r.colors > 0) fprintf(hout, "          %d colours (greedy colouring of A + A^T)\n", r.colors);
    if (strcmp(r.backend, "cpu-seq") == 0) threads = 1;
    if (a->threads_given && strcmp(r.backend, "cpu-threads") != 0) /* say so, not silently */
        fprintf(stderr, "hetrelax sparse: warning: --threads/--bind are ignored by backend %s\n", r.backend);
    const int status = hr_cli_run_status(r.reason, a->o.tol), diverged = status == HR_EXIT_FAIL;
    char outcome[64];
    if (status == HR_EXIT_NOT_CONVERGED)
        snprintf(outcome, sizeof outcome, "NOT converged (--tol %g not reached)", a->o.tol);
    else
        snprintf(outcome, sizeof outcome, "%s",
                 r.reason == HR_REASON_ITERS ? "not converged" : hr_reason_string(r.reason));
    fprintf(hout, "result    %s after %ld iterations on %s (%d thread%s): %s %.6e (recomputed)\n", outcome,
            r.iterations, r.backend, threads, threads == 1 ? "" : "s", hr_cli_residual_label(h.absolute),
            r.relative_residual);
    fprintf(hout, "time      %.6f s loop, %.6f s iterating, %.6e s per global iteration, %.6f s setup\n",
            r.time_s, r.time_iter_s, r.time_per_iter_s, r.time_setup_s);
    if (st == HR_ERR_DIVERGED || diverged)
        fprintf(stderr, "hetrelax sparse: %s%s\n", r.message[0] ? r.message : "the iteration diverged",
                (out_open || json_open) && !a->keep_diverged
                    ? ": no output written (--keep-diverged keeps the diverged state)"
                    : "");
    else if (status == HR_EXIT_NOT_CONVERGED)
        hr_cli_not_converged(CMD, r.iterations, "iterations", r.relative_residual, h.absolute, a->o.tol,
                             "raise --max-iters");
    char note[128];
    snprintf(note, sizeof note, "hetrelax sparse %s, %s: solution x", source, label);
    vec_src vs = {x, A->n_rows, note};
    json_object *j = a->json ? to_json(a, A, &r, a->analyze ? spp : NULL, threads, &h, source) : NULL;
    rc = status;
    if (diverged || st == HR_ERR_DIVERGED) {
        /* nothing replaced; the diverged state only where it was asked for (a name that says so) */
        rc = HR_EXIT_FAIL;
        if (out_open) hr_atomic_abort(&out_file);
        if (json_open) hr_atomic_abort(&json_file);
        out_open = json_open = 0;
        if (a->keep_diverged &&
            hr_cli_keep_diverged(CMD, a->output, write_vec, &vs, a->json, j, a->quiet, hout) != 0)
            rc = HR_EXIT_FAIL;
        if (j && strcmp(a->json, "-") == 0) hr_cli_write_json_to(CMD, NULL, j);
        json_object_put(j);
        goto out;
    }
    if (a->output) {
        out_open = 0;
        if (hr_cli_close_output(CMD, "--output", &out_file, write_vec(out_file.tmp, &vs)) != 0) {
            rc = HR_EXIT_FAIL;
            json_object_put(j);
            goto out;
        }
    }
    if (j) {
        const int jr = hr_cli_write_json_to(CMD, json_open ? &json_file : NULL, j);
        json_open = 0;
        json_object_put(j);
        if (jr) rc = jr;
    }
out:
    hr_sparse_solver_free(solver);
    hr_csr_free(A);
    free(b);
    free(x);
    free(h.it);
    free(h.res);
    return rc;
}

int hr_cmd_sparse(int argc, char **argv)
{
    sp_args a;
    memset(&a, 0, sizeof a);
    hr_sparse_options_default(&a.o);
    a.o.tol = 1e-10;
    a.o.max_iters = 10000;
    a.o.monitor_every = 10;
    a.o.monitor_deferred = 1; /* monitor_cb records and prints, never stops a run */
    a.rhs = "ones";
    a.x0 = "zero";
    a.seed = 1;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? HR_EXIT_OK : rc;
    if (a.list) return list_methods();
    hout = (a.json && strcmp(a.json, "-") == 0) ? stderr : stdout;
    if (a.output) {
        if ((rc = hr_cli_open_output(CMD, "--output", a.output, &out_file)) != 0) return rc;
        out_open = 1;
    }
    if (a.json && strcmp(a.json, "-") != 0) {
        if ((rc = hr_cli_open_output(CMD, "--json", a.json, &json_file)) == 0) json_open = 1;
    }
    if (rc == 0) rc = run(&a);
    if (out_open) hr_atomic_abort(&out_file);
    if (json_open) hr_atomic_abort(&json_file);
    return rc;
}
