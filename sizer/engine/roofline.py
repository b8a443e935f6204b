"""Step time of a training or inference run: the per-layer roofline, for many layouts at once.

For each configuration (a device, a count split into tensor × pipeline × data parallel groups,
a micro-batch, gradient accumulation, a ZeRO stage, a recomputation policy) and each layer: the
compute-bound time (FLOP at the unit's achieved rate), the memory-bound time (bytes at the
achieved bandwidth) and the launch-bound time (kernels x launch time); the largest of the three
(a roofline per layer, docs/references.md [roofline]). Then:

- tensor parallelism (Megatron-LM with sequence parallelism, [megatron], [korthikanti]) divides
  every layer's work by ``tp`` and adds, per transformer block and pass, the all-gathers and
  reduce-scatters of the block's activations on the link inside a node;
- pipeline parallelism (1F1B, [megatron]) gives each stage ``1/pp`` of the layers and a step of
  ``(m + (pp − 1)/v)`` stage passes for ``m`` micro-batches and ``v`` interleaved chunks, plus the
  point-to-point activation sends between stages (``v`` times as many when interleaved);
- context parallelism (ring attention, [ringattention]) splits every sequence over ``cp`` ranks:
  each rank does ``1/cp`` of every layer's token work and passes its keys and values around the
  ring of ``cp`` ranks in every attention layer (forward once, backward twice: K/V and their
  gradients), not overlapped (conservative);
- expert parallelism (a mixture of experts, [gshard], [deepspeed-moe]) gives each of ``ep`` ranks
  1/ep of the routed experts (their weights and fewer, larger expert GEMMs), waits for the busiest
  rank (a stated load imbalance), and adds per MoE block and pass a dispatch and a combine
  all-to-all on the link the ``tp x ep`` group spans; the experts' gradients are synchronised over
  the ``dp / ep`` replicas of each expert;
- data parallelism synchronises the gradients of ``P/(tp pp)`` parameters over ``dp × cp`` devices
  (ring, [patarasuk]; ZeRO-3 moves 1.5 x as much, [zero]);
- an optimizer update (memory-bound) and a fixed per-step overhead close the step.

Everything is in seconds, FLOP and bytes as numpy arrays: one row per configuration.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sizer.engine.constants import (
    EP_ALL_TO_ALLS_PER_BLOCK_PASS,
    EP_LOAD_IMBALANCE,
    EP_TOKEN_SORT_PASSES,
    FP32_STORAGE_BYTES,
    FULL_SHARDING_TRAFFIC,
    HOST_OPTIMIZER_BANDWIDTH,
    ONE_SHOT_ALLREDUCE_LATENCIES,
    OVERLAP_SHARE,
    SERVING_ALLREDUCES_PER_BLOCK,
    TP_COLLECTIVES_PER_BLOCK_PASS,
    zero2_traffic_rounds,
)
from sizer.engine.devices import DeviceTable
from sizer.engine.layers import LayerTable
from sizer.engine.step_inputs import TRAINING, Pass, Shape

# Forward + backward FLOP = O_b x forward: one constant, with its source, in the formula's module
from sizer.hardware.nodes import FALLBACK_LINK


@dataclass(frozen=True)
class Configs:
    """Configurations as parallel arrays (one entry each)."""

    device: npt.NDArray[np.int64]  # index into the DeviceTable
    count: npt.NDArray[np.float64]  # devices, tp x pp x dp
    micro_batch: npt.NDArray[np.float64]  # samples per data-parallel replica per forward/backward pass
    accumulation: npt.NDArray[np.float64]  # micro-batches per optimizer step (per replica)
    zero: npt.NDArray[np.int64]  # ZeRO stage 0-3 (Rajbhandari et al. 2020)
    tp: npt.NDArray[np.float64]
    pp: npt.NDArray[np.float64]
    recompute: npt.NDArray[np.int64]  # index into RECOMPUTE
    interleave: npt.NDArray[np.float64]  # virtual pipeline chunks per stage (1: plain 1F1B)
    cp: npt.NDArray[np.float64]  # context-parallel ranks each sequence is split over (1: none)
    ep: npt.NDArray[np.float64] | float = 1.0  # expert-parallel ranks (out of the data-parallel ones; 1: every expert everywhere)

    @property
    def dp(self) -> npt.NDArray[np.float64]:
        r"""Data-parallel replicas of each configuration.

        .. math::

            dp = n / (tp \cdot pp \cdot cp)

        Returns
        -------
        numpy.ndarray
            Replicas per configuration [1].
        """
        return self.count / (self.tp * self.pp * self.cp)

    @classmethod
    def of(cls, device: npt.ArrayLike, count: npt.ArrayLike, micro_batch: npt.ArrayLike, accumulation: npt.ArrayLike,
           zero: npt.ArrayLike, tp: npt.ArrayLike = 1, pp: npt.ArrayLike = 1, recompute: npt.ArrayLike = 0,
           interleave: npt.ArrayLike = 1, cp: npt.ArrayLike = 1, ep: npt.ArrayLike = 1) -> "Configs":
        """Configurations from scalars or arrays, broadcast against each other.

        Parameters
        ----------
        device : int or array
            Index into the DeviceTable [1].
        count : float or array
            Devices, tp x pp x cp x dp [1].
        micro_batch : float or array
            Samples per replica per forward/backward pass [sample].
        accumulation : float or array
            Micro-batches per optimizer step per replica [1].
        zero : int or array
            ZeRO stage 0-3 [1].
        tp, pp : float or array, default 1
            Tensor- and pipeline-parallel degrees [1].
        recompute : int or array, default 0
            Index into ``RECOMPUTE`` (none, selective, full) [1].
        interleave : float or array, default 1
            Virtual pipeline chunks per stage [1].
        cp : float or array, default 1
            Context-parallel ranks each sequence is split over [1].
        ep : float or array, default 1
            Expert-parallel ranks [1].

        Returns
        -------
        Configs
            One flat array per field, all of one length.

        References
        ----------
        [megatron], [zero], [korthikanti], [ringattention], [gshard]
        """
        types = (np.int64, float, float, float, np.int64, float, float, np.int64, float, float, float)
        arrays = np.broadcast_arrays(*(np.asarray(v, dtype=t) for v, t in zip(
            (device, count, micro_batch, accumulation, zero, tp, pp, recompute, interleave, cp, ep), types, strict=True)))
        return cls(*(np.ascontiguousarray(a).ravel() for a in arrays))


@dataclass(frozen=True)
class StepParts:
    """Expected seconds per step and its parts, per configuration."""

    step: npt.NDArray[np.float64]
    kernels: npt.NDArray[np.float64]  # every layer of the stage, all micro-batches, with the pipeline bubble
    compute: npt.NDArray[np.float64]  # the part of ``kernels`` in compute-bound layers
    memory: npt.NDArray[np.float64]  # ... in memory-bound layers
    launch: npt.NDArray[np.float64]  # ... in launch-bound layers
    bubble: npt.NDArray[np.float64]  # the pipeline's idle share of ``kernels``
    optimizer: npt.NDArray[np.float64]
    overhead: npt.NDArray[np.float64]
    tensor_parallel: npt.NDArray[np.float64]  # TP collectives (on the critical path)
    pipeline: npt.NDArray[np.float64]  # point-to-point sends between stages
    context_parallel: npt.NDArray[np.float64]  # ring attention's K/V exchange (on the critical path)
    data_parallel: npt.NDArray[np.float64]  # gradient synchronisation not hidden behind compute
    physical_limit: npt.NDArray[np.float64]  # model FLOP of the step, each unit's at its own datasheet peak, over all devices
    model_flops: npt.NDArray[np.float64]  # per device: the FLOP MFU counts (no recomputation)
    hardware_flops: npt.NDArray[np.float64]  # per device: with recomputation (HFU)
    bound: npt.NDArray[np.int64]  # index into BOUNDS
    layer_seconds: npt.NDArray[np.float64] | None  # [config, layer row] per micro-batch, when asked for
    layer_bound: npt.NDArray[np.int64] | None  # [config, layer row]: 0 compute, 1 memory, 2 launch
    expert_parallel: npt.NDArray[np.float64] | float = 0.0  # EP all-to-alls (dispatch and combine, on the critical path)

    @property
    def communication(self) -> npt.NDArray[np.float64]:
        """Communication on the critical path: tensor-parallel, pipeline, expert-parallel and data-parallel time.

        Returns
        -------
        numpy.ndarray
            Seconds per step per configuration [s].
        """
        return self.tensor_parallel + self.pipeline + self.context_parallel + self.data_parallel + self.expert_parallel


def optimizer_bytes_per_param(weight_bytes: npt.NDArray[np.float64], master_bytes: npt.NDArray[np.float64], state_bytes: float) -> npt.NDArray[np.float64]:
    r"""Bytes the optimizer update moves per parameter.

    Read gradient and weights, write weights, read and write master weights and every state:

    .. math::

        b = 3 b_w + 2 b_m + 2 K

    Parameters
    ----------
    weight_bytes : numpy.ndarray
        Bytes per stored weight (and gradient) b_w [B].
    master_bytes : numpy.ndarray
        Bytes per FP32 master weight b_m [B] (0 without mixed precision).
    state_bytes : float
        Optimizer state per parameter K [B] (Adam 8, momentum 4, SGD 0; 8-bit Adam about 2).

    Returns
    -------
    numpy.ndarray
        Bytes moved per parameter per step [B].

    References
    ----------
    [spec-3.8], [micikevicius]
    """
    return 3 * weight_bytes + 2 * master_bytes + 2 * state_bytes


def ring_allreduce_seconds(message_bytes: npt.NDArray[np.float64], count: npt.NDArray[np.float64], bandwidth: npt.NDArray[np.float64],
                           latency: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    r"""Time of a ring all-reduce.

    .. math::

        t = 2 \frac{n - 1}{n} \frac{B}{\beta} + 2 (n - 1) \alpha

    Parameters
    ----------
    message_bytes : numpy.ndarray
        Bytes to reduce B [B].
    count : numpy.ndarray
        Devices in the ring n [1].
    bandwidth : numpy.ndarray
        Link bandwidth per direction β [B/s].
    latency : numpy.ndarray
        Latency per step α [s].

    Returns
    -------
    numpy.ndarray
        Seconds [s]; 0 for a single device.

    References
    ----------
    [patarasuk], [spec-3.3]
    """
    steps = np.maximum(count - 1, 0)
    return np.where(count > 1, 2 * steps / np.maximum(count, 1) * message_bytes / bandwidth + 2 * steps * latency, 0.0)


def group_link(table: DeviceTable, d: npt.NDArray[np.int64], span: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Bandwidth and latency for a group of devices that spans ``span`` consecutive devices.

    The link inside a node while the group fits in one (the NVLink bridge where the group is no larger
    than the cards one bridge joins), else the slower of that link and the network between nodes.

    Parameters
    ----------
    table : DeviceTable
        Device rates and links.
    d : numpy.ndarray
        Device index of each configuration [1].
    span : numpy.ndarray
        Consecutive devices the group spans [1].

    Returns
    -------
    bandwidth : numpy.ndarray
        Per direction [B/s].
    latency : numpy.ndarray
        Per message [s].

    References
    ----------
    [dgx-h100], [pcie], [ethernet]
    """
    return DeviceLinks.of(table, d).group(span)


