/*
 * Matrix Market reader and writer. The reader is strict: every rejection names the
 * line, and nothing is allocated from a size the file merely claims before that size
 * has been checked against the bytes actually present.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/cpu/sysmem.h"
#include "methods/sparse/sparse_internal.h"

#define MM_LINE_MAX     1024
#define MM_LINE_MAX_STR "1024"
/* Comment or blank lines allowed after the size line beyond one per declared entry:
 * bounds what an endless stream of comments can make the reader hold. */
#define MM_SPARE_COMMENTS 65536
#define MM_MAX_TOKENS     8
/* A matrix may have at most this many more rows than stored entries (empty rows):
 * bounds the row-pointer allocation by the file's size. */
#define MM_SPARE_ROWS (1L << 20)

typedef struct mm_lexer {
    const char *buf;
    size_t len, pos;
    long line;
    char text[MM_LINE_MAX + 1];
    char *tok[MM_MAX_TOKENS];
    int ntok;
} mm_lexer;

static hr_status fail(hr_mm_error *err, long line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static hr_status fail(hr_mm_error *err, long line, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->line = line;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return HR_ERR_FORMAT;
}

/* Reads the next line into lx->text and splits it into tokens. Returns 1 for a line,
 * 0 at the end, or -1 (error filled) for a NUL byte or an over-long line. */
static int next_line(mm_lexer *lx, hr_mm_error *err)
{
    if (lx->pos >= lx->len) return 0;
    const char *start = lx->buf + lx->pos;
    const char *nl = memchr(start, '\n', lx->len - lx->pos);
    size_t n = nl ? (size_t)(nl - start) : lx->len - lx->pos;
    lx->pos += n + (nl ? 1 : 0);
    lx->line++;
    if (n > 0 && start[n - 1] == '\r') n--;
    const char *why = memchr(start, '\0', n < MM_LINE_MAX + 1 ? n : MM_LINE_MAX + 1)
                          ? "NUL byte in a text file"
                      : n > MM_LINE_MAX ? "line longer than " MM_LINE_MAX_STR " characters"
                                        : NULL;
    if (why) {
        fail(err, lx->line, "%s%s", lx->line == 1 ? "not a Matrix Market file: " : "", why);
        return -1;
    }
    memcpy(lx->text, start, n);
    lx->text[n] = '\0';
    lx->ntok = 0;
    char *first = lx->text + strspn(lx->text, " \t\v\f");
    if (*first == '%' && lx->line > 1) { /* comments are free text: not split */
        lx->tok[lx->ntok++] = first;
        return 1;
    }
    char *save = NULL;
    for (char *t = strtok_r(lx->text, " \t\v\f", &save); t; t = strtok_r(NULL, " \t\v\f", &save)) {
        if (lx->ntok == MM_MAX_TOKENS) {
            fail(err, lx->line, "too many fields on the line");
            return -1;
        }
        lx->tok[lx->ntok++] = t;
    }
    return 1;
}

/* Next line that is neither blank nor a comment. */
static int next_data_line(mm_lexer *lx, hr_mm_error *err)
{
    int r;
    while ((r = next_line(lx, err)) == 1)
        if (lx->ntok > 0 && lx->tok[0][0] != '%') return 1;
    return r;
}

/* A whole-token decimal integer. */
static int parse_int(const char *s, long long *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (!*p) return 0;
    for (; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end) return 0;
    *out = v;
    return 1;
}

/* A whole-token finite decimal real (no hex, inf or nan). */
static int parse_real(const char *s, double *out, int *nonfinite)
{
    *nonfinite = 0;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p)) {
            *nonfinite = strchr("iInN", *p) != NULL;
            return 0;
        }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) return 0;
    if (!isfinite(v)) {
        *nonfinite = 1;
        return 0;
    }
    *out = v;
    return 1;
}

typedef enum { F_REAL, F_INTEGER, F_PATTERN } mm_field;

typedef struct mm_header {
    int array; /* 1: array, 0: coordinate */
    mm_field field;
    int symmetric; /* 1: symmetric */
} mm_header;

