"""A batch in sequences, tokens or samples (sizer.workloads.batch), read once and run in the workload's unit."""
from __future__ import annotations

import pytest

from sizer.engine.job import resolve_job
from sizer.errors import InputError
from sizer.schemas.base import WorkloadRequest
from sizer.workloads.batch import BatchUnit, batch_in_workload_units, parse_batch_size


@pytest.mark.parametrize("text, count, unit", [
    ("1536 sequences", 1536, BatchUnit.SEQUENCE), ("1 sequence", 1, BatchUnit.SEQUENCE), ("64 seqs", 64, BatchUnit.SEQUENCE),
    ("4M tokens", 4e6, BatchUnit.TOKEN), ("512 Samples", 512, BatchUnit.SAMPLE), ("4194304", 4194304, BatchUnit.WORKLOAD),
    (256, 256, BatchUnit.WORKLOAD), ("2k", 2000, BatchUnit.WORKLOAD),
])
def test_a_batch_is_read_with_its_word(text, count, unit):
    batch = parse_batch_size("batch_size", text)
    assert (batch.count, batch.unit) == (count, unit)


@pytest.mark.parametrize("text", ["lots of sequences", "sequences", "-4 sequences", "1536 bananas", "many"])
def test_a_batch_that_is_no_batch_names_the_field(text):
    with pytest.raises(InputError) as error:
        parse_batch_size("batch_size", text)
    assert error.value.field == "batch_size"
    assert "known unit" not in error.value.message


def test_sequences_become_tokens_of_the_sequence_length():
    # GPT-3 175B: a batch of 1,536 sequences of 2,048 tokens, "3.2M" tokens (Brown et al. 2020, Table 2.1)
    batch = parse_batch_size("batch_size", "1536 sequences")
    assert batch_in_workload_units(batch, token_mode=True, seq_len=2048) == 1536 * 2048
    assert batch_in_workload_units(batch, token_mode=False, seq_len=None) == 1536  # a sequence is one sample


def test_tokens_are_refused_for_a_sample_workload():
    with pytest.raises(InputError, match="tokens are counted for a language model only"):
        batch_in_workload_units(parse_batch_size("batch_size", "4M tokens"), token_mode=False, seq_len=None)


def test_a_job_in_sequences_is_the_job_in_tokens():
    common = dict(model="llama-2-7b", tokens="2e10", seq_len=4096)
    in_sequences = resolve_job(WorkloadRequest(**common, batch_size="1024 sequences"))
    in_tokens = resolve_job(WorkloadRequest(**common, batch_size=str(1024 * 4096)))
    assert in_sequences.batch_size == in_tokens.batch_size == 1024  # the job counts sequences
    said = {a.name: a.value for a in in_sequences.assumptions}
    assert said["batch size"] == "1,024 sequences of 4096 tokens = 4,194,304 tokens per step"


def test_sequences_use_the_models_own_sequence_length():
    # Llama 2 trained at 4,096 tokens (Touvron et al. 2023 §2.2): the model's default sequence length
    job = resolve_job(WorkloadRequest(model="llama-2-7b", tokens="2e10", batch_size="512 sequences"))
    assert job.tokens_per_sample == 4096 and job.batch_size == 512
