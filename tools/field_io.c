/*
 * Reading and writing interior fields (2-D, or 3-D with x fastest): raw native floats,
 * PNG pictures with a colour bar, its range and its scale, and VTK image data (.vti) for
 * ParaView. Writers keep errno of the first failure so that callers can say why.
 */
#include "field_io.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HR_HAVE_PNG
#include <png.h>
#endif

static const char *ext_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return (dot && (!slash || dot > slash)) ? dot + 1 : "";
}

hr_field_format hr_field_format_of(const char *path)
{
    const char *e = ext_of(path);
    if (strcmp(e, "raw") == 0) return HR_FIELD_RAW;
    if (strcmp(e, "png") == 0) return HR_FIELD_PNG;
    if (strcmp(e, "vti") == 0) return HR_FIELD_VTI;
    return HR_FIELD_UNKNOWN;
}

/* The first failure's errno survives fclose and friends. */
static int io_fail(int *err)
{
    if (!*err) *err = errno ? errno : EIO;
    return 0;
}

static hr_status io_status(int err)
{
    errno = err;
    return err ? HR_ERR_IO : HR_OK;
}

static hr_status write_raw(const char *path, size_t count, const double *v, hr_precision p)
{
    errno = 0;
    FILE *f = fopen(path, "wb");
    if (!f) return HR_ERR_IO;
    int err = 0;
    if (p != HR_PREC_SINGLE) {
        if (fwrite(v, sizeof *v, count, f) != count) io_fail(&err);
    } else {
        float buf[4096];
        for (size_t i = 0; i < count && !err; i += 4096) {
            size_t m = count - i < 4096 ? count - i : 4096;
            for (size_t k = 0; k < m; k++)
                buf[k] = (float)v[i + k];
            if (fwrite(buf, sizeof *buf, m, f) != m) io_fail(&err);
        }
    }
    if (fclose(f) != 0) io_fail(&err);
    return io_status(err);
}

hr_status hr_field_read_raw_why(const char *path, size_t count, hr_precision p, double *out, char *why,
                                size_t why_size)
{
    char scratch[8];
    if (!why || !why_size) why = scratch, why_size = sizeof scratch;
    why[0] = '\0';
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        const int e = errno;
        snprintf(why, why_size, "%s", strerror(e));
        errno = e;
        return HR_ERR_IO;
    }
    /* read in order, never seek: the input may be a pipe */
    const size_t es = p == HR_PREC_SINGLE ? 4 : 8;
    hr_status st = HR_OK;
    unsigned char buf[1 << 15];
    size_t done = 0, bytes = 0;
    while (done < count && st == HR_OK) {
        size_t want = (count - done) * es < sizeof buf ? (count - done) * es : sizeof buf;
        size_t got = fread(buf, 1, want, f);
        bytes += got;
        for (size_t k = 0; k + es <= got && st == HR_OK; k += es, done++) {
            double d;
            float sv;
            if (es == 8) {
                memcpy(&d, buf + k, 8);
            } else {
                memcpy(&sv, buf + k, 4);
                d = sv;
            }
            out[done] = d;
            if (!isfinite(d)) {
                st = HR_ERR_FORMAT;
                snprintf(why, why_size, "value %zu (0-based) is %g, not a finite number", done, d);
            }
        }
        if (st == HR_OK && got < want) {
            const int e = errno;
            if (ferror(f)) { /* a folder, a device that fails */
                st = HR_ERR_IO;
                snprintf(why, why_size, "%s", strerror(e ? e : EIO));
                errno = e;
            } else {
                st = HR_ERR_FORMAT;
                snprintf(why, why_size, "too short: %zu bytes, %zu are needed", bytes, count * es);
            }
            break;
        }
    }
    if (st == HR_OK && fgetc(f) != EOF) { /* longer than count values */
        st = HR_ERR_FORMAT;
        snprintf(why, why_size, "too long: more than the %zu bytes needed", count * es);
    }
    int err = st == HR_ERR_IO ? errno : 0;
    fclose(f);
    errno = err;
    return st;
}

hr_status hr_field_read_raw_count(const char *path, size_t count, hr_precision p, double *out)
{
    return hr_field_read_raw_why(path, count, p, out, NULL, 0);
}

