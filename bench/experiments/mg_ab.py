#!/usr/bin/env python3
"""Multigrid through the command with and without tuning knobs, runs interleaved (A B A B ...)
so that the machine's drift falls on every variant alike.

For each configuration (the random right-hand side of bench/experiments/rhs_gen.py written once
as a file, to relative residual 1e-8 from a zero guess) and each variant (variants separated by
";", each a comma-separated list of --tuning NAME=VALUE and bin=PATH, another build's command,
or "default"), REPEATS cold processes each: time_s (the solve),
time_setup_s and the cycles. Every run's answer is checked first (converged, relative residual
below the tolerance). Prints per variant the median time and its ratio to the first variant.

  bench/experiments/mg_ab.py --hetrelax BUILD/hetrelax --out OUT.json \
      --variants "default;mg_gpu_fuse=0" [--configs 2d-8191-mixed,2d-4095-mixed] [--repeats 3]
      [--args "--backend gpu"]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rhs_gen  # noqa: E402


def parse_config(label):
    """2d-8191-mixed -> (2, 8191, 'mixed')"""
    d, n, prec = label.split("-", 2)
    return int(d[0]), int(n), prec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hetrelax", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", default="default")
    ap.add_argument("--configs", default="2d-8191-mixed,2d-4095-mixed,2d-8191-double,3d-511-mixed")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--args", default="--backend gpu", help="more command flags for every run")
    a = ap.parse_args()
    variants = [v.strip() for v in a.variants.split(";") if v.strip()]
    tmp = tempfile.mkdtemp(prefix="mgab-")
    rows = []
    for label in a.configs.split(","):
        dim, n, prec = parse_config(label)
        rhs = rhs_gen.cached(tmp, dim, n, "raw")
        js = os.path.join(tmp, "r.json")
        runs = {v: [] for v in variants}
        for _ in range(a.repeats):
            for v in variants:
                kvs = [] if v == "default" else v.split(",")
                exe = next((kv[4:] for kv in kvs if kv.startswith("bin=")), a.hetrelax)
                cmd = [exe, "poisson%dd" % dim, "--method", "mg", "--n", str(n), "--precision", prec,
                       "--rhs", rhs, "--tol", repr(a.tol), "--quiet", "--json", js] + a.args.split()
                for kv in kvs:
                    if not kv.startswith("bin="):
                        cmd += ["--tuning", kv]
                if os.path.exists(js):
                    os.unlink(js)
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0 or not os.path.exists(js):
                    sys.exit("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-400:]))
                d = json.load(open(js))
                rel = d.get("relative_residual")
                if not (isinstance(rel, (int, float)) and rel < a.tol):
                    sys.exit("%s %s: relative residual %r" % (label, v, rel))
                runs[v].append({"time_s": d["time_s"], "time_setup_s": d.get("time_setup_s"),
                                "cycles": d.get("cycles", d.get("iterations")), "relative_residual": rel,
                                "device": d.get("device")})
        base = None
        for v in variants:
            t = statistics.median(r["time_s"] for r in runs[v])
            base = base or t
            row = {"config": label, "variant": v, "time_s": t,
                   "time_spread": [min(r["time_s"] for r in runs[v]), max(r["time_s"] for r in runs[v])],
                   "cycles": runs[v][0]["cycles"], "ratio_to_first": t / base, "runs": runs[v]}
            rows.append(row)
            print("%-16s %-40s %8.3f ms  (%.3f-%.3f)  cycles %s  x%.3f" %
                  (label, v, 1e3 * t, 1e3 * row["time_spread"][0], 1e3 * row["time_spread"][1], row["cycles"],
                   row["ratio_to_first"]), flush=True)
    json.dump({"what": "multigrid through the command, variants interleaved", "args": a.args, "rows": rows},
              open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
