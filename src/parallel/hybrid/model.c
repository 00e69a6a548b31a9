/* The split model of include/hetrelax/hybrid.h: pure arithmetic on measured times. */
#include "hetrelax/hybrid.h"

#include <math.h>

double hr_split_model_exchange(const hr_split_model *m, int rows_a)
{
    if (!m) return NAN;
    if (rows_a <= 0 || rows_a >= m->rows) return 0.0;
    const double per = m->x_latency + (m->x_bandwidth > 0.0 ? m->row_bytes / m->x_bandwidth : 0.0);
    return (m->messages > 0 ? m->messages : 2) * per;
}

/* A's part of r rows from the knots: the times at the knots' rows (r_k = ws_k / ws per
 * row, T_k = r_k s_k), linear in r between them (a part's time is near-linear between
 * rungs sqrt 2 apart, with a fixed cost that a per-row rate misses at small parts:
 * docs/hybrid.md), proportional to r beyond the ends. */
static double part_a_knots(const hr_split_model *m, double r)
{
    const int k = m->a_knots < HR_SPLIT_KNOTS ? m->a_knots : HR_SPLIT_KNOTS;
    const double wr = m->a_ws_per_row > 0.0 ? m->a_ws_per_row : 1.0;
    double r0 = m->a_knot_ws[0] / wr, t0 = r0 * m->a_knot_row_s[0];
    if (!(r > r0)) return r * m->a_knot_row_s[0];
    for (int i = 1; i < k; i++) {
        const double r1 = m->a_knot_ws[i] / wr, t1 = r1 * m->a_knot_row_s[i];
        if (r <= r1) return r1 > r0 ? t0 + (r - r0) / (r1 - r0) * (t1 - t0) : t1;
        r0 = r1, t0 = t1;
    }
    return r * m->a_knot_row_s[k - 1];
}

double hr_split_model_row_s(const hr_split_model *m, double ws)
{
    if (!m) return NAN;
    const int k = m->a_knots < HR_SPLIT_KNOTS ? m->a_knots : HR_SPLIT_KNOTS;
    if (k <= 0) return m->rows > 0 ? m->t_a / m->rows : 0.0;
    const double r = ws / (m->a_ws_per_row > 0.0 ? m->a_ws_per_row : 1.0);
    return r > 0.0 ? part_a_knots(m, r) / r : m->a_knot_row_s[0];
}

/* The ramp's factor at r rows (1 without one). */
static double ramp(const hr_split_model *m, double r)
{
    const int n = m->a_ramp < HR_SPLIT_RAMP ? m->a_ramp : HR_SPLIT_RAMP;
    if (n <= 0) return 1.0;
    if (r <= m->a_ramp_rows[0]) return m->a_ramp_k[0];
    for (int i = 1; i < n; i++) {
        const double r0 = m->a_ramp_rows[i - 1], r1 = m->a_ramp_rows[i], k0 = m->a_ramp_k[i - 1],
                     k1 = m->a_ramp_k[i];
        if (r <= r1) return r1 > r0 && r0 > 0.0 ? k0 + (k1 - k0) * log(r / r0) / log(r1 / r0) : k1;
    }
    return m->a_ramp_k[n - 1];
}

double hr_split_model_part_a(const hr_split_model *m, int rows_a)
{
    if (!m) return NAN;
    if (rows_a <= 0 || m->rows <= 0) return 0.0;
    const double t = m->a_knots <= 0 ? (double)rows_a / (double)m->rows * m->t_a : part_a_knots(m, rows_a);
    return t * ramp(m, rows_a);
}

int hr_split_model_set_knots(hr_split_model *m, const int *rows, const double *s, int count, double x0,
                             int *knot_rows)
{
    /* A's part at a rung: the split's time less X0 (no X0 for A alone), capped by every larger
     * rung's. A's part does not get faster with more rows and the split waits for it, so a rung
     * slower than a larger one measured an engine that ran slow as a whole (n = 16384:
     * 724 rows 824 us, 1024 rows 730 us; as a knot the slow rung put 737-1147 rows 20-35 %
     * high; offline over the recorded H100 ladders the cap brings 789 of 1380 splits within
     * 10 % against 745). */
    if (!m || (count > 0 && (!rows || !s))) return -1;
    double part[HR_SPLIT_KNOTS], cap = HUGE_VAL;
    if (count > HR_SPLIT_KNOTS) count = HR_SPLIT_KNOTS;
    for (int k = count - 1; k >= 0; k--) {
        const double a = rows[k] < m->rows ? s[k] - x0 : s[k];
        cap = a < cap ? a : cap;
        part[k] = cap;
    }
    int fastest = -1;
    m->a_knots = 0;
    for (int k = 0; k < count; k++) {
        const int r = rows[k];
        /* a knot where A is clearly the later part, and always at m->rows (A alone) */
        if (r <= 0 || (r < m->rows && !(part[k] > 1.1 * hr_split_model_part_b(m, r)))) continue;
        const int q = m->a_knots++;
        if (knot_rows) knot_rows[q] = r;
        m->a_knot_ws[q] = r * m->a_ws_per_row;
        m->a_knot_row_s[q] = part[k] / r;
        if (fastest < 0 || m->a_knot_row_s[q] < m->a_knot_row_s[fastest]) fastest = q;
    }
    return fastest;
}

