/* Cartesian decomposition, subdomain geometry and face packing (see decomp.h). */
#include "parallel/decomp/decomp.h"
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char axis_name[3] = {'x', 'y', 'z'};

hr_status hri_decomp_init(hr_decomp *d, int dim, const int n[3], const int parts[3], int ghost, char *w,
                         size_t ws)
{
    memset(d, 0, sizeof *d);
    if (dim != 2 && dim != 3) return hri_invalid_arg(w, ws, "dim: must be 2 or 3");
    d->dim = dim;
    d->ghost = ghost;
    d->cut_axis = -1;
    long count = 1;
    for (int a = 0; a < 3; a++) {
        d->n[a] = a < dim ? n[a] : 1;
        d->parts[a] = a < dim ? parts[a] : 1;
        if (d->n[a] < 1) return hri_invalid_arg(w, ws, "n%c: must be >= 1", axis_name[a]);
        if (d->parts[a] < 1)
            return hri_invalid_arg(w, ws, "decomp: parts along %c must be >= 1", axis_name[a]);
        if (d->parts[a] > d->n[a])
            return hri_invalid_arg(w, ws, "decomp: %d parts along %c but only %d grid points", d->parts[a],
                                  axis_name[a], d->n[a]);
        count *= d->parts[a];
        if (count > 1 << 24) return hri_invalid_arg(w, ws, "decomp: more than %d subdomains", 1 << 24);
    }
    d->count = (int)count;
    if (ghost < 1) return hri_invalid_arg(w, ws, "ghost: must be >= 1");
    /* a neighbour must own `ghost` layers to fill the ghost zone in one hop */
    for (int a = 0; a < dim; a++)
        if (d->parts[a] > 1 && d->n[a] / d->parts[a] < ghost)
            return hri_invalid_arg(w, ws, "ghost: %d layers exceed the smallest subdomain extent %d along %c",
                                  ghost, d->n[a] / d->parts[a], axis_name[a]);
    return HR_OK;
}

hr_status hri_decomp_set_cuts(hr_decomp *d, int axis, const int *sizes, char *w, size_t ws)
{
    if (axis < 0 || axis >= d->dim || d->parts[axis] > HR_DECOMP_MAX_CUTS)
        return hri_invalid_arg(w, ws, "split: uneven parts need an axis of the grid with at most %d parts",
                              HR_DECOMP_MAX_CUTS);
    long sum = 0;
    for (int c = 0; c < d->parts[axis]; c++) {
        if (sizes[c] < 1)
            return hri_invalid_arg(w, ws, "split: part %d of %d along %c would have no points", c,
                                  d->parts[axis], axis_name[axis]);
        if (sizes[c] < d->ghost)
            return hri_invalid_arg(w, ws, "split: part %d along %c has %d points, fewer than %d ghost layers",
                                  c, axis_name[axis], sizes[c], d->ghost);
        d->cut[c] = (int)sum;
        sum += sizes[c];
    }
    if (sum != d->n[axis])
        return hri_invalid_arg(w, ws, "split: parts of %ld points along %c, but the grid has %d", sum,
                              axis_name[axis], d->n[axis]);
    d->cut[d->parts[axis]] = (int)sum;
    d->cut_axis = axis;
    return HR_OK;
}

hr_status hri_decomp_set_cut(hr_decomp *d, int axis, int first, char *w, size_t ws)
{
    if (axis < 0 || axis >= d->dim || d->parts[axis] != 2)
        return hri_invalid_arg(w, ws, "split: a cut needs two parts along %c",
                              axis_name[axis < 0 || axis > 2 ? 0 : axis]);
    const int sizes[2] = {first, d->n[axis] - first};
    return hri_decomp_set_cuts(d, axis, sizes, w, ws);
}

void hri_decomp_default_parts(int dim, int count, int parts[3])
{
    /* balanced factors f0 >= f1 [>= f2] with the smallest spread, as MPI_Dims_create */
    int best[3] = {count, 1, 1}, spread = count;
    if (dim == 2) {
        for (int b = 1; (long)b * b <= count; b++)
            if (count % b == 0 && count / b - b < spread) {
                spread = count / b - b;
                best[0] = count / b;
                best[1] = b;
            }
    } else {
        for (int c = 1; (long)c * c * c <= count; c++) {
            if (count % c) continue;
            const int r = count / c;
            for (int b = c; (long)b * b <= r; b++)
                if (r % b == 0 && r / b - c < spread) {
                    spread = r / b - c;
                    best[0] = r / b;
                    best[1] = b;
                    best[2] = c;
                }
        }
    }
    /* most parts along the slowest axis */
    if (dim == 2) {
        parts[0] = best[1];
        parts[1] = best[0];
        parts[2] = 1;
    } else {
        parts[0] = best[2];
        parts[1] = best[1];
        parts[2] = best[0];
    }
}

void hri_decomp_coords(const hr_decomp *d, int id, int c[3])
{
    c[0] = id % d->parts[0];
    c[1] = id / d->parts[0] % d->parts[1];
    c[2] = id / d->parts[0] / d->parts[1];
}

int hri_decomp_id(const hr_decomp *d, const int c[3])
{
    for (int a = 0; a < 3; a++)
        if (c[a] < 0 || c[a] >= d->parts[a]) return -1;
    return (c[2] * d->parts[1] + c[1]) * d->parts[0] + c[0];
}

