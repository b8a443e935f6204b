"""The `sizer` command's entry (sizer/__main__.py) runs the command line beside the core it came from."""
import subprocess
import sys
from pathlib import Path

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
