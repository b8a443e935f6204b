"""Serving arithmetic on arrays: KV cache, memory per device, prefill and decode times.

Every time is an evaluation of :func:`sizer.engine.roofline.step_seconds` with the
forward-only ``INFERENCE`` pass, for many (device, count, batch) configurations at once:

- **prefill** (time to first token): the layer graph at the prompt length, ``micro_batch`` =
  concurrent sequences, the causal attention square halved (flash attention skips the masked
  blocks), the LM head on the last token only;
- **decode** (one token per sequence): the layer graph of one token, whose attention computes
  :math:`2 \\cdot 2 c a d_{head}` over a context of ``c`` tokens and reads the KV cache,
  :math:`c \\cdot 2 \\cdot kv \\cdot d_{head} \\cdot b_{kv}` bytes per block (the engine's
  ``extra_bytes``), at the mean context of the generation ``prompt + output / 2`` (the KV reads
  grow linearly over the output, so the mean step is the step at the mean context);
- a fixed time per forward pass (the fitted serving overhead) is added to both.

Tensor parallelism over ``count`` devices (Megatron style) divides each layer's work and adds
the block collectives over the node link; weights and KV cache are split across the ranks
(a key/value head is never split: with more ranks than KV heads, heads are replicated).

A mixture of experts keeps the weights of all experts in memory; a token computes with and
reads the weights of its ``k`` routed experts, and a batch of ``B`` tokens reads the
:math:`E (1 - (1 - k/E)^B)` distinct experts it touches (uniform routing).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from sizer.choices import DeviceKind, Precision, Split
from sizer.engine.constants import PREFILL_CHUNK_TOKENS, Efficiencies, serving_efficiencies
from sizer.engine.devices import DeviceTable, build_device_table
from sizer.engine.layers import LayerTable, fold_layers
from sizer.engine.roofline import Configs, step_seconds
from sizer.engine.step_inputs import INFERENCE, Shape
from sizer.errors import InputError
from sizer.formulas.peaks import int8_matrix_peak
from sizer.hardware.schema import Device
from sizer.memo import registered_cache
from sizer.passes import moe_decode
from sizer.passes.moe_decode import MoeLayout
from sizer.runtimes.formats import WeightFormat
from sizer.runtimes.gguf import gguf_bytes
from sizer.runtimes.precision_support import weight_only_somewhere
from sizer.workloads.architecture import Architecture
from sizer.workloads.layer_graph import attention_flops, layer_graph
from sizer.workloads.profile import Layer, Profile

KEYS_AND_VALUES = 2
LOGIT_BYTES = 4.0  # the last token's logits, kept in FP32 for sampling
CAUSAL_SHARE = 0.5  # of the full s x s attention square a causal prefill computes (flash attention)


def kv_cache_bytes_per_token(arch: Architecture, bytes_per_value: float, tensor_parallel: int = 1,
                             context: float | None = None) -> float:
    """KV-cache bytes per token on one device: :math:`L \\cdot 2 \\cdot \\lceil kv / t \\rceil \\cdot d_{head} \\cdot b`.

    ``L`` layers, 2 (keys and values), ``kv`` key/value heads (grouped-query attention) shared by
    ``t`` tensor-parallel ranks, head size ``d_head``, ``b`` bytes per value; under multi-head latent
    attention the compressed latent and rotary key (:meth:`Architecture.kv_values_per_token`). With
    a ``context`` [tokens], sliding-window blocks count only the window they keep
    (:meth:`Architecture.kv_blocks`); without, every block keeps every token.

    Parameters
    ----------
    arch : Architecture
        The model (layers, key/value heads, head size; or its latent width under MLA).
    bytes_per_value : float
        Bytes of one cached key or value element [B] (2 for fp16, 1 for fp8).
    tensor_parallel : int
        Tensor-parallel ranks sharing the heads [1].
    context : float or None
        Tokens cached [tokens], for sliding-window blocks; None: every block keeps every token.

    Returns
    -------
    float
        Bytes per token on one device [B].

    >>> from sizer.workloads.registry import find_model
    >>> kv_cache_bytes_per_token(find_model("llama-2-70b"), 2.0)  # 2 x 80 x 8 x 128 x 2 B (cursor.so: 320 KB)
    327680.0
    """
    blocks = arch.layers if context is None else arch.kv_blocks(context)
    return float(blocks * arch.kv_values_per_token(tensor_parallel) * bytes_per_value)


EDGE_BYTES = 2.0  # embeddings and output head of GPTQ/AWQ/GGUF files: fp16


def stored_weight_bytes(arch: Architecture, weights: WeightFormat) -> float:
    """Mean bytes per parameter as stored: the format's, except 16-bit embeddings and head where it keeps them
    (and, for a format that quantises only a mixture's routed experts, 16 bits for all but the experts).

    .. math:: \\bar b = (b (N - N_e) + 2 N_e) / N

    Parameters
    ----------
    arch : Architecture
        The served model (``N`` parameters, ``N_e`` in embeddings and an untied head).
    weights : WeightFormat
        The storage format (``b`` bytes per weight).

    Returns
    -------
    float
        Bytes per parameter [B].

    References
    ----------
    docs/references.md [frantar2022gptq], [lin2023awq]; llama.cpp keeps token_embd/output at Q6_K or F16.

    >>> from sizer.workloads.registry import find_model
    >>> from sizer.runtimes.formats import weight_format
    >>> round(stored_weight_bytes(find_model("llama-2-7b"), weight_format("gptq-int4-g128")), 3)
    0.577
    """
    total = arch.params_total()
    if weights.gguf_mix is not None:  # each tensor in its own type (sizer.runtimes.gguf)
        return gguf_bytes(arch, weights.gguf_mix) / total
    if weights.experts_only and arch.moe:  # only the routed experts in the format, the rest at 16 bits
        experts = arch.moe_blocks * arch.experts * arch.expert_params(arch.expert_width)
        return (weights.bytes_per_weight * experts + EDGE_BYTES * (total - experts)) / total
    if not weights.edges_16bit:
        return weights.bytes_per_weight
    edges = arch.embedding_params()
    return (weights.bytes_per_weight * (total - edges) + EDGE_BYTES * edges) / total


def check_servable(arch: Architecture) -> None:
    """Serving answers cover decoder-only models (token-by-token generation over a KV cache).

    Parameters
    ----------
    arch : Architecture
        The model; InputError naming ``model`` where it is not a decoder.
    """
    if arch.family != "decoder":
        raise InputError("model", arch.name, f"a decoder-only language model ({arch.name} is an {arch.family}; "
                                             "generation is estimated for decoders)")


def splits_heads(count: int, arch: Architecture) -> bool:
    """Whether ``count`` tensor-parallel ranks each get whole query heads and whole (or replicated) key/value heads.

    Parameters
    ----------
    count : int
        Tensor-parallel ranks [1].
    arch : Architecture
        The model (its query and key/value head counts).

    Returns
    -------
    bool
        True where the heads divide by ``count`` and the key/value heads divide by it or it by them.
    """
    return count == 1 or (not arch.heads % count and (not arch.kv_heads % count or not count % arch.kv_heads))


def head_splitting_ranks(arch: Architecture, most: int) -> list[int]:
    """The tensor-parallel sizes up to ``most`` whose ranks get whole heads (:func:`splits_heads`), smallest first.

    Parameters
    ----------
    arch : Architecture
        The model (its query and key/value head counts).
    most : int
        The largest size considered [1].

    Returns
    -------
    list of int
        Sizes [1]; 1 always among them.
    """
    return [n for n in range(1, max(1, most) + 1) if splits_heads(n, arch)]


def tensor_replicas(count: int, arch: Architecture, node: int | None = None) -> tuple[int, int]:
    """``count`` devices as replicas of the largest tensor-parallel size that divides ``count``, splits the heads and,
    given ``node``, stays within one scale-up domain.

    What a practitioner runs where a count does not split the heads (vLLM ``--data-parallel-size`` over
    ``--tensor-parallel-size``, or several servers behind a load balancer): every device used, each replica
    whole heads on each rank, its tensor-parallel all-reduces on the fabric inside a node (vLLM's and NVIDIA's
    guidance: tensor parallel within a node, more devices as replicas). A count that splits the heads is one
    replica of itself.

    Parameters
    ----------
    count : int
        Devices [1].
    arch : Architecture
        The model (its query and key/value head counts).
    node : int, optional
        Devices in one scale-up domain (:func:`sizer.hardware.nodes.node_layout`) [1]: the largest tensor-parallel
        size of a replica; None: no bound.

    Returns
    -------
    tuple of (int, int)
        Replicas [1] and devices per replica, its tensor-parallel size [1]; their product is ``count``
        (a tensor-parallel size of 1 always splits the heads).
    """
    bound = count if node is None else min(count, node)
    tp = max(n for n in head_splitting_ranks(arch, bound) if not count % n)
    return count // tp, tp


def check_tensor_ranks(count: int, arch: Architecture) -> None:
    """``count`` tensor-parallel ranks that split the attention heads whole, or InputError naming ``count``.

    Runtimes split attention by heads: vLLM and TensorRT-LLM require the query heads to divide by
    the tensor-parallel size, and the key/value heads to divide by it or be replicated across it
    (the size a multiple of them), as Megatron-LM does (:func:`sizer.training.time_answer.check_layout`).

    Parameters
    ----------
    count : int
        Tensor-parallel ranks [1].
    arch : Architecture
        The model; the error lists counts that fit it.
    """
    if not splits_heads(count, arch):
        fitting = head_splitting_ranks(arch, min(arch.heads, 1024))
        raise InputError("count", count, f"a device count that divides the {arch.heads} attention heads of {arch.name} "
                                         f"(and its {arch.kv_heads} key/value heads, or is a multiple of them), such as "
                                         f"{', '.join(map(str, fitting[:8]))}: tensor parallelism gives each device "
                                         "whole heads (or split layer: --split layer)")


def _is_expert(layer: Layer) -> bool:
    return layer.expert and layer.params > 0


def prefill_profile(arch: Architecture, prompt_len: int, depth: int = 0) -> Profile:
    """The forward layers of a prompt of ``prompt_len`` tokens: causal attention at half the
    square (a sliding-window block at half its band), the LM head on the last token, no loss.
    After ``depth`` tokens already in the KV cache, each prompt token also attends over those:
    attention FLOP :math:`4 a d_{head} p (d + p/2)`, the causal half-square times :math:`1 + 2d/p`
    (sliding windows not narrowed for the depth).

    Parameters
    ----------
    arch : Architecture
        The model.
    prompt_len : int
        Prompt tokens per sequence [tokens].
    depth : int
        Tokens already in the KV cache before the prompt [tokens].

    Returns
    -------
    Profile
        The forward layers with their FLOP and bytes, the loss left out.
    """
    graph = layer_graph(arch, prompt_len, windows=True)
    deeper = 1.0 + 2.0 * depth / prompt_len
    last = {layer.name: layer for layer in layer_graph(arch, 1).layers}
    layers = []
    for layer in graph.layers:
        if layer.kind == "loss":
            continue
        if layer.name == "head":
            layer = last["head"]
        elif layer.kind == "attention":
            layer = layer.model_copy(update={"forward_flops": layer.forward_flops * CAUSAL_SHARE * deeper})
        layers.append(layer)
    return graph.model_copy(update={"layers": layers, "name": f"{arch.name} prefill of {prompt_len}"})


def _block_index(name: str) -> int | None:
    """The decoder block of a layer named ``block{i}.…`` (the layer graph's stable names)."""
    head = name.split(".", 1)[0]
    return int(head[5:]) if head.startswith("block") and head[5:].isdigit() else None


def attended(arch: Architecture, block: int | None, context: float) -> float:
    """Tokens a new token of decoder block ``block`` attends over at ``context`` cached tokens:
    the context, or the block's sliding window where that is shorter.

    Parameters
    ----------
    arch : Architecture
        The model (its sliding windows).
    block : int or None
        The decoder block's index [1] (None: a layer outside the blocks, attending over the whole context).
    context : float
        Tokens cached [tokens].

    Returns
    -------
    float
        Tokens attended over [tokens].
    """
    window = arch.window(block) if block is not None else None
    return context if window is None else min(context, float(window))


def decode_profile(arch: Architecture, context: float) -> Profile:
    """The forward layers of one new token attending over ``context`` cached tokens (a
    sliding-window block over at most its window; no loss); a mixture of experts lists only the
    parameters of the routed experts (the rest is added per batch by :func:`evaluate_serving`).

    Parameters
    ----------
    arch : Architecture
        The model.
    context : float
        Tokens cached that the new token attends over [tokens].

    Returns
    -------
    Profile
        The forward layers of one token.
    """
    graph = layer_graph(arch, 1)
    share = arch.experts_per_token / arch.experts if arch.moe else 1.0
    per_token = decode_attention_flops(arch)
    layers = []
    for layer in graph.layers:
        if layer.kind == "loss":
            continue
        if layer.kind == "attention":
            tokens = attended(arch, _block_index(layer.name), context)
            layer = layer.model_copy(update={"forward_flops": per_token * tokens})
        elif arch.moe and _is_expert(layer):
            layer = layer.model_copy(update={"params": layer.params * share})
        layers.append(layer)
    return graph.model_copy(update={"layers": layers, "name": f"{arch.name} decode at context {context:g}"})


@dataclass(frozen=True)
class ServingLayers:
    """A folded layer table and, per row, what decode adds: KV-cache bytes per sequence and the
    parameters of the experts not routed to (for the experts a batch touches)."""

    table: LayerTable
    kv_bytes: np.ndarray  # B per sequence per row (attention rows)
    idle_expert_params: np.ndarray  # per row


def fold(profile: Profile, kv_bytes_per_block: float = 0.0, idle_share: float = 0.0,
         full_attention_flops: float = 0.0) -> ServingLayers:
    """Fold identical layers (:func:`sizer.engine.layers.fold_layers`), expert layers apart, and add the
    serving columns. ``kv_bytes_per_block`` is what a block attending over the whole context reads;
    given that block's attention FLOP (``full_attention_flops``), a sliding-window row reads its share.

    Parameters
    ----------
    profile : Profile
        The layers to fold.
    kv_bytes_per_block : float
        KV-cache bytes per sequence a block attending over the whole context reads [B].
    idle_share : float
        Share of a mixture's expert parameters not routed to by one token [1] (0: dense).
    full_attention_flops : float
        A whole-context attention row's FLOP [FLOP], against which sliding rows' share is measured (0: none).

    Returns
    -------
    ServingLayers
        The folded table with KV bytes [B] and idle expert parameters [1] per row.
    """
    table, marks = fold_layers(profile, (lambda layer: _is_expert(layer)) if idle_share > 0 else None)
    attention = np.asarray([kind == "attention" for kind in table.kinds], dtype=float)
    if full_attention_flops > 0:  # the KV a row reads grows with the tokens it attends over, as its FLOP do
        attention = attention * np.minimum(table.forward_flops / full_attention_flops, 1.0)
    expert = marks.astype(float)
    idle = expert * table.params * (idle_share / (1.0 - idle_share) if idle_share < 1 else 0.0)
    return ServingLayers(table=table, kv_bytes=attention * kv_bytes_per_block, idle_expert_params=idle)


def decode_layers(arch: Architecture, context: float, kv_bytes_per_block: float, idle_share: float) -> ServingLayers:
    """The folded decode layers at ``context`` tokens (:func:`decode_profile`), each attention row reading
    ``kv_bytes_per_block`` where it attends over the whole context and its window's share where it slides.

    Parameters
    ----------
    arch : Architecture
        The model.
    context : float
        Tokens cached [tokens].
    kv_bytes_per_block : float
        KV-cache bytes per sequence of a block attending over the whole context [B].
    idle_share : float
        Share of the expert parameters one token leaves idle [1] (0: dense).

    Returns
    -------
    ServingLayers
        The folded decode layers.
    """
    return fold(decode_profile(arch, context), kv_bytes_per_block, idle_share, decode_attention_flops(arch) * context)



# flash attention off: F32 scores written, read, written, read (llama.cpp's unfused path)
SCORE_BYTES_UNFUSED = 16.0  # B per score per layer


def unfused_attention_seconds(arch: Architecture, table: DeviceTable, queries: int, keys: int) -> float:
    r"""Time one forward pass spends moving attention scores that flash attention would keep on chip.

    .. math:: t = L \, h \, q \, k \, b_{score} / B

    with :math:`b_{score}` = 16 B (:data:`SCORE_BYTES_UNFUSED`: F32 scores written, read, written, read).

    Parameters
    ----------
    arch : Architecture
        The model (its layers :math:`L` and query heads :math:`h`).
    table : DeviceTable
        One device's rates under the runtime (its reached bandwidth :math:`B` [B/s]).
    queries : int
        Query tokens of the pass, :math:`q` [tokens].
    keys : int
        Cached and new tokens each query is scored against, :math:`k` [tokens].

    Returns
    -------
    float
        Seconds [s] added to the pass where flash attention is off.
    """
    scores = float(arch.layers) * arch.heads * queries * keys
    return scores * SCORE_BYTES_UNFUSED / float(table.bandwidth[0])

def decode_attention_flops(arch: Architecture) -> float:
    """Attention FLOP of one decoded token per cached token and layer: :math:`4 a d_{score}`, or under multi-head
    latent attention the absorbed kernels' over the latent (:func:`sizer.passes.moe_decode.mla_decode_flops_per_kv_token`).

    Parameters
    ----------
    arch : Architecture
        The model.

    Returns
    -------
    float
        FLOP per cached token [FLOP].
    """
    return moe_decode.mla_decode_flops_per_kv_token(arch) if arch.mla else attention_flops(1, arch.heads, arch.score_size)


def touched_experts(experts: int, per_token: int, tokens: npt.ArrayLike) -> np.ndarray:
    """Expected distinct experts a batch of ``tokens`` routes to: :math:`E (1 - (1 - k/E)^B)` (uniform routing).

    Parameters
    ----------
    experts : int
        Experts per mixture layer, :math:`E` [1].
    per_token : int
        Experts each token routes to, :math:`k` [1].
    tokens : array_like
        Tokens in the batch, :math:`B` [tokens].

    Returns
    -------
    numpy.ndarray
        Expected distinct experts read [1], one per element of ``tokens``.

    >>> float(touched_experts(8, 2, np.asarray([1.0]))[0]), round(float(touched_experts(8, 2, np.asarray([64.0]))[0]), 3)
    (2.0, 8.0)
    """
    return experts * (1.0 - (1.0 - per_token / experts) ** np.asarray(tokens, dtype=float))


# --- Device tables for serving -------------------------------------------------------------------

def _choose_rows(primary: DeviceTable, fallback: DeviceTable, keep: npt.NDArray[np.bool_] | None = None) -> DeviceTable:
    """Per device, the primary table's row where the device supports its precision (or ``keep`` says so: a strict
    row stays unsupported), else the fallback's."""
    use = primary.supported if keep is None else primary.supported | keep
    values = {}
    for f in fields(DeviceTable):
        a, b = getattr(primary, f.name), getattr(fallback, f.name)
        if f.name == "devices":
            values[f.name] = a
        elif isinstance(a, tuple):
            values[f.name] = tuple(x if u else y for x, y, u in zip(a, b, use, strict=True))
        else:
            values[f.name] = np.where(use.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)
    return DeviceTable(**values)


def _int8_rows(table: DeviceTable) -> DeviceTable:
    """The 16-bit table with the matrix units at each device's int8 peak (``int8_peak`` or a CPU's AMX tiles, W8A8 serving
    only); unsupported (NaN) where the catalog has none. The 16-bit efficiencies carry over."""
    int8 = np.asarray([np.nan if p is None else float(p.magnitude) for p in map(int8_matrix_peak, table.devices)])
    factor = int8 / table.peak
    rates = table.rates.copy()
    rates[:, :2] = rates[:, :2] * factor[:, None]
    unit_peaks = table.unit_peaks.copy()  # the matrix and conv units at the int8 peak, vector at the fastest
    unit_peaks[:, :2] = int8[:, None]
    unit_peaks[:, 2] = np.where(np.isfinite(int8), np.fmax(table.unit_peaks[:, 2], int8), np.nan)
    return dataclasses.replace(table, rates=rates, peak=int8, unit_peaks=unit_peaks,
                               precisions=tuple("int8" if np.isfinite(x) else None for x in int8))


@registered_cache(key=lambda devices, compute, efficiencies, strict: (tuple(d.key for d in devices), compute,
                                                                             efficiencies, strict))
def _serving_table(devices: tuple[Device, ...], compute: Precision | Literal["int8"], efficiencies: tuple[Efficiencies, ...],
                   strict: tuple[bool, ...]) -> DeviceTable:
    """Built once per (devices, precision, efficiencies); keyed by the devices' content (:mod:`sizer.memo`).
    ``strict``, per device: no 16-bit fallback where the device lacks the format's peak."""
    fallback = build_device_table(devices, Precision.MIXED, efficiencies)
    if compute is Precision.MIXED:
        return fallback
    primary = _int8_rows(fallback) if compute == "int8" else build_device_table(devices, compute, efficiencies)
    # a strict row keeps the primary's (unsupported where there is no peak); the others fall back to 16 bits
    return primary if all(strict) else _choose_rows(primary, fallback, np.asarray(strict, dtype=bool))


def serving_table(devices: tuple[Device, ...], weights: WeightFormat,
                  efficiencies: tuple[Efficiencies, ...] | None = None) -> DeviceTable:
    """Device rates for serving in ``weights``: at the format's compute precision where the device
    has it, else at its best 16-bit precision (bf16, else fp16, else fp32: weights dequantised); a
    weight-and-activation format (W8A8) only at its own precision (unsupported rows elsewhere).

    Parameters
    ----------
    devices : tuple of Device
        The catalog devices, one row each.
    weights : WeightFormat
        The storage format (its compute precision, and whether activations are quantised too).
    efficiencies : tuple of Efficiencies or None
        Per device, fractions of the peaks reached and the per-pass overhead (None: the serving defaults).

    Returns
    -------
    DeviceTable
        The devices' rates, memory and overheads; ``supported`` False where a W8A8 format has no peak.
    """
    effs = efficiencies or tuple(serving_efficiencies(d.kind) for d in devices)
    # a W8A8 format falls back to 16 bits only where an engine runs it weight-only (FP8 Marlin on Ampere)
    strict = tuple(weights.activations and not weight_only_somewhere(weights.name, d.architecture) for d in devices)
    return _serving_table(tuple(devices), weights.compute, tuple(effs), strict)


def table_row(table: DeviceTable, i: int) -> DeviceTable:
    """Row ``i`` of a device table as a one-device table (no rebuild: the same figures).

    Parameters
    ----------
    table : DeviceTable
        The table.
    i : int
        The row [1].

    Returns
    -------
    DeviceTable
        A table of that one device.
    """
    values: dict[str, Any] = {}  # the fields' own types, splatted back into DeviceTable
    for f in fields(DeviceTable):
        value = getattr(table, f.name)
        values[f.name] = (value[i],) if isinstance(value, tuple) else value[i:i + 1]
    return DeviceTable(**values)


# --- Evaluation ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ServingArrays:
    """Per configuration (device, count, batch): seconds, bytes per device, whether it fits."""

    prefill_seconds: np.ndarray  # time to first token, all sequences' prompts at once
    decode_seconds: np.ndarray  # one decode step (a token for every sequence) at the mean context
    decode_compute: np.ndarray  # the compute-bound part of the decode step's kernels
    decode_memory: np.ndarray  # the memory-bound part
    weights: np.ndarray  # B per device
    kv_cache: np.ndarray
    activations: np.ndarray
    reserve: np.ndarray
    fits: np.ndarray  # on the devices and, with offloaded layers, in host memory
    max_batch: np.ndarray  # largest batch that fits at this context (0: not even one)
    host_memory: np.ndarray | float = 0.0  # B in host memory: offloaded layers' weights and KV cache (0: none)
    prefill_limit: np.ndarray | float = 0.0  # the prompts' model FLOP at the fastest unit's peak [s]: no prefill is faster

    @property
    def memory(self) -> np.ndarray:
        """Bytes per device [B]: weights, KV cache, activations and the runtime's reserve."""
        total: np.ndarray = self.weights + self.kv_cache + self.activations + self.reserve
        return total


@dataclass(frozen=True)
class ServingCase:
    """What is served: the architecture, formats, prompt and output lengths."""

    arch: Architecture
    weights: WeightFormat
    kv_bytes: float  # per value
    prompt_len: int
    output_len: int
    split: Split = Split.TENSOR  # tensor parallel over the devices, or layers in turn (llama.cpp)
    gpu_layers: int | None = None  # layers on the devices, the rest on the host CPU (llama.cpp -ngl); None: all
    # what the runtime takes: this share of the device memory, and of what weights and activations leave this share for
    # the KV cache (vLLM 0.9 and 1; TensorRT-LLM 1 and 0.9; 1 and 1: every byte, as llama.cpp)
    memory_share: float = 1.0
    kv_free_share: float = 1.0
    depth: int = 0  # tokens already in the KV cache before the prompt (a conversation's earlier turns)
    # prompt tokens one pass holds activations for: a data-centre runtime's prefill chunk, a local runtime's micro-batch
    prefill_chunk: int = PREFILL_CHUNK_TOKENS
    # a data-centre runtime's expert and attention split (sizer.passes.moe_decode); None: no serving runtime's
    # fused-MoE path (a local runtime, a layer split)
    moe: MoeLayout | None = None

    @property
    def gpu_share(self) -> float:
        """The share of the layers on the devices (1: no offload)."""
        return 1.0 if self.gpu_layers is None else min(self.gpu_layers / self.arch.layers, 1.0)

    @property
    def context(self) -> int:
        """Tokens cached at the end of the answer [tokens]: depth, prompt and output."""
        return self.depth + self.prompt_len + self.output_len

    @property
    def mean_context(self) -> float:
        """Tokens cached on average over the decode [tokens]: depth, prompt and half the output."""
        return self.depth + self.prompt_len + self.output_len / 2.0


@registered_cache()
def _graphs(case: ServingCase) -> tuple[ServingLayers, ServingLayers, float]:
    arch = case.arch
    idle = 1.0 - arch.experts_per_token / arch.experts if arch.moe else 0.0
    kv_block = kv_cache_bytes_per_token(arch, case.kv_bytes) / arch.layers * case.mean_context
    prefill = fold(prefill_profile(arch, case.prompt_len, case.depth))
    decode = decode_layers(arch, case.mean_context, kv_block, idle)
    chunk = fold(prefill_profile(arch, min(case.prompt_len, case.prefill_chunk)))
    per_token = float(chunk.table.bytes.max()) / min(case.prompt_len, case.prefill_chunk)
    return prefill, decode, per_token


def evaluate_serving(case: ServingCase, table: DeviceTable, device: npt.ArrayLike, count: npt.ArrayLike,
                     batch: npt.ArrayLike, host: DeviceTable | None = None) -> ServingArrays:
    """Times and memory of serving ``case`` on every (device, count, batch); ``count`` devices
    run tensor parallel (or a layer split). With ``case.gpu_layers`` below the model's layers, the
    rest run on ``host`` (one CPU row, :mod:`sizer.passes.layer_offload`): their weights read from host
    memory and their FLOP on its cores, so each pass takes the devices' share plus the host's, and
    device memory holds only the devices' layers and their KV cache.

    Parameters
    ----------
    case : ServingCase
        The model, formats and lengths.
    table : DeviceTable
        The devices' rates (:func:`serving_table`).
    device : array_like
        Table rows [1], broadcast against ``count`` and ``batch``.
    count : array_like
        Devices per configuration [1].
    batch : array_like
        Concurrent sequences per configuration [1].
    host : DeviceTable or None
        One CPU row running offloaded layers (needed where ``case.gpu_layers`` leaves some off the devices).

    Returns
    -------
    ServingArrays
        Per configuration: prefill and decode seconds [s], bytes per device [B], fit and largest batch.
    """
    check_servable(case.arch)
    arch = case.arch
    d, counts, batches = np.broadcast_arrays(np.asarray(device, dtype=np.int64), np.asarray(count, dtype=float),
                                             np.asarray(batch, dtype=float))
    d, count, batch = d.ravel(), counts.ravel(), batches.ravel()
    prefill, decode, act_per_token = _graphs(case)
    stored = np.full(len(d), stored_weight_bytes(arch, case.weights))
    overhead = table.step_overhead[d]

    layer_split = case.split == Split.LAYER
    # a layer split passes every token through the devices in turn: the time of one device holding all layers
    tp = np.ones_like(count) if layer_split else count
    configs = Configs.of(d, tp, batch, 1, 0, tp=tp)
    first = step_seconds(prefill.table, table, configs, optimizer_state_bytes=0.0, kind=INFERENCE, weight_bytes=stored,
                         shape=Shape(blocks=arch.layers, hidden=arch.hidden, tokens_per_sample=case.prompt_len))
    touched = touched_experts(arch.experts, arch.experts_per_token, batch) if arch.moe else None
    extra = np.broadcast_to(decode.kv_bytes, (len(d), len(decode.kv_bytes)))
    if case.moe is not None and not layer_split:  # MLA's latent: every tensor rank reads all of it
        extra = extra * moe_decode.kv_read_factor(arch, count, case.moe)[:, None]
    if touched is not None:
        idle_read = (touched - arch.experts_per_token) / (arch.experts - arch.experts_per_token)
        extra = extra + idle_read[:, None] * decode.idle_expert_params[None, :] * stored[:, None] / batch[:, None]
    step = step_seconds(decode.table, table, configs, optimizer_state_bytes=0.0, kind=INFERENCE, weight_bytes=stored,
                        shape=Shape(blocks=arch.layers, hidden=arch.hidden, tokens_per_sample=1), extra_bytes=extra)

    share = case.gpu_share
    prefill_seconds, decode_seconds = first.step, step.step
    if case.moe is not None and not layer_split:  # the runtime's fused-MoE path, expert and attention split
        prefill_seconds = prefill_seconds + moe_decode.iteration_seconds(arch, table, d, count, stored, case.moe,
                                                                         batch * case.prompt_len)
        decode_seconds = decode_seconds + moe_decode.iteration_seconds(arch, table, d, count, stored, case.moe, batch)
    prefill_limit = first.physical_limit
    decode_compute, decode_memory = step.compute, step.memory
    if share < 1.0:
        if host is None:
            raise ValueError("offloaded layers need the host's table")
        # the host CPU runs its layers alone (one device, no split); the same layer tables and bytes
        host_configs = Configs.of(np.zeros(len(d), dtype=np.int64), 1.0, batch, 1, 0, tp=1.0)
        host_first = step_seconds(prefill.table, host, host_configs, optimizer_state_bytes=0.0, kind=INFERENCE, weight_bytes=stored,
                                  shape=Shape(blocks=arch.layers, hidden=arch.hidden, tokens_per_sample=case.prompt_len))
        host_step = step_seconds(decode.table, host, host_configs, optimizer_state_bytes=0.0, kind=INFERENCE, weight_bytes=stored,
                                 shape=Shape(blocks=arch.layers, hidden=arch.hidden, tokens_per_sample=1), extra_bytes=extra)
        prefill_seconds = share * first.step + (1 - share) * host_first.step + host.step_overhead[0]
        prefill_limit = share * first.physical_limit + (1 - share) * host_first.physical_limit
        decode_seconds = share * step.step + (1 - share) * host_step.step + host.step_overhead[0]
        decode_compute = share * step.compute + (1 - share) * host_step.compute
        decode_memory = share * step.memory + (1 - share) * host_step.memory
        overhead = overhead * (share > 0)

    weights = arch.params_total() * stored[0] / count * share
    kv_token = (np.asarray([kv_cache_bytes_per_token(arch, case.kv_bytes, int(t), case.context) for t in count])
                if not layer_split else kv_cache_bytes_per_token(arch, case.kv_bytes, context=case.context) / count)
    if case.moe is not None and case.moe.dp_attention and not layer_split:  # attention whole, each sequence's KV once
        weights = moe_decode.weights_per_device(arch, stored[0], count, case.moe) * share
        kv_token = kv_cache_bytes_per_token(arch, case.kv_bytes, context=case.context) / count
    kv_sequence = kv_token * case.context * share  # the host holds its layers' KV cache (llama.cpp)
    scale = table.storage_scale[d]
    logits = arch.vocab * LOGIT_BYTES
    chunk = np.minimum(batch * case.prompt_len, case.prefill_chunk)
    # tensor ranks split each layer's tensors; a layer split gives each device whole layers, at full width
    act_on_device = act_per_token * scale / tp  # [B per prompt token]
    activations = chunk * act_on_device + batch * logits
    reserve = table.framework_overhead[d]
    # a data-centre runtime's shares on GPUs and accelerators; CPUs and unified memory run llama.cpp-style runtimes,
    # which take every byte (unified memory: what the GPU may wire, set by the caller)
    on_cpu = np.asarray([table.devices[i].kind is DeviceKind.CPU or table.devices[i].unified_memory for i in np.atleast_1d(d)])
    memory_share = np.where(on_cpu, 1.0, case.memory_share)
    kv_share = np.where(on_cpu, 1.0, case.kv_free_share)
    memory = table.memory[d] * memory_share
    room = np.maximum(memory - weights - activations - reserve, 0.0) * kv_share  # for this batch's KV cache
    free = (memory - weights - reserve - case.prefill_chunk * act_on_device) * kv_share
    # fewer sequences than fill a prefill chunk hold the activations of their own prompts only: the larger of the
    # two counts is the most that fit, as ``fits`` judges a batch (each count fits; no larger one does)
    unchunked = np.maximum(memory - weights - reserve, 0.0) * kv_share
    per_prompt = case.prompt_len * act_on_device
    with np.errstate(divide="ignore", invalid="ignore"):
        max_batch = np.maximum(np.floor(np.maximum(free, 0.0) / (kv_sequence + logits * kv_share)),
                               np.floor(unchunked / (kv_sequence + (per_prompt + logits) * kv_share)))
    fits = (kv_sequence * batch <= room) & (weights + activations + reserve <= memory)
    on_host: np.ndarray | float = 0.0
    if share < 1.0:  # the host's RAM holds the offloaded layers' weights and KV cache, or nothing runs
        assert host is not None  # refused above: offloaded layers need the host's table
        host_weights, host_kv = host_share(case)
        on_host = host_weights + host_kv * batch
        fits = fits & (on_host <= host.memory[0])
        with np.errstate(divide="ignore", invalid="ignore"):
            max_batch = np.minimum(max_batch, np.floor(max(host.memory[0] - host_weights, 0.0) / host_kv))
    return ServingArrays(prefill_seconds=prefill_seconds + overhead, decode_seconds=decode_seconds + overhead,
                         decode_compute=decode_compute, decode_memory=decode_memory, weights=weights,
                         kv_cache=kv_sequence * batch, activations=activations, reserve=reserve,
                         fits=fits, max_batch=max_batch, host_memory=on_host, prefill_limit=prefill_limit)


def host_share(case: ServingCase) -> tuple[float, float]:
    """Bytes the host keeps for the layers offloaded to it: their weights [B] and their KV cache per
    sequence at the full context [B] (llama.cpp keeps both on the CPU; one host, nothing split).

    Parameters
    ----------
    case : ServingCase
        The model, formats, lengths and the layers kept on the devices.

    Returns
    -------
    tuple of (float, float)
        Offloaded weights [B] and offloaded KV cache per sequence [B].
    """
    offloaded = 1.0 - case.gpu_share
    weights = case.arch.params_total() * stored_weight_bytes(case.arch, case.weights) * offloaded
    kv = kv_cache_bytes_per_token(case.arch, case.kv_bytes, context=case.context) * case.context * offloaded
    return weights, kv


def total_tokens_per_second(batch: np.ndarray, output_len: int, prefill: np.ndarray, decode: np.ndarray) -> np.ndarray:
    """Output tokens per second over a batch's whole request, prefill included (as throughput
    benchmarks measure): :math:`B \\cdot n / (t_{prefill} + (n - 1) t_{decode})`.

    Parameters
    ----------
    batch : numpy.ndarray
        Sequences in the batch, :math:`B` [1].
    output_len : int
        Output tokens per sequence, :math:`n` [tokens].
    prefill : numpy.ndarray
        Time to first token [s].
    decode : numpy.ndarray
        One decode step [s].

    Returns
    -------
    numpy.ndarray
        Output tokens per second over the batch [tokens/s].

    >>> round(float(total_tokens_per_second(np.asarray([64.0]), 128, np.asarray([0.1]), np.asarray([0.02]))[0]), 1)
    3103.0
    """
    rate: np.ndarray = batch * output_len / (prefill + (output_len - 1) * decode)
    return rate


def compute_bound_batch(case: ServingCase, table: DeviceTable, device: int, count: int,
                        largest: int = 65536, host: DeviceTable | None = None) -> int | None:
    """The smallest batch (on a grid 4 % apart) at which a decode step is more compute- than
    memory-bound; None if it stays memory-bound up to ``largest`` (long contexts: KV reads grow with
    the batch as fast as the FLOP).

    Parameters
    ----------
    case : ServingCase
        The model, formats and lengths.
    table : DeviceTable
        The devices' rates.
    device : int
        The table row [1].
    count : int
        Devices [1].
    largest : int
        The largest batch tried [1].
    host : DeviceTable or None
        The host CPU running offloaded layers, if any.

    Returns
    -------
    int or None
        The batch [1] where decode turns compute-bound; None where it does not up to ``largest``.
    """
    grid = np.unique(np.round(np.geomspace(1, largest, 280)))
    arrays = evaluate_serving(case, table, np.full(len(grid), device), np.full(len(grid), count), grid, host)
    turned = np.flatnonzero(arrays.decode_compute > arrays.decode_memory)
    return int(grid[turned[0]]) if len(turned) else None


def replace_efficiencies(devices: tuple[Device, ...], memory: float, matrix: float, overhead: float) -> tuple[Efficiencies, ...]:
    """Serving efficiencies with other fitted values (for the fit in benchmarks/inference_accuracy.py).

    Parameters
    ----------
    devices : tuple of Device
        The devices, one entry each.
    memory : float
        Fraction of the memory bandwidth reached [1].
    matrix : float
        Fraction of the matrix peak reached [1].
    overhead : float
        Time per forward pass beyond the kernels [s].

    Returns
    -------
    tuple of Efficiencies
        One per device, of its kind.
    """
    return tuple(serving_efficiencies(d.kind, memory=memory, matrix=matrix, step_overhead=overhead) for d in devices)

