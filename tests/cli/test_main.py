"""cli/main.py: a usage mistake (an unknown option or command, a missing or malformed value) is one line
on stderr and exit status 2, as every other bad input is; help stays click's.

issue 43: 1,459 such mistakes printed click's usage block and help hint above the message (4 lines).
"""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli.main import app_for


@pytest.mark.parametrize("args, words", [
    (["time", "--bogus"], "No such option: --bogus"),
    (["sweep", "--params"], "Option '--params' requires an argument"),
    (["time", "--count", "x"], "Invalid value for '--count'"),
    (["time", "--count", "0"], "Invalid value for '--count'"),
    (["inference", "--output-len", "0"], "Invalid value for '--output-len'"),
    (["bogus"], "No such command 'bogus'"),
    (["--bogus"], "No such option: --bogus"),
    (["catalog", "show"], "Missing argument"),
    (["catalog", "list", "--bogus"], "No such option: --bogus"),
])
def test_a_usage_mistake_is_one_line_and_exit_2(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"Error: {result.stderr.removeprefix('Error: ')}" and result.stderr.count("\n") == 1, result.stderr
    assert words in result.stderr and "Usage:" not in result.output and "--help" not in result.output


def test_the_single_command_app_is_one_line_too():
    # `sizer time ...` runs an app holding the time command alone (start-up): its mistakes are one line as well
    result = CliRunner().invoke(app_for(["time", "--bogus"]), ["time", "--bogus"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "No such option" in result.stderr, result.output


@pytest.mark.parametrize("args", [["--help"], ["time", "--help"], ["catalog", "--help"], [], ["catalog"]])
def test_help_is_still_the_usage_and_options(cli, args):
    # a bare group (no_args_is_help) prints its help, as --help does
    result = cli(*args)
    assert "Usage: sizer" in result.output and "Options" in result.output, result.output
    assert result.exit_code == (0 if "--help" in args else 2)  # click: help asked is 0, help for nothing asked 2


@pytest.mark.parametrize("args, status", [(["peak", "Tesla P40", "--json"], 0), (["peak", "no such device"], 2)])
def test_a_command_ends_without_teardown_yet_with_its_output_status_and_exit_handlers(tmp_path, args, status):
    # cli.main.end_now: os._exit after the exit handlers, not the interpreter's object-by-object teardown
    import subprocess
    import sys
    from pathlib import Path

    marker = tmp_path / "atexit-ran"
    run = (f"import atexit, pathlib, sys; atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes'); "
           f"sys.argv = ['sizer', *{args!r}]; import cli.main; cli.main.main()")
    done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2],
                          env={"PATH": "/usr/bin:/bin", "SIZER_CACHE_DIR": "off",
                               "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == status, done.stderr[-1000:]
    assert marker.read_text() == "yes"
    if status == 0:
        assert done.stdout.rstrip().endswith("}") and '"peak"' in done.stdout  # the whole answer, flushed
    else:
        assert done.stderr.startswith("Error: device") and done.stdout == ""
