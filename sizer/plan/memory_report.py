"""Training memory per device (spec §3.8), as one typed answer.

The numbers come from the engine's memory model (:mod:`sizer.engine.model_states`, ZeRO stages 0-3);
this module shapes one configuration into a result.

>>> from sizer.workloads.request import WorkloadRequest
>>> from sizer.workloads.job import resolve_job
>>> job = resolve_job(WorkloadRequest(params=7.5e9, precision="fp16", optimizer="adam"), need_samples=False)
>>> training_memory(job, None, 64, zero=1).model_states.value  # ZeRO paper Figure 1: 31.4 GB
31.40625
"""
from __future__ import annotations

import math

import numpy as np

from sizer.hardware.schema import Device
from sizer.choices import Precision
from sizer.engine.constants import (ZERO_BUCKETS_SOURCE, FRAMEWORK_OVERHEAD_BYTES, FRAMEWORK_OVERHEAD_SOURCE, HEADROOM_HIGH, HEADROOM_LOW,
                                    HEADROOM_SOURCE, OPTIMIZER_STATES)
from sizer.engine.devices import resolve_precision
from sizer.engine.evaluate import activation_bytes_per_sample, job_state_bytes, micro_batches, zero_buckets
from sizer.engine.model_states import largest_micro_batch
from sizer.engine.roofline import RECOMPUTE
from sizer.errors import InputError
from sizer.hardware.precision import MASTER_WEIGHT_BYTES, MIXED_PRECISIONS, weight_bytes
from sizer.results import Assumption, Model, QuantityOut, unit_factor
from sizer.units import Quantity
from sizer.workloads.job import Job


class MemoryResult(Model):
    device: str | None
    count: int
    zero: int
    sharding: str
    precision: str
    method: str
    trainable_params: float
    recompute: str
    micro_batch: float
    weights: QuantityOut
    gradients: QuantityOut
    optimizer_states: QuantityOut
    master_weights: QuantityOut
    model_states: QuantityOut
    activations: QuantityOut
    framework_overhead: QuantityOut
    buffers: QuantityOut  # ZeRO's communication buckets
    total: QuantityOut
    required_with_headroom: QuantityOut | None
    device_memory: QuantityOut | None
    fits: bool | None
    largest_micro_batch: int | None
    assumptions: list[Assumption]


