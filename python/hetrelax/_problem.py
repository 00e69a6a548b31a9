"""The structured problem: -div(a grad u) = f on a box, one boundary condition per face.

Mirrors the C description (include/hetrelax/problem.h, docs/problems.md) in NumPy terms:
shapes and lengths are given in NumPy order, (ny, nx) or (nz, ny, nx), so that a C-contiguous
array of that shape is the C library's grid array (x fastest) without a copy.
"""

import math
import os

import numpy as np

from . import _hetrelax as _c
from ._arrays import as_float64, float_array, host_values, real

_NAMES = _c.names()
FACES = tuple(_NAMES["face"])  # "x-", "x+", "y-", "y+", "z-", "z+"
BC_KINDS = tuple(_NAMES["bc"])  # "dirichlet", "neumann", "periodic"
_AXES = ("x", "y", "z")
_RHS = {"zero": _c.RHS_ZERO, "spike": _c.RHS_SPIKE, "manufactured": _c.RHS_MANUFACTURED}


def _face_shape(shape, face):
    """The NumPy shape of a face array: the grid's shape less the face's axis."""
    dim = len(shape)
    axis = dim - 1 - face // 2  # C axis a is NumPy axis dim - 1 - a
    return shape[:axis] + shape[axis + 1 :]


def _faces_of(key, dim, where):
    """The face indices a bc key names: a face, an axis (both faces) or "all"."""
    if not isinstance(key, str):
        raise TypeError(f"{where}: face names are strings ('x-', 'y', 'all', ...), got {type(key).__name__}")
    if key == "all":
        return list(range(2 * dim))
    if key in _AXES:
        f = 2 * _AXES.index(key)
        faces = [f, f + 1]
    elif key in FACES:
        faces = [FACES.index(key)]
    else:
        z = ", z-, z+, z" if dim == 3 else ""
        raise ValueError(f"{where}: unknown face '{key}' (x-, x+, y-, y+, x, y{z} or all)")
    if faces[0] >= 2 * dim:
        raise ValueError(f"{where}: '{key}': a {dim}-D problem has no z faces")
    return faces


def _kind_of(kind, where):
    if not isinstance(kind, str) or kind not in BC_KINDS:
        raise ValueError(f"{where}: unknown type {kind!r} (dirichlet, neumann or periodic)")
    return BC_KINDS.index(kind)


def _parse_bc_string(spec, dim):
    """The command's --bc syntax: comma-separated FACE=TYPE[:VALUE|:FILE]. Returns a list of
    (key, kind, value) with value a float, a file name or None."""
    items = []
    for item in spec.split(","):
        where = f"bc '{item}'"
        if not item:
            raise ValueError("bc: empty item (expected FACE=TYPE[:VALUE|:FILE], comma-separated)")
        if "=" not in item:
            raise ValueError(f"{where}: expected FACE=TYPE[:VALUE|:FILE] (e.g. x-=dirichlet:0, y=periodic)")
        key, rest = item.split("=", 1)
        kind, _, arg = rest.partition(":")
        _faces_of(key, dim, where)
        k = _kind_of(kind, where)
        value = None
        if _:
            if k == _c.BC_PERIODIC:
                raise ValueError(f"{where}: periodic takes no value")
            if not arg:
                raise ValueError(f"{where}: empty value after ':' (a number or a file)")
            try:
                value = float(arg)
            except ValueError:
                value = arg  # a raw fp64 file, as the command reads it
            else:
                if not math.isfinite(value):
                    raise ValueError(f"{where}: value {arg} is not finite")
        items.append((key, kind, value))
    return items


def _parse_seed(f):
    """The seed of "random" (1) or "random:SEED", as the command's --rhs reads it."""
    if f == "random":
        return 1
    arg = f[len("random:") :]
    if not (arg.isascii() and arg.isdigit()) or int(arg) >= 1 << 64:
        raise ValueError(f"f: random:SEED takes a non-negative integer seed below 2**64 (got {arg!r})")
    return int(arg)


