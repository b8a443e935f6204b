"""The core must stay importable without torch, fastapi or typer (spec §1)."""
import subprocess
import sys


def test_import_sizer_pulls_in_no_framework():
    code = ("import sys, sizer, sizer.plan.recommend, sizer.facade; "
            "print(','.join(m for m in ('torch', 'fastapi', 'typer', 'uvicorn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
