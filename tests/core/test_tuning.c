/* The tuning knobs (hr_options.tuning): the library reads no environment variable, the
 * command's mapping of a HETRELAX_* variable (tools/tuning_env.c) gives the same knob as
 * setting the option, and a bad knob is refused by hr_solver_create. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "hetrelax/hetrelax.h"
#include "tuning_env.h"

static hr_options pencil_options(void)
{
    hr_options o;
    hr_options_default(&o);
    o.dim = 3;
    o.nx = 24;
    o.ny = 16;
    o.nz = 12;
    o.backend = HR_BACKEND_CPU_THREADS;
    o.kernel = "pencil";
    o.threads = 2;
    o.iters = 9;
    o.tuning.tune_file = "/nonexistent/hetrelax-no-cache.txt";
    return o;
}

/* Runs o: the resolved configuration and the interior solution (caller frees). */
static float *solve(const hr_options *o, hr_config *cfg)
{
    hr_solver *s = NULL;
    hr_status st = hr_solver_create(o, &s);
    if (st != HR_OK) fail_msg("create: %s (%s)", hr_status_string(st), hr_last_error());
    hr_result r;
    assert_int_equal(hr_solver_run(s, &r), HR_OK);
    assert_int_equal(hr_solver_config(s, cfg), HR_OK);
    const size_t n = (size_t)o->nx * o->ny * o->nz;
    float *u = malloc(n * sizeof *u);
    assert_non_null(u);
    assert_int_equal(hr_solver_solution(s, HR_PREC_SINGLE, u, n), HR_OK);
    hr_solver_free(s);
    return u;
}

/* The pencil height given by the variable (through the command's mapping) and by the option:
 * the same knob, the same configuration, bitwise the same grid; and none of it without the
 * knob, whatever the environment says. */
