"""The parts of :func:`sizer.training.time_answer.estimate_training`: its checks, the layout it runs outside the
search (offload, hybrid sharding) and what it adds to an answer (host memory, interruptions, overlapped
all-to-alls). Llama 2 7B has 32 transformer blocks and 32 heads (Touvron et al. 2023, table 1); the
interleave limits below follow from those counts by hand."""
from __future__ import annotations

from typing import Any

import pytest

from sizer.engine.job import Job, resolve_job
from sizer.engine.layout_checks import _check_interleave, _refuse_parallel_without_blocks
from sizer.errors import InputError
from sizer.hardware.catalog import Catalog
from sizer.schemas.time_and_memory import TimeRequest
from sizer.training.time_answer import _check_count_and_offload, _given_layout, estimate_training


@pytest.fixture(scope="module")
def llama() -> Job:
    return resolve_job(TimeRequest.model_validate({"model": "llama-2-7b", "tokens": 2e10, "device": "H100 SXM"}))


@pytest.fixture(scope="module")
def dense() -> Job:
    return resolve_job(TimeRequest.model_validate({"params": 2e9, "samples": 1e6, "device": "H100 SXM"}))


@pytest.mark.parametrize("count", [0, True, 1_000_001, 2.0])
def test_a_count_out_of_bounds_is_refused_naming_count(catalog: Catalog, count: Any) -> None:  # deliberately not all ints
    with pytest.raises(InputError) as error:
        _check_count_and_offload(catalog.find("H100 SXM"), count, False)
    assert error.value.field == "count"


def test_offload_is_refused_where_the_device_shares_its_memory_with_the_cpu(catalog: Catalog) -> None:
    with pytest.raises(InputError, match="unified memory") as error:
        _check_count_and_offload(catalog.find("apple-m2-max-gpu"), 1, True)
    assert error.value.field == "offload"
    _check_count_and_offload(catalog.find("RTX 4090"), 1, True)  # memory of its own: allowed


def test_offload_defaults_to_zero_3_and_full_recomputation_and_says_so(llama: Job) -> None:
    layout, notes = _given_layout(llama, 4, True, (), zero=None, tp=None, pp=None, cp=None, recompute=None,
                                  interleave=None, ep=None)
    assert (layout["zero"], layout["recompute"], layout["tp"], layout["pp"], layout["ep"]) == (3, 2, 1, 1, 1)
    assert [a.name for a in notes] == ["offload layout"] and "ZeRO stage 3, recompute full" in notes[0].value


def test_offload_on_one_device_shards_nothing_and_a_given_layout_is_kept_unsaid(llama: Job, dense: Job) -> None:
    layout, _ = _given_layout(llama, 1, True, (), zero=None, tp=None, pp=None, cp=None, recompute=None,
                              interleave=None, ep=None)
    assert layout["zero"] == 0 and layout["recompute"] == 2
    layout, notes = _given_layout(llama, 4, True, (), zero=1, tp=2, pp=None, cp=None, recompute=0,
                                  interleave=None, ep=None)
    assert (layout["zero"], layout["recompute"], layout["tp"]) == (1, 0, 2) and notes == ()
    layout, notes = _given_layout(dense, 4, True, (), zero=None, tp=None, pp=None, cp=None, recompute=None,
                                  interleave=None, ep=None)
    assert layout["recompute"] == 0  # no transformer blocks to checkpoint


@pytest.mark.parametrize("given, field", [((2, 2, None, None), "tp"), ((None, 2, 2, None), "pp"),
                                          ((None, None, 2, None), "cp"), ((1, 1, 1, 2), "recompute")])
def test_parallelism_without_blocks_is_refused_naming_the_first_field_asked(given: tuple[int | None, int | None, int | None, int | None], field: str) -> None:
    with pytest.raises(InputError) as error:
        _refuse_parallel_without_blocks(*given)
    assert error.value.field == field


def test_no_parallelism_asked_of_a_workload_without_blocks_passes() -> None:
    _refuse_parallel_without_blocks(None, 1, None, 0)


def test_interleave_needs_a_block_in_every_virtual_chunk() -> None:
    with pytest.raises(InputError, match="at most 4 virtual chunks"):  # 32 blocks / 8 stages = 4 each
        _check_interleave(32, 8, 8)
    with pytest.raises(InputError, match="at most 16 virtual chunks"):  # at least 2 stages: 16 blocks each
        _check_interleave(32, None, 40)
    _check_interleave(32, 4, 8)  # 8 blocks a stage, one per chunk


def test_a_host_memory_given_without_offload_is_said_not_dropped(llama: Job, catalog: Catalog) -> None:
    plain = estimate_training(llama, catalog.find("H100 SXM"), 8)
    noted = estimate_training(llama, catalog.find("H100 SXM"), 8, host_memory=128e9)
    assert [a.name for a in noted.assumptions] == [a.name for a in plain.assumptions] + ["host memory"]
    assert "128 GB per host" in noted.assumptions[-1].value and noted.host_memory_per_host is None


def test_offload_checks_the_host_and_reports_its_memory(catalog: Catalog) -> None:
    job = resolve_job(TimeRequest.model_validate({"model": "llama-3-8b", "tokens": 1e9, "device": "RTX 4090"}))
    small = estimate_training(job, catalog.find("RTX 4090"), 1, offload=True, host_memory=16e9)
    large = estimate_training(job, catalog.find("RTX 4090"), 1, offload=True, host_memory=1e12)
    assert small.host_memory_per_host is not None and small.host_memory_per_host.value > 16
    assert not small.fits and any("host" in w for w in small.warnings)
    assert large.host_memory_per_host == small.host_memory_per_host  # the need does not depend on the RAM


def test_interruptions_are_shown_only_where_asked_or_expected(llama: Job, catalog: Catalog) -> None:
    device = catalog.find("H100 SXM")
    assert estimate_training(llama, device, 8, interruptions=False).with_interruptions is None
    shown = estimate_training(llama, device, 8, interruptions=True).with_interruptions
    assert shown is not None


def test_overlapped_all_to_alls_are_said_in_the_expert_parallel_assumption(catalog: Catalog) -> None:
    job = resolve_job(TimeRequest.model_validate({"model": "mixtral-8x7b", "tokens": 2e10, "device": "H100 SXM"}))
    device = catalog.find("H100 SXM")
    said = {a.name: a.value for a in estimate_training(job, device, 16, ep=8, overlap_all_to_all=True).assumptions}
    plain = {a.name: a.value for a in estimate_training(job, device, 16, ep=8).assumptions}
    assert "overlapped with another micro-batch" in said["expert parallel"]
    assert ", not overlapped" in plain["expert parallel"]
    # the plain answer names the option that overlaps them: without it DeepSeek-V3's own run (DualPipe) reads
    # 1.29x its reported GPU-hours (tests/benchmarks/test_frontier_accuracy.py), with it 0.96x
    assert "--overlap-all-to-all" in plain["expert parallel"] and "--overlap-all-to-all" not in said["expert parallel"]


def test_hybrid_sharding_needs_zero_3_and_no_expert_parallelism(llama: Job, catalog: Catalog) -> None:
    device = catalog.find("H100 SXM")
    with pytest.raises(InputError) as error:
        estimate_training(llama, device, 16, hybrid_shard=True)
    assert error.value.field == "hybrid_shard"
    job = resolve_job(TimeRequest.model_validate({"model": "mixtral-8x7b", "tokens": 2e10, "device": "H100 SXM"}))
    with pytest.raises(InputError) as error:
        estimate_training(job, device, 16, hybrid_shard=True, zero=3, ep=2)
    assert error.value.field == "ep"
