#!/usr/bin/env python3
"""A CPU share's rows copied directly against staged (HETRELAX_SPLIT_MAPPED=0), per rank count.

    bench/experiments/rows_ab.py --build build-gpu --out DIR [--ranks 1,2] [--fractions F,..] [--runs 3]

For every rank count it runs `hybrid_mpi` (the per-rank split engine; one rank is the
one-process engine with no remote faces) `runs` times, alternating the two exchanges
(direct, staged, direct, ...), so a slow spell of the machine does not land on one of
them only. Every point of the first run of each is checked bitwise against cpu-seq; the
later runs are timed only. It prints, per schedule and fraction, the median of each
exchange's runs and their ratio, and writes DIR/rows-ab.json.

Direct (the default): the GPU copies a CPU part's boundary rows straight
from and into its grids (pinned), and MPI sends and receives a CPU part's faces from and
into its rows. Staged: both through the engine's send buffers and a memcpy on the host
thread, as before.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(a, ranks, variant, path, check):
    exe = os.path.join(a.build, "bench", "hybrid_mpi")
    per = len(os.sched_getaffinity(0)) // ranks
    bind = ["--map-by", "slot:PE=%d" % per, "--use-hwthread-cpus"] if per >= 2 else ["--bind-to", "none"]
    cmd = [a.mpiexec, "-n", str(ranks)] + bind + [exe, path, "--fractions", a.fractions,
                                                  "--sweeps", str(a.sweeps), "--repeats", str(a.repeats)]
    if not check:
        cmd.append("--no-check")
    cmd += a.args.split()
    env = dict(os.environ)
    env["HETRELAX_SPLIT_MAPPED"] = "0" if variant == "staged" else "1"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print("+", "HETRELAX_SPLIT_MAPPED=%s" % env["HETRELAX_SPLIT_MAPPED"], " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        sys.exit("hybrid_mpi failed (exit %d)" % r.returncode)
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--fractions", default="0,0.01,0.02,0.05")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sweeps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--args", default="", help="more hybrid_mpi options (e.g. \"--n 64 --second cpu\")")
    a = ap.parse_args()
    if a.runs < 2:
        sys.exit("--runs: at least 2 (one of each exchange)")
    os.makedirs(a.out, exist_ok=True)
    record = {"fractions": a.fractions, "sweeps": a.sweeps, "repeats": a.repeats, "results": []}
    for ranks in [int(x) for x in a.ranks.split(",")]:
        times = {}  # (variant, schedule, fraction) -> [s]
        for k in range(a.runs):
            variant = "direct" if k % 2 == 0 else "staged"
            d = run(a, ranks, variant, os.path.join(a.out, "ab-r%d-%d-%s.json" % (ranks, k, variant)), k < 2)
            if not d.get("ok", True):
                sys.exit("rank count %d, %s: a split's answer differs from cpu-seq" % (ranks, variant))
            for s in d["schedules"]:
                for p in s["points"]:
                    if p:
                        times.setdefault((variant, s["schedule"], p["fraction"]), []).append(p["measured_s"])
        print("\n%d rank(s): median s/sweep over the runs, direct / staged" % ranks)
        keys = sorted({(sch, f) for (_, sch, f) in times})
        for sch, f in keys:
            dt, st = times.get(("direct", sch, f)), times.get(("staged", sch, f))
            if not dt or not st:
                continue
            md, ms = statistics.median(dt), statistics.median(st)
            print("  %-6s %5.1f %%  direct %.4g ms  staged %.4g ms  ratio %.3f" % (sch, 100 * f, 1e3 * md, 1e3 * ms,
                                                                            md / ms))
            record["results"].append({"ranks": ranks, "schedule": sch, "fraction": f, "direct_s": dt,
                                      "staged_s": st, "ratio_of_medians": md / ms})
    with open(os.path.join(a.out, "rows-ab.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
