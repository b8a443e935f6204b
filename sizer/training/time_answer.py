"""The training time answer: a job on ``count`` devices of one kind, as a typed result.

The layout is checked and chosen by the engine (:mod:`sizer.engine.layout_checks`); the numbers come from
:func:`sizer.engine.evaluate.evaluate` on a single configuration; this module only shapes them into the answer (ranges from the mode's observed error spread, never below the physical
limit ``C / (n R_peak)``; seed 004's first-order ``C / (n R (1 − d))`` as a labelled reference).
"""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

from sizer.choices import DeviceKind, Mode, Precision
from sizer.engine import achieved
from sizer.engine.constants import (
    EP_LOAD_IMBALANCE,
    EP_LOAD_IMBALANCE_SOURCE,
    EP_TOKEN_SORT_PASSES,
    EP_TOKEN_SORT_SOURCE,
    FRAMEWORK_OVERHEAD_SOURCE,
    HOST_OPTIMIZER_SOURCE,
    ZERO_BUCKETS_SOURCE,
    Efficiencies,
    device_efficiencies,
    stack_factor,
)
from sizer.engine.devices import DeviceTable, build_device_table, topology_links
from sizer.engine.eager import SOURCE as EAGER_SOURCE
from sizer.engine.eager import eager_note
from sizer.engine.evaluate import Evaluation, evaluate
from sizer.engine.goodput import checkpoint_bytes, interrupted_time, wanted
from sizer.engine.job import Job
from sizer.engine.layout_checks import (
    check_expert_parallel,
    check_layout,
    choose_layout,
    fixed_layout,
    refuse_batch,
    refuse_changed_batch,
)
from sizer.engine.roofline import expert_layout
from sizer.engine.step_inputs import BOUNDS, RECOMPUTE
from sizer.engine.time_range import range_factors, workload_kind
from sizer.errors import InputError
from sizer.formulas.peaks import DEFAULT_DERATING
from sizer.hardware.nodes import device_link, node_layout
from sizer.hardware.schema import Device
from sizer.results import Assumption, QuantityOut, RangeOut, time_unit, unit_factor
from sizer.schemas.time_and_memory import BestLayout, LayerGroupTime, Layout, TimeResult
from sizer.units import Quantity

if TYPE_CHECKING:
    from sizer.engine.search import Fixed
    from sizer.hardware.networks import Topology


LAYER_BOUNDS = ("compute", "memory", "launch")


def _groups(job: Job, evaluation: Evaluation) -> list[LayerGroupTime]:
    c = evaluation.configs  # one device's share of a step: its stage's layers, every micro-batch and the bubble
    layer_seconds, layer_bound = evaluation.parts.layer_seconds, evaluation.parts.layer_bound
    assert layer_seconds is not None and layer_bound is not None  # estimate_training evaluates with keep_layers
    slots = (c.accumulation[0] + (c.pp[0] - 1) / c.interleave[0]) / c.pp[0]
    per_layer = layer_seconds[0] * job.layers.multiplicity * slots
    total = float(per_layer.sum()) or 1.0
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, float] = defaultdict(float)
    by_bound: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    bounds = layer_bound[0]
    for kind, value, many, bound in zip(job.layers.kinds, per_layer, job.layers.multiplicity, bounds, strict=True):
        seconds[kind] += float(value)
        counts[kind] += float(many)
        by_bound[kind][LAYER_BOUNDS[int(bound)]] += float(value)
    return [LayerGroupTime(kind=kind, layers=int(counts[kind]), time_per_step=QuantityOut.of(Quantity(s, "s"), "s"),
                           share=s / total, bound=max(by_bound[kind], key=lambda b: by_bound[kind][b]))
            for kind, s in sorted(seconds.items(), key=lambda kv: -kv[1])]


