#!/usr/bin/env python3
"""CPU 2-D Jacobi benchmark (issue 2): cpu-seq and cpu-threads, N = 1024, 2048, 4096,
single and double precision.

Byte model: every sweep reads u once and writes u' once: 8 B/point in single, 16 in
double (spike right-hand side, no f array). GFLOP/s count 5 flops per point.
Reference: STREAM-style copy bandwidth measured by `hetrelax info` in the same run, with
the same thread count (1 thread for cpu-seq). Each configuration is verified bitwise
against cpu-seq first (--verify), then timed REPEATS+1 times; the first timing is a
warm-up and is discarded; the median (and min/max) of the rest is reported.

usage: bench/cpu2d.py HETRELAX [--out DIR] [--threads P] [--sizes 1024,2048,4096] [--repeats R]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"cpu2d.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hetrelax")
    ap.add_argument("--out", default="results")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--sizes", default="1024,2048,4096")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0, help="target time of one timed run")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    hr = a.hetrelax

    info = json.loads(run([hr, "info", "--no-bandwidth", "--json", "-"]))
    bw = {}
    for t in sorted({1, a.threads}):
        d = json.loads(run([hr, "info", "--threads", str(t), "--repeats", "10", "--json", "-"]))
        bw[t] = d["host_bandwidth"]
        print(f"STREAM copy {bw[t]['copy_gbps']:.2f} GB/s, triad {bw[t]['triad_gbps']:.2f} GB/s ({t} threads)")

    commit = run(["git", "rev-parse", "--short=12", "HEAD"]).strip() if os.path.isdir(".git") else "unknown"
    records = []
    for backend, kernel in (("cpu-seq", "seq"), ("cpu-threads", "spmd"), ("cpu-threads", "spmd-nt")):
        threads = 1 if backend == "cpu-seq" else a.threads
        ref = bw[threads]["copy_gbps"]
        for prec in ("single", "double"):
            for n in (int(s) for s in a.sizes.split(",")):
                base = [hr, "poisson2d", "--n", str(n), "--precision", prec, "--backend", backend, "--kernel", kernel,
                        "--threads", str(threads), "--quiet", "--monitor", "0", "--bandwidth", f"{ref}"]
                # answer first: bitwise equal to the sequential reference
                if backend != "cpu-seq":
                    out = run(base + ["--iters", "21", "--verify"])
                    if "bitwise equal" not in out:
                        sys.exit(f"cpu2d.py: verification failed for {backend} {prec} n={n}")
                # size the timed runs to about --seconds each
                probe = json.loads(run(base + ["--iters", "20", "--json", "-"]))
                iters = max(20, int(a.seconds / max(probe["time_per_sweep_s"], 1e-9)))
                runs = [json.loads(run(base + ["--iters", str(iters), "--json", "-"]))
                        for _ in range(a.repeats + 1)][1:]
                gbps = [r["gbps"] for r in runs]
                med = statistics.median(gbps)
                rec = {"backend": backend, "kernel": runs[0]["kernel"], "precision": prec, "n": n,
                       "threads": threads, "iters": iters, "runs": len(runs),
                       "time_per_sweep_s_median": statistics.median(r["time_per_sweep_s"] for r in runs),
                       "gflops_median": statistics.median(r["gflops"] for r in runs),
                       "gbps_median": med, "gbps_min": min(gbps), "gbps_max": max(gbps),
                       "bytes_per_point": runs[0]["bytes_per_point"],
                       "stream_copy_gbps": ref, "bandwidth_fraction": med / ref, "verified": True}
                records.append(rec)
                print(f"{backend:12s} {kernel:8s} {prec:6s} n={n:5d} P={threads:2d}  {1e3*rec['time_per_sweep_s_median']:8.3f} ms/sweep"
                      f"  {rec['gflops_median']:6.2f} GFLOP/s  {med:6.2f} GB/s  {100*med/ref:5.1f}% of copy")
    doc = {"benchmark": "cpu2d", "cpu": info.get("cpu_model"), "cores": info.get("cores"),
           "host": platform.node(), "commit": commit,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "byte_model": "u read once + u' written once per point per sweep (8 B single, 16 B double)",
           "reference": "STREAM-style copy, best of 10 after warm-up, same thread count",
           "stream": {str(k): v for k, v in bw.items()}, "records": records}
    path = os.path.join(a.out, "cpu2d.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(a.out, "cpu2d.md"), "w") as f:
        f.write(markdown(doc))
    print(f"wrote {path} and cpu2d.md")


def markdown(d):
    """The results as a Markdown page for docs/results/."""
    out = [f"# CPU 2-D Jacobi: cpu-seq and cpu-threads\n",
           f"- machine: {d['cpu']}, {d['cores']} cores; commit {d['commit']}; date {d['date']}",
           f"- byte model: {d['byte_model']}; GFLOP/s at 5 flops per point",
           f"- reference: {d['reference']}: " + ", ".join(
               f"copy {v['copy_gbps']:.2f} GB/s ({k} thread{'s' if k != '1' else ''})" for k, v in d["stream"].items()),
           "- each configuration verified bitwise against cpu-seq, then timed; median of the timed runs"
           " after one warm-up run (min-max in brackets)\n",
           "| backend | kernel | precision | N | threads | ms/sweep | GFLOP/s | GB/s (min-max) | % of STREAM copy |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in d["records"]:
        out.append(f"| {r['backend']} | {r['kernel']} | {r['precision']} | {r['n']} | {r['threads']} | "
                   f"{1e3 * r['time_per_sweep_s_median']:.3f} | {r['gflops_median']:.2f} | "
                   f"{r['gbps_median']:.2f} ({r['gbps_min']:.2f}-{r['gbps_max']:.2f}) | "
                   f"{100 * r['bandwidth_fraction']:.1f}% |")
    out.append("\nN = 1024 (4 MiB per single-precision grid) and 2048 live partly in the caches and exceed the"
               " DRAM copy rate. At N = 4096 the grids stream from memory. The STREAM copy pays write-allocate"
               " traffic like `spmd` does; `spmd-nt` avoids it with streaming stores, hence above 100%.\n")
    return "\n".join(out)


if __name__ == "__main__":
    main()
