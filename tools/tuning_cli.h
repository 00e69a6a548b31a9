/*
 * The tuning knobs in the command: --tuning NAME=VALUE (every knob) and a few flags of their
 * own, the HETRELAX_* variables under them (tuning_env.h), the "tuning" object of a run's
 * JSON, and the listing of `hetrelax info --list-tuning`. docs/configuration.md.
 *
 *   hr_tuning_flags tf;
 *   hr_flags_tuning(&fs, &tf, &o.tuning, HR_TUNING_FLAGS_GRID);  // after the other flags
 *   rc = hr_flags_parse(&fs, argc, argv);  // then: the variables, then the flags on top
 */
#ifndef HR_TUNING_CLI_H
#define HR_TUNING_CLI_H

#include <json-c/json.h>
#include <stdio.h>

#include "cli_flags.h"
#include "hetrelax/hetrelax.h"
#include "tuning_env.h"

#define HR_TUNING_GIVEN_MAX 64

typedef struct hr_tuning_flags {
    const char *cmd;
    hr_tuning *target;
    int count; /* the knob values given by flags, in order, applied over the environment's */
    const hr_knob *knob[HR_TUNING_GIVEN_MAX];
    const char *value[HR_TUNING_GIVEN_MAX];
} hr_tuning_flags;

/* The knobs with a flag of their own in the grid commands (poisson2d, poisson3d). */
extern const char *const HR_TUNING_FLAGS_GRID[];

/* Adds the group "tuning": --tuning NAME=VALUE and --NAME VALUE for each knob named in
 * `own` (NULL-terminated; may be NULL), all into *t; and makes the parse apply the
 * environment's HETRELAX_* variables to *t first (a bad value: "hetrelax CMD: HETRELAX_X:
 * reason", status 2), then the flags over them. */
void hr_flags_tuning(hr_flagset *fs, hr_tuning_flags *tf, hr_tuning *t, const char *const *own);

/* The environment alone onto *t, for commands without the flags: 0, or HR_EXIT_USAGE (printed). */
int hr_tuning_cli_env(const char *cmd, hr_tuning *t);

/* A run's "tuning" object: every knob by name with its value (0, "" or null: the default). */
json_object *hr_tuning_json(const hr_tuning *t);
/* `hetrelax info`: every knob with its value, variable, flag, syntax, default and help. */
json_object *hr_tuning_list_json(const hr_tuning *t);
/* The same as text: every knob (all), or one line of the knobs set (!all). */
void hr_tuning_print(FILE *f, const hr_tuning *t, int all);

#endif
