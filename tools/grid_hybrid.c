/*
 * poisson2d/poisson3d --backend hybrid (docs/hybrid.md): rows (planes) split between CPU
 * threads and a GPU. The flags, the checks before the run, and --explain after it (the
 * model's curve, the chosen split, predicted against measured time per sweep).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grid_cmd.h"
#include "hetrelax/hybrid.h"
#include "mpi_glue.h"

/* --split auto|stream|F: auto and stream are the library's negative markers. */
static int parse_split(const char *cmd, const hr_flag *f, const char *arg)
{
    double *split = f->target;
    if (strcmp(arg, "auto") == 0) {
        *split = HR_SPLIT_AUTO;
        return 0;
    }
    if (strcmp(arg, "stream") == 0) {
        *split = HR_SPLIT_STREAM;
        return 0;
    }
    char *end = NULL;
    double v = strtod(arg, &end);
    if (!*arg || *end || !(v >= 0.0 && v <= 1.0))
        return hr_flag_error(cmd, f, "'%s': want a fraction in [0, 1], auto or stream", arg);
    *split = v;
    return 0;
}

void hr_grid_hybrid_flags(hr_flagset *fs, grid_args *a)
{
    static const char *const schedules[] = {"nested", "naive", NULL}; /* HR_SPLIT_NESTED, HR_SPLIT_NAIVE */
    static const char *const seconds[] = {"gpu", "cpu", NULL};        /* HR_SPLIT_GPU, HR_SPLIT_CPU */
    hr_options *o = &a->o;
    hr_flags_group(fs, "hybrid CPU + GPU (--backend hybrid, docs/hybrid.md)");
    hr_flags_add(fs, hr_flag_custom("split", &o->split, NULL, parse_split, "auto|stream|F",
                                    "fraction of rows (3-D: planes) on the CPU; auto (default): the model's\n"
                                    "best, 0 unless >= 1 % faster; stream: CPU_bw / (CPU_bw + GPU_bw)"));
    hr_flags_add(fs, hr_flag_int("split-ghost", &o->split_ghost, 1, 4096, "G",
                                 "rows exchanged every G sweeps (default 1, overlapped)"));
    hr_flags_add(fs, hr_flag_choice("schedule", &o->split_schedule, schedules,
                                    "CPU part: nested teams (default) or naive (Sourouri et al.)"));
    hr_flags_add(fs, hr_flag_int("boundary-threads", &o->split_boundary_threads, 1, 4096, "N",
                                 "nested: threads of the boundary team (default: automatic)"));
    hr_flags_add(fs, hr_flag_choice("split-second", &o->split_second, seconds,
                                    "the second placement (default gpu; cpu: a CPU team, for tests)"));
    hr_flags_add(fs, hr_flag_int("gpus", &o->gpus, 1, 16, "N",
                                 "--backend gpu on N GPUs of this process (devices --device..+N-1):\n"
                                 "equal slabs of rows (3-D: planes), boundary rows exchanged each sweep;\n"
                                 "--method redblack|sor --kernel rb-mgpu: red-black on N GPUs;\n"
                                 "--method mg|cg: the general engine's slabs, a thread per GPU;\n"
                                 "with --backend hybrid --split-second cpu: N CPU teams (tests)"));
    hr_flags_add(fs, hr_flag_switch("explain", &a->explain, 1,
                                    "print the model's curve, the chosen split and predicted vs\n"
                                    "measured time per sweep"));
}

int hr_grid_gpus_prepare(grid_args *a, hr_flagset *fs, int use_mpi)
{
    const char *CMD = hr_grid_cmd;
    hr_options *o = &a->o;
    if (!hr_flags_seen(fs, "gpus") || o->gpus <= 1) return 0;
    if (use_mpi || hr_mpi_cli_size() > 1)
        return hr_cli_usage_error(CMD, "--gpus",
                                  "one process drives several GPUs: under MPI run one rank per GPU");
    if (o->kernel && (o->backend == HR_BACKEND_AUTO || o->backend == HR_BACKEND_GPU))
        for (int i = 0; i < hr_kernel_count(); i++) { /* a GPU kernel that runs on N GPUs itself */
            hr_kernel_info k;
            if (hr_kernel_info_at(i, &k) == HR_OK && k.backend == HR_BACKEND_GPU && (k.caps & HR_CAP_GPUS) &&
                strcmp(k.name, o->kernel) == 0) {
                o->backend = HR_BACKEND_GPU;
                return 0;
            }
        }
    if (o->backend == HR_BACKEND_AUTO || o->backend == HR_BACKEND_GPU) {
        o->backend = HR_BACKEND_HYBRID; /* the chain lives in the hybrid module */
        o->split_second = HR_SPLIT_GPU;
    } else if (o->backend != HR_BACKEND_HYBRID) {
        return hr_cli_usage_error(CMD, "--gpus", "needs --backend gpu (not %s)", hr_backend_name(o->backend));
    }
    if (o->kernel) return hr_cli_usage_error(CMD, "--gpus", "runs its own kernel: drop --kernel");
    if (o->method != HR_METHOD_JACOBI) return hr_cli_usage_error(CMD, "--gpus", "Jacobi only so far");
    if (hr_flags_seen(fs, "split") || hr_flags_seen(fs, "boundary-threads"))
        return hr_cli_usage_error(CMD, "--gpus", "equal parts on GPUs: drop --split and --boundary-threads");
    return 0;
}

