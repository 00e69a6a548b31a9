"""Argument checks shared by the package: arrays in, arrays out.

Arrays are NumPy arrays of float32 or float64, C-contiguous; Solver.solve and Solver.sweep also
take GPU arrays (anything with ``__cuda_array_interface__``: CuPy, PyTorch CUDA tensors, Numba)
and hand their pointers to the library, which never copies them through the host. Anything
else is refused with an error naming the argument.
"""

import math

import numpy as np

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


_CAI = "__cuda_array_interface__"


def is_device(a):
    """Whether `a` is a GPU array (it has ``__cuda_array_interface__``). The class is asked first:
    CuPy and PyTorch make the interface a property, whose evaluation builds a dict (CuPy's also
    synchronises its stream)."""
    if a is None or isinstance(a, np.ndarray):
        return False
    return hasattr(type(a), _CAI) or _CAI in getattr(a, "__dict__", ())


def kind_of(a):
    return f"{type(a).__module__}.{type(a).__name__}"


def reject_gpu(name, a, where="here"):
    """TypeError for arrays that live on a GPU where only NumPy arrays are taken."""
    if is_device(a):
        raise TypeError(
            f"{name}: GPU arrays ({kind_of(a)}) are not taken {where}: pass a NumPy array "
            f"(e.g. cupy.asnumpy(x)); Solver.solve and Solver.sweep take GPU arrays"
        )


def host_values(name, a):
    """A GPU array's values as a NumPy array, copied once (problem data: coefficients, face
    values, the problem's own f, which the library assembles on the host); anything else as
    it is."""
    if not is_device(a):
        return a
    if hasattr(a, "get"):  # CuPy
        return np.asarray(a.get())
    if hasattr(a, "cpu"):  # PyTorch
        return a.detach().cpu().numpy()
    raise TypeError(f"{name}: a GPU array of type {kind_of(a)} that the package cannot copy to the host "
                    "(CuPy and PyTorch arrays can be): pass a NumPy array")


class DeviceArray:
    """A GPU array's ``__cuda_array_interface__``, checked: ptr, dtype, stream, and the object."""

    __slots__ = ("ptr", "dtype", "stream", "obj")

    def __init__(self, ptr, dtype, stream, obj):
        self.ptr, self.dtype, self.stream, self.obj = ptr, dtype, stream, obj


def device_array(name, a, shape, *, writable=False, allow_flat=True):
    """`a`'s ``__cuda_array_interface__`` checked as float_array checks a NumPy array: float32 or
    float64, C-contiguous, no mask, `shape` (or, with allow_flat, 1-D of the same size)."""
    try:
        cai = a.__cuda_array_interface__
    except Exception as e:  # a tensor that refuses to export (e.g. one that requires grad)
        raise TypeError(f"{name}: its __cuda_array_interface__ is not readable ({e})") from e
    try:
        dtype = np.dtype(cai["typestr"])
        ashape = tuple(int(v) for v in cai["shape"])
        ptr, readonly = cai["data"]
    except (KeyError, TypeError, ValueError) as e:
        raise TypeError(f"{name}: a malformed __cuda_array_interface__ ({e})") from e
    if dtype not in _FLOATS:
        raise TypeError(f"{name}: dtype must be float32 or float64 (native byte order), got {dtype}")
    if cai.get("mask") is not None:
        raise ValueError(f"{name}: masked GPU arrays are not taken")
    strides = cai.get("strides")
    if strides is not None:
        want, step = [], dtype.itemsize
        for n in reversed(ashape):
            want.append(step)
            step *= n
        want.reverse()
        if any(n > 1 and s != w for n, s, w in zip(ashape, strides, want)):
            raise ValueError(f"{name}: the array must be C-contiguous (cupy.ascontiguousarray)")
    size = math.prod(shape)
    if ashape != tuple(shape) and not (allow_flat and len(ashape) == 1 and ashape[0] == size):
        flat = f" or ({size},)" if allow_flat and len(shape) > 1 else ""
        raise ValueError(f"{name}: expected shape {tuple(shape)}{flat}, got {ashape}")
    if writable and readonly:
        raise ValueError(f"{name}: the array is read-only")
    if size > 0 and not ptr:
        raise ValueError(f"{name}: a null device pointer")
    return DeviceArray(int(ptr), dtype, cai.get("stream") if cai.get("version", 0) >= 3 else None, a)


def empty_device_like(a, shape, dtype, device):
    """A new GPU array of the same library as `a` (CuPy, PyTorch) on GPU `device`."""
    mod = type(a).__module__.split(".")[0]
    if mod == "cupy":
        import cupy

        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    if mod == "torch":
        import torch

        tdt = torch.float32 if dtype == np.float32 else torch.float64
        return torch.empty(shape, dtype=tdt, device=f"cuda:{device}")
    raise TypeError(f"out: the package makes CuPy and PyTorch GPU arrays; for {kind_of(a)} pass out= "
                    "(a GPU array of the problem's shape)")


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
