"""Accuracy at frontier scale (benchmarks/frontier_scale.py), judged against stated figures, not results files:
the recalled frontier runs (DeepSeek-V3 on 2,048 H800, Llama 3.1 405B on 8,192 and 16,384 H100, its wall-clock
with interruptions) and the held-out runs above 1,000 GPUs with no layout given."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import frontier_scale  # noqa: E402

# Held-out runs above 1,000 GPUs, no layout (20 runs: Narayanan 2021, Megatron-LM, NeMo): 21.2 % median and 55.6 %
# p90 today, short of the 15 % / 35 % targets. Not the engine's pricing: Narayanan's five PTD-P runs are within
# 9 % with their own layout, but ran full recomputation (the search drops it: 0.68-0.80 of their step), and seven
# are comparison runs (DeepSpeed ZeRO-3 without model parallelism, or PTD-P with no layout stated) that ran 2-2.5x
# slower than the layout the search finds. Guards: today's plus 3 points.
# 2026-12-06: 25.2 % / 56.2 % once the search stopped offering ZeRO-3 with pipeline stages (no framework runs it,
# issue 39) and the no-layout headline became the achieved time (engine.achieved): guards moved to those plus 3 points.
ABOVE_1000_MEDIAN_GUARD = 0.28
ABOVE_1000_P90_GUARD = 0.59


@pytest.fixture(scope="module")
def frontier():
    return frontier_scale.frontier_rows()


def _ratios(rows, label: str, asked: str) -> list[float]:
    return [r["ratio"] for r in rows if r["label"].startswith(label) and r["asked"] == asked]


@pytest.mark.parametrize("asked", ["batch given", "default batch"])
def test_deepseek_v3_on_its_published_hardware_within_25_percent(frontier, asked):
    # DeepSeek-V3 report Table 1: 2,664K H800 GPU-hours of pre-training (recalled); with its DualPipe overlap
    (ratio,) = _ratios(frontier, "deepseek-v3", asked)
    assert abs(ratio - 1) <= 0.25


def test_deepseek_v3_without_its_overlap_is_slower_and_said(frontier):
    (plain,) = _ratios(frontier, "deepseek-v3", "batch given, all-to-all not overlapped")
    (overlapped,) = _ratios(frontier, "deepseek-v3", "batch given")
    assert plain > overlapped  # 1.29 against 0.96 today: the overlap is what DualPipe buys


@pytest.mark.parametrize("label", ["llama-3.1-405b 8192", "llama-3.1-405b 16384 x H100 MFU"])
def test_llama_405b_mfu_at_scale(frontier, label):
    # Llama 3 report Table 4 (recalled): 43 % and 41 % BF16 MFU; 1.03 and 0.99 of them today
    for asked in ("batch given", "default batch"):
        (ratio,) = _ratios(frontier, label, asked)
        assert abs(ratio - 1) <= 0.10


def test_llama_405b_wall_clock_with_interruptions_within_20_percent(frontier):
    # Llama 3.1 model card: 30.84M H100 GPU-hours (recalled; long-context and annealing stages included); 1.02 today.
    # One published wall-clock: the restart is fitted on the same run's 54-day snapshot, so this is not out of sample.
    for asked in ("batch given", "default batch"):
        (ratio,) = _ratios(frontier, "llama-3.1-405b 16384 x H100 wall-clock", asked)
        assert abs(ratio - 1) <= 0.20


@pytest.fixture(scope="module")
def held_out():
    return frontier_scale.held_out_without_layout()


def test_held_out_runs_above_1000_gpus_hold_their_guards(held_out):
    held, _, _ = held_out
    above = held["above 1,000 GPUs"]
    assert above["n"] == 20 and above["refused"] == 0
    assert above["median"] <= ABOVE_1000_MEDIAN_GUARD and above["p90"] <= ABOVE_1000_P90_GUARD


def test_ptdp_runs_above_1000_gpus_are_priced_with_their_own_layout(held_out):
    # Narayanan et al. 2021 Table 1 (76B-1T on 1,024-3,072 A100): +5.5 % to +8.3 % with their layout today, so
    # their no-layout misses (-13 % to -29 %) are the search's faster layout, not the engine's pricing of theirs
    _, runs, _ = held_out
    ptdp = [r for r in runs if r["run"].startswith("Narayanan") and r["published_layout"].startswith("tp 8 ")]
    assert len(ptdp) == 5
    for r in ptdp:
        assert abs(r["error_published_layout"]) <= 0.10
        assert r["searched_over_published_step"] <= 1.0  # the search never picks a slower layout it can express


def test_recompute_saving_the_search_banks_on_is_the_measured_one(held_out):
    # Korthikanti et al. 2022 Table 4: selective recomputation with sequence parallelism measured 1.29-1.32x faster
    # than full recomputation on the same model, devices and split; predicted 1.22-1.31x today. Tolerance 8 %:
    # today's largest gap (GPT 22B, 5.7 %) plus room; a search that under-priced dropping recomputation fails here.
    _, _, pairs = held_out
    assert len(pairs) == 4
    for pair in pairs:
        assert abs(pair["predicted_speedup"] / pair["measured_speedup"] - 1) <= 0.08
