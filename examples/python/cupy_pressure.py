#!/usr/bin/env python3
"""A Poisson solve inside a CuPy computation, as a projection step of a flow code does it: a
channel periodic along x with walls (zero flux) at the bottom and top, a new right-hand side
each step, built and used on the GPU; hetrelax reads f and writes the solution there, with no
copy through the host. The problem is singular (no Dirichlet face): the library makes each
right-hand side compatible and returns the zero-mean solution.

    PYTHONPATH=build/python python3 examples/python/cupy_pressure.py [--nx 1024 --ny 512] [--steps 5]

Needs CuPy and a GPU (backend "gpu"); without them it says so and exits with status 0.
"""
import argparse
import sys

import hetrelax

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--nx", type=int, default=1024)
ap.add_argument("--ny", type=int, default=512)
ap.add_argument("--steps", type=int, default=5)
args = ap.parse_args()

try:
    import cupy as cp
except ImportError:
    print("CuPy is not installed: nothing to run")
    sys.exit(0)
if not hetrelax.info()["gpus"]:
    print("no GPU (or a build without CUDA): nothing to run")
    sys.exit(0)

p = hetrelax.Poisson((args.ny, args.nx), lengths=(1.0, 2.0), bc={"x": "periodic", "y": ("neumann", 0.0)})
y, x = (cp.asarray(c) for c in p.coordinates())
with hetrelax.Solver(p, method="mg", backend="gpu", tol=1e-8) as s:
    print("runs on  ", ", ".join(f"{k} {v}" for k, v in s.info.items() if k in ("backend", "engine")))
    phi = cp.empty(p.shape)  # the solution's array, reused every step
    for step in range(args.steps):
        # a divergence-like source that moves along the channel
        f = cp.sin(cp.pi * (x[None, :] - 0.1 * step)) * cp.cos(cp.pi * y[:, None])
        phi, info = s.solve(f, out=phi)
        print(f"step {step}: {info.iterations} cycles ({info.reason}), relative residual "
              f"{info.relative_residual:.2e}, projection {info.rhs_projection:.1e}, "
              f"mean(phi) {float(phi.mean()):+.1e}, max|phi| {float(cp.abs(phi).max()):.4f}")
print(f"summary   {args.steps} solves, the arrays {type(phi).__module__}.{type(phi).__name__} on the GPU")
