#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    if (!s || !*s || *end || errno == ERANGE)
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
    if (!s || !*s || *end || errno == ERANGE || !isfinite(v))
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

int hr_cli_write_json(const char *cmd, const char *path, json_object *obj)
{
    const char *text =
        json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hetrelax %s: --json: cannot write '%s': %s\n", cmd, path, strerror(errno));
        return HR_EXIT_FAIL;
    }
    int ok = fprintf(f, "%s\n", text) > 0;
    if (f != stdout)
        ok = (fclose(f) == 0) && ok;
    else
        fflush(stdout);
    if (!ok) {
        fprintf(stderr, "hetrelax %s: --json: error writing '%s'\n", cmd, path);
        return HR_EXIT_FAIL;
    }
    return 0;
}

json_object *hr_json_number(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
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
