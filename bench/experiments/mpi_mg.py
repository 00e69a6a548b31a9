#!/usr/bin/env python3
"""Multigrid on CPU ranks against threads in one process, through the command.

Each configuration runs `hetrelax poisson2d|poisson3d --method mg --tol TOL --rhs FILE`
(a random right-hand side, bench/experiments/rhs_gen.py) as a user does, cold, and reads
its --json: time to tolerance (`time_s`), set-up (`time_setup_s`), cycles and the final
relative residual. Configurations:

  threads     one process, --backend cpu-threads --threads T (at 2^k - 1 sizes the model
              engine: rediscretised coarse levels; elsewhere the general engine)
  ranks P     mpiexec -n P, cpu-seq per rank: the general engine on a slab of the last axis
              per rank (Galerkin coarse levels, cut across the ranks while they are large)

A run is kept only when it converged (status 0, residual below TOL); the cycles of every
rank count must agree (the ranks compute the one-process run's values). Medians of
--repeats runs.

  bench/experiments/mpi_mg.py --hetrelax build/hetrelax --dim 3 --n 511,510 --ranks 1,4,16 \\
      --threads 16 --out mpi-mg.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rhs_gen  # noqa: E402


def run(cmd, env, timeout):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as t:
        path = t.name
    try:
        p = subprocess.run(cmd + ["--json", path, "--quiet"], env=env, capture_output=True, text=True,
                           timeout=timeout)
        if p.returncode != 0:
            text = (p.stderr or p.stdout).strip()
            # the command's own line, not mpiexec's notice after it
            own = [ln for ln in text.splitlines() if ln.startswith("hetrelax")]
            return {"error": own[0] if own else text[-300:], "status": p.returncode}
        with open(path) as f:
            return json.load(f)
    except subprocess.TimeoutExpired:
        return {"error": "timed out", "status": 124}
    finally:
        os.unlink(path)


def command():
    """This run's command line as a record keeps it: paths relative to the working directory
    (the record names no folder of the machine it ran on), the output by its name."""
    args = []
    for i, v in enumerate(sys.argv):
        prev = sys.argv[i - 1] if i else ""
        if prev == "--out":
            v = os.path.basename(v)
        elif prev == "--hetrelax" or i == 0:
            v = os.path.relpath(v)
        args.append(v)
    return " ".join(args)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hetrelax", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--dim", type=int, default=3)
    ap.add_argument("--n", default="255")
    ap.add_argument("--ranks", default="1,4,16")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out")
    a = ap.parse_args()
    cmd = "poisson3d" if a.dim == 3 else "poisson2d"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rows, failed = [], 0
    for n in [int(v) for v in a.n.split(",")]:
        fd, rhs = tempfile.mkstemp(suffix=".raw")
        os.close(fd)
        rhs_gen.write_raw(rhs, rhs_gen.random_grid(a.dim, n))
        base = [a.hetrelax, cmd, "--n", str(n), "--method", "mg", "--tol", str(a.tol), "--precision", "double",
                "--rhs", rhs, "--iters", "100"]
        confs = [("threads", 1, base + ["--backend", "cpu-threads", "--threads", str(a.threads)])]
        for p in [int(v) for v in a.ranks.split(",")]:
            confs.append(("ranks", p, [a.mpiexec, "--oversubscribe", "--bind-to", "core" if p > 1 else "none",
                                       "-n", str(p)] + base + ["--backend", "cpu-seq"]))
        for kind, p, c in confs:
            got = [run(c, env, a.timeout) for _ in range(a.repeats)]
            ok = [g for g in got if "error" not in g and g.get("relative_residual", 1) < a.tol]
            row = {"n": n, "dim": a.dim, "kind": kind, "ranks" if kind == "ranks" else "threads":
                   p if kind == "ranks" else a.threads, "runs": len(got), "converged": len(ok)}
            if ok:
                row.update({
                    "time_s": statistics.median(g["time_s"] for g in ok),
                    "time_setup_s": statistics.median(g.get("time_setup_s", float("nan")) for g in ok),
                    "cycles": ok[0].get("cycles", ok[0].get("iterations")), "residual": ok[0]["relative_residual"],
                    "engine": ok[0].get("engine") or ("general" if ok[0].get("general") else "model"),
                    "levels": ok[0].get("levels"),
                    "times_s": [g["time_s"] for g in ok],
                })
            else:
                failed += 1
                row["error"] = [g.get("error", "residual %g" % g.get("relative_residual", float("nan")))
                                for g in got][:1]
            rows.append(row)
            what = "%d threads" % a.threads if kind == "threads" else "%d ranks" % p
            if ok:
                print("%s n=%d %-10s %-12s cycles %2d  solve %8.3f s  setup %7.3f s  residual %.2e" %
                      (cmd, n, what, row["engine"], row["cycles"], row["time_s"], row["time_setup_s"],
                       row["residual"]), flush=True)
            else:
                print("%s n=%d %-10s FAILED %s" % (cmd, n, what, row["error"]), flush=True)
        os.unlink(rhs)
        ranks = [r for r in rows if r["n"] == n and r["kind"] == "ranks" and r.get("engine") == "mpi-general"]
        if len({r["cycles"] for r in ranks}) > 1:
            print("cycles differ between rank counts at n=%d: %s" % (n, [(r["ranks"], r["cycles"]) for r in ranks]))
            failed += 1
        thr = [r for r in rows if r["n"] == n and r["kind"] == "threads" and "time_s" in r]
        for r in ranks:
            if thr:
                r["time_vs_threads"] = r["time_s"] / thr[0]["time_s"]
                print("  %d ranks / %d threads: %.2fx (solve), setup %.2fx" %
                      (r["ranks"], a.threads, r["time_vs_threads"], r["time_setup_s"] / thr[0]["time_setup_s"]))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"command": command(), "cpus": os.cpu_count(), "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
