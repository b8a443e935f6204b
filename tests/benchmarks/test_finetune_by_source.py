"""Fine-tuning accuracy by source, each row asked with the framework its source ran (benchmarks/finetune_by_source.py;
benchmarks/ACCURACY.md, "Fine-tuning by source, with the source's framework"): fails when the leave-one-source-out
figures regress past what they are today, or a row is no longer asked with its framework. The measured values come
from the shared data file, never from sizer's own output."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import finetune_by_source  # noqa: E402

if not finetune_by_source.DATA.exists():  # the shared data sits beside the checkout
    pytest.skip("../shared/data/finetune-measurements.csv is not beside this checkout", allow_module_level=True)


@pytest.fixture(scope="module")
def memory():
    rows, left = finetune_by_source.load_rows()
    return rows, left, finetune_by_source.leave_one_source_out(rows)


def test_every_source_tool_maps_to_a_framework():
    from sizer.frameworks import Framework

    assert {Framework(name) for name in finetune_by_source.FRAMEWORK_OF_TOOL.values()} >= {
        Framework.LITGPT, Framework.HF_TRAINER, Framework.UNSLOTH, Framework.MEGATRON, Framework.DEEPSPEED,
        Framework.TORCHTUNE, Framework.AXOLOTL}


def test_memory_by_source(memory):
    rows, _, scored = memory
    assert len(scored) >= 7  # seven documents from five projects
    errors = [e for results in scored.values() for _, _, e, _ in results if e is not None]
    figures = finetune_by_source.figures(errors)
    assert figures["rows"] >= 45
    # issue 39 targets: median <= 15 % (met: 10.0 % on 2026-12-06), p90 <= 35 % (not met: 43.6 %; the sources
    # that miss are named in ACCURACY.md); guarded a little looser than today's figures
    assert figures["median"] <= 0.12
    assert figures["p90"] <= 0.48
    assert abs(figures["signed"]) <= 0.05


def test_the_fitted_factors_are_refitted_without_the_scored_source_and_restored(memory):
    import sizer.workloads.finetune as finetune

    rows, _, _ = memory
    assert (finetune.LORA_ACTIVATION_FACTOR, finetune.QLORA_ACTIVATION_FACTOR) == (1.35, 2.19)  # restored
    assert finetune_by_source.fit_factors([]) == {name: 1.0 for name in finetune_by_source.FACTORS}  # none to fit on
    without_litgpt = finetune_by_source.fit_factors([r for r in rows if "litgpt" not in r.source])
    assert without_litgpt["LORA_ACTIVATION_FACTOR"] != pytest.approx(finetune.LORA_ACTIVATION_FACTOR, rel=0.01)


def test_throughput_by_source():
    scored = finetune_by_source.throughput_by_source(finetune_by_source.load_timed())
    assert len(scored) >= 5
    errors = [e for results in scored.values() for _, _, e in results]
    figures = finetune_by_source.figures(errors)
    # issue 39 target: median <= 20 % (not met: 26.6 % on 2026-12-06, XTuner's long-context rows and ms-swift's
    # Yi-34B predicted too slow); guarded a little looser than today's figures
    assert figures["rows"] >= 40
    assert figures["median"] <= 0.30
    assert figures["p90"] <= 0.52
