/* hetrelax info: cores, threads, GPUs and the memory bandwidth measured now. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_flags.h"
#include "tuning_cli.h"

int hr_cmd_info(int argc, char **argv)
{
    const char *json = NULL;
    int threads = 0, size_mib = 0, repeats = 5, measure = 1, list_tuning = 0;
    static hr_tuning tune; /* static: the flag table points into it */
    static hr_tuning_flags tf;
    static const char *const own[] = {"hugepages", NULL};
    hr_flagset fs;
    hr_flags_init(&fs, "info",
                  "info [--json FILE|-] [--threads P] [--size MIB] [--repeats R] [--no-bandwidth]",
                  "Prints the machine's cores and GPUs and measures memory bandwidth:\n"
                  "host STREAM-style copy (2 words moved per element) and triad (3 words),\n"
                  "best of R runs after one discarded warm-up; GPU device-to-device copy\n"
                  "(bytes read + written). GB/s = bytes * 1e-9 / s.\n",
                  NULL);
    hr_flags_output(&fs, &json, NULL, NULL, NULL, NULL);
    hr_flags_set_help(&fs, "json", "write the facts as JSON ('-' for stdout)");
    hr_flags_add(&fs,
                 hr_flag_int("threads", &threads, 1, 4096, "P", "host threads for the probe (default: all)"));
    hr_flags_add(&fs,
                 hr_flag_int("size", &size_mib, 0, 65536, "MIB",
                             "bytes per array in MiB (default 0: twice the last-level cache, so the copy "
                             "streams from memory)"));
    hr_flags_add(&fs, hr_flag_int("repeats", &repeats, 1, 1000, "R", "timed runs (default 5)"));
    hr_flags_add(&fs, hr_flag_switch("no-bandwidth", &measure, 0, "skip the bandwidth measurements"));
    hr_flags_add(&fs, hr_flag_switch("list-tuning", &list_tuning, 1,
                                     "list every tuning knob: its HETRELAX_* variable, flag, default and\n"
                                     "value now (docs/configuration.md)"));
    hr_flags_tuning(&fs, &tf, &tune, own);
    int rc = hr_flags_parse(&fs, argc, argv);
    if (rc) return rc < 0 ? HR_EXIT_OK : rc;
    if (list_tuning && !json) {
        hr_cli_listing_output();
        hr_tuning_print(stdout, &tune, 1);
        return HR_EXIT_OK;
    }
    /* the probe holds three arrays (copy: a = b; triad: a = b + s c) */
    if (measure && size_mib > 0) {
        double need = 3.0 * (double)((size_t)size_mib << 20), avail = (double)hr_cli_available_bytes();
        char b1[32], b2[32];
        if (need > avail)
            return hr_cli_usage_error("info", "--size", "%d MiB: the probe's 3 arrays need %s, %s available",
                                      size_mib, hr_cli_bytes(need, b1, sizeof b1),
                                      hr_cli_bytes(avail, b2, sizeof b2));
    }
    hr_atomic jout;
    int json_file = json && strcmp(json, "-") != 0;
    if (json_file && (rc = hr_cli_open_output("info", "--json", json, &jout)) != 0) return rc;

    /* human-readable lines go to stderr when the JSON goes to stdout */
    FILE *hout = (json && strcmp(json, "-") == 0) ? stderr : stdout;
    hr_sysinfo si;
    hr_sysinfo_get(&si);
    fprintf(hout, "hetrelax %s\n", hr_version_string());
    fprintf(hout, "cpu       %s\n", si.cpu_model);
    fprintf(hout, "cores     %d physical, %d logical, %d NUMA node(s)%s\n", si.cores, si.pus, si.numa_nodes,
            si.have_hwloc ? "" : " (hwloc not compiled in)");
    fprintf(hout, "cuda      %s, %d GPU(s)\n", si.have_cuda ? "compiled in" : "not compiled in", si.gpus);
    if (list_tuning)
        hr_tuning_print(hout, &tune, 1);
    else
        hr_tuning_print(hout, &tune, 0);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "version", json_object_new_string(hr_version_string()));
    json_object_object_add(o, "cpu_model", hr_json_text(si.cpu_model));
    json_object_object_add(o, "cores", json_object_new_int(si.cores));
    json_object_object_add(o, "threads", json_object_new_int(si.pus));
    json_object_object_add(o, "numa_nodes", json_object_new_int(si.numa_nodes));
    json_object_object_add(o, "cuda", json_object_new_boolean(si.have_cuda));
    json_object_object_add(o, "tuning", hr_tuning_list_json(&tune));
    json_object *gpus = json_object_new_array();
    for (int g = 0; g < si.gpus; g++) {
        char name[96];
        hr_gpu_name(g, name, sizeof name);
        json_object *go = json_object_new_object();
        json_object_object_add(go, "name", hr_json_text(name));
        fprintf(hout, "gpu %d     %s\n", g, name);
        if (measure) {
            double bw = 0.0;
            if (hr_measure_device_bandwidth(g, 0, repeats, &bw) == HR_OK) {
                fprintf(hout, "          device copy %.1f GB/s (read + write bytes)\n", bw);
                json_object_object_add(go, "copy_gbps", json_object_new_double(bw));
            }
        }
        json_object_array_add(gpus, go);
    }
    json_object_object_add(o, "gpus", gpus);
    rc = HR_EXIT_OK;
    if (measure) {
        hr_bandwidth bw;
        hr_status st = hr_measure_host_bandwidth_tuned(threads, HR_BIND_NONE, (size_t)size_mib << 20, repeats,
                                                       &tune, &bw);
        if (st != HR_OK) {
            fprintf(stderr, "hetrelax info: bandwidth probe failed: %s\n", hr_status_string(st));
            rc = HR_EXIT_FAIL;
        } else {
            fprintf(hout,
                    "memory    copy %.2f GB/s, triad %.2f GB/s (%d threads, %zu MiB arrays, best of %d;\n"
                    "          copy counts 16 B/element, triad 24 B/element)\n",
                    bw.copy_gbps, bw.triad_gbps, bw.threads, bw.bytes >> 20, bw.repeats);
            json_object *b = json_object_new_object();
            json_object_object_add(b, "copy_gbps", json_object_new_double(bw.copy_gbps));
            json_object_object_add(b, "triad_gbps", json_object_new_double(bw.triad_gbps));
            json_object_object_add(b, "threads", json_object_new_int(bw.threads));
            json_object_object_add(b, "array_bytes", json_object_new_int64((int64_t)bw.bytes));
            json_object_object_add(b, "repeats", json_object_new_int(bw.repeats));
            json_object_object_add(b, "byte_model",
                                   json_object_new_string("copy: 2 x 8 B per element; triad: 3 x 8 B"));
            json_object_object_add(o, "host_bandwidth", b);
        }
    }
    if (json && rc == HR_EXIT_OK)
        rc = hr_cli_write_json_to("info", json_file ? &jout : NULL, o);
    else if (json_file)
        hr_atomic_abort(&jout);
    json_object_put(o);
    return rc;
}
