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
from sizer.engine.constants import (FP32_STORAGE_BYTES, HEADROOM_HIGH, OPTIMIZER_STATES, ZERO_GATHER_BUCKET,
                                    ZERO_REDUCE_BUCKET)
from sizer.engine.devices import DeviceTable
from sizer.engine.model_states import StateParts, largest_micro_batch, model_state_bytes
from sizer.engine.roofline import FROZEN, TRAINING, Configs, StepParts, expert_layout, step_seconds
from sizer.workloads.job import Job

SPREAD_FILE = Path(__file__).with_name("error_spread.yaml")


@functools.lru_cache(maxsize=1)
def error_spread() -> dict[str, dict]:
    """The spread of the time range per mode, from ``error_spread.yaml``.

    Returns
    -------
    dict
        Per mode: ``low`` and ``high`` factors of the expected time [1] and their ``source``; a
        mode's ``by_workload`` holds the same per kind of workload and device (``transformer-gpu``).

    References
    ----------
    [spec-3.3]
    """
    return load_yaml(SPREAD_FILE, "error_spread")["modes"]


def range_factors(mode: str, workload: str | None = None) -> tuple[float, float, str]:
    """The factors of the expected time that bound the range of a mode.

    Parameters
    ----------
    mode : str
        ``datasheet``, ``calibrated`` or ``reference``.
    workload : str, optional
        The workload kind (``transformer-gpu``); its factors where the spread file has them,
        else the mode's.

    Returns
    -------
    low : float
        Factor of the expected time at the low end [1].
    high : float
        Factor at the high end [1].
    source : str
        Where the factors come from (held-out errors).

    References
    ----------
    [spec-3.3]
    """
    spread = error_spread()[mode]
    entry = spread.get("by_workload", {}).get(workload, spread) if workload else spread
    return entry["low"], entry["high"], entry["source"]


def range_arrays(mode: str, job: Job, devices) -> tuple[np.ndarray, np.ndarray]:
    """Per device, the low and high factors of the expected time, by the job's workload kind on it.

    Parameters
    ----------
    mode : str
        ``datasheet``, ``calibrated`` or ``reference``.
    job : Job
        The workload.
    devices : sequence of Device
        The devices evaluated.

    Returns
    -------
    low, high : numpy.ndarray
        Factors per device [1].
    """
    by_kind = {kind: range_factors(mode, workload_kind(job, kind))[:2] for kind in {device.kind for device in devices}}
    factors = np.asarray([by_kind[device.kind] for device in devices], dtype=float).reshape(-1, 2)
    return factors[:, 0], factors[:, 1]


def workload_kind(job: Job, device_kind: str) -> str | None:
    """The kind a range is looked up by.

    Parameters
    ----------
    job : Job
        The workload.
    device_kind : str
        ``"cpu"``, ``"gpu"`` or ``"accelerator"``.

    Returns
    -------
    str or None
        ``transformer-<kind>`` for a generated transformer, else None (the mode's range).
    """
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
        """The low and high factors of the range for a mode (see :func:`range_factors`).

        Parameters
        ----------
        mode : str
            ``datasheet``, ``calibrated`` or ``reference``.
        workload : str, optional
            The workload kind.

        Returns
        -------
        low, high : float
            Factors of the expected time [1].
        """
        low, high, _ = range_factors(mode, workload)
        return low, high


