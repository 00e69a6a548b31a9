/*
 * Declarative command-line flags: one table per command, from which the getopt_long
 * option array, the parse loop (strict, range-checked, one-line errors, exit 2) and
 * --help are all generated, so a flag is written down exactly once.
 *
 * A table is built at run time with pointers into the command's argument struct:
 *
 *     hr_flagset fs;
 *     hr_flags_init(&fs, "info", "info [options]", "Prints ...", NULL);
 *     hr_flags_group(&fs, "probe");
 *     hr_flags_add(&fs, hr_flag_int("threads", &threads, 1, 4096, "P", "host threads"));
 *     int rc = hr_flags_parse(&fs, argc, argv); // 0 ok, -1 help printed, 2 error printed
 *
 * Flags common to several commands come in shared groups (hr_flags_placement, ...).
 */
#ifndef HR_CLI_FLAGS_H
#define HR_CLI_FLAGS_H

#include <stdio.h>

#include "hetrelax/hetrelax.h"

#define HR_FLAGS_MAX 80

typedef enum {
    HR_FLAG_INT,    /* int, strict decimal within [lo, hi] */
    HR_FLAG_LONG,   /* long, strict decimal within [lo, hi] */
    HR_FLAG_DOUBLE, /* finite double within [lo, hi] */
    HR_FLAG_CHOICE, /* one of choices[]; its index goes to an int (or an int-sized enum) */
    HR_FLAG_STRING, /* the argument itself (const char *) */
    HR_FLAG_SWITCH, /* no argument: stores `value` into an int */
    HR_FLAG_CUSTOM  /* parse(): the command's own syntax */
} hr_flag_kind;

typedef struct hr_flag hr_flag;

/* A custom parser: 0 on success, else it printed one line (hr_flag_error) and returns
 * HR_EXIT_USAGE. */
typedef int (*hr_flag_parse_fn)(const char *cmd, const hr_flag *f, const char *arg);

struct hr_flag {
    const char *name; /* long name without "--" */
    hr_flag_kind kind;
    void *target, *target2;     /* where the value goes (target2: for custom parsers) */
    double lo, hi;              /* INT, LONG, DOUBLE: accepted range */
    const char *const *choices; /* CHOICE: NULL-terminated */
    int value;                  /* SWITCH: stored into *(int *)target */
    hr_flag_parse_fn parse;     /* CUSTOM */
    const char *metavar;        /* NULL: derived from the kind or the choices */
    const char *help;           /* '\n' starts an indented continuation line */
    const char *group;          /* heading in --help (set by hr_flags_group) */
    int seen;                   /* times given on the command line */
};

typedef struct hr_flagset {
    const char *cmd;    /* the subcommand, for error lines */
    const char *usage;  /* "poisson2d [options]" */
    const char *intro;  /* paragraph after the usage line (may be NULL) */
    const char *epilog; /* paragraph after the flags (may be NULL) */
    const char *group;  /* heading given to the next flags added */
    hr_flag flags[HR_FLAGS_MAX];
    int count;
    /* called after a successful parse, before the ranks agree (may be NULL): 0, or an exit
     * status after printing one line (the tuning knobs' environment, tuning_cli.c) */
    int (*after)(void *ctx);
    void *after_ctx;
} hr_flagset;

void hr_flags_init(hr_flagset *fs, const char *cmd, const char *usage, const char *intro, const char *epilog);
/* Starts a --help section: flags added after this are listed under `title`. */
void hr_flags_group(hr_flagset *fs, const char *title);
/* Appends f; returns the stored entry. */
hr_flag *hr_flags_add(hr_flagset *fs, hr_flag f);
/* The entry named `name` or NULL. */
hr_flag *hr_flags_find(hr_flagset *fs, const char *name);
/* Replaces the help text of `name` (a shared flag whose default differs per command). */
void hr_flags_set_help(hr_flagset *fs, const char *name, const char *help);
/* Times `name` was given (0 also when there is no such flag). */
int hr_flags_seen(const hr_flagset *fs, const char *name);

/* Parses argv[1..] (argv[0] is the subcommand). Returns 0, HR_EXIT_USAGE after printing
 * one line, or -1 after printing --help to stdout. Under MPI the ranks then agree
 * (hr_mpi_cli_parsed): a rank that parsed otherwise makes every rank return its status. */
int hr_flags_parse(hr_flagset *fs, int argc, char **argv);
void hr_flags_help(const hr_flagset *fs, FILE *out);

/* "hetrelax CMD: --NAME: MESSAGE" on stderr; returns HR_EXIT_USAGE. */
int hr_flag_error(const char *cmd, const hr_flag *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Table entries. */
hr_flag hr_flag_int(const char *name, int *t, long lo, long hi, const char *metavar, const char *help);
hr_flag hr_flag_long(const char *name, long *t, long lo, long hi, const char *metavar, const char *help);
hr_flag hr_flag_double(const char *name, double *t, double lo, double hi, const char *metavar,
                       const char *help);
hr_flag hr_flag_choice(const char *name, int *t, const char *const *choices, const char *help);
hr_flag hr_flag_string(const char *name, const char **t, const char *metavar, const char *help);
hr_flag hr_flag_switch(const char *name, int *t, int value, const char *help);
hr_flag hr_flag_custom(const char *name, void *t, void *t2, hr_flag_parse_fn fn, const char *metavar,
                       const char *help);

/* An enum field as the int a CHOICE stores (the enums here are int-sized, values >= 0). */
#define HR_ENUM_TARGET(p) ((int *)(void *)(p))

/* Shared groups: pass NULL for a flag the command does not have. */

/* placement: --backend --kernel --threads --thread-grid --bind --device */
void hr_flags_placement(hr_flagset *fs, hr_backend *backend, const char **kernel, int *threads,
                        int *thread_rows, int *thread_cols, hr_bind *bind, int *device);
/* iteration: --iters --tol --check --monitor --divtol */
void hr_flags_iteration(hr_flagset *fs, long *iters, double *tol, long *check, long *monitor, double *divtol);
/* output: --json --output --quiet --bandwidth GBPS / --no-bandwidth (which clear *measure) */
void hr_flags_output(hr_flagset *fs, const char **json, const char **output, int *quiet, double *bandwidth,
                     int *measure);

/* RxC with 1 <= R, C <= 4096, digits only (no sign, no blanks, no overflow). */
int hr_parse_thread_grid(const char *s, int *rows, int *cols);

#endif
