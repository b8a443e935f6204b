"""Training memory per device (spec §3.8), as one typed answer.

The numbers come from the engine's memory model (:mod:`sizer.engine.model_states`, ZeRO stages 0-3);
this module shapes one configuration into a result.

>>> from sizer.schemas.base import WorkloadRequest
>>> from sizer.engine.job import resolve_job
>>> job = resolve_job(WorkloadRequest(params=7.5e9, precision="fp16", optimizer="adam"), need_samples=False)
>>> training_memory(job, None, 64, zero=1).model_states.value  # ZeRO paper Figure 1: 31.4 GB
31.40625
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from sizer.choices import DeviceKind, Optimizer, Precision
from sizer.engine.constants import (
    ADAFACTOR_SOURCE,
    EIGHT_BIT_SOURCE,
    FP32_STORAGE_BYTES,
    FRAMEWORK_OVERHEAD_BYTES,
    FRAMEWORK_OVERHEAD_SOURCE,
    HEADROOM_HIGH,
    HEADROOM_LOW,
    HEADROOM_SOURCE,
    LION_SOURCE,
    OPTIMIZER_STATES,
    PAGED_SOURCE,
    STATE_VALUE_BYTES,
    ZERO_BUCKETS_SOURCE,
)
from sizer.engine.devices import resolve_precision
from sizer.engine.evaluate import memory_parts
from sizer.engine.job import Job
from sizer.engine.step_inputs import RECOMPUTE
from sizer.errors import InputError
from sizer.hardware.precision import MASTER_WEIGHT_BYTES, MIXED_PRECISIONS, weight_bytes
from sizer.hardware.schema import Device
from sizer.results import Assumption, QuantityOut, unit_factor
from sizer.schemas.time_and_memory import MemoryResult
from sizer.units import Quantity


def training_memory(job: Job, device: Device | None = None, count: int = 1, *, zero: int = 0,
                    headroom: bool = False, recompute: int = 0, ep: int = 1, offload: bool = False) -> MemoryResult:
    """Memory one device needs to train ``job`` on ``count`` data-parallel devices at ZeRO stage ``zero``,
    keeping activations by recomputation policy ``recompute`` (an index into RECOMPUTE), a mixture of
    experts' routed experts split over ``ep`` of them: the engine's one memory evaluation
    (:func:`sizer.engine.evaluate.memory_parts`) of that layout, shaped.

    Parameters
    ----------
    job : Job
        The workload (:func:`sizer.engine.job.resolve_job`); its length is not needed.
    device : Device, optional
        The device whose memory the answer is checked against; None: the memory alone, at bf16 for
        mixed precision.
    count : int, default 1
        Data-parallel devices [1], over which ZeRO shards the model states.
    zero : int, default 0
        ZeRO stage 0-3 [1] (Rajbhandari et al. 2020).
    headroom : bool, default False
        Also state the memory with the upper headroom (seed 003's 25-30 %).
    recompute : int, default 0
        Activation recomputation [1], an index into ``RECOMPUTE``: 0 none, 1 selective, 2 full.
    ep : int, default 1
        Expert-parallel devices [1] the routed experts of a mixture of experts are split over.
    offload : bool, default False
        Optimizer states and master weights in host memory (ZeRO-Offload).

    Returns
    -------
    MemoryResult
        Memory per device by part and in total [GB], host memory [GB], the fit and the largest
        micro-batch [sample] that fits where a device is given, and the assumptions.

    Raises
    ------
    InputError
        On ``recompute`` for a workload that is not a transformer, on ``precision`` the device lacks,
        or on an expert-parallel size that does not divide the experts and the count.
    """
    from sizer.engine.layout_checks import check_expert_parallel

    check_expert_parallel(job, count, 1, 1, ep)
    if recompute and job.shape is None:
        raise InputError("recompute", RECOMPUTE[recompute], "a transformer (--model or --params with --tokens): "
                                                            "recomputation is modelled per transformer block")
    precision = _precision(job, device)
    copy = float(weight_bytes(precision))
    master = float(MASTER_WEIGHT_BYTES if precision in MIXED_PRECISIONS else 0)
    overhead = FRAMEWORK_OVERHEAD_BYTES if device is None or device.kind is not DeviceKind.CPU else 0.0
    capacity = float(device.memory.quantity("memory", "[information]").to("B").magnitude) if device else np.inf
    parts = memory_parts(job, np.asarray([copy]), np.asarray([master]), np.asarray([copy / FP32_STORAGE_BYTES]),
                         np.asarray([overhead]), np.asarray([capacity]), np.asarray([float(count)]), np.asarray([zero]),
                         recompute=np.asarray([recompute]), headroom=headroom, ep=np.asarray([float(ep)]),
                         offload=offload or job.recipe.offload_params)
    states = parts.states
    micro = float(parts.micro[0])
    dequant = float(np.ravel(parts.dequant)[0]) if np.ndim(parts.dequant) else float(parts.dequant)
    buckets = float(parts.framework[0]) - overhead - dequant
    logits = float(np.ravel(parts.logits)[0])
    total = float(states.total[0]) + float(parts.framework[0]) + float(parts.activations[0]) + logits
    host = float(np.ravel(np.asarray(parts.offloaded, dtype=float))[0])
    with_headroom = total * (1 + HEADROOM_HIGH) if headroom else None

    def gb(value: float | npt.NDArray[np.float64]) -> QuantityOut:
        """A byte figure of the one evaluated layout (a float, or an array of one) in GB."""
        return QuantityOut.of(Quantity(float(np.ravel(value)[0]), "B"), "GB")

    largest = None
    if device is not None and np.isfinite(parts.fit[0]):
        largest = int(parts.fit[0])
    return MemoryResult(
        device=device.name if device else None, count=count, zero=zero, sharding="full" if zero == 3 else "none",
        precision=precision.value, method=job.finetune.method.value if job.finetune else "full",
        trainable_params=job.finetune.trainable_params if job.finetune else job.params,
        recompute=RECOMPUTE[recompute], micro_batch=micro, weights=gb(states.weights), gradients=gb(states.gradients),
        optimizer_states=gb(states.optimizer_states), master_weights=gb(states.master_weights),
        model_states=gb(states.total), activations=gb(parts.activations), framework_overhead=gb(overhead),
        buffers=gb(buckets), logits=gb(logits), dequant_buffer=gb(dequant), total=gb(total), active=gb(total - overhead),
        host_memory=gb(host),
        recipe=job.recipe.line(precision, RECOMPUTE[recompute], job.finetune),
        required_with_headroom=gb(with_headroom) if with_headroom is not None else None,
        device_memory=gb(capacity) if device else None, fits=bool(parts.fits[0]) if device else None,
        largest_micro_batch=largest,
        assumptions=_assumptions(job, precision, overhead, buckets, count, zero, micro, headroom, recompute, ep))


def _precision(job: Job, device: Device | None) -> Precision:
    if device is not None:
        precision = resolve_precision(device, job.precision)
        if precision is None:
            raise InputError("precision", job.precision.value, f"a precision {device.name} supports")
        return precision
    return Precision.BF16 if job.precision is Precision.MIXED else job.precision


def _assumptions(job: Job, precision: Precision, overhead: float, buckets: float, count: int, zero: int, micro: float,
                 headroom: bool, recompute: int, ep: int = 1) -> list[Assumption]:
    assumptions = [optimizer_assumption(job.optimizer), *job.recipe.assumptions(),
                   Assumption(name="memory basis", value="total is reserved memory: active (what PyTorch's allocator "
                              "holds at the peak, torch.cuda.max_memory_allocated) plus the framework overhead (CUDA "
                              "context, workspaces, allocator cache); offloaded and paged states are host memory, apart",
                              source=FRAMEWORK_OVERHEAD_SOURCE),
                   Assumption(name="precision", value=precision + (" (mixed)" if job.precision is Precision.MIXED else ""),
                              source="bf16 where the device has it, else fp16" if job.precision is Precision.MIXED else "given"),
                   Assumption(name="framework overhead", value=f"{overhead * unit_factor('B', 'GiB'):.3g} GiB", source=FRAMEWORK_OVERHEAD_SOURCE),
                   *([Assumption(name="ZeRO buckets", value=f"{buckets * unit_factor('B', 'GB'):.3g} GB per device",
                                 source=ZERO_BUCKETS_SOURCE, verified=False)] if buckets else []),
                   Assumption(name="sharding", value=f"ZeRO stage {zero} over {count} devices" if zero else "replicated (plain data parallel)",
                              source="Rajbhandari et al. 2020 (ZeRO), Figure 1" if zero else "spec §3.3"),
                   *(_expert_assumptions(job, count, ep)),
                   Assumption(name="micro-batch", value=f"{micro:g} {job.sample_word}s per device",
                              source="given" if job.micro_batch is not None else
                              "the largest whole divisor of the per-device share that fits")]
    if precision in MIXED_PRECISIONS and not job.recipe.pure and (job.finetune is None or job.finetune.adapter_master_weights):
        trained = "" if job.finetune is None else " of the adapters (the frozen base has neither gradients nor master weights)"
        assumptions.append(Assumption(name="mixed precision", value="16-bit weights and gradients + FP32 master weights" + trained,
                                      source="Micikevicius et al. 2018"))
    if headroom:
        assumptions.append(Assumption(name="headroom", value=f"{HEADROOM_LOW:.0%}-{HEADROOM_HIGH:.0%} (checked at {HEADROOM_HIGH:.0%})",
                                      source=HEADROOM_SOURCE))
    if recompute:
        assumptions.append(Assumption(name="recomputation", value=RECOMPUTE[recompute] + (
            ": each block's input kept, one block's activations at a time" if recompute == 2 else
            ": the attention core recomputed, Q, K and V kept"),
            source="Korthikanti et al. 2022 §5 (docs/references.md [korthikanti])"))
    assumptions.extend(a for a in job.assumptions if a.name in ("activations", "layers", "workload profile", "framework")
                       or a.name.startswith(("fine-tuning", "QLoRA")))
    return assumptions


def optimizer_assumption(optimizer: Optimizer) -> Assumption:
    """What the optimizer keeps per parameter, and the source of that.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer of the job.

    Returns
    -------
    Assumption
        The state copies per parameter and their width (FP32, 8-bit, factored), with the source.
    """
    if optimizer is Optimizer.ADAFACTOR:
        return Assumption(name="optimizer", value="adafactor: factored second moment", source=ADAFACTOR_SOURCE)
    if optimizer is Optimizer.LION:
        return Assumption(name="optimizer", value="lion: 1 FP32 state copy", source=LION_SOURCE)
    copies = OPTIMIZER_STATES[optimizer]
    if optimizer in STATE_VALUE_BYTES:
        paged = "; " + PAGED_SOURCE if optimizer.startswith("paged") else ""
        return Assumption(name="optimizer", value=f"{optimizer}: {copies} state copies at 8 bits", source=EIGHT_BIT_SOURCE + paged)
    source = "spec §3.8" + ("; " + PAGED_SOURCE if optimizer.startswith("paged") else "")
    return Assumption(name="optimizer", value=f"{optimizer}: {copies} FP32 state copies", source=source)


def _expert_assumptions(job: Job, count: int, ep: int) -> list[Assumption]:
    """What a mixture of experts' memory rests on: total against active parameters, and where the experts live."""
    arch = job.arch
    if arch is None or not arch.moe:
        return []
    return [Assumption(name="experts", value=f"{arch.params_total():.4g} parameters stored, {arch.params_active():.4g} "
                       f"active per token ({arch.experts_per_token} of {arch.experts} routed experts); routed experts "
                       f"split over {ep} expert-parallel device(s), their states sharded over {count // ep} replicas",
                       source=arch.source, verified=arch.verified)]
