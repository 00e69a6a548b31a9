#!/usr/bin/env python3
"""A 1000 x 600 plate, 1 wide and 0.6 high: u = 0 on the left and right walls, u = 1 on the
top, no flux through the bottom, no source; solved to 1e-8 by multigrid. The same problem as
docs/problems.md's command line example (its numbers match it).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/plate.py [--nx 1000 --ny 600] [--output u.npy]
"""
import argparse

import numpy as np

import hetrelax

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--nx", type=int, default=1000)
ap.add_argument("--ny", type=int, default=600)
ap.add_argument("--output", help="write the solution (shape (ny, nx)) with numpy.save")
args = ap.parse_args()

p = hetrelax.Poisson(
    (args.ny, args.nx),  # NumPy order: rows are y
    lengths=(0.6, 1.0),
    bc={"x": ("dirichlet", 0.0), "y+": ("dirichlet", 1.0), "y-": ("neumann", 0.0)},
)
print(p)
print("spacing   h_y %.6g h_x %.6g" % p.spacing)

with hetrelax.Solver(p, method="mg", tol=1e-8, keep_history=True) as s:
    u, info = s.solve()
    print("runs on  ", ", ".join(f"{k} {v}" for k, v in s.info.items() if k in ("backend", "engine", "threads")))
for it, res in info.history:
    print(f"  cycle {it:3d}   relative residual {res:.6e}")
print(f"summary   {info.iterations} cycles ({info.reason}) in {info.time_s:.4f} s "
      f"(setup {info.time_setup_s:.4f} s), relative residual {info.relative_residual:.6e}")

y, x = p.coordinates()
j = np.argmin(abs(x - 0.5))
print(f"u along x = {x[j]:.4f}: bottom {u[0, j]:.6f}, middle {u[len(y) // 2, j]:.6f}, top row {u[-1, j]:.6f}")
if args.output:
    np.save(args.output, u)
    print("wrote    ", args.output)
