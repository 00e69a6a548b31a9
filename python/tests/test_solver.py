"""hetrelax.Solver, solve, sweep, system, aspreconditioner: results against the assembled
system and the command, determinism, options, callbacks, the GIL, and bad input."""
import inspect
import json
import os
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import hetrelax
from conftest import finish, plate, run_python


# SciPy renamed cg's tol to rtol (1.12); atol=0: relative only
CG_TOL = {"rtol" if "rtol" in inspect.signature(spla.cg).parameters else "tol": 1e-10, "atol": 0.0}


def exact(p, f=None):
    A, b = hetrelax.system(p, f)
    return spla.spsolve(A.tocsc(), b).reshape(p.shape)


@pytest.mark.parametrize(
    "method, opts",
    [("mg", {}), ("cg", {}), ("mgcg", {}), ("sor", {"maxiter": 20000}), ("redblack", {"maxiter": 20000}),
     ("jacobi", {"omega": 0.8, "maxiter": 100000}), ("mg", {"cycle": "w", "smoother": "jacobi", "pre": 3,
                                                             "post": 1}),
     ("mg", {"cycle": "fmg", "smoother": "cheby"}), ("mg", {"levels": 2, "threads": 1})],
)
def test_every_method_solves_the_assembled_system(method, opts):
    p = plate()
    ref = exact(p)
    u, info = hetrelax.solve(p, method=method, rtol=1e-11, **opts)
    assert info.converged and info.reason == "converged" and info.relative_residual < 1e-11
    assert info.method == method and info.engine == "general"
    assert np.abs(u - ref).max() < 1e-8 * np.abs(ref).max()


def test_model_problem_engines_3d_and_the_manufactured_solution():
    p = hetrelax.Poisson((15, 15, 15), f="manufactured")
    with hetrelax.Solver(p, method="mg", tol=1e-10) as s:
        u, info = s.solve()
        assert s.info["engine"] == "mg" and not s.info["general"]
    assert u.shape == (15, 15, 15) and info.converged
    assert np.abs(u - exact(p)).max() < 1e-8
    z, y, x = np.meshgrid(*p.coordinates(), indexing="ij")
    assert np.abs(u - np.sin(np.pi * x) * np.sin(np.pi * y) * np.sin(np.pi * z)).max() < 5e-3  # O(h^2)


def test_singular_problem_reports_the_projection():
    f = 1.0 + np.random.default_rng(4).standard_normal((16, 16))  # mean about 1: not compatible
    p = hetrelax.Poisson((16, 16), bc="all=neumann", f=f)
    u, info = hetrelax.solve(p, rtol=1e-10)
    A, b = hetrelax.system(p)
    assert abs(b.sum()) < 1e-10 * np.abs(b).sum()  # projected onto A's range
    assert 0.3 < info.rhs_projection < 1.0
    assert abs(u.sum()) < 1e-8 * np.abs(u).sum()  # the zero-sum solution
    assert np.linalg.norm(A @ u.ravel() - b) < 1e-9 * np.linalg.norm(b)


def test_solve_f_x0_out_and_float32():
    p = plate()
    rng = np.random.default_rng(3)
    f = rng.standard_normal(p.shape)
    s = hetrelax.Solver(p, method="cg", tol=1e-12)
    u, _ = s.solve(f)
    assert np.abs(u - exact(p, f)).max() < 1e-9
    u32, _ = s.solve(f.astype(np.float32))  # f in fp32: converted once
    assert np.abs(u32 - exact(p, f.astype(np.float32).astype(np.float64))).max() < 1e-9
    flat, _ = s.solve(f.ravel())  # flat f: the same, the solution in the grid's shape
    assert flat.shape == p.shape and np.array_equal(flat, u)
    out = np.zeros(p.shape)
    x, _ = s.solve(f, out=out)
    assert x is out and np.array_equal(out, u)
    out32 = np.zeros(p.shape, dtype=np.float32)
    s.solve(f, out=out32)
    assert np.array_equal(out32, u.astype(np.float32))
    # relaxation takes an initial guess: starting from the solution it is converged at once
    j = hetrelax.Solver(p, method="sor", tol=1e-9, maxiter=5000, check_every=10)
    _, info = j.solve(f, x0=u)
    assert info.iterations <= 10 and info.converged


