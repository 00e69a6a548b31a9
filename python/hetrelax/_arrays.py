"""Argument checks shared by the package: arrays in, arrays out.

Arrays are NumPy arrays of float32 or float64, C-contiguous. Anything else is refused with
an error naming the argument; nothing is copied to or from a GPU behind the caller's back.
"""

import math

import numpy as np

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def reject_gpu(name, a):
    """TypeError for arrays that live on a GPU (CuPy, PyTorch CUDA tensors, Numba, ...)."""
    if hasattr(a, "__cuda_array_interface__"):
        kind = f"{type(a).__module__}.{type(a).__name__}"
        raise TypeError(
            f"{name}: GPU arrays ({kind}) are not accepted yet: pass a NumPy array "
            f"(e.g. cupy.asnumpy(x)); the GPU backend (backend='gpu') still runs the solve"
        )


def float_array(name, a, shape, *, writable=False, allow_flat=True):
    """`a` checked: a NumPy float32/float64 C-contiguous array of `shape` (or, with allow_flat,
    1-D of the same size). Returned as it is."""
    reject_gpu(name, a)
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name}: expected a NumPy array of float32 or float64, got {type(a).__name__}")
    if a.dtype not in _FLOATS:
        raise TypeError(f"{name}: dtype must be float32 or float64 (native byte order), got {a.dtype}")
    if not a.flags.c_contiguous:
        raise ValueError(f"{name}: the array must be C-contiguous (numpy.ascontiguousarray)")
    size = math.prod(shape)
    if a.shape != tuple(shape) and not (allow_flat and a.ndim == 1 and a.size == size):
        flat = f" or ({size},)" if allow_flat and len(shape) > 1 else ""
        raise ValueError(f"{name}: expected shape {tuple(shape)}{flat}, got {a.shape}")
    if writable and not a.flags.writeable:
        raise ValueError(f"{name}: the array is read-only")
    return a


def as_float64(a, copy=False):
    """A float64 C-contiguous aligned array with the values of checked array `a` (itself when it
    is one already and copy is False)."""
    if not copy and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.aligned:
        return a
    return np.array(a, dtype=np.float64, order="C", copy=True)


def positive_int(name, v, *, allow_none=True, minimum=1):
    """An int >= minimum (None passes through when allowed)."""
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(v).__name__}")
    v = int(v)
    if v < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {v}")
    return v


def real(name, v, *, allow_none=True, minimum=None, finite=True):
    """A float (None passes through when allowed)."""
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a number, got {type(v).__name__}")
    v = float(v)
    if finite and not math.isfinite(v):
        raise ValueError(f"{name}: must be finite, got {v}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {v}")
    return v
