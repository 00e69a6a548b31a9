#!/usr/bin/env python3
"""The random right-hand side of the multigrid benchmarks, as files.

f is uniform in [-1, 1): value i (x fastest, then y, then z) is
(splitmix64 step i+1 of `seed`) >> 11 times 2^-52, minus 1 -- the generator of
bench/drivers/mg_driver.c (rhs=random) and bench/drivers/hypre_driver.c, so every solver sees the same
system A u = h^2 f (A: 5-point / 7-point stencil with diagonal 4 / 6 and -1 off the
diagonal, zero Dirichlet boundary, h = 1 / (n + 1)).

  --raw FILE  f as n^dim raw little-endian float64, x fastest: what
              `hetrelax poisson2d|poisson3d --rhs FILE --precision double` reads
              (the grid commands read FILE in the run's precision: give --precision
              double or mixed, never the default single)
  --mm FILE   b = h^2 f as a Matrix Market array (%.17g: exact round trip), what
              `hetrelax sparse --gen laplace2d:n|laplace3d:n --rhs FILE` reads; that
              matrix is A above, rows in the same order

usage: bench/experiments/rhs_gen.py --dim 2 --n 1023 [--seed 2026] [--raw FILE] [--mm FILE]
The functions work on NumPy or CuPy arrays (xp), giving bitwise the same values.
"""
import argparse
import os
import sys

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
SEED = 2026
CHUNK = 1 << 22


def random_f(start, count, seed=SEED, xp=np):
    """Values start .. start+count-1 of the sequence (float64, in [-1, 1))."""
    u64 = xp.uint64
    with np.errstate(over="ignore"):
        z = (xp.arange(start + 1, start + count + 1, dtype=u64) * u64(GOLDEN)) + u64(seed)
        z = (z ^ (z >> u64(30))) * u64(MIX1)
        z = (z ^ (z >> u64(27))) * u64(MIX2)
        z = z ^ (z >> u64(31))
    return (z >> u64(11)).astype(xp.float64) * (2.0 ** -52) - 1.0


def random_grid(dim, n, seed=SEED, xp=np):
    """f on the n^dim interior grid, shape (n, n) or (n, n, n), x the last axis."""
    count = n ** dim
    out = xp.empty(count, dtype=xp.float64)
    for s in range(0, count, CHUNK):
        c = min(CHUNK, count - s)
        out[s:s + c] = random_f(s, c, seed, xp)
    return out.reshape((n,) * dim)


def h2(n):
    return (1.0 / (n + 1.0)) ** 2


def write_raw(path, f):
    """f (host array) as raw little-endian float64, through a temporary file."""
    tmp = path + ".tmp"
    np.ascontiguousarray(f, dtype="<f8").tofile(tmp)
    os.replace(tmp, path)


def write_mm(path, b, comment=""):
    """b (host array) as a Matrix Market real array, %.17g per value."""
    flat = np.ascontiguousarray(b, dtype=np.float64).ravel()
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write("%%MatrixMarket matrix array real general\n")
        for line in comment.splitlines():
            fh.write(f"% {line}\n")
        fh.write(f"{flat.size} 1\n")
        for s in range(0, flat.size, CHUNK):
            part = flat[s:s + CHUNK].tolist()
            fh.write(("%.17g\n" * len(part)) % tuple(part))
    os.replace(tmp, path)


def cached(folder, dim, n, kind, seed=SEED, f=None):
    """Path of the rhs file of one kind ('raw': f; 'mm': h^2 f), written when missing.
    f: the host grid when the caller has it already."""
    os.makedirs(folder, exist_ok=True)
    ext = "f64" if kind == "raw" else "mtx"
    path = os.path.join(folder, f"random-{dim}d-{n}-seed{seed}.{ext}")
    if not os.path.exists(path):
        if f is None:
            f = random_grid(dim, n, seed)
        if kind == "raw":
            write_raw(path, f)
        else:
            write_mm(path, h2(n) * f, f"b = h^2 f, f = random (splitmix64 seed {seed}), {dim}-D n = {n}")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dim", type=int, choices=(2, 3), required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--raw")
    ap.add_argument("--mm")
    a = ap.parse_args()
    if not a.raw and not a.mm:
        ap.error("give --raw FILE and/or --mm FILE")
    if a.n < 1:
        ap.error("--n must be >= 1")
    f = random_grid(a.dim, a.n, a.seed)
    if a.raw:
        write_raw(a.raw, f)
    if a.mm:
        write_mm(a.mm, h2(a.n) * f, f"b = h^2 f, f = random (splitmix64 seed {a.seed}), {a.dim}-D n = {a.n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