@dataclass(frozen=True)
class DeviceLinks:
    """The links of each configuration's device (:func:`group_link`), taken from the table once for the several
    groups a step has (tensor, pipeline, context and data parallel)."""

    node: npt.NDArray[np.float64]  # devices per node [1]
    bridge_devices: npt.NDArray[np.float64]  # devices one NVLink bridge joins [1]
    link: npt.NDArray[np.float64]  # inside a node [B/s]
    bridged: npt.NDArray[np.float64]  # the faster of that and the bridge [B/s]
    across: npt.NDArray[np.float64]  # the slower of that and the network between nodes [B/s]
    link_latency: npt.NDArray[np.float64]  # [s]
    network_latency: npt.NDArray[np.float64]  # [s]

    @classmethod
    def of(cls, table: DeviceTable, d: npt.NDArray[np.int64]) -> DeviceLinks:
        """The links of devices ``d`` of ``table``.

        Parameters
        ----------
        table : DeviceTable
            Device links.
        d : numpy.ndarray
            Device index of each configuration [1].

        Returns
        -------
        DeviceLinks
            Per configuration.
        """
        return cls(node=table.devices_per_node[d], bridge_devices=table.bridge_devices[d], link=table.link[d],
                   bridged=np.maximum(table.link, table.bridge)[d], across=np.minimum(table.link, table.network)[d],
                   link_latency=table.link_latency[d], network_latency=table.network_latency[d])

    def group(self, span: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Bandwidth and latency of a group of ``span`` consecutive devices (:func:`group_link`).

        Parameters
        ----------
        span : numpy.ndarray
            Consecutive devices the group spans [1].

        Returns
        -------
        bandwidth : numpy.ndarray
            Per direction [B/s].
        latency : numpy.ndarray
            Per message [s].
        """
        inside = span <= self.node
        # a group within the cards one NVLink bridge joins (H100 NVL pairs) talks over the bridge, not PCIe
        link = np.where(span <= self.bridge_devices, self.bridged, self.link)
        return np.where(inside, link, self.across), np.where(inside, self.link_latency, self.network_latency)


# An NVLink domain larger than an 8-GPU node (GB200/GB300 NVL72 racks) reduces a data-parallel group hierarchically:
# the ranks inside one domain reduce-scatter over NVLink first, and only each rank's shard crosses the network
# (NCCL's NVLS tree and CollNet; NVIDIA's MLPerf v5.1 Llama 3.1 8B runs on 512 GB200/GB300 step in 0.089 s with
# 64 data-parallel replicas, where one flat ring over the network alone takes 0.29 s:
# ../shared/data/modern-training-runs.csv). 8-GPU nodes keep the flat ring the defaults were fitted with.
RACK_SCALE_DOMAIN = 8


def rack_allreduce_seconds(table: DeviceTable, d: npt.NDArray[np.int64], tp: npt.NDArray[np.float64],
                           message_bytes: npt.NDArray[np.float64], count: npt.NDArray[np.float64],
                           bandwidth: npt.NDArray[np.float64], latency: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    r"""A data-parallel all-reduce: a flat ring, or inside a rack-scale NVLink domain first.

    Where the group of ``count`` ranks (tensor rank stride ``tp``) spans more than one domain of more
    than :data:`RACK_SCALE_DOMAIN` devices, its :math:`l = \min(n, D/t)` ranks inside a domain all-reduce
    over NVLink and the :math:`n/l` domains all-reduce a :math:`1/l` shard over the network:

    .. math::

        t = t_{ring}(B, l, \beta_{NVLink}) + t_{ring}(B / l, n / l, \beta)

    Parameters
    ----------
    table : DeviceTable
        Device rates and links.
    d : numpy.ndarray
        Device index of each configuration [1].
    tp : numpy.ndarray
        Tensor-parallel size (the stride of the group's ranks) [1].
    message_bytes : numpy.ndarray
        Bytes to reduce [B].
    count : numpy.ndarray
        Ranks in the group [1].
    bandwidth, latency : numpy.ndarray
        The group's link as :func:`group_link` gives it [B/s], [s].

    Returns
    -------
    numpy.ndarray
        Seconds [s].

    References
    ----------
    [patarasuk]
    """
    flat = ring_allreduce_seconds(message_bytes, count, bandwidth, latency)
    domain = table.devices_per_node[d]
    local = np.clip(np.floor(domain / np.maximum(tp, 1.0)), 1.0, np.maximum(count, 1.0))
    spans = (domain > RACK_SCALE_DOMAIN) & (count * tp > domain) & (local > 1)
    if not np.any(spans):
        return flat
    inside = ring_allreduce_seconds(message_bytes, local, table.link[d], table.link_latency[d])
    across = ring_allreduce_seconds(message_bytes / local, count / local, bandwidth, latency)
    return np.where(spans, inside + across, flat)


def heaviest_stages(shape: Shape | None, pp: npt.ArrayLike) -> npt.NDArray[np.float64]:
    r"""The pipeline stages as its heaviest stage sees them: ``blocks / ceil(blocks / pp)``.

    Where ``pp`` does not divide the blocks (Llama 3.1 405B's 126 blocks on 16 stages, DeepSeek-V3's
    61), the stages hold :math:`\lceil L/p \rceil` or :math:`\lfloor L/p \rfloor` blocks and the
    pipeline runs at its heaviest stage's pace, with that stage's states and activations: every
    per-stage figure divides by :math:`L / \lceil L/p \rceil` instead of :math:`p` (equal where
    :math:`p \mid L`).

    Parameters
    ----------
    shape : Shape or None
        The blocks; None: no transformer (``pp`` returned).
    pp : array_like
        Pipeline stages [1].

    Returns
    -------
    numpy.ndarray
        Stages of equal share [1], at most ``pp``.

    Examples
    --------
    >>> float(heaviest_stages(Shape(blocks=126, hidden=1, tokens_per_sample=1), 16))  # 8 blocks on the heaviest
    15.75

    References
    ----------
    [megatron]
    """
    pp = np.asarray(pp, dtype=float)
    if shape is None:
        return pp
    blocks = float(shape.blocks)
    stages: npt.NDArray[np.float64] = blocks / np.ceil(blocks / np.maximum(pp, 1.0))
    return stages


def is_multiple(x: npt.ArrayLike, y: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether ``x`` is a whole multiple of ``y``: ``np.mod(x, y) == 0``, element by element, the same answer.

    Layout counts are whole numbers held as floats: for those a quotient that rounds to a whole number says it
    exactly, several times cheaper than the floating-point remainder (a search asks it of some 100,000 layouts
    several times). Where ``y`` is not whole (or 0, or either is beyond 2**53) the remainder answers.

    Parameters
    ----------
    x, y : array_like
        Dividend and divisor [1], broadcast together.

    Returns
    -------
    numpy.ndarray of bool
        True where ``x = k y`` for a whole ``k`` (never for NaN or infinite ``x``).

    Examples
    --------
    >>> is_multiple(np.asarray([12.0, 12.5, 7.0, np.nan]), np.asarray([4.0, 4.0, 2.0, 1.0])).tolist()
    [True, False, False, False]
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    whole = x == np.round(x)  # a whole multiple of a whole y is whole
    small = np.abs(x) < WHOLE_LIMIT
    if np.any(whole & ~small) or not np.all((y == np.round(y)) & (np.abs(y) < WHOLE_LIMIT) & (y != 0)):
        return np.asarray(np.mod(x, y) == 0)
    # whole x and y below 2**53: y | x exactly where x / y rounds to a whole number (where it does not divide,
    # x / y lies at least 1/|y| from every whole number, farther than the division's rounding, |x / y| 2**-53)
    with np.errstate(invalid="ignore"):
        quotient = x / y
    divides: npt.NDArray[np.bool_] = whole & small & (quotient == np.round(quotient))
    return divides


WHOLE_LIMIT = 2.0 ** 53  # every whole number below is a float exactly


def expert_layout(tp: npt.ArrayLike, dp: npt.ArrayLike, ep: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(expert tensor-parallel size, replicas of each expert) of ``ep`` expert-parallel ranks.

    Megatron-Core's default keeps the experts tensor-parallel like the rest (ETP = TP) and carves the
    EP group out of the data-parallel ranks; where ``ep`` does not divide ``dp`` the EP group spans
    the tensor ranks too and the experts are not tensor-split (ETP = 1: the recipes of
    Megatron-Bridge for Qwen3-235B on H100). Each expert then has ``tp dp / (ep ETP)`` replicas.

    .. math::

        ETP = \\begin{cases} t & e \\mid d \\\\ 1 & \\text{otherwise} \\end{cases}, \\qquad
        r = \\frac{t \\, d}{e \\, ETP}

    Parameters
    ----------
    tp : array_like
        Tensor-parallel ranks :math:`t` [1].
    dp : array_like
        Data-parallel ranks :math:`d` [1].
    ep : array_like
        Expert-parallel ranks :math:`e` [1].

    Returns
    -------
    tuple of numpy.ndarray
        The expert tensor-parallel size [1] and the replicas of each expert [1].

    Examples
    --------
    >>> [float(v[0]) for v in expert_layout(np.asarray([2.0]), np.asarray([16.0]), np.asarray([32.0]))]
    [1.0, 1.0]

    References
    ----------
    [deepspeed-moe] Rajbhandari et al. 2022 §5.
    """
    tp, dp, ep = (np.asarray(v, dtype=float) for v in (tp, dp, ep))
    etp = np.where(is_multiple(dp, ep), tp, 1.0)
    return etp, tp * dp / (ep * etp)


def all_to_all_seconds(table: DeviceTable, d: npt.NDArray[np.int64], c: Configs, shape: Shape, passes: float,
                       ep: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    r"""Seconds per step of expert parallelism's all-to-alls, and the token sorts around them, on one rank.

    Per MoE block of the stage and micro-batch, :data:`EP_ALL_TO_ALLS_PER_BLOCK_PASS` all-to-alls per
    pass (dispatch and combine), each sending the :math:`(e - 1)/e` of the rank's routed token slots
    that leave it: to the :math:`e_n - 1` peers in its node (scale-up domain) over the scale-up link,
    to the other :math:`e - e_n` over the network, both at once (separate engines); and
    :data:`EP_TOKEN_SORT_PASSES` passes of the received tokens through device memory (sorted by local
    expert after the dispatch, back before the combine) at the achieved bandwidth :math:`\beta`:

    .. math::

        t = \frac{L_{moe}}{p} \cdot m \cdot \left[n_{a2a}
            \left(\max\left(\frac{e_n - 1}{e} \frac{M}{B_{node}}, \frac{e - e_n}{e} \frac{M}{B_{net}}\right)
            + (e - 1) \lambda\right) + n_{sort} \frac{M}{\beta}\right], \qquad M = \frac{b \, s \, k \, h \, w}{t_p}

    with ``b`` sequences per micro-batch, ``s`` tokens each, ``k`` expert slots per token, ``h`` the
    hidden size, ``w`` bytes per value, ``t_p`` tensor ranks (sequence parallel: each holds 1/t_p of
    the tokens), ``m`` micro-batches, :math:`e_n` the EP ranks in one node (the EP group's ranks are
    ``ETP`` apart, :func:`expert_layout`), :math:`\lambda` the latency of the slowest link used.

    Parameters
    ----------
    table : DeviceTable
        Devices, their links and storage scale.
    d : numpy.ndarray
        Device index per configuration [1].
    c : Configs
        The layouts.
    shape : Shape
        Blocks, MoE blocks, hidden size [1], tokens per sequence [1], expert slots per token [1].
    passes : float
        Passes per micro-batch with all-to-alls (2 in training, 1 in inference) [1].
    ep : numpy.ndarray
        Expert-parallel ranks per configuration [1].

    Returns
    -------
    numpy.ndarray
        Seconds per step [s].

    References
    ----------
    [gshard] Lepikhin et al. 2021 §2.2; [deepspeed-moe] Rajbhandari et al. 2022; [megatron-core-moe].
    """
    if not shape.moe_blocks:
        return np.zeros(len(d))
    slots = shape.tokens_per_sample * shape.routed_per_token * shape.hidden * FP32_STORAGE_BYTES * table.storage_scale[d]
    message = c.micro_batch * slots / c.tp
    etp, _ = expert_layout(c.tp, c.dp, ep)
    local = np.clip(np.floor(table.devices_per_node[d] / etp), 1.0, ep)  # EP ranks in one node
    link, network = table.link[d], table.network[d]
    inside = (local - 1) / np.maximum(ep, 1.0) * message / link
    outside = (ep - local) / np.maximum(ep, 1.0) * message / np.minimum(link, network)
    latency = np.where(local < ep, table.network_latency[d], table.link_latency[d])
    one = np.where(ep > 1, np.maximum(inside, outside) + (ep - 1) * latency, 0.0)
    sorts = np.where(ep > 1, EP_TOKEN_SORT_PASSES * message / table.bandwidth[d], 0.0)  # in device memory
    return passes * (EP_ALL_TO_ALLS_PER_BLOCK_PASS * one + sorts) * shape.moe_blocks / heaviest_stages(shape, c.pp) \
        * c.accumulation


def _layer_groups(device: npt.NDArray[np.int64], micro: npt.NDArray[np.float64], tp: npt.NDArray[np.float64], cp: npt.NDArray[np.float64], ep: npt.NDArray[np.float64], recompute: npt.NDArray[np.int64], weight_bytes: npt.NDArray[np.float64] | None,
                  extra_bytes: npt.NDArray[np.float64] | None) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """``(first, inverse)``: one representative row per distinct per-layer input and each row's group, or
    None where grouping would not pay (few rows, or per-configuration extra bytes)."""
    rows = len(device)
    if rows < 256 or (extra_bytes is not None and np.ndim(extra_bytes) > 1):
        return None
    columns = [np.broadcast_to(np.asarray(col, dtype=float), (rows,)) for col in (device, micro, tp, cp, ep, recompute)]
    if weight_bytes is not None:
        columns.append(np.broadcast_to(np.asarray(weight_bytes, dtype=float), (rows,)))
    key = _whole_key(columns)
    change = np.zeros(rows, dtype=bool)
    change[0] = True
    if key is not None:  # one integer per row, in the order lexsort gives: one sort, one comparison
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        change[1:] = ordered[1:] != ordered[:-1]
    else:
        order = np.lexsort(columns)
        for col in columns:
            ordered = col[order]
            change[1:] |= ordered[1:] != ordered[:-1]  # NaN never equals: a NaN row is its own group
    group_of_sorted = np.cumsum(change) - 1
    if group_of_sorted[-1] + 1 > rows // 2:
        return None
    inverse = np.empty(rows, dtype=np.int64)
    inverse[order] = group_of_sorted
    return order[change], inverse


def _whole_key(columns: list[npt.NDArray[np.float64]]) -> npt.NDArray[np.int64] | None:
    """One integer per row that orders the rows as ``np.lexsort(columns)`` does (the last column first) and is
    equal exactly where every column is: the columns' values as digits of a mixed radix, where every value is a
    whole number from 0 and their product fits in 63 bits; else None."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    radix = 1
    for col in columns:  # the first column the least significant digit
        top = float(col.max()) if len(col) else 0.0
        if not (np.isfinite(top) and col.min() >= 0 and np.all(col == np.round(col))) or radix * (top + 1) >= 2 ** 62:
            return None
        key += col.astype(np.int64) * radix
        radix *= int(top) + 1
    return key


@dataclass(frozen=True)
class _LayerSums:
    """Per configuration, one micro-batch over every layer: seconds [s], its compute- and memory-bound
    parts [s], the FLOP recomputation adds per sample [FLOP]; the per-layer seconds and bounds where kept."""

    seconds: npt.NDArray[np.float64]
    compute: npt.NDArray[np.float64]
    memory: npt.NDArray[np.float64]
    recomputed_flops: npt.NDArray[np.float64]
    per_layer: npt.NDArray[np.float64] | None
    is_compute: npt.NDArray[np.bool_] | None
    is_memory: npt.NDArray[np.bool_] | None

    def spread(self, inverse: npt.NDArray[np.int64]) -> _LayerSums:
        """The sums of each configuration's group (:func:`_layer_groups`) back on every configuration."""
        return _LayerSums(self.seconds[inverse], self.compute[inverse], self.memory[inverse],
                          self.recomputed_flops[inverse],
                          None if self.per_layer is None else self.per_layer[inverse],
                          None if self.is_compute is None else self.is_compute[inverse],
                          None if self.is_memory is None else self.is_memory[inverse])


def _layer_sums(layers: LayerTable, table: DeviceTable, kind_in: Pass, kind: Pass, d: npt.NDArray[np.int64], micro_batch: npt.NDArray[np.float64],
                tp: npt.NDArray[np.float64], cp: npt.NDArray[np.float64], ep: npt.NDArray[np.float64], recompute: npt.NDArray[np.int64], weight_bytes: npt.NDArray[np.float64] | None,
                extra_bytes: npt.NDArray[np.float64] | None, keep_layers: bool) -> _LayerSums:
    """Per configuration: one micro-batch's seconds over every layer (max of compute, memory and launch
    per layer), its compute- and memory-bound shares, and the FLOP recomputation adds per sample."""
    micro = micro_batch[:, None]
    ranks = (tp * cp)[:, None]  # every layer's token work divided over tensor and context ranks
    scale = table.storage_scale[d][:, None]
    stored = (table.storage_scale[d] * FP32_STORAGE_BYTES if weight_bytes is None else weight_bytes)[:, None]
    extra = recompute_factors(layers, recompute, kind_in)
    # routed experts over ep ranks: each rank runs 1/ep of the experts (fewer, larger GEMMs: ep x the
    # tokens per expert), holds 1/ep of their weights, and waits for the busiest rank's tokens
    ep = ep[:, None]
    ep_split: npt.NDArray[np.float64] | float
    imbalance: npt.NDArray[np.float64] | None
    if layers.expert_rows.any():
        expert = layers.expert_rows[None, :]
        ep_split = np.where(expert, ep, 1.0)
        imbalance = np.where(expert & (ep > 1), EP_LOAD_IMBALANCE, 1.0)
        kernels_here = np.maximum(layers.kernels / ep_split, 1.0)
        launched = np.where(expert, kernels_here, layers.kernels)
    else:  # a dense model: no per-configuration expert split (the same figures, fewer array passes)
        ep_split, imbalance = 1.0, None
        kernels_here, launched = np.maximum(layers.kernels, 1.0), layers.kernels
    # the one place the per-layer matrix rate is set: the unit's achieved rate, times how well a
    # kernel of this layer's size (FLOP per launch per tensor and context rank) uses it
    per_kernel = layers.forward_flops * micro / (kernels_here * ranks)
    rates = table.rates[d][:, layers.unit] * matrix_size_factor(per_kernel, table.matrix_half[d][:, layers.unit])
    compute = (kind.flops + extra) * layers.forward_flops * micro
    activation_moved = (kind.activation_bytes + extra) * layers.bytes * micro * scale
    if imbalance is not None:  # each rank waits for the busiest one's tokens
        compute, activation_moved = compute * imbalance, activation_moved * imbalance
    compute = compute / rates / ranks
    if extra_bytes is not None:
        activation_moved = activation_moved + np.broadcast_to(np.asarray(extra_bytes, dtype=float),
                                                              activation_moved.shape) * micro
    # every context rank reads its tensor rank's whole weights; tokens (activations) are split over both
    moved = activation_moved / ranks + kind.weight_reads * layers.params * stored / (tp[:, None] * ep_split)
    memory = moved / table.bandwidth[d][:, None]
    launch = ((kind.kernels + extra) * launched) * table.launch[d][:, None]
    per_layer = np.maximum(np.maximum(compute, memory), launch)
    is_compute = (per_layer == compute)
    is_memory = ~is_compute & (per_layer == memory)
    many = np.asarray(layers.multiplicity, dtype=float)  # layer sums as products with the multiplicities (no temporaries)
    return _LayerSums(seconds=per_layer @ many, compute=np.where(is_compute, per_layer, 0.0) @ many,
                      memory=np.where(is_memory, per_layer, 0.0) @ many,
                      recomputed_flops=extra @ (layers.forward_flops * layers.multiplicity),
                      per_layer=per_layer if keep_layers else None, is_compute=is_compute if keep_layers else None,
                      is_memory=is_memory if keep_layers else None)


def matrix_size_factor(flops_per_kernel: npt.NDArray[np.float64], half: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    r"""Fraction of a unit's efficiency ceiling that a kernel of a given size reaches.

    A saturating curve of the GEMM size (a kernel with :math:`x_{1/2}` FLOP runs at half the
    ceiling): large GEMMs fill every multiprocessor for many waves, small ones leave the tail wave
    and the prologue/epilogue exposed. The form is Hockney's :math:`r_\infty, n_{1/2}` model of
    vector pipelines (Hockney & Jesshope 1988) applied to a kernel's work; ``half`` is fitted on
    published LLM runs (benchmarks/llm_training.py, benchmarks/ACCURACY.md).

    .. math::

        f = \frac{x}{x + x_{1/2}}, \qquad f = 1 \text{ where } x_{1/2} = 0

    Parameters
    ----------
    flops_per_kernel : numpy.ndarray
        Work of one kernel launch x [FLOP].
    half : numpy.ndarray
        Kernel size that reaches half the ceiling, x_1/2 [FLOP]; 0 for no size dependence.

    Returns
    -------
    numpy.ndarray
        The fraction f [1], in (0, 1].

    References
    ----------
    [megatron]

    Examples
    --------
    >>> float(matrix_size_factor(np.asarray(4e9), np.asarray(4e9)))
    0.5
    """
    x = np.asarray(flops_per_kernel, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(half > 0, x / (x + half), 1.0)


def recompute_factors(layers: LayerTable, recompute: npt.NDArray[np.int64], kind: Pass) -> npt.NDArray[np.float64]:
    """Extra forward passes per layer that recomputation adds.

    Full recomputation reruns every layer's forward pass, selective only the attention layers'.

    Parameters
    ----------
    layers : LayerTable
        The workload's layers.
    recompute : numpy.ndarray
        Index into ``RECOMPUTE`` per configuration [1] (0 none, 1 selective, 2 full).
    kind : Pass
        The pass; without a backward pass nothing is recomputed.

    Returns
    -------
    numpy.ndarray
        Extra forward passes [1], shape (configuration, layer row).

    References
    ----------
    [korthikanti]
    """
    if not kind.backward:
        return np.zeros((len(recompute), len(layers.unit)))
    attention = np.asarray([k == "attention" for k in layers.kinds], dtype=float)
    return np.where(recompute[:, None] == 2, 1.0, np.where(recompute[:, None] == 1, attention[None, :], 0.0))


def layer_pass(layers: LayerTable, kind: Pass) -> Pass:
    """A pass's factors per layer row.

    In a pass with a backward pass, the trained rows of a table with a frozen part (LoRA adapters
    over a frozen base) take the training pass's factors (``kind.trained``, TRAINING by default);
    the other rows the pass's own.

    Parameters
    ----------
    layers : LayerTable
        The workload's layers.
    kind : Pass
        TRAINING, FROZEN, INFERENCE or one of :func:`training_passes`.

    Returns
    -------
    Pass
        The same pass with ``flops``, ``activation_bytes``, ``kernels`` and ``weight_reads`` as
        arrays over layer rows [multiples of the forward pass].
    """
    rows = np.ones(len(layers.unit))
    trained_rows = layers.trained
    trained = kind.trained or TRAINING

    def pick(name: str) -> npt.NDArray[np.float64]:
        """The factor ``name`` per layer row: the trained pass's on trained rows, the pass's own elsewhere."""
        if trained_rows is None or not kind.backward:
            factor: npt.NDArray[np.float64] = getattr(kind, name) * rows
            return factor
        per_row: npt.NDArray[np.float64] = np.where(trained_rows, getattr(trained, name), getattr(kind, name))
        return per_row

    return Pass(kind.name, pick("flops"), pick("activation_bytes"), pick("kernels"), pick("weight_reads"),
                kind.backward, kind.updates)


def model_parallel_seconds(table: DeviceTable, c: Configs, shape: Shape | None,
                           backward: bool, links: DeviceLinks | None = None) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    r"""Seconds per step of the tensor-, pipeline- and context-parallel traffic, per configuration.

    Parameters
    ----------
    table : DeviceTable
        Links and storage of the devices.
    c : Configs
        The layouts (``tp``, ``pp``, ``cp``, ``interleave``, micro-batch and accumulation).
    shape : Shape or None
        Blocks, width, tokens per sample and key/value width; None: no model parallelism.
    backward : bool
        Whether a backward pass runs (it doubles the collectives).
    links : DeviceLinks, optional
        The configurations' device links, where the caller has them (:meth:`DeviceLinks.of`).

    Returns
    -------
    tuple of numpy.ndarray
        Tensor-parallel, pipeline and context-parallel seconds per step [s].

    Notes
    -----
    With :math:`A = (s / cp)\, h\, b` bytes of a micro-batch's block activations on a rank:

    .. math::

        T_{tp} = 4 \cdot n_{pass} \cdot \frac{t-1}{t} \frac{A}{B_{tp}} \cdot \frac{L}{p} \cdot m, \quad
        T_{pp} = n_{pass} \cdot \frac{A / t}{B_{pp}} \cdot (m + p - 1) \cdot v, \quad
        T_{cp} = 3 (cp - 1) \frac{2 (s / cp)\, h_{kv}\, b}{t\, B_{cp}} \cdot \frac{L}{p} \cdot m

    Serving (no backward pass) has no sequence parallelism: two all-reduces per block,
    :math:`T_{tp} = 2 \left(2 \frac{t-1}{t} \frac{A}{B_{tp}} + h\, \alpha\right) \frac{L}{p}` with
    :math:`h = 2` link latencies for a one-shot all-reduce inside a node and :math:`2 (t - 1)` for a ring
    across nodes (Korthikanti et al. 2022 §4.2.2 for TP with sequence parallelism; Narayanan et al. 2021 for
    the interleaved sends; ring attention passes each rank's K/V :math:`cp - 1` times forward and
    K/V plus their gradients backward, Liu et al. 2023).

    References
    ----------
    [korthikanti], [megatron], [ringattention]
    """
    zeros = np.zeros(len(c.device))
    if shape is None:
        return zeros, zeros, zeros
    d = c.device
    bytes_per_value = FP32_STORAGE_BYTES * table.storage_scale[d]
    tokens = shape.tokens_per_sample / c.cp * c.micro_batch
    activation = tokens * shape.hidden * bytes_per_value
    passes = 2.0 if backward else 1.0
    links = links if links is not None else DeviceLinks.of(table, d)
    tp_bandwidth, tp_latency = links.group(c.tp)
    stages = heaviest_stages(shape, c.pp)  # the heaviest stage's share of the blocks (uneven splits)
    if backward:
        one = np.where(c.tp > 1, (c.tp - 1) / c.tp * activation / tp_bandwidth + (c.tp - 1) * tp_latency, 0.0)
        tensor_parallel = TP_COLLECTIVES_PER_BLOCK_PASS * passes * one * shape.blocks / stages * c.accumulation
    else:  # serving: two all-reduces per block, one-shot inside a node, a ring across nodes
        hops = np.where(c.tp <= table.devices_per_node[d], ONE_SHOT_ALLREDUCE_LATENCIES, 2.0 * (c.tp - 1))
        reduce = np.where(c.tp > 1, 2.0 * (c.tp - 1) / c.tp * activation / tp_bandwidth + hops * tp_latency, 0.0)
        tensor_parallel = SERVING_ALLREDUCES_PER_BLOCK * reduce * shape.blocks / stages * c.accumulation
    pp_bandwidth, pp_latency = links.group(c.tp * c.cp * c.pp)
    send = np.where(c.pp > 1, activation / c.tp / pp_bandwidth + pp_latency, 0.0)
    pipeline = passes * send * (c.accumulation + c.pp - 1) * c.interleave
    cp_bandwidth, cp_latency = links.group(c.tp * c.cp)
    kv = 2.0 * tokens * (shape.kv_width or shape.hidden) * bytes_per_value / c.tp  # K and V of this rank's heads
    ring = np.where(c.cp > 1, (c.cp - 1) * (kv / cp_bandwidth + cp_latency), 0.0)
    blocks = shape.attention_blocks or shape.blocks
    context_parallel = (3.0 if backward else 1.0) * ring * blocks / stages * c.accumulation
    return tensor_parallel, pipeline, context_parallel


def model_flops_per_sample(layers: LayerTable, kind: Pass) -> float:
    r"""The model FLOP of one sample's pass over every layer (no recomputation): what MFU counts.

    .. math::

        F = \sum_i o_i \, F_{\text{fwd}, i} \, m_i

    Parameters
    ----------
    layers : LayerTable
        Forward FLOP per sample per row [FLOP] and multiplicities [1].
    kind : Pass
        The pass; ``o_i`` is its FLOP multiple for row ``i`` (:func:`layer_pass`) [1].

    Returns
    -------
    float
        FLOP per sample [FLOP].

    References
    ----------
    [seed-004]
    """
    return _pass_flops(layers, layer_pass(layers, kind))


def _pass_flops(layers: LayerTable, per_row: Pass) -> float:
    return float(per_row.flops * layers.forward_flops @ layers.multiplicity)


def _unit_flops(layers: LayerTable, per_row: Pass) -> npt.NDArray[np.float64]:
    """The pass's model FLOP per sample on each unit (matrix, conv, vector, attention: the columns of ``rates``)."""
    per_unit = np.zeros(4)
    np.add.at(per_unit, layers.unit, per_row.flops * layers.forward_flops * layers.multiplicity)
    return per_unit


def step_seconds(layers: LayerTable, table: DeviceTable, configs: Configs, *, optimizer_state_bytes: float,
                 shape: Shape | None = None, overlap_allreduce: bool = False, keep_layers: bool = False,
                 overlap_all_to_all: bool = False, kind: Pass = TRAINING, weight_bytes: npt.NDArray[np.float64] | None = None, offload: bool = False,
                 shard_group: npt.NDArray[np.float64] | None = None,
                 trainable_params: float | None = None, extra_bytes: npt.NDArray[np.float64] | None = None) -> StepParts:
    r"""Expected seconds per step for every configuration: the per-layer roofline plus parallelism.

    Per layer the largest of compute-, memory- and launch-bound time, the token work split over
    ``tp x cp`` ranks; stages of ``1/pp`` of the
    layers for ``m + (pp - 1)/v`` micro-batch slots (1F1B with v interleaved chunks); tensor-parallel
    collectives, pipeline sends, ring attention's K/V exchange (:func:`model_parallel_seconds`),
    the gradient synchronisation over ``dp x cp`` (ring all-reduce, 1.5 x for ZeRO-3),
    the optimizer update and the per-step overhead:

    .. math::

        t_{layer} = \max\left(\frac{F}{tp \, cp \, R \, f(x)}, \frac{B_{act} / cp + B_{w}}{tp \, \beta}, k \, t_{launch}\right),
        \qquad
        t_{step} = \left(m + \frac{pp - 1}{v}\right) \sum_{stage} t_{layer} + t_{tp} + t_{pp} + t_{cp} + t_{dp} + t_{opt} + t_0

    Parameters
    ----------
    layers : LayerTable
        The workload's layers: forward FLOP, activation bytes, parameters, kernels per sample.
    table : DeviceTable
        Achieved rates [FLOP/s], bandwidths [B/s], launch times [s] and links of the devices.
    configs : Configs
        The configurations to evaluate.
    optimizer_state_bytes : float
        Optimizer state per parameter [B] (:func:`~sizer.engine.constants.optimizer_state_bytes`).
    shape : Shape, optional
        Transformer blocks, hidden size and tokens per sample, for tensor and pipeline
        communication; None for a profiled workload.
    overlap_allreduce : bool, default False
        Whether the gradient all-reduce overlaps the backward pass.
    keep_layers : bool, default False
        Keep per-layer seconds and bounds in the result.
    overlap_all_to_all : bool, default False
        Whether expert parallelism's all-to-alls overlap another micro-batch's computation (DeepSeek-V3's
        DualPipe, Megatron-Core's overlapped dispatch): hidden behind :data:`OVERLAP_SHARE` of the kernels
        outside the bubble.
    kind : Pass, default TRAINING
        Training, frozen-weight training or inference.
    weight_bytes : numpy.ndarray, optional
        Bytes per stored weight per configuration [B], when not at the training precision
        (quantised inference, QLoRA's 4-bit base).
    offload : bool, default False
        Optimizer step on the host (ZeRO-Offload).
    shard_group : numpy.ndarray, optional
        Devices per ZeRO-3 group under hybrid sharding [1].
    trainable_params : float, optional
        Parameters the optimizer updates and the devices synchronise [1] (all by default).
    extra_bytes : numpy.ndarray, optional
        Memory traffic beyond activations and weights [B per sample], per layer row or per
        configuration x layer row, such as the KV cache a decode step reads.

    Returns
    -------
    StepParts
        Step time and its parts [s], the physical limit [s], model and hardware FLOP per device
        [FLOP] and the bound of each configuration.

    References
    ----------
    [roofline], [megatron], [korthikanti], [ringattention], [patarasuk], [zero], [zero-offload], [fsdp], [spec-3.3]
    """
    d, c = configs.device, configs
    kind_in, kind = kind, layer_pass(layers, kind)
    ep = np.broadcast_to(np.asarray(c.ep, dtype=float), d.shape)
    # The per-layer roofline depends on a configuration's device, micro-batch, tensor/context/expert ranks,
    # recomputation and stored bytes alone (not on its count, stages, ZeRO or accumulation): each distinct
    # combination is evaluated once and its sums spread back (a search repeats each 5-20 times).
    groups = None if keep_layers else _layer_groups(d, c.micro_batch, c.tp, c.cp, ep, c.recompute, weight_bytes,
                                                    extra_bytes)

    def pick(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """A per-configuration column at the groups' representative rows (all of it without groups)."""
        return a if groups is None else np.broadcast_to(a, d.shape)[groups[0]]

    sums = _layer_sums(layers, table, kind_in, kind, pick(d), pick(c.micro_batch), pick(c.tp), pick(c.cp), pick(ep),
                       pick(c.recompute), None if weight_bytes is None else pick(weight_bytes), extra_bytes,
                       keep_layers)
    if groups is not None:
        sums = sums.spread(groups[1])
    per_layer, is_compute, is_memory = sums.per_layer, sums.is_compute, sums.is_memory
    split = (c.tp * c.pp * c.cp)[:, None]
    ep = ep[:, None]
    stages = heaviest_stages(shape, c.pp)  # pp, or fewer where the blocks split unevenly
    stage = sums.seconds / stages  # one micro-batch through the heaviest stage
    slots = c.accumulation + (c.pp - 1) / c.interleave  # 1F1B: m micro-batches plus the bubble
    kernels = stage * slots
    compute_part = sums.compute / stages * slots
    memory_part = sums.memory / stages * slots
    launch_part = kernels - compute_part - memory_part
    bubble = stage * (c.pp - 1) / c.interleave
    links = DeviceLinks.of(table, d)
    tensor_parallel, pipeline, context_parallel = model_parallel_seconds(table, c, shape, kind.backward, links)
    expert_parallel = all_to_all_seconds(table, d, c, shape, 2.0 if kind.backward else 1.0, ep[:, 0]) \
        if shape is not None else np.zeros(len(d))

    params = layers.total_params if trainable_params is None else trainable_params
    experts = layers.expert_params if trainable_params is None else 0.0  # fine-tuning: experts frozen
    if not kind.updates:
        params = experts = 0.0
    dp = c.dp * c.cp  # context ranks hold the same weights: gradients and ZeRO shards span dp x cp
    # routed experts: 1/ep of them per rank, replicated (and ZeRO-sharded) over dp/ep ranks
    etp, expert_dp = expert_layout(c.tp, dp, ep[:, 0])
    experts_here = experts / (etp * stages * ep[:, 0])
    dense_here = (params - experts) / (c.tp * stages)
    params_here = dense_here + experts_here
    updated = np.where(c.zero >= 1, dense_here / dp + experts_here / expert_dp, params_here)
    per_param = optimizer_bytes_per_param(table.weight_bytes[d], table.master_bytes[d], optimizer_state_bytes)
    if offload:  # the step runs on the host; gradients down and weights up over PCIe (ZeRO-Offload)
        optimizer = updated * (per_param / HOST_OPTIMIZER_BANDWIDTH + 2 * table.weight_bytes[d] / FALLBACK_LINK.bandwidth)
    else:
        optimizer = updated * per_param / table.bandwidth[d]
    overhead = table.step_overhead[d] if kind.updates else np.zeros(len(d))
    dp_bandwidth, dp_latency = links.group(c.tp * dp)  # tp, cp inner, dp outer: Megatron's rank order
    traffic = table.weight_bytes[d] * np.where(c.zero == 3, FULL_SHARDING_TRAFFIC,
                                               np.where(c.zero == 2, zero2_traffic_rounds(c.accumulation), 1.0))
    gradient = params_here * traffic
    if shard_group is None:
        split_experts = (ep[:, 0] > 1) & (experts_here > 0)  # experts synchronised over their own dp / ep replicas
        allreduce = rack_allreduce_seconds(table, d, c.tp, gradient, dp, dp_bandwidth, dp_latency)
        if split_experts.any():
            allreduce = np.where(split_experts,
                                 ring_allreduce_seconds(dense_here * traffic, dp, dp_bandwidth, dp_latency)
                                 + ring_allreduce_seconds(experts_here * traffic, expert_dp, dp_bandwidth, dp_latency),
                                 allreduce)
    else:  # FSDP HYBRID_SHARD: ZeRO-3 inside each group, the group's gradient shard all-reduced across groups
        group_bandwidth, group_latency = links.group(c.tp * shard_group)
        allreduce = ring_allreduce_seconds(gradient, shard_group, group_bandwidth, group_latency) + \
            ring_allreduce_seconds(params_here * table.weight_bytes[d] / shard_group, dp / shard_group, dp_bandwidth,
                                   dp_latency)
    data_parallel = np.maximum(0.0, allreduce - OVERLAP_SHARE * kernels) if overlap_allreduce else allreduce
    if overlap_all_to_all:  # one micro-batch's dispatch and combine run while another computes (not in the bubble)
        expert_parallel = np.maximum(0.0, expert_parallel - OVERLAP_SHARE * (kernels - bubble))

    step = kernels + tensor_parallel + pipeline + context_parallel + expert_parallel + data_parallel + optimizer + overhead
    samples = c.micro_batch * c.accumulation  # per replica
    model_flops = _pass_flops(layers, kind) * samples / split[:, 0]
    hardware_flops = model_flops + sums.recomputed_flops * samples / split[:, 0]
    limit = _unit_flops(layers, kind) @ (1.0 / table.unit_peaks)[d].T * samples / split[:, 0]  # each unit at its own peak
    communication = tensor_parallel + pipeline + context_parallel + expert_parallel + data_parallel
    bound = np.argmax(np.stack([compute_part, memory_part + optimizer, launch_part + overhead, communication]), axis=0)
    return StepParts(step=step, kernels=kernels, compute=compute_part, memory=memory_part, launch=launch_part,
                     bubble=bubble, optimizer=optimizer, overhead=np.broadcast_to(overhead, step.shape),
                     tensor_parallel=tensor_parallel, pipeline=pipeline, context_parallel=context_parallel,
                     data_parallel=data_parallel,
                     physical_limit=limit, model_flops=model_flops, hardware_flops=hardware_flops, bound=bound,
                     layer_seconds=per_layer if keep_layers else None,
                     layer_bound=None if is_compute is None or is_memory is None
                     else np.where(is_compute, 0, np.where(is_memory, 1, 2)),
                     expert_parallel=expert_parallel)
