"""A training request resolved into what the engine runs: a layer table and the run's numbers.

Where the layers come from, in order: a profile (``workload``: measured with torch, built in or
a file), an architecture (``model``: by name or a Hugging Face ``config.json``), or a bare
parameter count — a generated decoder-only transformer for a token workload, a dense network
of ``O_f · P`` forward FLOP per sample otherwise. Each path states itself as an assumption.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from sizer.choices import Attention, Optimizer, Precision, parse_choice
from sizer.engine.layers import LayerTable, layer_table, with_trained_rows
from sizer.engine.roofline import Shape
from sizer.workloads.architecture import Architecture
from sizer.workloads.finetune import FineTune, adapter_profile, resolve_finetune
from sizer.errors import InputError
from sizer.hardware.precision import weight_bytes
from sizer.workloads.profile import Layer, Profile, load_profile
from sizer.results import Assumption
from sizer.units import parse_count
from sizer.workloads.request import Workload, WorkloadRequest, resolve_workload

DEFAULT_BYTES_FOR_MIXED = 2  # a stated activation figure under `mixed` is read as 16-bit


@dataclass(frozen=True)
class Job:
    """A checked training run. Samples and batches count ``sample_word`` (sequences for language models)."""

    description: str
    layers: LayerTable
    samples: float  # per epoch
    epochs: float
    batch_size: float  # samples per optimizer step, all devices
    micro_batch: float | None  # samples per device per pass, if given
    batch_given: bool  # False: the default batch, raised to one sample per device where devices outnumber it
    precision: Precision
    optimizer: Optimizer
    tokens_per_sample: float  # seq_len for token workloads, else 1
    token_mode: bool
    workload: Workload  # the parsed request (parameter count, units, host figures)
    assumptions: tuple[Assumption, ...]
    arch: Architecture | None = None  # a transformer's shape: tensor and pipeline parallelism need it
    finetune: FineTune | None = None  # LoRA/QLoRA: adapters over a frozen base (the adapter rows are in ``layers``); None: full

    @functools.cached_property
    def shape(self) -> Shape | None:
        if self.arch is None:
            return None
        arch = self.arch
        return Shape(blocks=arch.layers + arch.encoder_layers, hidden=arch.hidden,
                     tokens_per_sample=self.tokens_per_sample, moe_blocks=arch.moe_blocks,
                     routed_per_token=arch.experts_per_token * (arch.capacity_factor or 1.0) if arch.moe else 0.0)

    @property
    def params(self) -> float:
        return self.layers.total_params

    @property
    def summary(self) -> str:
        """The job in one line, for a result's heading."""
        short = _short
        if not self.samples:
            amount = f"batches of {short(self.batch_size)} {self.sample_word}s"
        elif self.token_mode:
            amount = f"{short(self.samples * self.tokens_per_sample)} tokens"
        else:
            amount = f"{short(self.samples)} {self.sample_word}s" + (f" x {short(self.epochs)} epochs" if self.epochs != 1 else "")
        method = f", {self.finetune.method.value} r={self.finetune.rank}" if self.finetune else ""
        return f"{self.description} trained on {amount}, {self.precision.value}, {self.optimizer.value}{method}"

    @property
    def sample_word(self) -> str:
        return "sequence" if self.token_mode else self.layers.sample

    def batch_for(self, count):
        """The global batch on ``count`` devices (array or number)."""
        import numpy as np

        return self.batch_size if self.batch_given else np.maximum(self.batch_size, count)

    def steps_for(self, batch) -> float:
        import numpy as np

        return np.maximum(1.0, np.ceil(self.samples * self.epochs / batch))

    @property
    def training_flops(self) -> float:
        """``O_b · F_fwd · S · E`` with the layers' forward FLOP (spec §3.2); a LoRA/QLoRA base
        counts 2 x its forward FLOP (no weight gradients), its adapters 3 x."""
        from sizer.engine.constants import BACKWARD_FLOP_FACTOR
        from sizer.engine.roofline import FROZEN, layer_pass

        if self.finetune is None:
            return BACKWARD_FLOP_FACTOR * self.layers.total_forward_flops * self.samples * self.epochs
        factors = layer_pass(self.layers, FROZEN).flops
        return float(factors * self.layers.forward_flops @ self.layers.multiplicity) * self.samples * self.epochs


def _short(number: float) -> str:
    return f"{number:.3g}".replace("e+0", "e").replace("e+", "e")


_TABLES: dict[int, tuple[Profile, LayerTable]] = {}


