"""The setup an answer chose, as typed values a tool's flags are written from.

One frozen description per kind of question: :class:`ServingSetup` (a data-centre serving engine),
:class:`LocalSetup` (llama.cpp on one machine), :class:`TrainingSetup` (a training or fine-tuning
layout). :mod:`sizer.launch.readers` reads each from the request and its answer (the result object, never
its printed text), so that the flags cannot say something the answer did not.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sizer.choices import KvCache, Method, Optimizer, Recompute

if TYPE_CHECKING:
    from sizer.hardware.schema import Device


@dataclass(frozen=True)
class ServingSetup:
    """One serving replica and its copies, as the answer sized them.

    Parameters
    ----------
    model : str
        The checkpoint's hub id where sizer knows it, else the model's name as given.
    model_known : bool
        Whether ``model`` is a hub id (False: the user puts their checkpoint's id or path in its place).
    weights : str
        The weight format (:mod:`sizer.runtimes.formats` name: ``bf16``, ``fp8``, ``awq-int4-g128`` ...).
    kv_cache : KvCache
        The KV-cache storage.
    tensor_parallel : int
        Devices one layer's work is split over [1].
    pipeline_parallel : int
        Stages the layers are split into (a layer split under a serving engine) [1].
    replicas : int
        Copies of the replica the answer needs (1 without a load) [1].
    max_model_len : int
        Tokens of context a sequence may hold: depth, prompt and output [tokens].
    max_running : int
        Sequences running at once per replica: the answer's batch, or the scheduler's limit under load [1].
    token_budget : int or None
        Tokens per iteration under chunked prefill (under load), None: the engine's default [tokens].
    experts : int
        Routed experts per layer (1: a dense model).
    device : Device
        The catalog device.
    count : int
        Devices per replica [1].
    engine : str or None
        The serving engine the answer was computed with (given, or under load the default); None: the
        data-centre serving model of a static batch, no engine named.
    fits : bool
        Whether the answer found it fits.
    lengths_vary : bool
        Whether prompt and output lengths came from a set or a trace (``max_model_len`` is then the model's context).
    memory_share : float
        Share of the device memory the engine takes for weights, activations and cache, as sizer models the
        engine's default (:class:`sizer.runtimes.serving_runtimes.ServingProfile`) [1].
    kv_free_share : float
        Share of the memory left after weights and activations that the KV cache takes (same source) [1].
    expert_parallel : bool
        A mixture's experts split whole over the replica's devices (:mod:`sizer.passes.moe_decode`).
    dp_attention : bool
        Data-parallel attention over the replica's devices, with expert parallelism.
    gguf_file : bool
        The weights are a GGUF file (a mix of :mod:`sizer.runtimes.gguf`), read by the engine from the file.
    """

    model: str
    model_known: bool
    weights: str
    kv_cache: KvCache
    tensor_parallel: int
    pipeline_parallel: int
    replicas: int
    max_model_len: int
    max_running: int
    token_budget: int | None
    experts: int
    device: Device
    count: int
    engine: str | None
    fits: bool
    lengths_vary: bool
    memory_share: float
    kv_free_share: float
    expert_parallel: bool = False
    dp_attention: bool = False
    gguf_file: bool = False


@dataclass(frozen=True)
class LocalSetup:
    """llama.cpp on one machine, as the answer ran it.

    Parameters
    ----------
    model : str
        The model's name as given (the GGUF file is named after it).
    weights : str
        The GGUF type of the weights (``q4_k_m``, ``q8_0``, ``bf16`` ...).
    kv_cache : KvCache
        The KV-cache storage (``-ctk``/``-ctv``).
    layers : int
        The model's transformer blocks [1].
    gpu_layers : int or None
        Blocks on the GPU(s) where some run on the host CPU; None: every block on the GPU(s).
    context : int
        Tokens of context a sequence holds: depth, prompt and output [tokens].
    sequences : int
        Sequences served at once (the answer's batch; llama-server's parallel slots) [1].
    flash_attention : bool
        Fused attention on (the answer's setting: given, or llama.cpp's default).
    ubatch : int or None
        Prompt tokens per pass where given [tokens].
    threads : int or None
        CPU threads where the answer computes on a CPU (given, or the CPU's physical cores) [1].
    layer_shares : tuple of int
        Blocks on each GPU where several hold the model (a layer split); empty for one device.
    split : str
        ``layer`` (blocks over devices) or ``tensor`` (each matrix over devices).
    on_gpu : bool
        Whether a GPU computes (False: a CPU-only run, or Apple silicon's unified memory is a GPU too).
    fits : bool
        Whether the answer found it fits.
    """

    model: str
    weights: str
    kv_cache: KvCache
    layers: int
    gpu_layers: int | None
    context: int
    sequences: int
    flash_attention: bool
    ubatch: int | None
    threads: int | None
    layer_shares: tuple[int, ...]
    split: str
    on_gpu: bool
    fits: bool


@dataclass(frozen=True)
class TrainingSetup:
    """A training or fine-tuning layout as the answer chose (or was given) it.

    Parameters
    ----------
    model : str or None
        The model's name as given (None: a parameter count or a profile).
    tp, pp, cp, dp, ep : int
        Tensor, pipeline, context, data and expert parallel sizes [1]; ``tp*pp*cp*dp`` is the device count.
    interleave : int
        Virtual pipeline stages per pipeline rank [1].
    zero : int
        ZeRO stage 0-3.
    recompute : Recompute
        Activation recomputation.
    micro_batch : int
        Samples per device per pass [1].
    accumulation : int or None
        Passes per optimizer step [1]; None where the answer does not choose it (a memory answer).
    global_batch : int or None
        Samples per optimizer step over all devices [1]; None where the answer does not choose it.
    seq_len : int or None
        Tokens per sample (language models) [tokens].
    layers : int or None
        Transformer blocks (None: not a transformer) [1].
    precision : str
        The training precision the answer used (``bf16``, ``fp16``, ``fp8``, ``fp32``).
    optimizer : Optimizer
        The optimizer.
    method : Method
        full, lora or qlora.
    lora_rank : int or None
        The adapters' rank (LoRA, QLoRA).
    lora_targets : tuple of str
        The adapted matrices (``q``, ``k``, ``v``, ``o``, ``gate``, ``up``, ``down``).
    offload : bool
        Optimizer states and master weights in host memory (ZeRO-Offload).
    count : int
        Devices [1].
    devices_per_node : int
        Devices one node holds (the node model's scale-up domain) [1].
    device : Device
        The catalog device.
    fits : bool or None
        Whether the answer found it fits (None: no device to check).
    framework : str or None
        A training framework or recipe the request named, where one is named (another option's field).
    """

    model: str | None
    tp: int
    pp: int
    cp: int
    dp: int
    ep: int
    interleave: int
    zero: int
    recompute: Recompute
    micro_batch: int
    accumulation: int | None
    global_batch: int | None
    seq_len: int | None
    layers: int | None
    precision: str
    optimizer: Optimizer
    method: Method
    lora_rank: int | None
    lora_targets: tuple[str, ...]
    offload: bool
    count: int
    devices_per_node: int
    device: Device | None
    fits: bool | None
    framework: str | None = None

    @property
    def nodes(self) -> int:
        """Nodes the devices fill, at most ``devices_per_node`` each [1]."""
        return max(1, -(-self.count // self.devices_per_node))

    @property
    def devices_in_node(self) -> int:
        """Devices used in each node [1]."""
        return min(self.count, self.devices_per_node)


def model_id(model: object) -> tuple[str, bool]:
    """The checkpoint a tool loads: a shipped config's hub id, else the name or path as given.

    Parameters
    ----------
    model : str, FileRef or None
        The request's model.

    Returns
    -------
    tuple of (str, bool)
        The id or name, and whether it is a hub id sizer knows.
    """
    from sizer.workloads.shipped import find_shipped

    if model is None:
        return "MODEL", False
    name = str(model)
    if isinstance(model, str):
        shipped = find_shipped(name)
        if shipped is not None:
            return shipped.hub_id, True
        if "/" in name and not name.endswith(".json"):
            return name, True
    return name, False
