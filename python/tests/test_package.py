"""The package itself: version, registry, machine info, exceptions, the examples."""
import os
import re
import subprocess
import sys

import pytest

import hetrelax

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_is_the_libraries(cli):
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
    assert re.match(r"\d+\.\d+\.\d+$", hetrelax.__version__)
    assert out.split()[1] == hetrelax.__version__


def test_registry_and_info():
    kernels = {e["name"] for e in hetrelax.registry("kernel")}
    assert {"async3", "general"} <= kernels
    assert {e["name"] for e in hetrelax.registry("method")} >= {"jacobi", "mg", "cg"}
    assert {e["name"] for e in hetrelax.registry("smoother")} >= {"redblack", "jacobi", "cheby"}
    assert {e["name"] for e in hetrelax.sparse.methods()} >= {"jacobi", "async", "cg"}
    info = hetrelax.info()
    assert info["cores"] >= 1 and info["gpus"] >= 0 and isinstance(info["cuda"], bool)
    with pytest.raises(ValueError, match="kind"):
        hetrelax.registry("kernels")


def test_exception_hierarchy():
    assert issubclass(hetrelax.Error, RuntimeError)
    for e in (hetrelax.InvalidArgumentError, hetrelax.FormatError):
        assert issubclass(e, hetrelax.Error) and issubclass(e, ValueError)
    assert issubclass(hetrelax.OutOfMemoryError, MemoryError)
    for e in (hetrelax.UnsupportedError, hetrelax.NoDeviceError, hetrelax.DeviceError, hetrelax.DivergedError):
        assert issubclass(e, hetrelax.Error) and not issubclass(e, ValueError)


def test_docstrings():
    for obj in (hetrelax, hetrelax.Poisson, hetrelax.Solver, hetrelax.Solver.solve, hetrelax.Solver.sweep,
                hetrelax.Solver.aspreconditioner, hetrelax.solve, hetrelax.system, hetrelax.sparse.solve,
                hetrelax.sparse.read_mm, hetrelax.SolveInfo, hetrelax.info, hetrelax.registry):
        assert obj.__doc__ and len(obj.__doc__) > 40, obj


@pytest.mark.parametrize("script, args, expect", [
    ("plate.py", ["--nx", "100", "--ny", "60"], r"summary\s+\d+ cycles \(converged\)"),
    ("jacobi_async.py", ["--n", "64", "--sweeps", "200", "--chunk", "100"], r"kernel async3"),
    ("cupy_pressure.py", ["--nx", "128", "--ny", "64", "--steps", "2"], None),
])
def test_examples_run(script, args, expect):
    if script == "cupy_pressure.py":  # its own GPU test below; here: a clear word without one
        expect = r"nothing to run|summary"
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", script)] + args,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert re.search(expect, out.stdout), out.stdout


@pytest.mark.gpu
def test_cupy_example_on_the_gpu(gpu):
    pytest.importorskip("cupy")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "cupy_pressure.py"), "--nx",
                          "256", "--ny", "128", "--steps", "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"step 2: \d+ cycles \(converged\)", out.stdout), out.stdout
    assert "cupy.ndarray on the GPU" in out.stdout