def estimate_training(job: Job, device: Device, count: int = 1, *, zero: int | None = None, tp: int | None = None,
                      pp: int | None = None, recompute: int | None = None, interleave: int | None = None,
                      cp: int | None = None, mode: Mode = Mode.DATASHEET, efficiency: Efficiencies | None = None,
                      headroom: bool = False, overlap_allreduce: bool = False,
                      extra_assumptions: tuple[Assumption, ...] = (), topology: Topology | None = None,
                      offload: bool = False,
                      hybrid_shard: bool = False, ep: int | None = None,
                      host_memory: float | None = None, interruptions: bool | None = None,
                      overlap_all_to_all: bool = False, checkpoint_interval: float | None = None) -> TimeResult:
    r"""Step time, throughput, training time, memory and utilisation of ``job`` on ``count`` devices.

    The fields given (``zero``, ``tp``, ``pp``, ``cp``, ``recompute``, ``interleave``, the job's
    micro-batch) are pinned and the one layout search chooses the rest (:mod:`sizer.engine.search`);
    the assumptions say which. With ``offload`` or ``hybrid_shard`` (outside the search) the layout is
    the given one, data parallel where not given. The range and MFU/HFU are the one summary's
    (:mod:`sizer.engine.summary`): never below the physical limit:

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
    interleave : int, optional
        Virtual pipeline chunks per stage [1].
    cp : int, optional
        Context-parallel size (ring attention) [1].
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
    host_memory : float, optional
        RAM of one host [B], checked against what ``offload`` puts there
        (:func:`sizer.engine.offload.host_memory`: else the node type's, else an assumed floor).
    interruptions : bool, optional
        Add the training time with interruptions (:mod:`sizer.engine.goodput`); None: where the run
        expects at least one failure.
    overlap_all_to_all : bool, default False
        Expert parallelism's all-to-alls overlap another micro-batch's computation (DualPipe, Megatron-Core's
        overlapped dispatch).
    checkpoint_interval : float, optional
        Training between checkpoints for the time with interruptions [s]; None: Daly's optimal interval.

    Returns
    -------
    TimeResult
        Step time and training time ranges [s], throughput [sample/s], training compute [FLOP],
        peak [FLOP/s], MFU and HFU [1], memory per device [B], whether it fits, the largest
        micro-batch [sample], warnings and assumptions.

    Raises
    ------
    InputError
        A count out of bounds, an unsupported precision, an impossible layout, or a given batch no
        layout of ``count`` devices splits (naming the most devices that can); a default batch is
        raised instead and said (:mod:`sizer.engine.evaluate`).

    References
    ----------
    [spec-3.3], [seed-004-eq4], [zero], [megatron], [korthikanti], [ringattention], [zero-offload], [fsdp], [seed-003]
    """
    _check_count_and_offload(device, count, offload)
    if efficiency is None:
        efficiency = device_efficiencies(device, job.arch is not None)
    table = build_device_table((device,), job.precision, (efficiency,), topology)
    _check_precision(job, device, table)
    _check_parallelism(job, count, zero=zero, tp=tp, pp=pp, cp=cp, recompute=recompute, interleave=interleave, ep=ep,
                       hybrid_shard=hybrid_shard)
    fixed = fixed_layout(zero, tp, pp, cp, recompute, interleave, ep)
    offload = offload or job.recipe.offload_params  # parameter offload moves the optimizer states too
    searched = not (offload or hybrid_shard)
    if searched:
        layout = choose_layout(job, table, count, fixed, headroom=headroom, overlap_allreduce=overlap_allreduce,
                               overlap_all_to_all=overlap_all_to_all)
    else:
        layout, extra_assumptions = _given_layout(job, count, offload, extra_assumptions, zero=zero, tp=tp, pp=pp,
                                                  cp=cp, recompute=recompute, interleave=interleave, ep=ep)
    ev = evaluate(job, table, np.zeros(1, dtype=np.int64), np.asarray([count]), np.asarray([layout["zero"]]),
                  tp=layout["tp"], pp=layout["pp"], cp=layout["cp"], recompute=layout["recompute"],
                  interleave=layout["interleave"], ep=layout["ep"], micro_batch=np.asarray([layout["micro"]]), headroom=headroom,
                  overlap_allreduce=overlap_allreduce, keep_layers=True, offload=offload, hybrid_shard=hybrid_shard,
                  overlap_all_to_all=overlap_all_to_all)
    if not ev.feasible[0]:
        refuse_batch(job, table, count, fixed)
    result = _time_result(job, device, table, count, ev, mode, fixed if searched else None, extra_assumptions,
                          topology, offload, hybrid_shard, overlap_allreduce)
    if overlap_all_to_all and result.layout.ep > 1:
        result = _overlapped_all_to_all(result)
    if searched and achieved.transfers(job.shape is not None, any(v is not None for v in (fixed or {}).values())):
        result = _as_achieved(result, f"{device.id} {device.name}")
    result = _with_interruptions(result, job, table, count, interruptions, checkpoint_interval)
    if not offload:
        return _unused_host_memory(result, host_memory)
    return _with_host_check(result, ev, table, count, host_memory, topology)


