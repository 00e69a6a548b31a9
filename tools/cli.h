/* Shared pieces of the hetrelax command: value parsing with one-line errors, JSON output. */
#ifndef HR_CLI_H
#define HR_CLI_H

#include <json-c/json.h>
#include <stdio.h>

#include "atomic_file.h"
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

/* Writes obj as pretty JSON to path ("-" is stdout, checked for write errors), through
 * a temporary file renamed into place. Returns 0 or HR_EXIT_FAIL. */
int hr_cli_write_json(const char *cmd, const char *path, json_object *obj);
/* As hr_cli_write_json into an output opened by hr_cli_open_output (NULL: stdout). */
int hr_cli_write_json_to(const char *cmd, hr_atomic *a, json_object *obj);

/* Opens the temporary file of an output before the work starts, so that a path that
 * cannot be written is refused at once with its real reason ("No such file or
 * directory", "Permission denied", "Is a directory"). 0 or HR_EXIT_USAGE. */
int hr_cli_open_output(const char *cmd, const char *flag, const char *path, hr_atomic *a);
/* Finishes an output opened by hr_cli_open_output: renames it into place when the
 * writer succeeded (write_errno == 0), else removes it. Prints one line on failure.
 * Returns 0 or HR_EXIT_FAIL. */
int hr_cli_close_output(const char *cmd, const char *flag, hr_atomic *a, int write_errno);

/* Host memory this process may still allocate: MemAvailable, capped by the address-space
 * limit (ulimit -v) less what is mapped now. */
size_t hr_cli_available_bytes(void);
/* "12.8 GB" */
const char *hr_cli_bytes(double bytes, char *buf, size_t size);

/* Signals: SIGINT/SIGTERM remove live temporary files and end the process, unless a
 * command defers them (checkpointing), when they only set hr_cli_signal_pending. */
void hr_cli_install_signals(void);
void hr_cli_defer_signals(int on);
int hr_cli_signal_pending(void);
/* The solver a deferred signal stops (hr_solver_request_stop: answered within ~0.1 s);
 * NULL: none. */
void hr_cli_stop_target(hr_solver *s);

/* JSON number that becomes null when not finite. */
json_object *hr_json_number(double v);

/* Best-effort build facts for reports: commit (if known at build time) and date. */
const char *hr_cli_commit(void);
void hr_cli_date(char *buf, size_t size);

/* Subcommands: argc/argv start at the subcommand name. */
int hr_cmd_info(int argc, char **argv);
int hr_cmd_poisson2d(int argc, char **argv);
int hr_cmd_poisson3d(int argc, char **argv);
/* The grid commands: dim 2 (poisson2d) or 3 (poisson3d). */
int hr_grid_main(int argc, char **argv, int dim);
int hr_cmd_sparse(int argc, char **argv);
int hr_cmd_tune(int argc, char **argv);
int hr_cmd_model(int argc, char **argv);

#endif
