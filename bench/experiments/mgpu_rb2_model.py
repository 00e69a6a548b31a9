#!/usr/bin/env python3
"""Models of rb-mgpu's schedules (src/methods/redblack/cuda/redblack_gpu2.cu), checked against the sequential
red-black sweep. Pure Python, no GPU: run it after changing a schedule (ctest rb_mgpu_model).

  bench/experiments/mgpu_rb2_model.py      # prints "bad 0 of N" per model; exit 1 on a mismatch or a race
  bench/experiments/mgpu_rb2_model.py --emu  # also builds and runs bench/drivers/mgpu_rb2_emu.cpp (g++, ~1 min): the
                                 # real scheme code and rb_stream kernel under the warp emulation

stream (the default, redblack_gpu2_stream.cuh), on 2, 3 and 4 slabs: the same index logic as
the code (the odd cuts nearest ny / G, the local frames, the parts S next to each neighbour
and I, each an rb_stream launch on an even-shifted view that updates one row beyond each cut
and stores only its window, the spike row in the view, the 2-row copies from each neighbour
into the ghost rows of the output grid), every ny from the fewest rows the slabs allow to 40.
The kernel is modelled by its semantics IN THE VIEW'S FRAME (colour 0 where view row + column
is even: an odd shift would fail). Every operation (I, each S part, each copy per slab and
iteration) lists the rows it reads and writes in each grid; the dependencies are the streams'
order and the event waits the code makes; every two operations that touch a row of one grid,
one of them writing, must be ordered by them (else "race"), so any execution equals the
enqueue order, which is what is simulated.

fused (HETRELAX_RB2_OLD=1, two GPUs only: the in-place scheme per half with two exchanges per
iteration): strips aligned so the boundary strip ends at the half's boundary row B, tiles of
2 BX columns x H rows, the ring passes without row B, row B on its own, and the pulls'
possible late reads.
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

# ---- the streaming scheme ----
SPIKE = 0.375
def upd_s(u, i, j, spike):
    return 0.2 * (u[i][j] + u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1]) + (SPIKE if spike else 0.0)
def seq_s(u, ny, nx, iters, si, sj):
    for t in range(iters):
        for c in (0, 1):
            for i in range(1, ny + 1):
                for j in range(1, nx + 1):
                    if (i + j) & 1 == c: u[i][j] = upd_s(u, i, j, i == si and j == sj)
def rb_stream(inp, out, base, nyv, nx, s0, s1, si, sj):
    """rb_stream on the view rows base.. of grid inp (rows 0..nyv+1 of the view) -> out,
    storing view rows [s0, s1]; colours in the view's frame (as the kernel's unrolled loop)."""
    v = [list(inp[base + r]) for r in range(nyv + 2)]
    mix = [list(r) for r in v]
    for R in range(1, nyv + 1):
        for j in range(1, nx + 1):
            if (R + j) & 1 == 0: mix[R][j] = upd_s(v, R, j, R == si and j == sj)
    fin = [list(r) for r in mix]
    for R in range(1, nyv + 1):
        for j in range(1, nx + 1):
            if (R + j) & 1 == 1: fin[R][j] = upd_s(mix, R, j, R == si and j == sj)
    for R in range(s0, s1 + 1):
        out[base + R] = fin[R]
    return set(range(base, base + nyv + 2)), set(range(base + s0, base + s1 + 1))
def cut(ny, ng, d, prev):
    """As rb2s_cut: the odd row nearest (d + 1) ny / ng (ties: the lower), clamped."""
    num = (d + 1) * ny
    k = num // ng
    if not k & 1: k -= 1
    if (2 * k + 2) * ng < 2 * num: k += 2
    lb = 1 if d == 0 else prev + 2
    ub = (ny - 1 if (ny - 1) & 1 else ny - 2) - 2 * (ng - 2 - d)
    return max(lb, min(k, ub))
def layout(ny, ng, srows):
    """As rb2s_layout: per slab lo, hi, ioff, nrows, the parts S (list) and I."""
    assert ng >= 2 and ny >= 2 * ng - 2
    lo, hi, ioff, nrows, S, I = [], [], [], [], [], []
    for d in range(ng):
        lo.append(1 if d == 0 else hi[d - 1] + 1)
        hi.append(ny if d == ng - 1 else cut(ny, ng, d, 0 if d == 0 else hi[d - 1]))
        ioff.append(0 if d == 0 else lo[d] - 2)
        nrows.append((ny + 1 if d == ng - 1 else hi[d] + 2) - ioff[d] + 1)
        a, z = lo[d] - ioff[d], hi[d] - ioff[d]
        ta, tz, ba, bz = a, a - 1, z + 1, z
        if d > 0: tz = min(a + srows - 1, z)
        if d < ng - 1: ba = max(z - srows + 1, a)
        if 0 < d < ng - 1 and tz + 1 >= ba:
            S.append([(a, z)]); I.append((z + 1, z)); continue
        parts = []
        if d > 0: parts.append((ta, tz))
        if d < ng - 1: parts.append((ba, bz))
        S.append(parts); I.append((tz + 1, ba - 1))
    return lo, hi, ioff, nrows, S, I
def part(d, a, z, ioff, ny):
    """rb2s_part's view: (shift, nyv, s0, s1)."""
    u0 = a if a + ioff[d] == 1 else a - 1
    u1 = z if z + ioff[d] == ny else z + 1
    if not u0 & 1: u0 -= 1
    shift = u0 - 1
    return shift, u1 - shift, a - shift, z - shift