def _as_achieved(result: TimeResult, device_name: str) -> TimeResult:
    """``result`` with the achieved time as its headline and the best layout's figures beside it
    (:mod:`sizer.engine.achieved`): step time and training time over the factor, throughput and MFU times it.

    Parameters
    ----------
    result : TimeResult
        The best layout's answer.
    device_name : str
        The catalog id and name (its family).

    Returns
    -------
    TimeResult
    """
    factor, family, sources = achieved.achieved_factor(device_name)
    bound = BestLayout(step_time=result.step_time, throughput=result.throughput, training_time=result.training_time,
                       achieved_factor=factor, family=family)

    def slower(r: RangeOut | None) -> RangeOut | None:
        return None if r is None else RangeOut(low=r.low / factor, expected=r.expected / factor, high=r.high / factor,
                                               unit=r.unit)

    t = result.throughput
    note = Assumption(name="achieved, not only possible",
                      value=f"no layout given: the headline is what published runs on {family} devices achieved against "
                      f"the best layout sizer finds ({factor:.3g} of its throughput, {sources} sources); that layout's "
                      "own time is the upper bound (best_layout)", source=achieved.SOURCE, verified=False)
    return result.model_copy(update={
        "step_time": slower(result.step_time), "training_time": slower(result.training_time),
        "throughput": RangeOut(low=t.low * factor, expected=t.expected * factor, high=t.high * factor, unit=t.unit),
        "mfu": result.mfu * factor, "hfu": result.hfu * factor, "best_layout": bound,
        "assumptions": result.assumptions + [note]})


def _check_count_and_offload(device: Device, count: int, offload: bool) -> None:
    """InputError for a device count out of bounds, or offload asked of a device without memory of its own.

    Parameters
    ----------
    device : Device
        The catalog device.
    count : int
        Devices [1], 1 to 1,000,000.
    offload : bool
        Whether ZeRO-Offload is asked.
    """
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1_000_000:
        raise InputError("count", count, "a whole number of devices from 1 to 1,000,000")
    if offload and (device.kind is DeviceKind.CPU or device.unified_memory):
        # ZeRO-Offload moves states from device memory to a separate host memory: here there is none
        what = "a CPU: its memory is the host memory" if device.kind is DeviceKind.CPU else \
            "unified memory shared with the CPU"
        raise InputError("offload", offload, f"a device with memory of its own; {device.name} has {what}, so "
                                             "offloading frees nothing (leave --offload out)")


def _check_precision(job: Job, device: Device, table: DeviceTable) -> None:
    """InputError naming ``precision`` where ``device`` (the one row of ``table``) lacks the job's precision."""
    if not table.supported[0]:
        from sizer.formulas.peaks import supported_precisions

        raise InputError("precision", job.precision.value,
                         f"a precision {device.name} supports: {', '.join(supported_precisions(device))}")


def _check_parallelism(job: Job, count: int, *, zero: int | None, tp: int | None, pp: int | None, cp: int | None,
                       recompute: int | None, interleave: int | None, ep: int | None, hybrid_shard: bool) -> None:
    """InputError for a given layout the job cannot run: :func:`check_layout`, :func:`check_expert_parallel`,
    and hybrid sharding without ZeRO-3 or with expert parallelism.

    Parameters
    ----------
    job : Job
        The workload.
    count : int
        Devices [1].
    zero, tp, pp, cp, recompute, interleave, ep : int or None
        The layout fields given [1]; None where not given.
    hybrid_shard : bool
        ZeRO-3 within a node, replicated across nodes (FSDP HYBRID_SHARD).
    """
    check_layout(job, count, tp, pp, recompute, cp, interleave=interleave)
    if ep is not None:
        check_expert_parallel(job, count, tp or 1, pp or 1, ep)
    if hybrid_shard and (ep or 1) > 1:
        raise InputError("ep", ep, "1 with hybrid sharding (--hybrid-shard): expert parallelism is modelled with "
                                   "ZeRO over the expert data-parallel group")
    if hybrid_shard and zero != 3:
        raise InputError("hybrid_shard", hybrid_shard, "ZeRO stage 3 too (--zero 3): hybrid sharding is ZeRO-3 inside a "
                                                       "node, replicated across nodes (FSDP HYBRID_SHARD)")


