#!/usr/bin/env python3
"""The Python package on the GPU with CuPy arrays, against what a Python user would pick instead,
in one process on one device: time to a relative residual of 1e-8 for the model problem
(-lap u = f on the unit square, zero Dirichlet boundary, n x n unknowns, f uniform in [0, 1)).

  hetrelax-cupy    hetrelax.Solver(Poisson((n, n)), method="mg", backend="gpu", precision=P)
                   .solve(f) with f a CuPy array: x comes back as a CuPy array, no host copy.
                   Cold (the first solve of a new Solver, its set-up apart) and warm (median of
                   the repeats); the wall time of the call against the library's own loop time
                   (info.time_s): what the package and the device arrays' transfers add.
  hetrelax-numpy   the same Solver given cupy.asnumpy(f): the copies to and from the host that
                   the device path saves.
  cupy-fft         the exact solve by sine transforms with cupy.fft (bench/experiments/mg_peers_gpu.py).
  cupyx-cg         cupyx.scipy.sparse.linalg.cg on the 5-point CSR matrix (one solve: tens of seconds).
  pyamg            recorded as not installed where it is not.

With --sweep-sizes, the relaxation kernels too (jacobi's default kernel, red-black): Solver.sweep(u,
K) of a CuPy u in place against the same Solver given a NumPy u, per sweep, the wall time of the
call against the library's loop (info.time_s), the CuPy result checked bitwise against the NumPy
one.

With --sparse-sizes, hetrelax.sparse.solve (cg on the gpu backend, one call: set-up included) of the
assembled system of Poisson((n, n)) (f uniform in [0, 1)) with a CuPy matrix and CuPy b (x comes back as a CuPy
array) against SciPy and NumPy arguments, and cupyx CG on the same CSR matrix.

Every answer is checked: the relative residual ||h^2 f - A x|| / ||h^2 f|| is recomputed in
fp64 by a matrix-free stencil on the device. With PyTorch present, one solve of each hetrelax path
runs under torch.profiler (CUPTI: every CUDA memcpy of the process, whoever issues it): the count
and time of host<->device copies of each.

    python3 bench/experiments/python_gpu.py --out FILE.json [--sizes 4095,8191] [--repeats 5]
        [--precision mixed] [--cg-sizes 4095] [--no-profile] [--sweep-sizes 4095] [--sweeps 200]
        [--sparse-sizes 1023]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mg_peers_gpu as peers  # noqa: E402  (the FFT solver, the stencil, the CSR matrix)


class _B:  # what mg_peers_gpu.laplace_csr asks of its backend
    def __init__(self, xp, sp):
        self.xp, self.sp = xp, sp


def wall(cp, fn):
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    out = fn()
    cp.cuda.Device().synchronize()
    return time.perf_counter() - t, out


def copies(fn):
    """(host-to-device count, device-to-host count, their total ms, the largest copy's ms) of the
    CUDA memcpys during fn(), from torch.profiler; None without a CUDA PyTorch."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.cuda.init()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    h2d = d2h = 0
    total = largest = 0.0
    for e in prof.events():
        name = e.name
        if not name.startswith("Memcpy"):
            continue
        ms = (e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total) / 1000.0
        total += ms
        largest = max(largest, ms)
        h2d += "HtoD" in name
        d2h += "DtoH" in name
    return {"h2d": h2d, "d2h": d2h, "memcpy_ms": total, "largest_ms": largest}


def sweeps(a, cp, hetrelax, n, rec):
    """Solver.sweep(u, K) on the model problem: CuPy u (in place) against NumPy u, fp64."""
    k = a.sweeps
    p = hetrelax.Poisson((n, n))
    cp.random.seed(7)
    f = cp.random.random((n, n), dtype=cp.float64)
    fh = cp.asnumpy(f)
    for method in ("jacobi", "redblack"):
        s = hetrelax.Solver(p, method=method, backend="gpu", tol=0, maxiter=k)
        u = cp.zeros((n, n))
        cold, (_, info) = wall(cp, lambda: s.sweep(u, k, f=f))
        times, lib = [], []
        for _ in range(a.repeats):
            t, (_, info) = wall(cp, lambda: s.sweep(u, k, f=f))
            times.append(t)
            lib.append(info.time_s)
        med, libmed = statistics.median(times), statistics.median(lib)
        prof = None if a.no_profile else copies(lambda: s.sweep(u, k, f=f))
        # the NumPy path from the same start, checked bitwise against the CuPy path
        ud, uh = cp.zeros((n, n)), np.zeros((n, n))
        s.sweep(ud, k, f=f)
        s.sweep(uh, k, f=fh)
        same = bool(np.array_equal(cp.asnumpy(ud), uh))
        htimes = []
        for _ in range(a.repeats):
            t, _ = wall(cp, lambda: s.sweep(uh, k, f=fh))
            htimes.append(t)
        hprof = None if a.no_profile else copies(lambda: s.sweep(uh, k, f=fh))
        common = dict(n=n, method=method, kernel=info.kernel, sweeps=k, precision="double")
        rec(solver="hetrelax-sweep-cupy", **common, time_s=med, times_s=times, cold_s=cold, library_time_s=libmed,
            per_sweep_us=1e6 * med / k, library_per_sweep_us=1e6 * libmed / k,
            added_per_sweep_us=1e6 * (med - libmed) / k, copies=prof, answer_ok=same)
        rec(solver="hetrelax-sweep-numpy", **common, time_s=statistics.median(htimes), times_s=htimes,
            per_sweep_us=1e6 * statistics.median(htimes) / k, copies=hprof, answer_ok=same)
        s.close()
        del u, ud, uh
    cp.get_default_memory_pool().free_all_blocks()


def sparse(a, cp, hetrelax, n, rec):
    """hetrelax.sparse.solve(A, b, method="cg", backend="gpu") with CuPy and with SciPy/NumPy
    arguments, and cupyx CG; every answer's true residual recomputed in fp64 on the device."""
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla

    p = hetrelax.Poisson((n, n))
    A, b = hetrelax.system(p, f=np.random.default_rng(2026).random(p.shape))
    Ad, bd = csp.csr_matrix(A), cp.asarray(b)

    def true_rel(x):
        return float(cp.linalg.norm(bd - Ad @ cp.asarray(x)) / cp.linalg.norm(bd))

    hetrelax.sparse.solve(A, b, method="cg", backend="gpu", rtol=a.tol, maxiter=3)  # kernels loaded
    for name, args in (("hetrelax-sparse-cupy", (Ad, bd)), ("hetrelax-sparse-numpy", (A, b))):
        times = []
        for _ in range(a.repeats):
            t, (x, info) = wall(cp, lambda: hetrelax.sparse.solve(*args, method="cg", backend="gpu", rtol=a.tol,
                                                                  maxiter=100000))
            times.append(t)
        prof = None if a.no_profile else copies(lambda: hetrelax.sparse.solve(*args, method="cg", backend="gpu",
                                                                                 rtol=a.tol, maxiter=100000))
        rr = true_rel(x)
        rec(solver=name, n=n, method="cg", time_s=statistics.median(times), times_s=times,
            library_time_s=info.time_s, setup_s=info.time_setup_s, iterations=info.iterations,
            relative_residual=rr, answer_ok=rr < a.tol * 1.01, out_type=type(x).__module__ + "." + type(x).__name__,
            copies=prof)
    cla.cg(Ad, bd, rtol=a.tol, atol=0.0, maxiter=3)
    count = [0]

    def cb(_):
        count[0] += 1

    t, (u, code) = wall(cp, lambda: cla.cg(Ad, bd, rtol=a.tol, atol=0.0, maxiter=100000, callback=cb))
    rr = true_rel(u)
    rec(solver="cupyx-cg", n=n, time_s=t, iterations=count[0], info=int(code), relative_residual=rr,
        answer_ok=rr < 10 * a.tol and code == 0, timed="once")
    del Ad, bd, u
    cp.get_default_memory_pool().free_all_blocks()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="4095,8191")
    ap.add_argument("--cg-sizes", default="4095")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--precision", default="mixed")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--sweep-sizes", default="")
    ap.add_argument("--sweeps", type=int, default=200)
    ap.add_argument("--sparse-sizes", default="")
    a = ap.parse_args()
    import cupy as cp
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla

    import hetrelax

    dev = cp.cuda.runtime.getDeviceProperties(0)["name"]
    dev = dev.decode() if isinstance(dev, bytes) else dev
    recs = []
    meta = {"device": dev, "date": datetime.date.today().isoformat(), "hetrelax": hetrelax.__version__,
            "python": platform.python_version(), "cupy": cp.__version__, "numpy": np.__version__,
            "tol": a.tol, "precision": a.precision, "repeats": a.repeats,
            "rhs": "f uniform in [0, 1), cupy.random seed 2026, fp64; the system A x = h^2 f"}
    try:
        import pyamg  # noqa: F401
        meta["pyamg"] = "installed (not run: it builds its hierarchy on the host)"
    except ImportError:
        meta["pyamg"] = "not installed"

    def rec(**kw):
        recs.append(kw)
        print(json.dumps(kw), flush=True)

    for n in [int(v) for v in a.sizes.split(",") if v]:
        h2 = 1.0 / (n + 1.0) ** 2
        cp.random.seed(2026)
        f = cp.random.random((n, n), dtype=cp.float64)
        b = h2 * f
        p = hetrelax.Poisson((n, n))
        # hetrelax with CuPy arrays: a new Solver, its first solve cold, then repeats
        t0 = time.perf_counter()
        s = hetrelax.Solver(p, method="mg", backend="gpu", precision=a.precision, tol=a.tol)
        setup = time.perf_counter() - t0
        cold, (x, info) = wall(cp, lambda: s.solve(f))
        cold_setup = info.time_setup_s
        times, lib = [], []
        for _ in range(a.repeats):
            t, (x, info) = wall(cp, lambda: s.solve(f))
            times.append(t)
            lib.append(info.time_s)
        rr = peers.rel_residual(cp, b, x)
        med, libmed = statistics.median(times), statistics.median(lib)
        prof = None if a.no_profile else copies(lambda: s.solve(f))
        rec(solver="hetrelax-cupy", n=n, precision=a.precision, time_s=med, times_s=times, cold_s=cold,
            setup_s=setup, first_solve_setup_s=cold_setup, library_time_s=libmed,
            added_s=med - libmed, added_fraction=(med - libmed) / libmed, cycles=info.iterations,
            relative_residual=rr, answer_ok=rr < a.tol * 1.01, out_type=type(x).__module__ + "." + type(x).__name__,
            copies=prof)
        # the same Solver with NumPy arrays
        fh = cp.asnumpy(f)
        times = []
        for _ in range(a.repeats):
            t, (xh, info) = wall(cp, lambda: s.solve(fh))
            times.append(t)
        rrh = peers.rel_residual(cp, b, cp.asarray(xh))
        prof = None if a.no_profile else copies(lambda: s.solve(fh))
        rec(solver="hetrelax-numpy", n=n, precision=a.precision, time_s=statistics.median(times), times_s=times,
            library_time_s=info.time_s, cycles=info.iterations, relative_residual=rrh, answer_ok=rrh < a.tol * 1.01,
            same_as_cupy=bool(np.array_equal(xh, cp.asnumpy(x))), copies=prof)
        s.close()
        del x, xh, fh
        # cupy.fft
        lam = peers.fft_eigenvalues(cp, 2, n)
        peers.fft_solve(cp, b, lam)  # plans
        times = []
        for _ in range(a.repeats):
            t, u = wall(cp, lambda: peers.fft_solve(cp, b, lam))
            times.append(t)
        rr = peers.rel_residual(cp, b, u)
        rec(solver="cupy-fft", n=n, time_s=statistics.median(times), times_s=times, relative_residual=rr,
            answer_ok=rr < a.tol)
        del u, lam
        cp.get_default_memory_pool().free_all_blocks()
        # cupyx CG
        if n in [int(v) for v in a.cg_sizes.split(",") if v]:
            A = peers.laplace_csr(_B(cp, csp), 2, n)
            bb = b.ravel()
            cla.cg(A, bb, rtol=a.tol, atol=0.0, maxiter=3)  # kernels compiled
            count = [0]

            def cb(_):
                count[0] += 1

            t, (u, code) = wall(cp, lambda: cla.cg(A, bb, rtol=a.tol, atol=0.0, maxiter=100000, callback=cb))
            rr = peers.rel_residual(cp, b, u.reshape(n, n))
            # cupyx stops on its recurrence's residual: the true one is recorded as it is
            rec(solver="cupyx-cg", n=n, time_s=t, iterations=count[0], info=int(code), relative_residual=rr,
                reached_tol=rr < a.tol * 1.01, answer_ok=rr < 10 * a.tol and code == 0, timed="once")
            del A, bb, u
        del f, b
        cp.get_default_memory_pool().free_all_blocks()
    for n in [int(v) for v in a.sweep_sizes.split(",") if v]:
        sweeps(a, cp, hetrelax, n, rec)
    for n in [int(v) for v in a.sparse_sizes.split(",") if v]:
        sparse(a, cp, hetrelax, n, rec)
    with open(a.out, "w") as fh:
        json.dump({"meta": meta, "records": recs}, fh, indent=1)
    bad = [r for r in recs if not r.get("answer_ok", True)]
    if bad:
        print("python_gpu: answers failed their check:", bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