def micro_batches(share: np.ndarray, fit: np.ndarray, given: float | None) -> tuple[np.ndarray, np.ndarray]:
    r"""Micro-batch and gradient accumulation per configuration.

    The given micro-batch as it is (the last pass of a step may be partial), else the largest
    that fits (a power of two, or the whole share), evened out over the passes:

    .. math::

        a = \lceil s / m \rceil, \qquad m' = s / a

    Parameters
    ----------
    share : numpy.ndarray
        Samples per replica per step s [sample].
    fit : numpy.ndarray
        Largest micro-batch that fits [sample].
    given : float or None
        The user's micro-batch [sample].

    Returns
    -------
    micro_batch : numpy.ndarray
        Samples per pass [sample].
    accumulation : numpy.ndarray
        Passes per step a [1].
    """
    if given is not None:
        micro = np.minimum(given, share)
        return micro, np.maximum(np.ceil(share / micro - 1e-9), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        power = np.exp2(np.floor(np.log2(np.maximum(fit, 1.0))))
    micro = np.where(fit >= share, share, np.minimum(power, share))
    accumulation = np.maximum(np.ceil(share / np.maximum(micro, 1e-300) - 1e-9), 1.0)
    return share / accumulation, accumulation


def activation_bytes_per_sample(job: Job, recompute: np.ndarray) -> np.ndarray:
    r"""Activation bytes one sample keeps for the backward pass at FP32 storage, per recomputation policy.

    Everything without recomputation; all but the attention layers' with selective
    recomputation; only each block's input plus one block's activations with full recomputation:

    .. math::

        A_{full} = L \, s \, h \, 4 + A / L

    Parameters
    ----------
    job : Job
        The workload.
    recompute : numpy.ndarray
        Policy per configuration [1] (0 none, 1 selective, 2 full).

    Returns
    -------
    numpy.ndarray
        Bytes per sample [B].

    References
    ----------
    [korthikanti], [spec-3.8]
    """
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
                    split: np.ndarray | float = 1.0, ep: np.ndarray | float = 1.0,
                    tp: np.ndarray | float = 1.0) -> StateParts:
    """Model states per device of a job.

    Its parameters split over ``split`` (tensor x pipeline) ranks: every parameter trained, or
    (LoRA/QLoRA) a frozen base stored as the fine-tuning spec says and states for the adapters
    only.

    A mixture of experts' routed experts are split further over ``ep`` expert-parallel ranks and
    their states sharded by ZeRO over the replicas of each expert (the expert data-parallel group
    of DeepSpeed-MoE and Megatron-Core); ``split`` includes the ``tp`` tensor ranks, which split
    the experts too unless the EP group spans them (:func:`~sizer.engine.roofline.expert_layout`).

    Parameters
    ----------
    job : Job
        The workload.
    weight_bytes : numpy.ndarray
        Bytes per 16/32-bit weight and gradient [B].
    master_bytes : numpy.ndarray
        Bytes per FP32 master weight [B] (0 without mixed precision).
    dp : numpy.ndarray
        Data-parallel replicas that ZeRO shards over [1].
    zero : numpy.ndarray
        ZeRO stage 0-3 [1].
    split : numpy.ndarray or float, default 1
        Tensor x pipeline ranks the parameters are split over [1].
    ep : numpy.ndarray or float, default 1
        Expert-parallel ranks the routed experts are split over [1].
    tp : numpy.ndarray or float, default 1
        Tensor-parallel ranks (part of ``split``) [1].

    Returns
    -------
    StateParts
        Weights, gradients, master weights and optimizer states per device [B].

    References
    ----------
    [zero], [micikevicius], [spec-3.8], [deepspeed-moe]
    """
    states_count = OPTIMIZER_STATES[job.optimizer.value]
    finetune = job.finetune
    experts = job.layers.expert_params
    ep = np.asarray(ep, dtype=float)
    etp, expert_dp = expert_layout(tp, dp, ep)
    expert_split = split / np.asarray(tp, dtype=float) * etp * ep
    if finetune is None:
        dense = model_state_bytes((job.params - experts) / split, weight_bytes, master_bytes, states_count, dp, zero)
        if not experts:
            return dense
        return dense + model_state_bytes(experts / expert_split, weight_bytes, master_bytes, states_count, expert_dp, zero)
    master = master_bytes if finetune.adapter_master_weights else 0.0 * master_bytes
    # the frozen base: its routed experts held 1/ep per rank
    expert_share = experts / max(job.layers.total_params, 1.0)
    frozen = finetune.frozen_bytes(weight_bytes) * ((1.0 - expert_share) / split + expert_share / expert_split)
    return model_state_bytes(finetune.trainable_params / split, weight_bytes, master, states_count, dp, zero,
                             frozen_bytes=frozen)


