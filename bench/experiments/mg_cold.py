#!/usr/bin/env python3
"""The converged solve as a user meets it: one cold command run per process, against the
library's first and repeated solves on one handle.

For each configuration (multigrid to relative residual 1e-8 on the GPU from a zero guess,
the random right-hand side of bench/experiments/rhs_gen.py written once as a file):

  command   `hetrelax poisson2d|poisson3d --method mg --backend gpu --rhs FILE --tol 1e-8
            --json`, REPEATS separate processes: time_s (the solve), time_setup_s and its parts
            (time_parts: context, allocation, host right-hand side, upload, graphs; the solve's
            starting residual and iterations; reading the file), and the wall time of the
            whole process measured here;
  library   bench/mg_driver (same generator, same system) with repeats=5 on one handle:
            first_s (the first solve after hr_mg_create) and the median of the next five.

Every run's answer is checked first (converged, relative residual below 1e-8).

  bench/experiments/mg_cold.py --hetrelax BUILD/hetrelax --driver BUILD/bench/mg_driver \
      --out OUT.json [--repeats 3] [--configs 2d-8191-mixed,...] [--tmp DIR]
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
sys.path.insert(0, HERE)
import rhs_gen  # noqa: E402

# label: (dim, n, extra command flags, mg_driver keys)
CONFIGS = {
    "2d-8191-mixed": (2, 8191, ["--precision", "mixed"], ["precision=mixed"]),
    "2d-8191-mixed-fmg": (2, 8191, ["--precision", "mixed", "--cycle", "fmg"], ["precision=mixed", "cycle=fmg"]),
    "2d-8191-double": (2, 8191, ["--precision", "double"], ["precision=double"]),
    "2d-4095-mixed": (2, 4095, ["--precision", "mixed"], ["precision=mixed"]),
    "3d-511-mixed": (3, 511, ["--precision", "mixed"], ["precision=mixed"]),
    "3d-511-double": (3, 511, ["--precision", "double"], ["precision=double"]),
}


def med(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return statistics.median(xs) if xs else None


def command_runs(hetrelax, dim, n, flags, rhs, repeats, tmp):
    runs = []
    js = os.path.join(tmp, "cold.json")
    for _ in range(repeats):
        if os.path.exists(js):
            os.unlink(js)
        cmd = [hetrelax, "poisson%dd" % dim, "--method", "mg", "--backend", "gpu", "--n", str(n), "--rhs", rhs,
               "--tol", "1e-8", "--quiet", "--json", js] + flags
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0 or not os.path.exists(js):
            raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-400:]))
        d = json.load(open(js))
        if d.get("reason") != "converged" or not d.get("relative_residual", 1.0) < 1e-8:
            raise RuntimeError("%s: not converged: %s %s" % (" ".join(cmd), d.get("reason"), d.get("relative_residual")))
        runs.append({"time_s": d["time_s"], "time_setup_s": d["time_setup_s"], "cycles": d.get("cycles"),
                     "time_parts": d.get("time_parts"), "wall_s": wall, "device": d.get("device")})
    return " ".join(cmd), runs


def driver_run(driver, dim, n, keys):
    cmd = [driver, "dim=%d" % dim, "n=%d" % n, "backend=gpu", "tol=1e-8", "repeats=5", "rhs=random"] + keys
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-400:]))
    d = json.loads(p.stdout.strip().splitlines()[-1])
    if d.get("reason") != "converged" or not d.get("relative_residual", 1.0) < 1e-8:
        raise RuntimeError("%s: not converged: %s" % (" ".join(cmd), d.get("reason")))
    return " ".join(cmd), {k: d.get(k) for k in ("first_s", "time_s", "time_min_s", "setup_s", "iterations", "gpu",
                                                 "device_copy_gbps")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hetrelax", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--tmp", default=None, help="folder for the right-hand side files (default: a temporary one)")
    a = ap.parse_args()
    tmp = a.tmp or tempfile.mkdtemp(prefix="mgcold-")
    out = {"what": "cold command runs against the library's first and repeated solves", "rows": []}
    for label in a.configs.split(","):
        dim, n, flags, keys = CONFIGS[label]
        rhs = os.path.join(tmp, "rhs-%dd-%d.raw" % (dim, n))
        if not os.path.exists(rhs):
            rhs_gen.write_raw(rhs, rhs_gen.random_grid(dim, n))
        cmd, runs = command_runs(a.hetrelax, dim, n, flags, rhs, a.repeats, tmp)
        dcmd, lib = driver_run(a.driver, dim, n, keys)
        parts = {}
        for k in (runs[0]["time_parts"] or {}):
            parts[k] = med([r["time_parts"][k] for r in runs])
        row = {"label": label, "command": cmd, "runs": runs, "time_s": med([r["time_s"] for r in runs]),
               "time_setup_s": med([r["time_setup_s"] for r in runs]), "wall_s": med([r["wall_s"] for r in runs]),
               "time_parts": parts, "driver": dcmd, "library": lib, "device": runs[0]["device"]}
        row["cold_over_repeated"] = row["time_s"] / lib["time_s"] if lib["time_s"] else None
        row["first_over_repeated"] = lib["first_s"] / lib["time_s"] if lib["time_s"] else None
        out["rows"].append(row)
        print("%-20s command %.2f ms (setup %.3f s, wall %.2f s) | library first %.2f ms, repeated %.2f ms | parts %s"
              % (label, 1e3 * row["time_s"], row["time_setup_s"], row["wall_s"], 1e3 * lib["first_s"],
                 1e3 * lib["time_s"], " ".join("%s=%.4f" % (k, v) for k, v in parts.items() if v is not None)),
              flush=True)
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
