"""hetrelax.sparse: solve and read_mm against SciPy, and their bad input."""
import re
import signal
import time

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import hetrelax
import hetrelax.sparse as hs
from conftest import finish, run_python


def laplace(m):
    t = sp.diags([-np.ones(m - 1), 4 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
    e = sp.diags([-np.ones(m - 1), -np.ones(m - 1)], [-1, 1])
    return (sp.kron(sp.identity(m), t) + sp.kron(e, sp.identity(m))).tocsr()


@pytest.mark.parametrize("method, kw", [("async", {"local_iters": 5}), ("async", {"local_iters": 2, "block": 16}),
                                        ("jacobi", {}), ("gs", {}), ("gs-mc", {}), ("cg", {}),
                                        ("jacobi", {"tau": "auto"})])
def test_methods_solve_like_scipy(method, kw):
    A = laplace(12)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    ref = spla.spsolve(A.tocsc(), b)
    x, info = hs.solve(A, b, method=method, rtol=1e-10, maxiter=20000, **kw)
    assert info.converged and info.relative_residual < 1e-10 and info.method == method
    assert x.dtype == np.float64 and np.abs(x - ref).max() < 1e-8 * np.abs(ref).max()
    assert info.relative_residual == pytest.approx(np.linalg.norm(b - A @ x) / np.linalg.norm(b), rel=1e-6)


def test_the_structured_system_and_arrays_forms():
    p = hetrelax.Poisson((10, 14), bc={"x-": ("neumann", 1.0), "y+": 1.0}, coef=2.0)
    A, b = hetrelax.system(p)
    u, _ = hetrelax.solve(p, rtol=1e-11)
    x, info = hs.solve(A, b, method="cg", rtol=1e-11)
    assert np.abs(x - u.ravel()).max() < 1e-8
    y, _ = hs.solve((A.indptr, A.indices, A.data), b, method="cg", rtol=1e-11)
    z, _ = hs.solve((A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data, A.shape), b.astype(np.float32),
                    method="cg", rtol=1e-6)
    assert np.array_equal(x, y) and np.abs(z - x).max() < 1e-4 * np.abs(x).max()
    w, _ = hs.solve(A.tocoo(), b, method="cg", rtol=1e-11)  # any SciPy format: .tocsr()
    assert np.array_equal(w, x)


def test_x0_and_maxiter_and_callback():
    A = laplace(10)
    b = np.ones(A.shape[0])
    ref = spla.spsolve(A.tocsc(), b)
    x, info = hs.solve(A, b, x0=ref, method="jacobi", rtol=1e-8)
    assert info.iterations <= 1 and info.converged
    _, info = hs.solve(A, b, method="jacobi", rtol=1e-14, maxiter=7)
    assert info.iterations == 7 and info.reason == "iterations"
    seen = []
    _, info = hs.solve(A, b, method="async", rtol=1e-12, callback=lambda it, r: seen.append(it) or it >= 4)
    assert info.reason == "stopped" and info.iterations == 4 and seen[-1] == 4
    with pytest.raises(KeyError):
        hs.solve(A, b, method="gs", callback=lambda it, r: {}["x"])


def test_duplicates_are_summed():
    indptr = np.array([0, 3, 5], dtype=np.int32)
    indices = np.array([0, 0, 1, 0, 1], dtype=np.int32)
    data = np.array([1.0, 2.0, -1.0, -1.0, 3.0])  # row 0: a00 = 1 + 2
    x, info = hs.solve((indptr, indices, data), np.array([2.0, 1.0]), method="cg", rtol=1e-14)
    ref = np.linalg.solve([[3.0, -1.0], [-1.0, 3.0]], [2.0, 1.0])
    assert np.allclose(x, ref, rtol=1e-12, atol=0)


def test_divergence_raises_with_the_iterate():
    A = laplace(6)
    b = np.ones(A.shape[0])
    with pytest.raises(hetrelax.DivergedError) as e:
        hs.solve(A, b, method="jacobi", tau=1.99, rtol=1e-10, maxiter=5000)
    assert e.value.info.reason.startswith("diverged") and e.value.x.shape == b.shape
    assert isinstance(e.value, hetrelax.Error)


def test_read_mm(tmp_path):
    A = laplace(5)
    scipy.io.mmwrite(str(tmp_path / "a.mtx"), A)  # general
    scipy.io.mmwrite(str(tmp_path / "s.mtx"), sp.tril(A).tocoo(), symmetry="symmetric")
    scipy.io.mmwrite(str(tmp_path / "v.mtx"), np.arange(4.0).reshape(4, 1))
    for name in ("a.mtx", "s.mtx"):
        B = hs.read_mm(tmp_path / name)
        assert sp.isspmatrix_csr(B) and B.shape == A.shape and abs(B - A).max() == 0
    assert np.array_equal(hs.read_mm(str(tmp_path / "v.mtx")), np.arange(4.0))
    (tmp_path / "bad.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n9 1 2.0\n")
    with pytest.raises(hetrelax.FormatError, match=re.escape("bad.mtx:4")):
        hs.read_mm(tmp_path / "bad.mtx")
    with pytest.raises(OSError):
        hs.read_mm(tmp_path / "missing.mtx")


class FakeGpuArray:
    """A GPU array as the package sees one (its pointer is never read: refused before)."""

    def __init__(self, shape=(4,), ptr=0):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f8", "data": (ptr, False), "version": 3}


def _zero_diag():
    return sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 2.0]]))


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda A, b: hs.solve("A", b), TypeError, "A: a SciPy sparse matrix"),
        (lambda A, b: hs.solve(A[:, :-1], b), ValueError, "square"),
        (lambda A, b: hs.solve(A, b[:-1]), ValueError, "b: expected shape"),
        (lambda A, b: hs.solve(A, b.astype(np.int64)), TypeError, "b: dtype"),
        (lambda A, b: hs.solve(A, np.stack([b, b], axis=1)[:, 0]), ValueError, "b: the array must be C-contiguous"),
        (lambda A, b: hs.solve(A, FakeGpuArray()), ValueError, "b: expected shape"),
        (lambda A, b: hs.solve(A, FakeGpuArray((16,), ptr=4096)), TypeError, "CuPy and PyTorch"),
        (lambda A, b: hs.solve(A, b, x0=FakeGpuArray((16,))), TypeError, "x0: GPU arrays"),
        (lambda A, b: hs.solve(A, b, x0=b[:-1]), ValueError, "x0"),
        (lambda A, b: hs.solve(A, b, method="sor"), hetrelax.InvalidArgumentError, "sor"),
        (lambda A, b: hs.solve(A, b, method=3), TypeError, "method"),
        (lambda A, b: hs.solve(A, b, backend="hybrid"), ValueError, "backend"),
        (lambda A, b: hs.solve(A, b, rtol=-1), ValueError, "rtol"),
        (lambda A, b: hs.solve(A, b, maxiter=0), ValueError, "maxiter"),
        (lambda A, b: hs.solve(A, b, local_iters=0), ValueError, "local_iters"),
        (lambda A, b: hs.solve(A, b, callback="no"), TypeError, "callback"),
        (lambda A, b: hs.solve(_zero_diag(), b[:2], method="jacobi"), hetrelax.InvalidArgumentError, "diagonal"),
        (lambda A, b: hs.solve((A.indptr[:-1], A.indices, A.data), b), ValueError, "indptr"),
        (lambda A, b: hs.solve((A.indptr, A.indices + 100, A.data), b), ValueError, "column index"),
        (lambda A, b: hs.solve((A.indptr, A.indices, A.data[:-1]), b), ValueError, "indices and"),
        (lambda A, b: hs.solve((A.indptr, A.indices, list(A.data)), b), TypeError, "data must be a NumPy array"),
    ],
)
def test_bad_arguments(call, exc, words):
    A = laplace(4)
    with pytest.raises(exc, match=re.escape(words)):
        call(A, np.ones(A.shape[0]))


def test_ctrl_c_stops_a_sparse_solve():
    # Python's own handler, as in an interactive session (a shell's background job would
    # otherwise hand the child SIGINT ignored)
    code = """
import signal; signal.signal(signal.SIGINT, signal.default_int_handler)
import time, numpy as np, scipy.sparse as sp, hetrelax.sparse as hs
m = 200
t = sp.diags([-np.ones(m - 1), 4 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
e = sp.diags([-np.ones(m - 1), -np.ones(m - 1)], [-1, 1])
A = (sp.kron(sp.identity(m), t) + sp.kron(e, sp.identity(m))).tocsr()
print("solving", flush=True)
t = time.perf_counter()
try:
    hs.solve(A, np.ones(A.shape[0]), method="jacobi", rtol=1e-30, maxiter=10**8, backend="cpu-seq")
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted %.2f" % (time.perf_counter() - t), flush=True)
"""
    proc = run_python(code)
    assert proc.stdout.readline().strip() == "solving"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = finish(proc)
    assert out.startswith("interrupted"), (out, err)
    assert float(out.split()[1]) < 5 and proc.returncode == 0
