#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int hr_cli_usage_error(const char *cmd, const char *flag, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hetrelax %s: %s%s", cmd, flag ? flag : "", flag ? ": " : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return HR_EXIT_USAGE;
}

int hr_cli_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    /* strict: strtol would also take leading blanks and a '+' */
    if (!s || !*s || *end || errno == ERANGE || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return hr_cli_usage_error(cmd, flag, "expected an integer, got '%s'", s ? s : "");
    if (v < lo || v > hi) return hr_cli_usage_error(cmd, flag, "%ld is out of range [%ld, %ld]", v, lo, hi);
    *out = v;
    return 0;
}

int hr_cli_int(const char *cmd, const char *flag, const char *s, long lo, long hi, int *out)
{
    long v = 0;
    int rc = hr_cli_long(cmd, flag, s, lo, hi, &v);
    if (rc == 0) *out = (int)v;
    return rc;
}

int hr_cli_double(const char *cmd, const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = s ? strtod(s, &end) : 0.0;
    if (!s || !*s || *end || errno == ERANGE || !isfinite(v) ||
        !(s[0] == '-' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9')))
        return hr_cli_usage_error(cmd, flag, "expected a finite number, got '%s'", s ? s : "");
    if (v < lo || v > hi) return hr_cli_usage_error(cmd, flag, "%g is out of range [%g, %g]", v, lo, hi);
    *out = v;
    return 0;
}

int hr_cli_choice(const char *cmd, const char *flag, const char *s, const char *const *names, int *out)
{
    for (int i = 0; names[i]; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (names[i + 1]) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    return hr_cli_usage_error(cmd, flag, "unknown value '%s' (expected %s)", s ? s : "", list);
}

/* One list per kind, filled on first use (the registry is fixed for the process). */
#define HR_CLI_MAX_NAMES 64
static const char *entry_names[HR_KIND_COUNT][HR_CLI_MAX_NAMES + 1];
static char entry_metavar[HR_KIND_COUNT][512];

const char *const *hr_cli_entry_names(hr_kind kind)
{
    if ((unsigned)kind >= HR_KIND_COUNT) return NULL;
    const char **names = entry_names[kind];
    if (names[0]) return names;
    int n = 0;
    hr_entry_info e;
    for (int i = 0; n < HR_CLI_MAX_NAMES && hr_registry_info_at(kind, i, &e) == HR_OK; i++) {
        int seen = 0;
        for (int q = 0; q < n && !seen; q++)
            seen = strcmp(names[q], e.name) == 0;
        if (!seen) names[n++] = e.name;
    }
    names[n] = NULL;
    return names;
}

const char *hr_cli_entry_metavar(hr_kind kind)
{
    const char *const *names = hr_cli_entry_names(kind);
    if (!names) return NULL;
    char *m = entry_metavar[kind];
    if (!m[0])
        for (size_t i = 0, len = 0; names[i] && len + 1 < sizeof entry_metavar[kind]; i++)
            len +=
                (size_t)snprintf(m + len, sizeof entry_metavar[kind] - len, "%s%s", i ? "|" : "", names[i]);
    return m;
}

const char *hr_cli_entry_join(hr_kind kind, unsigned need, const char *sep, char *buf, size_t size)
{
    const char *const *names = hr_cli_entry_names(kind);
    size_t len = 0;
    if (size) buf[0] = '\0';
    for (int i = 0; names && names[i] && len + 1 < size; i++)
        if ((hr_cli_entry_caps(kind, names[i]) & need) == need) {
            const int w = snprintf(buf + len, size - len, "%s%s", len ? sep : "", names[i]);
            len = w < 0 || len + (size_t)w >= size ? size - 1 : len + (size_t)w;
        }
    return buf;
}

unsigned hr_cli_entry_caps(hr_kind kind, const char *name)
{
    hr_entry_info e;
    return name && hr_registry_find(kind, HR_BACKEND_AUTO, name, 0, &e) == HR_OK ? e.caps : 0;
}

int hr_cli_entry(const char *cmd, const char *flag, const char *s, hr_kind kind, hr_entry_info *out)
{
    int i;
    const char *const *names = hr_cli_entry_names(kind);
    if (!names) return hr_cli_usage_error(cmd, flag, "unknown kind of name");
    if (hr_cli_choice(cmd, flag, s, names, &i)) return HR_EXIT_USAGE;
    if (hr_registry_find(kind, HR_BACKEND_AUTO, names[i], 0, out) != HR_OK)
        return hr_cli_usage_error(cmd, flag, "%s: not in the registry", s);
    return 0;
}

int hr_cli_open_output(const char *cmd, const char *flag, const char *path, hr_atomic *a)
{
    int e = hr_atomic_begin(a, path);
    if (e) return hr_cli_usage_error(cmd, flag, "cannot write '%s': %s", path, strerror(e));
    return 0;
}

int hr_cli_close_output(const char *cmd, const char *flag, hr_atomic *a, int write_errno)
{
    if (write_errno) {
        hr_atomic_abort(a);
        fprintf(stderr, "hetrelax %s: %s: cannot write '%s': %s (nothing written)\n", cmd, flag, a->path,
                strerror(write_errno));
        return HR_EXIT_FAIL;
    }
    int e = hr_atomic_commit(a);
    if (e) {
        fprintf(stderr, "hetrelax %s: %s: cannot write '%s': %s\n", cmd, flag, a->path, strerror(e));
        return HR_EXIT_FAIL;
    }
    return 0;
}

int hr_cli_run_status(hr_reason reason, double tol)
{
    if (reason == HR_REASON_DIVERGED || reason == HR_REASON_NAN) return HR_EXIT_FAIL;
    if (tol > 0.0 && (reason == HR_REASON_ITERS || reason == HR_REASON_STAGNATED))
        return HR_EXIT_NOT_CONVERGED;
    return HR_EXIT_OK;
}

const char *hr_cli_residual_label(int absolute)
{
    return absolute ? "residual (absolute, b = 0)" : "relative residual";
}

void hr_cli_not_converged(const char *cmd, long iterations, const char *what, double residual, int absolute,
                          double tol, const char *advice)
{
    fprintf(stderr, "hetrelax %s: NOT converged: %s %.6e after %ld %s, above --tol %g (%s; exit status %d)\n",
            cmd, hr_cli_residual_label(absolute), residual, iterations, what, tol, advice,
            HR_EXIT_NOT_CONVERGED);
}

const char *hr_cli_not_converged_advice(const char *limit, int single, double tol, const char *instead,
                                        char *buf, size_t size)
{
    if (single && tol < 1e-5)
        snprintf(buf, size, "raise %s; single precision stalls near 1e-6: %s", limit, instead);
    else
        snprintf(buf, size, "raise %s", limit);
    return buf;
}

int hr_cli_diverged_name(const char *cmd, const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) dot = base + strlen(base); /* no extension (or a dot file): append */
    const int n = snprintf(out, size, "%.*s.diverged%s", (int)(dot - path), path, dot);
    if (n < 0 || (size_t)n >= size) {
        fprintf(stderr, "hetrelax %s: --keep-diverged: the name for '%s' is too long\n", cmd, path);
        return HR_EXIT_FAIL;
    }
    return 0;
}

int hr_cli_keep_diverged(const char *cmd, const char *output, hr_cli_writer write, void *ctx,
                         const char *json, json_object *j, int quiet, FILE *out)
{
    char name[PATH_MAX];
    int rc = 0;
    if (output && write) {
        hr_atomic a;
        int e;
        if (hr_cli_diverged_name(cmd, output, name, sizeof name) != 0) {
            rc = HR_EXIT_FAIL;
        } else if ((e = hr_atomic_begin(&a, name)) != 0) {
            fprintf(stderr, "hetrelax %s: --keep-diverged: cannot write '%s': %s\n", cmd, name, strerror(e));
            rc = HR_EXIT_FAIL;
        } else if (hr_cli_close_output(cmd, "--output", &a, write(a.tmp, ctx)) != 0) {
            rc = HR_EXIT_FAIL;
        } else if (!quiet) {
            fprintf(out, "wrote     %s (the diverged state)\n", name);
        }
    }
    if (json && j && strcmp(json, "-") != 0) {
        if (hr_cli_diverged_name(cmd, json, name, sizeof name) != 0 || hr_cli_write_json(cmd, name, j) != 0)
            rc = HR_EXIT_FAIL;
        else if (!quiet)
            fprintf(out, "wrote     %s (the diverged run's record)\n", name);
    }
    return rc;
}

int hr_cli_write_json_to(const char *cmd, hr_atomic *a, json_object *obj)
{
    const char *text =
        json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!a) {
        /* a full or closed stdout must not pass for a written record */
        errno = 0;
        int ok = fprintf(stdout, "%s\n", text) >= 0;
        ok = fflush(stdout) == 0 && ok && !ferror(stdout);
        if (!ok) {
            fprintf(stderr, "hetrelax %s: --json: cannot write to standard output: %s\n", cmd,
                    errno ? strerror(errno) : "write error");
            return HR_EXIT_FAIL;
        }
        return 0;
    }
    errno = 0;
    FILE *f = fopen(a->tmp, "w");
    int err = f ? 0 : errno;
    if (f) {
        if (fprintf(f, "%s\n", text) < 0 || fflush(f) != 0 || ferror(f)) err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    }
    return hr_cli_close_output(cmd, "--json", a, err);
}

int hr_cli_write_json(const char *cmd, const char *path, json_object *obj)
{
    if (strcmp(path, "-") == 0) return hr_cli_write_json_to(cmd, NULL, obj);
    hr_atomic a;
    int e = hr_atomic_begin(&a, path);
    if (e) {
        fprintf(stderr, "hetrelax %s: --json: cannot write '%s': %s\n", cmd, path, strerror(e));
        return HR_EXIT_FAIL;
    }
    return hr_cli_write_json_to(cmd, &a, obj);
}

size_t hr_cli_available_bytes(void)
{
    return hr_available_memory();
}

const char *hr_cli_bytes(double bytes, char *buf, size_t size)
{
    if (bytes >= 1e9)
        snprintf(buf, size, "%.1f GB", bytes * 1e-9);
    else
        snprintf(buf, size, "%.1f MB", bytes * 1e-6);
    return buf;
}

static int listing;

void hr_cli_listing_output(void)
{
    listing = 1;
}

int hr_cli_is_listing(void)
{
    return listing;
}

static volatile sig_atomic_t deferring, pending;
static hr_solver *volatile stop_target;

static void on_signal(int sig)
{
    /* SIGINT, SIGTERM, SIGHUP: a checkpointing command saves its state and stops; any other
     * terminating signal ends the process as its default would, without temporary files */
    const int deferrable = sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
    if (deferrable && deferring && !pending) {
        pending = sig; /* the command checkpoints and exits at its next chance */
        hr_solver *s = stop_target;
        if (s) hr_solver_request_stop(s); /* async-signal-safe: stores one flag */
        return;
    }
    hr_atomic_cleanup_signal();
    signal(sig, SIG_DFL);
    raise(sig);
}

void hr_cli_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* every other signal whose default ends the process, where nobody (MPI, a sanitizer)
     * has claimed it: the handler removes the temporary files, then the default runs */
    static const int others[] = {SIGQUIT,   SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGABRT,
                                 SIGBUS,    SIGFPE,  SIGILL,  SIGSEGV, SIGSYS,    SIGTRAP, SIGIO,
#ifdef SIGPWR
                                 SIGPWR,
#endif
#ifdef SIGSTKFLT
                                 SIGSTKFLT,
#endif
                                 0};
    for (int i = 0; others[i]; i++) {
        struct sigaction old;
        if (sigaction(others[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO))
            sigaction(others[i], &sa, NULL);
    }
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
        struct sigaction old;
        if (sigaction(s, NULL, &old) == 0 && old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO))
            sigaction(s, &sa, NULL);
    }
    /* a file-size limit or a closed pipe becomes a write error we report, not a silent kill */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
}