def _given_layout(job: Job, count: int, offload: bool, extra_assumptions: tuple[Assumption, ...], *,
                  zero: int | None, tp: int | None, pp: int | None, cp: int | None, recompute: int | None,
                  interleave: int | None, ep: int | None) -> tuple[dict[str, Any], tuple[Assumption, ...]]:
    """The layout run outside the search (offload or hybrid sharding): the given fields, data parallel
    where not given, and offload's defaults (said in an added assumption).

    Parameters
    ----------
    job : Job
        The workload.
    count : int
        Devices [1].
    offload : bool
        Optimizer states and master weights in host memory.
    extra_assumptions : tuple of Assumption
        The assumptions so far; offload's defaults are appended where they apply.
    zero, tp, pp, cp, recompute, interleave, ep : int or None
        The layout fields given [1].

    Returns
    -------
    tuple
        The layout (``zero``, ``tp``, ``pp``, ``cp``, ``recompute``, ``ep``, ``interleave`` [1], ``micro``
        [sample], NaN: chosen by the evaluation) and the assumptions.
    """
    # offload is asked where memory is short: shard over the replicas (ZeRO-3, as FSDP and DeepSpeed's offload
    # recipes run) and checkpoint a transformer's blocks unless the layout says otherwise (said below)
    shard = 3 if offload and zero is None and count > 1 else zero or 0
    checkpoint = 2 if offload and recompute is None and job.shape is not None else recompute or 0
    if (shard, checkpoint) != (zero or 0, recompute or 0):
        extra_assumptions = (*extra_assumptions, Assumption(
            name="offload layout", value=f"ZeRO stage {shard}, recompute {RECOMPUTE[checkpoint]}: offload's defaults "
            "where no layout is given", source="FSDP CPUOffload with FULL_SHARD; DeepSpeed ZeRO-Offload/Infinity "
            "recipes (stage 3, activation checkpointing); give --zero / --recompute"))
    layout = {"zero": shard, "tp": tp or 1, "pp": pp or 1, "cp": cp or 1, "recompute": checkpoint, "ep": ep or 1,
              "interleave": interleave or 1, "micro": float("nan")}
    return layout, extra_assumptions


# said of expert parallelism's all-to-alls unless overlapped, with the option that overlaps them
NOT_OVERLAPPED = ("not overlapped (overlap_all_to_all, --overlap-all-to-all: DualPipe-style overlap, as DeepSeek-V3 "
                  "trained);")


def _overlapped_all_to_all(result: TimeResult) -> TimeResult:
    """``result`` with its expert-parallel assumption saying that the all-to-alls overlap computation."""
    return result.model_copy(update={"assumptions": [
        a if a.name != "expert parallel" else a.model_copy(update={"value": a.value.replace(
            f", {NOT_OVERLAPPED}", ", overlapped with another micro-batch's computation (DualPipe, Megatron-Core's "
            "overlapped dispatch: hidden behind 2/3 of the kernels outside the bubble);")})
        for a in result.assumptions]})


def _with_interruptions(result: TimeResult, job: Job, table: DeviceTable, count: int,
                        interruptions: bool | None, checkpoint_interval: float | None = None) -> TimeResult:
    """``result`` with its training time under failures, checkpoints and restarts (:mod:`sizer.engine.goodput`)
    where asked, or (``interruptions`` None) where the run expects at least one failure.

    Parameters
    ----------
    result : TimeResult
        The answer so far.
    job : Job
        The workload (its checkpoint size).
    table : DeviceTable
        The one device.
    count : int
        Devices [1].
    interruptions : bool or None
        Asked (True), refused (False) or left to the expected failures (None).
    checkpoint_interval : float, optional
        Training between checkpoints as given [s]; None: Daly's optimal interval.
    """
    if result.training_time is not None and bool(wanted(interruptions, result.training_time.expected
                                                        * unit_factor(result.training_time.unit, "s"), count)):
        device = table.devices[0]
        result = result.model_copy(update={"with_interruptions": interrupted_time(
            result.training_time, count, float(checkpoint_bytes(job, table)),
            family=achieved.family_of_name(f"{device.id} {device.name}"), interval=checkpoint_interval)})
    return result


def _unused_host_memory(result: TimeResult, host_memory: float | None) -> TimeResult:
    """``result``, with a note where a host's RAM [B] was given but nothing is offloaded."""
    if host_memory is None:
        return result
    # said, never silently unused: a host's RAM bounds only what offloading would put there
    note = Assumption(name="host memory", value=f"{host_memory * unit_factor('B', 'GB'):.4g} GB per host given; "
                      "nothing is offloaded in this layout, so it bounds only the offload suggestions",
                      source="host_memory (--host-memory)")
    return result.model_copy(update={"assumptions": result.assumptions + [note]})


