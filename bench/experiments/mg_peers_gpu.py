#!/usr/bin/env python3
"""GPU peers of hetrelax's multigrid: time to relative residual TOL, one device.

Sections (--sections, default all):
  fft        direct solve by discrete sine transforms built from cupy.fft.rfft (the
             baseline for this constant-coefficient problem): random rhs, plus the
             manufactured rhs for the max error against the exact solution
  cupyx-cg   cupyx.scipy.sparse.linalg.cg on the CSR 5-point / 7-point matrix
  sparse-cg  our own cuSPARSE CG: `hetrelax sparse --gen laplace2d:N|laplace3d:N --rhs
             FILE.mtx --backend gpu --method cg` (one solve per process)
  hetrelax-mg  `hetrelax poisson2d|poisson3d --backend gpu --method mg ... --rhs FILE`
             (V, V mixed, FMG, PCG-MG mixed); recorded as not available while the CLI
             refuses multigrid on the GPU

The system is hetrelax's: A u = h^2 f, A the 5-point (2-D) / 7-point (3-D) stencil with
diagonal 4 / 6 and -1 off the diagonal, zero Dirichlet boundary, h = 1 / (n + 1), rows x
fastest; f the random rhs of bench/experiments/rhs_gen.py (splitmix64 seed 2026, the values of
bench/drivers/mg_driver.c and bench/drivers/hypre_driver.c), read from one file per size that every
solver reads (raw f64 for the grid CLI and the Python peers, Matrix Market h^2 f for
`hetrelax sparse`). Iterative solves start from zero and stop at relative residual TOL
(||b - A u||_2 / ||b||_2). Every answer is checked: the relative residual is recomputed in
fp64 by a matrix-free stencil on the device (the sparse CLI recomputes it on the host),
and iterative solutions are compared with the FFT solution of the same size when it ran.

Times: wall clock of the solve with the device synchronised before and after (what a
caller waits for), median of the timed repeats after a warm-up; setup (matrix assembly,
FFT plans, file reading) not included. A solve longer than --long-solve seconds is timed
once (cupyx CG at 4095^2 takes ~19 s on an H100). --budget caps the whole run: sizes not
reached are recorded as skipped.

usage: bench/experiments/mg_peers_gpu.py --out FILE.json [--md FILE.md] [--cli build-gpu/hetrelax]
          [--quick] [--sections fft,cupyx-cg,sparse-cg,hetrelax-mg] [--tol 1e-8]
          [--sizes2d 1023,2047,4095] [--sizes3d 127,255] [--fft2d 1023,2047,4095,8191]
          [--fft3d 127,255,511] [--repeats 5] [--budget 170] [--rhs-dir /tmp/hr-mg-rhs]
          [--xp numpy --sparse-backend cpu-threads --mg-backend cpu-threads]  (CPU self-test)
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import rhs_gen  # noqa: E402


class Backend:
    """The array module (CuPy on the GPU, NumPy/SciPy for the CPU self-test)."""

    def __init__(self, name):
        self.name = name
        if name == "cupy":
            import cupy as cp
            import cupyx.scipy.sparse as sp
            import cupyx.scipy.sparse.linalg as spla
            self.xp, self.sp, self.cg_fn = cp, sp, spla.cg
            self.sync = cp.cuda.Device().synchronize
            props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
            name_ = props["name"]
            self.device = name_.decode() if isinstance(name_, bytes) else str(name_)
            self.versions = {"cupy": cp.__version__, "cuda_runtime": cp.cuda.runtime.runtimeGetVersion()}
            self.pool = cp.get_default_memory_pool()
        else:
            import scipy
            import scipy.sparse as sp
            import scipy.sparse.linalg as spla
            self.xp, self.sp, self.cg_fn = np, sp, spla.cg
            self.sync = lambda: None
            self.device = f"CPU ({platform.processor() or platform.machine()}, NumPy self-test)"
            self.versions = {"numpy": np.__version__, "scipy": scipy.__version__}
            self.pool = None
        import inspect
        try:  # SciPy >= 1.12 and recent CuPy: rtol; before: tol
            params = inspect.signature(self.cg_fn).parameters
            self.cg_tol_kw = "rtol" if "rtol" in params or "tol" not in params else "tol"
        except (TypeError, ValueError):
            self.cg_tol_kw = "rtol"

    def host(self, a):
        return a.get() if self.name == "cupy" else a

    def free(self):
        if self.pool is not None:
            self.pool.free_all_blocks()


# ---------------------------------------------------------------- the problem


def apply_A(xp, u):
    """A u (h^2-scaled stencil, zero boundary), fp64, matrix-free."""
    d = u.ndim
    out = (2.0 * d) * u
    for ax in range(d):
        lo = [slice(None)] * d
        hi = [slice(None)] * d
        lo[ax], hi[ax] = slice(0, -1), slice(1, None)
        out[tuple(lo)] -= u[tuple(hi)]
        out[tuple(hi)] -= u[tuple(lo)]
    return out


def rel_residual(xp, b, u):
    r = b - apply_A(xp, u.astype(xp.float64))
    return float(xp.linalg.norm(r.ravel()) / xp.linalg.norm(b.ravel()))


def outer(xp, v, dim, op):
    """v combined along every axis of a dim-D grid: op(v_i, v_j[, v_k])."""
    n = v.shape[0]
    out = v.reshape((n,) + (1,) * (dim - 1))
    for ax in range(1, dim):
        out = op(out, v.reshape((1,) * ax + (n,) + (1,) * (dim - 1 - ax)))
    return xp.ascontiguousarray(out)


def manufactured(xp, dim, n):
    """(h^2 f, exact u) of hetrelax's manufactured problem: u = prod sin(pi x_a)."""
    h = 1.0 / (n + 1.0)
    s = xp.sin(math.pi * h * xp.arange(1, n + 1, dtype=xp.float64))
    u = outer(xp, s, dim, lambda p, q: p * q)
    return h * h * dim * math.pi ** 2 * u, u