hr_status hr_field_read_raw(const char *path, int n, hr_precision p, double *out)
{
    return hr_field_read_raw_count(path, (size_t)n * (size_t)n, p, out);
}

static hr_status write_vti(const char *path, int nx, int ny, int nz, const double *origin, const double *sp,
                           const double *v, hr_precision p)
{
    errno = 0;
    FILE *f = fopen(path, "wb");
    if (!f) return HR_ERR_IO;
    const int dbl = p != HR_PREC_SINGLE;
    uint64_t count = (uint64_t)nx * (uint64_t)ny * (uint64_t)nz, nbytes = count * (dbl ? 8 : 4);
    int err = 0;
    if (fprintf(f,
                "<?xml version=\"1.0\"?>\n"
                "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
                "header_type=\"UInt64\">\n"
                "  <ImageData WholeExtent=\"0 %d 0 %d 0 %d\" Origin=\"%.17g %.17g %.17g\" "
                "Spacing=\"%.17g %.17g %.17g\">\n"
                "    <Piece Extent=\"0 %d 0 %d 0 %d\">\n"
                "      <PointData Scalars=\"u\">\n"
                "        <DataArray type=\"%s\" Name=\"u\" format=\"appended\" offset=\"0\"/>\n"
                "      </PointData>\n"
                "    </Piece>\n"
                "  </ImageData>\n"
                "  <AppendedData encoding=\"raw\">\n_",
                nx - 1, ny - 1, nz - 1, origin[0], origin[1], origin[2], sp[0], sp[1], sp[2], nx - 1, ny - 1,
                nz - 1, dbl ? "Float64" : "Float32") < 0)
        io_fail(&err);
    if (!err && fwrite(&nbytes, sizeof nbytes, 1, f) != 1) io_fail(&err);
    /* VTK image data runs x fastest, as the field does */
    if (dbl) {
        if (!err && fwrite(v, 8, (size_t)count, f) != (size_t)count) io_fail(&err);
    } else {
        for (uint64_t i = 0; i < count && !err; i++) {
            float sv = (float)v[i];
            if (fwrite(&sv, 4, 1, f) != 1) io_fail(&err);
        }
    }
    if (!err && fprintf(f, "\n  </AppendedData>\n</VTKFile>\n") < 0) io_fail(&err);
    if (fclose(f) != 0) io_fail(&err);
    return io_status(err);
}

#ifdef HR_HAVE_PNG
/* A perceptually ordered colour map (dark blue - teal - green - yellow), 9 anchors. */
static void colour(double t, uint8_t rgb[3])
{
    static const uint8_t anchors[9][3] = {{68, 1, 84},    {72, 40, 120},  {62, 74, 137},
                                          {49, 104, 142}, {38, 130, 142}, {31, 158, 137},
                                          {53, 183, 121}, {110, 206, 88}, {253, 231, 37}};
    if (!(t >= 0.0)) t = 0.0;
    if (t > 1.0) t = 1.0;
    double x = t * 8.0;
    int k = (int)x;
    if (k >= 8) k = 7;
    double w = x - k;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround((1.0 - w) * anchors[k][c] + w * anchors[k + 1][c]);
}

/* 3x5 pixel glyphs for the legend labels: rows top to bottom, 3 bits each. */
static const char *glyph(char ch)
{
    switch (ch) {
    case '0': return "\7\5\5\5\7";
    case '1': return "\2\6\2\2\7";
    case '2': return "\7\1\7\4\7";
    case '3': return "\7\1\7\1\7";
    case '4': return "\5\5\7\1\1";
    case '5': return "\7\4\7\1\7";
    case '6': return "\7\4\7\5\7";
    case '7': return "\7\1\1\1\1";
    case '8': return "\7\5\7\5\7";
    case '9': return "\7\5\7\1\7";
    case '.': return "\0\0\0\0\2";
    case '-': return "\0\0\7\0\0";
    case '+': return "\0\2\7\2\0";
    case 'e': return "\0\7\7\4\7";
    case 'A': return "\2\5\7\5\5";
    case 'E': return "\7\4\6\4\7";
    case 'G': return "\7\4\5\5\7";
    case 'I': return "\7\2\2\2\7";
    case 'L': return "\4\4\4\4\7";
    case 'M': return "\5\7\5\5\5";
    case 'N': return "\6\5\5\5\5";
    case 'O': return "\7\5\5\5\7";
    case 'R': return "\6\5\6\5\5";
    case 'S': return "\7\4\7\1\7";
    case 'Y': return "\5\5\2\2\2";
    default: return "\0\0\0\0\0";
    }
}

