"""Serving under load scored by source (benchmarks/serving_by_source.py) on ``shared/data/serving-tails.csv``: the
only thing fitted on that file is which engine generations' scheduling policy is on (sizer/runtimes/
serving_mechanisms.yaml), chosen leave-one-source-out; the figures of benchmarks/ACCURACY.md ("Serving under load by
source") cannot regress unseen. The whole file's askable points are recomputed (a few seconds; the leave-one-source-out
choice of the kept mechanism simulates them twice more)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import serving_by_source as by_source  # noqa: E402

# Median |error| [%] by metric and group: the figures of 2026-12-06 after every issue-38 change, lengths drawn as each
# benchmark draws them (the answers' own lengths), the engines' generations, AccelMark's outputs from the other
# sources' serial runs (benchmarks/results/serving_by_source.json: output 32.3, p50 TTFT 62.7, p99 TTFT 71.0, p99 TPOT
# 43.7, Poisson p99 TTFT 104.8, serial p99 TPOT 18.4, run duration 14.9) plus about 3 points. Targets (issue 38):
# output tokens/s 15 %, p99 TTFT 35 %, p99 TPOT 25 % -- not met, see ACCURACY.md.
GUARDS = {
    ("output_tokens_per_s", "all"): 35.5, ("ttft_p50", "all"): 66.0, ("ttft_p99", "all"): 74.0,
    ("tpot_p99", "all"): 47.0, ("ttft_p99", "scenario=rate"): 108.0, ("tpot_p99", "scenario=serial"): 21.5,
    ("run_seconds", "all"): 18.0,
}


@pytest.fixture(scope="module")
def result():
    return by_source.run(per_source=1000, max_points=1000, requests=1000, spread="benchmark", warmup=0.0)


def test_every_askable_point_is_scored_across_many_sources(result):
    # 379 askable points (378 scored since FP8 on Ampere runs weight-only, 1 holds no request) from 41 sources on
    # 2026-12-06: a mapping that silently drops sources fails here
    assert result["points_sampled"] == result["points_askable"] >= 350
    assert result["points_scored"] >= 370
    assert len(result["sources"]) >= 38


@pytest.mark.parametrize("metric,group", sorted(GUARDS))
def test_by_source_median_does_not_regress(result, metric, group):
    stats = result["summary"][metric][group]
    assert stats["n"] >= 10
    assert stats["median_abs_pct"] <= GUARDS[(metric, group)]


def test_the_kept_mechanism_holds_out_of_sample():
    # the scheduling policy per engine generation, chosen for each source on the others only: its held-out p99 TPOT
    # (44.5 % on 2026-12-06) beats the profiles as they were (48.0 %) and p99 TTFT does not get worse (78.2 -> 75.7 %);
    # the values chosen on all sources are what serving_mechanisms.yaml ships
    points, _ = by_source.points()
    catalog = by_source.load_catalog()
    base, policy = (None, False, None), (None, True, None)
    preds = by_source.simulate_trials(points, catalog, 1000, [base, policy])
    kept = by_source.loso_fit(points, preds, "generation")
    before = by_source.loso_fit(points, {base: preds[base]}, "generation")
    med = {name: by_source._summary(fit["rows"]) for name, fit in (("kept", kept), ("before", before))}
    assert med["kept"]["tpot_p99"]["all"]["median_abs_pct"] <= min(48.0, med["before"]["tpot_p99"]["all"]["median_abs_pct"])
    assert med["kept"]["ttft_p99"]["all"]["median_abs_pct"] <= med["before"]["ttft_p99"]["all"]["median_abs_pct"] + 2.0
    shipped = {g.name: g.policy_on for g in by_source.serving_mechanisms.generations()}
    assert shipped == {g: bool(v[0][1]) for g, v in kept["shipped"].items()} | {
        g: shipped[g] for g in shipped if g not in kept["shipped"]}


def test_accelmark_outputs_come_from_the_other_sources_serial_runs():
    # a serial run of N prompts lasts N x (TTFT + (out - 1) x TPOT): AccelMark's 17 sharegpt_standard_v1 sources give
    # 341-367 tokens (max_tokens 512), its 13 sharegpt_edge_v1 sources 192-222 (max_tokens 256); a point never takes
    # its own source's run
    estimates = by_source.serial_outputs()
    standard, edge = estimates["sharegpt_standard_v1"], estimates["sharegpt_edge_v1"]
    assert len(standard) >= 15 and all(330 < v < 380 for v in standard.values())
    assert len(edge) >= 10 and all(180 < v < 240 for v in edge.values())
    points, _ = by_source.points()
    for p in points:
        if p.dataset.startswith("AccelMark sharegpt_standard_v1"):
            others = [v for s, v in standard.items() if s != p.source]
            assert p.output_mean == pytest.approx(by_source.statistics.median(others))
    assumed, _ = by_source.points(others_output=False)
    assert {p.output_mean for p in assumed if p.dataset.startswith("AccelMark sharegpt_standard_v1")} == {200.0}


def test_a_rate_above_capacity_queues_for_the_benchmark_length():
    # AccelMark RTX 3090 suite A (serving-tails.csv): Llama-3-8B under vLLM, 300 ShareGPT prompts at 5 requests/s,
    # measured p50 / p99 TTFT 7.6 s / 29.7 s (max rate under a 500 ms p99 TTFT: 0); sizer's single replica must
    # queue them too, not answer a few hundred milliseconds
    points, _ = by_source.points()
    (point,) = [p for p in points if p.device == "rtx-3090" and p.model == "llama-3-8b" and p.rate == 5.0]
    got = by_source.predict(point, by_source.load_catalog(), requests=1000)
    assert not isinstance(got, str)
    assert got["ttft_p50"] > 2_000 and got["ttft_p99"] > 10_000
    assert got["ttft_p99"] > 1.5 * got["ttft_p50"]