static hr_status parse_header(mm_lexer *lx, mm_header *h, hr_mm_error *err)
{
    int r = next_line(lx, err);
    if (r < 0) return HR_ERR_FORMAT;
    if (r == 0) return fail(err, 1, "empty file: expected a '%%%%MatrixMarket' header");
    if (lx->ntok == 0 || strcasecmp(lx->tok[0], "%%MatrixMarket") != 0)
        return fail(err, lx->line, "expected the header '%%%%MatrixMarket matrix FORMAT FIELD SYMMETRY'");
    if (lx->ntok != 5)
        return fail(err, lx->line,
                    "header has %d fields, expected 5: '%%%%MatrixMarket matrix FORMAT FIELD SYMMETRY'",
                    lx->ntok);
    if (strcasecmp(lx->tok[1], "matrix") != 0)
        return fail(err, lx->line, "unsupported object '%s' (expected 'matrix')", lx->tok[1]);
    if (strcasecmp(lx->tok[2], "coordinate") == 0)
        h->array = 0;
    else if (strcasecmp(lx->tok[2], "array") == 0)
        h->array = 1;
    else
        return fail(err, lx->line, "unsupported format '%s' (expected coordinate or array)", lx->tok[2]);
    if (strcasecmp(lx->tok[3], "real") == 0 || strcasecmp(lx->tok[3], "double") == 0)
        h->field = F_REAL;
    else if (strcasecmp(lx->tok[3], "integer") == 0)
        h->field = F_INTEGER;
    else if (strcasecmp(lx->tok[3], "pattern") == 0)
        h->field = F_PATTERN;
    else
        return fail(err, lx->line, "unsupported field '%s' (expected real, integer or pattern)", lx->tok[3]);
    if (strcasecmp(lx->tok[4], "general") == 0)
        h->symmetric = 0;
    else if (strcasecmp(lx->tok[4], "symmetric") == 0)
        h->symmetric = 1;
    else
        return fail(err, lx->line, "unsupported symmetry '%s' (expected general or symmetric)", lx->tok[4]);
    if (h->array && h->field == F_PATTERN) return fail(err, lx->line, "'array' cannot have field 'pattern'");
    return HR_OK;
}

/* The size line: `want` integers (3 for coordinate, 2 for array). */
static hr_status parse_sizes(mm_lexer *lx, int want, long long *sz, hr_mm_error *err)
{
    int r = next_data_line(lx, err);
    if (r < 0) return HR_ERR_FORMAT;
    if (r == 0) return fail(err, lx->line + 1, "file ends before the size line");
    if (lx->ntok != want)
        return fail(err, lx->line, "size line has %d fields, expected %s", lx->ntok,
                    want == 3 ? "'ROWS COLS ENTRIES'" : "'ROWS COLS'");
    for (int k = 0; k < want; k++) {
        if (!parse_int(lx->tok[k], &sz[k]))
            return fail(err, lx->line, "size '%s' is not an integer", lx->tok[k]);
        if (sz[k] < (k < 2 ? 1 : 0))
            return fail(err, lx->line, "size %lld must be %s", sz[k], k < 2 ? ">= 1" : ">= 0");
    }
    if (sz[0] > HR_CSR_MAX_DIM || sz[1] > HR_CSR_MAX_DIM)
        return fail(err, lx->line, "absurd size %lld x %lld (at most %d)", sz[0], sz[1], HR_CSR_MAX_DIM);
    return HR_OK;
}

/* A general or symmetric coordinate file whose duplicates summed to Inf: finds the
 * first triplet (in file order, the order the sum was taken in) that made a sum
 * non-finite, and names the file line of its entry. */
/* Duplicates of entry (bi, bj) (0-based) summed to Inf: finds the triplet (in file
 * order, the order of the sum) that made the sum non-finite and names its file line. */