double hr_split_model_part_b(const hr_split_model *m, int rows_a)
{
    if (!m) return NAN;
    if (m->rows <= 0 || rows_a >= m->rows) return 0.0;
    const double tb = (1.0 - (double)(rows_a > 0 ? rows_a : 0) / (double)m->rows) * m->t_b;
    return tb > m->b_floor ? tb : m->b_floor;
}

double hr_split_model_max(double a, double b, double sigma)
{
    if (!(sigma > 0.0)) return a > b ? a : b;
    /* E max(A, B), A ~ N(a, s^2), B ~ N(b, s^2) independent: theta = s sqrt 2 */
    const double th = sigma * sqrt(2.0), al = (a - b) / th;
    const double Phi = 0.5 * erfc(-al / sqrt(2.0)), phi = exp(-0.5 * al * al) / sqrt(2.0 * M_PI);
    return a * Phi + b * (1.0 - Phi) + th * phi;
}

double hr_split_model_time(const hr_split_model *m, int rows_a)
{
    if (!m) return NAN;
    if (m->rows <= 0) return 0.0;
    if (rows_a <= 0) return m->b_alone > 0.0 ? m->b_alone : m->t_b;
    if (rows_a > m->rows) rows_a = m->rows;
    const double ta = hr_split_model_part_a(m, rows_a), tb = hr_split_model_part_b(m, rows_a);
    if (rows_a == m->rows) return ta;
    return hr_split_model_max(ta, tb, m->x_sigma) + hr_split_model_exchange(m, rows_a);
}

int hr_split_model_best(const hr_split_model *m, double *t)
{
    if (!m) {
        if (t) *t = NAN;
        return -1;
    }
    int best = 0;
    double tbest = hr_split_model_time(m, 0);
    for (int r = 1; r <= m->rows; r++) {
        const double tr = hr_split_model_time(m, r);
        if (tr < tbest) {
            tbest = tr;
            best = r;
        }
    }
    if (t) *t = tbest;
    return best;
}

double hr_split_stream_share(double a_bw, double b_bw)
{
    if (!(a_bw >= 0.0) || !(b_bw >= 0.0) || a_bw + b_bw <= 0.0) return NAN;
    return a_bw / (a_bw + b_bw);
}

void hr_split_model_curve(const hr_split_model *m, const double *f, int count, double *t)
{
    if (!f || !t) return;
    for (int i = 0; i < count; i++) {
        if (!m) {
            t[i] = NAN;
            continue;
        }
        const int r = (int)lround(f[i] * (double)m->rows);
        t[i] = hr_split_model_time(m, r);
    }
}

int hr_split_model_best_range(const hr_split_model *m, int lo, int hi, double margin, double *t)
{
    if (!m) {
        if (t) *t = NAN;
        return -1;
    }
    const double t0 = hr_split_model_time(m, 0);
    int best = 0;
    double tbest = t0;
    if (lo < 1) lo = 1;
    if (hi > m->rows) hi = m->rows;
    for (int r = lo; r <= hi; r++) {
        const double tr = hr_split_model_time(m, r);
        if (tr < tbest) {
            tbest = tr;
            best = r;
        }
    }
    if (best > 0 && !(tbest < (1.0 - margin) * t0)) {
        best = 0;
        tbest = t0;
    }
    if (t) *t = tbest;
    return best;
}

int hr_split_model_rank_rows(double fraction, int n)
{
    return fraction <= 0.0 ? 0 : fraction >= 1.0 ? n : (int)(fraction * n + 0.5);
}

double hr_split_model_ranks_time(const hr_split_model *m, int ranks, double fraction, int g, double x_ranks,
                                 double t0)
{
    if (!m || ranks < 1) return NAN;
    if (fraction <= 0.0 && t0 > 0.0) return t0;
    double worst = 0.0;
    for (int r = 0; r < ranks; r++) {
        const int n = m[r].rows, a = hr_split_model_rank_rows(fraction, n);
        if (fraction > 0.0 && fraction < 1.0 && (a < g || n - a < g)) return NAN;
        const double t = hr_split_model_time(&m[r], a);
        worst = t > worst ? t : worst;
    }
    return worst + x_ranks;
}