void hr_cli_defer_signals(int on)
{
    deferring = on;
}

void hr_cli_stop_target(hr_solver *s)
{
    stop_target = s;
}

int hr_cli_signal_pending(void)
{
    return pending;
}

json_object *hr_json_number(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

/* The length of the well-formed UTF-8 sequence at s (1-4), 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
    const unsigned c = s[0];
    int n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0xFF >> (n + 1));
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

json_object *hr_json_text(const char *s)
{
    if (!s) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), out = 0;
    char *buf = malloc(4 * len + 1); /* every byte at most "\xHH" */
    if (!buf) return json_object_new_string("");
    while (*p) {
        const int n = utf8_len(p);
        if (n > 0) {
            memcpy(buf + out, p, (size_t)n);
            out += (size_t)n;
            p += n;
        } else { /* a byte that is not UTF-8 (a path in another encoding): shown as \xHH */
            out += (size_t)snprintf(buf + out, 5, "\\x%02X", *p++);
        }
    }
    buf[out] = '\0';
    json_object *j = json_object_new_string(buf);
    free(buf);
    return j;
}

const char *hr_cli_commit(void)
{
#ifdef HR_GIT_COMMIT
    return HR_GIT_COMMIT;
#else
    return "unknown";
#endif
}

void hr_cli_date(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
