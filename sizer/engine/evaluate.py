"""Evaluate a job on many layouts (device, count, tensor x pipeline x context x data parallel,
ZeRO stage, recomputation, interleaving, micro-batch) at once.

Batches are whole: each data-parallel replica runs ``micro_batch x accumulation`` sequences
with both integers and ``dp x micro_batch x accumulation`` the global batch. Where ``dp`` does not
divide the batch, the nearest batch it does is run (``Evaluation.exact`` False, and the answer
says so). The micro-batch is the given one, else the largest divisor of the replica's share that
fits; a layout whose replicas would get less than one sequence of the asked batch is not feasible.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sizer.datafile import load_yaml
from sizer.engine.constants import (FP32_STORAGE_BYTES, HEADROOM_HIGH, OPTIMIZER_STATES, ZERO_GATHER_BUCKET,
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
    batch: np.ndarray  # samples per step, all devices: whole micro-batches on every replica
    training_seconds: np.ndarray  # expected, never below the physical limit
    exact: np.ndarray  # bool: the batch is the one asked (else the nearest that the layout divides)

    def range_factors(self, mode: str, workload: str | None = None) -> tuple[float, float]:
        low, high, _ = range_factors(mode, workload)
        return low, high


MAX_DIVISOR_STEPS = 64  # accumulation steps tried above the least, before one sequence per pass is taken


def micro_batches(share: np.ndarray, fit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(micro-batch, accumulation) per configuration, both whole: the largest divisor of the
    replica's ``share`` that ``fit`` allows (found within :data:`MAX_DIVISOR_STEPS` accumulation
    steps of the least, else 1); 1 where not even one sequence fits (the layout then does not fit)."""
    share = np.maximum(np.round(share), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        accumulation = np.clip(np.ceil(share / np.maximum(fit, 1.0)), 1.0, share)
    open_ = np.flatnonzero(np.mod(share, accumulation) != 0)
    for _ in range(MAX_DIVISOR_STEPS):
        if not len(open_):
            break
        accumulation[open_] += 1
        open_ = open_[np.mod(share[open_], accumulation[open_]) != 0]
    accumulation[open_] = share[open_]
    return share / accumulation, accumulation


def replica_share(batch: float, dp: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Sequences per data-parallel replica per step: the multiple of ``unit`` (a given micro-batch,
    else 1) nearest ``batch / dp``, at least one ``unit``."""
    return unit * np.maximum(1.0, np.round(batch / (dp * unit)))


def in_flight_share(pp: np.ndarray, accumulation: np.ndarray, interleave: np.ndarray) -> np.ndarray:
    r"""Micro-batches of the whole model's activations the first pipeline stage holds, per layout.

    Parameters
    ----------
    pp : numpy.ndarray
        Pipeline stages [1].
    accumulation : numpy.ndarray
        Micro-batches per step [1].
    interleave : numpy.ndarray
        Virtual stages per device [1].

    Returns
    -------
    numpy.ndarray
        Multiples of one micro-batch's activations of all layers [1].

    Notes
    -----
    1F1B keeps up to ``p`` micro-batches of its ``L/p`` layers in flight; the interleaved
    schedule ``(1 + (p-1)/(p v))`` times that (Korthikanti et al. 2022 §4.2.3):

    .. math:: f = \frac{\min(p, m)}{p} \left(1 + [v > 1] \frac{p - 1}{p v}\right)

    References
    ----------
    korthikanti, megatron
    """
    interleaved = np.where(interleave > 1, 1.0 + (pp - 1) / (pp * interleave), 1.0)
    return np.minimum(pp, accumulation) / pp * interleaved


def activation_bytes_per_sample(job: Job, recompute: np.ndarray) -> np.ndarray:
    r"""Activation bytes one sample keeps for the backward pass at FP32 storage, per policy.

    Parameters
    ----------
    job : Job
        The training job (its layer table, and its architecture for the recomputation policies).
    recompute : numpy.ndarray
        Index into RECOMPUTE per configuration: none, selective, full [1].

    Returns
    -------
    numpy.ndarray
        Bytes per sample at the FP32 convention, all layers [B].

    Notes
    -----
    Korthikanti et al. 2022 §5: *none* keeps every layer's activations; *selective* recomputes
    the attention core only, so it drops the :math:`5 a s^2 b` of scores, softmax and dropout and
    keeps Q, K and V (the :math:`34\, s b h` of a block stay; with flash attention, which keeps no
    scores, selective keeps as much as none); *full* keeps each block's input (:math:`2 s b h`)
    and one block's working set:

    .. math:: M_{full} = L \cdot 2 s b h + M_{none} / L

    References
    ----------
    korthikanti
    """
    layers = job.layers
    total = layers.total_activation_bytes
    if job.shape is None:
        return np.full(recompute.shape, total)
    attention = np.asarray([k == "attention" for k in layers.kinds])
    kept = layers.activation_bytes[attention]
    arch = job.arch
    tokens = job.shape.tokens_per_sample
    # what recomputing the attention core cannot drop: Q, K, V (and flash's softmax statistics)
    qkv = FP32_STORAGE_BYTES * tokens * (arch.heads + 2 * arch.kv_heads) * arch.head_size
    dropped = float((np.maximum(kept - qkv - FP32_STORAGE_BYTES * tokens * arch.heads, 0.0)
                     * layers.multiplicity[attention]).sum())
    blocks = job.shape.blocks
    inputs = blocks * tokens * job.shape.hidden * FP32_STORAGE_BYTES
    full = inputs + total / max(blocks, 1)
    return np.where(recompute == 2, np.minimum(full, total), np.where(recompute == 1, total - dropped, total))


def job_state_bytes(job: Job, weight_bytes: np.ndarray, master_bytes: np.ndarray, dp: np.ndarray, zero: np.ndarray,
                    split: np.ndarray | float = 1.0) -> StateParts:
    """Model states per device of ``job``, its parameters split over ``split`` (tensor x pipeline)
    ranks: every parameter trained, or (LoRA/QLoRA) a frozen base stored as the fine-tuning spec
    says and states for the adapters only."""
    states_count = OPTIMIZER_STATES[job.optimizer.value]
    finetune = job.finetune
    if finetune is None:
        return model_state_bytes(job.params / split, weight_bytes, master_bytes, states_count, dp, zero)
    master = master_bytes if finetune.adapter_master_weights else 0.0 * master_bytes
    return model_state_bytes(finetune.trainable_params / split, weight_bytes, master, states_count, dp, zero,
                             frozen_bytes=finetune.frozen_bytes(weight_bytes) / split)


def zero_buckets(params_here: np.ndarray, weight_bytes: np.ndarray, zero: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """Bytes of ZeRO's communication buckets per device: a reduce bucket and an all-gather (stage 3:
    prefetch) bucket of the 16-bit copies, each at most the parameters the device holds; none
    without ZeRO or data parallelism (DeepSpeed's documented defaults, :data:`ZERO_REDUCE_BUCKET`)."""
    buckets = np.minimum(ZERO_REDUCE_BUCKET, params_here) + np.minimum(ZERO_GATHER_BUCKET, params_here)
    return np.where((zero >= 1) & (dp > 1), buckets * weight_bytes, 0.0)


@dataclass(frozen=True)
class MemoryParts:
    """Bytes per device of one or many layouts, and the whole micro-batches they run."""

    states: StateParts
    framework: np.ndarray  # framework reserve plus ZeRO's buckets [B]
    per_sample: np.ndarray  # activations one sample keeps on a device [B]
    activations: np.ndarray  # of the micro-batches in flight [B]
    needed: np.ndarray  # everything, with headroom where asked [B]
    fits: np.ndarray
    fit: np.ndarray  # largest micro-batch that fits [samples]
    micro: np.ndarray
    accumulation: np.ndarray
    share: np.ndarray  # samples per data-parallel replica per step
    whole: np.ndarray  # at least one micro-batch per replica of the asked batch


def memory_parts(job: Job, weight_bytes, master_bytes, storage_scale, framework_overhead, capacity, dp, zero, *,
                 tp=1.0, pp=1.0, cp=1.0, recompute=0, interleave=1.0, micro_batch=None, headroom: bool = False,
                 offload: bool = False, shard_group=None) -> MemoryParts:
    """The one training-memory evaluation (spec §3.8), for arrays of layouts: model states sharded
    over ``dp x cp`` by ZeRO and split over ``tp x pp``, activations per recomputation policy split
    over ``tp x cp`` with the pipeline's micro-batches in flight, the framework reserve and ZeRO's
    buckets. ``capacity`` [B] is the device memory (inf: none given); ``shard_group`` FSDP's hybrid group."""
    shards = dp * cp  # ZeRO shards over the data- and context-parallel ranks (they hold the same weights)
    states = job_state_bytes(job, weight_bytes, master_bytes, shards if shard_group is None else shard_group, zero,
                             tp * pp)
    if offload:  # optimizer states and FP32 master weights live in host memory
        states = replace(states, master_weights=0.0 * states.master_weights, optimizer_states=0.0 * states.optimizer_states)
    trained = job.params if job.finetune is None else job.finetune.trainable_params
    framework = framework_overhead + zero_buckets(trained / (tp * pp), weight_bytes, zero, shards)
    per_sample = activation_bytes_per_sample(job, np.asarray(recompute)) * storage_scale / (tp * cp)
    reserve = (1 + HEADROOM_HIGH) if headroom else 1.0
    free = capacity / reserve - states.total - framework
    micro, accumulation, share, fit, whole = _batching(job, dp, pp, interleave, free, per_sample, micro_batch)
    activations = per_sample * micro * in_flight_share(pp, accumulation, interleave)
    needed = (states.total + framework + activations) * reserve
    return MemoryParts(states=states, framework=framework, per_sample=per_sample, activations=activations,
                       needed=needed, fits=needed <= capacity, fit=fit, micro=micro, accumulation=accumulation,
                       share=share, whole=whole)


def evaluate(job: Job, table: DeviceTable, device, count, zero, *, tp=1, pp=1, cp=1, recompute=0, interleave=1,
             micro_batch: np.ndarray | None = None, headroom: bool = False, overlap_allreduce: bool = False,
             keep_layers: bool = False, offload: bool = False, hybrid_shard: bool = False) -> Evaluation:
    """Every configuration (arrays broadcast together) of ``job`` on ``table``'s devices.

    ``micro_batch`` (per configuration, NaN: choose) is a search's candidate: a layout whose
    replica share it does not divide is not feasible; the job's own micro-batch (``--micro-batch``)
    is kept and the batch moved to its nearest multiple instead. ``offload`` keeps optimizer states
    and master weights in host memory (ZeRO-Offload); ``hybrid_shard`` shards ZeRO-3 within a node
    and replicates across nodes (FSDP HYBRID_SHARD)."""
    device, count, zero, tp, pp, cp, recompute, interleave = (
        np.ascontiguousarray(a).ravel() for a in np.broadcast_arrays(
            np.asarray(device, dtype=np.int64), np.asarray(count, dtype=float), np.asarray(zero, dtype=np.int64),
            np.asarray(tp, dtype=float), np.asarray(pp, dtype=float), np.asarray(cp, dtype=float),
            np.asarray(recompute, dtype=np.int64), np.asarray(interleave, dtype=float)))
    states_count = OPTIMIZER_STATES[job.optimizer.value]
    dp = count / (tp * pp * cp)
    group = np.maximum(1.0, np.minimum(dp, np.floor(table.devices_per_node[device] / tp))) if hybrid_shard else None
    memory = memory_parts(job, table.weight_bytes[device], table.master_bytes[device], table.storage_scale[device],
                          table.framework_overhead[device], table.memory[device], dp, zero, tp=tp, pp=pp, cp=cp,
                          recompute=recompute, interleave=interleave, micro_batch=micro_batch, headroom=headroom,
                          offload=offload, shard_group=group)
    states, framework, micro, accumulation = memory.states, memory.framework, memory.micro, memory.accumulation
    batch = memory.share * dp
    asked = max(1.0, float(np.round(job.batch_size)))
    feasible = table.supported[device] & (dp >= 1) & (dp == np.round(dp)) & memory.whole
    configs = Configs(device=device, count=count, micro_batch=micro, accumulation=accumulation, zero=zero, tp=tp,
                      pp=pp, recompute=recompute, interleave=interleave, cp=cp)
    finetune = job.finetune
    parts = step_seconds(job.layers, table, configs, optimizer_states=states_count, shape=job.shape,
                         overlap_allreduce=overlap_allreduce, keep_layers=keep_layers,
                         kind=TRAINING if finetune is None else FROZEN,
                         weight_bytes=None if finetune is None else finetune.weight_traffic_bytes(table.weight_bytes[device]),
                         trainable_params=None if finetune is None else finetune.trainable_params,
                         offload=offload, shard_group=group)
    steps = np.broadcast_to(job.steps_for(batch), count.shape)
    training = np.maximum(parts.step * steps, parts.physical_limit * steps)
    return Evaluation(configs=configs, states=states, activations=memory.activations, framework=framework,
                      memory_needed=memory.needed, fits=memory.fits, largest_micro_batch=memory.fit,
                      feasible=feasible, parts=parts,
                      steps=steps, batch=batch, training_seconds=training, exact=batch == asked)


def _batching(job: Job, dp, pp, interleave, free, per_sample, candidate):
    """(micro-batch, accumulation, replica share, largest micro-batch that fits, feasible) per layout
    (module docstring): whole numbers, ``dp x share`` the batch or the nearest one ``dp`` divides."""
    asked = max(1.0, float(np.round(job.batch_size)))
    given = job.micro_batch
    unit = np.full(dp.shape, float(given) if given is not None else 1.0)
    share = replica_share(asked, dp, unit)
    # fit on the worst case of in-flight micro-batches, then the chosen split's own activations
    fit = largest_micro_batch(free, per_sample * in_flight_share(pp, share, interleave))
    whole = dp * unit <= asked  # at least one micro-batch per replica of the asked batch
    if given is not None:
        micro = unit
        return micro, share / micro, share, fit, whole & _interleavable(pp, interleave, share / micro)
    micro, accumulation = micro_batches(share, fit)
    if candidate is not None:
        pick = np.broadcast_to(np.asarray(candidate, dtype=float), share.shape)
        chosen = ~np.isnan(pick) & (pick > 0)
        micro = np.where(chosen, pick, micro)
        divides = np.mod(share, np.where(chosen, pick, 1.0)) == 0
        whole = whole & (~chosen | divides)
        accumulation = np.where(chosen, share / np.where(chosen, pick, 1.0), accumulation)
    return micro, accumulation, share, fit, whole & _interleavable(pp, interleave, accumulation)


def _interleavable(pp, interleave, accumulation):
    """Megatron's interleaved schedule runs micro-batches in groups of ``pp``: it needs ``pp | m``."""
    return (interleave <= 1) | (np.mod(accumulation, pp) == 0)
