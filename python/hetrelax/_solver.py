"""Solvers of the structured problems: one hr_grid_solver handle behind each Solver."""

import threading

import numpy as np

from . import _hetrelax as _c
from ._arrays import (as_float64, device_array, empty_device_like, float_array, is_device, kind_of, positive_int,
                      real)
from ._problem import Poisson

_NAMES = _c.names()
METHODS = tuple(n for n in _NAMES["method"] if n)
BACKENDS = tuple(n for n in _NAMES["backend"] if n)
PRECISIONS = ("double", "single", "mixed")
CYCLES = tuple(n for n in _NAMES["cycle"] if n)
BINDS = ("none", "core")
_RELAXATION = ("jacobi", "redblack", "sor")


def _choice(name, value, choices, table=None):
    """The index of `value` in `table` (default `choices`), or a ValueError listing the choices."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name}: unknown value {value!r} (one of {', '.join(choices)})")
    return (table or choices).index(value)


class SolveInfo:
    """What a solve did. Attributes (those a solve of its kind fills):

    iterations         sweeps, cycles or CG iterations done
    reason             "converged", "iterations" (ran maxiter), "stopped" (a callback, Ctrl-C or
                       request_stop), "diverged", "diverged (NaN)", "breakdown", "stagnated"
    converged          reason == "converged"
    relative_residual  ||b - A x|| / ||b||, recomputed at the end in double
    history            [(iteration, relative residual), ...] with keep_history=True, else None
    time_s             the iteration loop (seconds); time_setup_s: set-up paid by this solve
    rhs_projection     singular problems: how much of b was removed to make it compatible
    convergence_factor multigrid and CG: (final / initial residual) ** (1 / iterations)
    method, backend, kernel, precision, engine: what ran
    """

    def __init__(self, fields):
        self.__dict__.update(fields)
        self.converged = fields.get("reason") == "converged"

    def __repr__(self):
        keys = ("iterations", "reason", "relative_residual", "time_s", "method", "backend")
        body = ", ".join(f"{k}={getattr(self, k)!r}" for k in keys if hasattr(self, k))
        return f"SolveInfo({body})"


def _diverged(x, info):
    err = _c.DivergedError(f"the iteration diverged after {info.iterations} iterations ({info.reason}); "
                           f"relative residual {info.relative_residual:.3e}")
    err.status = _c.ERR_DIVERGED
    err.status_name = _NAMES["status"][_c.ERR_DIVERGED]
    err.x = x
    err.info = info
    return err


class Solver:
    """A solver of one problem, set up once, solved many times.

    Parameters
    ----------
    problem : Poisson
    method : str
        "mg" (multigrid, default), "cg", "mgcg" (CG preconditioned by a V-cycle), "jacobi",
        "redblack", "sor".
    backend : str
        "auto" (a GPU when present and it runs the method, else cpu-threads), "cpu-seq",
        "cpu-threads", "gpu", "hybrid".
    precision : str
        "double" (default), "single", "mixed" (mg, cg, mgcg: fp32 cycles inside fp64).
        Problems other than the model problem run in double on the CPU.
    tol : float
        Default relative tolerance of solve() (||b - A x|| / ||b||); 0: run maxiter.
    maxiter : int, optional
        Default iteration limit (library default: 1000 sweeps, 100 cycles, 1000 CG iterations).
    **options
        Onto hr_grid_options (include/hetrelax/grid_solver.h): ``omega``, ``kernel`` (e.g.
        "async3"), ``alpha``, ``cycle`` ("v", "w", "f", "fmg"), ``pre``, ``post`` (sweeps; 0:
        none), ``smoother`` ("redblack", "jacobi", "cheby", "async3"), ``levels``,
        ``threads``, ``bind`` ("none", "core"), ``device``, ``gpus``, ``split``,
        ``check_every``, ``divtol``, ``keep_history``, ``monitor_every``, ``symmetric`` (mg: one
        cycle is a symmetric operator), ``flush_subnormals`` (CPU threads flush subnormal values
        to zero during a solve). ``max_iters`` is ``maxiter``.

    The handle is created here (errors: hetrelax.Error subclasses with the library's
    message). A solve() with another rtol, maxiter or a callback where there was none (or the
    reverse) sets the handle up again, since the C handle takes them at set-up: pass them here
    to set up once. One solve at a time per Solver; Solvers are independent.
    """

    def __init__(self, problem, method="mg", backend="auto", precision="double", tol=1e-8, maxiter=None,
                 _monitor=False, **options):
        if not isinstance(problem, Poisson):
            raise TypeError(f"problem: expected a hetrelax.Poisson, got {type(problem).__name__}")
        self.problem = problem
        if "max_iters" in options:
            if maxiter is not None:
                raise TypeError("give maxiter or max_iters, not both")
            maxiter = options.pop("max_iters")
        self.method = method
        self.tol = real("tol", tol, allow_none=False, minimum=0.0)
        self.maxiter = positive_int("maxiter", maxiter)
        self._opts = self._options(method, backend, precision, options)
        self._single = precision == "single"
        self._lock = threading.Lock()
        self._key = None
        self._h = None
        self._pc = None
        self._handle(self.tol, self.maxiter, bool(_monitor))

    @staticmethod
    def _options(method, backend, precision, options):
        o = {
            "method": _choice("method", method, METHODS, list(_NAMES["method"])),
            "backend": _choice("backend", backend, BACKENDS, list(_NAMES["backend"])),
            "precision": _choice("precision", precision, PRECISIONS, list(_NAMES["precision"])),
        }
        for key, v in options.items():
            if v is None:
                continue
            if key in ("omega", "split", "divtol"):
                o[key] = real(key, v, minimum=0.0)
            elif key in ("kernel", "smoother"):
                if not isinstance(v, str):
                    raise TypeError(f"{key}: a name (str), got {type(v).__name__}")
                o[key] = v
            elif key == "cycle":
                o[key] = _choice("cycle", v, CYCLES)
            elif key == "bind":
                o[key] = _choice("bind", v, BINDS)
            elif key in ("pre", "post"):
                n = positive_int(key, v, minimum=0)
                o[key] = _c.HR_NONE if n == 0 else n  # 0 in the C struct is "the default"
            elif key in ("alpha", "levels", "threads", "gpus", "check_every", "monitor_every"):
                o[key] = positive_int(key, v)
            elif key == "device":
                o[key] = positive_int(key, v, minimum=0)
            elif key in ("keep_history", "symmetric", "flush_subnormals"):
                o[key] = bool(v)
            else:
                raise TypeError(f"Solver: unknown option {key!r}")
        return o

    def _handle(self, tol, maxiter, monitor):
        """The C handle set up for (tol, maxiter, monitor), made anew when they changed."""
        key = (tol, maxiter, monitor)
        if self._h is not None and self._key == key:
            return self._h
        kw = dict(self._opts, tol=tol, monitor=monitor)
        if maxiter is not None:
            kw["max_iters"] = maxiter
        h = _c.GridSolver(self.problem._desc(), **kw)
        if self._h is not None:
            self._h.close()
        self._h, self._key = h, key
        return h

    def _grid_in(self, name, a):
        if a is None:
            return None
        return as_float64(float_array(name, a, self.problem.shape)).reshape(-1)

    def _out(self, out):
        shape = self.problem.shape
        if out is None:
            return np.empty(shape, dtype=np.float32 if self._single else np.float64)
        float_array("out", out, shape, writable=True)
        return out

    def _device_arrays(self, f, x0, out, names=("f", "x0", "out")):
        """The GPU arrays of one solve checked (every array given is one, all of one dtype), and
        out made when it is None: (f, x0, out as DeviceArray or None, out's object)."""
        shape = self.problem.shape
        given = [(n, a) for n, a in zip(names, (f, x0, out)) if a is not None]
        for n, a in given:
            if not is_device(a):
                gpu = next(m for m, b in given if is_device(b))
                raise TypeError(f"{n}: a {kind_of(a)} beside the GPU array {gpu}: the arrays of one solve are all "
                                "GPU arrays (read and written on the device) or all NumPy arrays")
        d = [None if a is None else device_array(n, a, shape, writable=n == names[2])
             for n, a in zip(names, (f, x0, out))]
        dtypes = {v.dtype for v in d if v is not None}
        if len(dtypes) > 1:
            raise TypeError("the GPU arrays of one solve share one dtype (float32 or float64), got "
                            + ", ".join(sorted(map(str, dtypes))))
        if out is None:
            dtype = dtypes.pop() if dtypes else np.dtype(np.float32 if self._single else np.float64)
            out = empty_device_like(f if f is not None else x0, shape, dtype, self._opts.get("device", 0))
            d[2] = device_array(names[2], out, shape, writable=True)
        return d[0], d[1], d[2], out

    def _run(self, f, x0, out, tol, maxiter, callback, device=None):
        """One solve: NumPy arrays (f, x0 flat float64; out the result's array), or with
        device=(f, x0, out) DeviceArrays, out then the GPU array returned."""
        if callback is not None and not callable(callback):
            raise TypeError("callback: must be callable (iteration, relative_residual) -> stop?")
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("Solver: a solve is under way (another thread, or this solver's own callback); "
                               "use one Solver per thread")
        try:
            h = self._handle(tol, maxiter, callback is not None)
            main = threading.current_thread() is threading.main_thread()
            if device is not None:
                df, dx0, dout = device
                stream = next((v.stream for v in device if v is not None and v.stream is not None), None)
                status, r = h.solve_device(df and df.ptr, dx0 and dx0.ptr, dout.ptr, dout.dtype == np.float32,
                                           stream, callback, catch_sigint=main)
            else:
                status, r = h.solve(f, x0, out.reshape(-1), callback, catch_sigint=main)
            info = SolveInfo(r)
            info.engine = h.info()["engine"]
            info.history = list(zip(*(a.tolist() for a in h.history()))) if self._opts.get("keep_history") else None
        finally:
            self._lock.release()
        if status != 0:
            raise _diverged(out, info)
        return out, info

    def solve(self, f=None, x0=None, rtol=None, maxiter=None, callback=None, out=None):
        """Solves A x = b(f) once.

        Parameters
        ----------
        f : ndarray or GPU array, optional
            The source term at every unknown (the problem's shape, or flat), float32 or
            float64; default the problem's. Boundary values and fluxes come from the problem:
            this is f, not the assembled b of hetrelax.system(). A GPU array (CuPy, PyTorch,
            anything with ``__cuda_array_interface__``) on the Solver's GPU runs the device
            path: f, x0 and out all GPU arrays of one dtype, read and written by the library on
            the device with no copy through the host; x comes back as a GPU array of the same
            library (backend "gpu" with one GPU, every method).
        x0 : ndarray, optional
            The initial guess (default the problem's, zero). mg, cg and mgcg start from zero
            only so far (another x0: hetrelax.UnsupportedError).
        rtol : float, optional
            Stop when ||b - A x|| / ||b|| < rtol (default the Solver's tol; 0: run maxiter).
        maxiter : int, optional
            At most this many iterations (default the Solver's).
        callback : callable, optional
            ``callback(iteration, relative_residual)``, called at every check (mg, cg: every
            iteration; relaxation: every check_every sweeps); a true return value stops the
            solve (reason "stopped"). An exception it raises stops the solve and propagates.
        out : ndarray, optional
            Where the solution goes (the problem's shape, float32 or float64, writable);
            default a new array (float32 for precision "single", else float64).

        Returns
        -------
        x, info : ndarray of the problem's shape, SolveInfo

        The GIL is released while the library works. Ctrl-C (on the main thread) stops the
        solve at its next check and raises KeyboardInterrupt. A diverged iteration raises
        hetrelax.DivergedError (with .x and .info).
        """
        tol = self.tol if rtol is None else real("rtol", rtol, allow_none=False, minimum=0.0)
        maxiter = self.maxiter if maxiter is None else positive_int("maxiter", maxiter)
        if any(is_device(a) for a in (f, x0, out)):
            df, dx0, dout, out = self._device_arrays(f, x0, out)
            return self._run(None, None, out, tol, maxiter, callback, device=(df, dx0, dout))
        f = self._grid_in("f", f)
        x0 = self._grid_in("x0", x0)
        out = self._out(out)
        return self._run(f, x0, out, tol, maxiter, callback)

    def sweep(self, u, iters, f=None):
        """Runs `iters` sweeps of the relaxation method (jacobi, redblack, sor, and the kernels
        such as async3) from u, and writes the result back into u (float32 or float64,
        C-contiguous, the problem's shape; a GPU array runs the device path, as solve() says).
        No tolerance: exactly `iters` sweeps (for the
        asynchronous kernels, docs/async.md says what a sweep counts). Returns (u, info).
        The handle runs with tol 0 and maxiter iters: another count sets it up again, and a
        Solver made with tol=0, maxiter=iters is set up once for these sweeps."""
        if self.method not in _RELAXATION:
            raise ValueError(f"sweep: method {self.method!r} is not a relaxation method (jacobi, redblack, sor); "
                             "use solve()")
        iters = positive_int("iters", iters, allow_none=False)
        if is_device(u) or is_device(f):
            df, du, _, _ = self._device_arrays(f, u, u, names=("f", "u", "u"))
            return self._run(None, None, u, 0.0, iters, None, device=(df, du, du))
        float_array("u", u, self.problem.shape, writable=True)
        x0 = as_float64(u).reshape(-1)
        return self._run(self._grid_in("f", f), x0, u, 0.0, iters, None)

    def aspreconditioner(self):
        """One multigrid cycle as a scipy.sparse.linalg.LinearOperator approximating A^-1, for
        A of hetrelax.system(problem) (vectors in its order: the grid flattened, x fastest).

        The C API has no "apply one cycle" entry: each application is a solve of the same
        operator with zero boundary data, f = r / W (W the cell widths: b = W f), from a zero
        guess, tol 0 and maxiter 1: exactly one cycle, linear in r. It uses this Solver's
        multigrid options (cycle, smoother, pre, post, levels) and placement, whatever its
        method; its post-smoothing runs backwards, so it is symmetric for the default redblack
        smoother (CG takes it)."""
        try:
            from scipy.sparse.linalg import LinearOperator
        except ImportError as e:  # pragma: no cover - SciPy is optional
            raise ImportError("aspreconditioner needs SciPy (apt-get install python3-scipy)") from e
        if self._pc is None:
            keep = ("cycle", "smoother", "pre", "post", "levels", "backend", "threads", "bind", "device",
                    "precision")
            opts = {k: v for k, v in self._opts.items() if k in keep}
            opts["method"] = list(_NAMES["method"]).index("mg")
            opts["symmetric"] = True  # post-smoothing backwards: a symmetric operator
            pc = object.__new__(Solver)
            pc.problem = self.problem._homogeneous()
            pc.method, pc.tol, pc.maxiter = "mg", 0.0, 1
            pc._opts, pc._single, pc._lock = opts, False, threading.Lock()
            pc._key = pc._h = pc._pc = None
            pc._handle(0.0, 1, False)
            self._pc = (pc, 1.0 / self.problem._widths().reshape(-1))
        pc, inv_w = self._pc
        n = self.problem.size

        def apply(r):
            r = np.asarray(r, dtype=np.float64).reshape(-1)
            x, _ = pc._run(r * inv_w, None, np.empty(n), 0.0, 1, None)
            return x

        return LinearOperator((n, n), matvec=apply, rmatvec=apply, dtype=np.float64)

    def request_stop(self):
        """Asks a solve running in another thread to stop at its next check (reason "stopped")."""
        if self._h is not None:
            self._h.request_stop()

    @property
    def info(self):
        """What the handle runs: method, precision, backend, engine, kernel, threads, gpus,
        omega, general (the general-problem engine), singular."""
        if self._h is None:
            raise ValueError("the solver is closed")
        return self._h.info()

    def close(self):
        """Releases the handle (threads, GPU memory) now rather than at garbage collection."""
        if self._h is not None:
            self._h.close()
            self._h = None
        if self._pc is not None:
            self._pc[0].close()
            self._pc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._h is None else ", ".join(f"{k}={v}" for k, v in self._h.info().items()
                                                           if k in ("method", "backend", "engine", "kernel"))
        return f"Solver({self.problem!r}, {state})"


def solve(problem, f=None, method="mg", x0=None, rtol=1e-8, maxiter=None, callback=None, **options):
    """One call: Solver(problem, method, tol=rtol, maxiter=maxiter, **options).solve(f, x0,
    callback=callback). Returns (x, info)."""
    with Solver(problem, method=method, tol=rtol, maxiter=maxiter, _monitor=callback is not None, **options) as s:
        return s.solve(f, x0, callback=callback)


def system(problem, f=None, format="csr"):
    """The discrete system A x = b of a problem (hr_problem_matrix, hr_problem_rhs): A symmetric,
    one row per unknown in the grid's flattened order (x fastest); b flat, with f (the
    problem's, or this array) and the boundary conditions' contributions, projected onto A's
    range when the problem is singular.

    format "csr": (scipy.sparse.csr_matrix, b) (needs SciPy); "arrays": ((indptr, indices,
    data, shape), b) without SciPy. x.reshape(problem.shape) is the grid."""
    if not isinstance(problem, Poisson):
        raise TypeError(f"problem: expected a hetrelax.Poisson, got {type(problem).__name__}")
    if format not in ("csr", "arrays"):
        raise ValueError(f"format: 'csr' or 'arrays', got {format!r}")
    if format == "csr":
        try:
            import scipy.sparse
        except ImportError as e:  # pragma: no cover - SciPy is optional
            raise ImportError("system(format='csr') needs SciPy (apt-get install python3-scipy); "
                              "format='arrays' does not") from e
    fa = None
    if f is not None:
        fa = as_float64(float_array("f", f, problem.shape)).reshape(-1)
    desc = problem._desc()
    A = _c.problem_matrix(desc)
    b, _info = _c.problem_rhs(desc, fa)
    indptr, indices, data = A.arrays()
    if format == "arrays":
        return (indptr, indices, data, A.shape), b
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=A.shape), b
