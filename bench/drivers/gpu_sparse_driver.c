/*
 * gpu_sparse_driver: many sparse solves in one process, for the issue-6 experiments
 * (1000 runs of the run-to-run variation would otherwise pay a process start and a
 * CUDA context each). Reads jobs from stdin, one a line, as key=value words:
 *
 *   gen=fv2d:99 method=async backend=gpu K=5 block=128 tol=0 maxit=100 monitor=5
 *   repeat=1000 streams=4 fault=0.25@10:recover=20 gpus=2 comm=amc tau=auto
 *   threads=16 label=NAME handle=1 check=1 deferred=1
 *
 * deferred=1 marks the monitor as observing only (options.monitor_deferred): with
 * checks on the device its points then come from the device's history after each call.
 * handle=1 solves the repeats through one hr_sparse_solver (setup paid once: its
 * time_setup_s is the handle's setup on run 0 and only the upload of b and x0 after).
 * and prints one JSON object a line per solve: the job, the result, the device and,
 * with monitor=M > 0, the residual history [[iteration, residual], ...] (checked on
 * the host every M global iterations, which joins the GPU streams there). rhs = ones,
 * x0 = zero, as the CLI's defaults. Exit status 1 when a job fails to parse or solve.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrelax/sparse.h"
#include "tuning_env.h"

typedef struct hist {
    long *it;
    double *res;
    size_t len, cap;
} hist;

/* The HETRELAX_* variables onto the knobs, as the command maps them (the library reads no
 * environment): the benchmark scripts pick variants with them. */
static void tuning_from_env(hr_tuning *t)
{
    char err[256];
    if (hri_tuning_from_env(t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
}

static int record(long it, double res, void *user)
{
    hist *h = user;
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 256;
        long *ni = realloc(h->it, cap * sizeof *ni);
        double *nr = ni ? realloc(h->res, cap * sizeof *nr) : NULL;
        if (ni) h->it = ni;
        if (nr) h->res = nr;
        if (!ni || !nr) return 0;
        h->cap = cap;
    }
    h->it[h->len] = it;
    h->res[h->len++] = res;
    return 0;
}

static void json_num(double v)
{
    if (v != v || v > 1e308 || v < -1e308)
        printf("null");
    else
        printf("%.9g", v);
}

typedef struct job {
    char gen[128], method[16], backend[16], label[64], comm[8], fault[64];
    int K, block, gpus, streams, threads, repeat, handle, deferred;
    long maxit, monitor, check;
    double tol, tau;
} job;

static int parse_job(char *line, job *j)
{
    memset(j, 0, sizeof *j);
    snprintf(j->method, sizeof j->method, "jacobi");
    snprintf(j->backend, sizeof j->backend, "gpu");
    snprintf(j->comm, sizeof j->comm, "auto");
    j->K = 5, j->block = 128, j->repeat = 1, j->maxit = 1000, j->check = 1, j->tol = 1e-10;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        char *eq = strchr(tok, '=');
        if (!eq) return fprintf(stderr, "driver: '%s' is not key=value\n", tok), 1;
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        if (!strcmp(k, "gen"))
            snprintf(j->gen, sizeof j->gen, "%s", v);
        else if (!strcmp(k, "method"))
            snprintf(j->method, sizeof j->method, "%s", v);
        else if (!strcmp(k, "backend"))
            snprintf(j->backend, sizeof j->backend, "%s", v);
        else if (!strcmp(k, "label"))
            snprintf(j->label, sizeof j->label, "%s", v);
        else if (!strcmp(k, "comm"))
            snprintf(j->comm, sizeof j->comm, "%s", v);
        else if (!strcmp(k, "fault"))
            snprintf(j->fault, sizeof j->fault, "%s", v);
        else if (!strcmp(k, "K"))
            j->K = atoi(v);
        else if (!strcmp(k, "block"))
            j->block = atoi(v);
        else if (!strcmp(k, "gpus"))
            j->gpus = atoi(v);
        else if (!strcmp(k, "streams"))
            j->streams = atoi(v);
        else if (!strcmp(k, "threads"))
            j->threads = atoi(v);
        else if (!strcmp(k, "repeat"))
            j->repeat = atoi(v);
        else if (!strcmp(k, "handle"))
            j->handle = atoi(v);
        else if (!strcmp(k, "deferred"))
            j->deferred = atoi(v);
        else if (!strcmp(k, "maxit"))
            j->maxit = atol(v);
        else if (!strcmp(k, "monitor"))
            j->monitor = atol(v);
        else if (!strcmp(k, "check"))
            j->check = atol(v);
        else if (!strcmp(k, "tol"))
            j->tol = atof(v);
        else if (!strcmp(k, "tau"))
            j->tau = !strcmp(v, "auto") ? HR_SPARSE_TAU_AUTO : atof(v);
        else
            return fprintf(stderr, "driver: unknown key '%s'\n", k), 1;
    }
    if (!j->gen[0]) return fprintf(stderr, "driver: a job needs gen=SPEC\n"), 1;
    return 0;
}

static int parse_fault(const char *s, hr_sparse_options *o)
{
    double f;
    long it, rec = -1;
    if (sscanf(s, "%lf@%ld:recover=%ld", &f, &it, &rec) < 2) return 1;
    o->fault_fraction = f, o->fault_iter = it, o->fault_recover = rec;
    return 0;
}