class Poisson:
    """-div(a grad u) = f on a box, with a boundary condition per face.

    Parameters
    ----------
    shape : tuple of int
        The unknowns per axis in NumPy order: ``(ny, nx)`` in 2-D, ``(nz, ny, nx)`` in 3-D. A
        C-contiguous array of this shape holds one value per unknown in the C library's layout
        (x fastest), so f, x0 and the solutions pass without a copy.
    lengths : sequence of float or dict, optional
        The box's lengths in the same NumPy order (``(Ly, Lx)``), or a dict ``{"x": Lx, "y":
        Ly}`` (axes left out: 1). Default: the model problem's box, one spacing h = 1 / (max(n)
        + 1) on every axis and length 1 along the longest.
    bc : str or dict, optional
        Boundary conditions. A string in the command's ``--bc`` syntax,
        ``"x=dirichlet:0,y+=dirichlet:1,y-=neumann:0"`` (a non-numeric VALUE is a raw fp64
        file), or a dict whose keys are faces (``"x-"``, ``"x+"``, ``"y-"``, ``"y+"``,
        ``"z-"``, ``"z+"``), axes (``"x"``: both faces) or ``"all"``, and whose values are a
        type (``"dirichlet"``, ``"neumann"``: value 0; ``"periodic"``), a ``(type, value)``
        pair with value a float or an array of one value per point of the face (the grid's
        shape less the face's axis: faces x- and x+ of a (ny, nx) grid take (ny,)), or a bare
        number (Dirichlet with that value). Items apply in order, later ones win. Default:
        Dirichlet 0 on every face. A Neumann value is the outward derivative du/dn.
    coef : float or ndarray, optional
        a > 0: a constant (default 1) or one value per unknown (the grid's shape).
    f : None, float array, or "zero" | "spike" | "manufactured" | "random[:SEED]", optional
        The problem's own source term (a solve may pass another). Default zero. ``"random"``
        (seed 1) or ``"random:SEED"`` (SEED an int in [0, 2**64)): f uniform in [0, 1) per
        unknown from the seed, the command's ``--rhs random[:SEED]`` (docs/problems.md defines
        the values), made by the library where it is used instead of passed as an array.

    The grid follows the boundary as in the C library (docs/problems.md): along an axis with
    Dirichlet at both ends the unknowns are interior points, h = L / (n + 1); a Neumann face's
    points are unknowns; a periodic axis has h = L / n. ``spacing`` and ``coordinates()`` say
    where the unknowns are. The problem is validated at once (``hetrelax.InvalidArgumentError``,
    a ``ValueError``, with the library's reason).
    """

    def __init__(self, shape, lengths=None, bc=None, coef=1.0, f=None):
        if isinstance(shape, (int, np.integer)) or not hasattr(shape, "__len__"):
            raise TypeError("shape: a tuple (ny, nx) or (nz, ny, nx) of ints")
        if len(shape) not in (2, 3):
            raise ValueError(f"shape: 2 or 3 extents in NumPy order, (ny, nx) or (nz, ny, nx); got {tuple(shape)}")
        ext = []
        for v in shape:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"shape: extents must be ints, got {shape!r}")
            if v < 1:
                raise ValueError(f"shape: extents must be >= 1, got {tuple(shape)}")
            ext.append(int(v))
        self._shape = tuple(ext)
        dim = self.dim
        self._lengths_arg = self._parse_lengths(lengths)
        self._faces = self._parse_bc(bc)
        self._coef, self._coef_values = self._parse_coef(coef)
        self._rhs, self._rhs_values, self._rhs_seed = self._parse_f(f)
        d = _c.problem_describe(self._desc())
        self._spacing = tuple(reversed(d["spacing"]))
        self._lengths = tuple(reversed(d["lengths"][:dim]))
        self._model = d["model"]
        self._singular = d["singular"]

    # -------------------------------------------------------------- parsing

    def _parse_lengths(self, lengths):
        dim = self.dim
        if lengths is None:
            return None
        if isinstance(lengths, dict):
            out = [1.0, 1.0, 1.0]
            for k, v in lengths.items():
                if k not in _AXES[:dim]:
                    raise ValueError(f"lengths: unknown axis {k!r} ({', '.join(_AXES[:dim])})")
                out[_AXES.index(k)] = real(f"lengths[{k!r}]", v, allow_none=False)
            return tuple(out)
        seq = list(lengths)
        if len(seq) != dim:
            raise ValueError(f"lengths: {dim} values in NumPy order (the shape's), got {len(seq)}")
        c = [real("lengths", v, allow_none=False) for v in reversed(seq)]
        return tuple(c + [1.0] * (3 - dim))

    def _parse_bc(self, bc):
        dim = self.dim
        faces = [(0, 0.0, None) for _ in range(2 * dim)]  # kind, value, values
        if bc is None:
            return faces
        if isinstance(bc, str):
            items = []
            for key, kind, value in _parse_bc_string(bc, dim):
                if isinstance(value, str):
                    items.append((key, (kind, ("file", value))))
                else:
                    items.append((key, kind if value is None else (kind, value)))
        elif isinstance(bc, dict):
            items = list(bc.items())
        else:
            raise TypeError(f"bc: a dict or a string like 'x=dirichlet:0,y=periodic', got {type(bc).__name__}")
        for key, spec in items:
            where = f"bc[{key!r}]"
            targets = _faces_of(key, dim, where)
            if isinstance(spec, str):
                kind, value = _kind_of(spec, where), None
            elif isinstance(spec, tuple) and len(spec) == 2:
                kind, value = _kind_of(spec[0], where), spec[1]
            elif isinstance(spec, (int, float, np.integer, np.floating)) and not isinstance(spec, bool):
                kind, value = 0, spec
            else:
                raise TypeError(f"{where}: a type, a (type, value) pair or a number, got {spec!r}")
            if kind == _c.BC_PERIODIC:
                if value is not None:
                    raise ValueError(f"{where}: periodic takes no value")
                for f in targets:
                    faces[f] = (kind, 0.0, None)
                continue
            for f in targets:
                faces[f] = (kind,) + self._face_value(where, f, value)
        return faces

    def _face_value(self, where, face, value):
        """(value, values) of one face: a constant, or an array of the face's shape."""
        if value is None:
            return 0.0, None
        shape = _face_shape(self._shape, face)
        if isinstance(value, tuple) and len(value) == 2 and value[0] == "file":
            path = value[1]
            if not os.path.isfile(path):
                raise ValueError(f"{where}: '{path}' is not a number, nor a readable file")
            arr = np.fromfile(path, dtype=np.float64)
            if arr.size != math.prod(shape):
                raise ValueError(
                    f"{where}: '{path}' holds {arr.size} fp64 values, the face has {math.prod(shape)} points"
                )
            return 0.0, arr.reshape(shape)
        if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
            arr = float_array(where, host_values(where, value), shape)
            out = as_float64(arr, copy=True).reshape(shape)
            out.flags.writeable = False
            return 0.0, out
        return real(where, value, allow_none=False), None

    def _parse_coef(self, coef):
        if isinstance(coef, np.ndarray) or hasattr(coef, "__cuda_array_interface__"):
            arr = float_array("coef", host_values("coef", coef), self._shape)
            out = as_float64(arr, copy=True).reshape(self._shape)
            out.flags.writeable = False
            return 1.0, out
        v = real("coef", coef, allow_none=False)
        if not v > 0:
            raise ValueError(f"coef: must be > 0, got {v}")
        return v, None

    def _parse_f(self, f):
        """(rhs kind, values or None, seed) of the problem's f."""
        if f is None:
            return _c.RHS_ZERO, None, 1
        if isinstance(f, str):
            if f == "random" or f.startswith("random:"):
                return _c.RHS_RANDOM, None, _parse_seed(f)
            if f not in _RHS:
                raise ValueError(
                    f"f: unknown right-hand side {f!r} (zero, spike, manufactured, random[:SEED], or an array)"
                )
            return _RHS[f], None, 1
        arr = float_array("f", host_values("f", f), self._shape)
        out = as_float64(arr, copy=True).reshape(self._shape)
        out.flags.writeable = False
        return _c.RHS_ARRAY, out, 1

    def _desc(self, f=None):
        """The tuple the C layer reads (C axis order); `f` (float64) replaces the problem's."""
        n = tuple(reversed(self._shape))
        faces = tuple(self._faces)
        rhs, rv = self._rhs, self._rhs_values
        if f is not None:
            rhs, rv = _c.RHS_ARRAY, f
        return (n, self._lengths_arg, faces, self._coef, self._coef_values, rhs, rv, self._rhs_seed)

    def _homogeneous(self):
        """The same operator with zero boundary data and f = 0 (for preconditioners)."""
        p = object.__new__(Poisson)
        p.__dict__.update(self.__dict__)
        p._faces = [(k, 0.0, None) for (k, _v, _a) in self._faces]
        p._rhs, p._rhs_values = _c.RHS_ZERO, None
        return p

    def _widths(self):
        """W at every unknown: the product over the axes of the cell's width (1/2 on a Neumann
        face): b = W f + boundary terms (problem.h)."""
        w = np.ones(self._shape)
        for face, (kind, _v, _a) in enumerate(self._faces):
            if kind != 1:  # Neumann
                continue
            axis = self.dim - 1 - face // 2
            sl = [slice(None)] * self.dim
            sl[axis] = 0 if face % 2 == 0 else -1
            w[tuple(sl)] *= 0.5
        return w

    # -------------------------------------------------------------- what it is

    @property
    def shape(self):
        """The unknowns per axis, NumPy order: (ny, nx) or (nz, ny, nx)."""
        return self._shape

    @property
    def dim(self):
        """2 or 3."""
        return len(self._shape)

    @property
    def size(self):
        """The number of unknowns."""
        return math.prod(self._shape)

    @property
    def lengths(self):
        """The box's lengths, NumPy order."""
        return self._lengths

    @property
    def spacing(self):
        """The grid spacing per axis, NumPy order (hr_problem_spacing)."""
        return self._spacing

    @property
    def is_model(self):
        """True for the model problem (Dirichlet with one value on every face, a = 1, one
        spacing): the problems the fastest kernels (and the async Jacobi variants) run."""
        return self._model

    @property
    def is_singular(self):
        """True when no face is Dirichlet: the solvers project f and return the zero-sum solution."""
        return self._singular

    @property
    def bc(self):
        """The boundary condition per face: {face: (type, value or array)}."""
        out = {}
        for f, (k, v, a) in enumerate(self._faces):
            out[FACES[f]] = (BC_KINDS[k],) if k == _c.BC_PERIODIC else (BC_KINDS[k], v if a is None else a)
        return out

    @property
    def coef(self):
        """a: a float or a (read-only) array of the grid's shape."""
        return self._coef if self._coef_values is None else self._coef_values

    def coordinates(self):
        """The positions of the unknowns per axis, NumPy order: a tuple of 1-D arrays (use
        numpy.meshgrid(*p.coordinates(), indexing="ij") for the grid)."""
        out = []
        for a in range(self.dim):  # C axis
            n = self._shape[self.dim - 1 - a]
            h = self._spacing[self.dim - 1 - a]
            lo = self._faces[2 * a][0]
            d = 1 if lo == 0 else 0  # the first unknown is inside a Dirichlet face
            out.append((np.arange(n) + d) * h)
        return tuple(reversed(out))

    def __repr__(self):
        def text(k):
            if len(k) == 1:
                return k[0]
            return f"{k[0]}:array" if isinstance(k[1], np.ndarray) else f"{k[0]}:{k[1]:g}"

        bc = ", ".join(f"{name}={text(k)}" for name, k in self.bc.items())
        coef = "array" if self._coef_values is not None else f"{self._coef:g}"
        lengths = "x".join(f"{v:g}" for v in self._lengths)
        return f"Poisson(shape={self._shape}, lengths={lengths}, bc=[{bc}], coef={coef})"
