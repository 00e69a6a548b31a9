/* hetrelax tune: measure the GPU kernels' block/tile shapes and cache the best. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_flags.h"
#include "cuda/cuda_api.h"
#include "solver/solver_internal.h"

#define CMD      "tune"
#define MAX_LIST 32

static int split_list(const char *s, char **items, int max)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    int k = 0;
    for (char *p = strtok(buf, ","); p && k < max; p = strtok(NULL, ","))
        items[k++] = p;
    return k;
}

int hr_cmd_tune(int argc, char **argv)
{
    static const char *const precs[] = {"single", "double", "both", NULL};
    const char *nlist = "1024,4096,16384", *klist = "tuned", *cache = NULL, *json = NULL;
    int prec = 2, alpha = 1, device = 0;
    long iters = 0;
    hr_flagset fs;
    hr_flags_init(&fs, CMD, "tune [options]",
                  "Measures every candidate block/tile shape of GPU kernels on the 2-D Poisson problem\n"
                  "(median of 3 timed runs after a warm-up), checks that the deterministic kernels give\n"
                  "bitwise the same grid with every shape, and appends the fastest to the tuning cache.\n"
                  "Later GPU runs on the same device, kernel and precision take the entry with the\n"
                  "nearest n (HETRELAX_GPU_SHAPE=BXxBYxH overrides both).\n",
                  NULL);
    hr_flags_add(&fs, hr_flag_string("n", &nlist, "N[,N...]", "sizes (default 1024,4096,16384)"));
    hr_flags_add(&fs, hr_flag_choice("precision", &prec, precs, "(default both)"));
    hr_flags_add(&fs, hr_flag_string("kernel", &klist, "K[,K...]|all", "GPU kernels (default tuned)"));
    hr_flags_add(&fs, hr_flag_int("alpha", &alpha, 1, 1000000, "A", "for tb and async kernels (default 1)"));
    hr_flags_add(&fs, hr_flag_long("iters", &iters, 1, 1000000, "T",
                                   "sweeps per timing (default: about 4e9 point updates, 16..1000)"));
    hr_flags_placement(&fs, NULL, NULL, NULL, NULL, NULL, NULL, &device);
    hr_flags_add(&fs,
                 hr_flag_string("cache", &cache, "FILE",
                                "cache file (default $HETRELAX_TUNE_FILE, else\n"
                                "$XDG_CACHE_HOME/hetrelax/gpu-tune.txt or ~/.cache/hetrelax/gpu-tune.txt)"));
    hr_flags_output(&fs, &json, NULL, NULL, NULL, NULL);
    hr_flags_set_help(&fs, "json", "write the outcomes as JSON");
    int prc = hr_flags_parse(&fs, argc, argv);
    if (prc) return prc < 0 ? HR_EXIT_OK : prc;
    if (!hr_kernel_find(HR_BACKEND_GPU, NULL, 2))
        return hr_cli_usage_error(CMD, NULL, "this build has no CUDA support");

    int ns[MAX_LIST], nn = 0;
    char *items[MAX_LIST];
    int ni = split_list(nlist, items, MAX_LIST);
    for (int q = 0; q < ni; q++)
        if (hr_cli_int(CMD, "--n", items[q], 1, 1000000, &ns[nn++])) return HR_EXIT_USAGE;
    if (nn == 0) return hr_cli_usage_error(CMD, "--n", "no size given");
    const char *ks[MAX_LIST];
    int nk = 0;
    if (strcmp(klist, "all") == 0) {
        for (int q = 0; hr_kernel_at(q) && nk < MAX_LIST; q++)
            if (hr_kernel_at(q)->backend == HR_BACKEND_GPU) ks[nk++] = hr_kernel_at(q)->name;
    } else {
        ni = split_list(klist, items, MAX_LIST);
        for (int q = 0; q < ni; q++) {
            const hr_kernel_desc *k = hr_kernel_find(HR_BACKEND_GPU, items[q], 2);
            if (!k)
                return hr_cli_usage_error(CMD, "--kernel",
                                          "no GPU kernel '%s' (see poisson2d --list-kernels)", items[q]);
            ks[nk++] = k->name;
        }
    }
    if (hr_cuda_device_count() <= device)
        return hr_cli_usage_error(CMD, "--device", "%d: no such CUDA device (%d present)", device,
                                  hr_cuda_device_count());

    FILE *hout = (json && strcmp(json, "-") == 0) ? stderr : stdout;
    hr_atomic jout; /* opened before the measurements: a bad path is refused at once */
    const int json_file = json && strcmp(json, "-") != 0;
    if (json_file && (prc = hr_cli_open_output(CMD, "--json", json, &jout)) != 0) return prc;
    json_object *arr = json_object_new_array();
    int rc = HR_EXIT_OK;
    for (int p = 0; p < 2; p++) {
        if (prec != 2 && prec != p) continue;
        for (int a = 0; a < nn; a++)
            for (int q = 0; q < nk; q++) {
                hr_options o;
                hr_options_default(&o);
                o.n = ns[a];
                o.precision = (hr_precision)p;
                o.backend = HR_BACKEND_GPU;
                o.kernel = ks[q];
                o.alpha = alpha;
                o.device = device;
                char why[200];
                if (hr_options_validate(&o, why, sizeof why) != HR_OK) {
                    fprintf(stderr, "hetrelax %s: %s n=%d: %s (skipped)\n", CMD, ks[q], o.n, why);
                    continue;
                }
                long t = iters;
                if (t == 0) {
                    double pts = (double)o.n * (double)o.n;
                    t = (long)(4e9 / pts);
                    t = t < 16 ? 16 : (t > 1000 ? 1000 : t);
                }
                hr_cuda_tune_result r;
                char err[300];
                hr_status st = hr_cuda_tune(&o, t, cache, &r, err, sizeof err);
                if (st != HR_OK && st != HR_ERR_IO) {
                    fprintf(stderr, "hetrelax %s: %s n=%d %s: %s: %s\n", CMD, ks[q], o.n,
                            hr_precision_name(o.precision), hr_status_string(st), err);
                    rc = HR_EXIT_FAIL;
                    continue;
                }
                if (st == HR_ERR_IO) {
                    fprintf(stderr, "hetrelax %s: --cache: %s\n", CMD, err);
                    rc = HR_EXIT_FAIL;
                }
                fprintf(hout,
                        "%-16s n=%-6d %-6s best %4dx%-3dx%-4d %8.1f GB/s  default %8.1f GB/s (%d shapes, %ld "
                        "sweeps)\n",
                        ks[q], o.n, hr_precision_name(o.precision), r.bx, r.by, r.h, r.best_gbps,
                        r.default_gbps, r.candidates, t);
                json_object *j = json_object_new_object();
                char dev[128] = "";
                hr_gpu_name(device, dev, sizeof dev);
                json_object_object_add(j, "device", json_object_new_string(dev));
                json_object_object_add(j, "kernel", json_object_new_string(ks[q]));
                json_object_object_add(j, "n", json_object_new_int(o.n));
                json_object_object_add(j, "precision",
                                       json_object_new_string(hr_precision_name(o.precision)));
                json_object_object_add(j, "alpha", json_object_new_int(alpha));
                json_object_object_add(j, "bx", json_object_new_int(r.bx));
                json_object_object_add(j, "by", json_object_new_int(r.by));
                json_object_object_add(j, "h", json_object_new_int(r.h));
                json_object_object_add(j, "best_gbps", json_object_new_double(r.best_gbps));
                json_object_object_add(j, "default_gbps", json_object_new_double(r.default_gbps));
                json_object_object_add(j, "candidates", json_object_new_int(r.candidates));
                json_object_object_add(j, "sweeps", json_object_new_int64(t));
                json_object_object_add(j, "cache", json_object_new_string(r.cache_path));
                json_object_array_add(arr, j);
            }
    }
    if (json) {
        int jr = hr_cli_write_json_to(CMD, json_file ? &jout : NULL, arr);
        if (jr && rc == HR_EXIT_OK) rc = jr;
    }
    json_object_put(arr);
    return rc;
}