def _with_host_check(result: TimeResult, ev: Evaluation, table: DeviceTable, count: int, host_memory: float | None,
                     topology: Topology | None) -> TimeResult:
    """An offloaded ``result`` checked against the host memory (:func:`sizer.engine.offload.host_memory`):
    whether it fits, a warning where it does not, the memory per host and the assumption behind it.

    Parameters
    ----------
    result : TimeResult
        The answer so far.
    ev : Evaluation
        The one evaluated layout (its host bytes per device).
    table : DeviceTable
        The one device.
    count : int
        Devices [1].
    host_memory : float or None
        RAM of one host given [B]; None: the node type's, else an assumed floor.
    topology : Topology or None
        The node type, whose host memory is used where none is given.
    """
    from sizer.engine.offload import host_memory as host_check

    # the catalog gives a node type's host memory with its source, or neither
    node = (float(topology.host_memory.to("B").magnitude), topology.host_memory_source) \
        if topology is not None and topology.host_memory is not None and topology.host_memory_source is not None else None
    host = host_check(float(np.asarray(ev.host_bytes).ravel()[0]), count, int(table.devices_per_node[0]),
                      float(table.memory[0]), host_memory, node)
    return result.model_copy(update={
        "fits": result.fits and host.fits, "warnings": result.warnings + ([] if host.fits else [host.warning()]),
        "host_memory_per_host": QuantityOut.of(Quantity(host.needed, "B"), "GB"),
        "assumptions": result.assumptions + [host.assumption()]})


def _time_result(job: Job, device: Device, table: DeviceTable, count: int, ev: Evaluation, mode: Mode,
                 fixed: Fixed | None, extra_assumptions: tuple[Assumption, ...], topology: Topology | None, offload: bool,
                 hybrid_shard: bool, overlap_allreduce: bool) -> TimeResult:
    """The typed answer of one evaluated layout."""
    from sizer.engine.summary import summarise

    parts, configs = ev.parts, ev.configs
    steps, batch = float(ev.steps[0]), float(ev.batch[0])
    low_factor, high_factor, range_source = range_factors(mode, workload_kind(job, device.kind))
    peak = float(table.peak[0])
    summary = summarise(ev, [0], low_factor, high_factor, peak)
    step_range = (float(summary.step_low[0]), float(summary.step_expected[0]), float(summary.step_high[0]))
    limit = float(parts.physical_limit[0])
    per_step = batch * (job.real_tokens_per_sample if job.token_mode else 1.0)  # tokens of data, not padding
    unit = "token / s" if job.token_mode else f"{job.sample_word} / s"
    throughput = RangeOut(low=per_step / step_range[2], expected=per_step / step_range[1],
                          high=per_step / step_range[0], unit=unit)
    flops = job.training_flops
    training = RangeOut.of_seconds((step_range[0] * steps, step_range[1] * steps, step_range[2] * steps),
                                   time_unit(step_range[1] * steps)) if job.samples else None
    first_order = flops / (count * peak * (1 - DEFAULT_DERATING.expected))
    refuse_changed_batch(job, bool(ev.exact[0]), float(ev.batch[0]), count)
    warnings = _warnings(job, device, table, ev)
    assumptions = _assumptions(job, table, ev, count, mode, (low_factor, high_factor, range_source), fixed,
                               extra_assumptions, topology, offload, hybrid_shard, overlap_allreduce)

    def seconds(value: float) -> QuantityOut:
        return QuantityOut.of(Quantity(float(value), "s"), "s")

    unit_t = time_unit(step_range[1] * steps)
    dp = int(round(float(configs.dp[0])))
    precision = table.precisions[0]
    # build_device_table resolves a supported precision to a Precision (_check_precision refused the others)
    assert isinstance(precision, Precision)
    return TimeResult(
        recipe=job.recipe.line(precision, RECOMPUTE[int(configs.recompute[0])], job.finetune),
        workload=job.description, device=device.name, count=count, precision=table.precisions[0],
        method=job.finetune.method.value if job.finetune else "full",
        trainable_params=job.finetune.trainable_params if job.finetune else job.params, mode=mode,
        layout=Layout(tp=int(configs.tp[0]), pp=int(configs.pp[0]), dp=dp, cp=int(configs.cp[0]),
                      ep=int(np.broadcast_to(configs.ep, configs.tp.shape)[0]),
                      zero=int(configs.zero[0]), recompute=RECOMPUTE[int(configs.recompute[0])],
                      interleave=int(configs.interleave[0]), micro_batch=int(round(float(configs.micro_batch[0]))),
                      accumulation=int(configs.accumulation[0])),
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
        context_parallel_per_step=seconds(parts.context_parallel[0]),
        data_parallel_per_step=seconds(parts.data_parallel[0]), bubble_per_step=seconds(parts.bubble[0]),
        expert_parallel_per_step=seconds(np.broadcast_to(parts.expert_parallel, parts.step.shape)[0]),
        bound=BOUNDS[int(parts.bound[0])], mfu=float(summary.mfu[0]), hfu=float(summary.hfu[0]),
        layer_groups=_groups(job, ev),
        memory_per_device=QuantityOut.of(Quantity(float(ev.memory_needed[0]), "B"), "GB"),
        device_memory=QuantityOut.of(Quantity(float(table.memory[0]), "B"), "GB"), fits=bool(ev.fits[0]),
        largest_micro_batch=float(ev.largest_micro_batch[0]) if np.isfinite(ev.largest_micro_batch[0]) else None,
        warnings=warnings, efficiencies=table.efficiencies[0].as_dict(), assumptions=assumptions)


