/* hetrelax tune: measure the GPU kernels' block/tile shapes (2-D and 3-D), or the 3-D CPU
 * pencil kernel's blocks and stores (--backend cpu-threads), and cache the best. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_flags.h"
#include "runtime/cuda/cuda_api.h" /* hri_cuda_tune: the measuring itself has no public API yet */
#include "tuning_cli.h"

#define CMD      "tune"
#define MAX_LIST 32

/* Splits "a,b,c" into items (pointing into a static copy): every item must be there
 * ("16,,32", a leading or trailing comma: refused naming the flag). Count, or -1 (printed). */
static int split_list(const char *flag, const char *s, char **items, int max)
{
    static char buf[2][1024];
    static int which;
    char *copy = buf[which ^= 1]; /* the kernel list stays valid while the sizes are split */
    if (snprintf(copy, sizeof buf[0], "%s", s) >= (int)sizeof buf[0]) {
        hr_cli_usage_error(CMD, flag, "list too long");
        return -1;
    }
    int k = 0;
    for (char *p = copy;; k++) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (!*p) {
            hr_cli_usage_error(CMD, flag, "empty item in '%s' (give N[,N...])", s);
            return -1;
        }
        if (k == max) {
            hr_cli_usage_error(CMD, flag, "more than %d items in '%s'", max, s);
            return -1;
        }
        items[k] = p;
        if (!comma) return k + 1;
        p = comma + 1;
    }
}

/* The cache file must be writable before minutes of measuring: an existing file we may
 * append to, or a new one in an existing folder we may write. A named path's folders are
 * never created. 0 or exit 2 (printed). */
static int check_cache(const char *path, const char *flag)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return hr_cli_usage_error(CMD, flag, "'%s': %s", path, strerror(EISDIR));
        if (access(path, W_OK) != 0) return hr_cli_usage_error(CMD, flag, "'%s': %s", path, strerror(errno));
        return 0;
    }
    if (errno != ENOENT) return hr_cli_usage_error(CMD, flag, "'%s': %s", path, strerror(errno));
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (stat(dir, &st) != 0)
        return hr_cli_usage_error(CMD, flag, "'%s': folder '%s': %s (folders are not created)", path, dir,
                                  strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return hr_cli_usage_error(CMD, flag, "'%s': '%s' is %s", path, dir, strerror(ENOTDIR));
    if (access(dir, W_OK | X_OK) != 0)
        return hr_cli_usage_error(CMD, flag, "'%s': folder '%s': %s", path, dir, strerror(errno));
    return 0;
}

/* The kernel `name` of backend b that runs dim-D problems, through the public kernel table. */
static int find_kernel(hr_backend b, const char *name, int dim, hr_kernel_info *out)
{
    const unsigned need = dim == 3 ? HR_CAP_3D : HR_CAP_2D;
    for (int i = 0; i < hr_kernel_count(); i++)
        if (hr_kernel_info_at(i, out) == HR_OK && out->backend == b && (out->caps & need) &&
            strcmp(out->name, name) == 0)
            return 1;
    return 0;
}

typedef struct tune_size {
    int n, nx, ny, nz; /* nx.. 0: n */
} tune_size;

static void size_name(int dim, const tune_size *z, char *buf, size_t len)
{
    if (z->nx || z->ny || z->nz)
        snprintf(buf, len, dim == 3 ? "%dx%dx%d" : "%dx%d", z->nx ? z->nx : z->n, z->ny ? z->ny : z->n,
                 z->nz ? z->nz : z->n);
    else
        snprintf(buf, len, "%d", z->n);
}

