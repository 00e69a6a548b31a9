/* The tuning knobs in the command (tuning_cli.h). */
#include "tuning_cli.h"

#include <string.h>

#include "cli.h"

const char *const HR_TUNING_FLAGS_GRID[] = {"hugepages", "cpu_stream", "cpu_block",
                                            "rb_tile",   "gpu_shape",  NULL};

/* The flag a knob of its own has ("--cpu-block" for cpu_block). */
static void flag_name(const hr_knob *k, char *buf, size_t size)
{
    snprintf(buf, size, "%s", k->name);
    for (char *p = buf; *p; p++)
        if (*p == '_') *p = '-';
}

static int in_list(const char *const *list, const char *name)
{
    for (int i = 0; list && list[i]; i++)
        if (strcmp(list[i], name) == 0) return 1;
    return 0;
}

/* Checks a value (on a scratch struct) and keeps it for after the environment. */
static int give(const char *cmd, const hr_flag *f, hr_tuning_flags *tf, const hr_knob *k, const char *value)
{
    hr_tuning scratch;
    memset(&scratch, 0, sizeof scratch);
    char why[200];
    if (hri_knob_set(k, value, 1, &scratch, why, sizeof why) != 0)
        return f->target2 ? hr_flag_error(cmd, f, "%s", why) : hr_flag_error(cmd, f, "%s: %s", k->name, why);
    if (tf->count >= HR_TUNING_GIVEN_MAX) return hr_flag_error(cmd, f, "too many tuning values");
    tf->knob[tf->count] = k;
    tf->value[tf->count++] = value;
    return 0;
}

static int parse_own(const char *cmd, const hr_flag *f, const char *arg)
{
    return give(cmd, f, f->target, f->target2, arg);
}

static int parse_tuning(const char *cmd, const hr_flag *f, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char name[64];
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name)
        return hr_flag_error(cmd, f, "'%s': want NAME=VALUE (hetrelax info --list-tuning lists the knobs)",
                             arg);
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    const hr_knob *k = hri_knob_find(name);
    if (!k) return hr_flag_error(cmd, f, "'%s': no such knob (hetrelax info --list-tuning lists them)", name);
    return give(cmd, f, f->target, k, eq + 1);
}

int hr_tuning_cli_env(const char *cmd, hr_tuning *t)
{
    char err[256];
    if (hri_tuning_from_env(t, err, sizeof err) != 0) {
        fprintf(stderr, "hetrelax %s: %s\n", cmd, err);
        return HR_EXIT_USAGE;
    }
    return 0;
}

static int apply(void *ctx)
{
    hr_tuning_flags *tf = ctx;
    int rc = hr_tuning_cli_env(tf->cmd, tf->target);
    for (int i = 0; i < tf->count && rc == 0; i++) {
        char why[200];
        if (hri_knob_set(tf->knob[i], tf->value[i], 1, tf->target, why, sizeof why) !=
            0) /* checked at parse */
            rc = hr_cli_usage_error(tf->cmd, "--tuning", "%s: %s", tf->knob[i]->name, why);
    }
    return rc;
}

void hr_flags_tuning(hr_flagset *fs, hr_tuning_flags *tf, hr_tuning *t, const char *const *own)
{
    memset(tf, 0, sizeof *tf);
    tf->cmd = fs->cmd;
    tf->target = t;
    hr_flags_group(fs, "tuning (how it runs, never what it computes: docs/configuration.md)");
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = hri_knob_at(i);
        if (!in_list(own, k->name)) continue;
        static char names[16][40], helps[16][400];
        static int used;
        const int slot = used++ % 16;
        flag_name(k, names[slot], sizeof names[slot]);
        snprintf(helps[slot], sizeof helps[slot], "%s\n(default %s; also %s)", k->help, k->deflt, k->var);
        hr_flags_add(fs, hr_flag_custom(names[slot], tf, (void *)k, parse_own, k->syntax, helps[slot]));
    }
    hr_flags_add(fs, hr_flag_custom("tuning", tf, NULL, parse_tuning, "NAME=VALUE",
                                    "any tuning knob, repeatable (hetrelax info --list-tuning lists them\n"
                                    "with their HETRELAX_* variables; flags win over the variables)"));
    fs->after = apply;
    fs->after_ctx = tf;
}

