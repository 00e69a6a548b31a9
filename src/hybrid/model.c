/* The split model of include/hetrelax/hybrid.h: pure arithmetic on measured times. */
#include "hetrelax/hybrid.h"

#include <math.h>

double hr_split_model_exchange(const hr_split_model *m, int rows_a)
{
    if (rows_a <= 0 || rows_a >= m->rows) return 0.0;
    const double per = m->x_latency + (m->x_bandwidth > 0.0 ? m->row_bytes / m->x_bandwidth : 0.0);
    return (m->messages > 0 ? m->messages : 2) * per;
}

double hr_split_model_time(const hr_split_model *m, int rows_a)
{
    if (m->rows <= 0) return 0.0;
    if (rows_a < 0) rows_a = 0;
    if (rows_a > m->rows) rows_a = m->rows;
    const double f = (double)rows_a / (double)m->rows;
    const double ta = f * m->t_a, tb = (1.0 - f) * m->t_b;
    return (ta > tb ? ta : tb) + hr_split_model_exchange(m, rows_a);
}

int hr_split_model_best(const hr_split_model *m, double *t)
{
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
    for (int i = 0; i < count; i++) {
        const int r = (int)lround(f[i] * (double)m->rows);
        t[i] = hr_split_model_time(m, r);
    }
}

int hr_split_model_best_range(const hr_split_model *m, int lo, int hi, double margin, double *t)
{
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
