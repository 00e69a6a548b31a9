/*
 * Reading and writing n x n interior fields: raw native floats, PNG pictures with a
 * colour bar and its range, and VTK image data (.vti) for ParaView.
 */
#include "problem/field_io.h"

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

static hr_status write_raw(const char *path, int n, const double *v, hr_precision p)
{
    FILE *f = fopen(path, "wb");
    if (!f) return HR_ERR_IO;
    size_t count = (size_t)n * (size_t)n, ok = 0;
    if (p == HR_PREC_DOUBLE) {
        ok = fwrite(v, sizeof *v, count, f) == count;
    } else {
        ok = 1;
        float buf[4096];
        for (size_t i = 0; i < count && ok; i += 4096) {
            size_t m = count - i < 4096 ? count - i : 4096;
            for (size_t k = 0; k < m; k++)
                buf[k] = (float)v[i + k];
            ok = fwrite(buf, sizeof *buf, m, f) == m;
        }
    }
    if (fclose(f) != 0) ok = 0;
    return ok ? HR_OK : HR_ERR_IO;
}

hr_status hr_field_read_raw(const char *path, int n, hr_precision p, double *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return HR_ERR_IO;
    size_t es = p == HR_PREC_DOUBLE ? 8 : 4, count = (size_t)n * (size_t)n;
    hr_status st = HR_OK;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return HR_ERR_IO;
    }
    long size = ftell(f);
    rewind(f);
    if (size < 0 || (unsigned long)size != count * es) {
        fclose(f);
        return HR_ERR_FORMAT;
    }
    for (size_t i = 0; i < count && st == HR_OK; i++) {
        double d;
        float s;
        if ((es == 8 ? fread(&d, 8, 1, f) : fread(&s, 4, 1, f)) != 1) st = HR_ERR_IO;
        out[i] = es == 8 ? d : (double)s;
        if (st == HR_OK && !isfinite(out[i])) st = HR_ERR_FORMAT;
    }
    fclose(f);
    return st;
}

static hr_status write_vti(const char *path, int n, const double *v, hr_precision p)
{
    FILE *f = fopen(path, "wb");
    if (!f) return HR_ERR_IO;
    const double h = 1.0 / (n + 1.0);
    const int dbl = p == HR_PREC_DOUBLE;
    uint64_t count = (uint64_t)n * (uint64_t)n, nbytes = count * (dbl ? 8 : 4);
    fprintf(f,
            "<?xml version=\"1.0\"?>\n"
            "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
            "header_type=\"UInt64\">\n"
            "  <ImageData WholeExtent=\"0 %d 0 %d 0 0\" Origin=\"%.17g %.17g 0\" "
            "Spacing=\"%.17g %.17g 1\">\n"
            "    <Piece Extent=\"0 %d 0 %d 0 0\">\n"
            "      <PointData Scalars=\"u\">\n"
            "        <DataArray type=\"%s\" Name=\"u\" format=\"appended\" offset=\"0\"/>\n"
            "      </PointData>\n"
            "    </Piece>\n"
            "  </ImageData>\n"
            "  <AppendedData encoding=\"raw\">\n_",
            n - 1, n - 1, h, h, h, h, n - 1, n - 1, dbl ? "Float64" : "Float32");
    int ok = fwrite(&nbytes, sizeof nbytes, 1, f) == 1;
    /* VTK image data runs x fastest: row i of the field is y = (i+1) h */
    if (dbl) {
        ok = ok && fwrite(v, 8, (size_t)count, f) == (size_t)count;
    } else {
        for (uint64_t i = 0; i < count && ok; i++) {
            float s = (float)v[i];
            ok = fwrite(&s, 4, 1, f) == 1;
        }
    }
    fprintf(f, "\n  </AppendedData>\n</VTKFile>\n");
    if (fclose(f) != 0) ok = 0;
    return ok ? HR_OK : HR_ERR_IO;
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
static hr_status save_png(const char *path, const uint8_t *img, int w, int h, const char *range)
{
    volatile hr_status st = HR_ERR_IO;
    FILE *f = fopen(path, "wb");
    png_structp png = NULL;
    png_infop info = NULL;
    if (!f) return HR_ERR_IO;
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (!png) goto out;
    info = png_create_info_struct(png);
    if (!info) goto out;
    if (setjmp(png_jmpbuf(png))) goto out;
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_text text[2];
    memset(text, 0, sizeof text);
    text[0].compression = text[1].compression = PNG_TEXT_COMPRESSION_NONE;
    text[0].key = "Title";
    text[0].text = "hetrelax solution u";
    text[1].key = "Range";
    text[1].text = (char *)range;
    png_set_text(png, info, text, 2);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, img + (size_t)y * (size_t)w * 3);
    png_write_end(png, NULL);
    st = HR_OK;
out:
    if (png) png_destroy_write_struct(&png, info ? &info : NULL);
    if (fclose(f) != 0) st = HR_ERR_IO;
    return st;
}

