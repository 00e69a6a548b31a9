#include "cli_flags.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mpi_glue.h"

void hr_flags_init(hr_flagset *fs, const char *cmd, const char *usage, const char *intro, const char *epilog)
{
    memset(fs, 0, sizeof *fs);
    fs->cmd = cmd;
    fs->usage = usage;
    fs->intro = intro;
    fs->epilog = epilog;
}

void hr_flags_group(hr_flagset *fs, const char *title)
{
    fs->group = title;
}

hr_flag *hr_flags_add(hr_flagset *fs, hr_flag f)
{
    /* a table larger than HR_FLAGS_MAX is a programming error, caught by every test run */
    if (fs->count >= HR_FLAGS_MAX) abort();
    f.group = fs->group;
    f.seen = 0;
    fs->flags[fs->count] = f;
    return &fs->flags[fs->count++];
}

hr_flag *hr_flags_find(hr_flagset *fs, const char *name)
{
    for (int i = 0; i < fs->count; i++)
        if (strcmp(fs->flags[i].name, name) == 0) return &fs->flags[i];
    return NULL;
}

void hr_flags_set_help(hr_flagset *fs, const char *name, const char *help)
{
    hr_flag *f = hr_flags_find(fs, name);
    if (f) f->help = help;
}

int hr_flags_seen(const hr_flagset *fs, const char *name)
{
    for (int i = 0; i < fs->count; i++)
        if (strcmp(fs->flags[i].name, name) == 0) return fs->flags[i].seen;
    return 0;
}

int hr_flag_error(const char *cmd, const hr_flag *f, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hetrelax %s: --%s: ", cmd, f->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return HR_EXIT_USAGE;
}

/* ------------------------------------------------------------------ entries */

static hr_flag entry(const char *name, hr_flag_kind kind, void *t, const char *metavar, const char *help)
{
    hr_flag f;
    memset(&f, 0, sizeof f);
    f.name = name;
    f.kind = kind;
    f.target = t;
    f.metavar = metavar;
    f.help = help;
    return f;
}

hr_flag hr_flag_int(const char *name, int *t, long lo, long hi, const char *metavar, const char *help)
{
    hr_flag f = entry(name, HR_FLAG_INT, t, metavar, help);
    f.lo = (double)lo;
    f.hi = (double)hi;
    return f;
}

hr_flag hr_flag_long(const char *name, long *t, long lo, long hi, const char *metavar, const char *help)
{
    hr_flag f = entry(name, HR_FLAG_LONG, t, metavar, help);
    f.lo = (double)lo;
    f.hi = (double)hi;
    return f;
}

hr_flag hr_flag_double(const char *name, double *t, double lo, double hi, const char *metavar,
                       const char *help)
{
    hr_flag f = entry(name, HR_FLAG_DOUBLE, t, metavar, help);
    f.lo = lo;
    f.hi = hi;
    return f;
}

hr_flag hr_flag_choice(const char *name, int *t, const char *const *choices, const char *help)
{
    hr_flag f = entry(name, HR_FLAG_CHOICE, t, NULL, help);
    f.choices = choices;
    return f;
}

hr_flag hr_flag_string(const char *name, const char **t, const char *metavar, const char *help)
{
    return entry(name, HR_FLAG_STRING, (void *)t, metavar, help);
}

hr_flag hr_flag_switch(const char *name, int *t, int value, const char *help)
{
    hr_flag f = entry(name, HR_FLAG_SWITCH, t, NULL, help);
    f.value = value;
    return f;
}

hr_flag hr_flag_custom(const char *name, void *t, void *t2, hr_flag_parse_fn fn, const char *metavar,
                       const char *help)
{
    hr_flag f = entry(name, HR_FLAG_CUSTOM, t, metavar, help);
    f.target2 = t2;
    f.parse = fn;
    return f;
}

/* -------------------------------------------------------------------- parse */

static int apply(const char *cmd, hr_flag *f, const char *arg)
{
    char flag[72];
    snprintf(flag, sizeof flag, "--%s", f->name);
    f->seen++;
    switch (f->kind) {
    case HR_FLAG_INT: return hr_cli_int(cmd, flag, arg, (long)f->lo, (long)f->hi, f->target);
    case HR_FLAG_LONG: return hr_cli_long(cmd, flag, arg, (long)f->lo, (long)f->hi, f->target);
    case HR_FLAG_DOUBLE: return hr_cli_double(cmd, flag, arg, f->lo, f->hi, f->target);
    case HR_FLAG_CHOICE: return hr_cli_choice(cmd, flag, arg, f->choices, f->target);
    case HR_FLAG_STRING: *(const char **)f->target = arg; return 0;
    case HR_FLAG_SWITCH: *(int *)f->target = f->value; return 0;
    case HR_FLAG_CUSTOM: return f->parse(cmd, f, arg);
    }
    return 0;
}

