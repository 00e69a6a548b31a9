"""Runs the package's tests with pytest (ctest's `python` and `python_gpu` tests).

    PYTHONPATH=BUILD/python /usr/bin/python3 python/tests/run.py [pytest arguments]

Exit status: pytest's, except 77 (ctest: skipped) when every selected test was skipped (the
GPU tests without a GPU) or pytest is missing: a run that checked nothing is never a pass.
"""
import os
import sys

try:
    import pytest
except ImportError:
    print("python tests: pytest is not installed for", sys.executable, "(apt-get install python3-pytest)")
    sys.exit(77)


class Outcomes:
    """Counts what ran."""

    def __init__(self):
        self.passed = 0
        self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.skipped:
            self.skipped += 1
        elif report.when == "call" and report.passed:
            self.passed += 1


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    seen = Outcomes()
    args = sys.argv[1:]
    paths = [a for a in args if os.path.exists(a.split("::")[0])]
    rc = pytest.main(["-q", "-rs", "-p", "no:cacheprovider"] + ([] if paths else [here]) + args, plugins=[seen])
    if rc == 0 and seen.passed == 0 and seen.skipped > 0:
        print(f"python tests: all {seen.skipped} selected tests skipped")
        sys.exit(77)
    sys.exit(int(rc))
