/* hr_hybrid_explain(): the model's curve, the chosen split and predicted vs measured
 * time, as text for `--explain` and `hetrelax model`. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "hetrelax/hybrid.h"

typedef struct out_buf {
    char *p;
    size_t size, len;
} out_buf;

static void put(out_buf *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void put(out_buf *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const size_t room = o->len < o->size ? o->size - o->len : 0;
    const int n = vsnprintf(room ? o->p + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n;
}

int hr_hybrid_explain(const hr_hybrid_info *in, double measured_s, char *buf, size_t size)
{
    out_buf o = {buf, buf ? size : 0, 0};
    if (buf && size) buf[0] = '\0';
    if (!in) return 0;
    const char *unit = in->model.rows > 0 && in->rows == in->model.rows ? "rows" : "rows";
    put(&o, "split: %d of %d %s on the CPU (%.2f %%)%s, ghost %d, schedule %s, second placement %s\n",
        in->rows_cpu, in->rows, unit, 100.0 * in->split,
        in->auto_split == 2 ? " chosen by the STREAM rule"
        : in->auto_split    ? " chosen by the model"
                            : " as given",
        in->ghost, in->schedule == 1 ? "naive" : "nested", in->second == 1 ? "cpu" : "gpu");
    if (in->exchange[0]) put(&o, "exchange between parts: %s\n", in->exchange);
    if (in->fallback_sweep > 0)
        put(&o,
            "auto's watch: the split of %d rows ran %.6g s per sweep (GPU-only %.6g s in the calibration); "
            "fell back to GPU-only after sweep %ld\n",
            in->fallback_rows_cpu, in->fallback_split_s, in->cal.gpu_alone_s, in->fallback_sweep);
    if (!in->have_model) {
        put(&o, "model: not calibrated (give --split auto)\n");
    } else {
        const hr_split_model *m = &in->model;
        const hr_hybrid_calibration *c = &in->cal;
        put(&o,
            "calibration (%.3f s, nonzero data, the run's engine): t_c %.6g s (CPU, at the %d-row rung's "
            "rate, "
            "the fastest), t_g %.6g s (B sweep by sweep; alone with graphs %.6g s; floor %.3g s on %d rows), "
            "X0 %.6g s (the split at %d rows: %.6g s/sweep, less B's part)\n",
            c->seconds, c->t_cpu, c->cpu_slab_rows, c->t_gpu, c->gpu_alone_s, c->gpu_floor_s, c->floor_rows,
            c->x_off, c->probe_rows, c->probe_s);
        if (c->ladder > 0) {
            put(&o, "the split measured at (rows on the CPU: s/sweep, * = a knot of the CPU term):");
            for (int k = 0; k < c->ladder; k++) {
                int knot = 0;
                for (int q = 0; q < c->cpu_knots; q++)
                    knot |= c->cpu_knot_rows[q] == c->ladder_rows[k];
                put(&o, " %d: %.4g%s", c->ladder_rows[k], c->ladder_s[k], knot ? "*" : "");
            }
            if (c->remeasured > 0)
                put(&o, " (%d rung(s) off their neighbours' line measured again)", c->remeasured);
            put(&o, "\n");
        }
        if (m->a_knots > 0) {
            put(&o,
                "CPU cost per row against its working set (knots; LLC %.0f MiB):", c->llc_bytes / 1048576.0);
            for (int k = 0; k < m->a_knots; k++)
                put(&o, " %d rows %.3g MiB %.4g s (x%.2f)", k < c->cpu_knots ? c->cpu_knot_rows[k] : 0,
                    m->a_knot_ws[k] / 1048576.0, m->a_knot_row_s[k], m->a_knot_row_s[k] / m->a_knot_row_s[0]);
            put(&o, "\n");
        }
        if (c->off_rows > 0)
            put(&o,
                "exchange: off the balance (%d rows: %.6g s/sweep) X0 %.6g s; the parts' jitter sigma %.3g s "
                "(Clark's E max near the balance)\n",
                c->off_rows, c->off_s, c->x_off, c->x_sigma);
        if (c->candidates > 0) {
            put(&o, "measured candidates for auto (rows: s/sweep, model):");
            for (int k = 0; k < c->candidates; k++) {
                put(&o, " %d: %.6g (%.6g)", c->cand_rows[k], c->cand_s[k], hr_split_model_time(m, c->cand_rows[k]));
                if (c->cand_again_s[k] > 0) put(&o, " again %.6g", c->cand_again_s[k]);
            }
            if (c->cand_remeasured > 0)
                put(&o, " (%d measurement(s) over 1.2x the model repeated)", c->cand_remeasured);
            put(&o, "; GPU-only %.6g: a split must be 1 %% faster, twice\n", c->gpu_alone_s);
        }
        if (c->x_bandwidth > 0)
            put(&o, "pinned copies: latency %.3g us one way, %.3g GB/s, %.0f bytes per row\n",
                c->x_latency * 1e6, c->x_bandwidth * 1e-9, c->row_bytes);
        const double fstar = m->t_b / (m->t_a + m->t_b);
        put(&o,
            "model: T(f) = max(t_c(f n rows), (1 - f) t_g) + X0, T(0) = B alone; exchange-free optimum at "
            "the "
            "fastest rate f* = %.4f, bound on the gain 1 + t_g/t_c = %.4f\n",
            fstar, 1.0 + m->t_b / m->t_a);
        if (c->cpu_stream_gbps > 0 && c->gpu_stream_gbps > 0)
            put(&o, "STREAM rule (Sourouri et al.): %.2f / (%.2f + %.2f) = %.4f of the rows on the CPU\n",
                c->cpu_stream_gbps, c->cpu_stream_gbps, c->gpu_stream_gbps,
                hr_split_stream_share(c->cpu_stream_gbps, c->gpu_stream_gbps));
        put(&o, "predicted curve (fraction on the CPU: seconds per sweep, relative to GPU-only):\n");
        const double t0 = hr_split_model_time(m, 0);
        for (int i = 0; i <= 20 + 6; i++) {
            const double f = i <= 20 ? 0.005 * i : 0.10 + 0.05 * (i - 20);
            const int r = (int)lround(f * m->rows);
            const double t = hr_split_model_time(m, r);
            put(&o, "  %6.2f %%  %.6g s  %.4f\n", 100.0 * f, t, t0 > 0 ? t / t0 : NAN);
        }
        put(&o, "predicted at the chosen split: %.6g s per sweep (GPU-only %.6g s)\n", in->predicted_s,
            in->gpu_only_s);
    }
    if (measured_s > 0) {
        put(&o, "measured: %.6g s per sweep", measured_s);
        if (in->have_model && in->predicted_s > 0)
            put(&o, " (predicted/measured %.3f)", in->predicted_s / measured_s);
        put(&o, "\n");
    }
    return (int)o.len;
}
