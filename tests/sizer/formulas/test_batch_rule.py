"""The default pre-training batch: DeepSeek LLM's batch against compute, bounded, whole power-of-two sequences;
a model's own published batch where the catalog cites one; a given batch never changed."""
import math

import pytest

from sizer import facade
from sizer.engine.job import default_batch_tokens, resolve_job
from sizer.formulas import batch_rule as batch
from sizer.schemas.base import WorkloadRequest


def test_the_rule_is_deepseek_llms_power_law():
    # DeepSeek LLM (arXiv:2401.02954) §3.1 eq. 1: B_opt = 0.2920 C^0.3271; exact arithmetic, so a tight tolerance
    for compute in (1e17, 3e20, 1e24):
        assert batch.deepseek_llm_batch_tokens(compute) == pytest.approx(0.2920 * compute ** 0.3271, rel=1e-12)
    # doubling the compute multiplies the batch by 2^0.3271
    assert batch.deepseek_llm_batch_tokens(2e22) / batch.deepseek_llm_batch_tokens(1e22) == pytest.approx(2 ** 0.3271)
    with pytest.raises(ValueError):
        batch.deepseek_llm_batch_tokens(0.0)


def test_the_rule_is_bounded():
    assert batch.scaled_batch_tokens(1e15) == batch.BATCH_TOKENS_FLOOR
    assert batch.scaled_batch_tokens(1e30) == batch.BATCH_TOKENS_CEILING
    inside = 1e22
    assert batch.scaled_batch_tokens(inside) == batch.deepseek_llm_batch_tokens(inside)


def test_a_run_of_known_length_takes_the_rule_in_whole_power_of_two_sequences():
    # Llama 2 7B on 2T tokens: C = 6 N D = 8.1e22 FLOP, the rule 9.1M tokens -> 2,048 sequences of 4,096 (8.4M)
    job = resolve_job(WorkloadRequest(model="llama-2-7b", tokens=2e12))
    rule = batch.deepseek_llm_batch_tokens(6.0 * job.arch.params_active() * 2e12)
    tokens = job.batch_size * job.tokens_per_sample
    assert math.log2(job.batch_size) == int(math.log2(job.batch_size))
    assert abs(math.log2(tokens / rule)) <= 0.5
    assert job.batch_size == 2048
    said = next(a for a in job.assumptions if a.name == "batch size")
    assert "0.2920 C^0.3271" in said.value and not said.verified  # recalled coefficients are marked unverified


def test_the_batch_grows_with_the_run():
    short = resolve_job(WorkloadRequest(model="llama-2-70b", tokens=1e11))
    long = resolve_job(WorkloadRequest(model="llama-2-70b", tokens=1e13))
    assert long.batch_size > short.batch_size


def test_a_mixture_of_experts_takes_its_active_parameters():
    moe = resolve_job(WorkloadRequest(model="mixtral-8x7b", tokens=1e12))
    compute = 6.0 * moe.arch.params_active() * 1e12
    assert moe.batch_size * moe.tokens_per_sample == pytest.approx(
        moe.tokens_per_sample * 2.0 ** round(math.log2(batch.scaled_batch_tokens(compute) / moe.tokens_per_sample)))


@pytest.mark.parametrize("model, sequences, seq_len", [
    ("deepseek-v3", 15360, 4096),  # DeepSeek-V3 report §4.2: 15,360 sequences of 4K tokens
    ("llama-3.1-405b", 2048, 8192),  # Llama 3 report §3.4.1: 16M tokens at 8,192
])
def test_a_model_that_cites_its_batch_uses_it(model, sequences, seq_len):
    job = resolve_job(WorkloadRequest(model=model, tokens=1e12))
    assert (job.batch_size, job.tokens_per_sample) == (sequences, seq_len)
    said = next(a for a in job.assumptions if a.name == "batch size")
    assert "own pre-training batch" in said.value and not said.verified


def test_a_given_batch_or_sequence_is_never_changed():
    job = resolve_job(WorkloadRequest(model="deepseek-v3", tokens=1e12, batch_size=4096 * 1024, seq_len=2048))
    assert (job.batch_size, job.tokens_per_sample) == (2048, 2048)
    job = resolve_job(WorkloadRequest(model="llama-2-7b", tokens=2e12, batch_size=2 ** 22))
    assert job.batch_size * job.tokens_per_sample == 2 ** 22


def test_without_a_run_length_the_batch_is_by_size():
    job = resolve_job(WorkloadRequest(model="llama-2-7b"), need_samples=False)
    assert job.batch_size * job.tokens_per_sample == default_batch_tokens(job.arch.params_total()) == 4 * 2 ** 20


def test_time_states_the_scaled_default_and_warns_where_the_count_forces_another():
    result = facade.estimate_time(facade.TimeRequest(params=1.25e8, tokens=1e9, device="H100 SXM", count=131072),
                                  suggest=False)
    assert any(a.name == "batch size" and "0.2920 C^0.3271" in a.value for a in result.assumptions)
    assert any(w.startswith("default batch raised") for w in result.warnings)