int main(void)
{
    char line[1024], cur_gen[128] = "", why[256];
    hr_csr *A = NULL;
    double *b = NULL, *x = NULL;
    int rc = 0;
    char gpu[96] = "";
    hr_gpu_name(0, gpu, sizeof gpu);
    hr_sysinfo si;
    memset(&si, 0, sizeof si);
    hr_sysinfo_get(&si);
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0') continue;
        job j;
        if (parse_job(line, &j)) {
            printf("{\"error\":\"bad job line\"}\n");
            fflush(stdout);
            rc = 1;
            continue;
        }
        if (strcmp(j.gen, cur_gen) != 0) {
            hr_csr_free(A), free(b), free(x);
            A = NULL, b = x = NULL;
            cur_gen[0] = '\0';
            if (hr_sparse_generate(j.gen, &A, why, sizeof why) != HR_OK) {
                fprintf(stderr, "driver: gen=%s: %s\n", j.gen, why);
                printf("{\"error\":\"bad gen\"}\n");
                fflush(stdout);
                rc = 1;
                continue;
            }
            b = malloc((size_t)A->n_rows * sizeof *b);
            x = malloc((size_t)A->n_rows * sizeof *x);
            if (!b || !x) return fprintf(stderr, "driver: out of memory\n"), 1;
            for (int i = 0; i < A->n_rows; i++)
                b[i] = 1.0;
            snprintf(cur_gen, sizeof cur_gen, "%s", j.gen);
        }
        hr_sparse_options o;
        hr_sparse_options_default(&o);
        tuning_from_env(&o.tuning);
        if (j.streams > 0) o.tuning.sparse_streams = j.streams; /* a job's own streams win */
        o.method = j.method;
        o.backend = !strcmp(j.backend, "gpu")       ? HR_BACKEND_GPU
                    : !strcmp(j.backend, "cpu-seq") ? HR_BACKEND_CPU_SEQ
                                                    : HR_BACKEND_CPU_THREADS;
        o.local_iters = j.K, o.block = j.block, o.tol = j.tol, o.max_iters = j.maxit;
        o.check_every = j.check, o.threads = j.threads, o.tau = j.tau, o.gpus = j.gpus;
        o.comm = !strcmp(j.comm, "amc")  ? HR_SPARSE_COMM_AMC
                 : !strcmp(j.comm, "dc") ? HR_SPARSE_COMM_DC
                 : !strcmp(j.comm, "dk") ? HR_SPARSE_COMM_DK
                                         : HR_SPARSE_COMM_AUTO;
        if (j.fault[0] && parse_fault(j.fault, &o)) {
            fprintf(stderr, "driver: fault=%s: expected F@I[:recover=R]\n", j.fault);
            printf("{\"error\":\"bad fault\"}\n");
            fflush(stdout);
            rc = 1;
            continue;
        }
        hist h = {0};
        o.monitor = j.monitor > 0 ? record : NULL;
        o.monitor_every = j.monitor;
        o.monitor_user = &h;
        o.monitor_deferred = j.deferred;
        hr_sparse_solver *hs = NULL;
        hr_sparse_result cr;
        memset(&cr, 0, sizeof cr);
        hr_status cst = j.handle ? hr_sparse_solver_create(A, &o, &hs, &cr) : HR_OK;
        for (int run = 0; run < (j.repeat > 0 ? j.repeat : 1); run++) {
            h.len = 0;
            memset(x, 0, (size_t)A->n_rows * sizeof *x);
            hr_sparse_result r = cr;
            hr_status st = cst != HR_OK ? cst
                           : hs         ? hr_sparse_solver_solve(hs, b, x, &r)
                                        : hr_sparse_solve(A, b, x, &o, &r);
            printf("{\"label\":\"%s\",\"matrix\":\"%s\",\"n\":%d,\"nnz\":%lld,\"method\":\"%s\",\"backend\":"
                   "\"%s\"",
                   j.label, j.gen, A->n_rows, (long long)A->nnz, j.method,
                   r.backend[0] ? r.backend : j.backend);
            printf(",\"device\":\"%s\",\"K\":%d,\"block\":%d,\"gpus\":%d,\"comm\":\"%s\",\"streams\":%d",
                   o.backend == HR_BACKEND_GPU ? gpu : si.cpu_model, j.K, j.block, j.gpus > 1 ? j.gpus : 1,
                   j.comm, j.streams);
            printf(",\"run\":%d,\"status\":\"%s\",\"iterations\":%ld,\"reason\":\"%s\"", run,
                   hr_status_string(st), r.iterations, hr_reason_string(r.reason));
            printf(",\"time_s\":");
            json_num(r.time_s);
            printf(",\"time_iter_s\":");
            json_num(r.time_iter_s);
            printf(",\"time_setup_s\":");
            json_num(r.time_setup_s);
            printf(",\"initial_residual\":");
            json_num(r.initial_residual);
            printf(",\"residual\":");
            json_num(r.relative_residual);
            printf(",\"faulty\":%ld,\"fault\":\"%s\",\"tol\":%g,\"maxit\":%ld", r.faulty_components, j.fault,
                   j.tol, j.maxit);
            if (st != HR_OK && st != HR_ERR_DIVERGED) {
                char msg[256];
                snprintf(msg, sizeof msg, "%s", r.message);
                for (char *p = msg; *p; p++)
                    if (*p == '"' || *p == '\\') *p = '\'';
                printf(",\"error\":\"%s\"", msg);
                rc = 1;
            }
            printf(",\"history\":[");
            for (size_t i = 0; i < h.len; i++) {
                printf("%s[%ld,", i ? "," : "", h.it[i]);
                json_num(h.res[i]);
                printf("]");
            }
            printf("]}\n");
            fflush(stdout);
            if (st != HR_OK && st != HR_ERR_DIVERGED) break;
        }
        hr_sparse_solver_free(hs);
        free(h.it), free(h.res);
    }
    hr_csr_free(A), free(b), free(x);
    return rc;
}
