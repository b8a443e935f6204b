"""MoE and MLA serving scored by source (benchmarks/moe_decode_by_source.py, issue 38 item 5): the MoE points of
``shared/data/serving-tails.csv`` (the fixed time per MoE layer is fitted on them; each source's leave-one-out figure is
in benchmarks/ACCURACY.md) and sglang#2643's DeepSeek-V3 figures (never fitted). Guards sit a few points above the
figures of 2026-12-06 (benchmarks/results/moe_decode_by_source.json); before item 5 they were the ``was`` values."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import moe_decode_by_source as moe  # noqa: E402

# output tokens/s median |error| [%] per source: today's figure + about 3 points (was, before item 5)
GUARDS = {
    "GPUSTACK-deepseek-r1-h200": 33.0,  # 29.9 (was 95.6)
    "GPUSTACK-qwen3-235b-a22b-h100": 13.0,  # 9.6 (was 35.7)
    "GPUSTACK-gpt-oss-20b-h100": 52.0,  # 49.3 (was 48.8; signed +48.4 -> +44.6)
    "GPUSTACK-gpt-oss-20b-a100": 13.5,  # 10.5 (was 11.7)
}


@pytest.fixture(scope="module")
def result():
    return moe.run(requests=1000)


@pytest.mark.parametrize("source", sorted(GUARDS))
def test_moe_output_tokens_per_s_by_source_does_not_regress(result, source):
    stats = result["summary"]["output_tokens_per_s"][source]
    assert stats["n"] >= 10 and stats["median_abs_pct"] <= GUARDS[source]


def test_the_held_out_sglang_figures_stay_within_the_bound_reached(result):
    # +38 / +39 / +15 % at batch 1 / 8 / 32 (was +499 / +318 / +142 %); the 15 % is not reached at 1 and 8
    errors = {row["scenario"]: row["error"] for row in result["static"]}
    assert errors["batch 1"] <= 0.45 and errors["batch 8"] <= 0.45 and errors["batch 32"] <= 0.22
    assert min(errors.values()) >= -0.15


def test_speculative_decoding_is_refused_not_scored(result):
    assert any("speculative" in reason for reason in result["refused"])