def laplace_csr(B, dim, n):
    """The CSR matrix of A, columns sorted within each row (no explicit zeros)."""
    xp = B.xp
    N = n ** dim
    strides = [n ** a for a in range(dim)]
    offs = [-s for s in reversed(strides)] + [0] + strides
    idx = xp.arange(N, dtype=xp.int64)
    cols = idx[:, None] + xp.asarray(offs, dtype=xp.int64)[None, :]
    ok = xp.ones((N, len(offs)), dtype=bool)
    for a, s in enumerate(strides):
        c = (idx // s) % n
        ok[:, dim - 1 - a] = c > 0
        ok[:, dim + 1 + a] = c < n - 1
    vals = xp.asarray(np.where(np.asarray(offs) == 0, 2.0 * dim, -1.0))[None, :].repeat(N, axis=0)
    data = vals[ok]
    indices = cols[ok].astype(xp.int32)
    indptr = xp.zeros(N + 1, dtype=xp.int32)
    indptr[1:] = xp.cumsum(ok.sum(axis=1), dtype=xp.int64).astype(xp.int32)
    del cols, ok, vals, idx
    return B.sp.csr_matrix((data, indices, indptr), shape=(N, N))


# ---------------------------------------------------------------- FFT (sine transforms)


def dst1_last(xp, x):
    """DST-I along the last axis: S_k = sum_j x_j sin(pi j k / (n + 1)), by an rfft of the
    odd extension of length 2 (n + 1)."""
    n = x.shape[-1]
    ext = xp.zeros(x.shape[:-1] + (2 * (n + 1),), dtype=xp.float64)
    ext[..., 1:n + 1] = x
    ext[..., n + 2:] = -x[..., ::-1]
    return xp.fft.rfft(ext, axis=-1)[..., 1:n + 1].imag * -0.5


def dst1_all(xp, x):
    """DST-I along every axis: transform the last axis, rotate the axes, dim times."""
    for _ in range(x.ndim):
        x = xp.ascontiguousarray(xp.moveaxis(dst1_last(xp, x), -1, 0))
    return x


def fft_solve(xp, b, lam):
    """u = A^-1 b: A = S diag(lam) S (2 / (n + 1))^dim with S the DST-I matrix."""
    n = b.shape[0]
    t = dst1_all(xp, b)
    t /= lam
    u = dst1_all(xp, t)
    u *= (2.0 / (n + 1.0)) ** b.ndim
    return u


def fft_eigenvalues(xp, dim, n):
    k = xp.arange(1, n + 1, dtype=xp.float64)
    return outer(xp, 2.0 - 2.0 * xp.cos(math.pi * k / (n + 1.0)), dim, lambda p, q: p + q)


# ---------------------------------------------------------------- timing


def timed(B, fn, repeats, long_solve, warmup=True):
    """(median seconds, all times, last result): a warm-up, then repeats; one timed run
    when the warm-up (or the first timed run) is longer than long_solve."""
    times, res = [], None
    if warmup:
        B.sync()
        t0 = time.perf_counter()
        res = fn()
        B.sync()
        if time.perf_counter() - t0 > long_solve:
            repeats = 1
    for _ in range(repeats):
        B.sync()
        t0 = time.perf_counter()
        res = fn()
        B.sync()
        times.append(time.perf_counter() - t0)
        if times[-1] > long_solve:
            break
    return statistics.median(times), times, res


class Run:
    def __init__(self, a, B):
        self.a, self.B = a, B
        self.t_start = time.perf_counter()
        self.records = []
        self.fft_u = {}  # (dim, n) -> the FFT solution of the random rhs, for the checks
        self.gen_xp = B.xp  # generates missing rhs files (CuPy: checked against NumPy first)

    def over_budget(self):
        return time.perf_counter() - self.t_start > self.a.budget

    def record(self, rec):
        rec.setdefault("tol", self.a.tol)
        rec.setdefault("rhs", "random")
        if "time_s" in rec and rec.get("time_s"):
            rec["ns_per_unknown"] = 1e9 * rec["time_s"] / rec["unknowns"]
        self.records.append(rec)
        it = rec.get("iterations")
        extra = ""
        if rec.get("max_error") is not None:
            extra += f"  max err {rec['max_error']:.3e}"
        if rec.get("diff_vs_fft") is not None:
            extra += f"  |u-u_fft|/|u_fft| {rec['diff_vs_fft']:.1e}"
        if rec.get("skipped"):
            print(f"{rec['solver']:22s} {rec['dim']}-D n={rec['n']:5d}  skipped: {rec['skipped']}", flush=True)
            return
        print(f"{rec['solver']:22s} {rec['dim']}-D n={rec['n']:5d} {rec['rhs']:12s} it={it!s:>6s} "
              f"t={rec['time_s']:10.5f} s {rec['ns_per_unknown']:9.3f} ns/u  res={rec['relative_residual']:.2e}"
              f"{extra}{'' if rec['answer_ok'] else '  FAILED'}", flush=True)

    def skip(self, solver, dim, n, why):
        self.records.append({"solver": solver, "dim": dim, "n": n, "unknowns": n ** dim, "skipped": why,
                             "answer_ok": None})
        print(f"{solver:22s} {dim}-D n={n:5d}  skipped: {why}", flush=True)

    def rhs_raw(self, dim, n):
        """Path of the raw f file, written (by the device when CuPy is there) when missing."""
        f = None
        path = os.path.join(self.a.rhs_dir, f"random-{dim}d-{n}-seed{rhs_gen.SEED}.f64")
        if not os.path.exists(path):
            f = self.B.host(rhs_gen.random_grid(dim, n, xp=self.gen_xp))
        return rhs_gen.cached(self.a.rhs_dir, dim, n, "raw", f=f)

    def rhs_device(self, dim, n, kind):
        """b = h^2 f on the device: random (read from the shared file) or the spike
        (h^2 f = 1 at the centre point, (n + 1) / 2 one-based on every axis)."""
        if kind == "spike":
            b = self.B.xp.zeros((n,) * dim, dtype=self.B.xp.float64)
            b[((n + 1) // 2 - 1,) * dim] = 1.0
            return b
        f = np.fromfile(self.rhs_raw(dim, n), dtype="<f8").reshape((n,) * dim)
        return self.B.xp.asarray(rhs_gen.h2(n) * f)

    def rhs_mm(self, dim, n, kind):
        """The Matrix Market b of `hetrelax sparse --rhs`."""
        if kind == "random":
            f = np.fromfile(self.rhs_raw(dim, n), dtype="<f8")
            return rhs_gen.cached(self.a.rhs_dir, dim, n, "mm", f=f)
        path = os.path.join(self.a.rhs_dir, f"spike-{dim}d-{n}.mtx")
        if not os.path.exists(path):
            rhs_gen.write_mm(path, self.B.host(self.rhs_device(dim, n, kind)), "b = h^2 f, the centre spike")
        return path

    def rhs_cli(self, dim, n, kind):
        """The grid commands' --rhs value."""
        return self.rhs_raw(dim, n) if kind == "random" else kind


# ---------------------------------------------------------------- sections


def cases(R, sizes2d, sizes3d, solver):
    """(dim, n, rhs kind) in order, those over the budget recorded as skipped."""
    for dim, sizes in ((2, sizes2d), (3, sizes3d)):
        for n in sizes:
            for kind in R.a.rhs:
                if R.over_budget():
                    R.skip(solver, dim, n, "over --budget")
                    continue
                yield dim, n, kind


def section_fft(R):
    a, B, xp = R.a, R.B, R.B.xp
    for dim, n, kind in cases(R, a.fft2d, a.fft3d, "fft-dst"):
        b = R.rhs_device(dim, n, kind)
        lam = fft_eigenvalues(xp, dim, n)
        med, ts, u = timed(B, lambda: fft_solve(xp, b, lam), a.repeats, a.long_solve)
        rr = rel_residual(xp, b, u)
        if (dim == 2 and n in a.sizes2d) or (dim == 3 and n in a.sizes3d):
            R.fft_u[(dim, n, kind)] = u  # on the device: the iterative solvers compare with it
        R.record({"solver": "fft-dst", "dim": dim, "n": n, "unknowns": n ** dim, "rhs": kind, "iterations": None,
                  "time_s": med, "times_s": ts, "relative_residual": rr, "answer_ok": rr < a.tol,
                  "note": "DST-I by rfft of the odd extension, along each axis"})
        if kind == a.rhs[0]:
            # the discretisation error: the manufactured rhs, max error against the exact u
            bm, ue = manufactured(xp, dim, n)
            med, ts, um = timed(B, lambda: fft_solve(xp, bm, lam), 1, a.long_solve)
            err = float(xp.abs(um - ue).max())
            rr = rel_residual(xp, bm, um)
            R.record({"solver": "fft-dst", "dim": dim, "n": n, "unknowns": n ** dim, "rhs": "manufactured",
                      "iterations": None, "time_s": med, "times_s": ts, "relative_residual": rr,
                      "max_error": err, "answer_ok": rr < a.tol})
        B.free()


def section_cupyx_cg(R):
    a, B, xp = R.a, R.B, R.B.xp
    warm, A, An = False, None, None
    for dim, n, kind in cases(R, a.sizes2d, a.sizes3d, "cupyx-cg"):
        if An != (dim, n):
            A, An = None, None
            B.free()
            A, An = laplace_csr(B, dim, n), (dim, n)
        b = R.rhs_device(dim, n, kind).ravel()
        count = [0]

        def solve():
            count[0] = 0

            def cb(xk):
                count[0] += 1
            kw = {B.cg_tol_kw: a.tol, "atol": 0.0, "maxiter": a.max_iters, "callback": cb}
            return B.cg_fn(A, b, **kw)

        if not warm:  # compile the kernels once on a short solve
            B.cg_fn(A, b, **{B.cg_tol_kw: a.tol, "atol": 0.0, "maxiter": 5})
            warm = True
        med, ts, (x, info) = timed(B, solve, a.repeats_cg, a.long_solve, warmup=False)
        u = x.reshape((n,) * dim)
        rr = rel_residual(xp, b.reshape(u.shape), u)
        diff = None
        if (dim, n, kind) in R.fft_u:
            uf = R.fft_u[(dim, n, kind)]
            diff = float(xp.abs(u - uf).max() / xp.abs(uf).max())
        R.record({"solver": "cupyx-cg", "dim": dim, "n": n, "unknowns": n ** dim, "rhs": kind,
                  "iterations": count[0], "info": int(info), "time_s": med, "times_s": ts,
                  "relative_residual": rr, "convergence_factor": factor(rr, count[0]), "diff_vs_fft": diff,
                  "answer_ok": rr < a.tol * 1.01 and info == 0, "nnz": int(A.nnz),
                  "matrix": "CSR, int32 indices"})


def factor(rel, iterations):
    """Mean residual reduction per iteration from a zero guess (relative residual 1)."""
    return rel ** (1.0 / iterations) if iterations and rel and rel > 0 else None


def run_cli(cmd, timeout):
    """(parsed JSON of stdout, None) or (None, reason)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if p.returncode != 0:
        lines = (p.stderr.strip() or p.stdout.strip()).splitlines()
        return None, f"exit {p.returncode}: {lines[-1] if lines else ''}"
    try:
        return json.loads(p.stdout[p.stdout.index("{"):]), None
    except ValueError as e:
        return None, f"no JSON: {e}"


def cli_repeats(R, solver, dim, n, kind, cmd, it_key, extra):
    """Process runs of one CLI solve; median of time_s; None when the CLI refused."""
    a = R.a
    runs, why = [], None
    t_end = time.perf_counter() + a.long_solve
    for k in range(a.repeats_cli):
        j, why = run_cli(cmd, a.cli_timeout)
        if j is None:
            break
        runs.append(j)
        if j["time_s"] > a.long_solve / 4 or time.perf_counter() > t_end:
            break
    if not runs:
        R.skip(solver, dim, n, why)
        return None
    ts = [j["time_s"] for j in runs]
    med = statistics.median(ts)
    last = runs[-1]
    rr = last.get("relative_residual")
    it = last.get(it_key)
    rec = {"solver": solver, "dim": dim, "n": n, "unknowns": n ** dim, "rhs": kind, "iterations": it,
           "time_s": med, "times_s": ts, "relative_residual": rr, "convergence_factor": factor(rr, it),
           "answer_ok": rr is not None and rr < a.tol * 1.0000001, "command": " ".join(cmd)}
    rec.update(extra(last))
    R.record(rec)
    return rec


def section_sparse_cg(R):
    a = R.a
    if not a.cli or not os.path.exists(a.cli):
        R.skip("hetrelax-sparse-cg", 0, 0, f"no CLI at {a.cli}")
        return
    for dim, n, kind in cases(R, a.sizes2d, a.sizes3d, "hetrelax-sparse-cg"):
        cmd = [a.cli, "sparse", "--gen", f"laplace{dim}d:{n}", "--rhs", R.rhs_mm(dim, n, kind), "--backend",
               a.sparse_backend, "--method", "cg", "--tol", repr(a.tol), "--max-iters", str(a.max_iters),
               "--monitor", "0", "--json", "-"]
        cli_repeats(R, "hetrelax-sparse-cg", dim, n, kind, cmd, "iterations",
                    lambda j: {"backend": j.get("backend"), "device": j.get("device"),
                               "setup_s": j.get("time_setup_s"), "time_iter_s": j.get("time_iter_s"),
                               "reason": j.get("reason"), "nnz": j.get("nnz"),
                               "note": "residual recomputed on the host from the solution"})


MG_CONFIGS = (("hetrelax-mg-v", ["--method", "mg", "--precision", "double"]),
              ("hetrelax-mg-v-mixed", ["--method", "mg", "--precision", "mixed"]),
              ("hetrelax-mg-fmg", ["--method", "mg", "--cycle", "fmg", "--precision", "double"]),
              ("hetrelax-pcg-mg-mixed", ["--method", "cg", "--pc", "mg", "--precision", "mixed"]))


def section_hetrelax_mg(R):
    a = R.a
    if not a.cli or not os.path.exists(a.cli):
        R.skip("hetrelax-mg", 0, 0, f"no CLI at {a.cli}")
        return
    for dim, n, kind in cases(R, a.mg2d, a.mg3d, "hetrelax-mg"):
        for label, args in MG_CONFIGS:
            cmd = [a.cli, f"poisson{dim}d", "--backend", a.mg_backend, "--n", str(n), "--rhs",
                   R.rhs_cli(dim, n, kind), "--tol", repr(a.tol), "--quiet", "--json", "-"] + args + a.mg_args
            is_mg = args[args.index("--method") + 1] == "mg"
            rec = cli_repeats(R, label, dim, n, kind, cmd, "cycles" if is_mg else "iterations",
                              lambda j: {"backend": j.get("backend"), "setup_s": j.get("time_setup_s"),
                                         "convergence_factor": j.get("convergence_factor"),
                                         "reason": j.get("reason")})
            if rec is None and label == MG_CONFIGS[0][0]:
                return  # refused (no GPU multigrid in this build): the rest would be too


SECTIONS = {"fft": section_fft, "hetrelax-mg": section_hetrelax_mg, "cupyx-cg": section_cupyx_cg,
            "sparse-cg": section_sparse_cg}


def ints(s):
    return [int(x) for x in s.split(",") if x]


def write_markdown(path, meta, records):
    lines = [f"# GPU peers of hetrelax multigrid: time to relative residual {meta['tol']:g}", "",
             f"Generated by `bench/experiments/mg_peers_gpu.py` on {meta['date'][:19]} UTC, commit `{meta['commit']}`, "
             f"{meta['device']}. Random rhs (bench/experiments/rhs_gen.py, seed {rhs_gen.SEED}) from a zero guess; "
             "median of the timed repeats after a warm-up, device synchronised; setup not included. "
             "Relative residual recomputed in fp64.", "",
             "| dim | n | solver | rhs | iterations | time (s) | ns/unknown | rel. residual | max error "
             "| vs FFT | repeats |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if r.get("skipped"):
            lines.append(f"| {r['dim']} | {r['n']} | {r['solver']} | | | skipped: {r['skipped']} | | | | | |")
            continue
        me = r.get("max_error")
        dv = r.get("diff_vs_fft")
        lines.append(f"| {r['dim']} | {r['n']} | {r['solver']} | {r['rhs']} | {r.get('iterations') or ''} | "
                     f"{r['time_s']:.5f} | {r['ns_per_unknown']:.3f} | {r['relative_residual']:.2e}"
                     f"{'' if r['answer_ok'] else ' FAILED'} | {'' if me is None else f'{me:.3e}'} | "
                     f"{'' if dv is None else f'{dv:.1e}'} | {len(r.get('times_s', []))} |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="JSON results")
    ap.add_argument("--md", help="also a Markdown table")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build-gpu", "hetrelax"))
    ap.add_argument("--quick", action="store_true",
                    help="2-D 1023,2047 and 3-D 127 for the iterative solvers, FFT to 8191^2 / 255^3, "
                         "3 repeats, budget 75 s")
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--rhs", default="random", help="random and/or spike (comma-separated)")
    ap.add_argument("--sizes2d", default=None, help="iterative solvers, 2-D (default 1023,2047,4095)")
    ap.add_argument("--sizes3d", default=None, help="iterative solvers, 3-D (default 127,255)")
    ap.add_argument("--fft2d", default=None, help="default 1023,2047,4095,8191")
    ap.add_argument("--fft3d", default=None, help="default 127,255,511")
    ap.add_argument("--mg2d", default=None, help="hetrelax-mg sizes, 2-D (default 1023,2047,4095,8191)")
    ap.add_argument("--mg3d", default=None, help="hetrelax-mg sizes, 3-D (default 127,255,511)")
    ap.add_argument("--mg-args", default="", help="extra flags for the hetrelax-mg runs")
    ap.add_argument("--repeats", type=int, default=None, help="FFT timed repeats (default 9; quick 5)")
    ap.add_argument("--repeats-cg", type=int, default=3, help="cupyx CG timed repeats (long ones: 1)")
    ap.add_argument("--repeats-cli", type=int, default=3, help="CLI process runs per configuration")
    ap.add_argument("--long-solve", type=float, default=4.0,
                    help="a solve longer than this (s) is timed once")
    ap.add_argument("--max-iters", type=int, default=200000)
    ap.add_argument("--budget", type=float, default=None, help="seconds for the whole run (default 170; quick 75)")
    ap.add_argument("--cli-timeout", type=float, default=120.0)
    ap.add_argument("--rhs-dir", default="/tmp/hr-mg-rhs", help="cache of the rhs files")
    ap.add_argument("--xp", choices=("cupy", "numpy"), default="cupy", help="numpy: CPU self-test")
    ap.add_argument("--sparse-backend", default="gpu")
    ap.add_argument("--mg-backend", default="gpu")
    a = ap.parse_args()
    q = a.quick
    a.sizes2d = ints(a.sizes2d or ("1023,2047" if q else "1023,2047,4095"))
    a.sizes3d = ints(a.sizes3d or ("127" if q else "127,255"))
    a.fft2d = ints(a.fft2d or "1023,2047,4095,8191")
    a.fft3d = ints(a.fft3d or ("127,255" if q else "127,255,511"))
    a.mg2d = ints(a.mg2d or ("1023,4095" if q else "1023,2047,4095,8191"))
    a.mg3d = ints(a.mg3d or ("127,255" if q else "127,255,511"))
    a.repeats = a.repeats or (5 if q else 9)
    a.budget = a.budget or (75.0 if q else 170.0)
    a.mg_args = a.mg_args.split()
    a.rhs = [k for k in a.rhs.split(",") if k]
    if not a.rhs or any(k not in ("random", "spike") for k in a.rhs):
        ap.error("--rhs: random and/or spike")
    secs = [s for s in a.sections.split(",") if s]
    bad = [s for s in secs if s not in SECTIONS]
    if bad:
        ap.error(f"--sections: unknown {bad} (known: {', '.join(SECTIONS)})")
    secs = [s for s in SECTIONS if s in secs]  # FFT first: its solutions check the others

    B = Backend(a.xp)
    R = Run(a, B)
    if a.xp == "cupy":  # the generator on the device must give the file's values bitwise
        pre = rhs_gen.random_f(123, 1 << 20)
        if not np.array_equal(B.host(rhs_gen.random_f(123, 1 << 20, xp=B.xp)), pre):
            print("rhs generator: CuPy and NumPy values differ: generating with NumPy", file=sys.stderr)
            R.gen_xp = np
    print(f"device {B.device}; {B.versions}; cg tolerance keyword '{B.cg_tol_kw}'", flush=True)
    for s in secs:
        print(f"== {s}", flush=True)
        SECTIONS[s](R)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    meta = {"benchmark": "bench/experiments/mg_peers_gpu.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "commit": commit, "device": B.device, "versions": B.versions, "host": platform.node(),
            "tol": a.tol, "rhs": a.rhs, "random_rhs": f"bench/experiments/rhs_gen.py, seed {rhs_gen.SEED}", "sections": secs,
            "quick": q, "wall_s": time.perf_counter() - R.t_start,
            "system": "A u = h^2 f, diagonal 2*dim, -1 neighbours, zero Dirichlet boundary, h = 1/(n+1)"}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as fh:
        json.dump({"meta": meta, "records": R.records}, fh, indent=1)
    if a.md:
        write_markdown(a.md, meta, R.records)
    failed = [r for r in R.records if r.get("answer_ok") is False]
    print(f"wrote {a.out}: {len(R.records)} records, {len(failed)} failed checks, "
          f"{meta['wall_s']:.1f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
