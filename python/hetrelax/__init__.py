"""hetrelax: relaxation, multigrid and CG solvers of the C library hetrelax, from Python.

    import numpy as np, hetrelax
    p = hetrelax.Poisson((600, 1000), lengths=(0.6, 1.0),             # NumPy order: (ny, nx)
                         bc={"x": ("dirichlet", 0.0), "y+": ("dirichlet", 1.0), "y-": ("neumann", 0.0)})
    u, info = hetrelax.solve(p, method="mg", rtol=1e-8)                # u.shape == (600, 1000)

    s = hetrelax.Solver(p, method="mg", tol=1e-10)                     # set up once
    u, info = s.solve(f)                                               # many right-hand sides
    A, b = hetrelax.system(p)                                          # the assembled system (SciPy)
    x, info = hetrelax.sparse.solve(A, b, method="async", local_iters=5)

Arrays are NumPy arrays of float32 or float64, C-contiguous; a grid array of shape
(ny, nx) / (nz, ny, nx) is the C library's layout (x fastest) without a copy. Solver.solve and
Solver.sweep also take GPU arrays (CuPy, PyTorch, anything with __cuda_array_interface__) with
backend="gpu", read and written on the device. Errors raise hetrelax.Error
(a RuntimeError) subclasses with the library's message; bad arguments raise ValueError or
TypeError (InvalidArgumentError is both an Error and a ValueError). See docs/python.md.
"""

from . import _hetrelax as _c
from ._hetrelax import (
    DeviceError,
    DivergedError,
    Error,
    FormatError,
    InvalidArgumentError,
    NoDeviceError,
    OutOfMemoryError,
    UnsupportedError,
)
from ._problem import Poisson
from ._solver import SolveInfo, Solver, solve, system
from . import sparse

__version__ = _c.version()

__all__ = [
    "Poisson", "Solver", "SolveInfo", "solve", "system", "sparse", "info", "registry",
    "Error", "InvalidArgumentError", "UnsupportedError", "NoDeviceError", "DeviceError", "DivergedError",
    "FormatError", "OutOfMemoryError", "__version__",
]

_KINDS = {"kernel": _c.KIND_KERNEL, "method": _c.KIND_METHOD, "smoother": _c.KIND_SMOOTHER,
          "sparse": _c.KIND_SPARSE}


def info():
    """This machine as the library sees it: cores, pus, numa_nodes, gpus (CUDA devices
    visible), cuda (built with CUDA), hwloc, png, cpu_model."""
    return _c.sysinfo()


def registry(kind="kernel"):
    """The library's registry of one kind ("kernel", "method", "smoother", "sparse"): a list of
    {"name", "backend", "summary", "caps", "problems", "id"}: what Solver's kernel, method and
    smoother options and hetrelax.sparse's methods accept in this build."""
    if kind not in _KINDS:
        raise ValueError(f"kind: one of {', '.join(_KINDS)}, got {kind!r}")
    return _c.registry(_KINDS[kind])