def _folded(profile: Profile) -> LayerTable:
    """The profile's layer table, folded once per profile object (cached graphs and profiles repeat)."""
    if len(profile.layers) > CACHED_LAYERS:  # an uncached deep graph: keeping it here would hold it in memory
        return layer_table(profile)
    kept = _TABLES.get(id(profile))
    if kept is None or kept[0] is not profile:
        if len(_TABLES) > 128:
            _TABLES.clear()
        kept = _TABLES[id(profile)] = (profile, layer_table(profile))
    return kept[1]


def dense_profile(params: float, forward_flops: float, activation_bytes_fp32: float) -> Profile:
    """One matrix layer carrying every parameter: the seed-004 model (``F = O_f P``) as a layer graph."""
    return Profile(name="dense", description=f"dense network of {params:.4g} parameters", sample="sample",
                   generated_by="generated from the parameter count (seed 004 eq. 3: O_f P forward FLOP per sample)",
                   layers=[Layer(name="dense", kind="matmul", forward_flops=forward_flops, bytes=activation_bytes_fp32,
                                 params=params, activation_bytes=activation_bytes_fp32, kernels=2)])


# Graphs of up to CACHED_BLOCKS blocks are kept (every built-in model, generated decoders to ~1e12
# parameters: ~2.5 MB each, so the cache holds at most ~80 MB); deeper ones (up to
# architecture.MAX_BLOCKS, 0.25 s and 12 MB each) are built per request, so that distinct
# parameter counts cannot fill memory with graphs.
CACHED_BLOCKS = 200
CACHED_LAYERS = 20 * CACHED_BLOCKS  # graph layers of such a graph (at most 17 per block, T5's decoder)


def _graph(arch: Architecture, seq_len: int, flash: bool = True) -> Profile:
    if arch.layers + arch.encoder_layers > CACHED_BLOCKS:
        from sizer.workloads.layer_graph import layer_graph

        return layer_graph(arch, seq_len, flash_attention=flash)
    return _cached_graph(arch, seq_len, flash)


@functools.lru_cache(maxsize=32)
def _cached_graph(arch: Architecture, seq_len: int, flash: bool) -> Profile:
    from sizer.workloads.layer_graph import layer_graph

    return layer_graph(arch, seq_len, flash_attention=flash)


def _architecture_profile(request: WorkloadRequest, params: float | None,
                          seq_len: int) -> tuple[Profile, str, Architecture]:
    from sizer.workloads.registry import decoder_for_params, resolve_model

    flash = parse_choice(Attention, request.attention, "attention") is Attention.FLASH
    if request.model is not None:
        arch = resolve_model(request.model)
        return _graph(arch, seq_len, flash), f"{arch.name} ({arch.source})", arch
    arch, basis = decoder_for_params(params)
    return _graph(arch, seq_len, flash), basis, arch


