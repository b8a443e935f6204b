"""Contention on a shared machine: free cores, a look before each run, contended runs kept out of
the headline (the two Xeon reports in shared/data/validation-runs are the evidence)."""
from __future__ import annotations

import json

import pytest

from tests.conftest import SHARED_DATA
from validation.contention import QUIET_PERCENT, contention_of, free_cores, headline_exclusions

RUNS = SHARED_DATA / "validation-runs"


def _report(name: str) -> dict:
    path = RUNS / name / "report.json"
    if not path.exists():
        pytest.skip(f"{path} is not beside this checkout")
    return json.loads(path.read_text())


@pytest.mark.parametrize(("cores", "foreign", "free"), [(2, 0.0, 2), (2, 4.0, 2), (2, 51.0, 1), (2, 100.0, 1),
                                                        (16, 50.0, 8), (16, -5.0, 16)])
def test_one_thread_per_free_core(cores, foreign, free):
    assert free_cores(cores, foreign) == free


def test_a_short_run_is_judged_by_the_look_before_it_too():
    # one 0.1 s sample of 0 % during the run cannot show it ran alone when 48 % was busy just before
    assert contention_of(48.0, {"mean": 0.0, "max": 0.0, "samples": 1})["contended"]
    assert not contention_of(2.0, {"mean": 1.0, "max": 3.0, "samples": 20})["contended"]
    assert contention_of(0.0, {"mean": QUIET_PERCENT + 1, "max": 60.0, "samples": 20})["contended"]


def test_the_loaded_xeon_report_keeps_its_unwatched_runs_out_of_the_headline():
    # The report taken while other processes took ~51 % of the CPU counted 5 runs as quiet; four
    # of them had 1-3 load samples, between runs that saw half the CPU taken
    # (shared/data/validation-runs/README.md).
    runs = _report("intel-xeon-2core-2026-11-26-under-load")["runs"]
    excluded = headline_exclusions(runs)
    assert len(runs) - len(excluded) <= 1
    assert {"mlp-batch-size-256", "mlp-activation-relu", "mlp-activation-tanh", "mlp-activation-silu"} <= set(excluded)


def test_the_quiet_xeon_report_keeps_its_runs():
    # the same machine quiet (other processes 4 % on average): short runs judged by their neighbours count
    runs = _report("intel-xeon-2core-2026-11-26")["runs"]
    excluded = headline_exclusions(runs)
    assert len(excluded) <= 2, excluded


def test_a_summary_names_what_it_left_out():
    from validation.report import summarise

    runs = _report("intel-xeon-2core-2026-11-26-under-load")["runs"]
    summary = summarise(runs, {}, [])
    excluded = {entry["id"] for entry in summary["excluded_from_headline"]}
    assert summary["uncontended"]["n_runs"] == len(runs) - len(excluded)
    assert all(entry["reason"] for entry in summary["excluded_from_headline"])
