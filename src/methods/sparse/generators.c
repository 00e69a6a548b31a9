/*
 * Test matrices: the Trefethen family as in SuiteSparse, 2-D/3-D Laplacians, a 9-point
 * finite-volume-like SPD matrix shaped like fv1-fv3 (Anzt et al., Table 1), and random
 * diagonally dominant SPD matrices.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/sysmem.h"
#include "methods/sparse/sparse_internal.h"

/* Triplet buffer that grows as entries are added. */
typedef struct coo {
    int32_t *r, *c;
    double *v;
    int64_t n, cap;
} coo;

static hr_status coo_reserve(coo *t, int64_t cap)
{
    t->r = malloc((size_t)cap * sizeof *t->r);
    t->c = malloc((size_t)cap * sizeof *t->c);
    t->v = malloc((size_t)cap * sizeof *t->v);
    t->n = 0;
    t->cap = cap;
    return (t->r && t->c && t->v) ? HR_OK : HR_ERR_NO_MEMORY;
}

static void coo_free(coo *t)
{
    free(t->r);
    free(t->c);
    free(t->v);
}

/* Capacity is computed exactly by each generator, so a push never overflows. */
static inline void coo_push(coo *t, int64_t i, int64_t j, double v)
{
    t->r[t->n] = (int32_t)i;
    t->c[t->n] = (int32_t)j;
    t->v[t->n++] = v;
}

static hr_status coo_finish(coo *t, int n, hr_csr **out)
{
    hr_status st = hr_csr_from_coo(n, n, t->n, t->r, t->c, t->v, out);
    coo_free(t);
    return st;
}

/* The first n primes by a sieve; the n-th prime is below n (ln n + ln ln n) for n >= 6. */
static hr_status first_primes(int n, double *p)
{
    double lim = n < 6 ? 15.0 : n * (log((double)n) + log(log((double)n))) + 3.0;
    size_t m = (size_t)lim + 1;
    unsigned char *composite = calloc(m, 1);
    if (!composite) return HR_ERR_NO_MEMORY;
    int k = 0;
    for (size_t i = 2; i < m && k < n; i++) {
        if (composite[i]) continue;
        p[k++] = (double)i;
        for (size_t j = i * i; j < m; j += i)
            composite[j] = 1;
    }
    free(composite);
    return k == n ? HR_OK : HR_ERR_INTERNAL;
}

static hr_status gen_trefethen(int n, hr_csr **out)
{
    int powers = 0;
    int64_t cap = n;
    for (int64_t d = 1; d < n; d *= 2, powers++)
        cap += 2 * (n - d);
    double *pr = malloc((size_t)n * sizeof *pr);
    coo t = {0};
    hr_status st = pr ? coo_reserve(&t, cap) : HR_ERR_NO_MEMORY;
    if (st == HR_OK) st = first_primes(n, pr);
    if (st != HR_OK) {
        free(pr);
        coo_free(&t);
        return st;
    }
    for (int64_t i = 0; i < n; i++) {
        coo_push(&t, i, i, pr[i]);
        for (int64_t d = 1; d < n; d *= 2) {
            if (i - d >= 0) coo_push(&t, i, i - d, 1.0);
            if (i + d < n) coo_push(&t, i, i + d, 1.0);
        }
    }
    free(pr);
    return coo_finish(&t, n, out);
}

static hr_status gen_laplace(int m, int dim, hr_csr **out)
{
    int64_t n = dim == 2 ? (int64_t)m * m : (int64_t)m * m * m;
    coo t = {0};
    if (coo_reserve(&t, n * (2 * dim + 1)) != HR_OK) {
        coo_free(&t);
        return HR_ERR_NO_MEMORY;
    }
    const int64_t stride[3] = {1, m, (int64_t)m * m};
    for (int64_t i = 0; i < n; i++) {
        coo_push(&t, i, i, 2.0 * dim);
        int64_t rest = i;
        for (int a = 0; a < dim; a++) {
            int64_t c = rest % m;
            rest /= m;
            if (c > 0) coo_push(&t, i, i - stride[a], -1.0);
            if (c < m - 1) coo_push(&t, i, i + stride[a], -1.0);
        }
    }
    return coo_finish(&t, (int)n, out);
}

/*
 * fv2d: A = S K S on an M x M grid. K is a 9-point stencil with unit centre, edge
 * coefficient -FV_EDGE and corner coefficient -FV_CORNER; S is a smooth positive
 * diagonal spanning about two orders of magnitude. D^-1 A is similar to D_K^-1 K, so
 * rho(B) ~ 4 (FV_EDGE + FV_CORNER) ~ 0.855 like fv1/fv2 (Table 1: 0.8541) whatever S
 * is, while S makes cond(A) large as for the fv matrices. nnz = (3M - 2)^2: 87,025
 * for M = 99, as fv2 and fv3. The real fv matrices are not available here; this is a
 * stand-in with the same size, pattern and iteration-matrix radius, not a copy.
 */
#define FV_EDGE   0.2086
#define FV_CORNER 0.005

