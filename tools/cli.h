/* Shared pieces of the hetrelax command: value parsing with one-line errors, JSON output. */
#ifndef HR_CLI_H
#define HR_CLI_H

#include <json-c/json.h>
#include <stdio.h>

#include "hetrelax/hetrelax.h"

/* Exit codes of every subcommand. */
enum { HR_EXIT_OK = 0, HR_EXIT_FAIL = 1, HR_EXIT_USAGE = 2 };

/* Prints "hetrelax CMD: --FLAG: MESSAGE" to stderr; returns HR_EXIT_USAGE. */
int hr_cli_usage_error(const char *cmd, const char *flag, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Strict parsers: the whole string must be a number within [lo, hi]; return 0 on
 * success, else print the error and return HR_EXIT_USAGE. */
int hr_cli_int(const char *cmd, const char *flag, const char *s, long lo, long hi, int *out);
int hr_cli_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out);
int hr_cli_double(const char *cmd, const char *flag, const char *s, double lo, double hi, double *out);
/* Picks s out of a NULL-terminated list of names; the index goes to *out. */
int hr_cli_choice(const char *cmd, const char *flag, const char *s, const char *const *names, int *out);

/* Writes obj as pretty JSON to path ("-" is stdout). Returns 0 or HR_EXIT_FAIL. */
int hr_cli_write_json(const char *cmd, const char *path, json_object *obj);

/* JSON number that becomes null when not finite. */
json_object *hr_json_number(double v);

/* Best-effort build facts for reports: commit (if known at build time) and date. */
const char *hr_cli_commit(void);
void hr_cli_date(char *buf, size_t size);

/* Subcommands: argc/argv start at the subcommand name. */
int hr_cmd_info(int argc, char **argv);
int hr_cmd_poisson2d(int argc, char **argv);
int hr_cmd_sparse(int argc, char **argv);
int hr_cmd_tune(int argc, char **argv);

#endif
