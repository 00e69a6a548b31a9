/*
 * The segment length of a marching kernel (a warp or block walks down a segment of rows,
 * starting a few rows early): shared by the general engine's one-pass sweeps and multigrid's
 * fused red-black pass.
 */
#ifndef HR_MARCH_ROWS_H
#define HR_MARCH_ROWS_H

/* The rows in [lo, hi] a segment takes on a grid of n rows and bx blocks across whose launch
 * takes the fewest steps, a step being a row (plus `extra` a segment: the rows it starts early)
 * in each wave of the `held` blocks the device holds at once. A last wave with a few blocks
 * costs as much as a full one. */
static inline int hri_march_rows(long held, long bx, int n, int extra, int lo, int hi)
{
    int best = lo;
    long best_cost = -1;
    if (held < 1) held = 1;
    for (int r = lo; r <= hi; r++) {
        const long blocks = bx * ((n + r - 1) / r), cost = (blocks + held - 1) / held * (r + extra);
        if (best_cost < 0 || cost < best_cost) best = r, best_cost = cost;
    }
    return best;
}

#endif
