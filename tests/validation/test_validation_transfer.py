"""The defaults on machines they were not fitted on: reports of other processors predicted again
by today's core (validation.transfer). Nothing here was fitted on these reports; the bounds are
the figures of 2026-11-26 with a few points of slack, so a change that makes the transfer worse
fails here (benchmarks/ACCURACY.md, "Validation on other machines")."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA
from validation.transfer import score_report

REPORTS = Path(__file__).resolve().parents[2] / "validation" / "reports"


def _score(path: Path) -> dict:
    if not path.exists():
        pytest.skip(f"{path} is not beside this checkout")
    return score_report(path)


def test_the_cpu_defaults_carry_over_to_the_intel_xeon():
    # a 2-core Sapphire Rapids-class Xeon, quiet (shared/data/validation-runs): 34.6 % / 52.2 % on 2026-11-26
    scores = _score(SHARED_DATA / "validation-runs" / "intel-xeon-2core-2026-11-26" / "report.json")["all"]
    assert scores["n"] >= 20
    assert scores["median_abs_error"] <= 0.40
    assert scores["p90_abs_error"] <= 0.60


def test_the_gpu_defaults_hold_on_an_h100():
    # the quick suite on an H100 SXM (validation/reports/cuda-h100-quick-2026-11-26): 13.9 % / 24.7 %, 22 of 22 in range
    scores = _score(REPORTS / "cuda-h100-quick-2026-11-26.json")["all"]
    assert scores["n"] >= 20
    assert scores["median_abs_error"] <= 0.20
    assert scores["within_range"] >= scores["n"] - 2


def test_a_report_taken_under_load_scores_nothing():
    # every run of 2026-11-25 ran beside 80-90 % foreign CPU: none may enter a headline
    assert _score(REPORTS / "cpu-quick-2026-11-25.json")["all"]["n"] == 0