static hr_status overflowing_duplicate(const char *buf, size_t len, size_t data_pos, long data_line,
                                       const mm_header *h, int64_t k, const int32_t *ri, const int32_t *ci,
                                       const double *v, const int32_t bad_at[2], hr_mm_error *err)
{
    int64_t bad = -1;
    double sum = 0.0, before = 0.0;
    for (int64_t t = 0; t < k && bad < 0; t++)
        if (ri[t] == bad_at[0] && ci[t] == bad_at[1]) {
            before = sum;
            if (!isfinite(sum += v[t])) bad = t;
        }
    if (bad < 0) return fail(err, 0, "an entry's duplicates sum to a value that is not finite");
    mm_lexer lx = {.buf = buf, .len = len, .pos = data_pos, .line = data_line};
    int64_t t = 0; /* triplets made by the entries read so far */
    while (next_data_line(&lx, NULL) == 1) {
        long long i = 0, j = 0;
        parse_int(lx.tok[0], &i);
        parse_int(lx.tok[1], &j);
        t += h->symmetric && i != j ? 2 : 1;
        if (t > bad) break;
    }
    const int lo = bad_at[0] < bad_at[1], i = bad_at[lo] + 1, j = bad_at[1 - lo] + 1; /* as written */
    return fail(err, lx.line, "entry (%d, %d) repeats an earlier one and the sum overflows (%g + %g)",
                h->symmetric ? i : bad_at[0] + 1, h->symmetric ? j : bad_at[1] + 1, before, v[bad]);
}

hr_status hr_mm_parse_csr(const char *buf, size_t len, hr_csr **out, hr_mm_error *err)
{
    if (err) {
        err->line = 0;
        err->msg[0] = '\0';
    }
    if (!out || (!buf && len)) return HR_ERR_INVALID_ARG;
    *out = NULL;
    mm_lexer lx = {.buf = buf, .len = len};
    mm_header h;
    long long sz[3];
    HR_TRY(parse_header(&lx, &h, err));
    if (h.array) return fail(err, lx.line, "'array' format holds dense data: a matrix must be 'coordinate'");
    HR_TRY(parse_sizes(&lx, 3, sz, err));
    const long size_line = lx.line;
    const long long rows = sz[0], cols = sz[1], nz = sz[2];
    if (h.symmetric && rows != cols)
        return fail(err, size_line, "a symmetric matrix must be square, got %lld x %lld", rows, cols);
    /* Duplicates are summed, so nz may exceed rows x cols: the bound is the lines that
     * follow (each entry takes one). */
    long long lines_left = 0;
    for (const char *q = buf + lx.pos, *end = buf + len; q < end; lines_left++) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        q = nl ? nl + 1 : end;
    }
    if (nz > lines_left)
        return fail(err, size_line, "short file: %lld entries declared but only %lld lines follow", nz,
                    lines_left);
    if (rows > 2 * nz + MM_SPARE_ROWS)
        return fail(err, size_line, "absurd size: %lld rows for %lld entries", rows, nz);

    const int64_t cap = h.symmetric ? 2 * nz : nz;
    /* the triplets and the CSR beside them must fit (the file is in memory already) */
    const double need = 16.0 * ((double)cap + 1.0) + hri_csr_bytes(rows, cap) + 8.0 * ((double)rows + 1.0),
                 avail = (double)hri_host_available_bytes();
    if (need > avail) {
        char b1[32], b2[32];
        fail(err, size_line, "%lld x %lld with %lld entries needs %s to read, %s available", rows, cols, nz,
             hri_sparse_bytes_text(need, b1, sizeof b1), hri_sparse_bytes_text(avail, b2, sizeof b2));
        return HR_ERR_NO_MEMORY;
    }
    int32_t *ri = malloc(((size_t)cap + 1) * sizeof *ri);
    int32_t *ci = malloc(((size_t)cap + 1) * sizeof *ci);
    double *v = malloc(((size_t)cap + 1) * sizeof *v);
    hr_status st = HR_OK;
    if (!ri || !ci || !v) {
        st = HR_ERR_NO_MEMORY;
        goto done;
    }
    const int want = h.field == F_PATTERN ? 2 : 3;
    const size_t data_pos = lx.pos;
    const long data_line = lx.line;
    int64_t k = 0;
    for (long long e = 0; e < nz; e++) {
        int r = next_data_line(&lx, err);
        if (r < 0) {
            st = HR_ERR_FORMAT;
            goto done;
        }
        if (r == 0) {
            st = fail(err, lx.line + 1, "file ends after %lld of %lld entries", e, nz);
            goto done;
        }
        if (lx.ntok != want) {
            st = fail(err, lx.line, "entry has %d fields, expected %s", lx.ntok,
                      want == 2 ? "'ROW COL'" : "'ROW COL VALUE'");
            goto done;
        }
        long long i, j;
        double val = 1.0;
        if (!parse_int(lx.tok[0], &i) || !parse_int(lx.tok[1], &j)) {
            st = fail(err, lx.line, "index '%s' is not an integer",
                      parse_int(lx.tok[0], &i) ? lx.tok[1] : lx.tok[0]);
            goto done;
        }
        if (i < 1 || i > rows || j < 1 || j > cols) {
            st =
                fail(err, lx.line, "index (%lld, %lld) out of range [1, %lld] x [1, %lld]", i, j, rows, cols);
            goto done;
        }
        if (h.field == F_REAL) {
            int nonfinite;
            if (!parse_real(lx.tok[2], &val, &nonfinite)) {
                st = fail(err, lx.line, "value '%s' is %s", lx.tok[2],
                          nonfinite ? "not finite" : "not a number");
                goto done;
            }
        } else if (h.field == F_INTEGER) {
            long long iv;
            if (!parse_int(lx.tok[2], &iv)) {
                st = fail(err, lx.line, "value '%s' is not an integer", lx.tok[2]);
                goto done;
            }
            val = (double)iv;
        }
        if (h.symmetric && j > i) {
            st = fail(err, lx.line,
                      "entry (%lld, %lld) above the diagonal: a symmetric file stores the lower triangle", i,
                      j);
            goto done;
        }
        ri[k] = (int32_t)(i - 1);
        ci[k] = (int32_t)(j - 1);
        v[k++] = val;
        if (h.symmetric && i != j) {
            ri[k] = (int32_t)(j - 1);
            ci[k] = (int32_t)(i - 1);
            v[k++] = val;
        }
    }
    int r = next_data_line(&lx, err);
    if (r < 0) {
        st = HR_ERR_FORMAT;
        goto done;
    }
    if (r > 0) {
        st = fail(err, lx.line, "more entries than the %lld declared on line %ld", nz, size_line);
        goto done;
    }
    int32_t bad_at[2] = {-1, -1};
    st = hri_csr_from_coo_at((int)rows, (int)cols, k, ri, ci, v, out, bad_at);
    if (st == HR_ERR_INVALID_ARG) /* indices and values were checked: a sum of duplicates overflowed */
        st = overflowing_duplicate(buf, len, data_pos, data_line, &h, k, ri, ci, v, bad_at, err);
    if (st == HR_ERR_NO_MEMORY)
        fail(err, 0, "out of memory for %lld x %lld with %lld entries", rows, cols, nz);
