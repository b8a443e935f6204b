"""Held-out accuracy of fine-tuning peak memory (benchmarks/finetune_accuracy.py; targets in
benchmarks/ACCURACY.md, "Fine-tuning"): fails when the held-out errors regress past the targets or a
published run is called "does not fit". The measured values come from the shared data file, never from
sizer's own output."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import finetune_accuracy  # noqa: E402

if not finetune_accuracy.DATA.exists():  # the shared data sits beside the checkout
    pytest.skip("../shared/data/finetune-measurements.csv is not beside this checkout", allow_module_level=True)


@pytest.fixture(scope="module")
def parts():
    runs, _ = finetune_accuracy.load_runs()
    return finetune_accuracy.score(runs)


def test_held_out_memory_within_targets(parts):
    held = parts["held-out"]
    assert len(held["errors"]) >= 5  # enough held-out runs for a median to mean something
    median, p90 = finetune_accuracy.summary(held["errors"])
    assert median <= 0.12  # issue target: median <= 12 %
    assert p90 <= 0.30  # issue target: p90 <= 30 %


def test_no_held_out_published_run_called_does_not_fit(parts):
    assert parts["held-out"]["wrong_oom"] == []


def test_split_is_by_model(parts):
    fit = {row[0].model for row in parts["fit"]["rows"]}
    held = {row[0].model for row in parts["held-out"]["rows"]}
    assert fit and held and not fit & held


def test_fitted_activation_factors_are_the_fit_parts():
    # the constants in sizer.workloads.finetune are what the fit part gives (rounded), never the held-out part's
    from sizer.workloads.finetune import LORA_ACTIVATION_FACTOR, QLORA_ACTIVATION_FACTOR

    runs, _ = finetune_accuracy.load_runs()
    fitted = finetune_accuracy.fit_activation_factors(runs)
    assert fitted["lora"] == pytest.approx(LORA_ACTIVATION_FACTOR, rel=0.02)
    assert fitted["qlora"] == pytest.approx(QLORA_ACTIVATION_FACTOR, rel=0.02)


@pytest.fixture(scope="module")
def timed():
    runs = finetune_accuracy.load_timed_runs()
    tokens = finetune_accuracy.fit_sample_tokens(runs)
    return runs, tokens, finetune_accuracy.score_throughput(runs, tokens)


def test_held_out_throughput(timed):
    _, _, parts = timed
    errors = [row[2] for row in parts["held-out"]]
    assert len(errors) >= 5
    median, p90 = finetune_accuracy.summary(errors)
    assert median <= 0.20  # issue target: median <= 20 % (held-out today: 15.9 %)
    # issue target p90 <= 50 %; held-out today 25.7 % (eager adapter constants, sizer.engine.eager), guarded
    # with a little slack for the 7-row part
    assert p90 <= 0.30


def test_eager_adapter_constants_are_the_fit_parts():
    # sizer.engine.eager's constants are the fit part's choice over its grids (benchmarks/ACCURACY.md, Fine-tuning)
    from sizer.engine.eager import ADAPTER_LAUNCH_SCALE, ADAPTER_MATRIX_HALF_SCALE

    best, _ = finetune_accuracy.fit_eager_constants(finetune_accuracy.load_timed_runs())
    assert best == (ADAPTER_MATRIX_HALF_SCALE, ADAPTER_LAUNCH_SCALE)


def test_mlperf_style_lora_keeps_the_pre_training_constants():
    # a job marked not eager (MLPerf's tuned LoRA submissions) is timed exactly as before the eager constants
    from dataclasses import replace

    import sizer.engine.eager as eager
    from sizer.engine.job import resolve_job
    from sizer.hardware.catalog import load_catalog
    from sizer.schemas.base import WorkloadRequest
    from sizer.training.time_answer import estimate_training

    job = resolve_job(WorkloadRequest(model="llama-2-7b", method="lora", seq_len=512, batch_size=512, tokens=512000,
                                      precision="bf16", optimizer="adamw"))
    device = load_catalog().find("A10G")
    fused = estimate_training(replace(job, eager=False), device, 1).step_time.expected
    eager_time = estimate_training(job, device, 1).step_time.expected
    kept = eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE
    try:
        eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE = 1.0, 1.0
        unchanged = estimate_training(job, device, 1).step_time.expected
    finally:
        eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE = kept
    assert fused == pytest.approx(unchanged, rel=1e-12)
    assert eager_time != pytest.approx(fused, rel=0.01)  # the eager constants do change a short adapter step


def test_fitted_dequant_share_is_the_fit_parts(timed):
    from sizer.workloads.finetune import DEQUANT_BANDWIDTH_SHARE

    runs, tokens, _ = timed
    assert finetune_accuracy.fit_dequant_share(runs, tokens) == pytest.approx(DEQUANT_BANDWIDTH_SHARE)


def test_hugging_face_measurements_on_an_h100():
    # this project's own measurements of Hugging Face fine-tuning steps (benchmarks/gpu_finetune_memory.py, an
    # H100, 2026-11-26): a framework the activation factors were not fitted on; 5.2 % today at worst (full
    # fine-tunes, whose gradients and activations peak at different moments of the backward pass)
    scored = finetune_accuracy.score_hf_measurements()
    assert len(scored) >= 6
    median, p90 = finetune_accuracy.summary([error for _, _, error in scored])
    assert median <= 0.03 and p90 <= 0.08
