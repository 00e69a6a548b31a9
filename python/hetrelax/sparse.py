"""A x = b for a general sparse matrix (include/hetrelax/sparse.h, docs/sparse.md).

    import hetrelax.sparse
    x, info = hetrelax.sparse.solve(A, b, method="async", local_iters=5, rtol=1e-8)

A is a SciPy sparse matrix (any format: converted with .tocsr()), the CSR arrays
(indptr, indices, data) [+ shape], or a CuPy sparse matrix (cupyx.scipy.sparse: read on the host
once for the set-up). With b a GPU array (CuPy, PyTorch, anything with __cuda_array_interface__)
the vectors stay on the GPU: x comes back as a GPU array, never copied through the host. Methods: jacobi, gs, gs-mc, async (block-asynchronous
async-(K): local_iters sweeps per block), cg, and their GPU variants (backend "gpu").
"""

import threading

import numpy as np

from . import _hetrelax as _c
from ._arrays import as_float64, device_array, float_array, is_device, kind_of, positive_int, real, reject_gpu
from ._solver import SolveInfo, _NAMES

__all__ = ["solve", "read_mm", "methods"]


def methods():
    """The sparse methods of this build: [{"name", "backend", "summary", ...}, ...]."""
    return _c.registry(_c.KIND_SPARSE)


def _csr_arrays(A):
    """(indptr, indices, data, (rows, cols)) of a SciPy matrix or an arrays tuple, checked."""
    reject_gpu("A", A)
    if hasattr(A, "tocsr") and hasattr(A, "shape"):
        A = A.tocsr()
        indptr, indices, data, shape = A.indptr, A.indices, A.data, A.shape
    elif isinstance(A, tuple) and len(A) in (3, 4):
        indptr, indices, data = A[:3]
        for name, a in zip(("indptr", "indices", "data"), A[:3]):
            reject_gpu(f"A {name}", a)
            if not isinstance(a, np.ndarray):
                raise TypeError(f"A: {name} must be a NumPy array, got {type(a).__name__}")
        n = indptr.size - 1
        shape = tuple(A[3]) if len(A) == 4 else (n, n)
    else:
        raise TypeError(f"A: a SciPy sparse matrix or (indptr, indices, data[, shape]), got {type(A).__name__}")
    if len(shape) != 2 or any(int(s) < 0 for s in shape):
        raise ValueError(f"A: bad shape {shape}")
    rows, cols = int(shape[0]), int(shape[1])
    if indptr.ndim != 1 or indptr.size != rows + 1 or not np.issubdtype(indptr.dtype, np.integer):
        raise ValueError(f"A: indptr must be {rows + 1} integers")
    if indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer):
        raise ValueError("A: indices must be a 1-D integer array")
    if data.ndim != 1 or data.dtype not in (np.float32, np.float64, np.int32, np.int64):
        raise TypeError(f"A: data must be a 1-D float array, got {data.dtype}")
    if indices.size != data.size:
        raise ValueError(f"A: {indices.size} indices and {data.size} values")
    if rows and (indptr[0] != 0 or indptr[-1] != data.size or np.any(np.diff(indptr) < 0)):
        raise ValueError("A: indptr must start at 0, never decrease and end at nnz")
    if indices.size and (indices.min() < 0 or indices.max() >= cols):
        raise ValueError(f"A: a column index is outside 0..{cols - 1}")
    return indptr, indices, data, (rows, cols)


def _host_matrix(A):
    """A GPU sparse matrix (CuPy's cupyx.scipy.sparse) as SciPy's: copied to the host once, where
    the library's set-up reads it (checks, the diagonal, Jacobi's spectral estimate, async's
    blocks) before the method puts it on the GPU in its own layout."""
    if hasattr(A, "tocsr") and is_device(getattr(A, "data", None)):
        if not hasattr(A, "get"):
            raise TypeError(f"A: a GPU sparse matrix of type {kind_of(A)}: a CuPy one (cupyx.scipy.sparse) is taken")
        return A.get()
    return A


