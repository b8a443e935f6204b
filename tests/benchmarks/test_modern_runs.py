"""Guards the by-source accuracy of benchmarks/modern_runs.py (benchmarks/ACCURACY.md, "Published runs, judged by
source"): the achieved factors refitted leave-one-source-out on the committed runs, and a few runs re-predicted by the
engine to check the committed predictions are the engine's. Thresholds a little looser than the measured figures."""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

import modern_runs  # noqa: E402

from sizer.engine import achieved  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    return modern_runs.load_committed()


def _loso(rows):
    scored = []
    for held in sorted({r["source"] for r in rows if r["bound"]}):
        fit = [r for r in rows if r["source"] != held and r["bound"]]
        factors, _ = achieved.fit([(r["family"], r["source"], r["measured_step"], r["bound"]) for r in fit])
        scored += [r["bound"] / min(1.0, factors[r["family"]][0]) / r["measured_step"] - 1
                   for r in rows if r["source"] == held and r["bound"]]
    return scored


def test_no_layout_achieved_is_judged_by_source_within_the_targets(rows):
    # measured 2026-12 (benchmarks/results/modern_runs.md): median 14.0 %, p90 32.6 %, signed -5.2 %, 463 runs,
    # 31 sources; the targets are 15 %, 35 % and +-10 %
    errors = _loso(rows)
    absolute = sorted(abs(e) for e in errors)
    assert len(errors) >= 450 and len({r["source"] for r in rows}) >= 30
    assert statistics.median(absolute) <= 0.15
    assert absolute[int(0.9 * len(absolute))] <= 0.35
    assert abs(statistics.median(errors)) <= 0.10


def test_with_the_runs_layout_is_no_worse_than_measured(rows):
    # measured: median 25.3 %, p90 39.0 % on 40 runs of 8 sources (the target, 10 % / 25 %, is missed: TPU v6e FSDP
    # runs 27 % slow, H100 FP8 405B runs 31 % slow; benchmarks/ACCURACY.md says why)
    errors = sorted(abs(r["with_layout"] / r["measured_step"] - 1) for r in rows if r["with_layout"])
    assert len(errors) >= 38
    assert statistics.median(errors) <= 0.28
    assert errors[int(0.9 * len(errors))] <= 0.45


def test_the_shipped_factors_are_the_fit_on_every_source(rows):
    factors, pooled = achieved.fit([(r["family"], r["source"], r["measured_step"], r["bound"]) for r in rows if r["bound"]])
    for family, (factor, sources) in achieved.FACTORS.items():
        assert factors[family][0] == pytest.approx(factor, abs=0.002) and factors[family][1] == sources, family
    assert pooled == pytest.approx(achieved.POOLED[0], abs=0.002)


@pytest.mark.parametrize("index", [0, 15, 30])
def test_committed_predictions_are_the_engines(rows, index):
    run = [r for r in modern_runs.load() if r["metrics"].get("step_time") and modern_runs.MODELS.get(r["model"])
           and modern_runs._int(r["seq_len"])][index]
    committed = next(r for r in rows if r["model"] == run["model"] and r["device"] == run["device"]
                     and r["count"] == int(run["n_devices"]) and r["measured_step"] == run["metrics"]["step_time"])
    predicted = modern_runs.predict([run])[0]
    assert predicted["bound"] == pytest.approx(committed["bound"], rel=0.02)
