"""sizer/engine/job.py: a training request resolved into the engine's layers and the run's numbers.

The default batch's rounding for a layout is tested in test_default_batch.py; here the job itself:
its training FLOP against published formulas, its defaults, and its refusals.
"""
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.choices import Optimizer, Precision
from sizer.engine.job import (
    BATCH_BY_SIZE,
    FINETUNE_BATCH,
    TRAINING_CONTEXT_CAP,
    default_batch_tokens,
    dense_profile,
    job_from_profile,
    resolve_job,
)
from sizer.errors import InputError
from sizer.schemas.base import WorkloadRequest


def test_gpt3_training_compute_is_six_p_s():
    # seed 004 eq. 3 / spec §3.2: C = O_f O_b P S E = 2 x 3 x 175e9 x 300e9 = 3.15e23 FLOP (exact)
    job = resolve_job(WorkloadRequest(params=175e9, samples=300e9))
    assert job.training_flops == pytest.approx(3.15e23, rel=1e-12)
    assert not job.token_mode and job.shape is None


def test_llama_2_7b_training_compute_follows_palm_appendix_b():
    # PaLM (Chowdhery et al. 2022, App. B): 6N + 12 L H Q T FLOP per token. The input embedding is a
    # lookup (no FLOP), so N counts the other weights: 6,738,415,616 - 32000 x 4096. Llama 2 7B: L = 32,
    # H Q = 4096, T = 4096 (Touvron et al. 2023), 2e12 tokens. rtol 1e-3: norms, activations and
    # softmax, which the formula leaves out, are counted in the layer graph.
    job = resolve_job(WorkloadRequest(model="llama-2-7b", tokens=2e12))
    per_token = 6 * (6_738_415_616 - 32000 * 4096) + 12 * 32 * 4096 * 4096
    assert job.training_flops == pytest.approx(per_token * 2e12, rel=1e-3)
    assert job.tokens_per_sample == 4096 and job.samples == pytest.approx(2e12 / 4096)
    assert job.shape.blocks == 32 and job.shape.hidden == 4096


def test_lora_costs_two_thirds_of_full_training_plus_its_adapters():
    # a frozen base has no weight gradients: forward + input gradients = 2 of 3 forward passes
    full = resolve_job(WorkloadRequest(model="llama-2-7b", tokens=1e9))
    lora = resolve_job(WorkloadRequest(model="llama-2-7b", tokens=1e9, method="lora"))
    ratio = lora.training_flops / full.training_flops
    assert 2 / 3 < ratio < 2 / 3 * 1.01  # r = 8 adapters on q, v add well under 1 %
    assert lora.finetune is not None and lora.summary.endswith("lora r=8")


@pytest.mark.parametrize("params, tokens", [(1.25e8, 512 * 1024), (9.99e8, 512 * 1024), (1e9, 2 * 1024 ** 2),
                                            (6.7e9, 4 * 1024 ** 2), (70e9, 4 * 1024 ** 2)])
def test_default_pretraining_batch_by_model_size(params, tokens):
    # GPT-3 Table 2.1: 0.5M tokens for the small models, 1-2M to 6.7B; Llama 2 §2.2: 4M tokens
    assert default_batch_tokens(params) == tokens


@given(st.floats(0, 1e13), st.floats(0, 1e13))
def test_a_larger_model_never_gets_a_smaller_default_batch(a, b):
    small, large = sorted((a, b))
    assert default_batch_tokens(small) <= default_batch_tokens(large)
    assert BATCH_BY_SIZE[-1][0] == 0  # every size has a batch


def test_defaults_for_a_named_model_are_stated():
    # Llama 2 7B on 1e10 tokens: its 4096-token context, and the batch of DeepSeek LLM's fitted rule
    # B = 0.2920 C^0.3271 tokens (C = 6 N D FLOP) in a power of two of whole sequences, each said
    job = resolve_job(WorkloadRequest(model="llama-2-7b", tokens=1e10))
    said = {a.name: a.value for a in job.assumptions}
    assert said["sequence length"].startswith("4096 tokens")
    assert "0.2920 C^0.3271" in said["batch size"]
    rule = 0.2920 * (6 * 6.738e9 * 1e10) ** 0.3271 / 4096  # sequences the rule asks for
    sequences = job.batch_size
    assert sequences == 2 ** round(math.log2(sequences)) and not job.batch_given
    assert rule / 2 ** 0.5 <= sequences <= rule * 2 ** 0.5  # the nearest power of two


