#!/usr/bin/env python3
"""What the Python package adds to a multigrid solve: the same 2-D solve (the model problem
N x N, f manufactured, the library's default V(2,2) cycles with the redblack smoother, double
precision, to a relative residual TOL) timed through hetrelax.Solver.solve() and through the C
library alone.

C side (bench/grid_driver, bench/drivers/grid_driver.c): one hr_grid_solver set up once, a
warm-up, then REPEATS solves, each timed by the wall clock around hr_grid_solver_solve +
hr_grid_solver_solution: the calls solve() makes. Python side: one Solver set up once, a
warm-up, then REPEATS solves timed by the wall clock around s.solve(): argument checks, the GIL
released and taken back, the same two calls, the solution in a new NumPy array (and, second
figure, in a preallocated `out=`, as the driver's buffer is) and the SolveInfo. The library's
own loop time of both (time_s) says whether the machine was as busy for both. Rounds alternate
C and Python so that drift of the machine hits both. The target: the Python call adds at most
5% at N = 4095.

--arrays host: the problem's f is zero and every solve is given the same random f (uniform in
[0, 1), the driver's values), a NumPy array in Python; --arrays device: that f and the solution
in the GPU's memory (a CuPy array in Python, hr_grid_solver_solve_device in C; the Python figure
"out=" is then the solve into a preallocated CuPy array, the other one into a new one).

    PYTHONPATH=build/python /usr/bin/python3 bench/experiments/python_overhead.py [--build build]
        [--n 4095] [--repeats 5] [--rounds 3] [--tol 1e-8] [--threads 0] [--backend cpu|gpu]
        [--precision double|mixed|single] [--arrays none|host|device] [--out FILE.json]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def c_round(driver, args):
    """One grid_driver run: REPEATS wall times (s) of the C calls, and its record."""
    cmd = [driver, "dim=2", f"n={args.n}", "method=mg", f"tol={args.tol}", f"threads={args.threads}",
           f"repeats={args.repeats}", f"backend={args.backend}", f"arrays={args.arrays}",
           f"precision={args.precision}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"python_overhead: {' '.join(cmd)} failed: {p.stderr.strip()}")
    rec = json.loads(p.stdout[p.stdout.index("{"):])
    return rec["wall_s"], rec


def driver_rhs(np, n):
    """f for arrays=host|device: uniform in [0, 1) (other values than the driver's, from the same
    distribution: the cycle counts are compared)."""
    return np.random.default_rng(2026).random((n, n))


def py_round(hetrelax, np, solver, args, f):
    """REPEATS timed solves of one Solver: wall (new array), wall (out=), library time."""
    wall, wall_out, lib, infos = [], [], [], []
    if args.arrays == "device":
        import cupy as xp
    else:
        xp = np
    out = xp.empty(solver.problem.shape)
    solver.solve(f)  # warm-up, as the driver's
    solver.solve(f, out=out)  # out's pages touched, as the driver's buffer is before its timed solves
    for _ in range(args.repeats):
        t = time.perf_counter()
        u, info = solver.solve(f)
        wall.append(time.perf_counter() - t)
        lib.append(info.time_s)
        infos.append(info)
        del u
    # the out= solves apart: between new arrays each would follow a freed array's unmapping and
    # the next one's page faults, which the driver's loop has no part of
    for _ in range(args.repeats):
        t = time.perf_counter()
        solver.solve(f, out=out)
        wall_out.append(time.perf_counter() - t)
    return wall, wall_out, lib, infos[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=4095)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: one per core)")
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--precision", choices=("double", "mixed", "single"), default="double")
    ap.add_argument("--arrays", choices=("none", "host", "device"), default="none")
    ap.add_argument("--out", help="write the record as JSON")
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(args.build, "python"))
    import numpy as np

    import hetrelax

    driver = os.path.join(args.build, "bench", "grid_driver")
    if not os.access(driver, os.X_OK):
        sys.exit(f"python_overhead: {driver} not found (build the bench drivers)")
    p = hetrelax.Poisson((args.n, args.n), f="manufactured" if args.arrays == "none" else None)
    f = None
    if args.arrays != "none":
        f = driver_rhs(np, args.n)
        if args.arrays == "device":
            import cupy

            f = cupy.asarray(f)
    opts = dict(method="mg", precision=args.precision, tol=args.tol,
                backend="cpu-threads" if args.backend == "cpu" else "gpu")
    if args.threads:
        opts["threads"] = args.threads
    solver = hetrelax.Solver(p, **opts)
    print(f"python_overhead: {args.n}^2 mg V(2,2) to {args.tol:g}, {args.backend}, {args.rounds} rounds x "
          f"{args.repeats} solves; hetrelax {hetrelax.__version__} from {hetrelax.__file__}; {solver.info}")

    c_times, c_lib, py_wall, py_wall_out, py_lib = [], [], [], [], []
    c_rec = info = None
    for r in range(args.rounds):
        t, c_rec = c_round(driver, args)
        c_times += t
        c_lib += c_rec["time_s"]
        w, wo, lib, info = py_round(hetrelax, np, solver, args, f)
        py_wall += w
        py_wall_out += wo
        py_lib += lib
        print(f"round {r + 1}: C median {statistics.median(t):.4f} s (library {statistics.median(c_rec['time_s']):.4f}),"
              f" Python median {statistics.median(w):.4f} s (out= {statistics.median(wo):.4f} s, library "
              f"{statistics.median(lib):.4f})")
    solver.close()

    if info.iterations != c_rec["iterations"] or not info.converged:
        print(f"warning: Python ran {info.iterations} cycles ({info.reason}), the driver {c_rec['iterations']} "
              f"({c_rec['reason']})")
    c_med = statistics.median(c_times)
    res = {
        "n": args.n, "tol": args.tol, "backend": args.backend, "threads": args.threads,
        "precision": args.precision, "arrays": args.arrays, "device": info.device_name,
        "iterations": info.iterations, "driver_iterations": c_rec["iterations"],
        "c_median_s": c_med, "c_min_s": min(c_times), "c_library_median_s": statistics.median(c_lib),
        "python_wall_median_s": statistics.median(py_wall), "python_wall_min_s": min(py_wall),
        "python_wall_out_median_s": statistics.median(py_wall_out),
        "python_library_median_s": statistics.median(py_lib),
        "overhead": statistics.median(py_wall) / c_med - 1.0,
        "overhead_out": statistics.median(py_wall_out) / c_med - 1.0,
        "overhead_min": min(py_wall) / min(c_times) - 1.0,
        "machine": platform.node(), "cpu": hetrelax.info()["cpu_model"], "cores": hetrelax.info()["cores"],
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print(f"C calls        median {c_med:.4f} s (min {min(c_times):.4f}) over {len(c_times)} solves; the library's "
          f"loop {res['c_library_median_s']:.4f} s (Python's {res['python_library_median_s']:.4f} s)")
    print(f"Python solve() median {res['python_wall_median_s']:.4f} s: {100 * res['overhead']:+.2f}% "
          f"(min vs min {100 * res['overhead_min']:+.2f}%); with out= {100 * res['overhead_out']:+.2f}%")
    print("target <= +5%:", "met" if res["overhead"] <= 0.05 else "NOT met")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(res, fh, indent=1)
        print("wrote", args.out)


if __name__ == "__main__":
    main()
