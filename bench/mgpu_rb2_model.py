#!/usr/bin/env python3
"""A model of rb-2gpu's fused schedule (src/cuda/redblack_gpu2.cu), checked against the
sequential red-black sweep: the same index logic as the kernels (strips aligned so the
boundary strip ends at the half's boundary row B, tiles of 2 BX columns x H rows, the ring
passes without row B, row B on its own), the passes in one order the streams and events allow,
and the pulls' possible late reads (a pull of row B that sees the sender's next pass of the
other colour). Every point must be updated once per colour (asserted) and the result must be
bitwise the sequential sweep's. Pure Python, no GPU: run it after changing the schedule.

  bench/mgpu_rb2_model.py      # prints "bad 0 of N"; exit 1 on a mismatch
"""
import random
import sys
def upd(u, i, j):
    return 0.2 * (u[i][j] + u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1])
def seq(u, ny, nx, iters):
    for t in range(iters):
        for c in (0, 1):
            for i in range(1, ny + 1):
                for j in range(1, nx + 1):
                    if (i + j) & 1 == c: u[i][j] = upd(u, i, j)
def strip(M, org, H, k):
    return max(1, org + k * H), min(org + (k + 1) * H, M + 1)
def main(v, M, nx, H, bx, org, ks, flip):
    tw = 2 * bx
    for k in ks:
        r0, r1 = strip(M, org, H, k)
        for j0 in range(1, nx + 1, tw):
            j1 = min(j0 + tw, nx + 1)
            for i in range(r0, r1):
                for jp in range(j0, j0 + tw, 2):
                    ja = jp + ((i + jp + flip) & 1)
                    if ja < j1: v[i][ja] = upd(v, i, ja)
                for jp in range(j0, j0 + tw, 2):
                    ib = i - 1; jb = jp + 1 - ((ib + jp + flip) & 1)
                    if ib > r0 and jb < j1 and jb != j0 and jb != j1 - 1: v[ib][jb] = upd(v, ib, jb)
def nstrips(M, org, H):
    return (M - org + 1 + H - 1) // H
def ring_rows(v, M, nx, H, org, skip, flip, done):
    for k in range(nstrips(M, org, H)):
        r0, r1 = strip(M, org, H, k)
        for last in (0, 1):
            i = r1 - 1 if last else r0
            if last and i == r0: continue
            if i == skip: continue
            j = 1 + ((i + flip) & 1)
            while j <= nx:
                assert (i, j) not in done; done.add((i, j)); v[i][j] = upd(v, i, j); j += 2
def ring_cols(v, M, nx, H, bx, org, flip, done):
    tw = 2 * bx
    for j0 in range(1, nx + 1, tw):
        j1 = min(j0 + tw, nx + 1)
        for last in (0, 1):
            j = j1 - 1 if last else j0
            if last and j == j0: continue
            for i in range(1, M + 1):
                if ((i + j + flip) & 1) != 1: continue
                k = (i - org) // H
                r0, r1 = strip(M, org, H, k)
                if i == r0 or i == r1 - 1: continue
                assert (i, j) not in done; done.add((i, j)); v[i][j] = upd(v, i, j)
def row1(v, i, nx, flip, done):
    j = 1 + ((i + flip) & 1)
    while j <= nx:
        assert (i, j) not in done; done.add((i, j)); v[i][j] = upd(v, i, j); j += 2
def two(u, ny, nx, iters, H, bx, late1, late2):
    m = ny // 2
    lo = [1, m + 1]; hi = [m, ny]
    M = [hi[d] - lo[d] + 1 for d in range(2)]
    flip = [(lo[d] - 1) & 1 for d in range(2)]
    org = [M[0] - H * ((M[0] + H - 1) // H) + 1, 1]
    brow = [M[0], 1]
    bstrip = [nstrips(M[0], org[0], H) - 1, 0]
    hv = [[list(u[r]) for r in range(lo[d] - 1, hi[d] + 2)] for d in range(2)]
    ghost = [M[0] + 1, 0]
    def pull(d):  # copy o's brow into d's ghost
        o = 1 - d
        return list(hv[o][brow[o]])
    def A(d):
        main(hv[d], M[d], nx, H, bx, org[d], [bstrip[d]], flip[d])
    def B(d, done):
        main(hv[d], M[d], nx, H, bx, org[d], [k for k in range(nstrips(M[d], org[d], H)) if k != bstrip[d]], flip[d])
        ring_rows(hv[d], M[d], nx, H, org[d], brow[d], flip[d], done[d]); ring_cols(hv[d], M[d], nx, H, bx, org[d], flip[d], done[d])
    def C(d, done):
        hv[d][ghost[d]] = pull(d)
        row1(hv[d], brow[d], nx, flip[d], done[d])
    def D(d):
        hv[d][ghost[d]] = pull(d)
    for t in range(iters):
        done = [set(), set()]
        if t == 0 or not late2:
            A(0)
        A(1)
        B(0, done); B(1, done)
        if late1:
            C(0, done); C(1, done)   # d = 1 reads 0's boundary row after 0's colour 1 there
        else:
            g = [pull(0), pull(1)]
            for d in range(2):
                hv[d][ghost[d]] = g[d]; row1(hv[d], brow[d], nx, flip[d], done[d])
        D(0)
        if late2 and t + 1 < iters:
            A(0)   # 0's next colour 0 lands before 1's second pull reads 0's boundary row
        D(1)
    out = [list(r) for r in u]
    for d in range(2):
        for r in range(lo[d], hi[d] + 1): out[r] = hv[d][r - lo[d] + 1]
    return out
random.seed(2)
bad = 0; n = 0
for ny in (2, 3, 4, 7, 10, 17, 20, 33, 40):
    for nx in (1, 2, 5, 12, 13):
        for H in (2, 3, 4, 5, 8):
            for bx in (1, 2, 3):
                u = [[random.random() for _ in range(nx + 2)] for _ in range(ny + 2)]
                a = [list(r) for r in u]; seq(a, ny, nx, 3)
                for l1 in (False, True):
                    for l2 in (False, True):
                        b = two(u, ny, nx, 3, H, bx, l1, l2)
                        n += 1
                        if a != b: bad += 1; print("mismatch", ny, nx, H, bx, l1, l2)
print("bad", bad, "of", n)
sys.exit(1 if bad else 0)
