/*
 * hetrelax model: the CPU + GPU split model of the hybrid backend without a run
 * (docs/hybrid.md): calibrates t_c, t_g and the exposed exchange cost X on the grid (and the
 * STREAM bandwidths of Sourouri et al.'s rule), then prints the predicted curve and the split that
 * --split auto would choose.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_flags.h"
#include "hetrelax/hybrid.h"
#include "tuning_cli.h"

#define CMD "model"

int hr_cmd_model(int argc, char **argv)
{
    static const char *const precs[] = {"single", "double", NULL};
    static const char *const schedules[] = {"nested", "naive", NULL};
    static const char *const seconds[] = {"gpu", "cpu", NULL};
    static hr_options o; /* static: the flag table points into it */
    static hr_tuning_flags tf;
    hr_options_default(&o);
    int dim = 2, prec = 0; /* an index of precs */
    const char *json = NULL;
    hr_flagset fs;
    hr_flags_init(&fs, CMD, "model [options]",
                  "Calibrates the hybrid backend's split model on a grid (a few sweeps of each part, the\n"
                  "exchange, the host STREAM triad and the device copy) and prints the predicted time per\n"
                  "sweep against the fraction of rows (planes) on the CPU, the split --split auto would\n"
                  "choose and the STREAM rule of Sourouri et al., without running the solve\n"
                  "(docs/hybrid.md).\n",
                  NULL);
    hr_flags_group(&fs, "problem");
    hr_flags_add(&fs, hr_flag_int("dim", &dim, 2, 3, "2|3", "dimension (default 2; 3 with --nz)"));
    hr_flags_add(&fs, hr_flag_int("n", &o.n, 1, 1000000, "N",
                                  "interior points per axis (default 16384 in 2-D, 512 in 3-D)"));
    hr_flags_add(&fs, hr_flag_int("nx", &o.nx, 1, 1000000, "X", "interior points along x (default N)"));
    hr_flags_add(&fs, hr_flag_int("ny", &o.ny, 1, 1000000, "Y", "interior points along y (default N)"));
    hr_flags_add(&fs, hr_flag_int("nz", &o.nz, 1, 1000000, "Z", "interior points along z (3-D; default N)"));
    hr_flags_add(&fs, hr_flag_choice("precision", &prec, precs, "(default single)"));
    hr_flags_group(&fs, "placement");
    hr_flags_placement(&fs, NULL, NULL, &o.threads, NULL, NULL, &o.bind, &o.device);
    hr_flags_add(&fs, hr_flag_int("split-ghost", &o.split_ghost, 1, 4096, "G",
                                  "rows exchanged every G sweeps (default 1)"));
    hr_flags_add(
        &fs, hr_flag_choice("schedule", &o.split_schedule, schedules, "CPU part: nested (default) or naive"));
    hr_flags_add(&fs, hr_flag_int("boundary-threads", &o.split_boundary_threads, 1, 4096, "N",
                                  "nested: threads of the boundary team (default: automatic)"));
    hr_flags_add(&fs, hr_flag_choice("split-second", &o.split_second, seconds,
                                     "the second placement (default gpu; cpu: a CPU team)"));
    hr_flags_group(&fs, "output");
    hr_flags_output(&fs, &json, NULL, NULL, NULL, NULL);
    hr_flags_set_help(&fs, "json", "write the calibration, the curve and the choice as JSON");
    hr_flags_tuning(&fs, &tf, &o.tuning, NULL);
    int rc = hr_flags_parse(&fs, argc, argv);
    if (rc) return rc < 0 ? HR_EXIT_OK : rc;
    o.precision = prec ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
    if (o.nz && hr_flags_seen(&fs, "dim") && dim != 3)
        return hr_cli_usage_error(CMD, "--nz", "needs --dim 3");
    if (o.nz) dim = 3;
    o.dim = dim;
    o.backend = HR_BACKEND_HYBRID;
    if (!hr_flags_seen(&fs, "n")) o.n = dim == 3 ? 512 : 16384;
    hr_sysinfo si;
    hr_sysinfo_get(&si);
    /* blame a flag the user typed: the second placement is a GPU by default */
    if (o.split_second == HR_SPLIT_GPU && si.gpus <= o.device)
        return hr_cli_usage_error(
            CMD,
            hr_flags_seen(&fs, "split-second")        ? "--split-second"
            : si.gpus || hr_flags_seen(&fs, "device") ? "--device"
                                                      : NULL,
            "the model splits between the CPU and GPU %d, and there is no CUDA device %d "
            "(found %d); --split-second cpu models two CPU teams",
            o.device, o.device, si.gpus);
    char why[240];
    if (hr_options_validate(&o, why, sizeof why) != HR_OK) {
        const char *colon = strchr(why, ':');
        return hr_cli_usage_error(CMD, NULL, "%s%s", colon ? "--" : "", why);
    }
    FILE *hout = json && strcmp(json, "-") == 0 ? stderr : stdout;
    hr_atomic jout;
    const int json_file = json && strcmp(json, "-") != 0;
    if (json_file && (rc = hr_cli_open_output(CMD, "--json", json, &jout)) != 0) return rc;

    hr_hybrid_calibration cal;
    hr_split_model m;
    hr_hybrid_info info;
    hr_status st = hr_hybrid_calibrate(&o, HR_HYBRID_CAL_STREAM, &cal, &m);
    if (st == HR_OK) st = hr_hybrid_choose(&o, &cal, &m, &info);
    if (st != HR_OK) {
        if (json_file) hr_atomic_abort(&jout);
        const char *err = hr_hybrid_last_error();
        fprintf(stderr, "hetrelax %s: %s%s%s\n", CMD, hr_status_string(st), *err ? ": " : "", err);
        return st == HR_ERR_INVALID_ARG || st == HR_ERR_NO_DEVICE ? HR_EXIT_USAGE : HR_EXIT_FAIL;
    }
    char buf[8192];
    hr_hybrid_explain(&info, 0.0, buf, sizeof buf);
    if (dim == 3)
        fprintf(hout, "hetrelax model: %d x %d x %d interior points", o.nx ? o.nx : o.n, o.ny ? o.ny : o.n,
                o.nz ? o.nz : o.n);
    else
        fprintf(hout, "hetrelax model: %d x %d interior points", o.nx ? o.nx : o.n, o.ny ? o.ny : o.n);
    fprintf(hout, ", %s precision\n%s", hr_precision_name(o.precision), buf);
    if (json) {
        json_object *j = json_object_new_object(), *curve = json_object_new_array();
        json_object_object_add(j, "dim", json_object_new_int(dim));
        json_object_object_add(j, "rows", json_object_new_int(info.rows));
        json_object_object_add(j, "precision", json_object_new_string(hr_precision_name(o.precision)));
        json_object_object_add(j, "t_cpu_s", hr_json_number(cal.t_cpu));
        json_object_object_add(j, "t_gpu_s", hr_json_number(cal.t_gpu));
        json_object_object_add(j, "x_exposed_s", hr_json_number(cal.x_exposed));
        json_object_object_add(j, "x_latency_s", hr_json_number(cal.x_latency));
        json_object_object_add(j, "x_bandwidth", hr_json_number(cal.x_bandwidth));
        json_object_object_add(j, "cpu_stream_gbps", hr_json_number(cal.cpu_stream_gbps));
        json_object_object_add(j, "gpu_stream_gbps", hr_json_number(cal.gpu_stream_gbps));
        json_object_object_add(
            j, "stream_share",
            cal.cpu_stream_gbps > 0 && cal.gpu_stream_gbps > 0
                ? hr_json_number(hr_split_stream_share(cal.cpu_stream_gbps, cal.gpu_stream_gbps))
                : NULL);
        json_object_object_add(j, "chosen_rows_cpu", json_object_new_int(info.rows_cpu));
        json_object_object_add(j, "chosen_split", json_object_new_double(info.split));
        json_object_object_add(j, "predicted_s_per_sweep", hr_json_number(info.predicted_s));
        json_object_object_add(j, "gpu_only_s_per_sweep", hr_json_number(info.gpu_only_s));
        /* the curve: 0-10 % by 0.5 %, then 10-40 % by 5 % (as --explain prints it) */
        double f[27], t[27];
        int k = 0;
        for (int i = 0; i <= 20; i++)
            f[k++] = 0.005 * i;
        for (int i = 3; i <= 8; i++)
            f[k++] = 0.05 * i;
        hr_split_model_curve(&m, f, k, t);
        for (int i = 0; i < k; i++) {
            json_object *p = json_object_new_object();
            json_object_object_add(p, "split", json_object_new_double(f[i]));
            json_object_object_add(p, "s_per_sweep", hr_json_number(t[i]));
            json_object_array_add(curve, p);
        }
        json_object_object_add(j, "curve", curve);
        json_object_object_add(j, "calibration_s", hr_json_number(cal.seconds));
        json_object_object_add(j, "tuning", hr_tuning_json(&o.tuning));
        json_object_object_add(j, "commit", json_object_new_string(hr_cli_commit()));
        rc = hr_cli_write_json_to(CMD, json_file ? &jout : NULL, j);
        json_object_put(j);
    }
    return rc;
}