def stream_many(u, ny, nx, iters, ng, srows, si, sj):
    lo, hi, ioff, nrows, S, I = layout(ny, ng, srows)
    for d in range(ng):
        assert ioff[d] % 2 == 0 and hi[d] >= lo[d] and (d == ng - 1 or hi[d] & 1)
        if 0 < d < ng - 1: assert (hi[d] - lo[d] + 1) % 2 == 0
    grids = [[[list(u[ioff[d] + r]) for r in range(nrows[d])] for _ in range(2)] for d in range(ng)]
    cur = 0
    ops = []  # (name, stream, waits(list of op index), reads{(d,q): rows}, writes{(d,q): rows}, action)
    last_on = {}
    evt = {}  # event name -> op index recorded
    def enqueue(name, stream, waits, action):
        w = [evt[x] for x in waits if x in evt]
        if stream in last_on: w.append(last_on[stream])
        ops.append([name, stream, w, None, None, action])
        last_on[stream] = len(ops) - 1
        return len(ops) - 1
    def sweep_op(d, a, z, q):
        shift, nyv, s0, s1 = part(d, a, z, ioff, ny)
        assert shift >= 0 and shift % 2 == 0 and shift + nyv + 1 < nrows[d] and 1 <= s0 <= s1 <= nyv
        vsi = si - ioff[d] - shift
        def act(rec):
            r, w = rb_stream(grids[d][q], grids[d][q ^ 1], shift, nyv, nx, s0, s1, vsi, sj)
            rec[3] = {(d, q): r}; rec[4] = {(d, q ^ 1): w}
        return act
    def copy_op(d, o, q, row):
        dst, src = row - ioff[d], row - ioff[o]
        def act(rec):
            for k in range(2): grids[d][q][dst + k] = list(grids[o][q][src + k])
            rec[3] = {(o, q): {src, src + 1}}; rec[4] = {(d, q): {dst, dst + 1}}
        return act
    for t in range(iters):
        q = cur
        for d in range(ng):
            if I[d][0] <= I[d][1]:
                x = enqueue("I%d.%d" % (d, t), "low%d" % d, ["S%d.%d" % (d, t - 1)], sweep_op(d, I[d][0], I[d][1], q))
                evt["I%d.%d" % (d, t)] = x
        for d in range(ng):
            for k, (a, z) in enumerate(S[d]):
                x = enqueue("S%d.%d.%d" % (d, k, t), "high%d" % d, ["I%d.%d" % (d, t - 1)] if k == 0 else [],
                            sweep_op(d, a, z, q))
            evt["S%d.%d" % (d, t)] = x  # recorded after the last part
        for d in range(ng):
            for o, row in ((d - 1, lo[d] - 2), (d + 1, hi[d] + 1)):
                if 0 <= o < ng:
                    enqueue("P%d<%d.%d" % (d, o, t), "high%d" % d, ["S%d.%d" % (o, t)], copy_op(d, o, q ^ 1, row))
        cur ^= 1
    for rec in ops:  # the enqueue order (a legal serial order)
        rec[5](rec)
    # happens-before closure, then every conflicting pair must be ordered
    n = len(ops)
    before = [set() for _ in range(n)]
    for i in range(n):
        for w in ops[i][2]:
            before[i] |= before[w] | {w}
    races = 0
    for i in range(n):
        for k in range(i):
            if k in before[i]: continue
            for g in set(ops[i][3]) | set(ops[i][4]):
                ri, wi = ops[i][3].get(g, set()), ops[i][4].get(g, set())
                rk, wk = ops[k][3].get(g, set()), ops[k][4].get(g, set())
                if (wi & (rk | wk)) or (wk & ri):
                    races += 1
                    print("race", ops[k][0], ops[i][0], g)
    out = [list(r) for r in u]
    for d in range(ng):
        for r in range(lo[d], hi[d] + 1): out[r] = grids[d][cur][r - ioff[d]]
    # each own row written exactly once per iteration (the parts disjoint, covering the slab)
    for d in range(ng):
        own = set(range(lo[d] - ioff[d], hi[d] - ioff[d] + 1))
        rows = [r for a, z in S[d] + [I[d]] for r in range(a, z + 1)]
        assert set(rows) == own and len(rows) == len(own)
    return out, races
random.seed(2)
bad = 0; n = 0
for ng in (2, 3, 4):
    for ny in range(max(2, 2 * ng - 2), 41):  # down to the fewest rows: slabs of 1 and 2 rows
        for nx in (1, 2, 5, 8):
            for srows in (2, 3, 4, 7):
                for spike in (False, True):
                    u = [[random.random() for _ in range(nx + 2)] for _ in range(ny + 2)]
                    si, sj = (random.randint(1, ny), random.randint(1, nx)) if spike else (-1, -1)
                    a = [list(r) for r in u]; seq_s(a, ny, nx, 3, si, sj)
                    b, races = stream_many(u, ny, nx, 3, ng, srows, si, sj)
                    n += 1
                    if a != b or races: bad += 1; print("stream mismatch", ng, ny, nx, srows, si, sj, races)
print("stream: bad", bad, "of", n)
bad_stream = bad
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
print("fused: bad", bad, "of", n)
emu_rc = 0
if "--emu" in sys.argv[1:]:
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    exe = os.path.join(root, "build", "mgpu_rb2_emu")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    subprocess.run([os.environ.get("CXX", "g++"), "-std=c++17", "-O1", "-ffp-contract=off", "-Isrc", "-Iinclude",
                    "-Itests/runtime/cuda", "bench/drivers/mgpu_rb2_emu.cpp", "-o", exe], cwd=root, check=True)
    emu_rc = subprocess.run([exe]).returncode
sys.exit(1 if bad or bad_stream or emu_rc else 0)
