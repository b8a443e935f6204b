"""Load as benchmarks apply it, scored by source (benchmarks/serving_by_source.py ``--lengths benchmark``, issue 38
item 3): lengths drawn as each point's benchmark draws them (vLLM's ShareGPT sample spread and filtered, random
datasets within their range ratio). Nothing in sizer is fitted on serving-tails.csv, and the spreads come from other
rows (AccelMark's prompt quantiles, Sarathi-Serve's reply quantiles), so every figure is out of sample. The figures of
benchmarks/ACCURACY.md ("Load as benchmarks apply it") cannot regress unseen."""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import serving_by_source as by_source  # noqa: E402

# Median |error| [%]: the figures of 2026-12-06 with --lengths benchmark after every issue-38 change (p99 TTFT 71.0,
# bursts 45.2, p99 TPOT 43.7, output tokens/s 32.3) plus about 3 points. (Before AccelMark's outputs were taken from
# the other sources' serial runs, this mechanism alone gave p99 TTFT 58.3 % against 62.1 % at the means.)
GUARDS = {("ttft_p99", "all"): 74.0, ("ttft_p99", "scenario=burst"): 48.5, ("tpot_p99", "all"): 47.0,
          ("output_tokens_per_s", "all"): 35.5}


@pytest.fixture(scope="module")
def result():
    return by_source.run(per_source=1000, max_points=1000, requests=1000, spread="benchmark", warmup=0.0)


@pytest.mark.parametrize("metric,group", sorted(GUARDS))
def test_by_source_median_does_not_regress(result, metric, group):
    stats = result["summary"][metric][group]
    assert stats["n"] >= 20 and stats["median_abs_pct"] <= GUARDS[(metric, group)]


def _tails(result, scenario: str, runtime: str | None = None) -> list[tuple[float, float, float, float]]:
    """(measured p50, measured p99, predicted p50, predicted p99) TTFT [ms] of every scored point of ``scenario``."""
    rows, out, p50 = result["rows"], [], None
    for r in rows:  # score() writes a point's metrics in turn: its p50 TTFT row, then its p99
        if r["scenario"] != scenario or (runtime and r["runtime"] != runtime):
            continue
        if r["metric"] == "ttft_p50":
            p50 = r
        elif r["metric"] == "ttft_p99" and p50 is not None and p50["source"] == r["source"]:
            out.append((p50["measured"], r["measured"], p50["predicted"], r["predicted"]))
    return out


def test_a_fixed_concurrency_of_sharegpt_prompts_is_no_longer_in_lockstep(result):
    # GPUStack fixed-concurrency points (vllm bench serve --max-concurrency 1-8, ShareGPT): measured p99 / p50 TTFT
    # 1.2-13; at every request's means sizer's p99 was its p50 on each of them
    tails = _tails(result, "users")
    assert len(tails) >= 20
    assert all(p99 > 1.2 * p50 for _, _, p50, p99 in tails)


def test_the_tail_above_the_median_is_a_share_of_the_measured_one(result):
    # p99 - p50 is blind to a per-request constant (the API server's time, not modelled here): under vLLM (no
    # speculative decoding among these points) the simulated excess is about half the measured (0 at the means)
    excess = [(q99 - q50) / (m99 - m50) for m50, m99, q50, q99 in _tails(result, "users", "vllm") if m99 > m50]
    assert len(excess) >= 4
    assert statistics.median(excess) >= 0.35