def test_single_precision_model_problem_returns_float32():
    p = hetrelax.Poisson((63, 63), f="manufactured")
    u, info = hetrelax.solve(p, method="mg", precision="single", rtol=1e-4)
    assert u.dtype == np.float32 and info.precision == "single" and info.converged
    assert np.abs(u - exact(p)).max() < 1e-4


def test_deterministic_threads_bitwise_equal_to_cpu_seq():
    p = plate((33, 47))
    ref, _ = hetrelax.solve(p, method="mg", backend="cpu-seq", rtol=1e-10)
    for threads in (1, 2, 3):
        u, info = hetrelax.solve(p, method="mg", backend="cpu-threads", threads=threads, rtol=1e-10)
        assert info.backend == "cpu-threads"
        assert np.array_equal(u, ref)


def test_history_and_tolerance_changes():
    p = plate()
    s = hetrelax.Solver(p, method="mg", tol=1e-4, keep_history=True)
    _, loose = s.solve()
    _, tight = s.solve(rtol=1e-11)  # another tolerance: the handle is set up again
    assert loose.iterations < tight.iterations and tight.relative_residual < 1e-11
    it, res = zip(*tight.history)
    assert list(it) == sorted(it) and len(it) >= tight.iterations
    assert res[-1] == pytest.approx(tight.relative_residual, rel=1e-6)
    _, capped = s.solve(rtol=1e-14, maxiter=2)
    assert capped.iterations == 2 and capped.reason == "iterations" and not capped.converged
    assert hetrelax.Solver(p).solve()[1].history is None


def test_callback_sees_every_cycle_and_can_stop():
    p = plate()
    seen = []
    u, info = hetrelax.solve(p, rtol=1e-12, callback=lambda it, r: seen.append((it, r)))
    assert [i for i, _ in seen][: info.iterations] == list(range(1, info.iterations + 1))
    assert all(b < a for (_, a), (_, b) in zip(seen, seen[1:]))
    _, info = hetrelax.solve(p, rtol=1e-12, callback=lambda it, r: it >= 3)
    assert info.reason == "stopped" and info.iterations == 3 and not info.converged


def test_callback_exception_propagates():
    p = plate()

    def boom(it, r):
        if it == 2:
            raise ZeroDivisionError("from the callback")

    s = hetrelax.Solver(p, tol=1e-12)
    with pytest.raises(ZeroDivisionError, match="from the callback"):
        s.solve(callback=boom)
    _, info = s.solve(callback=lambda it, r: None)  # the Solver is usable after
    assert info.converged


def test_solve_from_own_callback_is_refused():
    p = plate()
    s = hetrelax.Solver(p, tol=1e-12)
    with pytest.raises(RuntimeError, match="under way"):
        s.solve(callback=lambda it, r: s.solve())


def long_jacobi(**kw):
    """A relaxation solve of ~10 s that checks its residual often."""
    p = hetrelax.Poisson((255, 255), f="spike")
    return hetrelax.Solver(p, method="jacobi", backend="cpu-seq", tol=1e-30, maxiter=500000, check_every=100, **kw)


def test_gil_is_released_during_a_solve():
    s = long_jacobi()
    count = [0]
    done = threading.Event()

    def spin():
        while not done.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.05)

    def stop_later():
        time.sleep(0.5)
        s.request_stop()

    threading.Thread(target=stop_later).start()
    before = count[0]
    t0 = time.perf_counter()
    _, info = s.solve()
    during = count[0] - before
    elapsed = time.perf_counter() - t0
    done.set()
    t.join()
    assert info.reason == "stopped" and 0 < info.iterations < 500000  # request_stop from a thread
    assert elapsed < 5
    assert during > 10000, f"the spinning thread ran {during} times in {elapsed:.2f} s of solve"