static void variable_and_option_agree(void **state)
{
    (void)state;
    const size_t n = 24 * 16 * 12;
    hr_config plain, byopt, byenv, ignored;
    hr_options o = pencil_options();
    unsetenv("HETRELAX_CPU_BLOCK");
    float *u0 = solve(&o, &plain);
    assert_true(strncmp(plain.shape_source, "default", 7) == 0);
    /* a height the default does not pick, so the knob shows */
    const int by = plain.shape[1] == 3 ? 5 : 3;
    char value[32];
    snprintf(value, sizeof value, "%d,nt", by);

    o.tuning.cpu_block = by;
    o.tuning.cpu_block_stream = HR_TUNE_ON;
    float *u1 = solve(&o, &byopt);
    assert_int_equal(byopt.shape[1], by);
    assert_string_equal(byopt.shape_source, "env+nt");

    setenv("HETRELAX_CPU_BLOCK", value, 1);
    hr_tuning t = {0};
    char err[256];
    assert_int_equal(hri_tuning_from_env(&t, err, sizeof err), 0);
    assert_int_equal(t.cpu_block, by);
    assert_int_equal(t.cpu_block_stream, HR_TUNE_ON);
    hr_options e = pencil_options();
    t.tune_file = e.tuning.tune_file;
    e.tuning = t;
    float *u2 = solve(&e, &byenv);
    assert_memory_equal(byenv.shape, byopt.shape, sizeof byopt.shape);
    assert_string_equal(byenv.shape_source, byopt.shape_source);
    assert_memory_equal(u1, u2, n * sizeof *u1);

    /* the variable is still set: the library, given no knob, ignores it */
    hr_options z = pencil_options();
    float *u3 = solve(&z, &ignored);
    unsetenv("HETRELAX_CPU_BLOCK");
    assert_memory_equal(ignored.shape, plain.shape, sizeof plain.shape);
    assert_string_equal(ignored.shape_source, plain.shape_source);
    assert_memory_equal(u0, u3, n * sizeof *u0); /* every height gives cpu-seq's grid anyway */
    free(u0);
    free(u1);
    free(u2);
    free(u3);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The tuning cache's file comes from the knobs alone: HETRELAX_TUNE_FILE, XDG_CACHE_HOME and
 * HOME name other places, and nothing is written there. */
static void cache_path_from_knobs_only(void **state)
{
    (void)state;
    char dir[] = "/tmp/hr-tuning-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char env_file[600], env_home[600], env_xdg[600], knob_file[600], knob_dir[600], knob_dir_file[700];
    snprintf(env_file, sizeof env_file, "%s/env-tune.txt", dir);
    snprintf(env_home, sizeof env_home, "%s/home", dir);
    snprintf(env_xdg, sizeof env_xdg, "%s/xdg", dir);
    snprintf(knob_file, sizeof knob_file, "%s/knob-tune.txt", dir);
    snprintf(knob_dir, sizeof knob_dir, "%s/knob-dir", dir);
    snprintf(knob_dir_file, sizeof knob_dir_file, "%s/gpu-tune.txt", knob_dir);
    assert_int_equal(mkdir(env_home, 0700), 0);
    assert_int_equal(mkdir(env_xdg, 0700), 0);
    setenv("HETRELAX_TUNE_FILE", env_file, 1);
    setenv("XDG_CACHE_HOME", env_xdg, 1);
    setenv("HOME", env_home, 1);

    hr_options o = pencil_options();
    o.precision = HR_PREC_SINGLE;
    hr_cpu_tune_result tr;
    char err[256];
    o.tuning.tune_file = knob_file;
    assert_int_equal(hr_cpu_tune(&o, 2, NULL, &tr, err, sizeof err), HR_OK);
    assert_string_equal(tr.cache_path, knob_file);
    assert_true(file_exists(knob_file));

    o.tuning.tune_file = NULL;
    o.tuning.cache_dir = knob_dir; /* created when missing */
    assert_int_equal(hr_cpu_tune(&o, 2, NULL, &tr, err, sizeof err), HR_OK);
    assert_string_equal(tr.cache_path, knob_dir_file);
    assert_true(file_exists(knob_dir_file));

    assert_false(file_exists(env_file));
    char probe[700];
    snprintf(probe, sizeof probe, "%s/hetrelax", env_xdg);
    assert_false(file_exists(probe));
    snprintf(probe, sizeof probe, "%s/.cache", env_home);
    assert_false(file_exists(probe));

    /* the command's mapping: the variables give exactly these knobs */
    hr_tuning t = {0};
    assert_int_equal(hri_tuning_from_env(&t, err, sizeof err), 0);
    assert_string_equal(t.tune_file, env_file);
    snprintf(probe, sizeof probe, "%s/hetrelax", env_xdg);
    assert_string_equal(t.cache_dir, probe);
    unsetenv("HETRELAX_TUNE_FILE");
    unsetenv("XDG_CACHE_HOME");
    remove(knob_file);
    remove(knob_dir_file);
    rmdir(knob_dir);
    rmdir(env_home);
    rmdir(env_xdg);
    rmdir(dir);
}

/* Every variable of the table maps onto its own knob and no other, and a knob out of its
 * range is refused by the library with the knob's name. */
static void table_and_validation(void **state)
{
    (void)state;
    assert_true(hri_knob_count() >= 40);
    for (int i = 0; i < hri_knob_count(); i++) {
        const hr_knob *k = hri_knob_at(i);
        assert_ptr_equal(hri_knob_find(k->name), k);
        if (k->var && strncmp(k->var, "HETRELAX_", 9) == 0) assert_ptr_equal(hri_knob_find(k->var), k);
        hr_tuning zero = {0};
        assert_true(hri_knob_is_default(k, &zero));
    }
    hr_options o = pencil_options();
    o.tuning.crew_pieces = 65;
    hr_solver *s = NULL;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "tuning.crew_pieces"));
    o = pencil_options();
    o.tuning.rb2_graph = 3;
    assert_int_equal(hr_solver_create(&o, &s), HR_ERR_INVALID_ARG);
    assert_non_null(strstr(hr_last_error(), "tuning.rb2_graph"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(variable_and_option_agree),
        cmocka_unit_test(cache_path_from_knobs_only),
        cmocka_unit_test(table_and_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