static void draw_text(uint8_t *img, int w, int h, int x, int y, int scale, const char *s)
{
    for (; *s; s++, x += 4 * scale) {
        const char *g = glyph(*s);
        for (int r = 0; r < 5; r++)
            for (int c = 0; c < 3; c++) {
                if (!((g[r] >> (2 - c)) & 1)) continue;
                for (int dy = 0; dy < scale; dy++)
                    for (int dx = 0; dx < scale; dx++) {
                        int px = x + c * scale + dx, py = y + r * scale + dy;
                        if (px < 0 || px >= w || py < 0 || py >= h) continue;
                        uint8_t *p = img + ((size_t)py * (size_t)w + (size_t)px) * 3;
                        p[0] = p[1] = p[2] = 255;
                    }
            }
    }
}

/* libpng's error handling longjmps: keep this function free of locals that change. */
static hr_status save_png(const char *path, const uint8_t *img, int w, int h, const char *range,
                          const char *scale)
{
    volatile hr_status st = HR_ERR_IO;
    volatile int err = 0;
    errno = 0;
    FILE *f = fopen(path, "wb");
    png_structp png = NULL;
    png_infop info = NULL;
    if (!f) return HR_ERR_IO;
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (!png) goto out;
    info = png_create_info_struct(png);
    if (!info) goto out;
    if (setjmp(png_jmpbuf(png))) {
        err = errno ? errno : EIO;
        goto out;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_text text[3];
    memset(text, 0, sizeof text);
    text[0].compression = text[1].compression = text[2].compression = PNG_TEXT_COMPRESSION_NONE;
    text[0].key = "Title";
    text[0].text = "hetrelax solution u";
    text[1].key = "Range";
    text[1].text = (char *)range;
    text[2].key = "Scale";
    text[2].text = (char *)scale;
    png_set_text(png, info, text, 3);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, img + (size_t)y * (size_t)w * 3);
    png_write_end(png, NULL);
    if (fflush(f) != 0 || ferror(f)) {
        err = errno ? errno : EIO;
        goto out;
    }
    st = HR_OK;
out:
    if (png) png_destroy_write_struct(&png, info ? &info : NULL);
    if (fclose(f) != 0 && st == HR_OK) {
        err = errno ? errno : EIO;
        st = HR_ERR_IO;
    }
    errno = err;
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* How pixel values map to [0, 1]. A linear scale shows a point source after a few
 * sweeps as one flat colour with a dot; when most pixels sit within 1% of the range's
 * floor although the values span many decades, take log10 (one sign) or a symmetric log
 * (both signs), down to 1e-12 of the largest magnitude. */
typedef enum { SCALE_LINEAR, SCALE_LOG, SCALE_SYMLOG } scale_kind;
typedef struct scale {
    scale_kind kind;
    double lo, hi; /* of the values shown (for log: the floor and the top) */
    double c;      /* symlog: linear below c */
} scale;

static double symlog(double v, double c)
{
    return v < 0 ? -log10(1.0 + -v / c) : log10(1.0 + v / c);
}

static double scale_t(const scale *sc, double v)
{
    switch (sc->kind) {
    case SCALE_LOG:
        if (!(v > sc->lo)) return 0.0;
        return (log10(v) - log10(sc->lo)) / (log10(sc->hi) - log10(sc->lo));
    case SCALE_SYMLOG: {
        double a = symlog(sc->lo, sc->c), b = symlog(sc->hi, sc->c);
        return (symlog(v, sc->c) - a) / (b - a);
    }
    case SCALE_LINEAR: break;
    }
    return (v - sc->lo) / (sc->hi - sc->lo);
}

/* The value at position t of the scale (for the colour bar labels). */
static double scale_value(const scale *sc, double t)
{
    switch (sc->kind) {
    case SCALE_LOG: return pow(10.0, log10(sc->lo) + t * (log10(sc->hi) - log10(sc->lo)));
    case SCALE_SYMLOG: {
        double a = symlog(sc->lo, sc->c), b = symlog(sc->hi, sc->c), y = a + t * (b - a);
        return y < 0 ? -sc->c * (pow(10.0, -y) - 1.0) : sc->c * (pow(10.0, y) - 1.0);
    }
    case SCALE_LINEAR: break;
    }
    return sc->lo + t * (sc->hi - sc->lo);
}

static hr_status choose_scale(const double *v, size_t count, scale *sc)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < count; i++) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    sc->kind = SCALE_LINEAR;
    sc->lo = lo;
    sc->hi = hi;
    sc->c = 0.0;
    if (!(hi > lo) || !isfinite(hi - lo)) {
        if (!(hi > lo)) sc->hi = lo + 1.0;
        return HR_OK;
    }
    /* the median pixel's place on a linear scale (measured from the value of most
     * pixels' side: the floor when lo >= 0, the top when hi <= 0) */
    double *sorted = malloc(count * sizeof *sorted);
    if (!sorted) return HR_ERR_NO_MEMORY;
    for (size_t i = 0; i < count; i++)
        sorted[i] = fabs(v[i]);
    qsort(sorted, count, sizeof *sorted, cmp_double);
    const double med = sorted[count / 2], top = fmax(fabs(lo), fabs(hi));
    free(sorted);
    const double floor_ = top * 1e-12;
    if (!(med < 0.01 * top)) return HR_OK; /* a linear scale shows most of the picture */
    if (lo >= 0.0) {
        sc->kind = SCALE_LOG;
        double minpos = INFINITY;
        for (size_t i = 0; i < count; i++)
            if (v[i] > 0 && v[i] < minpos) minpos = v[i];
        sc->lo = fmax(minpos, floor_);
        if (!(sc->lo < hi)) sc->kind = SCALE_LINEAR, sc->lo = lo;
        if (sc->kind == SCALE_LOG && !(hi / sc->lo > 100.0)) sc->kind = SCALE_LINEAR, sc->lo = lo;
        return HR_OK;
    }
    sc->kind = SCALE_SYMLOG;
    sc->c = fmax(med, floor_);
    return HR_OK;
}