def test_two_solvers_in_two_threads():
    p, q = plate(), plate((20, 12))
    ref = [hetrelax.solve(p, rtol=1e-10)[0], hetrelax.solve(q, method="cg", rtol=1e-10)[0]]
    out = [None, None]

    def work(i, prob, method):
        with hetrelax.Solver(prob, method=method, tol=1e-10, threads=1) as s:
            for _ in range(20):
                out[i] = s.solve()[0]

    ts = [threading.Thread(target=work, args=(0, p, "mg")), threading.Thread(target=work, args=(1, q, "cg"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert np.array_equal(out[0], ref[0]) and np.array_equal(out[1], ref[1])


def test_ctrl_c_stops_a_long_solve():
    # Python's own handler, as in an interactive session (a shell's background job would
    # otherwise hand the child SIGINT ignored)
    code = """
import signal; signal.signal(signal.SIGINT, signal.default_int_handler)
import sys, time, numpy as np, hetrelax
p = hetrelax.Poisson((255, 255), f="spike")
s = hetrelax.Solver(p, method="jacobi", backend="cpu-seq", tol=1e-30, maxiter=10**7, check_every=100)
print("solving", flush=True)
t = time.perf_counter()
try:
    s.solve()
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted %.2f" % (time.perf_counter() - t), flush=True)
_, info = s.solve(maxiter=200)   # the Solver still works, and Python's own handler is back
print("after", info.iterations, info.reason, flush=True)
import signal
print("handler", signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
"""
    proc = run_python(code)
    assert proc.stdout.readline().strip() == "solving"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = finish(proc)
    lines = out.split("\n")
    assert lines[0].startswith("interrupted"), (out, err)
    assert float(lines[0].split()[1]) < 5
    assert lines[1] == "after 200 iterations" and lines[2] == "handler True", (out, err)
    assert proc.returncode == 0


def test_sweep_in_place_async_and_deterministic():
    p = hetrelax.Poisson((63, 63), f="spike")
    s = hetrelax.Solver(p, method="jacobi", backend="cpu-seq")
    a = np.zeros(p.shape)
    s.sweep(a, 10)
    ret, info = s.sweep(a, 10)
    b = np.zeros(p.shape)
    s.sweep(b, 20)
    assert ret is a and info.iterations == 10 and info.reason == "iterations"
    assert np.array_equal(a, b)  # 10 + 10 sweeps from the first's result == 20 sweeps
    u32 = np.zeros(p.shape, dtype=np.float32)
    s.sweep(u32, 20)
    assert np.array_equal(u32, b.astype(np.float32))
    fast = hetrelax.Solver(p, method="jacobi", kernel="async3", alpha=30)
    assert fast.info["kernel"] == "async3"
    u = np.zeros(p.shape)
    r0 = np.linalg.norm(hetrelax.system(p)[1])
    A, bvec = hetrelax.system(p)
    _, info = fast.sweep(u, 20)
    r1 = np.linalg.norm(bvec - A @ u.ravel()) / r0
    # async3's residual does not fall monotonically (20 sweeps reach 0.09-0.40, depending on the
    # threads' timing): 2000 more reach below 0.03
    fast.sweep(u, 2000)
    r2 = np.linalg.norm(bvec - A @ u.ravel()) / r0
    assert r2 < r1 < 1.0
    with pytest.raises(ValueError, match="relaxation"):
        hetrelax.Solver(p).sweep(u, 3)


def test_same_as_the_command_general_problem(cli, tmp_path):
    ny, nx = 30, 50
    face = np.linspace(0.0, 1.0, ny)
    face.tofile(tmp_path / "xm.raw")
    coef = 1.0 + np.random.default_rng(5).random((ny, nx))
    coef.tofile(tmp_path / "coef.raw")
    bc = f"x-=dirichlet:{tmp_path / 'xm.raw'},x+=dirichlet:0.5,y-=neumann:0.25,y+=dirichlet:1"
    subprocess.run([cli, "poisson2d", "--nx", str(nx), "--ny", str(ny), "--lx", "1", "--ly", "0.6", "--bc", bc,
                    "--coef", str(tmp_path / "coef.raw"), "--rhs", "manufactured", "--method", "mg", "--tol", "1e-9",
                    "--backend", "cpu-seq", "--precision", "double", "--quiet", "--no-bandwidth",
                    "--output", str(tmp_path / "u.raw"), "--json", str(tmp_path / "r.json")], check=True,
                   capture_output=True)
    p = hetrelax.Poisson((ny, nx), lengths=(0.6, 1.0), bc=bc, coef=coef, f="manufactured")
    u, info = hetrelax.solve(p, method="mg", rtol=1e-9, backend="cpu-seq")
    ref = np.fromfile(tmp_path / "u.raw", dtype=np.float64).reshape(ny, nx)
    rec = json.loads((tmp_path / "r.json").read_text())
    assert np.array_equal(u, ref)
    assert info.iterations == rec["iterations"] and info.relative_residual == rec["relative_residual"]


def test_same_as_the_command_model_jacobi(cli, tmp_path):
    n = 64
    subprocess.run([cli, "poisson2d", "--n", str(n), "--iters", "300", "--backend", "cpu-seq", "--precision",
                    "double", "--quiet", "--no-bandwidth", "--output", str(tmp_path / "u.raw")], check=True,
                   capture_output=True)
    p = hetrelax.Poisson((n, n), f="spike")
    u = np.zeros(p.shape)
    hetrelax.Solver(p, method="jacobi", backend="cpu-seq").sweep(u, 300)
    assert np.array_equal(u, np.fromfile(tmp_path / "u.raw", dtype=np.float64).reshape(n, n))


def test_aspreconditioner_in_scipy_cg():
    p = plate((40, 60))
    A, b = hetrelax.system(p)
    M = hetrelax.Solver(p, method="mg").aspreconditioner()
    assert M.shape == A.shape
    rng = np.random.default_rng(2)
    v, w = rng.standard_normal(A.shape[0]), rng.standard_normal(A.shape[0])
    assert abs(v @ (M @ w) - w @ (M @ v)) < 1e-10 * abs(v @ (M @ w))  # symmetric
    assert np.array_equal(M @ (2 * v), 2 * (M @ v))  # linear (one cycle from zero)
    counts = {}
    for name, pc in (("none", None), ("mg", M)):
        n = [0]
        x, rc = spla.cg(A, b, M=pc, callback=lambda xk: n.__setitem__(0, n[0] + 1), maxiter=2000, **CG_TOL)
        assert rc == 0
        counts[name] = n[0]
        assert np.linalg.norm(b - A @ x) < 1e-9 * np.linalg.norm(b)
    assert counts["mg"] * 5 < counts["none"], counts


def test_system_arrays_without_scipy_format():
    p = plate()
    (indptr, indices, data, shape), b = hetrelax.system(p, format="arrays")
    A, b2 = hetrelax.system(p)
    assert shape == A.shape and np.array_equal(indptr, A.indptr) and np.array_equal(data, A.data)
    assert np.array_equal(b, b2)
    assert (A != A.T).nnz == 0  # symmetric


class FakeGpuArray:
    """A GPU array as the package sees one (its pointer is never read: every case below is refused
    before the library touches it)."""

    def __init__(self, shape=(12, 20), typestr="<f8", ptr=4096, readonly=False, strides=None, mask=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "mask": mask, "version": 3, "stream": None}


@pytest.mark.parametrize(
    "make, exc, words",
    [
        (lambda p: hetrelax.Solver("p"), TypeError, "Poisson"),
        (lambda p: hetrelax.Solver(p, method="multigrid"), ValueError, "method: unknown value 'multigrid'"),
        (lambda p: hetrelax.Solver(p, backend="cuda"), ValueError, "backend"),
        (lambda p: hetrelax.Solver(p, precision="half"), ValueError, "precision"),
        (lambda p: hetrelax.Solver(p, cycle="x"), ValueError, "cycle"),
        (lambda p: hetrelax.Solver(p, bind="socket"), ValueError, "bind"),
        (lambda p: hetrelax.Solver(p, colour=1), TypeError, "unknown option 'colour'"),
        (lambda p: hetrelax.Solver(p, tol=-1), ValueError, "tol"),
        (lambda p: hetrelax.Solver(p, maxiter=0), ValueError, "maxiter"),
        (lambda p: hetrelax.Solver(p, maxiter=5, max_iters=5), TypeError, "not both"),
        (lambda p: hetrelax.Solver(p, threads=2.5), TypeError, "threads"),
        (lambda p: hetrelax.Solver(p, omega="big"), TypeError, "omega"),
        (lambda p: hetrelax.Solver(p, method="jacobi", omega=3.0), hetrelax.InvalidArgumentError, "omega"),
        (lambda p: hetrelax.Solver(p, smoother="gauss"), hetrelax.InvalidArgumentError, "smoother"),
        (lambda p: hetrelax.Solver(p, method="jacobi", kernel="async3"), hetrelax.InvalidArgumentError, "kernel"),
        (lambda p: hetrelax.Solver(p, precision="single"), hetrelax.UnsupportedError, "precision"),
        (lambda p: hetrelax.Solver(p).solve(np.ones((3, 3))), ValueError, "f: expected shape (12, 20)"),
        (lambda p: hetrelax.Solver(p).solve(np.ones((12, 20), dtype=np.int32)), TypeError, "f: dtype"),
        (lambda p: hetrelax.Solver(p).solve(np.ones((20, 12)).T), ValueError, "f: the array must be C-contiguous"),
        (lambda p: hetrelax.Solver(p, backend="cpu-seq").solve(FakeGpuArray(), out=FakeGpuArray()),
         hetrelax.UnsupportedError, "device arrays: this handle runs on cpu-seq"),
        (lambda p: hetrelax.Solver(p, backend="cpu-seq").solve(FakeGpuArray()), TypeError,
         "out: the package makes CuPy and PyTorch GPU arrays"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(), out=np.zeros((12, 20))), TypeError,
         "out: a numpy.ndarray beside the GPU array f"),
        (lambda p: hetrelax.Solver(p).solve(np.zeros((12, 20)), x0=FakeGpuArray()), TypeError,
         "f: a numpy.ndarray beside the GPU array x0"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(typestr="<i4")), TypeError, "f: dtype"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(typestr=">f8")), TypeError, "f: dtype"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(shape=(20, 12))), ValueError, "f: expected shape (12, 20)"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(strides=(8, 96))), ValueError, "f: the array must be C-contiguous"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(mask=1)), ValueError, "f: masked"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(ptr=0)), ValueError, "f: a null device pointer"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(), out=FakeGpuArray(readonly=True)), ValueError,
         "out: the array is read-only"),
        (lambda p: hetrelax.Solver(p).solve(FakeGpuArray(), out=FakeGpuArray(typestr="<f4")), TypeError,
         "share one dtype"),
        (lambda p: hetrelax.Solver(p, method="jacobi").sweep(FakeGpuArray(readonly=True), 3), ValueError,
         "u: the array is read-only"),
        (lambda p: hetrelax.Poisson((12, 20), coef=FakeGpuArray()), TypeError, "coef: a GPU array of type"),
        (lambda p: hetrelax.Solver(p).solve(rtol=-1.0), ValueError, "rtol"),
        (lambda p: hetrelax.Solver(p).solve(maxiter=0), ValueError, "maxiter"),
        (lambda p: hetrelax.Solver(p).solve(callback=3), TypeError, "callback"),
        (lambda p: hetrelax.Solver(p).solve(out=np.zeros((12, 20), dtype=np.int64)), TypeError, "out"),
        (lambda p: hetrelax.Solver(p).solve(out=np.zeros((12, 20))[::1, ::1].T.copy()), ValueError, "out"),
        (lambda p: hetrelax.Solver(p, method="jacobi").sweep(np.zeros((12, 20)), 0), ValueError, "iters"),
        (lambda p: hetrelax.Solver(p, method="jacobi").sweep(np.zeros((12, 20)).T, 1), ValueError, "u"),
        (lambda p: hetrelax.system(p, format="coo"), ValueError, "format"),
        (lambda p: hetrelax.system(p, np.ones(5)), ValueError, "f"),
        (lambda p: hetrelax.system("p"), TypeError, "Poisson"),
    ],
)
def test_bad_arguments(make, exc, words):
    with pytest.raises(exc, match=words.replace("(", r"\(").replace(")", r"\)")):
        make(plate())