def test_a_long_context_model_pretrains_at_the_cap():
    # Mistral 7B's 32k context is an extension; pre-training sequences are capped (Llama 3 §3.4: 8,192)
    job = resolve_job(WorkloadRequest(model="mistral-7b", tokens=1e9))
    assert job.tokens_per_sample == TRAINING_CONTEXT_CAP
    assert any("extended context aside" in a.value for a in job.assumptions)


def test_fine_tuning_defaults_to_a_fine_tuning_batch():
    job = resolve_job(WorkloadRequest(model="llama-2-7b", tokens=1e9, method="qlora"))
    assert job.batch_size == FINETUNE_BATCH
    assert any("fine-tuning batch" in a.value for a in job.assumptions)


@pytest.mark.parametrize("fields, field", [
    (dict(model="llama-2-7b", workload="resnet50", tokens=1e9), "model"),
    (dict(model="llama-2-7b", params=7e9, tokens=1e9), "params"),
    (dict(workload="resnet50", samples=1e6), "batch_size"),
    (dict(model="llama-2-7b", samples=1e6), "tokens"),
])
def test_conflicting_or_missing_sources_are_refused_naming_the_field(fields, field):
    with pytest.raises(InputError, match=f"^{field}: "):
        resolve_job(WorkloadRequest(**fields))


def test_memory_needs_no_run_length_for_a_model():
    job = resolve_job(WorkloadRequest(model="llama-2-7b"), need_samples=False)
    assert job.token_mode and job.params == pytest.approx(6_738_415_616, rel=1e-3)


def test_a_stated_activation_figure_is_read_at_the_training_precision():
    # profiles count activations at FP32: 12 MB stated under mixed (16-bit) is 24 MB of FP32, under fp32 12 MB
    mixed = resolve_job(WorkloadRequest(params=1e6, samples=1000, batch_size=10, activation_memory_per_sample="12 MB"))
    fp32 = resolve_job(WorkloadRequest(params=1e6, samples=1000, batch_size=10, activation_memory_per_sample="12 MB",
                                       precision="fp32"))
    assert mixed.layers.total_activation_bytes == pytest.approx(24e6)
    assert fp32.layers.total_activation_bytes == pytest.approx(12e6)


@pytest.fixture(scope="module")
def small_job():
    return resolve_job(WorkloadRequest(params=1e6, samples=1e6, batch_size=10))


@given(st.floats(1, 1e12), st.floats(1, 1e6))
def test_steps_cover_every_sample(small_job, samples, batch):
    job = replace(small_job, samples=samples, epochs=1.0)
    steps = job.steps_for(batch)
    assert steps >= 1 and steps * batch >= samples * (1 - 1e-12)
    assert (steps - 1) * batch < samples or steps == 1


def test_a_job_from_a_profile_keeps_its_layers():
    profile = dense_profile(1e6, 2e6, 4e3)
    job = job_from_profile(profile, 32, Precision.BF16, Optimizer.ADAMW)
    assert job.params == 1e6 and job.batch_size == 32 and job.batch_given and job.samples == 0
    assert job.precision.value == "bf16" and job.optimizer.value == "adamw"
    assert job.training_flops == 0  # no run length: a step time only
    assert np.isclose(job.layers.total_forward_flops, 2e6)


def test_a_generated_graphs_table_is_kept_on_disk_and_read_back_the_same(tmp_path, monkeypatch):
    # the disk entry (disk:layer-graph) holds the table the graph folds into: read back, every figure the same
    from sizer.engine import job
    from sizer.workloads.decoder_shape import decoder_for_params

    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path))
    arch = decoder_for_params(7e9)[0]
    built = job._build_graph(arch, 2048, True)
    assert len(list(tmp_path.glob("layer-graph-*.pickle"))) == 1
    read = job._build_graph(arch, 2048, True)  # the function itself, not the process's cache: from the disk entry
    fresh = job._graph_table(arch, 2048, True)  # no cache at all
    assert read is not built and read.content_key == fresh.content_key == built.content_key
    assert (read.layer_count, read.seq_len, read.sample) == (fresh.layer_count, 2048, "sequence")
    job._build_graph(arch, 4096, True)
    job._build_graph(arch, 2048, False)
    assert len(list(tmp_path.glob("layer-graph-*.pickle"))) == 3  # another length, unfused attention: their own
