#!/usr/bin/env python3
"""Peers of hetrelax's 3-D GPU Jacobi (7 points), on the same device in the same run.

  cupy-slicing     v[1:-1,1:-1,1:-1] = (1/6) * (((W + E) + (N + S)) + (D + U))
  cupy-rawkernel   a CuPy RawKernel, one thread per point on the unpadded (n+2)^3 grid
  torch-compile    the slicing expression in PyTorch through torch.compile (default mode)

Each starts from random interior values and a boundary of ones, is checked against a NumPy
sweep after 2 sweeps (on a 40^3 grid), then timed with CUDA events at n^3: median of 5
blocks of sweeps after a warm-up block. GB/s: hetrelax's byte model (u read once + written
once: 2 words per interior point per sweep). With --results (gpu3d_bench.py's JSON of the
same run), the ratio of hetrelax `tuned` (tuned shape) to the best peer is reported.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

RAW = r"""
extern "C" __global__ void jacobi7(const T* __restrict__ u, T* __restrict__ v, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int k = blockIdx.z + 1;
    if (i > n || j > n) return;
    size_t w = (size_t)n + 2, q = w * w, x = (size_t)k * q + (size_t)i * w + j;
    v[x] = (T)(1.0 / 6.0) * (((u[x - 1] + u[x + 1]) + (u[x - w] + u[x + w])) + (u[x - q] + u[x + q]));
}
"""


def sweep_expr(a, b, sixth):
    b[1:-1, 1:-1, 1:-1] = sixth * (((a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:]) + (a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1]))
                                   + (a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1]))


def initial(n, dtype):
    rng = np.random.default_rng(7)
    u = np.ones((n + 2, n + 2, n + 2), dtype=dtype)
    u[1:-1, 1:-1, 1:-1] = rng.random((n, n, n), dtype=np.float64).astype(dtype)
    return u


def numpy_ref(u0, sweeps):
    u = u0.astype(np.float64).copy()
    v = u.copy()
    for _ in range(sweeps):
        sweep_expr(u, v, 1.0 / 6.0)
        u, v = v, u
    return u


def make_cupy(mode, dtype, n):
    import cupy as cp
    sixth = dtype(1.0 / 6.0)
    if mode == "rawkernel":
        k = cp.RawKernel(RAW.replace("T", "float" if dtype == np.float32 else "double"), "jacobi7")
        blk = (32, 8, 1)
        grd = ((n + 31) // 32, (n + 7) // 8, n)
        return lambda a, b: k(grd, blk, (a, b, np.int32(n)))
    return lambda a, b: sweep_expr(a, b, sixth)


def make_torch(dtype):
    import torch
    sixth = 1.0 / 6.0

    def step(a, b):
        b[1:-1, 1:-1, 1:-1] = sixth * (((a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:]) + (a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1]))
                                       + (a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1]))
    return torch.compile(step)


def run_peer(name, n, dtype, sweeps, reps):
    u0 = initial(n, dtype)
    if name.startswith("cupy"):
        import cupy as cp
        step = make_cupy(name.split("-")[1], dtype, n)
        u, v = cp.asarray(u0), cp.asarray(u0)
        to_np = cp.asnumpy
        ev = lambda: cp.cuda.Event()
        sync = cp.cuda.Device().synchronize
    else:
        import torch
        step = make_torch(dtype)
        u, v = torch.from_numpy(u0).cuda(), torch.from_numpy(u0).cuda()
        to_np = lambda t: t.cpu().numpy()
        ev = lambda: torch.cuda.Event(enable_timing=True)
        sync = torch.cuda.synchronize

    def block(count):
        nonlocal u, v
        for _ in range(count):
            step(u, v)
            u, v = v, u

    block(1)  # compile / load
    sync()
    e0, e1 = ev(), ev()
    times = []
    for r in range(reps + 1):
        e0.record()
        block(sweeps)
        e1.record()
        e1.synchronize()
        ms = (cp.cuda.get_elapsed_time(e0, e1) if name.startswith("cupy") else e0.elapsed_time(e1))
        if r > 0:
            times.append(ms * 1e-3)
    sec = statistics.median(times)
    es = np.dtype(dtype).itemsize
    return 2.0 * es * n ** 3 * sweeps / sec * 1e-9


def check_peer(name, dtype):
    n = 40
    u0 = initial(n, dtype)
    want = numpy_ref(u0, 2)
    if name.startswith("cupy"):
        import cupy as cp
        step = make_cupy(name.split("-")[1], dtype, n)
        u, v = cp.asarray(u0), cp.asarray(u0)
        step(u, v)
        step(v, u)
        got = cp.asnumpy(u)
    else:
        import torch
        step = make_torch(dtype)
        u, v = torch.from_numpy(u0).cuda(), torch.from_numpy(u0).cuda()
        step(u, v)
        step(v, u)
        got = u.cpu().numpy()
    err = float(np.max(np.abs(got - want)))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    if not err <= tol:
        raise RuntimeError(f"{name}: error {err:.2e} against NumPy")
    return err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--out", required=True)
    ap.add_argument("--results", help="gpu3d_bench JSON of the same run")
    ap.add_argument("--peers", default="cupy-slicing,cupy-rawkernel,torch-compile")
    ap.add_argument("--precisions", default="single,double")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    ours = {}
    if a.results:
        try:
            d = json.load(open(a.results))
            for r in d["records"]:
                if r["dim"] == 3 and r["kernel"] == "tuned" and r["ok"]:
                    best = r.get("tuned", r["untuned"])
                    ours[r["precision"]] = (best["gbps"], r["untuned"]["gbps"])
        except (OSError, KeyError, ValueError) as e:
            print(f"cannot read {a.results}: {e}", file=sys.stderr)
    recs, status = [], 0
    for prec in a.precisions.split(","):
        dtype = np.float32 if prec == "single" else np.float64
        sweeps = 20 if a.quick else 50
        best = 0.0
        for p in a.peers.split(","):
            t0 = time.time()
            try:
                err = check_peer(p, dtype)
                gbps = run_peer(p, a.n, dtype, sweeps, 5)
            except Exception as e:  # a peer that cannot run is reported, not fatal
                print(f"{p:15s} {prec:6s} n={a.n}: FAILED {type(e).__name__}: {e}")
                recs.append({"peer": p, "precision": prec, "n": a.n, "ok": False, "error": str(e)[:300]})
                status = 1
                continue
            best = max(best, gbps)
            print(f"{p:15s} {prec:6s} n={a.n}: {gbps:8.1f} GB/s (check error {err:.1e}, {time.time() - t0:.0f} s)")
            recs.append({"peer": p, "precision": prec, "n": a.n, "ok": True, "gbps": round(gbps, 1),
                         "check_error": err, "sweeps": sweeps})
        if prec in ours and best > 0:
            t, u = ours[prec]
            print(f"hetrelax tuned {prec}: {t:.1f} GB/s tuned ({t / best:.2f}x the best peer), "
                  f"{u:.1f} GB/s untuned ({u / best:.2f}x)")
            recs.append({"peer": "hetrelax-tuned", "precision": prec, "n": a.n, "gbps": t, "untuned_gbps": u,
                         "ratio_to_best_peer": round(t / best, 3), "untuned_ratio": round(u / best, 3)})
    json.dump({"records": recs, "byte_model": "2 words per interior point per sweep"}, open(a.out, "w"), indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