static hr_status gen_fv2d(int m, hr_csr **out)
{
    int64_t n = (int64_t)m * m;
    double *s = malloc((size_t)n * sizeof *s);
    coo t = {0};
    if (!s || coo_reserve(&t, n * 9) != HR_OK) {
        free(s);
        coo_free(&t);
        return HR_ERR_NO_MEMORY;
    }
    const double pi = 3.14159265358979323846;
    for (int64_t i = 0; i < n; i++) {
        double x = (double)(i % m) / m, y = (double)(i / m) / m;
        s[i] = exp(2.3 * sin(pi * x) * cos(1.5 * pi * y)); /* in [0.1, 10] */
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i / m, c = i % m;
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++) {
                int64_t rr = r + dr, cc = c + dc;
                if (rr < 0 || rr >= m || cc < 0 || cc >= m) continue;
                int64_t j = rr * m + cc;
                double k = (dr == 0 && dc == 0) ? 1.0 : (dr == 0 || dc == 0) ? -FV_EDGE : -FV_CORNER;
                coo_push(&t, i, j, k * (s[i] * s[j])); /* s_i s_j == s_j s_i: exactly symmetric */
            }
    }
    free(s);
    return coo_finish(&t, (int)n, out);
}

/* random-spd: each row draws about density*(n-1)/2 partners j, each pair (i,j),(j,i)
 * gets the same value in [-1, 1); the diagonal is 1 + 1.25 * (sum of |off-diagonal|)
 * of its row, so A is symmetric, strictly diagonally dominant with positive diagonal,
 * hence SPD, and rho(|B|) <= 0.8. */
static hr_status gen_random_spd(int n, double density, uint64_t seed, hr_csr **out)
{
    int64_t per_row = (int64_t)llround(density * (double)(n - 1) / 2.0);
    if (n < 2) per_row = 0;
    if ((double)per_row * n * 2 + n > 2e9) return HR_ERR_INVALID_ARG; /* caller reports it as too large */
    coo t = {0};
    double *diag = calloc((size_t)n, sizeof *diag);
    if (!diag || coo_reserve(&t, 2 * per_row * n + n) != HR_OK) {
        free(diag);
        coo_free(&t);
        return HR_ERR_NO_MEMORY;
    }
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < per_row; k++) {
            int64_t j = (int64_t)(hr_splitmix64(&st) % (uint64_t)(n - 1));
            if (j >= i) j++; /* never the diagonal */
            double v = 2.0 * hr_uniform01(&st) - 1.0;
            coo_push(&t, i, j, v);
            coo_push(&t, j, i, v);
            diag[i] += fabs(v);
            diag[j] += fabs(v);
        }
    for (int64_t i = 0; i < n; i++)
        coo_push(&t, i, i, 1.0 + 1.25 * diag[i]);
    free(diag);
    return coo_finish(&t, n, out);
}

static hr_status bad(char *why, size_t ws, const char *fmt, const char *spec)
{
    if (why && ws) snprintf(why, ws, fmt, spec);
    return HR_ERR_INVALID_ARG;
}

/* Strict positive integer field. */
static int field_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return 0;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

/* A parsed generator spec. */
typedef enum { G_TREFETHEN, G_LAPLACE2D, G_FV2D, G_LAPLACE3D, G_RANDOM } gen_kind;
typedef struct gen_spec {
    gen_kind kind;
    long a; /* N or M */
    double density;
    long seed;
} gen_spec;

static hr_status parse_spec(const char *spec, gen_spec *g, char *why, size_t ws)
{
    if (!spec) return bad(why, ws, "%s", "no generator given");
    char buf[128], *f[5] = {0};
    if (strlen(spec) >= sizeof buf) return bad(why, ws, "'%.60s...': too long", spec);
    strcpy(buf, spec);
    int nf = 0;
    /* every field must be there: "laplace2d::8" is not "laplace2d:8" */
    for (char *p = buf;; nf++) {
        char *colon = strchr(p, ':');
        if (colon) *colon = '\0';
        if (!*p) return bad(why, ws, "'%s': an empty field (expected NAME:SIZE)", spec);
        if (nf == 5) return bad(why, ws, "'%s': too many ':' fields", spec);
        f[nf] = p;
        if (!colon) {
            nf++;
            break;
        }
        p = colon + 1;
    }
    if (nf == 0) return bad(why, ws, "'%s': expected NAME:SIZE", spec);
    memset(g, 0, sizeof *g);
    if (strcmp(f[0], "trefethen") == 0) {
        if (nf != 2 || !field_long(f[1], 1, 50000000, &g->a))
            return bad(why, ws, "'%s': expected trefethen:N with 1 <= N <= 50000000", spec);
        g->kind = G_TREFETHEN;
    } else if (strcmp(f[0], "laplace2d") == 0 || strcmp(f[0], "fv2d") == 0) {
        if (nf != 2 || !field_long(f[1], 1, 40000, &g->a))
            return bad(why, ws, "'%s': expected NAME:M with 1 <= M <= 40000 (n = M^2)", spec);
        g->kind = f[0][0] == 'l' ? G_LAPLACE2D : G_FV2D;
    } else if (strcmp(f[0], "laplace3d") == 0) {
        if (nf != 2 || !field_long(f[1], 1, 1000, &g->a))
            return bad(why, ws, "'%s': expected laplace3d:M with 1 <= M <= 1000 (n = M^3)", spec);
        g->kind = G_LAPLACE3D;
    } else if (strcmp(f[0], "random-spd") == 0) {
        char *end = NULL;
        g->density = nf == 4 ? strtod(f[2], &end) : -1.0;
        if (nf != 4 || !field_long(f[1], 1, 100000000, &g->a) || !end || *end ||
            !(g->density >= 0.0 && g->density <= 1.0) || !field_long(f[3], 0, 2147483647L, &g->seed))
            return bad(why, ws,
                       "'%s': expected random-spd:N:DENSITY:SEED with N >= 1, 0 <= DENSITY <= 1, SEED >= 0",
                       spec);
        g->kind = G_RANDOM;
        const int64_t per_row = g->a < 2 ? 0 : (int64_t)llround(g->density * (double)(g->a - 1) / 2.0);
        if ((double)per_row * g->a * 2 + g->a > 2e9) return bad(why, ws, "'%s': more than 2e9 entries", spec);
    } else {
        return bad(why, ws, "'%s': unknown generator (trefethen, laplace2d, laplace3d, fv2d, random-spd)",
                   spec);
    }
    return HR_OK;
}