def training_memory(job: Job, device: Device | None = None, count: int = 1, *, zero: int = 0,
                    headroom: bool = False, recompute: int = 0, ep: int = 1) -> MemoryResult:
    """Memory one device needs to train ``job`` on ``count`` data-parallel devices at ZeRO stage ``zero``,
    keeping activations by recomputation policy ``recompute`` (an index into RECOMPUTE); a mixture of
    experts' routed experts split over ``ep`` of them."""
    from sizer.engine.training import check_expert_parallel

    check_expert_parallel(job, count, 1, 1, ep)
    if recompute and job.shape is None:
        raise InputError("recompute", RECOMPUTE[recompute], "a transformer (--model or --params with --tokens): "
                                                            "recomputation is modelled per transformer block")
    if device is not None:
        precision = resolve_precision(device, job.precision)
        if precision is None:
            raise InputError("precision", job.precision.value, f"a precision {device.name} supports")
    else:
        precision = "bf16" if job.precision is Precision.MIXED else job.precision.value
    copy = float(weight_bytes(precision))
    master = float(MASTER_WEIGHT_BYTES if precision in MIXED_PRECISIONS else 0)
    states_count = OPTIMIZER_STATES[job.optimizer.value]
    states = job_state_bytes(job, np.asarray(copy), np.asarray(master), np.asarray(float(count)), np.asarray(zero),
                             ep=np.asarray(float(ep)))
    share = float(job.batch_for(count)) / count
    per_sample = float(activation_bytes_per_sample(job, np.asarray([recompute]))[0]) * copy / 4.0
    overhead = FRAMEWORK_OVERHEAD_BYTES if device is None or device.kind != "cpu" else 0.0
    trained = job.params if job.finetune is None else job.finetune.trainable_params
    buckets = float(zero_buckets(np.asarray(trained), np.asarray(copy), np.asarray(zero), np.asarray(float(count))))
    static = float(states.total) + overhead + buckets
    if device is not None:  # the engine's choice: the given micro-batch, else the largest that fits
        reserve = (1 + HEADROOM_HIGH) if headroom else 1.0
        free = device.memory.quantity("memory", "[information]").to("B").magnitude / reserve - static
        fit = largest_micro_batch(np.asarray(free), np.asarray(per_sample))
        micro = float(micro_batches(np.asarray(share), fit, job.micro_batch)[0])
    else:
        micro = job.micro_batch if job.micro_batch is not None else share
    activations = per_sample * micro
    total = static + activations
    with_headroom = total * (1 + HEADROOM_HIGH) if headroom else None
    needed = with_headroom if headroom else total
    device_memory = fits = largest = None
    assumptions = [Assumption(name="optimizer", value=f"{job.optimizer.value}: {states_count} FP32 state copies", source="spec §3.8"),
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
                              "the per-device share, or the largest power of two that fits")]
    if precision in MIXED_PRECISIONS and (job.finetune is None or job.finetune.adapter_master_weights):
        trained = "" if job.finetune is None else " of the adapters (the frozen base has neither gradients nor master weights)"
        assumptions.append(Assumption(name="mixed precision", value="16-bit weights and gradients + FP32 master weights" + trained,
                                      source="Micikevicius et al. 2018"))
    if headroom:
        assumptions.append(Assumption(name="headroom", value=f"{HEADROOM_LOW:.0%}-{HEADROOM_HIGH:.0%} (checked at {HEADROOM_HIGH:.0%})",
                                      source=HEADROOM_SOURCE))
    if recompute:
        assumptions.append(Assumption(name="recomputation", value=RECOMPUTE[recompute] + (
            ": each block's input kept, one block's activations at a time" if recompute == 2 else
            ": attention activations recomputed"), source="Korthikanti et al. 2022 §5 (docs/references.md [korthikanti])"))
    assumptions.extend(a for a in job.assumptions if a.name in ("activations", "layers", "workload profile")
                       or a.name.startswith(("fine-tuning", "QLoRA")))
    if device is not None:
        memory = float(device.memory.quantity("memory", "[information]").to("B").magnitude)
        device_memory = QuantityOut.of(Quantity(memory, "B"), "GB")
        fits = bool(needed <= memory)
        usable = memory / (1 + HEADROOM_HIGH) if headroom else memory
        room = float(largest_micro_batch(np.asarray(usable - static), np.asarray(per_sample)))
        largest = int(room) if math.isfinite(room) else None
    gb = lambda value: QuantityOut.of(Quantity(float(value), "B"), "GB")  # noqa: E731
    return MemoryResult(
        device=device.name if device else None, count=count, zero=zero, sharding="full" if zero == 3 else "none",
        precision=precision, method=job.finetune.method.value if job.finetune else "full",
        trainable_params=job.finetune.trainable_params if job.finetune else job.params,
        recompute=RECOMPUTE[recompute], micro_batch=micro, weights=gb(states.weights), gradients=gb(states.gradients),
        optimizer_states=gb(states.optimizer_states), master_weights=gb(states.master_weights),
        model_states=gb(states.total), activations=gb(activations), framework_overhead=gb(overhead), buffers=gb(buckets), total=gb(total),
        required_with_headroom=gb(with_headroom) if with_headroom is not None else None,
        device_memory=device_memory, fits=fits, largest_micro_batch=largest, assumptions=assumptions)


def _expert_assumptions(job: Job, count: int, ep: int) -> list[Assumption]:
    """What a mixture of experts' memory rests on: total against active parameters, and where the experts live."""
    arch = job.arch
    if arch is None or not arch.moe:
        return []
    return [Assumption(name="experts", value=f"{arch.params_total():.4g} parameters stored, {arch.params_active():.4g} "
                       f"active per token ({arch.experts_per_token} of {arch.experts} routed experts); routed experts "
                       f"split over {ep} expert-parallel device(s), their states sharded over {count // ep} replicas",
                       source=arch.source, verified=arch.verified)]