int hri_subdomain_init(const hr_decomp *d, int id, size_t esize, hr_subdomain *s)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    hri_decomp_coords(d, id, s->coord);
    for (int a = 0; a < 3; a++) {
        const int len = d->n[a], p = d->parts[a], c = s->coord[a];
        const int base = len / p, extra = len % p;
        s->off[a] = c * base + (c < extra ? c : extra);
        s->n[a] = base + (c < extra ? 1 : 0);
        if (a == d->cut_axis) { /* uneven parts */
            s->off[a] = d->cut[c];
            s->n[a] = d->cut[c + 1] - d->cut[c];
        }
        for (int side = 0; side < 2; side++) {
            int nc[3] = {s->coord[0], s->coord[1], s->coord[2]};
            nc[a] += side ? 1 : -1;
            s->nb[a][side] = a < d->dim ? hri_decomp_id(d, nc) : -1;
        }
        if (a < d->dim) {
            s->pad_lo[a] = s->nb[a][0] >= 0 ? d->ghost : 1;
            s->pad_hi[a] = s->nb[a][1] >= 0 ? d->ghost : 1;
            if (s->nb[a][0] < 0) s->dirichlet |= 1u << (2 * a);
            if (s->nb[a][1] < 0) s->dirichlet |= 2u << (2 * a);
        }
    }
    int ext[3];
    for (int a = 0; a < 3; a++)
        ext[a] = s->n[a] + s->pad_lo[a] + s->pad_hi[a] - 2;
    if (!hr_layout_init(&s->l, d->dim, ext[0], ext[1], ext[2], esize)) return 0;
    for (int a = 0; a < 3; a++) {
        s->own.lo[a] = a < d->dim ? s->pad_lo[a] : 0;
        s->own.hi[a] = a < d->dim ? s->pad_lo[a] + s->n[a] : 1;
    }
    return 1;
}

hr_rhs_view hri_subdomain_spike(const hr_subdomain *s, int gi, int gj, int gk)
{
    hr_rhs_view v = {NULL, -1, -1, -1};
    if (gi < 0) return v;
    const int g[3] = {gj, gi, gk};
    int x[3];
    for (int a = 0; a < 3; a++) {
        x[a] = hr_subdomain_local(s, a, g[a]);
        if (x[a] < 0 || x[a] >= hr_subdomain_span(s, a)) return v;
    }
    v.spike_j = x[0];
    v.spike_i = x[1];
    v.spike_k = x[2];
    return v;
}

hr_box hri_subdomain_sweep_box(const hr_subdomain *s, int m, int step)
{
    hr_box b = s->own;
    const int grow = m - step;
    for (int a = 0; a < s->l.dim; a++) {
        if (s->nb[a][0] >= 0) b.lo[a] -= grow;
        if (s->nb[a][1] >= 0) b.hi[a] += grow;
    }
    return b;
}

int hri_subdomain_split(const hr_subdomain *s, hr_box *inner, hr_box shell[6])
{
    hr_box in = s->own;
    for (int a = 0; a < s->l.dim; a++) {
        if (s->nb[a][0] >= 0) in.lo[a]++;
        if (s->nb[a][1] >= 0) in.hi[a]--;
        if (in.hi[a] < in.lo[a]) in.hi[a] = in.lo[a];
    }
    *inner = in;
    /* slabs along x span the whole own box; along y the inner x range; along z the inner x, y */
    int n = 0;
    for (int a = 0; a < s->l.dim; a++)
        for (int side = 0; side < 2; side++) {
            hr_box b = s->own;
            for (int c = 0; c < a; c++) {
                b.lo[c] = in.lo[c];
                b.hi[c] = in.hi[c];
            }
            if (side == 0)
                b.hi[a] = in.lo[a];
            else
                b.lo[a] = in.hi[a];
            if (!hr_box_empty(&b)) shell[n++] = b;
        }
    return n;
}

hr_box hri_subdomain_face(const hr_subdomain *s, int ghost, int axis, int side, int recv, int corners)
{
    hr_box b = s->own;
    for (int a = 0; a < s->l.dim; a++)
        if (corners && a < axis) {
            b.lo[a] = 0;
            b.hi[a] = hr_subdomain_span(s, a);
        }
    const int lo = s->own.lo[axis], hi = s->own.hi[axis];
    if (side == 0) {
        b.lo[axis] = recv ? lo - ghost : lo;
        b.hi[axis] = recv ? lo : lo + ghost;
    } else {
        b.lo[axis] = recv ? hi : hi - ghost;
        b.hi[axis] = recv ? hi + ghost : hi;
    }
    return b;
}

/* Copies the box row by row; dir 0 packs (grid to buffer), 1 unpacks. */
static void copy_box(const hr_grid_layout *l, char *origin, const hr_box *b, char *buf, int dir)
{
    if (hr_box_empty(b)) return;
    const size_t es = l->esize, row = (size_t)(b->hi[0] - b->lo[0]) * es;
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int i = b->lo[1]; i < b->hi[1]; i++) {
            char *g = origin + ((size_t)k * l->plane + (size_t)i * l->pitch + (size_t)b->lo[0]) * es;
            if (dir == 0)
                memcpy(buf, g, row);
            else
                memcpy(g, buf, row);
            buf += row;
        }
}

void hri_pack_box(const hr_grid_layout *l, const void *origin, const hr_box *b, void *buf)
{
    copy_box(l, (char *)origin, b, buf, 0);
}

void hri_unpack_box(const hr_grid_layout *l, void *origin, const hr_box *b, const void *buf)
{
    copy_box(l, origin, b, (char *)buf, 1);
}