/* Rows, reserved triplets and the peak bytes of generating g: the triplets (16 bytes each),
 * a generator's scratch vector, then the CSR built beside them with its fill counters. */
static void spec_size(const gen_spec *g, int64_t *n, int64_t *cap, double *peak)
{
    const int64_t a = g->a;
    double scratch = 0.0;
    *n = *cap = 0;
    switch (g->kind) {
    case G_TREFETHEN:
        *n = a;
        *cap = a;
        for (int64_t d = 1; d < a; d *= 2)
            *cap += 2 * (a - d);
        scratch = 8.0 * (double)a + (a < 6 ? 15.0 : (double)a * (log((double)a) + log(log((double)a))) + 4.0);
        break;
    case G_LAPLACE2D:
    case G_FV2D:
        *n = a * a;
        *cap = *n * (g->kind == G_FV2D ? 9 : 5);
        scratch = g->kind == G_FV2D ? 8.0 * (double)*n : 0.0;
        break;
    case G_LAPLACE3D:
        *n = a * a * a;
        *cap = *n * 7;
        break;
    case G_RANDOM: {
        const int64_t per_row = a < 2 ? 0 : (int64_t)llround(g->density * (double)(a - 1) / 2.0);
        *n = a;
        *cap = 2 * per_row * a + a;
        scratch = 8.0 * (double)a;
        break;
    }
    }
    *peak = 16.0 * (double)*cap + scratch + hri_csr_bytes(*n, *cap) + 8.0 * ((double)*n + 1.0);
}

hr_status hri_sparse_generate_size(const char *spec, int64_t *n, int64_t *nnz, double *peak, char *why,
                                  size_t ws)
{
    gen_spec g;
    HR_TRY(parse_spec(spec, &g, why, ws));
    spec_size(&g, n, nnz, peak);
    return HR_OK;
}

hr_status hr_sparse_generate(const char *spec, hr_csr **out, char *why, size_t ws)
{
    if (!out) return HR_ERR_INVALID_ARG;
    *out = NULL;
    gen_spec g;
    HR_TRY(parse_spec(spec, &g, why, ws));
    /* refuse what cannot fit before touching it */
    int64_t n = 0, cap = 0;
    double peak;
    spec_size(&g, &n, &cap, &peak);
    const double avail = (double)hri_host_available_bytes();
    if (peak > avail) {
        char b1[32], b2[32];
        if (why && ws)
            snprintf(why, ws, "'%s': generating n = %lld, %lld entries needs %s, %s available", spec,
                     (long long)n, (long long)cap, hri_sparse_bytes_text(peak, b1, sizeof b1),
                     hri_sparse_bytes_text(avail, b2, sizeof b2));
        return HR_ERR_NO_MEMORY;
    }
    hr_status st;
    switch (g.kind) {
    case G_TREFETHEN: st = gen_trefethen((int)g.a, out); break;
    case G_LAPLACE2D: st = gen_laplace((int)g.a, 2, out); break;
    case G_FV2D: st = gen_fv2d((int)g.a, out); break;
    case G_LAPLACE3D: st = gen_laplace((int)g.a, 3, out); break;
    default: st = gen_random_spd((int)g.a, g.density, (uint64_t)g.seed, out); break;
    }
    if (st == HR_ERR_INVALID_ARG) return bad(why, ws, "'%s': more than 2e9 entries", spec);
    if (st == HR_ERR_NO_MEMORY) bad(why, ws, "'%s': out of memory", spec);
    return st;
}
