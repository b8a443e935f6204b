"""One-device training time judged by source (benchmarks/single_device_accuracy.py, ACCURACY.md "One-device
training across vendors"): the held-out figures are recomputed through the engine from each fold's fit and
guarded against regression; the committed fit is the fit of every source; the issue's examples fall in range."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sizer.choices import Mode, Optimizer, Precision
from sizer.engine.modes import profile_step_seconds
from sizer.engine.stacks import StackFit, stack_fit
from sizer.engine.time_range import range_factors
from sizer.hardware.catalog import load_catalog
from sizer.workloads.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import single_device_accuracy as scorer  # noqa: E402
import single_device_rows  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "single_device_accuracy.json"
# Regression guards: the held-out figures of 2026-12-06 (median 22.6 %, p90 64.1 %, signed -6.4 %, 86 % inside;
# ACCURACY.md) with a few points of slack. Median and p90 are not the issue's targets (15 %, 40 %), which these
# sources miss (ACCURACY.md says which and why); signed (10 %) and inside (80 %) are.
GUARD = {"median_abs_error": 0.25, "p90_abs_error": 0.68, "signed_median": 0.09, "inside_range": 0.83}


@pytest.fixture(scope="module")
def predictor():
    if not single_device_rows.SINGLE.exists():
        pytest.skip(f"{single_device_rows.SINGLE} is not beside this checkout")
    runs, _ = single_device_rows.all_rows()
    return scorer.Predictor(runs)


@pytest.fixture(scope="module")
def results():
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def _fit(figures: dict) -> StackFit:
    return StackFit(**{k: v for k, v in figures.items() if k != "range"})


def test_held_out_figures_recomputed_through_the_engine(predictor, results):
    indices = predictor.askable()
    assert len(indices) == results["runs"]
    rows = []
    for source, fold in results["folds"].items():
        fit = _fit(fold["fit"])
        low, high = fold["range"]
        held_out = [i for i in indices if predictor.runs[i].source == source]
        assert len(held_out) == fold["test_runs"]
        rows += [scorer.row_result(predictor, i, fit, low, high, source) for i in held_out]
    figures = scorer.report(rows)
    for key, value in results["held_out"]["overall"].items():
        assert figures["overall"][key] == pytest.approx(value, abs=1e-9)
    overall = figures["overall"]
    assert overall["median_abs_error"] <= GUARD["median_abs_error"]
    assert overall["p90_abs_error"] <= GUARD["p90_abs_error"]
    assert abs(overall["signed_median"]) <= GUARD["signed_median"]
    assert overall["inside_range"] >= GUARD["inside_range"]


def test_every_fold_left_its_own_source_out(results):
    # a fold's fit never saw its source: the libraries only that source has keep 1 (cuDNN's)
    assert results["folds"]["lucadiliello/pytorch-apple-silicon-benchmarks"]["fit"]["library"].get("mps") is None
    assert results["folds"]["lamikr/pytorch-gpu-benchmark"]["fit"]["library"].get("miopen") is None
    total = {fold["train_runs"] + fold["test_runs"] for fold in results["folds"].values()}
    assert total == {results["runs"]}


def test_the_fitter_evaluates_what_the_engine_computes(predictor):
    # the fitter times every grid value in one engine call; the same figures through profile_step_seconds agree
    fits = [StackFit(0.5, 0.45, 0.8, 0.6, 3e-5, 1e9, {"miopen": 0.9, "mps": 0.6}),
            StackFit(0.7, 0.3, 0.6, 0.8, 1e-5, 0.0, {})]
    for i in predictor.askable()[::12]:
        fast = predictor.candidates(i, fits)
        for j, fit in enumerate(fits):
            assert fast[j] == pytest.approx(predictor.predict(i, fit), rel=1e-9)


def test_the_committed_fit_is_a_coordinate_optimum_of_every_source(predictor):
    # recomputed, not read: no grid value of the library factors and of launch improves the fit of all sources
    indices = predictor.askable()
    committed = stack_fit()
    best = scorer._scores(predictor, indices, [committed])[0]
    for name, grid in [("launch", scorer.GRID["launch"])] + [(f"library:{lib}", scorer.LIBRARY_GRID)
                                                            for lib in scorer.FITTED_LIBRARIES]:
        scores = scorer._scores(predictor, indices, [scorer._with(committed, name, v) for v in grid])
        assert min(scores) >= best - 1e-9, name


def _inside(device: str, workload: str, seq_len: int | None, precision: str, batch: int, optimizer: Optimizer,
            measured_s: float) -> tuple[float, float, float]:
    catalog = load_catalog()
    predicted = profile_step_seconds(load_profile(workload, seq_len), catalog.find(device), Precision(precision),
                                     batch, optimizer)
    low, high, _ = range_factors(Mode.DATASHEET, "profile-gpu")
    return predicted * low, predicted, predicted * high


@pytest.mark.parametrize(("device", "workload", "seq_len", "precision", "batch", "optimizer", "measured_s"), [
    # lamikr/pytorch-gpu-benchmark results/Nvidia/GeForce_RTX_3090 fp16 (half) train csv, resnet50: 37.2 ms (mean of 50)
    ("rtx-3090", "resnet50", None, "fp16", 12, Optimizer.SGD, 0.0372),
    # lamikr/pytorch-gpu-benchmark, AMD Radeon RX 6800 (gfx1030) float train csv, resnet50: 61.7 ms
    ("rx-6800", "resnet50", None, "fp32", 12, Optimizer.SGD, 0.0617),
    # lucadiliello/pytorch-apple-silicon-benchmarks README, M3 Max 40-core GPU, BERT-base seq 128, batch 64: 73 s / 100 steps
    ("apple-m3-max-40c-64gb-gpu", "bert-base", 128, "fp32", 64, Optimizer.ADAM, 0.73),
])
def test_the_issues_examples_fall_inside_the_range(device, workload, seq_len, precision, batch, optimizer, measured_s):
    low, _, high = _inside(device, workload, seq_len, precision, batch, optimizer, measured_s)
    assert low <= measured_s <= high
