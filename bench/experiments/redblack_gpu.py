#!/usr/bin/env python3
"""GPU red-black: the red-black report's summary rows on today's GPU. Each kernel is first
checked bitwise against rb-seq (1025^2, 20 iterations, fp32 and fp64), then timed at
8192^2 fp32 and fp64, 50 iterations, omega 0.8, zero rhs, boundary 1 (the red-black report's run): median
of REPEATS runs after a warm-up. Byte model: each point read and written once per iteration
(8 B fp32, 16 B fp64), against the device copy bandwidth measured in the same run
(hr_measure_device_bandwidth). Host transfers of the 8192^2 grid: pinned vs pageable.

usage: bench/experiments/redblack_gpu.py BUILD OUTDIR [--repeats 5] [--n 8192] [--two]

--two (2 GPUs): rb-2gpu checked bitwise, then against one GPU's rb-v1 and rb-tuned at 8192^2 and
16384^2 (target: 1.8x; the red-black report reached 1.6x)
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

KERNELS = ["rb-v1", "rb-v2", "rb-v3", "rb-v4", "rb-ldg", "rb-inplace", "rb-tuned"]
SEED_MS = {"rb-v1": 405, "rb-v3": 493, "rb-v4": 396}  # [ext] slides, Titan Z, per 50 iterations


def drive(build, args):
    cmd = [os.path.join(build, "bench", "redblack_driver")] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--two", action="store_true", help="also rb-2gpu against rb-v1 (needs 2 GPUs)")
    a = ap.parse_args()
    seed = ["--method", "redblack", "--omega", "0.8", "--rhs", "zero", "--boundary", "1", "--backend", "gpu"]
    checks, rows, transfers = [], [], []
    for k in KERNELS:
        for prec in ("single", "double"):
            d = drive(a.build, seed + ["--kernel", k, "--precision", prec, "--n", 1025, "--iters", 20, "--verify"])
            checks.append({"kernel": k, "precision": prec, "bitwise_equal_seq": d["bitwise_equal_seq"]})
            print(f"check {k} {prec}: bitwise {d['bitwise_equal_seq']}", flush=True)
    bw = None
    for prec in ("single", "double"):
        for k in KERNELS:
            args = seed + ["--kernel", k, "--precision", prec, "--n", a.n, "--iters", 50, "--repeats", a.repeats]
            if bw is None:
                args.append("--device-bw")
            d = drive(a.build, args)
            if bw is None:
                bw = d["device_copy_gbps"]
            t = d["time_sweeps_s"][1:]
            med = statistics.median(t)
            es = 4 if prec == "single" else 8
            gbps = 2 * es * a.n * a.n * 50 / med * 1e-9
            rows.append({"kernel": k, "precision": prec, "ms": 1e3 * med, "ms_min": 1e3 * min(t), "ms_max": 1e3 * max(t),
                         "gbps": gbps, "fraction_of_copy": gbps / bw, "shape": d["tile"], "device": d["device_name"],
                         "seed_ms": SEED_MS.get(k) if prec == "single" else None})
            print(f"{k} {prec}: {1e3 * med:.2f} ms / 50 it, {gbps:.0f} GB/s, {100 * gbps / bw:.0f}% of copy {bw:.0f}",
                  flush=True)
    # rb-tuned's shapes (BX threads x BY strips per block (+ 16: overlapped warps) x H rows per strip)
    sweep = []
    for prec in ("single", "double"):
        for shape in ("128x17x8", "128x1x8", "128x17x4", "128x1x4", "128x17x16", "64x18x8", "256x1x8", "32x20x8",
                      "128x1x32", "64x1x64"):
            os.environ["HETRELAX_RB_GPU_SHAPE"] = shape
            d = drive(a.build, seed + ["--kernel", "rb-tuned", "--precision", prec, "--n", a.n, "--iters", 50,
                                       "--repeats", a.repeats])
            med = statistics.median(d["time_sweeps_s"][1:])
            es = 4 if prec == "single" else 8
            gbps = 2 * es * a.n * a.n * 50 / med * 1e-9
            sweep.append({"precision": prec, "shape": shape, "ms": 1e3 * med, "gbps": gbps, "fraction_of_copy": gbps / bw})
            print(f"rb-tuned {prec} {shape}: {1e3 * med:.2f} ms, {gbps:.0f} GB/s, {100 * gbps / bw:.0f}%", flush=True)
        del os.environ["HETRELAX_RB_GPU_SHAPE"]
    for mem in ("pinned", "pageable"):
        args = seed + ["--kernel", "rb-tuned", "--precision", "single", "--n", a.n, "--iters", 1]
        if mem == "pageable":
            args.append("--pageable")
        h2d, d2h = [], []
        for _ in range(4):
            d = drive(a.build, args)
            h2d.append(d["time_h2d_s"])
            d2h.append(d["time_d2h_s"])
        gib = ((a.n + 2) * (a.n + 32) * 4) / 2 ** 30  # about the padded grid
        transfers.append({"memory": mem, "h2d_ms": 1e3 * statistics.median(h2d[1:]),
                          "d2h_ms": 1e3 * statistics.median(d2h[1:]),
                          "h2d_gibps": gib / statistics.median(h2d[1:]), "d2h_gibps": gib / statistics.median(d2h[1:])})
        print(transfers[-1], flush=True)
    two = []
    if a.two:
        # rb-2gpu runs v1 launches on each half: compare with one GPU's v1 (and tuned)
        for prec in ("single", "double"):
            d = drive(a.build, seed + ["--kernel", "rb-2gpu", "--precision", prec, "--n", 1025, "--iters", 20,
                                       "--verify"])
            checks.append({"kernel": "rb-2gpu", "precision": prec, "bitwise_equal_seq": d["bitwise_equal_seq"]})
            for n in (8192, 16384):
                t = {}
                for k in ("rb-v1", "rb-tuned", "rb-2gpu"):
                    d = drive(a.build, seed + ["--kernel", k, "--precision", prec, "--n", n, "--iters", 50,
                                               "--repeats", a.repeats])
                    t[k] = statistics.median(d["time_sweeps_s"][1:])
                two.append({"precision": prec, "n": n, "ms": {k: 1e3 * v for k, v in t.items()},
                            "speedup_vs_v1": t["rb-v1"] / t["rb-2gpu"], "speedup_vs_tuned": t["rb-tuned"] / t["rb-2gpu"]})
                print(two[-1], flush=True)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "device_copy_gbps": bw, "n": a.n, "iterations": 50, "checks": checks, "rows": rows, "transfers": transfers, "tuned_shapes": sweep, "two_gpus": two,
           "byte_model": "one read + one write of u per point per iteration"}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "redblack-gpu.json"), "w") as f:
        json.dump(doc, f, indent=1)
    ok = all(c["bitwise_equal_seq"] for c in checks)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