static json_object *value_json(const hr_knob *k, const hr_tuning *t)
{
    const void *p = (const char *)t + k->offset;
    switch (k->type) {
    case HR_KNOB_INT: return json_object_new_int(*(const int *)p);
    case HR_KNOB_LONG: return json_object_new_int64(*(const long *)p);
    case HR_KNOB_DOUBLE: return json_object_new_double(*(const double *)p);
    case HR_KNOB_STRING: {
        const char *s = *(const char *const *)p;
        return s ? hr_json_text(s) : NULL;
    }
    case HR_KNOB_INT2:
    case HR_KNOB_INT3: {
        json_object *a = json_object_new_array();
        for (int i = 0; i < (k->type == HR_KNOB_INT2 ? 2 : 3); i++)
            json_object_array_add(a, json_object_new_int(((const int *)p)[i]));
        return a;
    }
    }
    return NULL;
}

json_object *hr_tuning_json(const hr_tuning *t)
{
    json_object *j = json_object_new_object();
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = hri_knob_at(i);
        json_object_object_add(j, k->name, value_json(k, t));
    }
    return j;
}

static int has_own_flag(const hr_knob *k)
{
    return in_list(HR_TUNING_FLAGS_GRID, k->name);
}

json_object *hr_tuning_list_json(const hr_tuning *t)
{
    json_object *j = json_object_new_object();
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = hri_knob_at(i);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "value", value_json(k, t));
        json_object_object_add(e, "set", json_object_new_boolean(!hri_knob_is_default(k, t)));
        json_object_object_add(e, "variable", k->var ? json_object_new_string(k->var) : NULL);
        char flag[48] = "";
        if (has_own_flag(k)) {
            snprintf(flag, sizeof flag, "--");
            flag_name(k, flag + 2, sizeof flag - 2);
        }
        json_object_object_add(e, "flag", flag[0] ? json_object_new_string(flag) : NULL);
        json_object_object_add(e, "syntax", json_object_new_string(k->syntax));
        json_object_object_add(e, "default", json_object_new_string(k->deflt));
        json_object_object_add(e, "group", json_object_new_string(k->group));
        json_object_object_add(e, "tests", json_object_new_boolean(k->test_only));
        json_object_object_add(e, "help", json_object_new_string(k->help));
        json_object_object_add(j, k->name, e);
    }
    return j;
}

void hr_tuning_print(FILE *f, const hr_tuning *t, int all)
{
    if (!all) {
        int n = 0;
        fprintf(f, "tuning    ");
        for (int i = 0; i < hri_knob_count(); i++) {
            const hr_knob *k = hri_knob_at(i);
            if (hri_knob_is_default(k, t) || strcmp(k->name, "cache_dir") == 0) continue;
            char v[256];
            hri_knob_text(k, t, v, sizeof v);
            fprintf(f, "%s%s=%s", n++ ? " " : "", k->name, v);
        }
        fprintf(f, "%s (hetrelax info --list-tuning lists every knob)\n",
                n ? "" : "every knob at its default");
        return;
    }
    fprintf(f, "tuning knobs: --tuning NAME=VALUE, or the variable (flags win); 0: the default\n");
    const char *group = "";
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = hri_knob_at(i);
        if (strcmp(group, k->group) != 0) fprintf(f, "  [%s]\n", group = k->group);
        char v[256], flag[48] = "";
        hri_knob_text(k, t, v, sizeof v);
        if (has_own_flag(k)) {
            snprintf(flag, sizeof flag, ", --");
            flag_name(k, flag + 4, sizeof flag - 4);
        }
        fprintf(f, "  %-21s %s %s%s%s\n", k->name, k->syntax, k->var ? k->var : "(no variable)", flag,
                k->test_only ? " (tests)" : "");
        fprintf(f, "      %s; default %s; now %s\n", k->help, k->deflt,
                hri_knob_is_default(k, t) ? "default" : v);
    }
}
