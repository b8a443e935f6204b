"""Mixtures of experts and multi-head latent attention as serving runtimes run them (issue 38, item 5).

The per-layer engine (:func:`sizer.engine.roofline.step_seconds`, tensor parallel over the replica's devices)
gives a serving iteration its kernels' roofline. What a runtime adds for a mixture of experts, and what its
layouts change, is here:

- **the fused-MoE path's fixed time** per MoE layer and iteration, whatever the batch, in proportion to the
  layer's routed experts: the router's top-k, the token sort and block alignment loop over every expert, and the
  grouped expert GEMMs launch a grid padded to every expert's tiles, most of them near-empty at a few tokens
  (:data:`MOE_EXPERT_SECONDS` per expert, fitted: below). It is why DeepSeek-V3 (256 experts) on 8 GPUs decodes a
  single stream at tens, not hundreds, of tokens/s although its 37 B active weights stream from 8 devices in about a
  millisecond, while gpt-oss-20b (32 experts) pays an eighth of it. Expert parallelism is not taken to shrink it:
  GPUStack's Qwen3-235B runs with vLLM's expert parallelism were no faster (serving-tails.csv), and which of the
  parts would shrink with ``1/ep`` of the experts on each device is not measured in the data here;
- **expert parallelism** (``ep`` ranks, each holding whole experts: SGLang ``--ep-size``, vLLM
  ``--enable-expert-parallel``): the step waits for the busiest rank, whose share of the experts a batch
  touches (weight reads) exceeds the mean by the expected maximum over ``ep`` ranks
  (:func:`busiest_rank_factor`); with data-parallel attention each MoE layer dispatches its tokens to the
  experts' ranks and combines them back (two all-to-alls over the node link, one message per peer,
  :func:`all_to_all_seconds`), where tensor-parallel attention leaves every token on every rank;
- **data-parallel attention** (SGLang ``--enable-dp-attention --dp N``, vLLM ``--data-parallel-size``): each
  rank runs attention for its own ``1/N`` of the sequences with the whole attention weights (read by every
  rank: :func:`attention_replica_seconds`, held by every rank: :func:`weights_per_device`), and keeps only its
  own sequences' KV cache (:func:`device_kv_bytes_per_token`);
- **multi-head latent attention** (DeepSeek-V2/V3): the cache holds a ``kv_lora_rank`` latent and a
  ``qk_rope_head_dim`` rotary key per token and layer, one copy for all heads; decode multiplies the
  up-projections into the query and output (weight absorption), so attention reads the latent directly:
  :math:`2 (2 r_{kv} + r_{rope})` FLOP per head and cached token (:func:`mla_decode_flops_per_kv_token`), and
  under tensor parallelism every rank reads the whole latent of every sequence for its heads
  (:func:`kv_read_factor`), where grouped-query attention splits its key/value heads.

References
----------
DeepSeek-AI 2024, DeepSeek-V2 §2.1 (MLA, absorbed up-projections) and DeepSeek-V3 report §2.1, §3.4
(docs/references.md [deepseek-v2], [deepseek-v3]); SGLang v0.4 release blog (data-parallel attention for
DeepSeek: one KV cache per data-parallel rank, 2024-12-04; recalled); vLLM docs "Data Parallel Deployment"
and "Expert Parallel Deployment" (recalled); Gumbel 1958 for the expected maximum of ``n`` draws.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sizer.engine.constants import EP_ALL_TO_ALLS_PER_BLOCK_PASS, EP_LOAD_IMBALANCE
from sizer.engine.devices import DeviceTable
from sizer.results import unit_factor
from sizer.workloads.architecture import Architecture

# The fused-MoE path's fixed seconds per routed expert of a MoE layer, per iteration (the router's top-k, the token
# sort/align over the experts, the grouped expert GEMMs' grid padded to every expert), independent of the batch.
# Fitted by `benchmarks/moe_decode_by_source.py --fit` (source-balanced median |log error| of output tokens/s; the
# objective is flat from 1.0 to 2.0 us) on serving-tails.csv's MoE points (GPUStack's DeepSeek-R1 on 8 x H200,
# Qwen3-235B on 8 and 4 x H100, gpt-oss on H100/A100; AccelMark's Mixtral on 8 x RTX A6000; dennislee22's gpt-oss
# bursts) and vLLM's gpt-oss-20b fixed-concurrency blog rows (benchmarks/serving_accuracy.py); scored held out on the
# DeepSeek-V3 figures of sgl-project/sglang#2643 (SGLang v0.4.1, batch 1/8/32 on 8 x H200), never fitted on.
MOE_EXPERT_SECONDS = 1.25e-6
MOE_LAYER_SOURCE = ("fitted on serving-tails.csv's MoE points (GPUStack DeepSeek-R1 8 x H200, Qwen3-235B-A22B 8/4 x H100, "
                    "gpt-oss H100/A100) and vLLM's gpt-oss-20b blog rows; scored held out on sgl-project/sglang#2643 "
                    "(benchmarks/moe_decode_by_source.py, benchmarks/ACCURACY.md)")
MOE_LAYER_VERIFIED = False  # a fit, not a measured kernel time
# Activations sent by the dispatch and combine all-to-alls: BF16 (DeepEP's normal kernels dispatch BF16 or FP8;
# the combine is BF16). Recalled from deepseek-ai/DeepEP's README, not read in a data file.
ALL_TO_ALL_BYTES = 2.0


@dataclass(frozen=True)
class MoeLayout:
    """How a replica's devices split a mixture's experts and its attention (runtimes split over the whole replica).

    Parameters
    ----------
    expert : bool
        Expert parallelism over the replica's ``n`` devices, each holding ``1/n`` of the routed experts whole
        (SGLang ``--ep-size n``, vLLM ``--enable-expert-parallel``); False: every expert split by tensor parallelism.
    dp_attention : bool
        Data-parallel attention over the ``n`` devices, each running attention for its own sequences with the
        whole attention weights (SGLang ``--enable-dp-attention --dp n``, vLLM ``--data-parallel-size n``);
        False: attention split by heads (tensor parallel).
    """

    expert: bool = False
    dp_attention: bool = False

    def label(self, count: int) -> str:
        """The layout in words on ``count`` devices, e.g. ``"EP 8, DP attention 8"``; ``"tensor parallel"``.

        Parameters
        ----------
        count : int
            Devices in the replica [1].

        Returns
        -------
        str
            The label.
        """
        parts = ([f"EP {count}"] if self.expert else []) + ([f"DP attention {count}"] if self.dp_attention else [])
        return ", ".join(parts) or "tensor parallel"


TENSOR_PARALLEL = MoeLayout()
EXPERT_PARALLEL = MoeLayout(expert=True)
EXPERT_DP_ATTENTION = MoeLayout(expert=True, dp_attention=True)


def layout_refusal(arch: Architecture, count: int, layout: MoeLayout, parallelism: frozenset[str],
                   runtime_name: str) -> str | None:
    """Why ``layout`` cannot serve ``arch`` on ``count`` devices under a runtime, or None when it can.

    Parameters
    ----------
    arch : Architecture
        The model (its experts).
    count : int
        Devices in the replica [1].
    layout : MoeLayout
        The expert and attention split.
    parallelism : frozenset of str
        What the runtime runs (:class:`sizer.runtimes.serving_runtimes.ServingProfile`): ``expert``,
        ``data-attention`` ...
    runtime_name : str
        The runtime, for the sentence.

    Returns
    -------
    str or None
        The reason in a sentence; None where the runtime runs the layout.
    """
    if layout.expert:
        if not arch.moe:
            return f"{arch.name} has no experts to split (expert parallelism needs a mixture of experts)"
        if "expert" not in parallelism:
            return f"{runtime_name} does not run expert parallelism"
        if count < 2 or arch.experts % count:
            return f"expert parallelism over {count} devices needs 2 or more that divide the {arch.experts} experts"
    if layout.dp_attention:
        if not arch.moe:
            return (f"{arch.name} is dense: data-parallel attention pays off where a mixture's experts are shared "
                    "(replicas serve a dense model)")
        if "data-attention" not in parallelism:
            return f"{runtime_name} does not run data-parallel attention"
        if count < 2:
            return "data-parallel attention needs 2 or more devices"
    return None


def runtime_layouts(arch: Architecture, count: int, parallelism: frozenset[str]) -> tuple[MoeLayout, ...]:
    """The layouts a runtime runs for ``arch`` on ``count`` devices: tensor parallel always; for a mixture, expert
    parallelism over the replica where the runtime runs it and ``count`` divides the experts, and with it
    data-parallel attention where the runtime runs that too.

    Parameters
    ----------
    arch : Architecture
        The model.
    count : int
        Devices in the replica [1].
    parallelism : frozenset of str
        What the runtime runs.

    Returns
    -------
    tuple of MoeLayout
        The plain tensor-parallel layout first.

    >>> from sizer.workloads.registry import find_model
    >>> [x.label(8) for x in runtime_layouts(find_model("deepseek-v3"), 8, frozenset({"tensor", "expert", "data-attention"}))]
    ['tensor parallel', 'EP 8', 'EP 8, DP attention 8']
    >>> [x.label(8) for x in runtime_layouts(find_model("deepseek-v3"), 8, frozenset({"tensor", "pipeline", "expert"}))]
    ['tensor parallel', 'EP 8']
    """
    return (TENSOR_PARALLEL,) + tuple(x for x in (EXPERT_PARALLEL, EXPERT_DP_ATTENTION)
                                      if layout_refusal(arch, count, x, parallelism, "") is None)


def mla_decode_flops_per_kv_token(arch: Architecture) -> float:
    """Attention FLOP per cached token of one decoded token under absorbed MLA: every head scores the
    ``kv_lora_rank + rope`` key and sums the ``kv_lora_rank`` latent values, :math:`2 a (2 r_{kv} + r_{rope})`.

    Parameters
    ----------
    arch : Architecture
        A model with multi-head latent attention.

    Returns
    -------
    float
        FLOP per cached token and layer [FLOP].

    >>> from sizer.workloads.registry import find_model
    >>> mla_decode_flops_per_kv_token(find_model("deepseek-v3"))  # 2 x 128 x (2 x 512 + 64)
    278528.0
    """
    return 2.0 * arch.heads * (2 * arch.kv_lora_rank + arch.rope_head_dim)


def kv_read_factor(arch: Architecture, count: npt.ArrayLike, layout: MoeLayout) -> np.ndarray:
    """How much more KV cache each rank reads than its ``1/count`` share: MLA's one latent serves every head, so
    tensor-parallel ranks each read all of it (``count``); data-parallel attention reads its own sequences only.

    Parameters
    ----------
    arch : Architecture
        The model.
    count : array_like
        Devices in the replica [1].
    layout : MoeLayout
        The attention split.

    Returns
    -------
    numpy.ndarray
        Factor on the engine's per-rank KV reads [1] (1: grouped-query heads split over the ranks).

    >>> from sizer.workloads.registry import find_model
    >>> kv_read_factor(find_model("deepseek-v3"), 8, TENSOR_PARALLEL).tolist(), kv_read_factor(find_model("deepseek-v3"), 8, EXPERT_DP_ATTENTION).tolist()
    (8.0, 1.0)
    """
    c = np.asarray(count, dtype=float)
    factor: np.ndarray = c if arch.mla and not layout.dp_attention else np.ones_like(c)
    return factor


def device_kv_bytes_per_token(tensor_share: float, whole: float, count: int, layout: MoeLayout) -> float:
    """KV-cache bytes a token keeps on each device: its tensor-parallel share, or under data-parallel attention the
    whole token on the one rank holding its sequence, i.e. ``1/count`` of it on average over the replica.

    Parameters
    ----------
    tensor_share : float
        Bytes per token on one tensor-parallel rank [B] (:func:`sizer.passes.arithmetic.kv_cache_bytes_per_token`).
    whole : float
        Bytes per token of the whole model on one rank [B].
    count : int
        Devices in the replica [1].
    layout : MoeLayout
        The attention split.

    Returns
    -------
    float
        Bytes per token per device [B].

    >>> device_kv_bytes_per_token(70272.0, 70272.0, 8, EXPERT_DP_ATTENTION)  # MLA's latent: one copy in 8 devices
    8784.0
    """
    return whole / count if layout.dp_attention else tensor_share


def attention_weights(arch: Architecture) -> float:
    """Parameters of every attention block [1] (replicated under data-parallel attention).

    Parameters
    ----------
    arch : Architecture
        The model.

    Returns
    -------
    float
        Parameters [1].
    """
    return float(arch.layers * arch.attention_params())


def weights_per_device(arch: Architecture, stored: npt.ArrayLike, count: npt.ArrayLike, layout: MoeLayout) -> np.ndarray:
    """Weight bytes on each device: ``1/count`` of the model, plus the attention blocks whole on every
    data-parallel attention rank.

    Parameters
    ----------
    arch : Architecture
        The model.
    stored : array_like
        Mean bytes per stored parameter [B].
    count : array_like
        Devices in the replica [1].
    layout : MoeLayout
        The split.

    Returns
    -------
    numpy.ndarray
        Bytes per device [B].
    """
    c, b = np.asarray(count, dtype=float), np.asarray(stored, dtype=float)
    whole: np.ndarray = arch.params_total() * b / c
    if layout.dp_attention:
        whole = whole + attention_weights(arch) * b * (1.0 - 1.0 / c)
    return whole


def busiest_rank_factor(experts: int, per_token: int, ep: npt.ArrayLike, tokens: npt.ArrayLike) -> np.ndarray:
    """The busiest expert-parallel rank's distinct experts over the mean, for a batch of ``tokens``.

    Each rank holds :math:`m = E / ep` experts; a batch touches each with probability
    :math:`p = 1 - (1 - k/E)^B` (uniform routing), so a rank's touched experts have mean :math:`mp` and
    standard deviation :math:`\\sqrt{m p (1 - p)}`; the expected largest of ``ep`` such counts is about
    :math:`mp + \\sqrt{m p (1 - p)} \\sqrt{2 \\ln ep}` (Gumbel's extreme-value approximation), at most ``m``.
    The factor is at least :data:`~sizer.engine.constants.EP_LOAD_IMBALANCE` (the skew of routed
    tokens that load balancing leaves, which uniform routing does not have).

    Parameters
    ----------
    experts : int
        Routed experts :math:`E` [1].
    per_token : int
        Experts per token :math:`k` [1].
    ep : array_like
        Expert-parallel ranks [1].
    tokens : array_like
        Tokens in the iteration, :math:`B` [1].

    Returns
    -------
    numpy.ndarray
        Factor on the expert layers' time [1]; 1 where ``ep`` is 1.

    >>> [round(float(x), 2) for x in busiest_rank_factor(256, 8, 8, [1, 32, 1024])]
    [3.01, 1.27, 1.1]
    """
    b = np.asarray(tokens, dtype=float)
    e = np.asarray(ep, dtype=float)
    m = experts / e
    p = 1.0 - (1.0 - per_token / experts) ** b
    mean = m * p
    busiest = np.minimum(mean + np.sqrt(m * p * (1.0 - p)) * np.sqrt(2.0 * np.log(np.maximum(e, 1.0))), m)
    factor: np.ndarray = np.where(e > 1, np.maximum(busiest / mean, EP_LOAD_IMBALANCE), 1.0)
    return factor


def expert_seconds(arch: Architecture, table: DeviceTable, d: npt.ArrayLike, count: npt.ArrayLike,
                   stored: npt.ArrayLike, tokens: npt.ArrayLike) -> np.ndarray:
    """Seconds of the routed experts on one rank in one iteration, split evenly: the larger of their weight reads
    (the experts the batch touches) and their FLOP at the matrix rate.

    Parameters
    ----------
    arch : Architecture
        The mixture.
    table : DeviceTable
        The devices' achieved rates.
    d : array_like
        Table rows [1].
    count : array_like
        Devices sharing the experts [1].
    stored : array_like
        Bytes per stored weight [B].
    tokens : array_like
        Tokens in the iteration [1].

    Returns
    -------
    numpy.ndarray
        Seconds [s].
    """
    rows, c, n = np.asarray(d, dtype=np.int64), np.asarray(count, dtype=float), np.asarray(tokens, dtype=float)
    per_expert = float(arch.expert_params(arch.expert_width))
    touched = arch.experts * (1.0 - (1.0 - arch.experts_per_token / arch.experts) ** n)
    reads = arch.moe_blocks * touched * per_expert * np.asarray(stored, dtype=float) / c / table.bandwidth[rows]
    flops = arch.moe_blocks * 2.0 * n * arch.experts_per_token * per_expert / c / table.rates[rows, 0]
    out: np.ndarray = np.maximum(reads, flops)
    return out


def all_to_all_seconds(arch: Architecture, table: DeviceTable, d: npt.ArrayLike, count: npt.ArrayLike,
                       layout: MoeLayout, tokens: npt.ArrayLike) -> np.ndarray:
    """Seconds of the dispatch and combine all-to-alls of every MoE layer in one iteration, where data-parallel
    attention leaves each rank its own tokens: each of the ``e`` ranks sends the :math:`(e - 1)/e` of its
    ``B / e`` tokens' ``k`` expert copies that leave it over the node link, one message per peer at the link's
    latency.

    .. math:: t = L_{moe} \\cdot 2 \\left(\\frac{e - 1}{e} \\frac{(B / e)\\, k\\, h\\, w}{B_{link}} + (e - 1) \\lambda\\right)

    Parameters
    ----------
    arch : Architecture
        The mixture (hidden size, experts per token, MoE layers).
    table : DeviceTable
        Links of the devices.
    d : array_like
        Table rows [1].
    count : array_like
        Devices in the replica, ``e`` [1].
    layout : MoeLayout
        Expert parallelism with data-parallel attention; otherwise (tokens on every rank) no all-to-all runs.
    tokens : array_like
        Tokens in the iteration over the replica, ``B`` [1].

    Returns
    -------
    numpy.ndarray
        Seconds [s].
    """
    rows, e, n = np.asarray(d, dtype=np.int64), np.asarray(count, dtype=float), np.asarray(tokens, dtype=float)
    if not (layout.expert and layout.dp_attention):
        return np.zeros(np.broadcast(rows, e, n).shape)
    message = n / e * arch.experts_per_token * arch.hidden * ALL_TO_ALL_BYTES
    one = (e - 1) / e * message / table.link[rows] + (e - 1) * table.link_latency[rows]
    out: np.ndarray = np.where(e > 1, arch.moe_blocks * EP_ALL_TO_ALLS_PER_BLOCK_PASS * one, 0.0)
    return out


def attention_replica_seconds(arch: Architecture, table: DeviceTable, d: npt.ArrayLike, count: npt.ArrayLike,
                              stored: npt.ArrayLike, layout: MoeLayout) -> np.ndarray:
    """Seconds each data-parallel attention rank spends reading the attention weights beyond its tensor-parallel
    share (every rank reads them whole) per iteration; 0 under tensor-parallel attention.

    Parameters
    ----------
    arch : Architecture
        The model.
    table : DeviceTable
        Achieved bandwidths.
    d : array_like
        Table rows [1].
    count : array_like
        Devices in the replica [1].
    stored : array_like
        Bytes per stored weight [B].
    layout : MoeLayout
        The attention split.

    Returns
    -------
    numpy.ndarray
        Seconds [s].
    """
    rows, c = np.asarray(d, dtype=np.int64), np.asarray(count, dtype=float)
    if not layout.dp_attention:
        return np.zeros(np.broadcast(rows, c).shape)
    out: np.ndarray = attention_weights(arch) * np.asarray(stored, dtype=float) * (1.0 - 1.0 / c) / table.bandwidth[rows]
    return out


def iteration_seconds(arch: Architecture, table: DeviceTable, d: npt.ArrayLike, count: npt.ArrayLike,
                      stored: npt.ArrayLike, layout: MoeLayout, tokens: npt.ArrayLike,
                      expert_seconds_each: float | None = None) -> np.ndarray:
    """What a runtime adds to the engine's tensor-parallel iteration for a mixture of experts in ``layout``.

    .. math:: \\Delta t = L_{moe}\\, E\\, t_{expert} + (f_{busiest} - 1)\\, t_{experts} + t_{a2a} + t_{attn\\,replica}

    with :math:`E` the layer's routed experts (whatever the split: see the module's note).

    Parameters
    ----------
    arch : Architecture
        The model (a dense one adds only the attention replica's reads).
    table : DeviceTable
        The devices' rates and links.
    d : array_like
        Table rows [1].
    count : array_like
        Devices in the replica [1].
    stored : array_like
        Bytes per stored weight [B].
    layout : MoeLayout
        The expert and attention split.
    tokens : array_like
        Tokens in each iteration over the replica [1].
    expert_seconds_each : float, optional
        The fused-MoE path's fixed seconds per routed expert and MoE layer [s] (default :data:`MOE_EXPERT_SECONDS`; the
        fit's search).

    Returns
    -------
    numpy.ndarray
        Seconds added per iteration [s], broadcast over ``d``, ``count`` and ``tokens``.
    """
    fixed = MOE_EXPERT_SECONDS if expert_seconds_each is None else expert_seconds_each
    n = np.asarray(tokens, dtype=float)
    extra = attention_replica_seconds(arch, table, d, count, stored, layout) + 0.0 * n
    if not arch.moe:
        return extra
    extra = extra + arch.moe_blocks * arch.experts * fixed
    if layout.expert:
        busiest = busiest_rank_factor(arch.experts, arch.experts_per_token, count, n)
        extra = extra + (busiest - 1.0) * expert_seconds(arch, table, d, count, stored, n)
        extra = extra + all_to_all_seconds(arch, table, d, count, layout, n)
    return extra


def layout_note(arch: Architecture, count: int, layout: MoeLayout) -> tuple[str, str] | None:
    """The answer's assumption on what the runtime adds for a mixture or latent attention: (value, source); None for a
    dense model without latent attention served tensor parallel.

    Parameters
    ----------
    arch : Architecture
        The model.
    count : int
        Devices in the replica [1].
    layout : MoeLayout
        The expert and attention split.

    Returns
    -------
    tuple of (str, str) or None
        The assumption's value and source.
    """
    if not (arch.moe or arch.mla or layout.dp_attention):
        return None
    parts = [f"{layout.label(count)}"]
    if arch.moe:
        fixed = arch.moe_blocks * arch.experts * MOE_EXPERT_SECONDS
        parts.append(f"the fused-MoE path's fixed {MOE_EXPERT_SECONDS * unit_factor('s', 'us'):g} us per routed expert per MoE layer "
                     f"and iteration ({arch.experts} experts x {arch.moe_blocks} layers: {fixed * unit_factor('s', 'ms'):.1f} ms)")
    if layout.expert:
        parts.append("the step waits for the expert-parallel rank with the most experts touched")
    if layout.expert and layout.dp_attention:
        parts.append("a dispatch and a combine all-to-all per MoE layer over the node link, one message per peer")
    if layout.dp_attention:
        parts.append("attention weights whole on every device, each sequence's KV cache on one")
    if arch.mla:
        parts.append("MLA decode reads the latent with absorbed up-projections"
                     + ("; every tensor rank reads the whole latent" if not layout.dp_attention else ""))
    return "; ".join(parts), MOE_LAYER_SOURCE + "; DeepSeek-V2 §2.1 (docs/references.md [deepseek-v2])"
