/*
 * The tuning knobs (hr_tuning, include/hetrelax/hetrelax.h) as the command sees them: one
 * table row per knob with the HETRELAX_* variable it maps from, its syntax and default. The
 * library reads no environment; the command maps the variables onto the options here (so
 * `HETRELAX_X=1 hetrelax ...` works as it always did), then its flags on top (tuning_cli.c).
 * Plain C without json-c, so tests and benchmark drivers can link it too.
 */
#ifndef HR_TUNING_ENV_H
#define HR_TUNING_ENV_H

#include <stddef.h>

#include "hetrelax/hetrelax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HR_KNOB_INT,
    HR_KNOB_LONG,
    HR_KNOB_DOUBLE,
    HR_KNOB_STRING,
    HR_KNOB_INT2,
    HR_KNOB_INT3
} hr_knob_type;

typedef struct hr_knob {
    const char *name; /* the field of hr_tuning */
    const char *var;  /* the environment variable that maps onto it */
    hr_knob_type type;
    size_t offset;      /* of the field in hr_tuning */
    int parse;          /* how a value is read (tuning_env.c) */
    long lo, hi;        /* counts: the accepted range */
    long zero;          /* counts: the knob's value for a given 0 (0: the default, -1: none) */
    const char *syntax; /* the value's syntax, for listings */
    const char *deflt;  /* the library's default, in words */
    const char *help;   /* what it does, one line */
    const char *group;  /* what it tunes: "cpu", "gpu", "mg", "sparse", "hybrid", "mpi", "cache" */
    int test_only;      /* a hook for tests and benchmarks */
} hr_knob;

int hri_knob_count(void);
const hr_knob *hri_knob_at(int i);
/* The knob named `name` (the field's name, or its variable's), or NULL. */
const hr_knob *hri_knob_find(const char *name);

/* Reads `value` into the knob's field of t. strict 0 (the environment): what the library
 * ignored before the knobs existed is ignored again (the knob keeps its default), and only
 * what it refused then is an error; strict 1 (flags): anything but the knob's syntax is an
 * error. 0, or -1 with the reason in err. */
int hri_knob_set(const hr_knob *k, const char *value, int strict, hr_tuning *t, char *err, size_t es);

/* Whether the knob of t holds its default (0 everywhere). */
int hri_knob_is_default(const hr_knob *k, const hr_tuning *t);
/* The knob's value as text ("0" for the default; shapes as AxBxC). */
void hri_knob_text(const hr_knob *k, const hr_tuning *t, char *buf, size_t size);

/* Maps every knob's variable set in the environment onto t, and XDG_CACHE_HOME (else HOME)
 * onto t->cache_dir unless it is set. 0, or -1 with "HETRELAX_X: reason" in err. The
 * strings stored point into the environment (valid while it is not changed). */
int hri_tuning_from_env(hr_tuning *t, char *err, size_t es);

/* The variables of the environment that map onto a knob other than its default, as
 * "VAR=value" sorted and blank-separated ("none" when there is none), and a hash of the
 * knobs they give (equal knobs, equal hash, however they were spelled). */
void hri_tuning_env_fingerprint(char *text, size_t size, unsigned long long *hash);

#ifdef __cplusplus
}
#endif
#endif