int hr_cmd_tune(int argc, char **argv)
{
    static const char *const precs[] = {"single", "double", "both", NULL};
    const char *nlist = NULL, *klist = "tuned", *cache = NULL, *json = NULL;
    int prec = 2, alpha = 1, device = 0, dim = 2, nx = 0, ny = 0, nz = 0, threads = 0;
    hr_backend backend = HR_BACKEND_GPU;
    hr_bind bind = HR_BIND_NONE;
    long iters = 0;
    hr_flagset fs;
    static hr_tuning tune; /* static: the flag table points into it */
    static hr_tuning_flags tf;
    hr_flags_init(&fs, CMD, "tune [options]",
                  "Measures every candidate block/tile shape of GPU kernels on the 2-D or 3-D Poisson\n"
                  "problem (median of 3 timed runs after a warm-up), checks that the deterministic\n"
                  "kernels give bitwise the same grid with every shape, and appends the fastest to the\n"
                  "tuning cache. Later GPU runs on the same device, kernel, precision and dimension take\n"
                  "the entry with the nearest size (--tuning gpu_shape=BXxBYxH, HETRELAX_GPU_SHAPE,\n"
                  "overrides both).\n"
                  "--backend cpu-threads measures the 3-D CPU kernel pencil instead (pencil heights,\n"
                  "ordinary and streaming stores) for the thread count of later runs.\n",
                  NULL);
    hr_flags_add(&fs, hr_flag_int("dim", &dim, 2, 3, "2|3", "problem dimension (default 2; 3 with --nz)"));
    hr_flags_add(&fs, hr_flag_string("n", &nlist, "N[,N...]",
                                     "sizes per axis (default 1024,4096,16384 in 2-D, 128,256,512 in 3-D)"));
    hr_flags_add(&fs, hr_flag_int("nx", &nx, 1, 1000000, "X", "one size with these extents (default N)"));
    hr_flags_add(&fs, hr_flag_int("ny", &ny, 1, 1000000, "Y", "(with --nx/--nz)"));
    hr_flags_add(&fs, hr_flag_int("nz", &nz, 1, 1000000, "Z", "(3-D)"));
    hr_flags_add(&fs, hr_flag_choice("precision", &prec, precs, "(default both)"));
    hr_flags_add(&fs,
                 hr_flag_string("kernel", &klist, "K[,K...]|all",
                                "GPU kernels (default tuned; all: every tunable kernel of the dimension)"));
    hr_flags_add(&fs, hr_flag_int("alpha", &alpha, 1, 1000000, "A", "for tb and async kernels (default 1)"));
    hr_flags_add(&fs, hr_flag_long("iters", &iters, 1, 1000000, "T",
                                   "sweeps per timing (default: about 4e9 point updates, 16..1000)"));
    hr_flags_placement(&fs, &backend, NULL, &threads, NULL, NULL, &bind, &device);
    hr_flags_set_help(&fs, "backend", "gpu (default) or cpu-threads (3-D pencil kernel)");
    hr_flags_add(&fs,
                 hr_flag_string("cache", &cache, "FILE",
                                "cache file (default the knob tune_file, $HETRELAX_TUNE_FILE, else\n"
                                "$XDG_CACHE_HOME/hetrelax/gpu-tune.txt or ~/.cache/hetrelax/gpu-tune.txt)"));
    hr_flags_output(&fs, &json, NULL, NULL, NULL, NULL);
    hr_flags_set_help(&fs, "json", "write the outcomes as JSON");
    hr_flags_tuning(&fs, &tf, &tune, NULL);
    int prc = hr_flags_parse(&fs, argc, argv);
    if (prc) return prc < 0 ? HR_EXIT_OK : prc;
    if (nz && hr_flags_seen(&fs, "dim") && dim != 3)
        return hr_cli_usage_error(CMD, "--nz", "needs --dim 3 (or no --dim)");
    if (nz) dim = 3;
    if (backend == HR_BACKEND_AUTO) backend = HR_BACKEND_GPU;
    const int cpu = backend == HR_BACKEND_CPU_THREADS;
    if (backend != HR_BACKEND_GPU && !cpu)
        return hr_cli_usage_error(CMD, "--backend", "%s: tune measures gpu or cpu-threads kernels",
                                  hr_backend_name(backend));
    if (cpu && dim != 3)
        return hr_cli_usage_error(CMD, "--dim",
                                  "%d: the CPU tuner measures the 3-D pencil kernel (give --dim 3)", dim);
    /* without a GPU the CPU tuner is what can run: say so */
    const char *cpu_hint = hr_flags_seen(&fs, "backend") ? ""
                                                         : " (to tune the 3-D CPU pencil kernel instead: "
                                                           "--backend cpu-threads --dim 3)";
    if (!cpu && !hr_kernel_default(HR_BACKEND_GPU, 2) && !hr_kernel_default(HR_BACKEND_GPU, 3))
        return hr_cli_usage_error(CMD, NULL, "this build has no CUDA support%s", cpu_hint);
    if (!cpu && !hr_kernel_default(HR_BACKEND_GPU, dim))
        return hr_cli_usage_error(CMD, "--dim", "%d: no GPU kernel runs %d-D problems in this build", dim,
                                  dim);
    if (!cpu && (hr_flags_seen(&fs, "threads") || hr_flags_seen(&fs, "bind")))
        return hr_cli_usage_error(CMD, hr_flags_seen(&fs, "threads") ? "--threads" : "--bind",
                                  "for --backend cpu-threads only");
    if (cpu && hr_flags_seen(&fs, "device"))
        return hr_cli_usage_error(CMD, "--device", "for --backend gpu only");
    if (cpu && !hr_flags_seen(&fs, "kernel")) klist = "pencil";

    tune_size sizes[MAX_LIST];
    int nn = 0;
    char *items[MAX_LIST];
    if (nx || ny || nz) {
        if (nlist) return hr_cli_usage_error(CMD, "--n", "give either --n N[,N...] or --nx/--ny/--nz");
        int n0 = nx ? nx : ny ? ny : nz;
        sizes[nn++] = (tune_size){n0, nx ? nx : n0, ny ? ny : n0, dim == 3 ? (nz ? nz : n0) : 0};
    } else {
        if (!nlist) nlist = dim == 3 ? "128,256,512" : "1024,4096,16384";
        int ni = split_list("--n", nlist, items, MAX_LIST);
        if (ni < 0) return HR_EXIT_USAGE;
        for (int q = 0; q < ni; q++) {
            sizes[nn] = (tune_size){0, 0, 0, 0};
            if (hr_cli_int(CMD, "--n", items[q], 1, 1000000, &sizes[nn++].n)) return HR_EXIT_USAGE;
        }
        if (nn == 0) return hr_cli_usage_error(CMD, "--n", "no size given");
    }
    hr_kernel_info ks[MAX_LIST];
    int nk = 0;
    if (strcmp(klist, "all") == 0) {
        const unsigned need = (dim == 3 ? HR_CAP_3D : HR_CAP_2D) | HR_CAP_TUNABLE;
        for (int q = 0; q < hr_kernel_count() && nk < MAX_LIST; q++)
            if (hr_kernel_info_at(q, &ks[nk]) == HR_OK && ks[nk].backend == backend &&
                (ks[nk].caps & need) == need)
                nk++;
        if (nk == 0)
            return hr_cli_usage_error(CMD, "--kernel", "all: no tunable %d-D %s kernel", dim,
                                      hr_backend_name(backend));
    } else {
        int ni = split_list("--kernel", klist, items, MAX_LIST);
        if (ni < 0) return HR_EXIT_USAGE;
        for (int q = 0; q < ni; q++)
            if (!find_kernel(backend, items[q], dim, &ks[nk++]) || (cpu && strcmp(items[q], "pencil") != 0))
                return hr_cli_usage_error(CMD, "--kernel",
                                          "no %d-D %s kernel '%s'%s (see poisson%dd --list-kernels)", dim,
                                          cpu ? "tunable cpu-threads" : "GPU", items[q],
                                          cpu ? " (the CPU tuner measures pencil)" : "", dim);
    }
    hr_sysinfo si;
    hr_sysinfo_get(&si);
    if (!cpu && si.gpus <= device)
        return hr_cli_usage_error(CMD, si.gpus || hr_flags_seen(&fs, "device") ? "--device" : "--backend",
                                  "gpu: no CUDA device %d (%d present)%s", device, si.gpus,
                                  si.gpus ? "" : cpu_hint);
    /* where the results go, checked before the measuring (the default cache folder is
     * created when missing; a path the user named is not) */
    const char *env_cache = tune.tune_file;
    if (cache && !*cache) return hr_cli_usage_error(CMD, "--cache", "empty path");
    if (cache && (prc = check_cache(cache, "--cache")) != 0) return prc;
    if (!cache && env_cache && *env_cache &&
        (prc = check_cache(env_cache, "tune_file (HETRELAX_TUNE_FILE)")) != 0)
        return prc;

    FILE *hout = (json && strcmp(json, "-") == 0) ? stderr : stdout;
    hr_atomic jout; /* opened before the measurements: a bad path is refused at once */
    const int json_file = json && strcmp(json, "-") != 0;
    if (json_file && (prc = hr_cli_open_output(CMD, "--json", json, &jout)) != 0) return prc;
    json_object *arr = json_object_new_array();
    int rc = HR_EXIT_OK;
    char cache_used[512] = ""; /* where the results went, said at the end */
    for (int p = 0; p < 2; p++) {
        if (prec != 2 && prec != p) continue;
        for (int a = 0; a < nn; a++)
            for (int q = 0; q < nk; q++) {
                const tune_size *z = &sizes[a];
                hr_options o;
                hr_options_default(&o);
                o.tuning = tune;
                o.dim = dim;
                o.n = z->n;
                o.nx = z->nx;
                o.ny = z->ny;
                o.nz = z->nz;
                o.precision = p ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
                o.backend = backend;
                o.threads = threads;
                o.bind = bind;
                o.kernel = ks[q].name;
                o.method = (ks[q].caps & HR_CAP_REDBLACK) ? HR_METHOD_REDBLACK : HR_METHOD_JACOBI;
                o.alpha = alpha;
                o.device = device;
                char why[200], zname[64];
                size_name(dim, z, zname, sizeof zname);
                if (hr_options_validate(&o, why, sizeof why) != HR_OK) {
                    fprintf(stderr, "hetrelax %s: %s n=%s: %s (skipped)\n", CMD, o.kernel, zname, why);
                    continue;
                }
                long t = iters;
                if (t == 0) {
                    const double e = z->nx ? z->nx : z->n, f = z->ny ? z->ny : z->n, g = z->nz ? z->nz : z->n;
                    const double pts = e * f * (dim == 3 ? g : 1.0);
                    t = (long)(4e9 / pts);
                    t = t < 16 ? 16 : (t > 1000 ? 1000 : t);
                }
                hr_cuda_tune_result r;
                hr_cpu_tune_result cr;
                memset(&r, 0, sizeof r);
                memset(&cr, 0, sizeof cr);
                char err[300] = "";
                hr_status st;
                /* a measurement takes seconds to minutes: say what is being measured */
                fprintf(hout, "measuring %s n=%s %s ...\n", o.kernel, zname, hr_precision_name(o.precision));
                fflush(hout);
                if (cpu) {
                    st = hr_cpu_tune(&o, iters, cache, &cr, err, sizeof err);
                    r.bx = cr.block[0]; /* the pencil: x (full rows), y rows, z planes per thread */
                    r.by = cr.block[1];
                    r.h = cr.block[2];
                    r.best_gbps = cr.best_gbps;
                    r.default_gbps = cr.default_gbps;
                    r.candidates = cr.candidates;
                    snprintf(r.cache_path, sizeof r.cache_path, "%s", cr.cache_path);
                } else {
                    st = hri_cuda_tune(&o, t, cache, &r, err, sizeof err);
                }
                if (st != HR_OK && st != HR_ERR_IO) {
                    fprintf(stderr, "hetrelax %s: %s n=%s %s: %s: %s\n", CMD, o.kernel, zname,
                            hr_precision_name(o.precision), hr_status_string(st), err);
                    rc = HR_EXIT_FAIL;
                    continue;
                }
                if (st == HR_ERR_IO) {
                    fprintf(stderr, "hetrelax %s: --cache: %s\n", CMD, err);
                    rc = HR_EXIT_FAIL;
                }
                fprintf(hout,
                        "%-16s n=%-12s %-6s best %4dx%-3dx%-4d%s %8.1f GB/s  default %8.1f GB/s (%d shapes",
                        o.kernel, zname, hr_precision_name(o.precision), r.bx, r.by, r.h,
                        cpu ? (cr.stream ? " streaming" : " ordinary ") : "", r.best_gbps, r.default_gbps,
                        r.candidates);
                if (cpu)
                    fprintf(hout, ")\n");
                else
                    fprintf(hout, ", %ld sweeps)\n", t);
                fflush(hout);
                if (r.cache_path[0]) snprintf(cache_used, sizeof cache_used, "%s", r.cache_path);
                json_object *j = json_object_new_object();
                char dev[128] = "";
                if (cpu)
                    snprintf(dev, sizeof dev, "%s", si.cpu_model);
                else
                    hr_gpu_name(device, dev, sizeof dev);
                json_object_object_add(j, "device", hr_json_text(dev));
                json_object_object_add(j, "backend", json_object_new_string(hr_backend_name(backend)));
                json_object_object_add(j, "tuning", hr_tuning_json(&o.tuning));
                json_object_object_add(j, "kernel", json_object_new_string(o.kernel));
                json_object_object_add(j, "dim", json_object_new_int(dim));
                json_object_object_add(j, "n", json_object_new_int(z->n));
                json_object_object_add(j, "nx", json_object_new_int(z->nx ? z->nx : z->n));
                json_object_object_add(j, "ny", json_object_new_int(z->ny ? z->ny : z->n));
                if (dim == 3) json_object_object_add(j, "nz", json_object_new_int(z->nz ? z->nz : z->n));
                json_object_object_add(j, "precision",
                                       json_object_new_string(hr_precision_name(o.precision)));
                json_object_object_add(j, "alpha", json_object_new_int(alpha));
                json_object_object_add(j, "bx", json_object_new_int(r.bx));
                json_object_object_add(j, "by", json_object_new_int(r.by));
                json_object_object_add(j, "h", json_object_new_int(r.h));
                json_object_object_add(j, "best_gbps", json_object_new_double(r.best_gbps));
                json_object_object_add(j, "default_gbps", json_object_new_double(r.default_gbps));
                json_object_object_add(j, "candidates", json_object_new_int(r.candidates));
                if (cpu) {
                    json_object_object_add(j, "threads", json_object_new_int(threads));
                    json_object_object_add(j, "stream", json_object_new_boolean(cr.stream));
                } else {
                    json_object_object_add(j, "sweeps", json_object_new_int64(t));
                }
                json_object_object_add(j, "cache", hr_json_text(r.cache_path));
                json_object_array_add(arr, j);
            }
    }
    if (cache_used[0]) fprintf(hout, "cache     %s\n", cache_used);
    if (json) {
        int jr = hr_cli_write_json_to(CMD, json_file ? &jout : NULL, arr);
        if (jr && rc == HR_EXIT_OK) rc = jr;
    }
    json_object_put(arr);
    return rc;
}
