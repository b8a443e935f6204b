"""Shared fixtures: the built-in catalog and a CLI runner."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sizer.hardware.catalog import load_catalog


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
