#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"

#define CKPT_MAGIC "HRCKPT\r\n" /* \r\n: a text-mode transfer shows as a bad magic */
/* 2: the update rule (method, weight, kernel class) and the --rhs FILE's hash appended;
 * version 1 files do not say which rule made them, so they are refused. */
#define CKPT_VERSION 2u
#define CKPT_ENDIAN  0x01020304u

/* Fixed-width fields, 192 bytes, no padding; the first 128 as in version 1. */
typedef struct ckpt_header {
    char magic[8];
    uint32_t version, endian;
    uint32_t header_bytes, dim;
    uint64_t nx, ny, nz;
    uint32_t precision, rhs;
    double boundary;
    int64_t sweeps;
    uint64_t data_bytes;
    char kernel[48];
    uint32_t method, deterministic;
    double omega;
    uint64_t rhs_hash;
    char reserved[40];
} ckpt_header;
_Static_assert(sizeof(ckpt_header) == 192, "checkpoint header must not have padding");

unsigned long long hr_ckpt_hash(const double *v, size_t count)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < count * sizeof *v; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

static size_t esize(hr_precision p)
{
    return p == HR_PREC_SINGLE ? 4 : 8;
}

int hr_ckpt_write(const char *path, const hr_ckpt_info *info, const void *data, size_t count)
{
    ckpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CKPT_MAGIC, 8);
    h.version = CKPT_VERSION;
    h.endian = CKPT_ENDIAN;
    h.header_bytes = sizeof h;
    h.dim = (uint32_t)info->dim;
    h.nx = (uint64_t)info->nx;
    h.ny = (uint64_t)info->ny;
    h.nz = (uint64_t)info->nz;
    h.precision = info->precision == HR_PREC_SINGLE ? 0 : 1; /* the file's codes: 0 single, 1 double */
    h.rhs = (uint32_t)info->rhs;
    h.boundary = info->boundary;
    h.sweeps = info->sweeps;
    h.data_bytes = (uint64_t)count * esize(info->precision);
    snprintf(h.kernel, sizeof h.kernel, "%s", info->kernel);
    h.method = (uint32_t)info->method;
    h.deterministic = info->deterministic ? 1u : 0u;
    h.omega = info->omega;
    h.rhs_hash = info->rhs_hash;
    hr_atomic a;
    int err = hr_atomic_begin(&a, path);
    if (err) return err;
    errno = 0;
    FILE *f = fopen(a.tmp, "wb");
    if (!f) err = errno ? errno : EIO;
    if (f) {
        if (fwrite(&h, sizeof h, 1, f) != 1 || fwrite(data, esize(info->precision), count, f) != count ||
            fflush(f) != 0)
            err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    }
    if (err) {
        hr_atomic_abort(&a);
        return err;
    }
    return hr_atomic_commit(&a);
}

static int read_header(const char *cmd, const char *flag, const char *path, FILE *f, ckpt_header *h)
{
    /* the first 128 bytes are laid out alike in every version */
    memset(h, 0, sizeof *h);
    const size_t got = fread(h, 1, sizeof *h, f);
    if (got < 128 || memcmp(h->magic, CKPT_MAGIC, 8) != 0)
        return hr_cli_usage_error(cmd, flag, "'%s' is not a hetrelax checkpoint", path);
    if (h->endian != CKPT_ENDIAN)
        return hr_cli_usage_error(cmd, flag, "'%s': checkpoint from a machine of another byte order", path);
    if (h->version == 1)
        return hr_cli_usage_error(cmd, flag,
                                  "'%s': a version 1 checkpoint (older hetrelax) does not record the method "
                                  "and weight that made it; rerun from the start",
                                  path);
    if (h->version != CKPT_VERSION || h->header_bytes != sizeof *h || got != sizeof *h)
        return hr_cli_usage_error(cmd, flag, "'%s': checkpoint version %u from another build", path,
                                  h->version);
    /* nx * ny * nz must not wrap before it is compared with data_bytes */
    const uint64_t lim = (uint64_t)1 << 20;
    if ((h->dim != 2 && h->dim != 3) || h->precision > 1 || h->sweeps < 0 || h->nx < 1 || h->ny < 1 ||
        h->nz < 1 || h->nx > lim || h->ny > lim || h->nz > lim || (h->dim == 2 && h->nz != 1) ||
        h->data_bytes != h->nx * h->ny * h->nz * (h->precision ? 8 : 4) || h->method > HR_METHOD_SOR ||
        h->deterministic > 1 || !(h->omega > 0.0 && h->omega < 2.0))
        return hr_cli_usage_error(cmd, flag, "'%s': damaged checkpoint header", path);
    return 0;
}

int hr_ckpt_read_info(const char *cmd, const char *flag, const char *path, hr_ckpt_info *info)
{
    FILE *f = fopen(path, "rb");
    if (!f) return hr_cli_usage_error(cmd, flag, "cannot read '%s': %s", path, strerror(errno));
    ckpt_header h;
    int rc = read_header(cmd, flag, path, f, &h);
    fclose(f);
    if (rc) return rc;
    memset(info, 0, sizeof *info);
    info->dim = (int)h.dim;
    info->nx = (long)h.nx;
    info->ny = (long)h.ny;
    info->nz = (long)h.nz;
    info->precision = h.precision ? HR_PREC_DOUBLE : HR_PREC_SINGLE;
    info->rhs = (int)h.rhs;
    info->boundary = h.boundary;
    info->sweeps = (long)h.sweeps;
    info->method = (int)h.method;
    info->deterministic = (int)h.deterministic;
    info->omega = h.omega;
    info->rhs_hash = h.rhs_hash;
    h.kernel[sizeof h.kernel - 1] = '\0';
    snprintf(info->kernel, sizeof info->kernel, "%s", h.kernel);
    return 0;
}

int hr_ckpt_read_data(const char *cmd, const char *flag, const char *path, const hr_ckpt_info *info,
                      void *data, size_t count)
{
    FILE *f = fopen(path, "rb");
    if (!f) return hr_cli_usage_error(cmd, flag, "cannot read '%s': %s", path, strerror(errno));
    ckpt_header h;
    int rc = read_header(cmd, flag, path, f, &h);
    if (!rc && (h.nx * h.ny * h.nz != count || fread(data, esize(info->precision), count, f) != count ||
                fgetc(f) != EOF))
        rc = hr_cli_usage_error(cmd, flag, "'%s': truncated or overlong checkpoint", path);
    fclose(f);
    /* a checkpoint is never written from a diverged state: a value that is not finite
     * means the file was damaged */
    for (size_t i = 0; !rc && i < count; i++) {
        const double v =
            info->precision != HR_PREC_SINGLE ? ((const double *)data)[i] : ((const float *)data)[i];
        if (!isfinite(v))
            rc = hr_cli_usage_error(cmd, flag, "'%s': damaged checkpoint: value %zu of the data is %g", path,
                                    i, v);
    }
    return rc;
}
