"""hetrelax.Poisson: shapes in NumPy order, lengths, boundary conditions, coefficients, and
the errors of each argument."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import hetrelax
from conftest import plate


def laplacian_1d(n, h):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]) / h**2


def test_numpy_order_model_problem():
    # (ny, nx) = (3, 5): x fastest, so A = I_y (x) L_x + L_y (x) I_x, built here independently
    p = hetrelax.Poisson((3, 5))
    assert p.shape == (3, 5) and p.dim == 2 and p.size == 15
    h = 1.0 / 6  # the model problem: h = 1 / (max(n) + 1)
    assert p.spacing == pytest.approx((h, h))
    assert p.lengths == pytest.approx((4 * h, 1.0))
    assert p.is_model and not p.is_singular
    A, b = hetrelax.system(p)
    ref = sp.kron(sp.identity(3), laplacian_1d(5, h)) + sp.kron(laplacian_1d(3, h), sp.identity(5))
    assert A.shape == (15, 15)
    assert abs(A - ref).max() < 1e-9 * abs(ref).max()
    assert np.all(b == 0)  # f = 0 and zero boundary values by default


def test_numpy_order_3d():
    p = hetrelax.Poisson((2, 3, 4), lengths=(1.0, 2.0, 3.0), bc="all=neumann")
    hz, hy, hx = p.spacing
    assert (hx, hy, hz) == pytest.approx((3.0 / 3, 2.0 / 2, 1.0 / 1))  # Neumann: L / (n - 1)
    assert p.is_singular
    z, y, x = p.coordinates()
    assert x == pytest.approx([0, 1, 2, 3]) and y == pytest.approx([0, 1, 2]) and z == pytest.approx([0, 1])


def test_lengths_dict_and_sequence_agree():
    a = hetrelax.Poisson((4, 6), lengths=(0.5, 2.0))
    b = hetrelax.Poisson((4, 6), lengths={"x": 2.0, "y": 0.5})
    assert a.spacing == b.spacing == pytest.approx((0.5 / 5, 2.0 / 7))
    c = hetrelax.Poisson((4, 6), lengths={"x": 2.0})  # y left out: 1
    assert c.lengths == pytest.approx((1.0, 2.0))


def test_coordinates_follow_the_boundary():
    p = hetrelax.Poisson((4, 5), lengths=(1.0, 1.0), bc={"x-": "neumann", "y": "periodic"})
    y, x = p.coordinates()
    assert x == pytest.approx(np.arange(5) / 5.0)  # Neumann low face, Dirichlet high: h = 1 / 5
    assert y == pytest.approx(np.arange(4) / 4.0)  # periodic: h = 1 / 4


def test_bc_string_equals_dict(tmp_path):
    vals = np.linspace(1.0, 2.0, 6)  # the x- face of a (6, 9) grid: one value per y
    path = tmp_path / "face.raw"
    vals.tofile(path)
    s = hetrelax.Poisson((6, 9), bc=f"all=dirichlet:0.5,x-=dirichlet:{path},y=neumann:0.25,y+=neumann:-1")
    d = hetrelax.Poisson((6, 9), bc={"all": ("dirichlet", 0.5), "x-": ("dirichlet", vals),
                                      "y": ("neumann", 0.25), "y+": ("neumann", -1.0)})
    assert s.bc["x+"] == ("dirichlet", 0.5) and s.bc["y-"] == ("neumann", 0.25) and s.bc["y+"] == ("neumann", -1.0)
    As, bs = hetrelax.system(s)
    Ad, bd = hetrelax.system(d)
    assert (As != Ad).nnz == 0
    assert np.array_equal(bs, bd)
    assert np.array_equal(s.bc["x-"][1], vals)


def test_bare_number_is_dirichlet_and_later_items_win():
    a = hetrelax.Poisson((3, 4), bc={"all": 2.0, "x+": "neumann"})
    assert a.bc["x-"] == ("dirichlet", 2.0) and a.bc["x+"] == ("neumann", 0.0)
    b = hetrelax.Poisson((3, 4), bc={"x+": "neumann", "all": 2.0})
    assert b.bc["x+"] == ("dirichlet", 2.0)


def test_face_array_orientation_2d_and_3d():
    # Dirichlet values on x- that grow with y, zero flux elsewhere: the solution grows with y
    # everywhere, and (3-D) does not change along z
    ny, nx = 9, 14
    p = hetrelax.Poisson((ny, nx), bc={"all": "neumann", "x-": ("dirichlet", np.linspace(0, 1, ny))})
    u, _ = hetrelax.solve(p, rtol=1e-10)
    assert np.all(np.diff(u, axis=0) > 0)
    nz, ny, nx = 5, 7, 9
    face = np.tile(np.linspace(0, 1, ny), (nz, 1))  # (nz, ny): y fastest
    q = hetrelax.Poisson((nz, ny, nx), bc={"all": "neumann", "x-": ("dirichlet", face)})
    v, _ = hetrelax.solve(q, rtol=1e-10)
    assert np.all(np.diff(v, axis=1) > 0)
    assert np.abs(v - v[:1]).max() < 1e-8


def test_coef_array_and_float32_inputs():
    rng = np.random.default_rng(1)
    c64 = 1.0 + rng.random((5, 6))
    c32 = c64.astype(np.float32)
    a = hetrelax.Poisson((5, 6), coef=c32)
    b = hetrelax.Poisson((5, 6), coef=c32.astype(np.float64))
    assert a.coef.dtype == np.float64 and not a.coef.flags.writeable
    assert (hetrelax.system(a)[0] != hetrelax.system(b)[0]).nnz == 0
    c64[0, 0] = 99.0  # the problem keeps its own copy
    assert (hetrelax.system(hetrelax.Poisson((5, 6), coef=c64))[0] != hetrelax.system(b)[0]).nnz > 0


def test_f_kinds():
    p = hetrelax.Poisson((7, 7), f="manufactured")
    q = hetrelax.Poisson((7, 7), f="spike")
    _, bq = hetrelax.system(q)
    assert np.count_nonzero(bq) == 1 and bq.reshape(7, 7)[3, 3] > 0
    _, bp = hetrelax.system(p)
    assert np.all(bp > 0)


def _random_f(seed, count):
    """f of "random:SEED" from its definition (docs/problems.md): splitmix64's finaliser m,
    f(q) = (m(q ^ m(seed + 0x9E3779B97F4A7C15)) >> 11) * 2^-53, written out here."""
    M = (1 << 64) - 1

    def fin(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return z ^ (z >> 31)

    key = fin((seed + 0x9E3779B97F4A7C15) & M)
    return np.array([(fin(q ^ key) >> 11) * 2.0**-53 for q in range(count)])


def test_f_random():
    # Dirichlet 0 on every face, one spacing: b = f exactly (no boundary term, whole cells)
    shape = (9, 11, 13)
    want = _random_f(7, 9 * 11 * 13)
    p = hetrelax.Poisson(shape, lengths=(0.5, 1.0, 0.75), f="random:7")
    assert not p.is_model  # a random f runs on the general engine
    _, b = hetrelax.system(p)
    assert np.array_equal(b, want)
    assert b.min() >= 0.0 and b.max() < 1.0 and abs(b.mean() - 0.5) < 0.02
    _, b1 = hetrelax.system(hetrelax.Poisson(shape, lengths=(0.5, 1.0, 0.75), f="random"))
    assert np.array_equal(b1, _random_f(1, b1.size))  # "random": seed 1
    assert np.count_nonzero(b1 != b) > 0.99 * b.size  # another seed, other values
    big = (1 << 64) - 1
    _, bb = hetrelax.system(hetrelax.Poisson((3, 4), lengths=(0.5, 1.0), f=f"random:{big}"))
    assert np.array_equal(bb, _random_f(big, 12))
    # solved with the problem's own f: the discrete system's solution
    q = hetrelax.Poisson((31, 21), f="random:5")
    with hetrelax.Solver(q, method="mg", tol=1e-10) as s:
        u, info = s.solve()
        assert s.info["general"]
    A, b5 = hetrelax.system(q)
    assert info.converged and np.linalg.norm(A @ u.reshape(-1) - b5) < 1e-9 * np.linalg.norm(b5)


def test_repr_and_bc_property():
    p = plate()
    r = repr(p)
    assert "x-=dirichlet:array" in r and "y-=neumann:0.25" in r and "coef=array" in r
    assert set(p.bc) == {"x-", "x+", "y-", "y+"}


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        ({"shape": 5}, TypeError, "shape"),
        ({"shape": (5,)}, ValueError, "2 or 3"),
        ({"shape": (5, 0)}, ValueError, ">= 1"),
        ({"shape": (5, 2.5)}, TypeError, "ints"),
        ({"shape": (4, 4), "lengths": (1.0,)}, ValueError, "lengths"),
        ({"shape": (4, 4), "lengths": (1.0, -1.0)}, ValueError, "length"),
        ({"shape": (4, 4), "lengths": (1.0, float("inf"))}, ValueError, "finite"),
        ({"shape": (4, 4), "lengths": {"z": 1.0}}, ValueError, "axis"),
        ({"shape": (4, 4), "bc": "x-=periodic"}, hetrelax.InvalidArgumentError, "periodic"),
        ({"shape": (4, 4), "bc": {"x-": "periodic"}}, hetrelax.InvalidArgumentError, "periodic"),
        ({"shape": (4, 4), "bc": "q=dirichlet"}, ValueError, "unknown face"),
        ({"shape": (4, 4), "bc": "z-=dirichlet"}, ValueError, "no z faces"),
        ({"shape": (4, 4), "bc": "x=robin:1"}, ValueError, "unknown type"),
        ({"shape": (4, 4), "bc": "x=periodic:1"}, ValueError, "no value"),
        ({"shape": (4, 4), "bc": "x=dirichlet:"}, ValueError, "empty value"),
        ({"shape": (4, 4), "bc": "x=dirichlet:inf"}, ValueError, "not finite"),
        ({"shape": (4, 4), "bc": "x=dirichlet:/no/such/file"}, ValueError, "readable file"),
        ({"shape": (4, 4), "bc": "x,y"}, ValueError, "FACE=TYPE"),
        ({"shape": (4, 4), "bc": 3}, TypeError, "bc"),
        ({"shape": (4, 4), "bc": {"x-": ("dirichlet", np.ones(5))}}, ValueError, "shape (4,)"),
        ({"shape": (4, 4), "bc": {"x-": ("dirichlet", np.ones(4, dtype=np.int64))}}, TypeError, "float"),
        ({"shape": (4, 4), "bc": {"x-": ("dirichlet", float("nan"))}}, ValueError, "finite"),
        ({"shape": (4, 4), "bc": {"x-": ["dirichlet", 1]}}, TypeError, "pair"),
        ({"shape": (4, 4), "coef": 0.0}, ValueError, "> 0"),
        ({"shape": (4, 4), "coef": -np.ones((4, 4))}, hetrelax.InvalidArgumentError, "coef"),
        ({"shape": (4, 4), "coef": np.ones((4, 5))}, ValueError, "coef"),
        ({"shape": (4, 4), "coef": np.ones((4, 4)).T[:, ::2]}, ValueError, "coef"),
        ({"shape": (4, 4), "f": "sine"}, ValueError, "right-hand side"),
        ({"shape": (4, 4), "f": "random:x"}, ValueError, "random:SEED"),
        ({"shape": (4, 4), "f": "random:-1"}, ValueError, "random:SEED"),
        ({"shape": (4, 4), "f": "random:"}, ValueError, "random:SEED"),
        ({"shape": (4, 4), "f": "random:18446744073709551616"}, ValueError, "random:SEED"),
        ({"shape": (4, 4), "f": [[0.0] * 4] * 4}, TypeError, "NumPy array"),
        ({"shape": (4, 4), "f": np.ones((4, 4), order="F")[:, :3]}, ValueError, "C-contiguous"),
    ],
)
def test_bad_arguments(kwargs, exc, words):
    with pytest.raises(exc, match=re.escape(words)):
        hetrelax.Poisson(**kwargs)


def test_library_errors_are_both_error_and_value_error():
    with pytest.raises(hetrelax.Error) as e:
        hetrelax.Poisson((4, 4), bc="y-=periodic")
    assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)
    assert e.value.status_name == "invalid argument"
    assert "y" in str(e.value)