def _device_vector(name, a, n, like, copy):
    """A GPU vector of n float64 values on the device of `like`: `a` (float32 or float64, C-contiguous)
    as it is, or converted or copied there by its own library (copy: never `a` itself); zeros
    when a is None."""
    if a is not None and not is_device(a):
        raise TypeError(f"{name}: a {kind_of(a)} beside GPU arrays: b and x0 are both GPU arrays or both NumPy")
    src = like if a is None else a
    mod = type(src).__module__.split(".")[0]
    if a is not None:
        d = device_array(name, a, (n,), allow_flat=False)
        if d.dtype == np.float64 and not copy:
            return a
    if mod == "cupy":
        import cupy

        with cupy.cuda.Device(src.device.id):
            return cupy.zeros(n) if a is None else cupy.array(a, dtype=cupy.float64, copy=True)
    if mod == "torch":
        import torch

        return torch.zeros(n, dtype=torch.float64, device=src.device) if a is None else \
            a.detach().to(torch.float64, copy=True)
    if a is not None and d.dtype == np.float64:
        raise TypeError(f"{name}: for {kind_of(a)} give x0 (float64): the package copies CuPy and PyTorch arrays")
    raise TypeError(f"{name}: float32 or new GPU vectors are made for CuPy and PyTorch arrays, not {kind_of(src)}")


def _to_library(A):
    indptr, indices, data, (rows, cols) = _csr_arrays(A)
    ri = np.repeat(np.arange(rows, dtype=np.int32), np.diff(indptr).astype(np.int64))
    return _c.csr_from_coo(rows, cols, ri, indices.astype(np.int32), data.astype(np.float64))


