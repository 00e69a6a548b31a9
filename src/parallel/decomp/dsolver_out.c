/* The decomposed solver's results on the host: the error against a known solution and
 * the own points copied into global arrays or blocks (see dsolver.h). The host grids hold
 * the solution (a device placement downloads it at the end of a run). */
#include <math.h>
#include <string.h>

#include "core/precision.h"
#include "parallel/decomp/dsolver.h"

#define HR_PI 3.14159265358979323846

/* Largest error against the known exact solution over the own points, or NaN. */
double hri_dsolver_max_error(const hr_dsolver *s)
{
    hr_run_problem p = s->p;
    double scale;
    if (p.rhs == HR_RHS_MANUFACTURED) {
        scale = 1.0;
    } else if (p.init == HR_INIT_SINE && p.rhs == HR_RHS_ZERO && p.boundary == 0.0) {
        double lam = cos(HR_PI / (p.nx + 1.0)) + cos(HR_PI / (p.ny + 1.0));
        lam = p.dim == 3 ? (lam + cos(HR_PI / (p.nz + 1.0))) / 3.0 : lam / 2.0;
        lam = 1.0 - p.omega + p.omega * lam;
        scale = pow(lam, (double)s->done);
    } else {
        return NAN;
    }
    p.init = HR_INIT_SINE; /* the sine mode of the box */
    double e = 0.0;
    for (int l = 0; l < s->nlocal; l++) {
        const hr_dsub *d = &s->subs[l];
        const hr_box *b = &d->g.own;
        for (int k = b->lo[2]; k < b->hi[2]; k++)
            for (int i = b->lo[1]; i < b->hi[1]; i++)
                for (int j = b->lo[0]; j < b->hi[0]; j++) {
                    const double x = hri_problem_init_at(&p, NULL, hr_subdomain_global(&d->g, 1, i),
                                                        hr_subdomain_global(&d->g, 0, j),
                                                        hr_subdomain_global(&d->g, 2, k));
                    const double dd = fabs(hri_grid_get3(&d->u[s->cur], i, j, k) - scale * x);
                    if (!(dd <= e)) e = dd;
                }
    }
    return e;
}

/* Copies the own points of d row by row between the grid and a row-major array whose
 * element (x, y, z) of the own block sits at dst + ((z * ny + y) * nx + x) * es, with
 * extents and a base offset given by the caller. */
static void own_rows(const hr_dsub *d, const hr_grid *g, hr_precision prec, char *dst, const size_t stride[3])
{
    const size_t es = g->l.esize, ues = hr_prec_bytes(prec);
    const hr_box *b = &d->g.own;
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int i = b->lo[1]; i < b->hi[1]; i++) {
            const char *row =
                (const char *)g->base + hr_layout_index(&g->l, (size_t)i, (size_t)b->lo[0], (size_t)k) * es;
            char *urow =
                dst + ((size_t)(k - b->lo[2]) * stride[2] + (size_t)(i - b->lo[1]) * stride[1]) * ues;
            const int nx = b->hi[0] - b->lo[0];
            if (es == ues) {
                memcpy(urow, row, (size_t)nx * es);
                continue;
            }
            for (int j = 0; j < nx; j++) {
                const double v = es == 8 ? ((const double *)row)[j] : ((const float *)row)[j];
                if (ues == 8)
                    ((double *)urow)[j] = v;
                else
                    ((float *)urow)[j] = (float)v;
            }
        }
}

void hri_dsolver_own_to_global(const hr_dsolver *s, hr_precision prec, void *global)
{
    const size_t ues = hr_prec_bytes(prec);
    const size_t stride[3] = {1, (size_t)s->p.nx, (size_t)s->p.nx * (size_t)s->p.ny};
    for (int l = 0; l < s->nlocal; l++) {
        const hr_dsub *d = &s->subs[l];
        const size_t base =
            (size_t)d->g.off[2] * stride[2] + (size_t)d->g.off[1] * stride[1] + (size_t)d->g.off[0];
        own_rows(d, &d->u[s->cur], prec, (char *)global + base * ues, stride);
    }
}

void hri_dsolver_own_to_block(const hr_dsolver *s, int local, hr_precision prec, void *block)
{
    const hr_dsub *d = &s->subs[local];
    const size_t stride[3] = {1, (size_t)d->g.n[0], (size_t)d->g.n[0] * (size_t)d->g.n[1]};
    own_rows(d, &d->u[s->cur], prec, block, stride);
}

void hri_block_to_global(const hr_decomp *d, int id, hr_precision prec, const void *block, void *global)
{
    hr_subdomain g;
    hri_subdomain_init(d, id, 4, &g);
    const size_t ues = hr_prec_bytes(prec), row = (size_t)g.n[0] * ues;
    const char *src = block;
    for (int z = 0; z < g.n[2]; z++)
        for (int y = 0; y < g.n[1]; y++) {
            const size_t at =
                ((size_t)(g.off[2] + z) * (size_t)d->n[1] + (size_t)(g.off[1] + y)) * (size_t)d->n[0] +
                (size_t)g.off[0];
            memcpy((char *)global + at * ues, src, row);
            src += row;
        }
}

/* ---- the schedule's trace (dsolver.h, tuning.dsolver_trace) ---- */
#include <stdio.h>
#include <stdlib.h>

void hri_dsolver_trace_open(hr_dsolver *s)
{
    const char *e = s->o.tuning.dsolver_trace;
    if (!e || !e[0] || s->trace) return;
    s->trace_cap = 20000;
    s->trace = malloc((size_t)s->trace_cap * HR_TRACE_FIELDS * sizeof *s->trace);
    s->ntrace = 0;
}

void hri_dsolver_trace_add(hr_dsolver *s, const double v[HR_TRACE_FIELDS])
{
    if (!s->trace || s->ntrace >= s->trace_cap) return;
    memcpy(s->trace + s->ntrace++ * HR_TRACE_FIELDS, v, HR_TRACE_FIELDS * sizeof *v);
}

void hri_dsolver_trace_close(hr_dsolver *s)
{
    const char *e = s->o.tuning.dsolver_trace;
    if (s->trace && s->ntrace > 0 && e && s->subs && s->d.count > 0) {
        char path[512];
        snprintf(path, sizeof path, "%s.%d", e, s->subs[0].g.id);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "# start posted inner_end arrived end inner_cpu_s invol_switches\n");
            for (long r = 0; r < s->ntrace; r++) {
                const double *v = s->trace + r * HR_TRACE_FIELDS;
                fprintf(f, "%.9f %.9f %.9f %.9f %.9f %.9f %.0f\n", v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
            }
            fclose(f);
        } else {
            fprintf(stderr, "hetrelax: cannot write the trace %s\n", path);
        }
    }
    free(s->trace);
    s->trace = NULL;
    s->ntrace = s->trace_cap = 0;
}
