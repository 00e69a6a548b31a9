#!/usr/bin/env python3
"""Multigrid on GPU ranks (one GPU per rank), weak and strong scaling, through the command.

Each configuration runs, as a user does and cold,

  mpiexec -n P hetrelax poisson2d|poisson3d --nx .. --ny .. [--nz ..] --method mg
          --backend gpu --precision double --tol TOL --rhs FILE [--transport T]

with a random right-hand side (bench/experiments/rhs_gen.py's sequence, made on the GPU with
CuPy when it is there) and reads its --json: time to tolerance (`time_s`), set-up
(`time_setup_s`), cycles, the final relative residual and the halo transport. A run counts
only when it converged (status 0, residual below TOL); the cycles of every rank count of one
grid must agree (the ranks compute the one-process run's values). Medians of --repeats runs.

  weak    --weak 3:511,2:8191   per GPU: n^dim on one GPU, and on P GPUs the grid whose last
                                axis has P (n + 1) - 1 points (2^k - 1 stays 2^k - 1: the same
                                coarsening on every P), so each GPU holds about n^dim; the
                                command's default lengths keep h = 1 / (max n + 1) on every
                                axis (the domain grows with the grid: the same isotropic problem)
  strong  --strong 3:1023,2:16383   the same n^dim grid on every P

--placement gpus runs the same grids in one process, `hetrelax ... --gpus P` (a thread per GPU,
halos device to device by NCCL where the build has it, else staged through pinned host rows),
instead of P ranks.

  bench/experiments/gpu_mg_scaling.py --hetrelax build-gpu/hetrelax --gpus 1,2,4 \\
      --weak 3:511,2:8191 --strong 3:1023,2:16383 --out gpu-mg-scaling.json

On one GPU each grid runs twice: with --kernel general (the engine the ranks run: the scaling
of that engine) and as a user gets it by default (at 2^k - 1 the model-problem engine, faster
per unknown). Efficiency: weak, t(1) / t(P); strong, t(1) / (P t(P)) (the speed-up over P);
each against both one-GPU times.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rhs_gen  # noqa: E402
from mpi_mg import command, run  # noqa: E402


def write_random(path, count):
    """The sequence's first `count` values as raw float64 (x fastest), through a temporary file."""
    try:
        import cupy as xp
    except ImportError:
        import numpy as xp
    chunk = 1 << 26
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        for s in range(0, count, chunk):
            c = min(chunk, count - s)
            v = rhs_gen.random_f(s, c, rhs_gen.SEED, xp)
            v = v.get() if hasattr(v, "get") else v
            v.astype("<f8").tofile(fh)
    os.replace(tmp, path)


