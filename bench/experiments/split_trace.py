#!/usr/bin/env python3
"""Where a CPU+GPU split's sweep time goes, engine by engine ("slow mode").

  bench/experiments/split_trace.py run --build build --out DIR     # on the GPU machine: fig. 5d and fig. 14 splits
  bench/experiments/split_trace.py report DIR/trace.jsonl          # the table, here or there
  bench/experiments/split_trace.py compare A=a.jsonl B=b.jsonl      # runs side by side, and their slow engines

`run` repeats a few small CPU shares in many fresh engines (bench/hybrid_split --engine, one
engine per split and pass) with HETRELAX_SPLIT_TRACE on. Each engine writes a line: its parts,
the host's time per overlapped sweep by phase (issuing, the host exchange, waiting for each
part), a histogram of sweep times, and what the scheduler did to the host thread; each crew
writes one: its jobs' mean and longest time, and per worker the start latency, run time, run
delay (runnable, no CPU), preemptions and CPU. Around the runs it keeps per-CPU /proc/stat and
/proc/interrupts snapshots and the threads of every process (ps), so a CPU that loses time to
interrupts, to steal or to another process shows up.

`report` prints one line per engine with a CPU part: the mean sweep, which wait dominates, and
the crews' worst worker; engines whose sweep is over twice the median of their split are marked.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def snapshot(path):
    with open(path, "w") as f:
        for src in ("/proc/stat", "/proc/interrupts", "/proc/loadavg"):
            try:
                f.write("== %s\n" % src + open(src).read())
            except OSError as e:
                f.write("== %s: %s\n" % (src, e))
        r = subprocess.run(["ps", "-eLo", "pid,lwp,psr,pcpu,stat,comm"], capture_output=True, text=True)
        f.write("== ps\n" + r.stdout)


def cpu_deltas(before, after):
    """Per-CPU jiffies spent in irq, softirq, steal, system, user between two snapshots."""
    def parse(path):
        out = {}
        for line in open(path):
            if line.startswith("== /proc/interrupts"):
                break
            w = line.split()
            if w and w[0].startswith("cpu") and w[0] != "cpu":
                out[w[0]] = [int(x) for x in w[1:9]]
        return out
    a, b = parse(before), parse(after)
    rows = []
    for c in sorted(b, key=lambda k: int(k[3:])):
        d = [y - x for x, y in zip(a.get(c, [0] * 8), b[c])]
        rows.append((c, d))
    return rows


def run(a):
    os.makedirs(a.out, exist_ok=True)
    trace = os.path.join(a.out, "trace.jsonl")
    if os.path.exists(trace):
        os.remove(trace)
    exe = os.path.join(a.build, "bench", "hybrid_split")
    env = dict(os.environ, HETRELAX_SPLIT_TRACE=trace)
    jobs = [
        ("fig5d", ["--engine", "--dim", 3, "--nx", 512, "--ny", 512, "--nz", 1024, "--precision", "double",
                   "--schedules", "nested,naive", "--sweeps", 20, "--repeats", 5, "--check", 2,
                   "--fractions", a.fractions5d, "--passes", a.passes]),
        ("fig14", ["--engine", "--dim", 2, "--n", 4096, "--precision", "single", "--sweeps", 200,
                   "--repeats", 5, "--check", 4, "--fractions", a.fractions14, "--passes", a.passes]),
    ]
    snapshot(os.path.join(a.out, "before.txt"))
    status = 0
    for name, args in jobs:
        if a.only and name not in a.only.split(","):
            continue
        with open(trace, "a") as f:
            f.write(json.dumps({"run": name}) + "\n")
        cmd = [exe, os.path.join(a.out, name + ".json")] + [str(x) for x in args]
        print("+", " ".join(cmd), flush=True)
        with open(os.path.join(a.out, name + ".log"), "w") as log:
            r = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        status |= r.returncode
        snapshot(os.path.join(a.out, "after-%s.txt" % name))
    print("per-CPU jiffies (user, system, irq, softirq, steal) over the runs:")
    last = sorted(f for f in os.listdir(a.out) if f.startswith("after-"))
    if last:
        for c, d in cpu_deltas(os.path.join(a.out, "before.txt"), os.path.join(a.out, last[-1])):
            print("  %-6s user %6d sys %5d irq %4d softirq %4d steal %5d" % (c, d[0], d[2], d[5], d[6], d[7]))
    report(trace)
    print("\nper split:")
    summary(trace)
    return status


def sweep_us(e):
    return e["issue_us"] + e["exchange_us"] + sum(e["order_us"])


def report(path):
    runs, cur, last = [], None, None
    for line in open(path):
        d = json.loads(line)
        if "run" in d:
            cur = {"name": d["run"], "engines": []}
            runs.append(cur)
        elif "engine" in d:
            if cur is None:
                cur = {"name": "?", "engines": []}
                runs.append(cur)
            last = dict(d, crews=[])
            cur["engines"].append(last)
        elif "crew" in d and last is not None:
            last["crews"].append(d)
    for r in runs:
        eng = [e for e in r["engines"] if e["sweeps"] > 0 and any(p[0].startswith("cpu") for p in e["parts"])]
        by_split = {}
        for e in eng:
            by_split.setdefault((e["parts"][0][0], e["parts"][0][1]), []).append(sweep_us(e))
        print("\n%s: %d engines with a CPU part" % (r["name"], len(eng)))
        print("  %-28s %5s %6s %8s %7s %7s %7s %7s %6s %6s  %s" %
              ("CPU part", "rows", "sweeps", "sweep_us", "issue", "exch", "ordCPU", "ordGPU", "hdelay", "steal",
               "crews: job mean/max us, >1ms, worst worker (lat max us, delay ms, preempted, cpu)"))
        for e in eng:
            key = (e["parts"][0][0], e["parts"][0][1])
            med = statistics.median(by_split[key])
            s = sweep_us(e)
            crews = []
            for c in e["crews"]:
                w = max(range(c["n"]), key=lambda i: c["delay_ms"][i])
                crews.append("%d:%.0f/%.0f,%d,(%s,%.1f,%d,cpu%d)" % (
                    c["n"], c["job_mean_us"], c["job_max_us"], c["jobs_over_1ms"], c["lat_max_us"][w],
                    c["delay_ms"][w], c["preempted"][w], c["cpu"][w]))
            slow = s > 2 * med
            print("  %-28s %5d %6d %8.0f %7.0f %7.0f %7.0f %7.0f %6.1f %6.0f  %s%s" % (
                key[0][:28], key[1], e["sweeps"], s, e["issue_us"], e["exchange_us"], e["order_us"][0],
                e["order_us"][-1], e["host_delay_ms"], e["steal_ms"], " ".join(crews),
                "  << SLOW (median %.0f)" % med if slow else ""))
            if slow:  # which workers were slow, and whether their vCPU ran (CPU time) meanwhile
                for c in e["crews"]:
                    if "run_cpu_mean_us" in c:
                        print("      crew of %d: run us %s; CPU us %s; ended last %s; cpus %s" % (
                            c["n"], c["run_mean_us"], c["run_cpu_mean_us"], c["last"], c["cpu"]))
                if "steal_cpu_ms" in e:
                    print("      steal per CPU (ms): %s; host on cpu %d" % (e["steal_cpu_ms"], e["host_cpu"]))


def summary(path):
    """Per run and split: engines, median / min / max sweep (us), engines over twice the median."""
    runs, cur = [], None
    for line in open(path):
        d = json.loads(line)
        if "run" in d:
            cur = (d["run"], {})
            runs.append(cur)
        elif "engine" in d and d["sweeps"] > 0 and any(p[0].startswith("cpu") for p in d["parts"]) and cur:
            cur[1].setdefault((d["parts"][0][0], d["parts"][0][1]), []).append(sweep_us(d))
    for name, splits in runs:
        for (desc, rows), t in sorted(splits.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            med = statistics.median(t)
            print("  %-6s %-28s %5d rows: %2d engines, sweep median %7.0f us, min %7.0f, max %7.0f, slow %d" % (
                name, desc[:28], rows, len(t), med, min(t), max(t), sum(1 for x in t if x > 2 * med)))


def load(path):
    """Engines with a CPU part and at least one overlapped sweep, each with its crews and run."""
    cur, last, out = "?", None, []
    for line in open(path):
        d = json.loads(line)
        if "run" in d:
            cur = d["run"]
        elif "engine" in d:
            last = dict(d, crews=[], run=cur, s=sweep_us(d))
            if d["sweeps"] > 0 and d["parts"][0][0].startswith("cpu"):
                out.append(last)
        elif "crew" in d and last is not None:
            last["crews"].append(d)
    return out


def compare(pairs):
    """Several traces (LABEL=PATH) side by side: per run, schedule and CPU rows the median, min and
    max sweep; then every engine over twice the fastest of its split (and 100 us more), with its
    crews' per-worker run, CPU time, start latency and run delay."""
    data = [(lab, load(path)) for lab, path in (p.split("=", 1) for p in pairs)]
    keys = sorted({(e["run"], "nested" if "+" in e["parts"][0][0] else "naive", e["parts"][0][1])
                   for _, es in data for e in es})
    print("%-6s %-6s %5s  " % ("run", "sched", "rows") +
          "  ".join("%-30s" % ("%s: median min max (n)" % lab) for lab, _ in data))
    for k in keys:
        cells = []
        for _, es in data:
            t = [e["s"] for e in es if (e["run"], "nested" if "+" in e["parts"][0][0] else "naive",
                                        e["parts"][0][1]) == k]
            cells.append("%7.0f %7.0f %7.0f (%d)" % (statistics.median(t), min(t), max(t), len(t)) if t else "-")
        print("%-6s %-6s %5d  " % k + "  ".join("%-30s" % c for c in cells))
    for lab, es in data:
        fastest = {}
        for e in es:
            key = (e["run"], e["parts"][0][0], e["parts"][0][1])
            fastest[key] = min(fastest.get(key, e["s"]), e["s"])
        slow = [e for e in es if e["s"] > 2 * fastest[(e["run"], e["parts"][0][0], e["parts"][0][1])] and
                e["s"] - fastest[(e["run"], e["parts"][0][0], e["parts"][0][1])] > 100]
        print("\n%s: %d of %d engines over twice the fastest of their split" % (lab, len(slow), len(es)))
        for e in slow:
            print("  %s %s %d rows: %.0f us (fastest %.0f), host run delay %.1f ms, steal %s ms" % (
                e["run"], e["parts"][0][0], e["parts"][0][1], e["s"],
                fastest[(e["run"], e["parts"][0][0], e["parts"][0][1])], e["host_delay_ms"], e["steal_ms"]))
            for c in e["crews"]:
                if c["jobs"] == 0:
                    continue
                print("    crew of %d: job mean %.0f us; run %s; CPU %s; start latency %s; run delay ms %s" % (
                    c["n"], c["job_mean_us"], c["run_mean_us"], c.get("run_cpu_mean_us"), c["lat_mean_us"],
                    c["delay_ms"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--build", default="build")
    r.add_argument("--out", required=True)
    r.add_argument("--passes", type=int, default=6)
    r.add_argument("--fractions5d", default="0.01,0.02,0.035,0.05")
    r.add_argument("--fractions14", default="0.0005,0.005,0.02,0.04")
    r.add_argument("--only", default="", help="fig5d, fig14 or both (default)")
    p = sub.add_parser("report")
    p.add_argument("trace")
    p.add_argument("--summary", action="store_true", help="per split only")
    c = sub.add_parser("compare")
    c.add_argument("traces", nargs="+", help="LABEL=trace.jsonl")
    a = ap.parse_args()
    if a.cmd == "run":
        sys.exit(run(a))
    if a.cmd == "compare":
        compare(a.traces)
        return
    if a.summary:
        summary(a.trace)
    else:
        report(a.trace)


if __name__ == "__main__":
    main()
