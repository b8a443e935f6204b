"""The layout search at frontier scale: uneven pipelines and deep interleaving (Llama 3.1 405B's 126 blocks on
16,384 H100s), expert parallelism across nodes, and the searched layout never beaten by a given one."""
import numpy as np
import pytest

from sizer import facade
from sizer.engine import search
from sizer.engine.constants import device_efficiencies
from sizer.engine.devices import build_device_table
from sizer.engine.job import resolve_job
from sizer.engine.roofline import heaviest_stages
from sizer.engine.step_inputs import Shape
from sizer.hardware.catalog import load_catalog
from sizer.schemas.base import WorkloadRequest

LLAMA_405B = dict(model="llama-3.1-405b", tokens=15.6e12, device="H100 SXM")


def test_an_uneven_split_runs_at_its_heaviest_stage():
    shape = Shape(blocks=126, hidden=1, tokens_per_sample=1)
    # 126 blocks on 16 stages: the heaviest holds ceil(126/16) = 8, so the pipeline runs as 126/8 even stages
    assert heaviest_stages(shape, 16) == pytest.approx(126 / 8)
    assert heaviest_stages(shape, 2) == 2 and heaviest_stages(shape, 7) == 7  # dividing splits are unchanged
    assert heaviest_stages(None, 16) == 16


def test_interleave_depths_reach_one_block_per_virtual_stage():
    depths = search.interleave_depths(126, (1, 2, 4, 8, 16))
    assert 8 in depths and 16 in depths and 63 in depths  # 16 per stage on 8 stages; 63 on 2
    assert search.interleaves(126, 16, 8) and not search.interleaves(126, 16, 3)  # 8 blocks on the heaviest stage
    assert not search.interleaves(126, 1, 2)  # no pipeline, no interleaving


@pytest.mark.parametrize("count", [8192, 16384])
def test_llama_405b_reaches_deep_interleaving_and_the_published_mfu(count):
    result = facade.estimate_time(facade.TimeRequest(**LLAMA_405B, count=count), suggest=False)
    layout = result.layout
    assert layout.pp > 1 and layout.interleave > 4  # was 1-4 only, with pipelines dividing the blocks
    assert 126 % (layout.pp * layout.interleave) or layout.interleave >= 8
    # Llama 3 report Table 4 (recalled, not in ../shared/data): 43 % MFU on 8,192 and 41 % on 16,384 H100s, BF16;
    # the engine's held-out spread is about 15 %
    published = {8192: 0.43, 16384: 0.41}[count]
    assert result.mfu == pytest.approx(published, rel=0.15)


def test_the_searched_layout_is_never_beaten_at_16384_devices():
    # the published layout (Llama 3: tp 8, pp 16, cp 1, dp 128) and others given: each pinned, the rest searched;
    # the free search is never slower than any of them
    free = facade.estimate_time(facade.TimeRequest(**LLAMA_405B, count=16384), suggest=False)
    for pinned in (dict(tp=8, pp=16), dict(tp=8, pp=16, interleave=8), dict(tp=8, pp=8), dict(tp=4, pp=32),
                   dict(tp=8, pp=2, cp=2), dict(tp=8, pp=16, zero=1)):
        given = facade.estimate_time(facade.TimeRequest(**LLAMA_405B, count=16384, **pinned), suggest=False)
        if given.fits:
            # the search's own layout, beside the achieved headline (issue 39)
            assert free.best_layout.step_time.expected <= given.step_time.expected * (1 + 1e-9), pinned


def test_expert_parallelism_may_span_nodes():
    job = resolve_job(WorkloadRequest(model="deepseek-v3", tokens=1e12, precision="fp8"))
    device = load_catalog().find("H800")
    table = build_device_table((device,), job.precision, (device_efficiencies(device, True),))
    c = search.candidates(job, table, np.asarray([0]), np.asarray([2048]))
    node = int(table.devices_per_node[0])
    across = (c["tp"] * c["ep"] > node) & (c["ep"] > 1)
    assert across.any()  # e.g. tp 2 x ep 64, as DeepSeek-V3 ran EP 64 over 8 nodes
    # pinned, its all-to-all runs partly over the network: slower per step than the same EP inside a node
    inside = facade.estimate_time(facade.TimeRequest(model="deepseek-v3", tokens=14.8e12, device="H800", count=2048,
                                                     precision="fp8", tp=1, pp=16, ep=8), suggest=False)
    spanning = facade.estimate_time(facade.TimeRequest(model="deepseek-v3", tokens=14.8e12, device="H800", count=2048,
                                                       precision="fp8", tp=1, pp=16, ep=64), suggest=False)
    assert any(a.name == "expert parallel" and "across nodes" in a.value for a in spanning.assumptions)
    per_sample = lambda r: r.expert_parallel_per_step.value / (r.layout.accumulation * r.layout.micro_batch)  # noqa: E731
    assert per_sample(spanning) > per_sample(inside)


def test_an_overlapped_all_to_all_hides_behind_other_work_and_is_said():
    question = dict(model="deepseek-v3", tokens=14.8e12, device="H800", count=2048, precision="fp8", tp=1, pp=16, ep=64)
    plain = facade.estimate_time(facade.TimeRequest(**question), suggest=False)
    hidden = facade.estimate_time(facade.TimeRequest(**question, overlap_all_to_all=True), suggest=False)
    assert hidden.expert_parallel_per_step.value < plain.expert_parallel_per_step.value
    assert hidden.step_time.expected < plain.step_time.expected
    # never more hidden than 2/3 of the kernels outside the bubble (OVERLAP_SHARE, as the all-reduce's)
    hidden_seconds = plain.expert_parallel_per_step.value - hidden.expert_parallel_per_step.value
    assert hidden_seconds <= 2 / 3 * (plain.kernels_per_step.value - plain.bubble_per_step.value) + 1e-9
    assert any(a.name == "expert parallel" and "overlapped with another micro-batch" in a.value
               for a in hidden.assumptions)
    planned = facade.plan(facade.PlanRequest(**question, overlap_all_to_all=True, shown=1))
    assert planned.layouts[0].step_time.expected == pytest.approx(hidden.step_time.expected, rel=1e-9)


def test_zero2_pays_a_reduce_scatter_per_micro_batch_so_pipelines_take_zero1():
    from sizer.engine.constants import zero2_traffic_rounds

    assert zero2_traffic_rounds(1) == 1 and zero2_traffic_rounds(15) == 8  # (m + 1) / 2 all-reduces' worth
    question = dict(model="llama-2-70b", tokens=2e12, device="H100 SXM", count=1024, tp=8, pp=4, batch_size=4 * 2 ** 20)
    one, two = (facade.estimate_time(facade.TimeRequest(**question, zero=z), suggest=False) for z in (1, 2))
    assert two.layout.accumulation > 1
    assert two.data_parallel_per_step.value > one.data_parallel_per_step.value
    searched = facade.estimate_time(facade.TimeRequest(**{k: v for k, v in question.items() if k not in ("tp", "pp")}),
                                    suggest=False)
    if searched.layout.pp > 1 and searched.layout.accumulation > 1:
        assert searched.layout.zero != 2  # ZeRO-1 (or 3 where it must shard more) beats ZeRO-2 with many micro-batches