def test_read_only_out_and_closed_solver():
    p = plate()
    ro = np.zeros(p.shape)
    ro.flags.writeable = False
    s = hetrelax.Solver(p)
    with pytest.raises(ValueError, match="read-only"):
        s.solve(out=ro)
    s.close()
    with pytest.raises(ValueError, match="closed"):
        s.info
    assert "closed" in repr(s)


def test_gpu_backend_refused_without_a_gpu(has_gpu):
    if has_gpu:
        pytest.skip("a GPU is present (the gpu tests run it)")
    p = hetrelax.Poisson((31, 31), f="spike")
    with pytest.raises(hetrelax.Error) as e:
        hetrelax.Solver(p, method="mg", backend="gpu")
    assert isinstance(e.value, (hetrelax.NoDeviceError, hetrelax.UnsupportedError))
    assert str(e.value)


@pytest.mark.gpu
def test_gpu_multigrid_matches_the_cpu(gpu):
    p = hetrelax.Poisson((255, 255), f="manufactured")
    ref, _ = hetrelax.solve(p, method="mg", backend="cpu-seq", rtol=1e-10)
    u, info = hetrelax.solve(p, method="mg", backend="gpu", rtol=1e-10)
    assert info.backend == "gpu" and info.converged
    assert np.abs(u - ref).max() < 1e-8 * np.abs(ref).max()


