#!/usr/bin/env python3
"""Reads the per-process schedule traces of a decomposed host run and says where its
rounds went (why do 16 ranks wait for each other?).

  HETRELAX_DSOLVER_TRACE=/tmp/tr mpiexec -n 16 tests/parallel/mpi/mpi_solve --dim 3 --n 512 ...
  bench/experiments/mpi_trace.py /tmp/tr [--json out.json] [--skip 5]

Each file PREFIX.<subdomain> has one line per overlapped sweep round (src/parallel/decomp/dsolver.h):
start, posted, inner_end, arrived, end (monotonic wall clock, one clock for the host), the
thread's CPU seconds over the inner points and the involuntary context switches. A round
without overlap (mapped ghost planes, --no-overlap) has no inner points: its exchange shows
as "wait", its whole sweep as "shell" (and its CPU seconds under "cpu"). Rounds
are matched by index across the files (every process runs the same rounds); gaps between
runs (residual checks, the reference timing) fall outside the rounds.
"""
import argparse
import glob
import json
import statistics as st


def load(prefix):
    ranks = {}
    for path in glob.glob(prefix + ".*"):
        tail = path[len(prefix) + 1:]
        if not tail.isdigit():
            continue
        rows = []
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                rows.append([float(x) for x in line.split()])
        ranks[int(tail)] = rows
    return dict(sorted(ranks.items()))


def med(xs):
    return st.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefix")
    ap.add_argument("--skip", type=int, default=3, help="first rounds left out (warm-up)")
    ap.add_argument("--json")
    a = ap.parse_args()
    ranks = load(a.prefix)
    if not ranks:
        raise SystemExit(f"mpi_trace: no trace files {a.prefix}.<n>")
    n = min(len(r) for r in ranks.values())
    if n <= a.skip + 1:
        raise SystemExit(f"mpi_trace: only {n} rounds in {a.prefix}.<n>")
    ids = list(ranks)
    rounds = range(a.skip, n)
    per_rank = {}
    for i in ids:
        rs = [ranks[i][k] for k in rounds]
        per_rank[i] = {
            "period_ms": med([(r[4] - r[0]) * 1e3 for r in rs]),
            "inner_wall_ms": med([(r[2] - r[1]) * 1e3 for r in rs]),
            "inner_cpu_ms": med([r[5] * 1e3 for r in rs]),
            "inner_lost_ms_mean": st.mean([(max(r[2] - r[1], r[4] - r[3]) - r[5]) * 1e3 for r in rs]),
            "post_ms": med([(r[1] - r[0]) * 1e3 for r in rs]),
            "wait_ms_mean": st.mean([(r[3] - r[2]) * 1e3 for r in rs]),
            "shell_ms": med([(r[4] - r[3]) * 1e3 for r in rs]),
            "switches_per_round": st.mean([r[6] for r in rs]),
        }
    # per round across processes: skew of the starts, who swept slowest (inner + shell), who waited
    slowest, skew, waits_all = [], [], []
    for k in rounds:
        starts = [ranks[i][k][0] for i in ids]
        skew.append((max(starts) - min(starts)) * 1e3)
        inner = [(ranks[i][k][2] - ranks[i][k][1] + ranks[i][k][4] - ranks[i][k][3], i) for i in ids]
        slowest.append(max(inner)[1])
        waits_all.append(min((ranks[i][k][3] - ranks[i][k][2]) * 1e3 for i in ids))
    counts = {i: slowest.count(i) for i in ids}
    # wall time of the rounds: from the first start to the last end, per round
    span = [(max(ranks[i][k][4] for i in ids) - min(ranks[i][k][0] for i in ids)) * 1e3 for k in rounds]
    rounds_per_s = (len(rounds) - 1) / (ranks[ids[0]][n - 1][4] - ranks[ids[0]][a.skip][4]) if len(rounds) > 1 else 0
    print(f"{len(ids)} processes, {n} rounds ({a.skip} skipped)")
    print(f"{'id':>3} {'period':>8} {'inner':>8} {'cpu':>8} {'lost':>7} {'post':>7} {'wait':>7} {'shell':>7} {'invcsw':>6} {'slowest':>7}")
    for i in ids:
        p = per_rank[i]
        print(f"{i:3d} {p['period_ms']:8.3f} {p['inner_wall_ms']:8.3f} {p['inner_cpu_ms']:8.3f} "
              f"{p['inner_lost_ms_mean']:7.3f} {p['post_ms']:7.3f} {p['wait_ms_mean']:7.3f} {p['shell_ms']:7.3f} "
              f"{p['switches_per_round']:6.2f} {counts[i]:7d}")
    print(f"start skew across processes: median {med(skew):.3f} ms, max {max(skew):.3f} ms")
    print(f"least wait in a round (every process waited at least): median {med(waits_all):.3f} ms")
    print(f"round span first start..last end: median {med(span):.3f} ms")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"processes": len(ids), "rounds": n, "skip": a.skip, "per_process": per_rank,
                       "slowest_counts": counts, "start_skew_ms": skew, "least_wait_ms": waits_all,
                       "span_ms": span}, f, indent=1)


if __name__ == "__main__":
    main()