done:
    free(ri);
    free(ci);
    free(v);
    return st;
}

hr_status hr_mm_parse_vector(const char *buf, size_t len, double **out, int *n, hr_mm_error *err)
{
    if (err) {
        err->line = 0;
        err->msg[0] = '\0';
    }
    if (!out || !n || (!buf && len)) return HR_ERR_INVALID_ARG;
    *out = NULL;
    *n = 0;
    mm_lexer lx = {.buf = buf, .len = len};
    mm_header h;
    long long sz[2];
    HR_TRY(parse_header(&lx, &h, err));
    if (!h.array) return fail(err, lx.line, "a vector must be in 'array' format");
    if (h.symmetric) return fail(err, lx.line, "a vector must be 'general'");
    HR_TRY(parse_sizes(&lx, 2, sz, err));
    const long size_line = lx.line;
    if (sz[0] != 1 && sz[1] != 1)
        return fail(err, size_line, "a vector must be N x 1 or 1 x N, got %lld x %lld", sz[0], sz[1]);
    long long count = sz[0] * sz[1];
    size_t left = len - lx.pos;
    if ((unsigned long long)count > (left + 1) / 2)
        return fail(err, size_line, "short file: %lld values declared but only %zu bytes follow", count,
                    left);
    double *x = malloc((size_t)count * sizeof *x);
    if (!x) return fail(err, size_line, "out of memory for %lld values", count), HR_ERR_NO_MEMORY;
    for (long long e = 0; e < count; e++) {
        int r = next_data_line(&lx, err), nonfinite;
        long long iv;
        if (r <= 0) {
            free(x);
            return r < 0 ? HR_ERR_FORMAT
                         : fail(err, lx.line + 1, "file ends after %lld of %lld values", e, count);
        }
        if (lx.ntok != 1) {
            free(x);
            return fail(err, lx.line, "expected one value per line, got %d fields", lx.ntok);
        }
        int ok = h.field == F_INTEGER ? parse_int(lx.tok[0], &iv) : parse_real(lx.tok[0], &x[e], &nonfinite);
        if (!ok) {
            free(x);
            return fail(err, lx.line, "value '%s' is %s", lx.tok[0],
                        h.field == F_REAL && nonfinite ? "not finite"
                        : h.field == F_INTEGER         ? "not an integer"
                                                       : "not a number");
        }
        if (h.field == F_INTEGER) x[e] = (double)iv;
    }
    int r = next_data_line(&lx, err);
    if (r != 0) {
        free(x);
        return r < 0 ? HR_ERR_FORMAT
                     : fail(err, lx.line, "more values than the %lld declared on line %ld", count, size_line);
    }
    *out = x;
    *n = (int)count;
    return HR_OK;
}