# A bare parameter count at least this large read as a generic dense network (``--params`` with
# ``--samples``: one input vector per sample, seed 004's 2P FLOP) is most likely a language model meant
# by tokens (spec §3.2's worked example: GPT-3, 175e9 parameters, 300e9 tokens): said, never silently.
DENSE_LANGUAGE_MODEL_SCALE = 1e9


def _dense_warning(job: Job, ev: Evaluation) -> str | None:
    """The warning for a large bare parameter count read as a one-layer dense network, or None."""
    if job.arch is not None or job.token_mode or len(job.layers.kinds) != 1 or job.params < DENSE_LANGUAGE_MODEL_SCALE:
        return None
    p = ev.parts
    synchronising = float((p.data_parallel[0] + p.optimizer[0]) / p.step[0])
    return (f"--params {job.params:.3g} with --samples is read as a generic dense network: one layer, one input vector "
            f"per sample (2P forward FLOP, seed 004), so each step of {float(ev.batch[0]):,.0f} samples synchronises and "
            f"updates all {job.params:.3g} parameters ({synchronising:.0%} of the step); for a language model give "
            "--tokens (a decoder shaped from the count, sequence length stated) or --model")


def _warnings(job: Job, device: Device, table: DeviceTable, ev: Evaluation) -> list[str]:
    warnings: list[str] = []
    dense = _dense_warning(job, ev)
    if dense:
        warnings.append(dense)
    if not ev.fits[0]:
        warnings.append(f"does not fit: needs {ev.memory_needed[0] * unit_factor('B', 'GB'):.3g} GB per device, {device.name} has "
                        f"{table.memory[0] * unit_factor('B', 'GB'):.3g} GB; shard the model states (--zero 3) or use more devices")
    if not ev.exact[0]:
        warnings.append(batch_change(job, float(ev.batch[0])))
    per_node = int(table.devices_per_node[0])
    if ev.configs.tp[0] > per_node:  # only when asked for: the search keeps tensor parallelism inside a node
        warnings.append(f"tensor parallelism of {int(ev.configs.tp[0])} spans nodes of {per_node}: its collectives run "
                        "on the network between nodes")
    if job.arch is not None and job.token_mode and job.tokens_per_sample > job.arch.max_context:
        warnings.append(f"sequence length {job.tokens_per_sample:.0f} is above {job.arch.name}'s context of "
                        f"{job.arch.max_context:,} tokens")
    return warnings


def batch_change(job: Job, batch: float) -> str:
    """The sentence that states a batch the layout changed.

    Parameters
    ----------
    job : Job
        The workload (its asked batch).
    batch : float
        The batch run [sample].

    Returns
    -------
    str
        The warning.
    """
    asked = max(1.0, round(job.batch_size))
    if not job.batch_given and batch > asked:
        return (f"default batch raised: {asked:,.0f} {job.sample_word}s per step by default, {batch:,.0f} run so that "
                "every data-parallel replica holds a whole micro-batch (give --batch-size)")
    if not job.batch_given:  # the default, not the user's: never said to be asked
        return (f"default batch changed: {asked:,.0f} {job.sample_word}s per step by default, {batch:,.0f} run (the "
                "nearest that every data-parallel replica splits into whole micro-batches; give --batch-size)")
    return (f"batch rounded: {asked:,.0f} {job.sample_word}s per step asked, {batch:,.0f} run ({batch / asked - 1:+.1%}: "
            "the nearest that every data-parallel replica of this layout splits into whole micro-batches, within "
            "2 % of a published, rounded batch)")


