#!/usr/bin/env python3
"""Jacobi sweeps on the model problem (the unit square, u = 0 on the boundary, a point source),
plain and asynchronous: the async3 kernel with alpha = 30 (docs/async.md) against the
synchronous Jacobi kernel, in chunks of sweeps, the array updated in place.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/jacobi_async.py [--n 1024] [--sweeps 2000]
"""
import argparse
import time

import numpy as np

import hetrelax

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--n", type=int, default=1024, help="unknowns per axis")
ap.add_argument("--sweeps", type=int, default=2000)
ap.add_argument("--chunk", type=int, default=500, help="sweeps per call")
ap.add_argument("--alpha", type=int, default=30)
args = ap.parse_args()

p = hetrelax.Poisson((args.n, args.n), f="spike")
for name, opts in (("jacobi", {}), (f"async3 (alpha {args.alpha})", {"kernel": "async3", "alpha": args.alpha})):
    # tol 0 and maxiter = the chunk: the handle that sweep() runs, set up once
    s = hetrelax.Solver(p, method="jacobi", precision="double", tol=0, maxiter=args.chunk, **opts)
    u = np.zeros(p.shape)
    t = time.perf_counter()
    done = 0
    while done < args.sweeps:
        k = min(args.chunk, args.sweeps - done)
        _, info = s.sweep(u, k)  # k sweeps from u, written back into u
        done += k
        print(f"{name:20s} {done:6d} sweeps  relative residual {info.relative_residual:.4e}")
    wall = time.perf_counter() - t
    print(f"{name:20s} kernel {s.info['kernel']}, {s.info['threads']} threads: {wall:.3f} s, "
          f"{wall / args.sweeps * 1e9 / p.size:.3f} ns per point per sweep, max u {u.max():.6g}")
    s.close()