/* Watches the bytes as they are read, so that input that is not Matrix Market, or
 * that goes on past what its size line declares (/dev/zero, an endless pipe), stops
 * the reading at once instead of growing the buffer without bound. It decides only
 * when to stop; the parser then reports the precise error from the bytes read. */
typedef struct mm_guard {
    size_t scan;      /* next byte to look at */
    size_t line_pos;  /* start of the current line */
    long line;        /* lines completed */
    int stage;        /* 0: header line, 1: before the size line, 2: data lines */
    mm_header h;      /* from the header line */
    long long want;   /* data lines the size line declares */
    long long data;   /* data lines seen */
    long long others; /* comment or blank lines after the size line */
} mm_guard;

/* 1: stop reading (the bytes so far hold an error, or err is filled); 0: go on. */
static int guard_scan(mm_guard *g, const char *b, size_t n, hr_mm_error *err, hr_status *st)
{
    while (g->scan < n) {
        const char *nl = memchr(b + g->scan, '\n', n - g->scan);
        size_t end = nl ? (size_t)(nl - b) : n;
        if (memchr(b + g->scan, '\0', end - g->scan)) return 1; /* NUL: not a text file */
        if (end - g->line_pos > MM_LINE_MAX + 1) return 1;      /* an over-long line */
        g->scan = end;
        if (!nl) return 0; /* the line goes on in the next read */
        g->scan = end + 1;
        mm_lexer lx = {.buf = b + g->line_pos, .len = end - g->line_pos, .line = g->line};
        g->line++;
        g->line_pos = end + 1;
        if (g->stage == 0) {
            if (parse_header(&lx, &g->h, NULL) != HR_OK) return 1;
            g->stage = 1;
            continue;
        }
        int r = next_line(&lx, NULL);
        if (r < 0) return 1; /* an over-long line (after a CR) */
        int data = r == 1 && lx.ntok > 0 && lx.tok[0][0] != '%';
        if (g->stage == 1) {
            if (!data) continue;
            long long sz[3] = {0, 0, 0};
            lx.pos = 0, lx.line = g->line - 1;
            if (parse_sizes(&lx, g->h.array ? 2 : 3, sz, NULL) != HR_OK) return 1;
            g->want = g->h.array ? sz[0] * sz[1] : sz[2];
            g->stage = 2;
        } else if (data) {
            if (++g->data > g->want) return 1; /* more entries than declared */
        } else if (++g->others > g->want + MM_SPARE_COMMENTS) {
            *st = fail(err, g->line, "more than %lld comment or blank lines after the size line",
                       g->want + MM_SPARE_COMMENTS);
            return 1;
        }
    }
    return 0;
}