def _assumptions(job: Job, table: DeviceTable, ev: Evaluation, count: int, mode: Mode, spread: tuple[float, float, str],
                 fixed: Fixed | None, extra_assumptions: tuple[Assumption, ...], topology: Topology | None, offload: bool,
                 hybrid_shard: bool, overlap_allreduce: bool) -> list[Assumption]:
    configs = ev.configs
    zero, tp, pp, cp = int(configs.zero[0]), int(configs.tp[0]), int(configs.pp[0]), int(configs.cp[0])
    recompute, interleave = int(configs.recompute[0]), int(configs.interleave[0])
    dp = int(round(float(configs.dp[0])))
    eff = table.efficiencies[0]
    low_factor, high_factor, range_source = spread
    assumptions = [
        *job.assumptions, *job.recipe.assumptions(),
        Assumption(name="precision", value=f"{table.precisions[0]} ({job.precision.value} requested)",
                   source="dense peak from the catalog"),
        Assumption(name="efficiencies", value=f"tensor {eff.matrix:.3g}, TF32 {eff.tf32:.3g}, FP32 matrix {eff.fp32_matrix:.3g}, "
                   f"vector {eff.vector:.3g}, memory {eff.memory:.3g}, {eff.launch * unit_factor('s', 'us'):.3g} us per kernel, "
                   f"{eff.step_overhead * unit_factor('s', 'ms'):.3g} ms per step", source=eff.source,
                   verified=stack_factor(table.devices[0])[2]),
        Assumption(name="range", value=f"{low_factor:.3g}-{high_factor:.3g} x expected ({mode.value} mode)",
                   source=range_source),
        Assumption(name="micro-batch", value=f"{configs.micro_batch[0]:.0f} {job.sample_word}s per replica per pass, "
                   f"{int(configs.accumulation[0])} accumulation step(s)",
                   source="given" if job.micro_batch is not None else "the largest whole divisor of the replica's share "
                                                                     "that fits, or the layout search's"),
        Assumption(name="framework overhead", value=f"{table.framework_overhead[0] * unit_factor('B', 'GiB'):.3g} GiB per device",
                   source=FRAMEWORK_OVERHEAD_SOURCE),
        *(Assumption(name="precision note", value=note, source="PyTorch defaults") for note in table.notes[0]),
        *extra_assumptions,
    ]
    if job.finetune is not None and job.eager:
        assumptions.append(Assumption(name="eager fine-tune", value=eager_note(), source=EAGER_SOURCE))
    assumptions += _state_assumptions(job, table, ev, offload)
    per_node, link, network = _links(table, topology)
    if hybrid_shard:
        assumptions.append(Assumption(name="hybrid sharding", value=f"ZeRO-3 within groups of up to {per_node // tp} "
                                      "devices (a node), replicated across groups", source="PyTorch FSDP HYBRID_SHARD"))
    if topology is not None:
        assumptions.append(Assumption(name="topology", value=f"{topology.system}: {per_node} devices per node, "
                                      f"{link.name} inside, {network.name} between nodes",
                                      source="catalog/networks (sizer.hardware.networks)"))
    if fixed is not None:
        pinned = ", ".join(f"{name} {value}" for name, value in fixed.items()) or "nothing"
        assumptions.append(Assumption(
            name="layout", value=f"tp {tp} x pp {pp} x cp {cp} x dp {dp}, ZeRO {zero}, recompute {RECOMPUTE[recompute]}"
                                 f"{f', interleave {interleave}' if interleave > 1 else ''}: the fastest that fits with "
                                 f"{pinned} given; searched: tensor parallel inside a node dividing the heads, pipelines "
                                 "in powers of two (an uneven split at its heaviest stage's pace) interleaved up to one "
                                 "block per virtual stage, context parallel for long sequences, expert parallel across "
                                 "nodes, ZeRO 0-3, recomputation, whole micro-batches",
            source="sizer's layout search (sizer plan ranks them)"))
    if count > 1:
        where = f"inside one node ({link.name})" if count <= per_node else \
            f"across nodes of {per_node} ({network.name})"
        assumptions.append(Assumption(
            name="gradient synchronisation", value=f"ring {'reduce-scatter/all-gather' if zero else 'all-reduce'} {where}, "
                                                   f"{'overlapped with the backward pass' if overlap_allreduce else 'not overlapped (conservative)'}",
            source=f"spec §3.3: 2(n-1)/n x gradient bytes / link bandwidth; {link.source if count <= per_node else network.source}"))
    return assumptions + _parallel_assumptions(job, configs, per_node, link, network)


def _state_assumptions(job: Job, table: DeviceTable, ev: Evaluation, offload: bool) -> list[Assumption]:
    """The assumptions about the batch run and the model states: a changed batch, ZeRO's buckets, offload."""
    assumptions: list[Assumption] = []
    if not ev.exact[0]:
        assumptions.append(Assumption(name="batch size changed", value=batch_change(job, float(ev.batch[0])),
                                      source="whole micro-batches on every data-parallel replica"))
    buckets = float(ev.framework[0] - table.framework_overhead[0])
    if buckets > 0:
        assumptions.append(Assumption(name="ZeRO buckets", value=f"{buckets * unit_factor('B', 'GB'):.3g} GB per device",
                                      source=ZERO_BUCKETS_SOURCE, verified=False))
    if offload:
        assumptions.append(Assumption(name="offload", value="optimizer states and FP32 master weights in host memory, "
                                      "the optimizer step on the CPU", source=HOST_OPTIMIZER_SOURCE))
    return assumptions