@pytest.mark.gpu
def test_gpu_jacobi_sweeps_bitwise_cpu_seq(gpu):
    p = hetrelax.Poisson((127, 127), f="spike")
    ref = np.zeros(p.shape)
    hetrelax.Solver(p, method="jacobi", backend="cpu-seq").sweep(ref, 100)
    u = np.zeros(p.shape)
    s = hetrelax.Solver(p, method="jacobi", backend="gpu")
    s.sweep(u, 100)
    assert np.array_equal(u, ref)
    a = np.zeros(p.shape)
    hetrelax.Solver(p, method="jacobi", backend="gpu", kernel="async3", alpha=8).sweep(a, 100)
    assert np.isfinite(a).all() and np.abs(a).max() > 0


def test_divergence_raises_with_the_last_iterate():
    p = hetrelax.Poisson((31, 31), f="spike")
    s = hetrelax.Solver(p, method="jacobi", omega=1.5, tol=1e-10, maxiter=20000, check_every=10)
    with pytest.raises(hetrelax.DivergedError) as e:
        s.solve()
    assert e.value.info.reason.startswith("diverged") and e.value.x.shape == p.shape
    assert e.value.status_name == "iteration diverged" and isinstance(e.value, hetrelax.Error)
    assert not np.isfinite(e.value.x).all() or np.abs(e.value.x).max() > 1e3 * np.abs(exact(p)).max()


def test_flush_subnormals_option():
    """flush_subnormals=True: no subnormal float left by single-precision Jacobi from the spike
    (the kept run has some: the check can tell)."""
    p = hetrelax.Poisson((512, 512), f="spike")
    counts = []
    for flush in (False, True):
        u = np.zeros(p.shape, dtype=np.float32)
        hetrelax.Solver(p, method="jacobi", backend="cpu-seq", precision="single",
                        flush_subnormals=flush).sweep(u, 400)
        a = np.abs(u)
        counts.append(int(((a > 0) & (a < np.finfo(np.float32).tiny)).sum()))
    assert counts[0] > 0 and counts[1] == 0, counts
