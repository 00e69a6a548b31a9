#!/usr/bin/env python3
"""hetrelax's CPU multigrid against PETSc's on the same cores and the same system.

Both solve A u = h^2 f (5-point / 7-point stencil, zero Dirichlet boundary, f uniform in
[-1, 1) from splitmix64 seed 2026, x fastest) from zero to relative residual 1e-8:

  PETSc     bench/petsc_driver under `mpiexec -n P` (P ranks, one per core): CG on the
            unpreconditioned residual with PCMG on the DMDA's hierarchy (Galerkin coarse
            operators) smoothed by PETSc's default Chebyshev/Jacobi or by two SOR sweeps,
            and with PCGAMG;
  hetrelax  bench/mg_driver with P threads: V(2,2) in fp64 and mixed precision, FMG, and
            CG preconditioned by a V-cycle.

Each row is one process: set-up once, then REPEATS solves, the median reported (its first
solve beside it); every answer's true relative residual is checked (below 1e-8, or 2e-8 for
PETSc's unpreconditioned norm, which stops on its own recurrence). The ratio is PETSc's
fastest configuration over hetrelax's fastest, per problem.

  bench/experiments/mg_petsc.py --build BUILD --out OUT.json [--np 16] [--cases 2:4095,3:255]
                                [--repeats 3] [--mpiexec mpiexec]
"""
import argparse
import json
import os
import subprocess
import sys


# PETSc's configurations: (label, pc, options after the driver's keys)
PETSC = (("MG, Chebyshev/Jacobi smoothing", "mg", []),
         ("MG, SOR smoothing (2 sweeps)", "mg", ["-mg_levels_ksp_type", "richardson", "-mg_levels_pc_type", "sor",
                                                  "-mg_levels_ksp_max_it", "2"]),
         ("GAMG", "gamg", []))


def run(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, (p.stderr or p.stdout)[-400:]))
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="a build with bench/mg_driver and bench/petsc_driver")
    ap.add_argument("--out", required=True)
    ap.add_argument("--np", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cases", default="2:4095,3:255")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--mpiexec", default="mpiexec")
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    petsc = os.path.join(a.build, "bench", "petsc_driver")
    mg = os.path.join(a.build, "bench", "mg_driver")
    rows, bad = [], 0
    for case in a.cases.split(","):
        dim, n = (int(v) for v in case.split(":"))
        best = {}
        for label, pc, extra in PETSC:
            cmd = [a.mpiexec, "--oversubscribe", "--bind-to", "core", "-n", str(a.np), petsc, "dim=%d" % dim,
                   "n=%d" % n, "pc=%s" % pc, "repeats=%d" % a.repeats] + extra
            d = run(cmd, env)
            d["label"], d["command"] = "PETSc CG + %s (%d ranks)" % (label, a.np), " ".join(cmd)
            ok = d["converged"] and d["relative_residual"] < 2e-8
            rows.append(d)
            bad += not ok
            if ok and d["time_s"] < best.get("petsc", (1e300,))[0]:
                best["petsc"] = (d["time_s"], d["label"])
        for label, keys in (("hetrelax mg V(2,2) fp64", ["method=mg"]),
                            ("hetrelax mg V(2,2) mixed", ["method=mg", "precision=mixed"]),
                            ("hetrelax mg FMG + V fp64", ["method=mg", "cycle=fmg"]),
                            ("hetrelax CG + V-cycle fp64", ["method=cg", "pc=mg"])):
            cmd = [mg, "dim=%d" % dim, "n=%d" % n, "threads=%d" % a.np, "rhs=random", "repeats=%d" % a.repeats,
                   "tol=1e-8"] + keys
            d = run(cmd, env)
            d.pop("history", None)
            d["solver"], d["label"], d["command"] = "hetrelax", label + " (%d threads)" % a.np, " ".join(cmd)
            ok = d["reason"] == "converged" and d["relative_residual"] < 1e-8
            rows.append(d)
            bad += not ok
            if ok and d["time_s"] < best.get("hetrelax", (1e300,))[0]:
                best["hetrelax"] = (d["time_s"], d["label"])
        for d in rows[-(len(PETSC) + 4):]:
            print("%d-D %5d  %-40s %9.4f s  (first %.4f s, set-up %.3f s)  %3d it  residual %.2e" %
                  (dim, n, d["label"], d["time_s"], d.get("first_s", float("nan")),
                   d.get("setup_s", float("nan")), d["iterations"], d["relative_residual"]), flush=True)
        if "petsc" in best and "hetrelax" in best:
            ratio = best["petsc"][0] / best["hetrelax"][0]
            rows.append({"summary": True, "dim": dim, "n": n, "petsc_best": best["petsc"][1],
                         "hetrelax_best": best["hetrelax"][1], "ratio": ratio})
            print("  fastest: %s %.4f s / %s %.4f s = %.2fx" % (best["petsc"][1], best["petsc"][0],
                                                               best["hetrelax"][1], best["hetrelax"][0], ratio))
        with open(a.out, "w") as f:
            json.dump({"np": a.np, "cpus": os.cpu_count(), "rows": rows}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
