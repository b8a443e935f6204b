"""The `sizer` command's entry (sizer/__main__.py) runs the command line beside the core it came from."""
import subprocess
import sys
from pathlib import Path

import pytest

from sizer.__main__ import command_module

ROOT = Path(__file__).resolve().parents[2]


def test_a_checkout_on_the_path_runs_its_own_cli():
    # The checkout's cli/ lies beside sizer/; an editable install's sizer.cli may be another checkout's.
    assert command_module() == "cli.main"


def test_python_dash_m_sizer_is_the_command():
    run = subprocess.run([sys.executable, "-m", "sizer", "--version"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("sizer ")


def test_a_command_collects_cycles_less_often_and_serve_keeps_its_settings():
    import gc

    from sizer.__main__ import COMMAND_GC_THRESHOLDS, fewer_collections

    before = gc.get_threshold()
    try:
        fewer_collections(["serve", "--port", "8000"])
        assert gc.get_threshold() == before  # the service sets its own (api/heap.py)
        fewer_collections(["peak", "Tesla P40"])
        assert gc.get_threshold() == COMMAND_GC_THRESHOLDS
        assert gc.isenabled()  # cycles are still collected
    finally:
        gc.set_threshold(*before)


def test_a_command_starts_one_blas_thread_unless_told_otherwise(monkeypatch):
    from sizer.__main__ import COMMAND_BLAS_THREADS, one_blas_thread

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    one_blas_thread(["serve", "--port", "8000"])
    one_blas_thread(["validate", "--quick"])
    assert "OPENBLAS_NUM_THREADS" not in __import__("os").environ  # the service and the measurements keep the default
    one_blas_thread(["peak", "Tesla P40"])
    assert __import__("os").environ["OPENBLAS_NUM_THREADS"] == COMMAND_BLAS_THREADS
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    one_blas_thread(["peak", "Tesla P40"])
    assert __import__("os").environ["OPENBLAS_NUM_THREADS"] == "4"  # the user's own count kept


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through Linux's /proc")
def test_a_command_runs_with_one_blas_thread():
    # numpy reads the count once, when it is imported: the threads of the process after the import
    probe = ("import os, sys; from sizer.__main__ import one_blas_thread; one_blas_thread(sys.argv[1:]); import numpy; "
             "print(len(os.listdir('/proc/self/task')))")

    def threads(*argv: str, **env: str) -> int:
        run = subprocess.run([sys.executable, "-c", probe, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60,
                             env={"PATH": "/usr/bin:/bin", **env})
        assert run.returncode == 0, run.stderr
        return int(run.stdout)

    assert threads("peak", "Tesla P40") == 1
    assert threads("peak", "Tesla P40", OPENBLAS_NUM_THREADS="2") == 2  # the count is what decides the threads
