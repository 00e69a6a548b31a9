#!/usr/bin/env python3
"""Multigrid benchmark, CPU: time to relative residual TOL from a zero guess.

Solvers: hetrelax MG (V, F, FMG cycles; red-black V(2,2); fp64 and mixed precision),
CG preconditioned by one symmetric MG V-cycle, plain matrix-free CG (small sizes only: it
needs O(n) iterations), and the hypre baseline (bench/hypre_driver: PFMG-CG and
BoomerAMG-CG, with 1 MPI rank and with as many ranks as threads; the faster one counts) on the same 5-point / 7-point system.

Right-hand sides: `random` (uniform in [-1, 1), splitmix64 with seed 2026, x fastest: the
same values in both drivers) and `spike`; never `manufactured` for timing (it is an
eigenvector of the discrete Laplacian). FMG on `manufactured` gives the max error against
the exact solution next to the discretisation error (the discrete solution: 15 V-cycles,
factor 0.04^15, at the rounding floor; a residual tolerance of 1e-11 is below that floor at
n = 2047).

Answer first: a run counts only when its reported true relative residual (recomputed in
fp64 at the end) is below TOL; others are recorded as failed. Each configuration runs one
warm-up solve and REPEATS timed solves (median reported) on one handle / one hypre setup.
Byte model (fp64, per cycle, fine level only): a red-black sweep reads u and f and writes u
(24 B/point), the residual 24, restriction 8, prolongation 16, the driver's residual
check 16: (pre + post) * 24 + 64 B/point; coarse levels add 1/3 (2-D) or 1/7 (3-D), not
counted. GB/s = model bytes x points x cycles / time, against the STREAM copy bandwidth of
`hetrelax info` measured in the same run (same thread count).

usage: bench/experiments/mg_bench.py [--build build] [--out docs/results] [--threads 2] [--repeats 3]
                         [--sizes2d 1023,2047,4095] [--sizes3d 63,127,255] [--tol 1e-8]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return p.stdout, None


def json_tail(text):
    return json.loads(text[text.index("{"):])


def loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def mg_configs(dim, n, rhs):
    """(label, driver arguments) for one size and right-hand side."""
    c = [("mg-v", ["method=mg", "cycle=v"]),
         ("mg-f", ["method=mg", "cycle=f"]),
         ("mg-fmg", ["method=mg", "cycle=fmg"]),
         ("mg-v-mixed", ["method=mg", "cycle=v", "precision=mixed"]),
         ("pcg-mg", ["method=cg", "pc=mg"]),
         ("pcg-mg-mixed", ["method=cg", "pc=mg", "precision=mixed"])]
    if (dim == 2 and n <= 1023) or (dim == 3 and n <= 127):
        c.append(("cg", ["method=cg", "max=100000"]))
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes2d", default="1023,2047,4095")
    ap.add_argument("--sizes3d", default="63,127,255")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--amg-max2d", type=int, default=2047, help="largest 2-D n for BoomerAMG")
    ap.add_argument("--amg-max3d", type=int, default=127, help="largest 3-D n for BoomerAMG")
    ap.add_argument("--no-hypre", action="store_true")
    ap.add_argument("--hypre-ranks", default=None, help="MPI rank counts to try (default: 1 and --threads)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mg = os.path.join(a.build, "bench", "mg_driver")
    hy = os.path.join(a.build, "bench", "hypre_driver")
    cli = os.path.join(a.build, "hetrelax")
    have_hypre = os.path.exists(hy) and not a.no_hypre

    out, err = run([cli, "info", "--threads", str(a.threads), "--repeats", "10", "--json", "-"])
    info = json_tail(out) if out else {}
    bw = info.get("host_bandwidth", {}).get("copy_gbps", float("nan"))
    print(f"STREAM copy {bw:.2f} GB/s ({a.threads} threads); load average {loadavg()}")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ranks = sorted({int(x) for x in (a.hypre_ranks or f"1,{a.threads}").split(",")})
    records = []

    def record(rec):
        ok = rec.get("relative_residual", 1.0) < a.tol * 1.0000001
        rec["answer_ok"] = bool(ok)
        rec["load_average"] = loadavg()[0]
        records.append(rec)
        it = rec.get("iterations")
        rec.setdefault("time_s", float("nan"))
        print(f"{rec['label']:14s} {rec['dim']}-D n={rec['n']:5d} {rec['rhs']:12s} it={it!s:>5s} "
              f"t={rec.get('time_s', float('nan')):9.4f} s  {rec.get('ns_per_unknown', float('nan')):9.2f} ns/u  "
              f"res={rec.get('relative_residual', float('nan')):.2e}  cf={rec.get('convergence_factor', 0) or 0:.3f}"
              f"{'' if ok else '  FAILED'}", flush=True)

    for dim, sizes in ((2, a.sizes2d), (3, a.sizes3d)):
        for n in (int(s) for s in sizes.split(",") if s):
            for rhs in ("random", "spike"):
                for label, args in mg_configs(dim, n, rhs):
                    reps = 1 if label == "cg" else a.repeats  # plain CG: O(n) iterations, one timed solve
                    cmd = [mg, f"dim={dim}", f"n={n}", f"rhs={rhs}", f"tol={a.tol}", f"threads={a.threads}",
                           f"repeats={reps}"] + args
                    o, e = run(cmd)
                    if o is None:
                        print(f"{label} {dim}-D n={n} {rhs}: {e}", file=sys.stderr)
                        continue
                    rec = json.loads(o)
                    rec["label"] = label
                    cyc = rec["iterations"]
                    bytes_pt = (rec["pre"] + rec["post"]) * 24 + 64
                    if rec["method"] == "mg" and rec["time_s"] > 0:
                        rec["model_gbps"] = bytes_pt * (n ** dim) * cyc / rec["time_s"] / 1e9
                        rec["bandwidth_fraction"] = rec["model_gbps"] / bw if bw == bw else None
                    rec.pop("history", None) if len(rec.get("history", [])) > 64 else None
                    record(rec)
                if have_hypre:
                    for solver, nr in ((s, r) for s in ("pfmg", "amg") for r in ranks):
                        if solver == "amg" and n > (a.amg_max2d if dim == 2 else a.amg_max3d):
                            continue
                        cmd = ["mpiexec", "-n", str(nr), hy, f"dim={dim}", f"n={n}", f"rhs={rhs}",
                               f"solver={solver}", f"tol={a.tol}", f"repeats={a.repeats}"]
                        o, e = run(cmd, env)
                        if o is None:
                            print(f"hypre {solver} {dim}-D n={n}: {e}", file=sys.stderr)
                            continue
                        rec = json_tail(o)
                        rec["label"] = f"hypre-{solver}-cg-{nr}r"
                        record(rec)
            # the discretisation error: FMG once vs MG converged, manufactured
            for label, args in (("fmg-1-pass", ["cycle=fmg", "max=1", "tol=0"]),
                                ("mg-converged", ["cycle=v", "tol=0", "max=15"])):
                o, e = run([mg, f"dim={dim}", f"n={n}", "rhs=manufactured", f"threads={a.threads}",
                            f"repeats={a.repeats}"] + args)
                if o is None:
                    print(f"{label}: {e}", file=sys.stderr)
                    continue
                rec = json.loads(o)
                rec["label"] = label
                rec["answer_ok"] = True
                rec["load_average"] = loadavg()[0]
                records.append(rec)
                print(f"{label:14s} {dim}-D n={n:5d} manufactured max error {rec['max_error']:.3e} "
                      f"t={rec['time_s']:.4f} s", flush=True)

    meta = {
        "benchmark": "bench/experiments/mg_bench.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "commit": commit, "machine": platform.node(), "cpu": info.get("cpu_model"), "cores": info.get("cores"),
        "threads": a.threads, "stream_copy_gbps": bw, "tol": a.tol, "repeats": a.repeats,
        "load_average_start": loadavg()[0],
        "note": "shared machine: other builds ran at the same time; load average recorded per run",
    }
    with open(os.path.join(a.out, "mg-cpu.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
    write_markdown(a, meta, records)


def write_markdown(a, meta, records):
    lines = [f"# Multigrid on the CPU: time to relative residual {a.tol:g}", "",
             f"Generated by `bench/experiments/mg_bench.py` on {meta['date'][:19]} UTC, commit `{meta['commit']}`, "
             f"{meta['cpu']} ({meta['cores']} cores), {a.threads} threads / MPI ranks, "
             f"STREAM copy {meta['stream_copy_gbps']:.2f} GB/s in the same run. Median of {a.repeats} solves "
             "after a warm-up; setup (hierarchy, hypre's operators) not in the time. "
             "The machine was shared with other builds: see the load average column.", "",
             "| dim | n | rhs | solver | iterations | time (s) | ns/unknown | conv. factor | final rel. res. "
             "| setup (s) | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if r["label"] in ("fmg-1-pass", "mg-converged"):
            continue
        cf = r.get("convergence_factor")
        lines.append(f"| {r['dim']} | {r['n']} | {r['rhs']} | {r['label']} | {r.get('iterations')} | "
                     f"{r.get('time_s', 0):.4f} | {r.get('ns_per_unknown', 0):.1f} | "
                     f"{'' if cf is None else f'{cf:.3f}'} | {r.get('relative_residual', 0):.2e}"
                     f"{'' if r['answer_ok'] else ' FAILED'} | {r.get('setup_s', 0):.3f} | "
                     f"{r.get('load_average', 0):.1f} |")
    lines += ["", "## FMG against the discretisation error (manufactured solution)", "",
              "| dim | n | FMG (1 pass) max error | discrete solution's max error | ratio | FMG time (s) |",
              "|---|---|---|---|---|---|"]
    fm = {(r["dim"], r["n"]): r for r in records if r["label"] == "fmg-1-pass"}
    cv = {(r["dim"], r["n"]): r for r in records if r["label"] == "mg-converged"}
    for k in sorted(fm):
        if k in cv:
            lines.append(f"| {k[0]} | {k[1]} | {fm[k]['max_error']:.3e} | {cv[k]['max_error']:.3e} | "
                         f"{fm[k]['max_error'] / cv[k]['max_error']:.2f} | {fm[k]['time_s']:.4f} |")
    lines += ["", "## Against hypre PFMG-CG (same system, rhs, tolerance, cores)", "",
              "| dim | n | rhs | best hetrelax | time (s) | best hypre PFMG-CG (s) | speed-up |", "|---|---|---|---|---|---|---|"]
    keys = sorted({(r["dim"], r["n"], r["rhs"]) for r in records if r["label"].startswith("hypre-pfmg")})
    for k in keys:
        ours = [r for r in records if (r["dim"], r["n"], r["rhs"]) == k and r["answer_ok"]
                and not r["label"].startswith("hypre") and r["label"] != "cg"]
        hyp = sorted((r for r in records if (r["dim"], r["n"], r["rhs"]) == k
                      and r["label"].startswith("hypre-pfmg") and r["answer_ok"]), key=lambda r: r["time_s"])
        if ours and hyp:
            best = min(ours, key=lambda r: r["time_s"])
            lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {best['label']} | {best['time_s']:.4f} | "
                         f"{hyp[0]['time_s']:.4f} ({hyp[0]['ranks']} ranks) | {hyp[0]['time_s'] / best['time_s']:.1f}x |")
    with open(os.path.join(a.out, "mg-cpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
