"""GPU arrays in and out (label gpu: skipped without a CUDA device, or without CuPy): the device
path gives the bits of the NumPy path and never copies the arrays through the host."""
import numpy as np
import pytest

import hetrelax

pytestmark = pytest.mark.gpu


@pytest.fixture
def cp(gpu):
    return pytest.importorskip("cupy")


def rhs(shape, seed=3):
    return np.random.default_rng(seed).uniform(-0.5, 0.5, shape)


@pytest.mark.parametrize("precision", ["double", "single", "mixed"])
@pytest.mark.parametrize("method", ["mg", "mgcg"])
def test_model_problem_bitwise_the_numpy_path(cp, method, precision):
    if method == "mgcg" and precision == "single":
        pytest.skip("mgcg runs in double or mixed")
    p = hetrelax.Poisson((127, 255))
    f = rhs(p.shape)
    s = hetrelax.Solver(p, method=method, backend="gpu", precision=precision, tol=0, maxiter=4)
    u, info = s.solve(f, out=np.empty(p.shape))  # the GPU arrays' dtype: f's (float64)
    x, dinfo = s.solve(cp.asarray(f))
    assert isinstance(x, cp.ndarray) and x.shape == p.shape and x.dtype == cp.float64
    assert np.array_equal(cp.asnumpy(x), u)
    assert dinfo.iterations == info.iterations == 4 and dinfo.relative_residual == info.relative_residual
    # fp32 in: the NumPy path of the same rounded values; out float32
    f32 = f.astype(np.float32)
    u32, _ = s.solve(f32, out=np.empty(p.shape, np.float32))
    x32, _ = s.solve(cp.asarray(f32))
    assert x32.dtype == cp.float32 and np.array_equal(cp.asnumpy(x32), u32)


def test_general_problem_every_path(cp):
    p = hetrelax.Poisson((40, 61), lengths=(1.0, 2.0), bc="x-=neumann:0.5,x+=dirichlet:1,y=periodic",
                         coef=1.0 + rhs((40, 61), 5) ** 2)
    f = rhs(p.shape)
    for method in ("mg", "cg", "redblack"):
        s = hetrelax.Solver(p, method=method, backend="gpu", tol=0, maxiter=5)
        u, _ = s.solve(f)
        x, _ = s.solve(cp.asarray(f))
        assert np.array_equal(cp.asnumpy(x), u), method
    s = hetrelax.Solver(p, method="jacobi", backend="gpu", omega=0.8)
    u0 = rhs(p.shape, 9)
    a, b = u0.copy(), cp.asarray(u0)
    s.sweep(a, 17, f=f)
    r, info = s.sweep(b, 17, f=cp.asarray(f))
    assert r is b and info.iterations == 17 and np.array_equal(cp.asnumpy(b), a)


@pytest.mark.parametrize("method,kernel,shape,precision", [
    ("jacobi", None, (37, 61), "double"),
    ("jacobi", "naive", (45, 45), "single"),
    ("jacobi", "tb", (33, 50), "double"),
    ("jacobi", None, (13, 17, 21), "double"),
    ("redblack", None, (37, 61), "single"),
    ("sor", None, (11, 15, 19), "double"),
])
def test_model_problem_relaxation_bitwise_the_numpy_path(cp, method, kernel, shape, precision):
    p = hetrelax.Poisson(shape)  # the model problem: the relaxation engine's own GPU kernels
    opts = {"kernel": kernel, "alpha": 3} if kernel == "tb" else {"kernel": kernel} if kernel else {}
    s = hetrelax.Solver(p, method=method, backend="gpu", precision=precision, **opts)
    dtype = np.float32 if precision == "single" else np.float64
    f, u0 = rhs(shape).astype(dtype), (1e-4 * rhs(shape, 8)).astype(dtype)  # a guess of f's scale
    a, b = u0.copy(), cp.asarray(u0)
    _, info = s.sweep(a, 19, f=f)
    r, dinfo = s.sweep(b, 19, f=cp.asarray(f))
    assert r is b and dinfo.iterations == info.iterations == 19
    assert np.array_equal(cp.asnumpy(b), a)
    assert dinfo.relative_residual == pytest.approx(info.relative_residual, rel=1e-10)
    # a solve to a tolerance from the problem's zero guess: the same iterations and bits
    s = hetrelax.Solver(p, method=method, backend="gpu", precision=precision, tol=1e-3, check_every=10, **opts)
    u, info = s.solve(f)
    x, dinfo = s.solve(cp.asarray(f))
    assert x.dtype == dtype and dinfo.iterations == info.iterations and np.array_equal(cp.asnumpy(x), u.astype(dtype))


