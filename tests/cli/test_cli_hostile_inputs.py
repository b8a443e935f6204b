"""Hostile files and options on the command line (issue 12, item 7): one message, exit 2, no traceback.

Each case here used to end in a Python traceback (or, for the sweep, in building the whole grid
before refusing it). The reports are variants of the real validation report in
validation/reports/, so every other field stays what `sizer validate` writes.
"""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / "validation" / "reports" / "cpu-quick-2026-11-22.json"


def _refused(result, *words: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output[-800:], result.exception)
    assert "Traceback" not in result.output
    text = " ".join(re.sub("[\u2500-\u257f]", " ", result.output).split())  # without the error box and its line breaks
    for word in words:
        assert word in text, text


@pytest.fixture(scope="module")
def report() -> dict:
    return json.loads(REPORT.read_text(encoding="utf-8"))


def _profiled(report: dict) -> list[dict]:
    return [run for run in report["runs"] if run.get("profile")]


def _with_step(value):
    def change(report):
        for run in _profiled(report):
            run["measured"]["step_time"]["value"] = value
    return change


def _with_batch(value):
    def change(report):
        for run in _profiled(report):
            run["config"]["batch_size"] = value
    return change


@pytest.mark.parametrize("change, words", [
    (_with_step(0), ["step_time", "1 µs to 1 day"]),
    (_with_step(1e-300), ["step_time", "1 µs to 1 day"]),
    (_with_step(-0.5), ["step_time"]),
    (_with_step("fast"), ["step_time"]),
    (_with_step(None), ["step_time"]),
    (_with_batch(0), ["batch_size", "from 1"]),
    (_with_batch(True), ["batch_size"]),
    (lambda r: _profiled(r)[0].__setitem__("config", [1, 2]), ["report", "validation report"]),
    (lambda r: _profiled(r)[0].__setitem__("measured", None), ["report"]),
    (lambda r: r["runs"].__setitem__(0, "not a run"), ["report"]),
    (lambda r: r.__setitem__("runs", {"a": 1}), ["report"]),
    (lambda r: _profiled(r)[0]["measured"].__setitem__("loads", "busy"), ["report"]),
    (lambda r: _profiled(r)[0]["config"].__setitem__("precision", "fp128"), ["precision"]),
])
def test_calibrate_refuses_malformed_reports(cli, tmp_path, report, change, words):
    broken = copy.deepcopy(report)
    change(broken)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(broken))
    _refused(cli("calibrate", path, "--out", tmp_path / "calibration.yaml"), *words)
    assert not (tmp_path / "calibration.yaml").exists()


@pytest.mark.parametrize("text, words", [
    ('{"runs": [{"measured": {"step_time": {"value": Infinity}}}]}', "finite numbers"),
    ('{"runs": [{"measured": {"step_time": {"value": 1e999}}}]}', "finite numbers"),
    ('{"a": NaN}', "finite numbers"),
    ("[" * 100_000 + "]" * 100_000, "nested at most"),
    ("[1, 2]", "validation report"),
    ("{not json", "valid JSON"),
])
def test_calibrate_refuses_hostile_json(cli, tmp_path, text, words):
    path = tmp_path / "report.json"
    path.write_text(text)
    _refused(cli("calibrate", path, "--out", tmp_path / "calibration.yaml"), "report", words)


def test_calibrate_refuses_devices_and_folders(cli, tmp_path):
    _refused(cli("calibrate", "/dev/zero", "--out", tmp_path / "c.yaml"), "report", "regular file")
    _refused(cli("calibrate", tmp_path, "--out", tmp_path / "c.yaml"), "report", "regular file")


