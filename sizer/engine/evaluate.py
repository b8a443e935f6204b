"""Evaluate a job on many layouts (device, count, tensor x pipeline x context x data parallel,
ZeRO stage, recomputation, interleaving, micro-batch) at once.

Batches are whole: each data-parallel replica runs ``micro_batch x accumulation`` sequences
with both integers and ``dp x micro_batch x accumulation`` the global batch. Where ``dp`` does not
divide the batch, the nearest batch it does is run (``Evaluation.exact`` False, and the answer
says so). The micro-batch is the given one, else the largest divisor of the replica's share that
fits; a layout whose replicas would get less than one sequence of a given batch is not feasible, while
a default batch is raised to one micro-batch per replica (stated as a changed batch, issue 15).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from sizer.engine.constants import FP32_STORAGE_BYTES, HEADROOM_HIGH, ZERO_GATHER_BUCKET, ZERO_REDUCE_BUCKET
from sizer.engine.devices import DeviceTable
from sizer.engine.eager import adapter_table
from sizer.engine.job import Job
from sizer.engine.model_states import StateParts, largest_micro_batch, model_state_bytes
from sizer.engine.recipe import BLOCKS_IN_FLIGHT_OFFLOADED
from sizer.engine.roofline import Configs, StepParts, expert_layout, heaviest_stages, is_multiple, step_seconds


@dataclass(frozen=True)
class Evaluation:
    """Per configuration: the layout, its memory and its step time (expected seconds)."""

    configs: Configs
    states: StateParts
    activations: npt.NDArray[np.float64]  # B per device
    framework: npt.NDArray[np.float64]  # B per device
    memory_needed: npt.NDArray[np.float64]  # B per device, with headroom where asked
    fits: npt.NDArray[np.bool_]
    largest_micro_batch: npt.NDArray[np.float64]
    feasible: npt.NDArray[np.bool_]  # supported precision and at least one sample per device
    parts: StepParts
    steps: npt.NDArray[np.float64]
    batch: npt.NDArray[np.float64]  # samples per step, all devices: whole micro-batches on every replica
    training_seconds: npt.NDArray[np.float64]  # expected, never below the physical limit
    exact: npt.NDArray[np.bool_]  # the batch is the one asked (else the nearest that the layout divides)
    host_bytes: npt.NDArray[np.float64] | float = 0.0  # per device in host memory (ZeRO-Offload) [B]


MAX_DIVISOR_STEPS = 64  # accumulation steps tried above the least, before one sequence per pass is taken


def micro_batches(share: npt.NDArray[np.float64], fit: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(micro-batch, accumulation) per configuration, both whole.

    The largest divisor of the replica's ``share`` that ``fit`` allows (found within
    :data:`MAX_DIVISOR_STEPS` accumulation steps of the least, else 1); 1 where not even one sequence
    fits (the layout then does not fit).

    Parameters
    ----------
    share : numpy.ndarray
        Samples per data-parallel replica per step [sample].
    fit : numpy.ndarray
        Largest micro-batch that fits in memory [sample].

    Returns
    -------
    tuple of numpy.ndarray
        Micro-batch [sample] and accumulation steps [1], with ``micro x accumulation = share``.

    References
    ----------
    [megatron]
    """
    share = np.maximum(np.round(share), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        accumulation = np.clip(np.ceil(share / np.maximum(fit, 1.0)), 1.0, share)
    open_ = np.flatnonzero(~is_multiple(share, accumulation))
    # most shares are powers of two, whose divisors are the powers of two: the next one is the answer
    power = np.exp2(np.ceil(np.log2(accumulation[open_])))
    divides = np.exp2(np.round(np.log2(share[open_]))) == share[open_]
    accumulation[open_[divides]] = power[divides]
    open_ = open_[~divides]
    for _ in range(MAX_DIVISOR_STEPS):
        if not len(open_):
            break
        accumulation[open_] += 1
        open_ = open_[~is_multiple(share[open_], accumulation[open_])]
    accumulation[open_] = share[open_]
    return share / accumulation, accumulation


def replica_share(batch: float, dp: npt.NDArray[np.float64], unit: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Samples per data-parallel replica per step: the multiple of ``unit`` nearest ``batch / dp``.

    Parameters
    ----------
    batch : float
        The asked global batch [sample].
    dp : numpy.ndarray
        Data-parallel replicas [1].
    unit : numpy.ndarray
        A given micro-batch, else 1 [sample].

    Returns
    -------
    numpy.ndarray
        Samples per replica per step, at least one ``unit`` [sample].

    References
    ----------
    [megatron]
    """
    return unit * np.maximum(1.0, np.round(batch / (dp * unit)))


def in_flight_share(pp: npt.NDArray[np.float64] | float, accumulation: npt.NDArray[np.float64], interleave: npt.NDArray[np.float64] | float) -> npt.NDArray[np.float64]:
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
    [korthikanti], [megatron]
    """
    interleaved = np.where(interleave > 1, 1.0 + (pp - 1) / (pp * interleave), 1.0)
    return np.minimum(pp, accumulation) / pp * interleaved


def activation_bytes_per_sample(job: Job, recompute: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
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
    [korthikanti]
    """
    layers = job.layers
    total = layers.total_activation_bytes
    if job.shape is None or job.arch is None:  # the one is None exactly when the other is (Job.shape)
        return np.full(recompute.shape, total)
    # the loss's logits are their own term (:func:`logits_bytes_per_sample`), never divided by blocks
    loss = np.asarray([k == "loss" for k in layers.kinds])
    total -= float((layers.activation_bytes[loss] * layers.multiplicity[loss]).sum())
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


def logits_bytes_per_sample(job: Job) -> float:
    r"""Bytes the loss over the vocabulary keeps per sample, at FP32 whatever the training precision.

    .. math:: M_{logits} = s \, V \, b_{logit}

    with ``b_logit`` 10 for the standard loss (bf16 logits, their FP32 upcast and its gradient), 3 chunked,
    about ``8 h / V`` fused (:meth:`sizer.engine.recipe.Recipe.logit_bytes`). It is not an activation
    of a block: no recomputation policy divides it by the blocks, and it is held once per sample in
    the micro-batch.

    Parameters
    ----------
    job : Job
        The workload (its architecture's vocabulary and hidden size, its recipe's loss).

    Returns
    -------
    float
        Bytes per sample [B]; 0 for a workload without a vocabulary (a profile or dense model).

    References
    ----------
    [korthikanti]
    """
    if job.shape is None or job.arch is None or not job.arch.vocab:
        return 0.0
    arch = job.arch
    return job.tokens_per_sample * arch.vocab * job.recipe.logit_bytes(arch.hidden, arch.vocab)


def largest_tensor_params(job: Job) -> float:
    """Parameters of the largest trained tensor: what one gradient needs when the optimizer step runs
    inside the backward pass (the embedding or LM head of a language model, else its widest layer).

    Parameters
    ----------
    job : Job
        The workload (its layer table; its architecture's vocabulary and hidden size).

    Returns
    -------
    float
        Parameters of the largest trained tensor [1].
    """
    layers = job.layers
    trained = np.ones(len(layers.params), dtype=bool) if layers.trained is None else layers.trained
    widest = float(layers.params[trained].max()) if trained.any() else 0.0
    if job.arch is not None and job.finetune is None:
        widest = max(widest, float(job.arch.vocab * job.arch.hidden)) if job.arch.vocab else widest
    return widest


def dequant_buffer_bytes(job: Job) -> float:
    """QLoRA's bf16 copy of the largest 4-bit matrix, dequantised for each matmul (bitsandbytes
    ``dequantize_4bit`` before ``linear``).

    Parameters
    ----------
    job : Job
        The workload (its fine-tuning spec and architecture).

    Returns
    -------
    float
        Bytes of the buffer [B]; 0 without a quantised base.
    """
    finetune = job.finetune
    if finetune is None or not finetune.quantised_params or job.arch is None:
        return 0.0
    from sizer.workloads.finetune import COMPUTE_DTYPE_BYTES, block_matrices

    return max(d_in * d_out for d_in, d_out, _ in block_matrices(job.arch).values()) * COMPUTE_DTYPE_BYTES


def paging_seconds(memory: MemoryParts, capacity: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    r"""Seconds per step a paged optimizer spends moving the states that do not stay on the device.

    CUDA unified memory keeps a paged optimizer's states on the device while there is room and evicts
    them to the host under pressure (Dettmers et al. 2023, QLoRA §2); what does not fit crosses PCIe
    twice a step (in for the update, out again):

    .. math:: t = \frac{2 \max(0, S_{paged} - \max(0, M - M_{needed}))}{B_{PCIe}}

    Parameters
    ----------
    memory : MemoryParts
        The layouts' memory (paged states, what the device needs besides them).
    capacity : numpy.ndarray
        Device memory M [B].

    Returns
    -------
    numpy.ndarray
        Seconds per step [s].

    References
    ----------
    [qlora]
    """
    from sizer.hardware.nodes import FALLBACK_LINK

    room = np.maximum(0.0, capacity - memory.needed)
    spill: npt.NDArray[np.float64] = np.maximum(0.0, np.asarray(memory.paged, dtype=float) - room)
    return 2.0 * spill / FALLBACK_LINK.bandwidth


def dequant_seconds(job: Job, bandwidth: npt.NDArray[np.float64], configs: Configs) -> npt.NDArray[np.float64]:
    r"""Seconds per step that QLoRA's dequantisation kernels add, in series with the matmuls they feed.

    bitsandbytes' ``MatMul4Bit`` dequantises every 4-bit weight to bf16 before each matmul that uses it:
    the forward pass, the backward pass's input gradient, and the forward again under full recomputation.
    Each reads the NF4 weight and its constants and writes the bf16 copy, at a fitted fraction of the
    device's memory bandwidth (:data:`~sizer.workloads.finetune.DEQUANT_BANDWIDTH_SHARE`):

    .. math:: t = m \, n_{pass} \, \frac{P_q (b_{nf4} + 2)}{t_p \, p_p \, B \, \eta}

    Parameters
    ----------
    job : Job
        The workload (its fine-tuning spec).
    bandwidth : numpy.ndarray
        Device memory bandwidth B per configuration [B/s].
    configs : Configs
        The layouts (tensor and pipeline split, recomputation, micro-batches per step m).

    Returns
    -------
    numpy.ndarray
        Seconds per step [s]; 0 without a quantised base.

    References
    ----------
    [qlora]
    """
    finetune = job.finetune
    if finetune is None or not finetune.quantised_params:
        return np.zeros(np.shape(configs.tp))
    from sizer.workloads.finetune import BITS_PER_BYTE, COMPUTE_DTYPE_BYTES, DEQUANT_BANDWIDTH_SHARE, nf4_bits_per_param

    per_param = nf4_bits_per_param() / BITS_PER_BYTE + COMPUTE_DTYPE_BYTES
    passes: npt.NDArray[np.float64] = 2.0 + (np.asarray(configs.recompute) == 2)
    per_pass = finetune.quantised_params / (configs.tp * configs.pp) * per_param / (bandwidth * DEQUANT_BANDWIDTH_SHARE)
    return per_pass * passes * configs.accumulation


def job_state_bytes(job: Job, weight_bytes: npt.NDArray[np.float64], master_bytes: npt.NDArray[np.float64], dp: npt.NDArray[np.float64], zero: npt.NDArray[np.int64],
                    split: npt.NDArray[np.float64] | float = 1.0, ep: npt.NDArray[np.float64] | float = 1.0,
                    tp: npt.NDArray[np.float64] | float = 1.0) -> StateParts:
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
    [zero], [micikevicius], [spec-3.8], [deepspeed-moe], [8bit-optimizers]
    """
    state_bytes = job.state_bytes
    if job.recipe.pure:  # every state in bf16: no FP32 master copy
        master_bytes = 0.0 * np.asarray(master_bytes)
    finetune = job.finetune
    experts = job.layers.expert_params
    ep = np.asarray(ep, dtype=float)
    etp, expert_dp = expert_layout(tp, dp, ep)
    expert_split = split / np.asarray(tp, dtype=float) * etp * ep
    if finetune is None:
        dense = model_state_bytes((job.params - experts) / split, weight_bytes, master_bytes, state_bytes, dp, zero)
        if not experts:
            return dense
        return dense + model_state_bytes(experts / expert_split, weight_bytes, master_bytes, state_bytes, expert_dp, zero)
    master = master_bytes if finetune.adapter_master_weights else 0.0 * master_bytes
    # the frozen base: its routed experts held 1/ep per rank
    expert_share = experts / max(job.layers.total_params, 1.0)
    frozen = finetune.frozen_bytes(weight_bytes) * ((1.0 - expert_share) / split + expert_share / expert_split)
    return model_state_bytes(finetune.trainable_params / split, weight_bytes, master, state_bytes, dp, zero,
                             frozen_bytes=frozen)


def zero_buckets(params_here: npt.NDArray[np.float64] | float, weight_bytes: npt.NDArray[np.float64], zero: npt.NDArray[np.int64], dp: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
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


@dataclass(frozen=True)
class MemoryParts:
    """Bytes per device of one or many layouts, and the whole micro-batches they run."""

    states: StateParts
    framework: npt.NDArray[np.float64]  # framework reserve plus ZeRO's buckets [B]
    per_sample: npt.NDArray[np.float64]  # activations one sample keeps on a device [B]
    activations: npt.NDArray[np.float64]  # of the micro-batches in flight [B]
    needed: npt.NDArray[np.float64]  # everything, with headroom where asked [B]
    fits: npt.NDArray[np.bool_]
    fit: npt.NDArray[np.float64]  # largest micro-batch that fits [samples]
    micro: npt.NDArray[np.float64]
    accumulation: npt.NDArray[np.float64]
    share: npt.NDArray[np.float64]  # samples per data-parallel replica per step
    whole: npt.NDArray[np.bool_]  # at least one micro-batch per replica of the asked batch
    offloaded: npt.NDArray[np.float64] | float = 0.0  # optimizer states and master weights moved to host memory [B]
    logits: npt.NDArray[np.float64] | float = 0.0  # the loss's logits of the micro-batch (FP32, never divided by blocks) [B]
    dequant: npt.NDArray[np.float64] | float = 0.0  # QLoRA's dequantised-weight buffer (part of ``framework``) [B]
    paged: npt.NDArray[np.float64] | float = 0.0  # a paged optimizer's states in unified memory (part of ``offloaded``) [B]


def memory_parts(job: Job, weight_bytes: npt.NDArray[np.float64], master_bytes: npt.NDArray[np.float64], storage_scale: npt.NDArray[np.float64], framework_overhead: npt.NDArray[np.float64],
                 capacity: npt.NDArray[np.float64], dp: npt.NDArray[np.float64], zero: npt.NDArray[np.int64], *, tp: npt.NDArray[np.float64] | float = 1.0, pp: npt.NDArray[np.float64] | float = 1.0,
                 cp: npt.NDArray[np.float64] | float = 1.0, recompute: npt.NDArray[np.int64] | int = 0, interleave: npt.NDArray[np.float64] | float = 1.0,
                 micro_batch: npt.NDArray[np.float64] | None = None, headroom: bool = False, offload: bool = False,
                 shard_group: npt.NDArray[np.float64] | None = None, ep: npt.NDArray[np.float64] | float = 1.0) -> MemoryParts:
    r"""The one training-memory evaluation (spec §3.8), for arrays of layouts.

    Model states sharded over ``dp x cp`` by ZeRO and split over ``tp x pp``; activations per
    recomputation policy split over ``tp x cp``, with the pipeline's micro-batches in flight; the
    framework reserve and ZeRO's buckets; the headroom where asked:

    .. math:: M = (S + F + A \, m \, f_{flight}) (1 + h)

    Parameters
    ----------
    job : Job
        The workload.
    weight_bytes, master_bytes : numpy.ndarray
        Per 16/32-bit weight copy and per FP32 master weight [B].
    storage_scale : numpy.ndarray
        Activation storage relative to FP32 [1].
    framework_overhead : numpy.ndarray
        Framework reserve per device [B].
    capacity : numpy.ndarray
        Device memory (inf: no device) [B].
    dp : numpy.ndarray
        Data-parallel replicas [1].
    zero : numpy.ndarray
        ZeRO stage 0-3 [1].
    tp, pp, cp : float or numpy.ndarray, default 1
        Tensor-, pipeline- and context-parallel degrees [1].
    recompute : int or numpy.ndarray, default 0
        Recomputation policy (0 none, 1 selective, 2 full) [1].
    interleave : float or numpy.ndarray, default 1
        Virtual pipeline stages per device [1].
    micro_batch : numpy.ndarray, optional
        A search's candidate micro-batch per layout (NaN: choose) [sample].
    headroom : bool, default False
        Reserve the upper headroom of the memory.
    offload : bool, default False
        Optimizer states and master weights in host memory.
    shard_group : numpy.ndarray, optional
        FSDP HYBRID_SHARD's group size [1].
    ep : float or numpy.ndarray, default 1
        Expert-parallel ranks of a mixture of experts (out of the data-parallel ones) [1].

    Returns
    -------
    MemoryParts
        States, framework, activations and total [B], whether it fits, the micro-batch and
        accumulation, the replica share and whether the batch splits.

    References
    ----------
    [zero], [korthikanti], [seed-003], [spec-3.8], [fsdp], [deepspeed-moe]
    """
    held = held_bytes(job, weight_bytes, master_bytes, storage_scale, framework_overhead, capacity, dp, zero, tp=tp,
                      pp=pp, cp=cp, recompute=recompute, headroom=headroom, offload=offload, shard_group=shard_group,
                      ep=ep)
    return batched_memory(held, batching(job, held, dp, pp=pp, interleave=interleave, micro_batch=micro_batch))


@dataclass(frozen=True)
class HeldBytes:
    """What a layout keeps on a device whatever its micro-batch and interleaving (:func:`held_bytes`): the
    part of :func:`memory_parts` a search computes once per split and shares among its batchings."""

    states: StateParts
    framework: npt.NDArray[np.float64]  # framework reserve plus ZeRO's buckets [B]
    per_sample: npt.NDArray[np.float64]  # activations one sample keeps on a device [B]
    logits: npt.NDArray[np.float64] | float  # the loss's logits of one sample [B]
    free: npt.NDArray[np.float64]  # memory left for activations and logits, the headroom reserved [B]
    resident: npt.NDArray[np.float64]  # the states and the framework's [B]
    capacity: npt.NDArray[np.float64]  # device memory [B]
    reserve: float  # 1 + the headroom asked, else 1 [1]
    offloaded: npt.NDArray[np.float64] | float = 0.0
    dequant: npt.NDArray[np.float64] | float = 0.0
    paged: npt.NDArray[np.float64] | float = 0.0


def held_bytes(job: Job, weight_bytes: npt.NDArray[np.float64], master_bytes: npt.NDArray[np.float64],
               storage_scale: npt.NDArray[np.float64], framework_overhead: npt.NDArray[np.float64],
               capacity: npt.NDArray[np.float64], dp: npt.NDArray[np.float64], zero: npt.NDArray[np.int64], *,
               tp: npt.NDArray[np.float64] | float = 1.0, pp: npt.NDArray[np.float64] | float = 1.0,
               cp: npt.NDArray[np.float64] | float = 1.0, recompute: npt.NDArray[np.int64] | int = 0,
               headroom: bool = False, offload: bool = False, shard_group: npt.NDArray[np.float64] | None = None,
               ep: npt.NDArray[np.float64] | float = 1.0) -> HeldBytes:
    """The bytes of :func:`memory_parts` that do not depend on the micro-batch or the interleaving: model states,
    framework reserve, activations and logits per sample, and the memory left for them.

    Parameters
    ----------
    job : Job
        The workload.
    weight_bytes, master_bytes : numpy.ndarray
        Per 16/32-bit weight copy and per FP32 master weight [B].
    storage_scale : numpy.ndarray
        Activation storage relative to FP32 [1].
    framework_overhead : numpy.ndarray
        Framework reserve per device [B].
    capacity : numpy.ndarray
        Device memory (inf: no device) [B].
    dp : numpy.ndarray
        Data-parallel replicas [1].
    zero : numpy.ndarray
        ZeRO stage 0-3 [1].
    tp, pp, cp : float or numpy.ndarray, default 1
        Tensor-, pipeline- and context-parallel degrees [1].
    recompute : int or numpy.ndarray, default 0
        Recomputation policy (0 none, 1 selective, 2 full) [1].
    headroom : bool, default False
        Reserve the upper headroom of the memory.
    offload : bool, default False
        Optimizer states and master weights in host memory.
    shard_group : numpy.ndarray, optional
        FSDP HYBRID_SHARD's group size [1].
    ep : float or numpy.ndarray, default 1
        Expert-parallel ranks of a mixture of experts (out of the data-parallel ones) [1].

    Returns
    -------
    HeldBytes
        Per layout [B]; :func:`batching` completes it.

    References
    ----------
    [zero], [korthikanti], [seed-003], [spec-3.8], [fsdp], [deepspeed-moe]
    """
    shards = dp * cp  # ZeRO shards over the data- and context-parallel ranks (they hold the same weights)
    stages = heaviest_stages(job.shape, pp)  # the heaviest stage's share where the blocks split unevenly
    states = job_state_bytes(job, weight_bytes, master_bytes, shards if shard_group is None else shard_group, zero,
                             tp * stages, ep, tp)
    states, offloaded, paged = _recipe_states(job, states, weight_bytes, offload, tp * stages)
    trained = job.params if job.finetune is None else job.finetune.trainable_params
    dequant = dequant_buffer_bytes(job) / tp
    framework = framework_overhead + zero_buckets(trained / (tp * stages), weight_bytes, zero, shards) + dequant
    # per sample of the whole model on one rank, the heaviest stage's blocks scaled up to it (pp / stages)
    per_sample = activation_bytes_per_sample(job, np.asarray(recompute)) * storage_scale / (tp * cp) \
        * (np.asarray(pp, dtype=float) / stages)
    if job.finetune is not None:  # eager PyTorch adapter runs keep more than the layer graph's count (fitted)
        per_sample = per_sample * job.finetune.activation_factor
    if job.recipe.offload_activations:  # two blocks' worth stay on the device, the rest streams to the host
        blocks = job.shape.blocks if job.shape is not None else len(job.layers.params)
        per_sample = per_sample * min(1.0, BLOCKS_IN_FLIGHT_OFFLOADED / max(blocks, 1))
    logits = logits_bytes_per_sample(job) / (tp * cp)  # vocabulary-parallel over tp, tokens over cp
    reserve = (1 + HEADROOM_HIGH) if headroom else 1.0
    free = capacity / reserve - states.total - framework
    return HeldBytes(states=states, framework=framework, per_sample=per_sample, logits=logits, free=free,
                     resident=states.total + framework, capacity=capacity, reserve=reserve, offloaded=offloaded, dequant=dequant, paged=paged)


@dataclass(frozen=True)
class Batching:
    """The whole micro-batches a layout runs and the memory they take (:func:`batching`)."""

    micro: npt.NDArray[np.float64]  # [sample]
    accumulation: npt.NDArray[np.float64]  # micro-batches per step [1]
    share: npt.NDArray[np.float64]  # samples per data-parallel replica per step
    fit: npt.NDArray[np.float64]  # largest micro-batch that fits [sample]
    whole: npt.NDArray[np.bool_]  # at least one micro-batch per replica of the asked batch
    activations: npt.NDArray[np.float64]  # of the micro-batches in flight [B]
    logits: npt.NDArray[np.float64]  # the loss's logits of the micro-batch [B]
    needed: npt.NDArray[np.float64]  # everything, with headroom where asked [B]
    fits: npt.NDArray[np.bool_]


def batching(job: Job, held: HeldBytes, dp: npt.NDArray[np.float64], *, pp: npt.NDArray[np.float64] | float = 1.0,
             interleave: npt.NDArray[np.float64] | float = 1.0, micro_batch: npt.NDArray[np.float64] | None = None,
             rows: npt.NDArray[np.intp] | None = None) -> Batching:
    """The rest of :func:`memory_parts` from its part that no batching changes (:func:`held_bytes`): the
    micro-batches, the activations in flight and whether it all fits.

    Parameters
    ----------
    job : Job
        The workload.
    held : HeldBytes
        The layouts' bytes that do not depend on the batching [B].
    dp : numpy.ndarray
        Data-parallel replicas [1].
    pp : float or numpy.ndarray, default 1
        Pipeline stages [1].
    interleave : float or numpy.ndarray, default 1
        Virtual pipeline stages per device [1].
    micro_batch : numpy.ndarray, optional
        A search's candidate micro-batch per layout (NaN: choose) [sample].
    rows : numpy.ndarray, optional
        The row of ``held`` each layout batches (a search's variants of one split, many to a row), where not
        ``held``'s own [index]: only the figures the batching reads are taken there.

    Returns
    -------
    Batching
        Per layout; :func:`batched_memory` joins it to ``held``.

    References
    ----------
    [korthikanti], [spec-3.8]
    """
    def at(values: npt.NDArray[np.float64] | float) -> npt.NDArray[np.float64]:
        return np.asarray(values if rows is None or np.ndim(values) == 0 else np.asarray(values)[rows])

    per_sample, logits, reserve = at(held.per_sample), at(held.logits), held.reserve
    micro, accumulation, share, fit, whole = _batching(job, dp, pp, interleave, at(held.free), per_sample,
                                                       micro_batch, logits)
    activations = per_sample * micro * in_flight_share(pp, accumulation, interleave)
    held_logits = logits * micro
    needed = (at(held.resident) + activations + held_logits) * reserve
    return Batching(micro=micro, accumulation=accumulation, share=share, fit=fit, whole=whole, activations=activations,
                    logits=held_logits, needed=needed, fits=needed <= at(held.capacity))


def batched_memory(held: HeldBytes, batched: Batching) -> MemoryParts:
    """:func:`memory_parts` of layouts from their held bytes and their batching, row by row.

    Parameters
    ----------
    held : HeldBytes
        What the layouts hold whatever their batching [B].
    batched : Batching
        Their batching (:func:`batching`), of the same rows.

    Returns
    -------
    MemoryParts
        As :func:`memory_parts`.
    """
    return MemoryParts(states=held.states, framework=held.framework, per_sample=held.per_sample,
                       activations=batched.activations, needed=batched.needed, fits=batched.fits, fit=batched.fit,
                       micro=batched.micro, accumulation=batched.accumulation, share=batched.share,
                       whole=batched.whole, offloaded=held.offloaded, logits=batched.logits, dequant=held.dequant,
                       paged=held.paged)


def _recipe_states(job: Job, states: StateParts, weight_bytes: npt.NDArray[np.float64], offload: bool,
                   split: npt.NDArray[np.float64] | float) -> tuple[StateParts, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The device's states under the job's recipe (:mod:`sizer.engine.recipe`), what went to host memory
    and, of that, a paged optimizer's states."""
    recipe = job.recipe
    zero = 0.0 * states.optimizer_states
    if recipe.optimizer_in_backward:  # one tensor's gradient at a time
        one = largest_tensor_params(job) / split * weight_bytes
        states = replace(states, gradients=np.minimum(states.gradients, one))
    paged = states.optimizer_states if recipe.paged else zero
    offloaded = paged
    if recipe.paged:
        states = replace(states, optimizer_states=zero)
    if offload or recipe.offload_params:  # optimizer states and FP32 master weights live in host memory
        offloaded = offloaded + states.master_weights + states.optimizer_states
        states = replace(states, master_weights=zero, optimizer_states=zero)
    if recipe.offload_params:  # the gathered block and the next stay on the device, weights and gradients
        blocks = job.shape.blocks if job.shape is not None else len(job.layers.params)
        kept = min(1.0, BLOCKS_IN_FLIGHT_OFFLOADED / max(blocks, 1))
        offloaded = offloaded + (states.weights + states.gradients) * (1.0 - kept)
        states = replace(states, weights=states.weights * kept, gradients=states.gradients * kept)
    return states, offloaded, paged


def evaluate(job: Job, table: DeviceTable, device: npt.ArrayLike, count: npt.ArrayLike, zero: npt.ArrayLike, *,
             tp: npt.ArrayLike = 1, pp: npt.ArrayLike = 1, cp: npt.ArrayLike = 1, recompute: npt.ArrayLike = 0,
             interleave: npt.ArrayLike = 1, ep: npt.ArrayLike = 1, micro_batch: npt.NDArray[np.float64] | None = None, headroom: bool = False, overlap_allreduce: bool = False,
             keep_layers: bool = False, offload: bool = False, hybrid_shard: bool = False,
             overlap_all_to_all: bool = False, memory: MemoryParts | None = None) -> Evaluation:
    r"""Memory and step time of a job on every configuration at once (arrays broadcast together).

    Memory is :func:`memory_parts`; the step time is :func:`~sizer.engine.roofline.step_seconds`;
    the batch is whole (``dp x micro x accumulation``, the asked one or the nearest the layout
    splits, ``exact`` saying which); the training time is never below the physical limit:

    .. math:: T = \max(t_{step}, t_{limit}) \cdot n_{steps}

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
    tp, pp, cp : float or array, default 1
        Tensor-, pipeline- and context-parallel degrees [1].
    recompute : int or array, default 0
        Recomputation policy [1] (0 none, 1 selective, 2 full).
    interleave : float or array, default 1
        Virtual pipeline chunks per stage [1].
    ep : float or array, default 1
        Expert-parallel ranks (a mixture of experts; carved out of the data-parallel ones) [1].
    micro_batch : numpy.ndarray, optional
        A search's candidate per configuration [sample]: a layout whose share it does not divide is
        not feasible; NaN chooses the largest whole divisor that fits. The job's own micro-batch is
        kept instead and the batch moved to its nearest multiple.
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
    overlap_all_to_all : bool, default False
        Overlap expert parallelism's all-to-alls with another micro-batch's computation.
    memory : MemoryParts, optional
        :func:`memory_parts` of these very configurations where the caller has it (a search computes it
        to prune before any time), so that it is not computed twice; else computed here.

    Returns
    -------
    Evaluation
        Per configuration: layout, model states, activations and memory needed [B], whether it
        fits, the largest micro-batch [sample], step parts [s], steps [1], batch [sample], the
        training time [s] and whether the batch is the one asked.

    References
    ----------
    [zero], [zero-offload], [fsdp], [korthikanti], [seed-003], [spec-3.3], [spec-3.8], [deepspeed-moe]
    """
    device, count, zero, tp, pp, cp, recompute, interleave, ep = (
        np.ascontiguousarray(a).ravel() for a in np.broadcast_arrays(
            np.asarray(device, dtype=np.int64), np.asarray(count, dtype=float), np.asarray(zero, dtype=np.int64),
            np.asarray(tp, dtype=float), np.asarray(pp, dtype=float), np.asarray(cp, dtype=float),
            np.asarray(recompute, dtype=np.int64), np.asarray(interleave, dtype=float), np.asarray(ep, dtype=float)))
    state_bytes = job.state_bytes
    offload = offload or job.recipe.offload_params
    dp = count / (tp * pp * cp)
    group = np.maximum(1.0, np.minimum(dp, np.floor(table.devices_per_node[device] / tp))) if hybrid_shard else None
    if memory is None:
        memory = memory_parts(job, table.weight_bytes[device], table.master_bytes[device], table.storage_scale[device],
                              table.framework_overhead[device], table.memory[device], dp, zero, tp=tp, pp=pp, cp=cp,
                              recompute=recompute, interleave=interleave, micro_batch=micro_batch, headroom=headroom,
                              offload=offload, shard_group=group, ep=ep)
    states, framework, micro, accumulation = memory.states, memory.framework, memory.micro, memory.accumulation
    batch = memory.share * dp
    asked = max(1.0, float(np.round(job.batch_size)))
    expert_dp = expert_layout(tp, dp * cp, ep)[1]
    feasible = table.supported[device] & (dp >= 1) & (dp == np.round(dp)) & memory.whole & (expert_dp == np.round(expert_dp))
    configs = Configs(device=device, count=count, micro_batch=micro, accumulation=accumulation, zero=zero, tp=tp,
                      pp=pp, recompute=recompute, interleave=interleave, cp=cp, ep=ep)
    finetune = job.finetune
    eager = finetune is not None and job.eager  # eager adapter steps: their own GEMM-size and launch constants
    timed = adapter_table(table) if eager else table
    parts = step_seconds(job.layers, timed, configs, optimizer_state_bytes=state_bytes, shape=job.shape,
                         overlap_allreduce=overlap_allreduce, keep_layers=keep_layers,
                         overlap_all_to_all=overlap_all_to_all,
                         kind=job.pass_kind,
                         weight_bytes=None if finetune is None else finetune.weight_traffic_bytes(table.weight_bytes[device]),
                         trainable_params=None if finetune is None else finetune.trainable_params,
                         offload=offload, shard_group=group)
    # in series with the step's kernels: QLoRA's dequantisation, a paged optimizer's states crossing PCIe
    serial = dequant_seconds(job, table.bandwidth[device], configs) + paging_seconds(memory, table.memory[device])
    if np.any(serial):
        parts = replace(parts, step=parts.step + serial, kernels=parts.kernels + serial, memory=parts.memory + serial)
    steps = np.broadcast_to(job.steps_for(batch), count.shape)
    training = np.maximum(parts.step * steps, parts.physical_limit * steps)
    return Evaluation(configs=configs, states=states, activations=memory.activations + memory.logits, framework=framework,
                      memory_needed=memory.needed, fits=memory.fits, largest_micro_batch=memory.fit,
                      feasible=feasible, parts=parts,
                      steps=steps, batch=batch, training_seconds=training, exact=batch == asked,
                      host_bytes=memory.offloaded)


def _batching(job: Job, dp: npt.NDArray[np.float64], pp: npt.NDArray[np.float64] | float, interleave: npt.NDArray[np.float64] | float, free: npt.NDArray[np.float64], per_sample: npt.NDArray[np.float64],
              candidate: npt.NDArray[np.float64] | None, logits: npt.NDArray[np.float64] | float = 0.0
              ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """(micro-batch, accumulation, replica share, largest micro-batch that fits, feasible) per layout
    (module docstring): whole numbers, ``dp x share`` the batch or the nearest one ``dp`` divides; with
    the optimizer step in the backward pass no accumulation, so each replica's share is one micro-batch."""
    asked = max(1.0, float(np.round(job.batch_size)))
    given = job.micro_batch
    unit = np.full(dp.shape, float(given) if given is not None else 1.0)
    share = replica_share(asked, dp, unit)
    # fit on the worst case of in-flight micro-batches, then the chosen split's own activations
    fit = largest_micro_batch(free, per_sample * in_flight_share(pp, share, interleave) + logits)
    if job.recipe.optimizer_in_backward:
        micro = unit if given is not None else np.clip(np.minimum(share, fit), 1.0, None)
        return micro, np.ones_like(micro), micro, fit, np.ones(dp.shape, dtype=bool)
    # at least one micro-batch per replica of the asked batch; a default batch (not given) that a layout's
    # replicas outnumber is raised to one micro-batch each (``exact`` False: the answer says so), so that every
    # caller of the one search (time, plan, sweep, recommend) runs what some layout can
    whole = (dp * unit <= asked) | (not job.batch_given)
    if given is not None:
        micro = unit
        return micro, share / micro, share, fit, whole & _interleavable(pp, interleave, share / micro)
    if candidate is None:
        micro, accumulation = micro_batches(share, fit)
        return micro, accumulation, share, fit, whole & _interleavable(pp, interleave, accumulation)
    pick = np.broadcast_to(np.asarray(candidate, dtype=float), share.shape)
    chosen = ~np.isnan(pick) & (pick > 0)
    step = np.where(chosen, pick, 1.0)
    micro, accumulation = np.array(step), share / step
    rest = np.flatnonzero(~chosen)  # the largest divisor that fits where no micro-batch is given
    micro[rest], accumulation[rest] = micro_batches(share[rest], fit[rest])
    whole = whole & (~chosen | is_multiple(share, step))
    return micro, accumulation, share, fit, whole & _interleavable(pp, interleave, accumulation)


def _interleavable(pp: npt.NDArray[np.float64] | float, interleave: npt.NDArray[np.float64] | float, accumulation: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Megatron's interleaved schedule runs micro-batches in groups of ``pp``: it needs ``pp | m``."""
    plain = np.asarray(interleave) <= 1
    if plain.all():  # no interleaving (a search's first stage): nothing to divide
        return np.broadcast_to(plain, np.broadcast_shapes(plain.shape, np.shape(accumulation), np.shape(pp))).copy()
    runs: npt.NDArray[np.bool_] = plain | is_multiple(accumulation, pp)
    return runs
