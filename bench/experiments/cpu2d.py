#!/usr/bin/env python3
"""CPU 2-D Jacobi benchmark: cpu-threads kernels against the STREAM copy.

5-point Jacobi with sine initial data and f = 0 (bitwise the same sweep as the spike problem's
interior), N = 8192 by default, single and double precision, on all cores. Per configuration
(bench/drivers/cpu_bench.c): the STREAM copy with the run's thread count and binding (best of 10
after a warm-up, with min and median), the kernel checked bitwise against cpu-seq (3
sweeps), one warm-up run, REPEATS timed runs on one solver (median, min, max), the copy again
after. Byte model: u read once + u' written once per point per sweep (8 B single, 16 B
double); GFLOP/s at 5 flops per point. Configurations, each unbound and bound to cores:

  default        what a user gets: --backend cpu-threads with no --kernel (spmd; streaming
                 stores when the grids exceed the LLC)
  spmd plain     spmd with ordinary stores (HETRELAX_CPU_STREAM=0; the default before)
  spmd plain Px1 the same on row bands (one contiguous slab of rows per thread)
  spmd-nt        spmd with streaming stores always
  spmd-nt Px1

One command; writes cpu2d.json and cpu2d.md into --out.

usage: bench/experiments/cpu2d.py [--bench build/bench/cpu_bench | --cc] [--threads P] [--sizes 8192]
                      [--precisions single,double] [--binds none,core] [--repeats 5] [--out DIR]
"""
import argparse
import json
import datetime
import os
import platform
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu3d import find_bench, git_commit, line, markdown, out_paths, run_bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", help="the cpu_bench helper (default build/bench/cpu_bench, else --cc)")
    ap.add_argument("--cc", action="store_true", help="compile the helper from the sources with cc")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--sizes", default="8192")
    ap.add_argument("--precisions", default="single,double")
    ap.add_argument("--binds", default="none,core")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iters", type=int, default=0, help="sweeps per timed run (0: 5 per thread, at least 10)")
    ap.add_argument("--configs", default="", help="comma-separated labels to run (default: all)")
    ap.add_argument("--out", default="results", help="a folder, or FILE.json (Markdown beside it)")
    a = ap.parse_args()
    json_path, md_path = out_paths(a.out, "cpu2d")
    tmp = tempfile.mkdtemp(prefix="hr-cpu2d-")
    exe = find_bench(a, tmp)
    P = a.threads
    iters = a.iters or max(10, 5 * P)
    plain = {"HETRELAX_CPU_STREAM": "0"}
    configs = [("default", "default", {}), ("spmd plain", "spmd", plain),
               (f"spmd plain {P}x1", "spmd", dict(plain, CPU_BENCH_THREAD_GRID=f"{P}x1")),
               ("spmd-nt", "spmd-nt", {}), (f"spmd-nt {P}x1", "spmd-nt", {"CPU_BENCH_THREAD_GRID": f"{P}x1"})]
    records = []
    load0 = list(os.getloadavg())  # the machine may be shared: say how busy it was

    def save():
        doc = {"benchmark": "cpu2d", "cpu": records[0]["cpu"], "cores": records[0]["cores"], "host": platform.node(),
               "commit": git_commit(), "hwloc": records[0]["hwloc"],
               "load_average_start": load0, "load_average_now": list(os.getloadavg()),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "problem": f"5-point Jacobi, N = {a.sizes}, sine initial data, f = 0; {iters} sweeps per timed run, "
                          f"{a.repeats} timed runs after one warm-up",
               "byte_model": "u read once + u' written once per point per sweep (8 B single, 16 B double); "
                             "5 flops per point",
               "reference": "STREAM-style copy (2 words per element, plain stores so write-allocate is paid), same "
                            "thread count and binding as the run, arrays 2x the LLC each (64 MiB to 1 GiB), "
                            "best of 10 after a warm-up, measured before and after each configuration",
               "records": records}
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1)
        extra = ["`Px1`: one band of whole rows per thread (contiguous memory, first-touched by its thread, long "
                 "prefetch streams); the default square grid cuts rows into segments of N / sqrt(P) points. "
                 "Streaming stores (`-nt`) move 2 words per point against the copy's 3."]
        with open(md_path, "w") as f:
            f.write(markdown(doc, "CPU 2-D Jacobi (5-point): cpu-threads against the STREAM copy", extra))

    for n in (int(s) for s in a.sizes.split(",")):
        for prec in a.precisions.split(","):
            for bind in a.binds.split(","):
                for label, kernel, env in configs:
                    if a.configs and label.split(" ")[0] + (" plain" if "plain" in label else "") + \
                            (" Px1" if "x1" in label else "") not in a.configs.split(","):
                        continue
                    r = run_bench(exe, [2, n, n, 1, prec, "cpu-threads", kernel, P, bind, iters, a.repeats, 0], env)
                    r["label"] = f"{label} (N={n})"
                    records.append(r)
                    print(line(r), flush=True)
                    save()
    save()
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