/* Reads a file into memory (works for pipes too), stopping early on what cannot be
 * Matrix Market (mm_guard). */
static hr_status slurp(const char *path, char **buf, size_t *len, hr_mm_error *err)
{
    *buf = NULL;
    *len = 0;
    if (err) {
        err->line = 0;
        err->msg[0] = '\0';
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err) snprintf(err->msg, sizeof err->msg, "cannot open: %s", strerror(errno));
        return HR_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    hr_status st = b ? HR_OK : HR_ERR_NO_MEMORY;
    mm_guard g = {0};
    while (st == HR_OK) {
        if (n == cap) {
            char *nb = cap < ((size_t)1 << 62) ? realloc(b, cap * 2) : NULL;
            if (!nb) {
                st = HR_ERR_NO_MEMORY;
                break;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) st = HR_ERR_IO;
            break;
        }
        if (guard_scan(&g, b, n, err, &st)) break; /* the parser names what is wrong */
    }
    fclose(f);
    if (st != HR_OK) {
        free(b);
        if (err && !err->msg[0])
            snprintf(err->msg, sizeof err->msg, "%s",
                     st == HR_ERR_IO ? "read error" : "out of memory reading the file");
        return st;
    }
    *buf = b;
    *len = n;
    return HR_OK;
}

hr_status hr_mm_read_csr(const char *path, hr_csr **out, hr_mm_error *err)
{
    char *buf;
    size_t len;
    if (!path || !out) return HR_ERR_INVALID_ARG;
    *out = NULL;
    HR_TRY(slurp(path, &buf, &len, err));
    hr_status st = hr_mm_parse_csr(buf, len, out, err);
    free(buf);
    return st;
}

hr_status hr_mm_read_vector(const char *path, double **out, int *n, hr_mm_error *err)
{
    char *buf;
    size_t len;
    if (!path || !out || !n) return HR_ERR_INVALID_ARG;
    *out = NULL;
    *n = 0;
    HR_TRY(slurp(path, &buf, &len, err));
    hr_status st = hr_mm_parse_vector(buf, len, out, n, err);
    free(buf);
    return st;
}

/* Writes each line of `comment` behind a '%'. */
static void write_comment(FILE *f, const char *comment)
{
    while (comment && *comment) {
        const char *nl = strchr(comment, '\n');
        int n = nl ? (int)(nl - comment) : (int)strlen(comment);
        fprintf(f, "%% %.*s\n", n, comment);
        comment += n + (nl ? 1 : 0);
    }
}

static hr_status finish(FILE *f, int ok)
{
    ok = !ferror(f) && ok;
    ok = (fclose(f) == 0) && ok;
    return ok ? HR_OK : HR_ERR_IO;
}

hr_status hr_mm_write_csr(const char *path, const hr_csr *A, const char *comment)
{
    if (!path || !A) return HR_ERR_INVALID_ARG;
    FILE *f = fopen(path, "w");
    if (!f) return HR_ERR_IO;
    int ok = fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n") > 0;
    write_comment(f, comment);
    ok = ok && fprintf(f, "%d %d %lld\n", A->n_rows, A->n_cols, (long long)A->nnz) > 0;
    for (int i = 0; ok && i < A->n_rows; i++)
        for (int64_t p = A->row_ptr[i]; ok && p < A->row_ptr[i + 1]; p++)
            ok = fprintf(f, "%d %d %.17g\n", i + 1, A->col[p] + 1, A->val[p]) > 0;
    return finish(f, ok);
}

hr_status hr_mm_write_vector(const char *path, const double *x, int n, const char *comment)
{
    if (!path || (!x && n > 0) || n < 0) return HR_ERR_INVALID_ARG;
    FILE *f = fopen(path, "w");
    if (!f) return HR_ERR_IO;
    int ok = fprintf(f, "%%%%MatrixMarket matrix array real general\n") > 0;
    write_comment(f, comment);
    ok = ok && fprintf(f, "%d 1\n", n) > 0;
    for (int i = 0; ok && i < n; i++)
        ok = fprintf(f, "%.17g\n", x[i]) > 0;
    return finish(f, ok);
}