static int parse_args(hr_flagset *fs, int argc, char **argv)
{
    /* option values 256 + index keep clear of the short option 'h' */
    struct option opts[HR_FLAGS_MAX + 2];
    int k = 0;
    for (int i = 0; i < fs->count; i++, k++) {
        opts[k].name = fs->flags[i].name;
        opts[k].has_arg = fs->flags[i].kind == HR_FLAG_SWITCH ? no_argument : required_argument;
        opts[k].flag = NULL;
        opts[k].val = 256 + i;
    }
    opts[k++] = (struct option){"help", no_argument, NULL, 'h'};
    opts[k] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            hr_cli_listing_output();
            hr_flags_help(fs, stdout);
            return -1;
        }
        if (c == ':') return hr_cli_usage_error(fs->cmd, argv[optind - 1], "missing value");
        if (c < 256 || c >= 256 + fs->count)
            return hr_cli_usage_error(fs->cmd, argv[optind - 1], "unknown option (see --help)");
        int rc = apply(fs->cmd, &fs->flags[c - 256], optarg);
        if (rc) return rc;
    }
    if (optind < argc) return hr_cli_usage_error(fs->cmd, NULL, "unexpected argument '%s'", argv[optind]);
    return 0;
}

int hr_flags_parse(hr_flagset *fs, int argc, char **argv)
{
    /* under MPI every rank agrees here, whatever it parsed, before anything else collective */
    int rc = parse_args(fs, argc, argv);
    if (rc == 0 && fs->after) rc = fs->after(fs->after_ctx);
    return hr_mpi_cli_parsed(fs->cmd, rc);
}

/* --------------------------------------------------------------------- help */

enum { HELP_COL = 23 };

static void print_metavar(const hr_flag *f, char *buf, size_t size)
{
    buf[0] = '\0';
    if (f->kind == HR_FLAG_SWITCH) return;
    if (f->metavar) {
        snprintf(buf, size, " %s", f->metavar);
        return;
    }
    if (f->kind == HR_FLAG_CHOICE) {
        size_t len = 0;
        for (int i = 0; f->choices[i] && len + 1 < size; i++)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "|" : " ", f->choices[i]);
        return;
    }
    snprintf(buf, size, " %s", f->kind == HR_FLAG_STRING ? "S" : f->kind == HR_FLAG_DOUBLE ? "X" : "N");
}

void hr_flags_help(const hr_flagset *fs, FILE *out)
{
    fprintf(out, "usage: hetrelax %s\n", fs->usage);
    if (fs->intro) fprintf(out, "\n%s", fs->intro);
    const char *group = NULL;
    for (int i = 0; i < fs->count; i++) {
        const hr_flag *f = &fs->flags[i];
        if (i == 0 || (f->group && (!group || strcmp(f->group, group) != 0))) {
            fprintf(out, "\n");
            if (f->group) fprintf(out, "%s\n", f->group);
            group = f->group;
        }
        char meta[160];
        print_metavar(f, meta, sizeof meta);
        int width = fprintf(out, "  --%s%s", f->name, meta);
        const char *h = f->help ? f->help : "";
        if (width + 1 > HELP_COL - 1) {
            fprintf(out, "\n");
            width = 0;
        }
        fprintf(out, "%*s", HELP_COL - width, "");
        for (; *h; h++) {
            fputc(*h, out);
            if (*h == '\n') fprintf(out, "%*s", HELP_COL, "");
        }
        fputc('\n', out);
    }
    fprintf(out, "  --help               this text\n");
    if (fs->epilog) fprintf(out, "\n%s", fs->epilog);
}

/* ----------------------------------------------------------- shared groups */

int hr_parse_thread_grid(const char *s, int *rows, int *cols)
{
    /* digits only: strtol would take signs and blanks, sscanf("%d") overflows silently */
    long v[2] = {0, 0};
    const char *p = s;
    for (int k = 0; k < 2; k++) {
        int digits = 0;
        while (*p >= '0' && *p <= '9') {
            if (v[k] <= 4096) v[k] = 10 * v[k] + (*p - '0');
            p++;
            digits++;
        }
        if (!digits || v[k] < 1 || v[k] > 4096) return -1;
        if (k == 0 && *p++ != 'x') return -1;
    }
    if (*p) return -1;
    *rows = (int)v[0];
    *cols = (int)v[1];
    return 0;
}

