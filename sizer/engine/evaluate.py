"""Evaluate a job on many (device, count, ZeRO stage) configurations at once.

The micro-batch is the user's, else the largest that fits (a power of two, or the whole
per-device share when that fits); gradient accumulation makes up the rest of the batch.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sizer.datafile import load_yaml
from sizer.engine.constants import (FP32_STORAGE_BYTES, HEADROOM_HIGH, ZERO_GATHER_BUCKET, optimizer_state_bytes,
                                    ZERO_REDUCE_BUCKET)
from sizer.engine.devices import DeviceTable
from sizer.engine.model_states import StateParts, largest_micro_batch, model_state_bytes
from sizer.engine.roofline import FROZEN, TRAINING, Configs, StepParts, step_seconds
from sizer.workloads.job import Job

SPREAD_FILE = Path(__file__).with_name("error_spread.yaml")


@functools.lru_cache(maxsize=1)
def error_spread() -> dict[str, dict]:
    """Per mode: the factors of the expected time that bound the range, and where they come from;
    a mode's ``by_workload`` holds the same per kind of workload and device (``transformer-gpu``)."""
    return load_yaml(SPREAD_FILE, "error_spread")["modes"]


def range_factors(mode: str, workload: str | None = None) -> tuple[float, float, str]:
    """(low, high, source) of the range for ``mode``: the ``workload`` kind's where the spread file has
    one, else the mode's."""
    spread = error_spread()[mode]
    entry = spread.get("by_workload", {}).get(workload, spread) if workload else spread
    return entry["low"], entry["high"], entry["source"]


def range_arrays(mode: str, job: Job, devices) -> tuple[np.ndarray, np.ndarray]:
    """Per device: the (low, high) factors of the expected time, by the job's workload kind on it."""
    by_kind = {kind: range_factors(mode, workload_kind(job, kind))[:2] for kind in {device.kind for device in devices}}
    factors = np.asarray([by_kind[device.kind] for device in devices], dtype=float).reshape(-1, 2)
    return factors[:, 0], factors[:, 1]


def workload_kind(job: Job, device_kind: str) -> str | None:
    """The kind a range is looked up by: ``transformer-gpu`` for a generated transformer on a GPU."""
    return f"transformer-{device_kind}" if job.arch is not None else None


@dataclass(frozen=True)
class Evaluation:
    """Per configuration: the layout, its memory and its step time (expected seconds)."""

    configs: Configs
    states: StateParts
    activations: np.ndarray  # B per device
    framework: np.ndarray  # B per device
    memory_needed: np.ndarray  # B per device, with headroom where asked
    fits: np.ndarray  # bool
    largest_micro_batch: np.ndarray
    feasible: np.ndarray  # supported precision and at least one sample per device
    parts: StepParts
    steps: np.ndarray
    batch: np.ndarray  # samples per step, all devices
    training_seconds: np.ndarray  # expected, never below the physical limit

    def range_factors(self, mode: str, workload: str | None = None) -> tuple[float, float]:
        low, high, _ = range_factors(mode, workload)
        return low, high


