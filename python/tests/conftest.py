"""Shared fixtures of the hetrelax package's tests."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hetrelax


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


@pytest.fixture(scope="session")
def has_gpu():
    info = hetrelax.info()
    return info["cuda"] and info["gpus"] > 0


@pytest.fixture
def gpu(has_gpu):
    if not has_gpu:
        pytest.skip("no CUDA device (or a build without CUDA)")


@pytest.fixture(scope="session")
def cli():
    """The `hetrelax` command of the same build (ctest sets HETRELAX_CLI)."""
    path = os.environ.get("HETRELAX_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("HETRELAX_CLI (the hetrelax command) not set")
    return path


def run_python(code, timeout=60, **kw):
    """Runs `code` in a fresh interpreter with this one's module path."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def finish(proc, timeout=30):
    """(stdout, stderr) of a run_python process; killed (and the test failed) past `timeout`."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"the child process did not end within {timeout} s")


def plate(shape=(12, 20)):
    """A small problem with every kind of face data: Neumann flux, Dirichlet values, an array
    on a face, a coefficient field."""
    ny, nx = shape
    rng = np.random.default_rng(7)
    g = np.linspace(0.0, 1.0, ny)
    coef = 1.0 + rng.random(shape)
    return hetrelax.Poisson(shape, lengths=(0.6, 1.0), coef=coef, f=rng.standard_normal(shape),
                            bc={"x-": ("dirichlet", g), "x+": ("dirichlet", 0.5), "y-": ("neumann", 0.25),
                                "y+": ("dirichlet", 1.0)})