static hr_status write_png(const char *path, int n, const double *v)
{
    /* picture side: the field averaged down to at most 1024 pixels, or enlarged to 256 */
    int step = (n + 1023) / 1024, side = (n + step - 1) / step, zoom = 1;
    while (side * zoom < 256)
        zoom++;
    const int fw = side * zoom, bar = 24, margin = 8, text_w = 12 * 4 * 2;
    const int w = fw + margin + bar + margin + text_w, h = fw;
    /* block averages first: the colour range is that of the pixels shown */
    double *avg = malloc((size_t)side * (size_t)side * sizeof *avg);
    if (!avg) return HR_ERR_NO_MEMORY;
    double lo = INFINITY, hi = -INFINITY;
    for (int bi = 0; bi < side; bi++)
        for (int bj = 0; bj < side; bj++) {
            double sum = 0.0;
            int cnt = 0;
            for (int i = bi * step; i < n && i < (bi + 1) * step; i++)
                for (int j = bj * step; j < n && j < (bj + 1) * step; j++, cnt++)
                    sum += v[(size_t)i * (size_t)n + (size_t)j];
            double m = sum / cnt;
            avg[(size_t)bi * (size_t)side + (size_t)bj] = m;
            if (m < lo) lo = m;
            if (m > hi) hi = m;
        }
    if (!(hi > lo)) hi = lo + 1.0;
    uint8_t *img = calloc((size_t)w * (size_t)h, 3);
    if (!img) {
        free(avg);
        return HR_ERR_NO_MEMORY;
    }
    for (int bi = 0; bi < side; bi++)
        for (int bj = 0; bj < side; bj++) {
            uint8_t rgb[3];
            colour((avg[(size_t)bi * (size_t)side + (size_t)bj] - lo) / (hi - lo), rgb);
            /* row 0 of the field is y = h: draw it at the bottom */
            for (int dy = 0; dy < zoom; dy++)
                for (int dx = 0; dx < zoom; dx++) {
                    int py = h - 1 - (bi * zoom + dy), px = bj * zoom + dx;
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
    snprintf(label, sizeof label, "%.3e", hi);
    draw_text(img, w, h, fw + 2 * margin + bar, 2, 2, label);
    snprintf(label, sizeof label, "%.3e", lo);
    draw_text(img, w, h, fw + 2 * margin + bar, h - 12, 2, label);

    char range[96];
    snprintf(range, sizeof range, "%.17g %.17g", lo, hi);
    hr_status st = save_png(path, img, w, h, range);
    free(avg);
    free(img);
    return st;
}
#endif

hr_status hr_field_write(const char *path, int n, const double *v, hr_precision p)
{
    switch (hr_field_format_of(path)) {
    case HR_FIELD_RAW: return write_raw(path, n, v, p);
    case HR_FIELD_VTI: return write_vti(path, n, v, p);
    case HR_FIELD_PNG:
#ifdef HR_HAVE_PNG
        return write_png(path, n, v);
#else
        return HR_ERR_UNSUPPORTED;
#endif
    case HR_FIELD_UNKNOWN: break;
    }
    return HR_ERR_INVALID_ARG;
}