def micro_batches(share: np.ndarray, fit: np.ndarray, given: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(micro-batch, accumulation) per configuration: the given micro-batch as it is (the last
    pass of a step may be partial), else the largest that fits, evened out over the passes."""
    if given is not None:
        micro = np.minimum(given, share)
        return micro, np.maximum(np.ceil(share / micro - 1e-9), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        power = np.exp2(np.floor(np.log2(np.maximum(fit, 1.0))))
    micro = np.where(fit >= share, share, np.minimum(power, share))
    accumulation = np.maximum(np.ceil(share / np.maximum(micro, 1e-300) - 1e-9), 1.0)
    return share / accumulation, accumulation


def activation_bytes_per_sample(job: Job, recompute: np.ndarray) -> np.ndarray:
    """Activation bytes one sample keeps for the backward pass at FP32 storage, per policy
    (Korthikanti et al. 2022 §5): everything; without the attention layers' (selective); only each
    block's input plus one block's activations being recomputed (full)."""
    layers = job.layers
    total = layers.total_activation_bytes
    attention = float(sum(a * m for a, m, k in zip(layers.activation_bytes, layers.multiplicity, layers.kinds)
                          if k == "attention"))
    if job.shape is None:
        return np.full(recompute.shape, total)
    blocks = job.shape.blocks
    inputs = blocks * job.shape.tokens_per_sample * job.shape.hidden * FP32_STORAGE_BYTES
    full = inputs + total / max(blocks, 1)
    return np.where(recompute == 2, np.minimum(full, total), np.where(recompute == 1, total - attention, total))


def job_state_bytes(job: Job, weight_bytes: np.ndarray, master_bytes: np.ndarray, dp: np.ndarray, zero: np.ndarray,
                    split: np.ndarray | float = 1.0) -> StateParts:
    """Model states per device of ``job``, its parameters split over ``split`` (tensor x pipeline)
    ranks: every parameter trained, or (LoRA/QLoRA) a frozen base stored as the fine-tuning spec
    says and states for the adapters only."""
    state_bytes = optimizer_state_bytes(job.optimizer.value)
    finetune = job.finetune
    if finetune is None:
        return model_state_bytes(job.params / split, weight_bytes, master_bytes, state_bytes, dp, zero)
    master = master_bytes if finetune.adapter_master_weights else 0.0 * master_bytes
    return model_state_bytes(finetune.trainable_params / split, weight_bytes, master, state_bytes, dp, zero,
                             frozen_bytes=finetune.frozen_bytes(weight_bytes) / split)


def zero_buckets(params_here: np.ndarray, weight_bytes: np.ndarray, zero: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """Bytes of ZeRO's communication buckets per device: a reduce bucket and an all-gather (stage 3:
    prefetch) bucket of the 16-bit copies, each at most the parameters the device holds; none
    without ZeRO or data parallelism (DeepSpeed's documented defaults, :data:`ZERO_REDUCE_BUCKET`)."""
    buckets = np.minimum(ZERO_REDUCE_BUCKET, params_here) + np.minimum(ZERO_GATHER_BUCKET, params_here)
    return np.where((zero >= 1) & (dp > 1), buckets * weight_bytes, 0.0)


def evaluate(job: Job, table: DeviceTable, device, count, zero, *, tp=1, pp=1, recompute=0, interleave=1,
             micro_batch: np.ndarray | None = None, headroom: bool = False, overlap_allreduce: bool = False,
             keep_layers: bool = False, offload: bool = False, hybrid_shard: bool = False) -> Evaluation:
    """Every configuration (arrays broadcast together) of ``job`` on ``table``'s devices.

    ``micro_batch`` (per configuration, NaN: choose) overrides the job's micro-batch; ``offload``
    keeps optimizer states and master weights in host memory (ZeRO-Offload); ``hybrid_shard``
    shards ZeRO-3 within a node and replicates across nodes (FSDP HYBRID_SHARD)."""
    device, count, zero, tp, pp, recompute, interleave = (
        np.ascontiguousarray(a).ravel() for a in np.broadcast_arrays(
            np.asarray(device, dtype=np.int64), np.asarray(count, dtype=float), np.asarray(zero, dtype=np.int64),
            np.asarray(tp, dtype=float), np.asarray(pp, dtype=float), np.asarray(recompute, dtype=np.int64),
            np.asarray(interleave, dtype=float)))
    state_bytes = optimizer_state_bytes(job.optimizer.value)
    dp = count / (tp * pp)
    group = np.maximum(1.0, np.minimum(dp, np.floor(table.devices_per_node[device] / tp))) if hybrid_shard else None
    states = job_state_bytes(job, table.weight_bytes[device], table.master_bytes[device], dp if group is None else group,
                             zero, tp * pp)
    if offload:  # optimizer states and FP32 master weights live in host memory
        states = replace(states, master_weights=0.0 * states.master_weights, optimizer_states=0.0 * states.optimizer_states)
    trained = job.params if job.finetune is None else job.finetune.trainable_params
    framework = table.framework_overhead[device] + zero_buckets(trained / (tp * pp), table.weight_bytes[device], zero, dp)
    per_sample = activation_bytes_per_sample(job, recompute) * table.storage_scale[device] / tp
    reserve = (1 + HEADROOM_HIGH) if headroom else 1.0
    free = table.memory[device] / reserve - states.total - framework
    batch = job.batch_for(dp)
    share = batch / dp  # samples per replica per step
    # 1F1B: the first stage holds up to pp micro-batches of its 1/pp of the layers in flight
    in_flight = np.minimum(pp, np.maximum(share, 1.0)) / pp
    fit = largest_micro_batch(free, per_sample * in_flight)
    if micro_batch is None:
        micro, accumulation = micro_batches(share, fit, job.micro_batch)
    else:
        given = np.broadcast_to(micro_batch, share.shape)
        chosen, chosen_acc = micro_batches(share, fit, None)
        fixed = np.minimum(np.where(np.isnan(given), 1.0, given), share)
        micro = np.where(np.isnan(given), chosen, fixed)
        accumulation = np.where(np.isnan(given), chosen_acc, np.maximum(np.ceil(share / fixed - 1e-9), 1.0))
    in_flight = np.minimum(pp, accumulation) / pp
    activations = per_sample * micro * in_flight
    needed = (states.total + framework + activations) * reserve
    fits = needed <= table.memory[device]
    feasible = table.supported[device] & (share >= 1) & (dp >= 1) & (dp == np.round(dp))
    configs = Configs(device=device, count=count, micro_batch=micro, accumulation=accumulation, zero=zero, tp=tp,
                      pp=pp, recompute=recompute, interleave=interleave)
    finetune = job.finetune
    parts = step_seconds(job.layers, table, configs, optimizer_state_bytes=state_bytes, shape=job.shape,
                         overlap_allreduce=overlap_allreduce, keep_layers=keep_layers,
                         kind=TRAINING if finetune is None else FROZEN,
                         weight_bytes=None if finetune is None else finetune.weight_traffic_bytes(table.weight_bytes[device]),
                         trainable_params=None if finetune is None else finetune.trainable_params,
                         offload=offload, shard_group=group)
    steps = np.broadcast_to(job.steps_for(batch), count.shape)
    training = np.maximum(parts.step * steps, parts.physical_limit * steps)
    return Evaluation(configs=configs, states=states, activations=activations, framework=framework,
                      memory_needed=needed, fits=fits, largest_micro_batch=fit, feasible=feasible, parts=parts,
                      steps=steps, batch=np.broadcast_to(batch, count.shape), training_seconds=training)
