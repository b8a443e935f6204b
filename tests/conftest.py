"""Shared fixtures: the built-in catalog and a CLI runner."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

# No disk cache in the suite unless a test gives its own folder: a test that patches the engine must
# not leave its answers where a later test or command would read them (sizer.diskcache keys entries by
# the code's files, not by what a test patched in memory).
os.environ["SIZER_CACHE_DIR"] = "off"

from sizer.hardware.catalog import load_catalog  # noqa: E402

# The project's reference data (shared/ beside the checkout, as the developers and CI have it).
SHARED_DATA = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data"))
                    if p.is_dir()), Path(__file__).resolve().parents[2] / "shared" / "data")


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(autouse=True)
def _no_user_catalog(monkeypatch):
    monkeypatch.delenv("SIZER_CATALOG", raising=False)


@pytest.fixture()
def cli():
    """Run `sizer ARGS`; returns the result (exit_code, stdout, stderr)."""
    from cli.main import app

    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, [str(a) for a in args])

    return invoke


def stop_server(process) -> None:
    """Stop a server started in its own process group: SIGTERM, then SIGKILL after 10 s."""
    import os
    import signal
    import subprocess

    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
