/* The coarse levels of a GPU cycle on the CPU cores (--coarse-on cpu): see mg_cpu_part.h. */
#include "methods/mg/mg_cpu_part.h"

#include <stdlib.h>
#include <string.h>

#include "methods/mg/mg_internal.h"

struct mg_cpu_part {
    mg_hier H;
    hr_team *team;
    mg_tls *tls;
    int nt, symmetric;
    /* the job */
    int init, fresh;
    hr_mg_cycle type;
};

static void part_fn(void *ctx, int tid, int nt)
{
    mg_cpu_part *p = ctx;
    const mg_worker w = {p->team, tid, nt, &p->tls[tid]};
    if (p->init) {
        hri_mg_hier_init(&p->H, &w, 0.0);
        return;
    }
    mg_level *L = &p->H.lev[0];
    int s0, s1;
    hri_mg_begin(&w, L->threaded);
    hri_mg_part(&w, L->threaded, L->slices, &s0, &s1);
    if (s0 < s1 && p->fresh) hri_mg_zero(L, &L->u[w.tls->cur[0]], s0, s1);
    hri_mg_end(&w, L->threaded);
    if (p->type == HR_MG_CYCLE_FMG)
        hri_mg_fmg_part(&p->H, &w, p->symmetric, 0);
    else
        hri_mg_cycle(&p->H, &w, 0, p->type, p->symmetric);
}

static void run(mg_cpu_part *p)
{
    if (p->team)
        hri_team_run(p->team, part_fn, p);
    else
        part_fn(p, 0, 1);
}

hr_status hri_mg_cpu_part_create(const mg_cpu_part_setup *s, mg_cpu_part **out)
{
    *out = NULL;
    mg_cpu_part *p = calloc(1, sizeof *p);
    if (!p) return HR_ERR_NO_MEMORY;
    p->nt = s->threads > 0 ? s->threads : hri_cpu_count();
    /* levels under HR_MG_THREADED_POINTS run on worker 0 alone: no team to wake up then */
    if ((long)s->nx * s->ny * (s->dim == 3 ? s->nz : 1) < HR_MG_THREADED_POINTS) p->nt = 1;
    p->symmetric = s->symmetric;
    p->tls = calloc((size_t)p->nt, sizeof *p->tls);
    hr_status st = p->tls ? HR_OK : HR_ERR_NO_MEMORY;
    if (st == HR_OK && p->nt > 1) st = hri_team_create(p->nt, HR_BIND_NONE, &p->team);
    mg_hier *H = &p->H;
    H->smoother = s->smoother;
    H->pre = s->pre;
    H->post = s->post;
    H->symmetric = s->symmetric;
    H->omega = s->omega;
    H->hugepages = s->hugepages;
    if (st == HR_OK) st = hri_mg_hier_build(H, s->dim, s->nx, s->ny, s->nz, s->nlev, s->esize, p->nt);
    if (st != HR_OK) {
        hri_mg_cpu_part_free(p);
        return st;
    }
    p->init = 1;
    run(p);
    p->init = 0;
    *out = p;
    return HR_OK;
}

void hri_mg_cpu_part_free(mg_cpu_part *p)
{
    if (!p) return;
    hri_mg_hier_free(&p->H);
    if (p->team) hri_team_free(p->team);
    free(p->tls);
    free(p);
}

size_t hri_mg_cpu_part_bytes(const mg_cpu_part *p)
{
    return hr_layout_bytes(&p->H.lev[0].l);
}

void hri_mg_cpu_part_run(mg_cpu_part *p, const void *hf, void *u_out, hr_mg_cycle type, int fresh)
{
    mg_level *L = &p->H.lev[0];
    if (fresh) memcpy(L->hf.base, hf, hri_mg_cpu_part_bytes(p));
    p->type = type;
    p->fresh = fresh;
    run(p);
    memcpy(u_out, L->u[p->tls[0].cur[0]].base, hri_mg_cpu_part_bytes(p));
}
