/* Shared pieces of the hetrelax command: value parsing with one-line errors, JSON output. */
#ifndef HR_CLI_H
#define HR_CLI_H

#include <json-c/json.h>
#include <stdio.h>

#include "atomic_file.h"
#include "hetrelax/hetrelax.h"

/* Exit codes of every subcommand (HR_CLI_EXIT_HELP says what they mean). */
enum { HR_EXIT_OK = 0, HR_EXIT_FAIL = 1, HR_EXIT_USAGE = 2, HR_EXIT_NOT_CONVERGED = 3 };

/* The exit statuses and what a failed run leaves, for the solvers' --help. */
#define HR_CLI_EXIT_HELP                                                                                     \
    "Exit status: 0 finished (converged; without a tolerance, all its iterations); 1 failed\n"               \
    "(diverged, a device or write error, a --verify mismatch: no output file is replaced);\n"                \
    "2 bad flags or input (nothing ran); 3 NOT converged: a tolerance (--tol, or the\n"                      \
    "method's default) was not reached within the iteration limit (outputs are written and\n"                \
    "the JSON says \"converged\": false); 128 + N: stopped by signal N.\n"

/* The help of --keep-diverged (the grid commands and sparse). */
#define HR_CLI_KEEP_DIVERGED_HELP                                                                            \
    "a diverged run writes its last state and record to the --output and\n"                                  \
    "--json names with '.diverged' before the extension (u.diverged.raw,\n"                                  \
    "run.diverged.json); without it a failed run writes no file (--json -\n"                                 \
    "prints the record either way)"

/* The run's end as an exit status: HR_EXIT_FAIL when it diverged (reason diverged or NaN),
 * HR_EXIT_NOT_CONVERGED when a tolerance (tol > 0) was in effect and the iteration limit came
 * first (reason iterations), else HR_EXIT_OK. */
int hr_cli_run_status(hr_reason reason, double tol);
/* The line of a run that missed its tolerance ("hetrelax CMD: NOT converged: ..."); `what`
 * names the iterations (sweeps, cycles); `advice` what to change ("raise --iters"); absolute:
 * the residual is ||b - A u|| (b = 0), not relative. */
void hr_cli_not_converged(const char *cmd, long iterations, const char *what, double residual, int absolute,
                          double tol, const char *advice);
/* The advice for a missed tolerance: raise `limit`, and where single precision cannot reach
 * tol (below 1e-5: fp32 rounding stalls the residual near 1e-6), use `instead`. */
const char *hr_cli_not_converged_advice(const char *limit, int single, double tol, const char *instead,
                                        char *buf, size_t size);
/* The residual's label in reports: "relative residual", or where b = 0 (nothing to be
 * relative to) "residual (absolute, b = 0)". */
const char *hr_cli_residual_label(int absolute);
/* The name a diverged run's state goes to with --keep-diverged: ".diverged" before the
 * extension of the file name ("out/u.raw" -> "out/u.diverged.raw", "u" -> "u.diverged").
 * 0, or HR_EXIT_FAIL (printed) when it does not fit. */
int hr_cli_diverged_name(const char *cmd, const char *path, char *out, size_t size);
/* Writes a state into the temporary file `tmp`; returns 0 or an errno value. */
typedef int (*hr_cli_writer)(const char *tmp, void *ctx);
/* --keep-diverged after a divergence: the state (write, when there is an --output) and the
 * JSON record j (when --json names a file) go to their '.diverged' names, each reported on
 * `out` unless quiet. Returns 0 or HR_EXIT_FAIL (printed). */
int hr_cli_keep_diverged(const char *cmd, const char *output, hr_cli_writer write, void *ctx,
                         const char *json, json_object *j, int quiet, FILE *out);

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

/* The registry's names of `kind` (hetrelax.h), each once, in registry order and
 * NULL-terminated: the choices of a flag, its --help metavar and its error list. Static
 * storage, one list per kind. */
const char *const *hr_cli_entry_names(hr_kind kind);
/* The same joined by '|' ("jacobi|redblack|sor|mg|cg"). */
const char *hr_cli_entry_metavar(hr_kind kind);
/* The names of `kind` with every cap of `need`, each once, joined by `sep` into buf. */
const char *hr_cli_entry_join(hr_kind kind, unsigned need, const char *sep, char *buf, size_t size);
/* The capabilities of the first entry of `kind` named `name` (0: none such). */
unsigned hr_cli_entry_caps(hr_kind kind, const char *name);
/* The registry entry of `kind` named s on any backend (the first): 0, or HR_EXIT_USAGE after
 * "--flag: unknown value 's' (expected a|b|c)". */
int hr_cli_entry(const char *cmd, const char *flag, const char *s, hr_kind kind, hr_entry_info *out);

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

/* Signals: every signal that ends the process (where no library claimed it) removes the
 * live temporary files first; SIGINT/SIGTERM/SIGHUP end the process unless a command
 * defers them (checkpointing), when they only set hr_cli_signal_pending. */
void hr_cli_install_signals(void);
void hr_cli_defer_signals(int on);
int hr_cli_signal_pending(void);
/* The solver a deferred signal stops (hr_solver_request_stop: answered within ~0.1 s);
 * NULL: none. */
void hr_cli_stop_target(hr_solver *s);

/* Standard output carries a listing (--help, --version, --list-*): a reader that stops early
 * (`| head`) is not an error, and main() exits quietly when the pipe closed. */
void hr_cli_listing_output(void);
int hr_cli_is_listing(void);

/* JSON number that becomes null when not finite. */
json_object *hr_json_number(double v);
/* A JSON string of text from outside (a path, a name): bytes that are not UTF-8 (a file name
 * in another encoding) become the four characters \xHH, so the JSON stays valid. */
json_object *hr_json_text(const char *s);

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
