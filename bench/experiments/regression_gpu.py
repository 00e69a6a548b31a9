#!/usr/bin/env python3
"""The one-GPU figures that a change of the code's layout must not move (each through the
command, median of --repeats cold runs, each run's answer checked first):

  tuned2d    poisson2d --backend gpu --kernel tuned, 4096^2 and 8192^2 fp32: % of the device
             copy measured by the same run (JSON bandwidth_fraction)
  tuned3d    poisson3d --backend gpu --kernel tuned, 512^3 fp32 and fp64: % of copy
  mg         poisson2d --method mg --n 8191 --precision mixed and poisson3d --method mg --n 511
             --precision mixed, random right-hand side (bench/experiments/rhs_gen.py), to 1e-8: time_s
             (the solve) and time_setup_s
  redblack   poisson2d --method redblack --backend gpu --n 8192, 500 iterations fp32: ms per
             iteration and % of copy
  mpi1       (not by default) poisson3d 512^3 on one GPU rank under mpiexec against --backend gpu

  bench/experiments/regression_gpu.py --hetrelax BUILD/hetrelax --out OUT.json [--repeats 3] [--sections ...]
  bench/experiments/regression_gpu.py --compare BEFORE.json AFTER.json     (ratios; flags changes over 2 %)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(cmd, js):
    if os.path.exists(js):
        os.unlink(js)
    p = subprocess.run(cmd + ["--quiet", "--json", js], capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(js):
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-400:]))
    return json.load(open(js))


def measure(label, cmd, keys, repeats, tmp, check):
    js = os.path.join(tmp, "r.json")
    runs = []
    for _ in range(repeats):
        d = run_json(cmd, js)
        why = check(d)
        if why:
            raise RuntimeError("%s: wrong answer: %s" % (label, why))
        runs.append({k: d.get(k) for k in keys})
    rec = {"label": label, "cmd": " ".join(cmd), "runs": runs, "device": d.get("device")}
    for k in keys:
        vals = [r[k] for r in runs if isinstance(r[k], (int, float))]
        rec[k] = statistics.median(vals) if vals else None
    print("%-34s %s" % (label, "  ".join("%s %.6g" % (k, rec[k]) for k in keys if rec[k] is not None)), flush=True)
    return rec


def finite_residual(d):
    r = d.get("relative_residual")
    return None if isinstance(r, (int, float)) and r == r and r < 10 else "relative residual %r" % r


def converged(d):
    r = d.get("relative_residual")
    return None if d.get("reason") == "converged" and r is not None and r < 1e-8 else \
        "reason %s, residual %r" % (d.get("reason"), r)


def compare(a, b):
    A = {r["label"]: r for r in json.load(open(a))["records"]}
    B = {r["label"]: r for r in json.load(open(b))["records"]}
    worst = 0
    for label in A:
        if label not in B:
            continue
        for k in ("bandwidth_fraction", "time_s", "time_per_sweep_s", "time_setup_s"):
            x, y = A[label].get(k), B[label].get(k)
            if not x or not y:
                continue
            better = y / x if k == "bandwidth_fraction" else x / y  # > 1: the second is better
            flag = "  <-- more than 2 % worse" if better < 0.98 and k != "time_setup_s" else ""
            worst += bool(flag)
            print("%-34s %-20s %10.5g %10.5g  %.3fx%s" % (label, k, x, y, better, flag))
    return 1 if worst else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hetrelax")
    ap.add_argument("--out")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sections", default="tuned2d,tuned3d,mg,redblack")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    a = ap.parse_args()
    if a.compare:
        return compare(*a.compare)
    if not a.hetrelax or not a.out:
        ap.error("--hetrelax and --out are needed")
    H = a.hetrelax
    tmp = tempfile.mkdtemp(prefix="hr-regress-")
    secs = a.sections.split(",")
    recs = []
    R = a.repeats
    if "tuned2d" in secs:
        for n, it in ((4096, 4000), (8192, 1000)):
            recs.append(measure("tuned 2-D %d fp32" % n, [H, "poisson2d", "--backend", "gpu", "--kernel", "tuned",
                                                           "--n", str(n), "--iters", str(it)],
                                ["time_per_sweep_s", "bandwidth_fraction"], R, tmp, finite_residual))
    if "tuned3d" in secs:
        for prec in ("single", "double"):
            recs.append(measure("tuned 3-D 512 %s" % prec, [H, "poisson3d", "--backend", "gpu", "--kernel", "tuned",
                                                            "--n", "512", "--iters", "200", "--precision", prec],
                                ["time_per_sweep_s", "bandwidth_fraction"], R, tmp, finite_residual))
    if "mg" in secs:
        for dim, n in ((2, 8191), (3, 511)):
            f = os.path.join(tmp, "rhs%d.raw" % dim)
            subprocess.run([sys.executable, os.path.join(HERE, "rhs_gen.py"), "--dim", str(dim), "--n", str(n),
                            "--raw", f], check=True, capture_output=True)
            cmd = [H, "poisson%dd" % dim, "--method", "mg", "--backend", "gpu", "--n", str(n), "--precision",
                   "mixed", "--tol", "1e-8", "--rhs", f]
            recs.append(measure("mg %d-D %d mixed to 1e-8" % (dim, n), cmd, ["time_s", "time_setup_s", "cycles"],
                                R, tmp, converged))
            os.unlink(f)
    if "redblack" in secs:
        recs.append(measure("red-black 2-D 8192 fp32", [H, "poisson2d", "--method", "redblack", "--backend", "gpu",
                                                        "--n", "8192", "--iters", "500"],
                            ["time_per_sweep_s", "bandwidth_fraction"], R, tmp, finite_residual))
    if "mpi1" in secs:  # one GPU rank against the gpu backend: the decomposed sweep's kernel shape
        for prec in ("single", "double"):
            p = ["poisson3d", "--n", "512", "--iters", "200", "--precision", prec]
            recs.append(measure("3-D 512 %s --backend gpu" % prec, [H] + p + ["--backend", "gpu"],
                                ["time_per_sweep_s", "bandwidth_fraction"], R, tmp, finite_residual))
            recs.append(measure("3-D 512 %s mpiexec -n 1" % prec,
                                [a.mpiexec, "-n", "1", H] + p + ["--backend", "gpu", "--transport", "auto"],
                                ["time_per_sweep_s", "bandwidth_fraction"], R, tmp, finite_residual))
    json.dump({"records": recs, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
               "gpu": subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip()},
              open(a.out, "w"), indent=1)
    print("wrote", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