int hr_grid_hybrid_check(const grid_args *a, hr_flagset *fs, hr_backend eb, int gpus)
{
    const char *CMD = hr_grid_cmd;
    static const char *const own[] = {"split",        "split-ghost", "schedule", "boundary-threads",
                                      "split-second", "explain"};
    if (eb != HR_BACKEND_HYBRID) {
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            if (hr_flags_seen(fs, own[i]))
                return hr_cli_usage_error(CMD, NULL, "--%s: needs --backend hybrid", own[i]);
        return 0;
    }
    if (a->o.gpus > 1 && a->o.split_second == HR_SPLIT_GPU && a->o.device + a->o.gpus > gpus)
        return hr_cli_usage_error(CMD, "--gpus", "%d GPUs from device %d, but %d CUDA device(s) present",
                                  a->o.gpus, a->o.device, gpus);
    if (a->o.split_second == HR_SPLIT_GPU && gpus <= a->o.device)
        return hr_cli_usage_error(
            CMD, "--backend",
            "hybrid needs a CUDA device (found %d; --split-second cpu splits between two "
            "CPU teams)",
            gpus);
    return 0;
}

json_object *hr_grid_hybrid_report(const grid_args *a, const hr_solver *s, const hr_result *r)
{
    hr_hybrid_info in;
    if (hr_solver_hybrid_info(s, &in) != HR_OK) return NULL;
    if (in.fallback_sweep > 0 && !a->explain)
        fprintf(hr_grid_out,
                "hybrid: auto's split of %d rows ran %.4g s per sweep, slower than GPU-only (%.4g s); "
                "GPU-only from sweep %ld on\n",
                in.fallback_rows_cpu, in.fallback_split_s, in.cal.gpu_alone_s, in.fallback_sweep);
    if (a->explain) {
        char buf[8192];
        hr_hybrid_explain(&in, r->time_per_sweep_s, buf, sizeof buf);
        fputs(buf, hr_grid_out);
    }
    json_object *j = json_object_new_object();
    json_object_object_add(j, "rows", json_object_new_int(in.rows));
    json_object_object_add(j, "rows_cpu", json_object_new_int(in.rows_cpu));
    json_object_object_add(j, "parts",
                           json_object_new_int(a->o.gpus > 1           ? a->o.gpus
                                               : in.rows_cpu % in.rows ? 2
                                                                       : 1));
    json_object_object_add(j, "split", json_object_new_double(in.split));
    json_object_object_add(j, "chosen_by",
                           json_object_new_string(in.auto_split == 1   ? "model"
                                                  : in.auto_split == 2 ? "stream"
                                                                       : "given"));
    json_object_object_add(j, "ghost", json_object_new_int(in.ghost));
    json_object_object_add(j, "schedule",
                           json_object_new_string(in.schedule == HR_SPLIT_NAIVE ? "naive" : "nested"));
    json_object_object_add(j, "second", json_object_new_string(in.second == HR_SPLIT_CPU ? "cpu" : "gpu"));
    json_object_object_add(j, "cpu_threads", json_object_new_int(in.cpu_threads));
    json_object_object_add(j, "boundary_threads", json_object_new_int(in.boundary_threads));
    json_object_object_add(j, "exchanges", json_object_new_int64(in.exchanges));
    json_object_object_add(j, "wait_s", hr_json_number(in.wait_s));
    json_object_object_add(j, "measured_s_per_sweep", hr_json_number(r->time_per_sweep_s));
    if (in.fallback_sweep > 0) { /* auto's watch gave the split up */
        json_object_object_add(j, "fallback_sweep", json_object_new_int64(in.fallback_sweep));
        json_object_object_add(j, "fallback_rows_cpu", json_object_new_int(in.fallback_rows_cpu));
        json_object_object_add(j, "fallback_split_s", hr_json_number(in.fallback_split_s));
    }
    if (in.have_model) {
        json_object_object_add(j, "predicted_s_per_sweep", hr_json_number(in.predicted_s));
        json_object_object_add(j, "gpu_only_predicted_s", hr_json_number(in.gpu_only_s));
        json_object_object_add(j, "t_cpu_s", hr_json_number(in.cal.t_cpu));
        json_object_object_add(j, "t_gpu_s", hr_json_number(in.cal.t_gpu));
        json_object_object_add(j, "x_exposed_s", hr_json_number(in.cal.x_exposed));
        json_object_object_add(j, "calibration_s", hr_json_number(in.cal.seconds));
    }
    return j;
}