def zero_buckets(params_here: np.ndarray, weight_bytes: np.ndarray, zero: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """Bytes of ZeRO's communication buckets per device.

    A reduce bucket and an all-gather (stage 3: prefetch) bucket of the 16-bit copies, each at
    most the parameters the device holds; none without ZeRO or data parallelism (DeepSpeed's
    documented defaults, :data:`ZERO_REDUCE_BUCKET`).

    Parameters
    ----------
    params_here : numpy.ndarray
        Parameters on one device [1].
    weight_bytes : numpy.ndarray
        Bytes per weight copy [B].
    zero : numpy.ndarray
        ZeRO stage [1].
    dp : numpy.ndarray
        Data-parallel replicas [1].

    Returns
    -------
    numpy.ndarray
        Bucket bytes per device [B].

    References
    ----------
    [zero]
    """
    buckets = np.minimum(ZERO_REDUCE_BUCKET, params_here) + np.minimum(ZERO_GATHER_BUCKET, params_here)
    return np.where((zero >= 1) & (dp > 1), buckets * weight_bytes, 0.0)


def evaluate(job: Job, table: DeviceTable, device, count, zero, *, tp=1, pp=1, recompute=0, interleave=1, ep=1,
             micro_batch: np.ndarray | None = None, headroom: bool = False, overlap_allreduce: bool = False,
             keep_layers: bool = False, offload: bool = False, hybrid_shard: bool = False) -> Evaluation:
    r"""Memory and step time of a job on every configuration at once (arrays broadcast together).

    Memory per device is the model states plus framework reserve and ZeRO buckets plus the
    activations of the micro-batches in flight (with 25-30 % headroom where asked); the step time
    is :func:`~sizer.engine.roofline.step_seconds`; the training time is never below the physical
    limit:

    .. math::

        M = (S + F + A \, m \, \min(pp, a) / pp) \, (1 + h), \qquad
        T = \max(t_{step}, t_{limit}) \cdot n_{steps}

    Parameters
    ----------
    job : Job
        The workload (layers, batch, optimizer, fine-tuning).
    table : DeviceTable
        The devices at the job's precision.
    device : int or array
        Index into ``table`` [1].
    count : float or array
        Devices [1].
    zero : int or array
        ZeRO stage 0-3 [1].
    tp, pp : float or array, default 1
        Tensor- and pipeline-parallel degrees [1].
    recompute : int or array, default 0
        Recomputation policy [1] (0 none, 1 selective, 2 full).
    interleave : float or array, default 1
        Virtual pipeline chunks per stage [1].
    ep : float or array, default 1
        Expert-parallel ranks (a mixture of experts; carved out of the data-parallel ones) [1].
    micro_batch : numpy.ndarray, optional
        Per configuration [sample]; NaN chooses the largest that fits.
    headroom : bool, default False
        Reserve the upper headroom (``HEADROOM_HIGH``) of the memory.
    overlap_allreduce : bool, default False
        Overlap the gradient all-reduce with the backward pass.
    keep_layers : bool, default False
        Keep per-layer times in the result.
    offload : bool, default False
        Optimizer states and master weights in host memory (ZeRO-Offload).
    hybrid_shard : bool, default False
        ZeRO-3 within a node, replicated across nodes (FSDP HYBRID_SHARD).

    Returns
    -------
    Evaluation
        Per configuration: layout, model states, activations and memory needed [B], whether it
        fits, the largest micro-batch [sample], step parts [s], steps [1], batch [sample] and the
        training time [s].

    References
    ----------
    [zero], [zero-offload], [fsdp], [korthikanti], [seed-003], [spec-3.3], [spec-3.8], [deepspeed-moe]
    """
    device, count, zero, tp, pp, recompute, interleave, ep = (
        np.ascontiguousarray(a).ravel() for a in np.broadcast_arrays(
            np.asarray(device, dtype=np.int64), np.asarray(count, dtype=float), np.asarray(zero, dtype=np.int64),
            np.asarray(tp, dtype=float), np.asarray(pp, dtype=float), np.asarray(recompute, dtype=np.int64),
            np.asarray(interleave, dtype=float), np.asarray(ep, dtype=float)))
    states_count = OPTIMIZER_STATES[job.optimizer.value]
    dp = count / (tp * pp)
    group = np.maximum(1.0, np.minimum(dp, np.floor(table.devices_per_node[device] / tp))) if hybrid_shard else None
    states = job_state_bytes(job, table.weight_bytes[device], table.master_bytes[device], dp if group is None else group,
                             zero, tp * pp, ep, tp)
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
    expert_dp = expert_layout(tp, dp, ep)[1]
    feasible = table.supported[device] & (share >= 1) & (dp >= 1) & (dp == np.round(dp)) & (expert_dp == np.round(expert_dp))
    configs = Configs(device=device, count=count, micro_batch=micro, accumulation=accumulation, zero=zero, tp=tp,
                      pp=pp, recompute=recompute, interleave=interleave, ep=ep)
    finetune = job.finetune
    parts = step_seconds(job.layers, table, configs, optimizer_states=states_count, shape=job.shape,
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
