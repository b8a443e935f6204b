"""Training memory footprint per device (spec §3.8) and the K1 headroom option (spec §3.7).

Weights + gradients + optimizer states (+ FP32 master weights under mixed precision) +
activations + a framework overhead, compared with the device's memory.

>>> from sizer.units import Quantity
>>> model_state_bytes(1e9, "fp32", "adam").to("GB")
<Quantity(16.0, 'gigabyte')>
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pint

from sizer.catalog_schema import Device
from sizer.precision import MASTER_WEIGHT_BYTES, MIXED_PRECISIONS, weight_bytes
from sizer.results import Assumption, Model, QuantityOut
from sizer.units import Quantity
from sizer.workload import OPTIMIZER_STATES, Workload

OPTIMIZER_STATE_BYTES = 4  # optimizer moments are kept in FP32
# CUDA context, cuBLAS/cuDNN workspaces and allocator caching: about 0.5-1 GiB per device in
# PyTorch; the larger figure is taken so that "fits" errs on the safe side.
FRAMEWORK_OVERHEAD = Quantity(1, "GiB")
FRAMEWORK_OVERHEAD_SOURCE = "assumed 1 GiB per GPU: CUDA context, library workspaces, allocator cache (PyTorch)"
# Seed 003: keep 25-30 % extra memory when reference weight values must be kept.
HEADROOM_LOW, HEADROOM_HIGH = 0.25, 0.30
HEADROOM_SOURCE = "seed 003 (memory recommendations): reserve 25-30 % extra memory"
Sharding = str  # "none" (plain data parallel) or "full" (ZeRO-3 / FSDP)


@dataclass(frozen=True)
class StateBytes:
    weights: pint.Quantity
    gradients: pint.Quantity
    optimizer_states: pint.Quantity
    master_weights: pint.Quantity

    @property
    def total(self) -> pint.Quantity:
        return self.weights + self.gradients + self.optimizer_states + self.master_weights


def state_bytes(params: float, precision: str, optimizer: str) -> StateBytes:
    """Bytes of weights, gradients, optimizer states and master weights (spec §3.8).

    Mixed precision (fp16/bf16/fp8) keeps 16-bit weights and gradients plus FP32 master
    weights (Micikevicius et al. 2018); each optimizer state is an FP32 copy of the weights.
    """
    copy_bytes = weight_bytes(precision)
    master = MASTER_WEIGHT_BYTES if precision in MIXED_PRECISIONS else 0
    return StateBytes(weights=Quantity(params * copy_bytes, "B"), gradients=Quantity(params * copy_bytes, "B"),
                      optimizer_states=Quantity(params * OPTIMIZER_STATES[optimizer] * OPTIMIZER_STATE_BYTES, "B"),
                      master_weights=Quantity(params * master, "B"))


def model_state_bytes(params: float, precision: str, optimizer: str) -> pint.Quantity:
    """Total bytes of the model state: 16 bytes per parameter for Adam in fp32 or mixed precision."""
    return state_bytes(params, precision, optimizer).total


def device_micro_batch(workload: Workload, count: int) -> float:
    """Samples one device holds at once: its share of the global batch, at most one sequence
    per device for token workloads (gradient accumulation covers the rest)."""
    share = workload.batch_size / count
    if workload.token_mode and workload.seq_len:
        return min(share, float(workload.seq_len))
    return share


class MemoryResult(Model):
    device: str | None
    count: int
    sharding: str
    micro_batch: float
    weights: QuantityOut
    gradients: QuantityOut
    optimizer_states: QuantityOut
    master_weights: QuantityOut
    activations: QuantityOut
    framework_overhead: QuantityOut
    total: QuantityOut
    required_with_headroom: QuantityOut | None
    device_memory: QuantityOut | None
    fits: bool | None
    largest_micro_batch: int | None
    assumptions: list[Assumption]


def training_memory(workload: Workload, device: Device | None = None, count: int = 1, *,
                    sharding: Sharding = "none", headroom: bool = False,
                    micro_batch: float | None = None) -> MemoryResult:
    """Memory one device needs to train ``workload`` on ``count`` devices (spec §3.8).

    ``sharding="full"`` divides weights, gradients and optimizer states over the devices
    (ZeRO stage 3 / FSDP, Rajbhandari et al. 2020); ``"none"`` replicates them (plain data
    parallel). ``headroom`` adds seed 003's 25-30 % reserve (the high end is checked).
    """
    states = state_bytes(workload.params, workload.precision, workload.optimizer)
    shards = count if sharding == "full" else 1
    micro = micro_batch if micro_batch is not None else device_micro_batch(workload, count)
    per_sample = workload.activation_memory_per_sample or Quantity(0, "B")
    activations = per_sample * micro
    overhead = FRAMEWORK_OVERHEAD if device is None or device.kind != "cpu" else Quantity(0, "B")
    static = states.total / shards + overhead
    total = static + activations
    with_headroom = total * (1 + HEADROOM_HIGH) if headroom else None
    needed = with_headroom if headroom else total
    device_memory = fits = largest = None
    assumptions = [Assumption(name="optimizer", value=f"{workload.optimizer}: {OPTIMIZER_STATES[workload.optimizer]} FP32 state copies",
                              source="spec §3.8"),
                   Assumption(name="framework overhead", value=f"{overhead:~P}", source=FRAMEWORK_OVERHEAD_SOURCE),
                   Assumption(name="sharding", value="ZeRO-3/FSDP over the devices" if shards > 1 else "replicated (plain data parallel)",
                              source="Rajbhandari et al. 2020 (ZeRO)" if shards > 1 else "spec §3.3")]
    if workload.precision in MIXED_PRECISIONS:
        assumptions.append(Assumption(name="mixed precision", value="16-bit weights and gradients + FP32 master weights",
                                      source="Micikevicius et al. 2018"))
    if headroom:
        assumptions.append(Assumption(name="headroom", value=f"{HEADROOM_LOW:.0%}-{HEADROOM_HIGH:.0%} (checked at {HEADROOM_HIGH:.0%})",
                                      source=HEADROOM_SOURCE))
    assumptions.extend(a for a in workload.assumptions if a.name == "activations")
    if device is not None:
        memory = device.memory.quantity("memory", "[information]")
        device_memory = QuantityOut.of(memory, "GB")
        fits = bool(needed <= memory)
        usable = memory / (1 + HEADROOM_HIGH) if headroom else memory
        room = ((usable - static) / per_sample).to("").magnitude if per_sample.magnitude > 0 else math.inf
        if math.isfinite(room):
            largest = max(0, math.floor(room))
        else:  # no activations, or so few bytes per sample (1e-300 B) that the ratio overflows
            largest = None if usable >= static else 0
    return MemoryResult(
        device=device.name if device else None, count=count, sharding=sharding, micro_batch=micro,
        weights=QuantityOut.of(states.weights / shards, "GB"), gradients=QuantityOut.of(states.gradients / shards, "GB"),
        optimizer_states=QuantityOut.of(states.optimizer_states / shards, "GB"),
        master_weights=QuantityOut.of(states.master_weights / shards, "GB"),
        activations=QuantityOut.of(activations, "GB"), framework_overhead=QuantityOut.of(overhead, "GB"),
        total=QuantityOut.of(total, "GB"),
        required_with_headroom=QuantityOut.of(with_headroom, "GB") if with_headroom is not None else None,
        device_memory=device_memory, fits=fits, largest_micro_batch=largest, assumptions=assumptions)
