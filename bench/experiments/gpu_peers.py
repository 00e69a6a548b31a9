#!/usr/bin/env python3
"""Peers of hetrelax's GPU Jacobi, measured on the same device in the same check run.

  cupy-rawkernel   CuPy RawKernel, one thread per point on the unpadded (n+2)^2 grid
  cupy-slicing     v[1:-1,1:-1] = 0.25*((u[:-2,1:-1]+u[2:,1:-1])+(u[1:-1,:-2]+u[1:-1,2:]))
  torch-slicing    the same expression in PyTorch
  torch-compile    that PyTorch function through torch.compile (default mode)

Each peer starts from random interior values (never zeros), is checked against a NumPy
Jacobi after 3 sweeps, then timed with CUDA events: median of 5 blocks of sweeps after a
warm-up. GB/s use the byte model of hetrelax (8 B single / 16 B double per point per
sweep). The ratio column divides hetrelax `tuned` (ladder records of --results, same
device, same run) by each peer.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

RAW = r"""
extern "C" __global__ void jacobi(const T* __restrict__ u, T* __restrict__ v, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i > n || j > n) return;
    size_t w = (size_t)n + 2, k = (size_t)i * w + j;
    v[k] = (T)0.25 * ((u[k - w] + u[k + w]) + (u[k - 1] + u[k + 1]));
}
"""


def numpy_ref(u0, sweeps):
    u = u0.astype(np.float64).copy()
    v = u.copy()
    for _ in range(sweeps):
        v[1:-1, 1:-1] = 0.25 * ((u[:-2, 1:-1] + u[2:, 1:-1]) + (u[1:-1, :-2] + u[1:-1, 2:]))
        u, v = v, u
    return u


def bench_cupy(n, dtype, u0, mode):
    import cupy as cp
    u = cp.asarray(u0)
    v = u.copy()
    if mode == "rawkernel":
        k = cp.RawKernel(RAW.replace("T", "float" if dtype == np.float32 else "double"), "jacobi")
        blk = (32, 8)
        grd = ((n + 31) // 32, (n + 7) // 8)

        def step(a, b):
            k(grd, blk, (a, b, np.int32(n)))
    else:
        def step(a, b):
            b[1:-1, 1:-1] = 0.25 * ((a[:-2, 1:-1] + a[2:, 1:-1]) + (a[1:-1, :-2] + a[1:-1, 2:]))

    def sweeps(count):
        nonlocal u, v
        for _ in range(count):
            step(u, v)
            u, v = v, u

    sweeps(3)
    got = cp.asnumpy(u)
    u = cp.asarray(u0)
    v = u.copy()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    return got, lambda count: timed(sweeps, count, e0, e1, cp.cuda.Device().synchronize, lambda: cp.cuda.get_elapsed_time(e0, e1))


def bench_torch(n, dtype, u0, compiled):
    import torch
    u = torch.from_numpy(u0).cuda()
    v = u.clone()

    def step(a, b):
        b[1:-1, 1:-1] = 0.25 * ((a[:-2, 1:-1] + a[2:, 1:-1]) + (a[1:-1, :-2] + a[1:-1, 2:]))

    f = torch.compile(step) if compiled else step

    def sweeps(count):
        nonlocal u, v
        for _ in range(count):
            f(u, v)
            u, v = v, u

    sweeps(3)
    got = u.cpu().numpy()
    u = torch.from_numpy(u0).cuda()
    v = u.clone()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    return got, lambda count: timed(sweeps, count, e0, e1, torch.cuda.synchronize, lambda: e0.elapsed_time(e1))


def timed(sweeps, count, e0, e1, sync, elapsed):
    sweeps(count)  # warm-up
    sync()
    ms = []
    for _ in range(5):
        e0.record()
        sweeps(count)
        e1.record()
        sync()
        ms.append(elapsed() / count)
    return statistics.median(ms) * 1e-3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", help="gpu_bench.py JSON with ladder records of tuned")
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    tuned = {}
    device = None
    if args.results:
        try:
            doc = json.load(open(args.results))
            device = doc.get("device")
            for r in doc["records"]:
                if r.get("section") == "ladder" and r.get("kernel") == "tuned":
                    tuned[(r["n"], r["precision"])] = r["gbps_median"]
        except (OSError, ValueError, KeyError) as e:
            print("no tuned results to compare with:", e)
    import torch
    device = device or torch.cuda.get_device_name(0)
    sizes = [4096] if args.quick else [4096, 16384]
    peers = [("cupy-rawkernel", lambda n, d, u0: bench_cupy(n, d, u0, "rawkernel")),
             ("cupy-slicing", lambda n, d, u0: bench_cupy(n, d, u0, "slicing")),
             ("torch-slicing", lambda n, d, u0: bench_torch(n, d, u0, False)),
             ("torch-compile", lambda n, d, u0: bench_torch(n, d, u0, True))]
    records, failures = [], []
    print("%-15s %6s %-6s %10s %9s %12s" % ("peer", "n", "prec", "ms/sweep", "GB/s", "tuned/peer"))
    for prec, dtype in [("single", np.float32), ("double", np.float64)]:
        for n in sizes:
            rng = np.random.default_rng(n)
            u0 = rng.random((n + 2, n + 2)).astype(dtype)
            ref = numpy_ref(u0, 3) if n <= 4096 else None
            best = 0.0
            for name, make in peers:
                t0 = time.time()
                try:
                    got, timer = make(n, dtype, u0)
                    if ref is not None:
                        err = float(np.max(np.abs(got.astype(np.float64) - ref)))
                        if err > (1e-5 if dtype == np.float32 else 1e-12):
                            failures.append("%s n=%d %s: max error %.3e after 3 sweeps" % (name, n, prec, err))
                            continue
                    count = 200 if n <= 4096 else 20
                    t = timer(count)
                except Exception as e:  # a peer that fails is reported, not dropped
                    failures.append("%s n=%d %s: %s" % (name, n, prec, e))
                    print("%-15s %6d %-6s failed: %s" % (name, n, prec, e))
                    continue
                gbps = (8 if dtype == np.float32 else 16) * n * n / t * 1e-9
                best = max(best, gbps)
                ratio = tuned.get((n, prec), float("nan")) / gbps
                records.append({"peer": name, "n": n, "precision": prec, "device": device, "time_per_sweep_s": t,
                                "gbps": gbps, "tuned_gbps": tuned.get((n, prec)), "tuned_over_peer": ratio,
                                "setup_s": time.time() - t0})
                print("%-15s %6d %-6s %10.4f %9.1f %11.2fx" % (name, n, prec, 1e3 * t, gbps, ratio))
            if (n, prec) in tuned and best > 0:
                records.append({"peer": "best-peer", "n": n, "precision": prec, "device": device, "gbps": best,
                                "tuned_gbps": tuned[(n, prec)], "tuned_over_peer": tuned[(n, prec)] / best})
                print("%-15s %6d %-6s %10s %9.1f %11.2fx" % ("best peer", n, prec, "", best, tuned[(n, prec)] / best))
    with open(args.out, "w") as f:
        json.dump({"device": device, "records": records, "failures": failures}, f, indent=1)
    for fl in failures:
        print("FAILURE:", fl)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