def solve(A, b, x0=None, method="async", rtol=1e-8, maxiter=None, local_iters=None, block=None,
          backend="auto", threads=None, check_every=None, tau=None, divtol=None, device=None, gpus=None,
          callback=None):
    """Solves A x = b (hr_sparse_solve).

    Parameters
    ----------
    A : scipy.sparse matrix, (indptr, indices, data[, shape]), or a CuPy sparse matrix
        Square; duplicates are summed. Converted once per call into the library's CSR (a CuPy
        matrix is copied to the host for that: the set-up reads it there).
    b : ndarray or GPU array
        float32 or float64, C-contiguous, one value per row. A GPU array runs the device path
        (a gpu method on one GPU; backend "auto" picks "gpu"): b, x0 and x on the GPU.
    x0 : ndarray or GPU array, optional
        The initial guess (default zero), of b's kind; not modified.
    method : str
        "async" (default: block-asynchronous async-(K)), "jacobi", "gs", "gs-mc", "cg"
        (hetrelax.sparse.methods() lists this build's).
    rtol : float
        Stop when ||b - A x|| / ||b|| < rtol (0: run maxiter).
    maxiter : int, optional
        Global iterations (library default 1000).
    local_iters : int, optional
        K of async-(K): local Jacobi sweeps per block (default 5).
    block : int, optional
        Rows per block of async (default 128; 256 on the GPU).
    backend : str
        "auto" (the method's first backend), "cpu-seq", "cpu-threads", "gpu".
    threads, check_every, device, gpus : int, optional
    tau : float or "auto", optional
        jacobi: x += tau D^-1 r ("auto": 2 / (lambda_min + lambda_max)).
    divtol : float, optional
        Diverged when the residual passes divtol times the initial one (default 1e4).
    callback : callable, optional
        ``callback(iteration, relative_residual)`` every check; a true return stops.

    Returns
    -------
    x, info : float64 ndarray (a float64 GPU array of b's library for a GPU b), SolveInfo
        (iterations, reason, relative_residual,
        initial_residual, time_s, time_setup_s, tau, method, backend, warning)

    Divergence raises hetrelax.DivergedError (.x, .info); the library's refusals (a zero
    diagonal, plain Jacobi with rho(B) >= 1, ...) raise hetrelax.InvalidArgumentError. Ctrl-C
    stops a CPU method at its next check and raises KeyboardInterrupt.
    """
    Ac = _to_library(_host_matrix(A))
    rows, cols = Ac.shape
    if rows != cols:
        raise ValueError(f"A: must be square, got {rows} x {cols}")
    on_gpu = is_device(b)
    if on_gpu:  # b, x0 and x stay on the GPU (a gpu method on one GPU)
        b = _device_vector("b", b, rows, b, copy=False)
        x = _device_vector("x0", x0, cols, b, copy=True)
        dev = [device_array("b", b, (rows,), allow_flat=False), device_array("x", x, (cols,), allow_flat=False)]
        if backend == "auto":
            backend = "gpu"
    else:
        reject_gpu("x0", x0, "beside a NumPy b")
        b = as_float64(float_array("b", b, (rows,), allow_flat=False))
        x = np.zeros(cols) if x0 is None else as_float64(float_array("x0", x0, (cols,), allow_flat=False),
                                                         copy=True)
    if not isinstance(method, str):
        raise TypeError(f"method: a name (str), got {type(method).__name__}")
    kw = {"method": method, "tol": real("rtol", rtol, allow_none=False, minimum=0.0)}
    backends = list(_NAMES["backend"])
    if backend not in backends[:4]:
        raise ValueError(f"backend: unknown value {backend!r} (auto, cpu-seq, cpu-threads, gpu)")
    kw["backend"] = backends.index(backend)
    for name, v in (("max_iters", maxiter), ("local_iters", local_iters), ("block", block), ("threads", threads),
                    ("check_every", check_every), ("gpus", gpus)):
        v = positive_int("maxiter" if name == "max_iters" else name, v)
        if v is not None:
            kw[name] = v
    if device is not None:
        kw["device"] = positive_int("device", device, minimum=0)
    if tau is not None:
        kw["tau"] = _c.SPARSE_TAU_AUTO if tau == "auto" else real("tau", tau, minimum=0.0)
    if divtol is not None:
        kw["divtol"] = real("divtol", divtol, minimum=0.0)
    if callback is not None:
        if not callable(callback):
            raise TypeError("callback: must be callable (iteration, relative_residual) -> stop?")
        kw["callback"] = callback
    main = threading.current_thread() is threading.main_thread()
    if on_gpu:
        stream = next((v.stream for v in dev if v.stream is not None), None)
        status, r = _c.sparse_solve(Ac, None, None, catch_sigint=main, b_ptr=dev[0].ptr, x_ptr=dev[1].ptr,
                                    stream=stream, **kw)
    else:
        status, r = _c.sparse_solve(Ac, b, x, catch_sigint=main, **kw)
    info = SolveInfo(r)
    if status != 0:
        err = _c.DivergedError(r["message"] or f"the iteration diverged ({info.reason})")
        err.status, err.status_name = status, _NAMES["status"][status]
        err.x, err.info = x, info
        raise err
    return x, info


def read_mm(path):
    """Reads a Matrix Market file (hr_mm_read_csr, hr_mm_read_vector): a `coordinate` matrix
    (real, integer or pattern; general or symmetric, expanded) as a scipy.sparse.csr_matrix
    (without SciPy: (indptr, indices, data, shape)), or an `array` vector as a float64 array.
    Malformed files raise hetrelax.FormatError naming the line; unreadable ones OSError."""
    with open(path, "rb") as fh:
        head = fh.readline(256).lower()
    if b"array" in head.split():
        return _c.mm_read_vector(path)
    A = _c.mm_read(path)
    indptr, indices, data = A.arrays()
    try:
        import scipy.sparse
    except ImportError:  # pragma: no cover - SciPy is optional
        return indptr, indices, data, A.shape
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=A.shape)