def resolve_job(request: WorkloadRequest, *, need_samples: bool = True) -> Job:
    """Check a training request and build its layer table (module docstring)."""
    if request.model is not None and request.workload is not None:
        raise InputError("model", request.model, "either a model or a workload profile, not both")
    from_layers = request.model is not None or request.workload is not None
    if from_layers and request.params is not None:
        raise InputError("params", request.params, "no parameter count with a model or workload: it has its own")
    base = request.model_copy(update={"params": request.params if request.params is not None else 1.0}) \
        if from_layers else request
    workload = resolve_workload(base, need_samples=need_samples and request.workload is None)
    precision = parse_choice(Precision, request.precision, "precision")
    optimizer = parse_choice(Optimizer, request.optimizer, "optimizer")
    arch = None
    # FLOP and activations of a profile or a layer graph are its own, not the parameter-count rule's
    graph = from_layers or workload.token_mode
    assumptions = [a for a in workload.assumptions if a.name not in ("forward FLOP per sample", "activations") or not graph]

    if request.workload is not None:
        profile = load_profile(request.workload, request.seq_len)
        if request.batch_size is None:
            raise InputError("batch_size", None, f"the global batch size of the {profile.name} workload "
                                                 f"({profile.sample}s per step)")
        described = profile.name
        assumptions.insert(0, Assumption(name="workload profile", value=f"{profile.name}: {len(profile.layers)} layers, "
                                         f"{profile.forward_flops:.4g} forward FLOP per {profile.sample}",
                                         source=profile.generated_by))
    elif workload.token_mode:
        seq_len = workload.seq_len
        profile, basis, arch = _architecture_profile(request, workload.params, seq_len)
        described = arch.name if request.model is not None else f"{_short(workload.params)}-parameter transformer"
        assumptions.insert(0, Assumption(name="layers", value=f"{len(profile.layers)} layers generated per sequence of "
                                         f"{seq_len} tokens", source=basis))
        if arch.moe:
            shared = f" + {arch.shared_experts} shared" if arch.shared_experts else ""
            dense = f"; the first {arch.dense_layers} blocks dense" if arch.dense_layers else (
                f"; every {arch.moe_every}th block a mixture" if arch.moe_every > 1 else "")
            assumptions.insert(1, Assumption(
                name="experts", value=f"{arch.params_total():.4g} parameters in all (memory), {arch.params_active():.4g} "
                f"active per token (FLOP): {arch.experts_per_token} of {arch.experts} routed experts{shared} in "
                f"{arch.moe_blocks} blocks{dense}" + (f"; capacity factor {arch.capacity_factor:g}" if arch.capacity_factor
                                                      else "; dropless (no capacity padding)"),
                source=arch.source, verified=arch.verified))
        if arch.mla:
            assumptions.insert(1, Assumption(
                name="latent attention", value=f"multi-head latent attention: KV latent {arch.kv_lora_rank} + rotary key "
                f"{arch.rope_head_dim} per token (the KV cache), query latent {arch.q_lora_rank or 'none'}",
                source="DeepSeek-AI 2024, DeepSeek-V2 §2.1 (docs/references.md [deepseek-v2])"))
        assumptions.insert(1, Assumption(
            name="attention", value=f"{request.attention}: " + ("softmax statistics kept, scores recomputed (no s x s "
                                                                 "activations)" if request.attention == "flash" else
                                                                 "s x s scores, softmax and dropout mask kept"),
            source="Korthikanti et al. 2022 §4.1 (docs/references.md [korthikanti]); --attention flash|standard"))
    elif request.model is not None:
        raise InputError("tokens", None, "the number of training tokens for a language model (--tokens)")
    else:
        scale = 4 / weight_bytes(precision.value) if precision is not Precision.MIXED else 4 / DEFAULT_BYTES_FOR_MIXED
        activations = workload.activation_memory_per_sample
        fp32_bytes = activations.to("B").magnitude * scale if activations is not None else 0.0
        profile = dense_profile(workload.params, workload.forward_flops_per_sample.to("FLOP").magnitude, fp32_bytes)
        described = f"{_short(workload.params)}-parameter model"
    layers = _folded(profile)
    finetune = resolve_finetune(request.method, request.lora_rank, request.lora_targets, arch, precision.value,
                                layers.total_params)
    if finetune is not None:
        adapters = adapter_profile(arch, int(profile.seq_len), finetune.rank, finetune.targets)
        layers = with_trained_rows(layers, layer_table(adapters))
        assumptions.extend(finetune.assumptions)

    tokens_per_sample = float(profile.seq_len or workload.seq_len or 1) if workload.token_mode else 1.0
    if workload.token_mode and request.workload is not None and profile.seq_len is None:
        raise InputError("tokens", request.tokens, f"samples: the {profile.name} profile has no sequence length")
    given = request.samples is not None or request.tokens is not None
    samples = workload.samples / tokens_per_sample if given else 0.0  # 0: a step time only
    batch = workload.batch_size / tokens_per_sample
    if batch < 1:
        raise InputError("batch_size", request.batch_size,
                         f"at least one sequence ({tokens_per_sample:.0f} tokens) per step")
    micro = None
    if request.micro_batch is not None:
        micro = parse_count("micro_batch", request.micro_batch)
        if micro > batch:
            raise InputError("micro_batch", request.micro_batch, f"at most the global batch ({batch:g} {profile.sample}s)")
    return Job(description=described, layers=layers, samples=samples, epochs=workload.epochs, batch_size=batch,
               micro_batch=micro, batch_given=request.batch_size is not None, precision=precision, optimizer=optimizer, tokens_per_sample=tokens_per_sample,
               token_mode=workload.token_mode, workload=workload, assumptions=tuple(assumptions), arch=arch,
               finetune=finetune)


def job_from_profile(profile: Profile, batch_size: float, precision: str = "fp32", optimizer: str = "adam", *,
                     samples: float = 0.0, micro_batch: float | None = None) -> Job:
    """A job straight from a profile: for calibration, reference runs and validation predictions."""
    request = WorkloadRequest(params=max(profile.params, 1.0), samples=samples or batch_size, batch_size=batch_size,
                              precision=precision, optimizer=optimizer)
    workload = resolve_workload(request)
    return Job(description=f"{profile.name} ({profile.description})", layers=layer_table(profile), samples=samples,
               epochs=1.0, batch_size=float(batch_size), micro_batch=micro_batch, batch_given=True,
               precision=parse_choice(Precision, precision, "precision"),
               optimizer=parse_choice(Optimizer, optimizer, "optimizer"), tokens_per_sample=1.0, token_mode=False,
               workload=workload, assumptions=())