def _links(table: DeviceTable, topology: Topology | None) -> tuple[int, Any, Any]:
    """Devices per node [1], the link inside a node and the network between nodes: the node type's, else
    the device's defaults."""
    if topology is not None:
        return topology_links(topology)
    per_node, network = node_layout(table.devices[0])
    return per_node, device_link(table.devices[0]), network


def _parallel_assumptions(job: Job, configs: Any, per_node: int, link: Any, network: Any) -> list[Assumption]:
    """The assumptions of each parallelism the layout uses: ZeRO, tensor, pipeline, expert and context
    parallel, and recomputation (``configs``: the evaluated layout, its first row)."""
    zero, tp, pp, cp = int(configs.zero[0]), int(configs.tp[0]), int(configs.pp[0]), int(configs.cp[0])
    recompute, interleave = int(configs.recompute[0]), int(configs.interleave[0])
    dp = int(round(float(configs.dp[0])))
    assumptions: list[Assumption] = []
    if zero:
        assumptions.append(Assumption(name="ZeRO", value=f"stage {zero} over {dp * cp} data- and context-parallel devices",
                                      source="Rajbhandari et al. 2020 (docs/references.md [zero])"))
    if tp > 1:
        assumptions.append(Assumption(name="tensor parallel", value=f"{tp}-way, Megatron-LM with sequence parallelism: "
                                      "every layer's work divided, 4 collectives of the block's activations per block and pass, "
                                      "not overlapped", source="Korthikanti et al. 2022 §4.2.2 (docs/references.md [korthikanti])"))
    if pp > 1:
        assumptions.append(Assumption(name="pipeline parallel", value=f"{pp} stages, 1F1B{f' interleaved x{interleave}' if interleave > 1 else ''}: "
                                      f"bubble (p-1)/(v m) with m = {int(configs.accumulation[0])} micro-batches, v = {interleave}, "
                                      "layers split evenly", source="Narayanan et al. 2021 (docs/references.md [megatron])"))
    ep = int(np.broadcast_to(configs.ep, configs.tp.shape)[0])
    if ep > 1:
        assert job.arch is not None  # expert parallelism is checked to need a mixture of experts (check_expert_parallel)
        etp, replicas = (int(v[0]) for v in expert_layout(np.asarray([tp]), np.asarray([dp * cp]), np.asarray([ep])))
        where = f"inside one node ({link.name})" if etp * ep <= per_node else f"across nodes ({network.name})"
        assumptions.append(Assumption(
            name="expert parallel", value=f"{ep}-way: {job.arch.experts // ep} of {job.arch.experts} routed experts per "
                                          f"rank{'' if etp == tp else ' (not tensor-split: the EP group spans the tensor ranks)'}, their states "
                                          f"ZeRO-sharded over {replicas} replicas; a dispatch and a "
                                          f"combine all-to-all per MoE block and pass {where}, {NOT_OVERLAPPED} "
                                          f"the received tokens sorted by local expert and back, {EP_TOKEN_SORT_PASSES} "
                                          "passes through device memory",
            source="Lepikhin et al. 2021 GShard §2.2; Rajbhandari et al. 2022 DeepSpeed-MoE (docs/references.md "
                   f"[gshard], [deepspeed-moe]); {EP_TOKEN_SORT_SOURCE}"))
        assumptions.append(Assumption(name="expert load imbalance", value=f"{EP_LOAD_IMBALANCE:g} x the mean routed "
                                      "tokens on the busiest expert-parallel rank", source=EP_LOAD_IMBALANCE_SOURCE,
                                      verified=False))
    if cp > 1:
        assumptions.append(Assumption(name="context parallel", value=f"{cp}-way ring attention: each rank holds 1/{cp} of "
                                      "every sequence and passes its keys and values round the ring in every attention "
                                      "layer, not overlapped (conservative)", source="docs/references.md [ringattention]"))
    if recompute:
        assumptions.append(Assumption(name="recomputation", value=RECOMPUTE[recompute] + (
            ": every layer's forward pass again in the backward pass" if recompute == 2 else
            ": the attention core again (Q, K, V kept)"), source="Korthikanti et al. 2022 §5 (docs/references.md [korthikanti])"))
    return assumptions
