#!/usr/bin/env python3
"""CPU red-black benchmarks, the red-black report's run: omega 0.8, zero right-hand side
(boundary 1, so the values are not all zero), fp32, in place.

  tiles:   the tile-shape study, 4096^2, 10 iterations, rb-tiles on all threads, tile
           heights x widths (width 0 = full rows; 0x0 = untiled rows per thread).
  summary: the red-black report's summary rows, 8192^2, 50 iterations: 1 thread (rb-seq), all cores
           untiled (rb-tiles 0x0), tiled (rb-tiles 4 x full, the seed's best), and rb-fused
           (both colours in one pass), each checked bitwise against rb-seq first.

Every figure is the median of REPEATS timed runs after a discarded warm-up. Byte model: one
read and one write of u per point per iteration (8 B/point in fp32); the STREAM copy rate
is measured in the same process with the same thread count (hr_measure_host_bandwidth, arrays
of --stream-mib MiB). Results go to docs/results/redblack-cpu.{json,md}.

usage: bench/experiments/redblack_cpu.py [--build build-nocuda] [--threads P] [--repeats 3] [tiles] [summary]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redblack_common as rc  # noqa: E402

SEED = ["--method", "redblack", "--omega", "0.8", "--rhs", "zero", "--boundary", "1", "--precision", "single"]
SEED_MS = {"1 thread": 8045, "all cores": 1083}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build-nocuda")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--stream-mib", type=int, default=512)
    ap.add_argument("--results", default=rc.RESULTS, help="path without .json/.md")
    ap.add_argument("parts", nargs="*", default=["tiles", "summary"])
    a = ap.parse_args()
    rc.RESULTS = a.results
    if "tiles" in a.parts:
        rows = []
        for th in (1, 2, 4, 8, 16, 64):
            for tw in (128, 256, 1024, 0):
                rows.append(f"{th}x{tw}")
        rows.append("0x0")
        out = []
        for tile in rows:
            d = rc.run_driver(a.build, SEED + ["--n", 4096, "--iters", 10, "--backend", "cpu-threads", "--kernel",
                                               "rb-tiles", "--threads", a.threads, "--tile", tile, "--repeats",
                                               a.repeats])
            med, lo, hi = rc.median_warm(d["time_sweeps_s"])
            th, tw = tile.split("x")
            label = "untiled" if th == "0" else f"{th} x {'full' if tw == '0' else tw}"
            out.append({"tile": label, "ms": 1e3 * med, "ms_min": 1e3 * lo, "ms_max": 1e3 * hi})
            print(f"tile {label}: {1e3 * med:.1f} ms", flush=True)
        best = min(out, key=lambda r: r["ms"])
        rc.save_section("tiles", {
            "setup": f"{a.threads} threads, median of {a.repeats} after a warm-up.",
            "rows": out,
            "notes": f"Best here: {best['tile']} ({best['ms']:.1f} ms). Seed 004 (Xeon, 4096^2, 10 iterations): "
                     "340-480 ms over its shapes, best height 4 and full width."})
    if "summary" in a.parts:
        configs = [("1 thread", "cpu-seq", "rb-seq", 1, None),
                   ("all cores", "cpu-threads", "rb-tiles", a.threads, "0x0"),
                   ("tiled", "cpu-threads", "rb-tiles", a.threads, "4x0"),
                   ("fused", "cpu-threads", "rb-fused", a.threads, None)]
        out = []
        n = 8192
        for row, backend, kernel, threads, tile in configs:
            args = SEED + ["--n", n, "--iters", 50, "--backend", backend, "--kernel", kernel, "--threads", threads,
                           "--repeats", a.repeats, "--stream", "--stream-mib", a.stream_mib]
            if tile:
                args += ["--tile", tile]
            if backend != "cpu-seq":
                args.append("--verify")
            d = rc.run_driver(a.build, args)
            if backend != "cpu-seq" and not d["bitwise_equal_seq"]:
                sys.exit(f"{kernel}: not bitwise equal to rb-seq")
            med, lo, hi = rc.median_warm(d["time_sweeps_s"])
            gbps = 8.0 * n * n * 50 / med * 1e-9
            out.append({"row": row, "kernel": kernel, "tile": f"({tile})" if tile else "", "threads": threads,
                        "ms": 1e3 * med, "ms_min": 1e3 * lo, "ms_max": 1e3 * hi, "gbps": gbps,
                        "stream_copy_gbps": d["stream_copy_gbps"], "bitwise_equal_seq": d.get("bitwise_equal_seq"),
                        "seed_ms": SEED_MS.get(row, "")})
            print(f"{row} {kernel}: {1e3 * med:.0f} ms, {gbps:.2f} GB/s, copy {d['stream_copy_gbps']:.2f}", flush=True)
        rc.save_section("summary", {
            "setup": (f"median of {a.repeats} after a warm-up; STREAM copy over {a.stream_mib} MiB arrays, "
                      "same process and thread count; threaded rows bitwise equal to rb-seq."),
            "rows": out,
            "notes": ("Seed 004 (Xeon, 12 threads; 8192^2 and 50 iterations per its README): 8045 ms on 1 thread, "
                      "1083 ms on 12 threads. Target (issue 13): threads >= 80% of the STREAM copy.")})


if __name__ == "__main__":
    main()