static const char *scale_name(const scale *sc)
{
    return sc->kind == SCALE_LOG ? "log10" : sc->kind == SCALE_SYMLOG ? "symlog" : "linear";
}

/* The middle z-plane of an nx x ny x nz field (row j of the plane is y = (j + 1) h). */
static hr_status write_png(const char *path, int nx, int ny, int nz, const double *v)
{
    const double *plane = v + (size_t)(nz / 2) * (size_t)nx * (size_t)ny;
    /* picture: the field averaged down to at most 1024 pixels a side, or enlarged to 256 */
    const int big = nx > ny ? nx : ny;
    int step = (big + 1023) / 1024, sx = (nx + step - 1) / step, sy = (ny + step - 1) / step, zoom = 1;
    while ((sx > sy ? sx : sy) * zoom < 256)
        zoom++;
    const int fw = sx * zoom, fh = sy * zoom, bar = 24, margin = 8, text_w = 12 * 4 * 2;
    const int w = fw + margin + bar + margin + text_w, h = fh > 96 ? fh : 96;
    /* block averages first: the colour range is that of the pixels shown */
    double *avg = malloc((size_t)sx * (size_t)sy * sizeof *avg);
    if (!avg) return HR_ERR_NO_MEMORY;
    for (int bi = 0; bi < sy; bi++)
        for (int bj = 0; bj < sx; bj++) {
            double sum = 0.0;
            int cnt = 0;
            for (int i = bi * step; i < ny && i < (bi + 1) * step; i++)
                for (int j = bj * step; j < nx && j < (bj + 1) * step; j++, cnt++)
                    sum += plane[(size_t)i * (size_t)nx + (size_t)j];
            avg[(size_t)bi * (size_t)sx + (size_t)bj] = sum / cnt;
        }
    scale sc;
    hr_status st = choose_scale(avg, (size_t)sx * (size_t)sy, &sc);
    uint8_t *img = st == HR_OK ? calloc((size_t)w * (size_t)h, 3) : NULL;
    if (!img) {
        free(avg);
        return HR_ERR_NO_MEMORY;
    }
    for (int bi = 0; bi < sy; bi++)
        for (int bj = 0; bj < sx; bj++) {
            uint8_t rgb[3];
            colour(scale_t(&sc, avg[(size_t)bi * (size_t)sx + (size_t)bj]), rgb);
            /* row 0 of the field is y = h: draw it at the bottom */
            for (int dy = 0; dy < zoom; dy++)
                for (int dx = 0; dx < zoom; dx++) {
                    int py = fh - 1 - (bi * zoom + dy), px = bj * zoom + dx;
                    memcpy(img + ((size_t)py * (size_t)w + (size_t)px) * 3, rgb, 3);
                }
        }
    for (int py = 0; py < h; py++) { /* colour bar: hi at the top */
        uint8_t rgb[3];
        colour(1.0 - (double)py / (h - 1), rgb);
        for (int px = fw + margin; px < fw + margin + bar; px++)
            memcpy(img + ((size_t)py * (size_t)w + (size_t)px) * 3, rgb, 3);
    }
    char label[32];
    const int tx = fw + 2 * margin + bar;
    snprintf(label, sizeof label, "%.3e", sc.hi);
    draw_text(img, w, h, tx, 2, 2, label);
    snprintf(label, sizeof label, "%.3e", scale_value(&sc, 0.5));
    draw_text(img, w, h, tx, h / 2 + 8, 2, label);
    draw_text(img, w, h, tx, h / 2 - 8, 2,
              sc.kind == SCALE_LOG      ? "LOG"
              : sc.kind == SCALE_SYMLOG ? "SYMLOG"
                                        : "LINEAR");
    snprintf(label, sizeof label, "%.3e", sc.lo);
    draw_text(img, w, h, tx, h - 12, 2, label);

    char range[96];
    snprintf(range, sizeof range, "%.17g %.17g", sc.lo, sc.hi);
    st = save_png(path, img, w, h, range, scale_name(&sc));
    free(avg);
    free(img);
    return st;
}
#endif