static int parse_grid_flag(const char *cmd, const hr_flag *f, const char *arg)
{
    if (hr_parse_thread_grid(arg, f->target, f->target2) != 0)
        return hr_flag_error(cmd, f, "expected RxC with 1 <= R, C <= 4096, got '%s'", arg);
    return 0;
}

static int parse_bandwidth(const char *cmd, const hr_flag *f, const char *arg)
{
    char flag[72];
    snprintf(flag, sizeof flag, "--%s", f->name);
    int rc = hr_cli_double(cmd, flag, arg, 1e-6, 1e9, f->target);
    if (rc == 0 && f->target2) *(int *)f->target2 = 0; /* a given reference is not measured */
    return rc;
}

void hr_flags_placement(hr_flagset *fs, hr_backend *backend, const char **kernel, int *threads,
                        int *thread_rows, int *thread_cols, hr_bind *bind, int *device)
{
    static const char *const backends[] = {"auto", "cpu-seq", "cpu-threads", "gpu", NULL};
    static const char *const binds[] = {"none", "core", NULL};
    if (backend)
        hr_flags_add(fs, hr_flag_choice("backend", HR_ENUM_TARGET(backend), backends,
                                        "(default auto: gpu if present, else cpu-threads)"));
    if (kernel)
        hr_flags_add(fs,
                     hr_flag_string("kernel", kernel, "NAME",
                                    "kernel of the backend (see --list-kernels); with --method mg|cg, 'general' runs\nthe general-problem engine on the model problem too"));
    if (threads)
        hr_flags_add(fs,
                     hr_flag_int("threads", threads, 1, 4096, "P", "CPU threads (default: one per core)"));
    if (thread_rows && thread_cols)
        hr_flags_add(fs, hr_flag_custom("thread-grid", thread_rows, thread_cols, parse_grid_flag, "RxC",
                                        "CPU thread grid (default: as square as P allows)"));
    if (bind)
        hr_flags_add(fs, hr_flag_choice("bind", HR_ENUM_TARGET(bind), binds,
                                        "bind threads to cores with hwloc (default none)"));
    if (device) hr_flags_add(fs, hr_flag_int("device", device, 0, 1024, "D", "GPU ordinal (default 0)"));
}

void hr_flags_iteration(hr_flagset *fs, long *iters, double *tol, long *check, long *monitor, double *divtol)
{
    if (iters)
        hr_flags_add(fs, hr_flag_long("iters", iters, 0, 1000000000L, "T",
                                      "sweeps (the maximum when --tol is given; default 1000)"));
    if (tol)
        hr_flags_add(fs, hr_flag_double("tol", tol, 0.0, 1.0, "X",
                                        "stop when ||b - A u|| / ||b|| < X, checked every --check sweeps"));
    if (check)
        hr_flags_add(
            fs, hr_flag_long("check", check, 1, 1000000000L, "K", "residual check interval (default 100)"));
    if (monitor)
        hr_flags_add(fs, hr_flag_long("monitor", monitor, 0, 1000000000L, "K",
                                      "print the residual every K sweeps (default T/10; 0: off)"));
    if (divtol)
        hr_flags_add(fs, hr_flag_double("divtol", divtol, 1.0, 1e300, "X",
                                        "diverged when the residual grows above X times the initial one"));
}

void hr_flags_output(hr_flagset *fs, const char **json, const char **output, int *quiet, double *bandwidth,
                     int *measure)
{
    if (json) hr_flags_add(fs, hr_flag_string("json", json, "FILE|-", "write the run as a JSON object"));
    if (output) hr_flags_add(fs, hr_flag_string("output", output, "FILE", "write the solution"));
    if (bandwidth)
        hr_flags_add(fs, hr_flag_custom("bandwidth", bandwidth, measure, parse_bandwidth, "GBPS",
                                        "reference bandwidth for the fraction (default: measured now)"));
    if (measure)
        hr_flags_add(fs,
                     hr_flag_switch("no-bandwidth", measure, 0, "do not measure the reference bandwidth"));
    if (quiet) hr_flags_add(fs, hr_flag_switch("quiet", quiet, 1, "summary only"));
}