def shape_of(dim, n, last):
    return [n] * (dim - 1) + [last]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hetrelax", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--gpus", default="1,2,4")
    ap.add_argument("--weak", default="", help="DIM:N,... per GPU")
    ap.add_argument("--strong", default="", help="DIM:N,... in all")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--transport", default="auto")
    ap.add_argument("--placement", choices=("ranks", "gpus"), default="ranks",
                    help="ranks: mpiexec -n P, one GPU per rank; gpus: one process with --gpus P")
    ap.add_argument("--threads", type=int, default=0, help="host threads per rank for the set-up (0: cores / P)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out")
    a = ap.parse_args()
    gpus = [int(v) for v in a.gpus.split(",")]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rows, failed = [], 0
    plan = []
    for kind, spec in (("weak", a.weak), ("strong", a.strong)):
        for item in filter(None, spec.split(",")):
            dim, n = (int(v) for v in item.split(":"))
            plan.append((kind, dim, n))
    tmpdir = tempfile.mkdtemp(prefix="hr-mgscale-")

    def record():
        """The rows so far (rewritten after each grid: a run cut short keeps what it measured)."""
        if not a.out:
            return
        try:
            gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                 text=True).stdout.split("\n")[0].strip()
        except OSError:
            gpu = "none"
        with open(a.out + ".tmp", "w") as f:
            json.dump({"command": command(), "gpu": gpu, "cpus": os.cpu_count(), "rows": rows}, f, indent=1)
        os.replace(a.out + ".tmp", a.out)

    for kind, dim, n in plan:
        base_rows = []
        for P in gpus:
            last = P * (n + 1) - 1 if kind == "weak" else n
            shape = shape_of(dim, n, last)
            count = 1
            for v in shape:
                count *= v
            rhs = os.path.join(tmpdir, "f-%s.raw" % "x".join(map(str, shape)))
            t0 = time.time()
            if not os.path.exists(rhs):
                for old in os.listdir(tmpdir):  # one file at a time: they are large
                    os.unlink(os.path.join(tmpdir, old))
                write_random(rhs, count)
            gen_s = time.time() - t0
            threads = a.threads or max(1, (os.cpu_count() or 1) // P)
            cmd = [a.hetrelax, "poisson3d" if dim == 3 else "poisson2d"]
            if a.placement == "ranks":
                cmd = [a.mpiexec, "--oversubscribe", "--bind-to", "none", "-n", str(P)] + cmd
            elif P > 1:
                cmd += ["--gpus", str(P)]
            for ax, v in zip("xyz", shape):
                cmd += ["--n" + ax, str(v)]
            cmd += ["--method", "mg", "--backend", "gpu", "--precision", "double", "--tol", str(a.tol),
                    "--iters", "100", "--rhs", rhs, "--threads", str(threads)]
            if P > 1 and a.placement == "ranks":
                cmd += ["--transport", a.transport]
            if P == 1:  # one GPU, what a user gets (the model engine at 2^k - 1), for the ratio
                best = [run(cmd, env, a.timeout) for _ in range(a.repeats)]
                best = [g for g in best if "error" not in g and g.get("relative_residual", 1) < a.tol]
                if best:
                    one_best = {"time_s": statistics.median(g["time_s"] for g in best),
                                "time_setup_s": statistics.median(g.get("time_setup_s", float("nan")) for g in best),
                                "cycles": best[0].get("cycles", best[0].get("iterations")),
                                "engine": best[0].get("engine") or ("general" if best[0].get("general")
                                                                    else "model")}
                    print("%-40s cycles %2d  solve %8.4f s  setup %7.2f s  (%s engine, the one-GPU default)" %
                          ("%s %d-D %s on 1 GPU" % (kind, dim, "x".join(map(str, shape))), one_best["cycles"],
                           one_best["time_s"], one_best["time_setup_s"], one_best["engine"]), flush=True)
                cmd += ["--kernel", "general"]  # the engine the ranks run, for the scaling
            got = [run(cmd, env, a.timeout) for _ in range(a.repeats)]
            ok = [g for g in got if "error" not in g and g.get("relative_residual", 1) < a.tol]
            row = {"kind": kind, "dim": dim, "n": n, "shape": shape, "gpus": P, "runs": len(got),
                   "converged": len(ok), "rhs_gen_s": round(gen_s, 2)}
            if ok:
                row.update({
                    "time_s": statistics.median(g["time_s"] for g in ok),
                    "time_setup_s": statistics.median(g.get("time_setup_s", float("nan")) for g in ok),
                    "times_s": [g["time_s"] for g in ok],
                    "cycles": ok[0].get("cycles", ok[0].get("iterations")),
                    "residual": ok[0]["relative_residual"],
                    "engine": ok[0].get("engine"),
                    "transport": (ok[0].get("mpi") or {}).get("transport", ok[0].get("gpus_halo", "none")),
                    "ns_per_unknown_gpu": 1e9 * statistics.median(g["time_s"] for g in ok) * P / count,
                })
                base_rows.append(row)
            else:
                failed += 1
                row["error"] = [g.get("error", "residual %g" % g.get("relative_residual", float("nan")))
                                for g in got][:1]
            if P == 1 and best:
                row["one_gpu_default"] = one_best
            rows.append(row)
            label = "%s %d-D %s on %d GPU(s)" % (kind, dim, "x".join(map(str, shape)), P)
            if ok:
                print("%-40s cycles %2d  solve %8.4f s  setup %7.2f s  residual %.2e  halo %s" %
                      (label, row["cycles"], row["time_s"], row["time_setup_s"], row["residual"],
                       row["transport"]), flush=True)
            else:
                print("%-40s FAILED %s" % (label, row["error"]), flush=True)
            record()
        if len({r["cycles"] for r in base_rows}) > 1 and kind == "strong":
            print("cycles differ between GPU counts: %s" % [(r["gpus"], r["cycles"]) for r in base_rows])
            failed += 1
        one = [r for r in base_rows if r["gpus"] == 1]
        for r in base_rows:
            if one and r["gpus"] > 1:
                t1 = one[0]["time_s"]
                r["efficiency"] = t1 / r["time_s"] if kind == "weak" else t1 / (r["gpus"] * r["time_s"])
                r["speedup"] = t1 / r["time_s"]
                d = one[0].get("one_gpu_default")
                if d:  # against what one GPU gives a user by default
                    r["efficiency_vs_default"] = (d["time_s"] / r["time_s"] if kind == "weak"
                                                  else d["time_s"] / (r["gpus"] * r["time_s"]))
                print("  %s %d GPUs: efficiency %.1f%% (speed-up %.2fx) against the general engine on one GPU%s" %
                      (kind, r["gpus"], 100 * r["efficiency"], r["speedup"],
                       ", %.1f%% against the one-GPU default (%s)" % (100 * r["efficiency_vs_default"], d["engine"])
                       if d else ""), flush=True)
    for old in os.listdir(tmpdir):
        os.unlink(os.path.join(tmpdir, old))
    os.rmdir(tmpdir)
    record()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