def test_calibrate_refuses_bad_out_paths_and_keeps_the_old_file(cli, tmp_path):
    _refused(cli("calibrate", REPORT, "--out", tmp_path), "out", "not a folder")
    _refused(cli("calibrate", REPORT, "--out", tmp_path / "missing" / "c.yaml"), "out")
    good = tmp_path / "calibration.yaml"
    assert cli("calibrate", REPORT, "--out", good).exit_code == 0
    before = good.read_text()
    broken = tmp_path / "broken.json"
    broken.write_text('{"runs": NaN}')
    _refused(cli("calibrate", broken, "--out", good), "report")
    assert good.read_text() == before and [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_sweep_refuses_an_oversized_grid_before_building_it(cli, monkeypatch):
    # 300 x 300 workloads x every device x 4 counts is 22 million rows; the core must not even be called.
    import sizer.facade
    import sizer.plan.sweep

    def must_not_run(*args, **kwargs):
        raise AssertionError("the grid was built before it was refused")

    # The facade imports lazily and keeps what it imported: patch its name first (while it still
    # resolves to the real function), so that undoing the patches leaves no stand-in behind.
    monkeypatch.setattr(sizer.facade, "sweep", must_not_run)
    monkeypatch.setattr(sizer.plan.sweep, "sweep", must_not_run)
    values = ",".join(str(10 ** 9 + i) for i in range(300))
    _refused(cli("sweep", "--params", values, "--samples", values, "--batch-size", "32"), "sweep", "at most 5,000,000")


def test_sweep_writes_its_file_atomically_and_refuses_a_folder(cli, tmp_path):
    out = tmp_path / "sweep.csv"
    result = cli("sweep", "--params", "1e9", "--samples", "1e6", "--batch-size", "32", "-d", "T4", "--format", "csv",
                 "--out", out)
    assert result.exit_code == 0, result.output
    assert "params" in out.read_text().splitlines()[0]
    _refused(cli("sweep", "--params", "1e9", "--samples", "1e6", "-d", "T4", "--format", "csv", "--out", tmp_path),
             "out", "not a folder")


@pytest.mark.parametrize("variable, value", [("SIZER_API_LOG_LEVEL", "loud"), ("SIZER_API_TIMEOUT_S", "-1")])
def test_serve_refuses_a_bad_setting_before_starting(cli, monkeypatch, variable, value):
    import uvicorn

    monkeypatch.setenv(variable, value)
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("server started")))
    _refused(cli("serve", "--port", "18999"), variable)


def test_serve_log_level_is_case_insensitive(monkeypatch):
    from api.settings import Settings

    monkeypatch.setenv("SIZER_API_LOG_LEVEL", "WARNING")
    assert Settings().log_level == "warning"


PROFILE_CASES = [
    (["--input-shape", "abc"], ["input_shape", "whole positive numbers"]),
    (["--input-shape", "3,-1"], ["input_shape"]),
    (["--input-shape", "100000,100000,100000"], ["input_shape", "100,000,000 elements"]),
    (["--input-shape", "7"], ["input_shape", "an input the model accepts"]),  # torch: shapes cannot be multiplied
]


@pytest.mark.parametrize("options, words", PROFILE_CASES)
def test_profile_refuses_bad_shapes(cli, tmp_path, options, words):
    pytest.importorskip("torch")
    _refused(cli("profile", "validation.model_zoo:mlp_seed001", "--out", tmp_path / "p.yaml", *options), *words)
    assert not (tmp_path / "p.yaml").exists()


@pytest.mark.parametrize("target, words", [
    (".:x", ["target", "importable"]),
    ("json:dumps", ["target", "no further arguments"]),
    ("os:getcwd", ["target", "torch.nn.Module"]),
    ("validation.model_zoo:MS_PER_S", ["target"]),
])
def test_profile_refuses_bad_targets(cli, tmp_path, target, words):
    pytest.importorskip("torch")
    _refused(cli("profile", target, "--out", tmp_path / "p.yaml"), *words)


def test_profile_refuses_bad_out_paths_before_profiling(cli, tmp_path):
    pytest.importorskip("torch")
    _refused(cli("profile", "validation.model_zoo:mlp_seed001", "--out", tmp_path), "out", "not a folder")
    _refused(cli("profile", "validation.model_zoo:mlp_seed001", "--out", tmp_path / "no" / "p.yaml"), "out",
             "existing folder")


def test_a_trace_field_over_the_csv_limit_is_one_line(cli, tmp_path):
    # issue 43: a --trace field over 128 KiB ended in _csv.Error's traceback
    trace = tmp_path / "trace.csv"
    trace.write_text("prompt_len,output_len\n" + "9" * 140_000 + ",1\n")
    result = cli("inference", "--model", "llama-3.1-8b", "--device", "H100 SXM", "--rate", "1", "--trace", trace)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().count("\n") == 0 and result.stderr.startswith("Error: trace:"), result.stderr
