"""One training answer: a job on ``count`` devices of one kind, as a typed result.

The numbers come from :func:`sizer.engine.evaluate.evaluate` on a single configuration; this
module only shapes them (ranges from the mode's observed error spread, never below the physical
limit ``C / (n R_peak)``; seed 004's first-order ``C / (n R (1 − d))`` as a labelled reference).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from sizer.hardware.schema import Device
from sizer.choices import Mode
from sizer.engine.constants import (EP_LOAD_IMBALANCE, EP_LOAD_IMBALANCE_SOURCE, FRAMEWORK_OVERHEAD_SOURCE, HOST_OPTIMIZER_SOURCE, ZERO_BUCKETS_SOURCE, Efficiencies,
                                    default_efficiencies)
from sizer.engine.evaluate import Evaluation, evaluate, range_factors, workload_kind
from sizer.engine.devices import build_device_table, device_link, node_layout, topology_links
from sizer.engine.roofline import BOUNDS, RECOMPUTE, expert_layout
from sizer.errors import InputError
from sizer.results import Assumption, Model, QuantityOut, RangeOut, unit_factor
from sizer.formulas.peaks import DEFAULT_DERATING
from sizer.units import Quantity
from sizer.workloads.job import Job


LAYER_BOUNDS = ("compute", "memory", "launch")


class LayerGroupTime(Model):
    kind: str
    layers: int
    time_per_step: QuantityOut
    share: float
    bound: str


class Layout(Model):
    tp: int
    pp: int
    dp: int
    ep: int = 1  # expert-parallel ranks, out of the dp ones (a mixture of experts)
    zero: int
    recompute: str
    interleave: int
    micro_batch: float
    accumulation: int


class TimeResult(Model):
    workload: str
    device: str
    count: int
    precision: str
    method: str
    trainable_params: float
    mode: Mode
    layout: Layout
    batch_size: float
    sample: str
    steps: float | None
    training_compute: QuantityOut | None
    peak: QuantityOut
    step_time: RangeOut
    throughput: RangeOut
    training_time: RangeOut | None
    first_order_time: QuantityOut | None
    physical_limit: QuantityOut
    kernels_per_step: QuantityOut
    optimizer_time_per_step: QuantityOut
    overhead_per_step: QuantityOut
    communication_per_step: QuantityOut
    tensor_parallel_per_step: QuantityOut
    pipeline_per_step: QuantityOut
    data_parallel_per_step: QuantityOut
    expert_parallel_per_step: QuantityOut
    bubble_per_step: QuantityOut
    bound: str
    mfu: float
    hfu: float
    layer_groups: list[LayerGroupTime]
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    fits: bool
    largest_micro_batch: float | None
    warnings: list[str]
    efficiencies: dict[str, float]
    assumptions: list[Assumption]


def time_unit(seconds: float) -> str:
    """A unit a person reads a duration in.

    Parameters
    ----------
    seconds : float
        The duration [s].

    Returns
    -------
    str
        ``"day"`` from 3 days, ``"hour"`` from 2 hours, ``"minute"`` from 10 minutes, else ``"s"``.
    """
    if seconds >= 3 * unit_factor("day", "s"):
        return "day"
    if seconds >= 2 * unit_factor("hour", "s"):
        return "hour"
    return "minute" if seconds >= 600 else "s"


def _groups(job: Job, evaluation: Evaluation) -> list[LayerGroupTime]:
    c = evaluation.configs  # one device's share of a step: its stage's layers, every micro-batch and the bubble
    slots = (c.accumulation[0] + (c.pp[0] - 1) / c.interleave[0]) / c.pp[0]
    per_layer = evaluation.parts.layer_seconds[0] * job.layers.multiplicity * slots
    total = float(per_layer.sum()) or 1.0
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, float] = defaultdict(float)
    by_bound: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    bounds = evaluation.parts.layer_bound[0]
    for kind, value, many, bound in zip(job.layers.kinds, per_layer, job.layers.multiplicity, bounds):
        seconds[kind] += float(value)
        counts[kind] += float(many)
        by_bound[kind][LAYER_BOUNDS[int(bound)]] += float(value)
    return [LayerGroupTime(kind=kind, layers=int(counts[kind]), time_per_step=QuantityOut.of(Quantity(s, "s"), "s"),
                           share=s / total, bound=max(by_bound[kind], key=by_bound[kind].get))
            for kind, s in sorted(seconds.items(), key=lambda kv: -kv[1])]


def check_expert_parallel(job: Job, count: int, tp: int, pp: int, ep: int) -> None:
    """An expert-parallel size the job can run, or InputError naming ``ep``: a mixture of experts,
    ``ep`` dividing its experts and the tensor x data-parallel ranks (expert ranks are data-parallel
    ranks, as in Megatron-Core and DeepSpeed-MoE, or span the tensor ranks too with experts not
    tensor-split: :func:`~sizer.engine.roofline.expert_layout`).

    Parameters
    ----------
    job : Job
        The workload.
    count : int
        Devices [1].
    tp, pp : int
        Tensor- and pipeline-parallel sizes [1].
    ep : int
        Expert-parallel size [1].

    Raises
    ------
    InputError
        Naming ``ep``: not a mixture of experts, not a divisor of the experts or of count / pp.

    References
    ----------
    [gshard], [deepspeed-moe]
    """
    if isinstance(ep, bool) or not isinstance(ep, int) or ep < 1:
        raise InputError("ep", ep, "a whole number of expert-parallel ranks, at least 1")
    if ep == 1:
        return
    arch = job.arch
    if arch is None or not arch.moe:
        raise InputError("ep", ep, "a mixture-of-experts model (--model with experts, e.g. mixtral-8x7b): expert "
                                   "parallelism splits the routed experts")
    if arch.experts % ep:
        raise InputError("ep", ep, f"a divisor of the {arch.experts} experts of {arch.name}")
    ranks = count // pp if count % (tp * pp) == 0 else 0
    if not ranks or ranks % ep:
        raise InputError("ep", ep, f"a divisor of the tensor x data-parallel ranks count / pp = {count / pp:g}: "
                                   "expert-parallel ranks are data-parallel (or tensor and data-parallel) ranks")


def check_layout(job: Job, count: int, tp: int, pp: int, recompute: int) -> None:
    """Check that a job can run a layout.

    Parameters
    ----------
    job : Job
        The workload.
    count : int
        Devices [1].
    tp : int
        Tensor-parallel size [1].
    pp : int
        Pipeline stages [1].
    recompute : int
        Recomputation policy [1] (0 none, 1 selective, 2 full).

    Raises
    ------
    InputError
        tp x pp that does not divide the count; tensor or pipeline parallelism or
        recomputation for a workload that is not a transformer; more stages than blocks.
    """
    if count % (tp * pp):
        raise InputError("tp", tp, f"tensor x pipeline parallel sizes that divide the device count ({count}): "
                                   f"tp {tp} x pp {pp} = {tp * pp}")
    if (tp > 1 or pp > 1 or recompute) and job.shape is None:
        raise InputError("tp" if tp > 1 else ("pp" if pp > 1 else "recompute"), tp if tp > 1 else (pp if pp > 1 else recompute),
                         "a transformer (--model or --params with --tokens): tensor and pipeline parallelism and "
                         "recomputation are modelled per transformer block")
    if job.shape is not None and pp > job.shape.blocks:
        raise InputError("pp", pp, f"at most one pipeline stage per block ({job.shape.blocks})")


def choose_layout(job: Job, table, count: int, *, headroom: bool = False,
                  overlap_allreduce: bool = False) -> tuple[int, int, int, int, int]:
    """The fastest quick-search layout that fits, else the one closest to fitting.

    Parameters
    ----------
    job : Job
        The workload.
    table : DeviceTable
        A table of one device.
    count : int
        Devices [1].
    headroom : bool, default False
        Reserve the memory headroom.
    overlap_allreduce : bool, default False
        Overlap the gradient all-reduce with the backward pass.

    Returns
    -------
    tuple of int
        (zero, tp, pp, recompute, ep) [1].

    References
    ----------
    [zero], [megatron], [gshard]
    """
    from sizer.engine.search import search

    found = search(job, table, [0], [count], headroom=headroom, overlap_allreduce=overlap_allreduce)
    c = found.evaluation.configs
    i = int(found.chosen[0])
    return int(c.zero[i]), int(c.tp[i]), int(c.pp[i]), int(c.recompute[i]), int(np.broadcast_to(c.ep, c.tp.shape)[i])


def estimate_training(job: Job, device: Device, count: int = 1, *, zero: int | None = None, tp: int | None = None,
                      pp: int | None = None, recompute: int | None = None, interleave: int = 1,
                      mode: Mode = Mode.DATASHEET, efficiency: Efficiencies | None = None, headroom: bool = False,
                      overlap_allreduce: bool = False, extra_assumptions: tuple[Assumption, ...] = (),
                      topology=None, offload: bool = False, hybrid_shard: bool = False,
                      ep: int | None = None) -> TimeResult:
    r"""Step time, throughput, training time, memory and utilisation of a job on ``count`` devices.

    With no layout given (``zero``, ``tp``, ``pp``, ``recompute``, ``ep`` all None) the quick layout search
    chooses one (:mod:`sizer.engine.search`) and the assumptions say which; a partly given layout
    fills the rest with data parallel, ZeRO 0, no recomputation. The range is the expected time
    times the mode's error spread, never below the physical limit; MFU counts the model's FLOP
    (no recomputation), HFU the hardware's:

    .. math::

        T_{low} = \max(f_{low} T, \; C_{train} / (n R_{peak})), \qquad
        MFU = \frac{X \cdot F_{token}}{n R_{peak}}

    Parameters
    ----------
    job : Job
        The workload.
    device : Device
        A catalog device.
    count : int, default 1
        Devices [1], 1 to 1,000,000.
    zero : int, optional
        ZeRO stage 0-3 [1].
    tp : int, optional
        Tensor-parallel size [1].
    pp : int, optional
        Pipeline stages [1].
    recompute : int, optional
        Recomputation policy [1] (0 none, 1 selective, 2 full).
    interleave : int, default 1
        Virtual pipeline chunks per stage [1].
    mode : Mode, default Mode.DATASHEET
        Where the efficiencies come from; sets the range.
    efficiency : Efficiencies, optional
        Overrides the defaults of the device's kind.
    headroom : bool, default False
        Reserve 25-30 % of the memory (seed 003).
    overlap_allreduce : bool, default False
        Overlap the gradient all-reduce with the backward pass.
    extra_assumptions : tuple of Assumption
        Added to the answer's assumptions.
    topology : Topology, optional
        A catalog node type (devices per node, links).
    offload : bool, default False
        Optimizer states and master weights in host memory (ZeRO-Offload).
    hybrid_shard : bool, default False
        ZeRO-3 within a node, replicated across nodes (FSDP HYBRID_SHARD).
    ep : int, optional
        Expert-parallel size of a mixture of experts [1] (divides its experts and count / pp).

    Returns
    -------
    TimeResult
        Step time and training time ranges [s], throughput [sample/s], training compute [FLOP],
        peak [FLOP/s], MFU and HFU [1], memory per device [B], whether it fits, the largest
        micro-batch [sample], warnings and assumptions.

    Raises
    ------
    InputError
        A count out of bounds, an unsupported precision or an impossible layout.

    References
    ----------
    [spec-3.3], [seed-004-eq4], [zero], [megatron], [korthikanti], [zero-offload], [fsdp], [seed-003], [gshard]
    """
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1_000_000:
        raise InputError("count", count, "a whole number of devices from 1 to 1,000,000")
    if offload and (device.kind == "cpu" or device.unified_memory):
        # ZeRO-Offload moves states from device memory to a separate host memory: here there is none
        what = "a CPU: its memory is the host memory" if device.kind == "cpu" else \
            "unified memory shared with the CPU"
        raise InputError("offload", offload, f"a device with memory of its own; {device.name} has {what}, so "
                                             "offloading frees nothing (leave --offload out)")
    if efficiency is None:
        efficiency = default_efficiencies(device.kind, job.arch is not None)
    table = build_device_table((device,), job.precision, (efficiency,), topology)
    if not table.supported[0]:
        from sizer.formulas.peaks import supported_precisions

        raise InputError("precision", job.precision.value,
                         f"a precision {device.name} supports: {', '.join(supported_precisions(device))}")
    searched = all(v is None for v in (zero, tp, pp, recompute, ep)) and interleave == 1 and not (offload or hybrid_shard)
    if searched:
        zero, tp, pp, recompute, ep = choose_layout(job, table, count, headroom=headroom,
                                                    overlap_allreduce=overlap_allreduce)
    zero, tp, pp, recompute, ep = zero or 0, tp or 1, pp or 1, recompute or 0, ep or 1
    check_layout(job, count, tp, pp, recompute)
    check_expert_parallel(job, count, tp, pp, ep)
    if hybrid_shard and ep > 1:
        raise InputError("ep", ep, "1 with hybrid sharding (--hybrid-shard): expert parallelism is modelled with "
                                   "ZeRO over the expert data-parallel group")
    if hybrid_shard and zero != 3:
        raise InputError("hybrid_shard", hybrid_shard, "ZeRO stage 3 too (--zero 3): hybrid sharding is ZeRO-3 inside a "
                                                       "node, replicated across nodes (FSDP HYBRID_SHARD)")
    dp = count // (tp * pp)
    if job.batch_for(dp) < dp:
        raise InputError("batch_size", job.batch_size, f"at least one {job.sample_word} per data-parallel replica ({dp})")
    ev = evaluate(job, table, np.zeros(1, dtype=np.int64), np.asarray([count]), np.asarray([zero]), tp=tp, pp=pp,
                  recompute=recompute, interleave=interleave, headroom=headroom, overlap_allreduce=overlap_allreduce,
                  keep_layers=True, offload=offload, hybrid_shard=hybrid_shard, ep=ep)
    parts, configs = ev.parts, ev.configs
    steps, batch = float(ev.steps[0]), float(ev.batch[0])
    low_factor, high_factor, range_source = range_factors(mode.value, workload_kind(job, device.kind))
    step, limit = float(parts.step[0]), float(parts.physical_limit[0])
    step_range = (max(limit, step * low_factor), max(limit, step), max(limit, step * high_factor))
    per_step = batch * (job.tokens_per_sample if job.token_mode else 1.0)
    unit = "token / s" if job.token_mode else f"{job.sample_word} / s"
    throughput = RangeOut(low=per_step / step_range[2], expected=per_step / step_range[1],
                          high=per_step / step_range[0], unit=unit)
    flops = job.training_flops
    peak = float(table.peak[0])
    training = RangeOut.of_seconds(tuple(s * steps for s in step_range), time_unit(step_range[1] * steps)) \
        if job.samples else None
    first_order = flops / (count * peak * (1 - DEFAULT_DERATING.expected))
    mfu = float(parts.model_flops[0]) / (step_range[1] * peak)
    hfu = float(parts.hardware_flops[0]) / (step_range[1] * peak)
    eff = table.efficiencies[0]
    warnings = []
    if not ev.fits[0]:
        warnings.append(f"does not fit: needs {ev.memory_needed[0] * unit_factor('B', 'GB'):.3g} GB per device, {device.name} has "
                        f"{table.memory[0] * unit_factor('B', 'GB'):.3g} GB; shard the model states (--zero 3) or use more devices")
    if topology is not None:
        per_node, link, network = topology_links(topology)
    else:
        per_node, network = node_layout(device)
        link = device_link(device)
    assumptions = [
        *job.assumptions,
        Assumption(name="precision", value=f"{table.precisions[0]} ({job.precision.value} requested)",
                   source="dense peak from the catalog"),
        Assumption(name="efficiencies", value=f"tensor {eff.matrix:.3g}, TF32 {eff.tf32:.3g}, FP32 matrix {eff.fp32_matrix:.3g}, "
                   f"vector {eff.vector:.3g}, memory {eff.memory:.3g}, {eff.launch * unit_factor('s', 'us'):.3g} us per kernel, "
                   f"{eff.step_overhead * unit_factor('s', 'ms'):.3g} ms per step", source=eff.source),
        Assumption(name="range", value=f"{low_factor:.3g}-{high_factor:.3g} x expected ({mode.value} mode)",
                   source=range_source),
        Assumption(name="micro-batch", value=f"{configs.micro_batch[0]:.4g} {job.sample_word}s per replica per pass, "
                   f"{int(configs.accumulation[0])} accumulation step(s)",
                   source="given" if job.micro_batch is not None else "the largest that fits (a power of two)"),
        Assumption(name="framework overhead", value=f"{table.framework_overhead[0] * unit_factor('B', 'GiB'):.3g} GiB per device",
                   source=FRAMEWORK_OVERHEAD_SOURCE),
        *(Assumption(name="precision note", value=note, source="PyTorch defaults") for note in table.notes[0]),
        *extra_assumptions,
    ]
    buckets = float(ev.framework[0] - table.framework_overhead[0])
    if buckets > 0:
        assumptions.append(Assumption(name="ZeRO buckets", value=f"{buckets * unit_factor('B', 'GB'):.3g} GB per device",
                                      source=ZERO_BUCKETS_SOURCE, verified=False))
    if offload:
        assumptions.append(Assumption(name="offload", value="optimizer states and FP32 master weights in host memory, "
                                      "the optimizer step on the CPU (host memory not checked)", source=HOST_OPTIMIZER_SOURCE))
    if hybrid_shard:
        assumptions.append(Assumption(name="hybrid sharding", value=f"ZeRO-3 within groups of up to {per_node // tp} "
                                      "devices (a node), replicated across groups", source="PyTorch FSDP HYBRID_SHARD"))
    if topology is not None:
        assumptions.append(Assumption(name="topology", value=f"{topology.system}: {per_node} devices per node, "
                                      f"{link.name} inside, {network.name} between nodes",
                                      source="catalog/networks (sizer.hardware.networks)"))
    if searched:
        experts = f", ep {ep}" if job.arch is not None and job.arch.moe else ""
        assumptions.append(Assumption(
            name="layout", value=f"tp {tp} x pp {pp} x dp {count // (tp * pp)}{experts}, ZeRO {zero}, recompute {RECOMPUTE[recompute]}: "
                                 "the fastest that fits among data parallel with ZeRO 0/1/3, recomputation none/full, "
                                 "tensor parallel inside a node and, for a mixture of experts, expert parallel inside "
                                 "a node", source="sizer's layout search (sizer plan searches more)"))
    if ep > 1:
        etp, replicas = (int(v[0]) for v in expert_layout(np.asarray([tp]), np.asarray([dp]), np.asarray([ep])))
        span = etp * ep
        where = f"inside one node ({link.name})" if span <= per_node else f"across nodes ({network.name})"
        assumptions.append(Assumption(
            name="expert parallel", value=f"{ep}-way: {job.arch.experts // ep} of {job.arch.experts} routed experts per "
                                          f"rank{'' if etp == tp else ' (not tensor-split: the EP group spans the tensor ranks)'}, their states "
                                          f"ZeRO-sharded over {replicas} replicas; a dispatch and a "
                                          f"combine all-to-all per MoE block and pass {where}, not overlapped",
            source="Lepikhin et al. 2021 GShard §2.2; Rajbhandari et al. 2022 DeepSpeed-MoE (docs/references.md "
                   "[gshard], [deepspeed-moe])"))
        assumptions.append(Assumption(name="expert load imbalance", value=f"{EP_LOAD_IMBALANCE:g} x the mean routed "
                                      "tokens on the busiest expert-parallel rank", source=EP_LOAD_IMBALANCE_SOURCE,
                                      verified=False))
    if count > 1:
        where = f"inside one node ({link.name})" if count <= per_node else \
            f"across nodes of {per_node} ({network.name})"
        assumptions.append(Assumption(
            name="gradient synchronisation", value=f"ring {'reduce-scatter/all-gather' if zero else 'all-reduce'} {where}, "
                                                   f"{'overlapped with the backward pass' if overlap_allreduce else 'not overlapped (conservative)'}",
            source=f"spec §3.3: 2(n-1)/n x gradient bytes / link bandwidth; {link.source if count <= per_node else network.source}"))
    if zero:
        assumptions.append(Assumption(name="ZeRO", value=f"stage {zero} over {dp} data-parallel devices",
                                      source="Rajbhandari et al. 2020 (docs/references.md [zero])"))
    if tp > 1:
        assumptions.append(Assumption(name="tensor parallel", value=f"{tp}-way, Megatron-LM with sequence parallelism: "
                                      "every layer's work divided, 4 collectives of the block's activations per block and pass, "
                                      "not overlapped", source="Korthikanti et al. 2022 §4.2.2 (docs/references.md [korthikanti])"))
    if pp > 1:
        assumptions.append(Assumption(name="pipeline parallel", value=f"{pp} stages, 1F1B{f' interleaved x{interleave}' if interleave > 1 else ''}: "
                                      f"bubble (p-1)/(m+p-1) with m = {int(configs.accumulation[0])} micro-batches, "
                                      "layers split evenly", source="Narayanan et al. 2021 (docs/references.md [megatron])"))
    if recompute:
        assumptions.append(Assumption(name="recomputation", value=RECOMPUTE[recompute] + (
            ": every layer's forward pass again in the backward pass" if recompute == 2 else ": attention layers only"),
            source="Korthikanti et al. 2022 §5 (docs/references.md [korthikanti])"))
    seconds = lambda value: QuantityOut.of(Quantity(float(value), "s"), "s")  # noqa: E731
    unit_t = time_unit(step_range[1] * steps)
    return TimeResult(
        workload=job.description, device=device.name, count=count, precision=table.precisions[0],
        method=job.finetune.method.value if job.finetune else "full",
        trainable_params=job.finetune.trainable_params if job.finetune else job.params, mode=mode,
        layout=Layout(tp=tp, pp=pp, dp=dp, ep=ep, zero=zero, recompute=RECOMPUTE[recompute], interleave=interleave,
                      micro_batch=float(configs.micro_batch[0]), accumulation=int(configs.accumulation[0])),
        batch_size=batch, sample=job.sample_word, steps=steps if job.samples else None,
        training_compute=QuantityOut.of(Quantity(flops, "FLOP"), "FLOP") if job.samples else None,
        peak=QuantityOut.of(Quantity(peak, "FLOP/s"), "FLOP/s"),
        step_time=RangeOut(low=step_range[0], expected=step_range[1], high=step_range[2], unit="s"),
        throughput=throughput, training_time=training,
        first_order_time=QuantityOut.of(Quantity(first_order, "s"), unit_t) if job.samples else None,
        physical_limit=QuantityOut.of(Quantity(limit * steps, "s"), unit_t),
        kernels_per_step=seconds(parts.kernels[0]), optimizer_time_per_step=seconds(parts.optimizer[0]),
        overhead_per_step=seconds(parts.overhead[0]), communication_per_step=seconds(parts.communication[0]),
        tensor_parallel_per_step=seconds(parts.tensor_parallel[0]), pipeline_per_step=seconds(parts.pipeline[0]),
        data_parallel_per_step=seconds(parts.data_parallel[0]),
        expert_parallel_per_step=seconds(np.broadcast_to(parts.expert_parallel, parts.step.shape)[0]), bubble_per_step=seconds(parts.bubble[0]),
        bound=BOUNDS[int(parts.bound[0])], mfu=mfu, hfu=hfu, layer_groups=_groups(job, ev),
        memory_per_device=QuantityOut.of(Quantity(float(ev.memory_needed[0]), "B"), "GB"),
        device_memory=QuantityOut.of(Quantity(float(table.memory[0]), "B"), "GB"), fits=bool(ev.fits[0]),
        largest_micro_batch=float(ev.largest_micro_batch[0]) if np.isfinite(ev.largest_micro_batch[0]) else None,
        warnings=warnings, efficiencies=eff.as_dict(), assumptions=assumptions)
