#include "core/tune_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/solver_internal.h"
#include "core/timer.h"
#include "core/tuning.h"

/* The default cache path; 1: a file the user named (t->tune_file), 2: the cache folder's
 * file (its folders may be created), 0: none. */
static int default_path(const hr_tuning *t, char *buf, size_t size)
{
    if (t && t->tune_file && *t->tune_file)
        return snprintf(buf, size, "%s", t->tune_file) < (int)size ? 1 : 0;
    char dir[512];
    if (!hri_tuning_cache_dir(t, dir, sizeof dir)) return 0;
    return snprintf(buf, size, "%s/gpu-tune.txt", dir) < (int)size ? 2 : 0;
}

int hri_tune_cache_default(const hr_tuning *t, char *buf, size_t size)
{
    return default_path(t, buf, size) != 0;
}

FILE *hri_tune_cache_append(const char *given, const hr_tuning *t, char *path, size_t size, int *err)
{
    int kind = 1;
    *err = 0;
    if (given && *given) {
        if (snprintf(path, size, "%s", given) >= (int)size) {
            *err = ENAMETOOLONG;
            return NULL;
        }
    } else if ((kind = default_path(t, path, size)) == 0) {
        path[0] = '\0';
        *err = ENOENT; /* no home directory: nowhere to keep it */
        return NULL;
    }
    /* a path the user named is used as given: a missing folder is a mistake to report,
     * not one to create (as root, anywhere) */
    if (kind == 2 && hri_mkdir_parents(path) != 0) {
        *err = errno ? errno : EIO;
        return NULL;
    }
    errno = 0;
    FILE *f = fopen(path, "a");
    if (!f) *err = errno ? errno : EIO;
    return f;
}

int hri_mkdir_parents(const char *path)
{
    char tmp[512];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        errno = 0;
        *p = '/';
    }
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double hri_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

hr_status hri_tune_time_sweeps(hr_solver *s, long sweeps, double *gbps)
{
    double t[3];
    HR_TRY(s->k->kernel->sweeps(s, sweeps));
    for (int r = 0; r < 3; r++) {
        const double t0 = hr_now();
        HR_TRY(s->k->kernel->sweeps(s, sweeps));
        t[r] = hr_now() - t0;
    }
    const double med = hri_median(t, 3);
    const double pts = (double)hr_layout_points(&s->u[0].l) * (double)sweeps;
    const double bpp = (double)s->u[0].l.esize * (s->hf.base ? 3.0 : 2.0);
    *gbps = med > 0 ? bpp * pts / med * 1e-9 : 0.0;
    return HR_OK;
}