hr_status hr_field_write_as(hr_field_format f, const char *path, int nx, int ny, int nz, const double *v,
                            hr_precision p)
{
    if (!path || !v || nx < 1 || ny < 1 || nz < 1) return HR_ERR_INVALID_ARG;
    switch (f) {
    case HR_FIELD_RAW: return write_raw(path, (size_t)nx * (size_t)ny * (size_t)nz, v, p);
    case HR_FIELD_VTI: {
        /* the model problem: one mesh width h = 1 / (n + 1) of the x extent on every axis */
        const double h = 1.0 / (nx + 1.0);
        const double origin[3] = {h, h, nz > 1 ? h : 0.0}, sp[3] = {h, h, nz > 1 ? h : 1.0};
        return write_vti(path, nx, ny, nz, origin, sp, v, p);
    }
    case HR_FIELD_PNG:
#ifdef HR_HAVE_PNG
        return write_png(path, nx, ny, nz, v);
#else
        return HR_ERR_UNSUPPORTED;
#endif
    case HR_FIELD_UNKNOWN: break;
    }
    return HR_ERR_INVALID_ARG;
}

hr_status hr_field_write_vti_box(const char *path, int nx, int ny, int nz, const double origin[3],
                                 const double spacing[3], const double *v, hr_precision p)
{
    if (!path || !v || nx < 1 || ny < 1 || nz < 1) return HR_ERR_INVALID_ARG;
    return write_vti(path, nx, ny, nz, origin, spacing, v, p);
}

hr_status hr_field_write3(const char *path, int nx, int ny, int nz, const double *v, hr_precision p)
{
    return hr_field_write_as(path ? hr_field_format_of(path) : HR_FIELD_UNKNOWN, path, nx, ny, nz, v, p);
}

hr_status hr_field_write(const char *path, int n, const double *v, hr_precision p)
{
    return hr_field_write3(path, n, n, 1, v, p);
}

int hr_field_png_available(void)
{
#ifdef HR_HAVE_PNG
    return 1;
#else
    return 0;
#endif
}