def test_async_kernel_from_gpu_arrays(cp):
    p = hetrelax.Poisson((127, 127))
    s = hetrelax.Solver(p, method="jacobi", kernel="async3", alpha=4, backend="gpu")
    f = cp.asarray(rhs(p.shape))
    u = cp.zeros(p.shape)
    _, first = s.sweep(u, 100, f=f)
    assert float(cp.abs(u).max()) > 0
    _, second = s.sweep(u, 100, f=f)
    assert second.relative_residual < 0.9 * first.relative_residual < 0.9


def test_out_given_and_problem_f(cp):
    p = hetrelax.Poisson((63, 63), f="manufactured")
    s = hetrelax.Solver(p, backend="gpu")
    u, _ = s.solve()
    out = cp.empty(p.shape)
    x, info = s.solve(out=out)
    assert x is out and info.converged and np.array_equal(cp.asnumpy(out), u)


def test_torch_tensors_when_present(gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    p = hetrelax.Poisson((63, 127))
    f = rhs(p.shape)
    s = hetrelax.Solver(p, backend="gpu", tol=0, maxiter=3)
    u, _ = s.solve(f)
    x, _ = s.solve(torch.from_numpy(f).cuda())
    assert isinstance(x, torch.Tensor) and x.is_cuda and np.array_equal(x.cpu().numpy(), u)


def test_refused_where_the_engine_takes_host_arrays(cp):
    p = hetrelax.Poisson((31, 31), f="spike")
    f = cp.zeros(p.shape)
    with pytest.raises(hetrelax.UnsupportedError, match="cpu-threads"):
        hetrelax.Solver(p, backend="cpu-threads").solve(f, out=cp.empty(p.shape))
    with pytest.raises(hetrelax.UnsupportedError, match="hybrid"):
        hetrelax.Solver(p, method="jacobi", backend="hybrid").sweep(f, 3)
    with pytest.raises(hetrelax.UnsupportedError, match="x0"):
        hetrelax.Solver(p, backend="gpu").solve(f, x0=f)


def test_sparse_with_gpu_vectors(cp):
    pytest.importorskip("scipy.sparse")
    cpsp = pytest.importorskip("cupyx.scipy.sparse")
    p = hetrelax.Poisson((30, 40))
    A, b = hetrelax.system(p, f=rhs(p.shape))  # SciPy CSR, NumPy b
    for method in ("jacobi", "cg"):
        xh, ih = hetrelax.sparse.solve(A, b, method=method, backend="gpu", rtol=1e-9, maxiter=100000)
        xd, idv = hetrelax.sparse.solve(cpsp.csr_matrix(A), cp.asarray(b), method=method, rtol=1e-9, maxiter=100000)
        assert isinstance(xd, cp.ndarray) and xd.dtype == cp.float64 and idv.backend == "gpu"
        assert idv.iterations == ih.iterations and np.array_equal(cp.asnumpy(xd), xh), method
    # async from fp32 vectors: x0 is not modified; the answer checked on the host
    b32 = cp.asarray(b, dtype=cp.float32)
    x0 = cp.full(b.shape, 0.1, dtype=cp.float32)
    keep = x0.copy()
    x, info = hetrelax.sparse.solve(A, b32, x0=x0, method="async", rtol=1e-8, maxiter=100000)
    assert info.converged and bool(cp.array_equal(x0, keep))
    bh = cp.asnumpy(b32).astype(np.float64)
    assert np.linalg.norm(bh - A @ cp.asnumpy(x)) / np.linalg.norm(bh) < 1.01e-8
    with pytest.raises(TypeError, match="x0"):
        hetrelax.sparse.solve(A, cp.asarray(b), x0=np.zeros(b.shape))
    with pytest.raises(hetrelax.UnsupportedError, match="gpu methods"):
        hetrelax.sparse.solve(A, cp.asarray(b), method="gs", backend="cpu-seq")
