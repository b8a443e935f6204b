"""A training request resolved into what the engine runs: a layer table and the run's numbers.

In the engine, not in ``sizer.workloads``: the engine consumes workloads (profiles, architectures,
layer graphs) and this module builds the engine's tables from them, so the dependency runs one way.

Where the layers come from, in order: a profile (``workload``: measured with torch, built in or
a file), an architecture (``model``: by name or a Hugging Face ``config.json``), or a bare
parameter count — a generated decoder-only transformer for a token workload, a dense network
of ``O_f · P`` forward FLOP per sample otherwise. Each path states itself as an assumption.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sizer.choices import Attention, Optimizer, Precision
from sizer.engine.layers import LayerTable, layer_table, with_trained_rows
from sizer.engine.recipe import Recipe, resolve_recipe
from sizer.engine.step_inputs import Pass, Shape
from sizer.engine.workload import DEFAULT_SEQ_LEN, Workload, resolve_workload
from sizer.errors import InputError
from sizer.formulas import batch_rule as _batch
from sizer.frameworks import DEFAULT_LAYOUTS, Layouts
from sizer.frameworks.checks import framework_of
from sizer.hardware.precision import weight_bytes
from sizer.memo import registered_cache
from sizer.results import Assumption
from sizer.schemas.base import WorkloadRequest
from sizer.units import Quantity
from sizer.workloads.architecture import Architecture
from sizer.workloads.finetune import FineTune, adapter_profile, resolve_finetune

if TYPE_CHECKING:  # the registry is imported where a model is resolved (it loads the architectures)
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

    from sizer.workloads.profile import Profile  # the profile models only where a profile is read or built
    from sizer.workloads.registry import PretrainingBatch

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
    batch_given: bool  # False: the default batch (never changed silently: a layout that changes it says so)
    precision: Precision
    optimizer: Optimizer
    tokens_per_sample: float  # seq_len for token workloads, else 1
    token_mode: bool
    workload: Workload  # the parsed request (parameter count, units, host figures)
    assumptions: tuple[Assumption, ...]
    arch: Architecture | None = None  # a transformer's shape: tensor and pipeline parallelism need it
    finetune: FineTune | None = None  # LoRA/QLoRA: adapters over a frozen base (the adapter rows are in ``layers``); None: full
    recipe: Recipe = Recipe()  # state precision, optimizer, step in backward, offloads, loss (sizer.engine.recipe)
    sample_tokens: float | None = None  # real tokens of a padded sample (None: packed or full-length sequences)
    # LoRA/QLoRA steps run by an eager framework (litgpt, PEFT): timed with sizer.engine.eager's constants;
    # False: fused kernels as pre-training runs them (MLPerf's tuned LoRA submissions)
    eager: bool = True
    # the layouts the named framework (or, with none, some framework) runs: the search keeps to them
    layouts: Layouts = DEFAULT_LAYOUTS

    @property
    def real_tokens_per_sample(self) -> float:
        """Tokens of data one sample carries [token]: its sequence length when packed, fewer when padded."""
        return self.sample_tokens if self.sample_tokens is not None else self.tokens_per_sample

    @property
    def state_bytes(self) -> float:
        """Optimizer state per trained parameter under the recipe [B]."""
        return self.recipe.state_bytes()

    @functools.cached_property
    def shape(self) -> Shape | None:
        """What tensor and pipeline parallelism need of the architecture.

        Returns
        -------
        Shape or None
            Blocks, hidden size and tokens per sample; None for a profiled or dense workload.
        """
        if self.arch is None:
            return None
        arch = self.arch
        return Shape(blocks=arch.layers + arch.encoder_layers, hidden=arch.hidden,
                     tokens_per_sample=self.tokens_per_sample, moe_blocks=arch.moe_blocks,
                     routed_per_token=arch.experts_per_token * (arch.capacity_factor or 1.0) if arch.moe else 0.0)

    @property
    def params(self) -> float:
        """Every parameter of the layers, trained or frozen.

        Returns
        -------
        float
            Parameters [1].
        """
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
        """What one sample is, for messages.

        Returns
        -------
        str
            ``sequence`` for a token workload, else the profile's word (``image``, ``sample``).
        """
        return "sequence" if self.token_mode else self.layers.sample

    def steps_for(self, batch: float | npt.NDArray[np.float64]) -> float | npt.NDArray[np.float64]:
        """Optimizer steps of the whole run at a global batch.

        Parameters
        ----------
        batch : float or numpy.ndarray
            Global batch [sample].

        Returns
        -------
        float or numpy.ndarray
            ``max(1, ceil(S E / B))`` steps [1].
        """
        steps: float | npt.NDArray[np.float64] = np.maximum(1.0, np.ceil(self.samples * self.epochs / batch))
        return steps

    @property
    def pass_kind(self) -> Pass:
        """The engine's pass for this job: forward + backward at the workload's ``O_b``, a frozen
        base with trained adapters for LoRA/QLoRA (:func:`sizer.engine.roofline.training_passes`)."""
        from sizer.engine.step_inputs import training_passes

        training, frozen = training_passes(self.workload.backward_factor)
        return training if self.finetune is None else frozen

    @property
    def training_flops(self) -> float:
        r"""Model FLOP of the whole run, the one count that ``compute``, ``time`` and MFU share.

        .. math::

            C_\text{train} = S \, E \sum_i o_i \, F_{\text{fwd}, i} \, m_i

        with ``o_i = O_b`` (3) for trained rows and ``1 + (O_b - 1)/2`` (2) for a frozen LoRA/QLoRA base.

        Returns
        -------
        float
            Training compute [FLOP].

        References
        ----------
        [seed-004]
        """
        from sizer.engine.roofline import model_flops_per_sample

        return model_flops_per_sample(self.layers, self.pass_kind) * self.samples * self.epochs


def _short(number: float) -> str:
    return f"{number:.3g}".replace("e+0", "e").replace("e+", "e")


def dense_profile(params: float, forward_flops: float, activation_bytes_fp32: float) -> Profile:
    """One matrix layer carrying every parameter: the seed-004 model (``F = O_f P``) as a layer graph.

    Parameters
    ----------
    params : float
        Parameters [1].
    forward_flops : float
        Forward FLOP per sample [FLOP].
    activation_bytes_fp32 : float
        Activations kept per sample at FP32 storage [B].

    Returns
    -------
    Profile
        A one-layer profile.

    References
    ----------
    [seed-004]
    """
    from sizer.workloads.profile import Layer, Profile

    return Profile(name="dense", description=f"dense network of {params:.4g} parameters", sample="sample",
                   generated_by="generated from the parameter count (seed 004 eq. 3: O_f P forward FLOP per sample)",
                   layers=[Layer(name="dense", kind="matmul", forward_flops=forward_flops, bytes=activation_bytes_fp32,
                                 params=params, activation_bytes=activation_bytes_fp32, kernels=2)])


# Tables of graphs of up to CACHED_BLOCKS blocks are kept (every built-in model, generated decoders to ~1e12
# parameters), in the process and on disk; deeper ones (up to architecture.MAX_BLOCKS, 0.25 s and 12 MB of graph
# each) are built per request, so that distinct parameter counts cannot fill memory or the disk with them.
CACHED_BLOCKS = 200


def _graph(arch: Architecture, seq_len: int, flash: bool = True) -> LayerTable:
    """A transformer's layer graph folded into its table (kept for graphs of at most CACHED_BLOCKS blocks)."""
    if arch.layers + arch.encoder_layers > CACHED_BLOCKS:
        return _graph_table(arch, seq_len, flash)
    return _cached_graph(arch, seq_len, flash)


def _graph_table(arch: Architecture, seq_len: int, flash: bool) -> LayerTable:
    from sizer.workloads.layer_graph import layer_graph

    return layer_table(layer_graph(arch, seq_len, flash_attention=flash))


# The code a kept table was built by: a change to any of these gives it a new disk entry
_GRAPH_CODE = ("engine/job.py", "engine/layers.py", "workloads/architecture.py", "workloads/layer_graph.py",
               "workloads/profile.py")


def _build_graph(arch: Architecture, seq_len: int, flash: bool) -> LayerTable:
    """:func:`_graph_table`, read from the disk cache where a process left it: a graph's ~300 validated layers
    and their folding are ~3 ms of a process's first question (`sizer recommend`'s default one among them)."""
    from pathlib import Path

    from sizer.diskcache import cached, file_stamp, key_of  # (here: job.py's import lines are the engine's own)

    root = Path(__file__).resolve().parent.parent
    try:  # the architecture's repr holds every figure of its shape (a frozen dataclass of numbers and words)
        key = key_of([file_stamp(root / name) for name in _GRAPH_CODE], repr(arch), seq_len, flash)
    except OSError:
        return _graph_table(arch, seq_len, flash)
    return cached("layer-graph", key, lambda: _graph_table(arch, seq_len, flash))


_cached_graph = registered_cache()(_build_graph)


class _Layers(NamedTuple):  # a record: a third of a frozen dataclass's start-up cost (Python 3.11)
    """Where a job's layers came from: their folded table (its sample word and sequence length the profile's), and
    how to describe them."""

    table: LayerTable
    described: str
    assumptions: tuple[Assumption, ...]  # put before the workload's own
    arch: Architecture | None = None


def _profile_layers(request: WorkloadRequest, workload: Workload) -> _Layers:
    assert request.workload is not None  # _layers calls this only for a request that names a profile
    from sizer.workloads.workload_profile import find_profile  # a --workload's readers, only for one

    profile = find_profile(request.workload, request.seq_len)
    if request.batch_size is None:
        raise InputError("batch_size", None, f"the global batch size of the {profile.name} workload "
                                             f"({profile.sample}s per step)")
    if workload.token_mode and profile.seq_len is None:
        raise InputError("tokens", request.tokens, f"samples: the {profile.name} profile has no sequence length")
    note = Assumption(name="workload profile", value=f"{profile.name}: {len(profile.layers)} layers, "
                      f"{profile.forward_flops:.4g} forward FLOP per {profile.sample}", source=profile.generated_by)
    return _Layers(layer_table(profile), profile.name, (note,))


def _transformer_layers(request: WorkloadRequest, workload: Workload) -> _Layers:
    attention = request.attention
    if request.model is not None:  # the registry (models by name) only where a model is named
        from sizer.workloads.registry import resolve_model

        arch = resolve_model(request.model)
        basis, described = f"{arch.name} ({arch.source})", arch.name
    else:
        from sizer.workloads.decoder_shape import decoder_for_params

        arch, basis = decoder_for_params(workload.params)
        described = f"{_short(workload.params)}-parameter transformer"
    assert workload.seq_len is not None  # resolve_workload gives a token workload a sequence length
    table = _graph(arch, workload.seq_len, attention is Attention.FLASH)
    notes: tuple[Assumption, ...] = (Assumption(name="layers", value=f"{table.layer_count} layers generated per sequence of "
                        f"{workload.seq_len} tokens", source=basis),
             Assumption(name="attention", value=f"{attention.value}: " + (
                 "softmax statistics kept, scores recomputed (no s x s activations)" if attention is Attention.FLASH
                 else "s x s scores, softmax and dropout mask kept"),
                 source="Korthikanti et al. 2022 §4.1 (docs/references.md [korthikanti]); --attention flash|standard"))
    if arch.mla:
        notes += (Assumption(
            name="latent attention", value=f"multi-head latent attention: KV latent {arch.kv_lora_rank} + rotary key "
            f"{arch.rope_head_dim} per token (the KV cache), query latent {arch.q_lora_rank or 'none'}",
            source="DeepSeek-AI 2024, DeepSeek-V2 §2.1 (docs/references.md [deepseek-v2])"),)
    if arch.sliding_window:
        notes += (Assumption(
            name="sliding window", value=f"{arch.sliding_blocks} of {arch.layers} blocks attend over the last "
            f"{arch.sliding_window} tokens only; counted as full attention here (an upper bound on their FLOP): no "
            "measurement shows training kernels skipping the band, and Megatron-Bridge's gpt-oss runs measure slower "
            "than even the full count (benchmarks/ACCURACY.md); serving estimates count the band",
            source=arch.source, verified=arch.verified),)
    if arch.moe:
        shared = f" + {arch.shared_experts} shared" if arch.shared_experts else ""
        dense = f"; the first {arch.dense_layers} blocks dense" if arch.dense_layers else (
            f"; every {arch.moe_every}th block a mixture" if arch.moe_every > 1 else "")
        notes += (Assumption(
            name="experts", value=f"{arch.params_total():.4g} parameters in all (memory), {arch.params_active():.4g} "
            f"active per token (FLOP): {arch.experts_per_token} of {arch.experts} routed experts{shared} in "
            f"{arch.moe_blocks} blocks{dense}" + (f"; capacity factor {arch.capacity_factor:g}" if arch.capacity_factor
                                                  else "; dropless (no capacity padding)"),
            source=arch.source, verified=arch.verified),)
    return _Layers(table, described, notes, arch)


def _dense_layers(workload: Workload, precision: Precision) -> _Layers:
    # a stated activation figure is at the training precision; profiles count FP32 storage
    scale = 4 / weight_bytes(precision) if precision is not Precision.MIXED else 4 / DEFAULT_BYTES_FOR_MIXED
    activations = workload.activation_memory_per_sample
    fp32_bytes = activations.to("B").magnitude * scale if activations is not None else 0.0
    profile = dense_profile(workload.params, workload.forward_flops_per_sample.to("FLOP").magnitude, fp32_bytes)
    return _Layers(layer_table(profile), f"{_short(workload.params)}-parameter model", ())


def _layers(request: WorkloadRequest, workload: Workload, precision: Precision) -> _Layers:
    """The job's layers from the one source the request names (module docstring)."""
    if request.workload is not None:
        return _profile_layers(request, workload)
    if workload.token_mode:
        return _transformer_layers(request, workload)
    if request.model is not None:
        raise InputError("tokens", None, "the number of training tokens for a language model (--tokens)")
    return _dense_layers(workload, precision)


def _check_sources(request: WorkloadRequest) -> bool:
    """Refuse two sources of layers at once; True where the layers (and so the parameters) are given."""
    if request.model is not None and request.workload is not None:
        raise InputError("model", request.model, "either a model or a workload profile, not both")
    from_layers = request.model is not None or request.workload is not None
    if from_layers and request.params is not None:
        raise InputError("params", request.params, "no parameter count with a model or workload: it has its own")
    return from_layers


def _padding(request: WorkloadRequest, workload: Workload, tokens_per_sample: float) -> tuple[float, Assumption] | None:
    """(real tokens per sample, the assumption that says it) for padded samples, None for packed ones; or
    InputError naming ``sample_tokens``."""
    if request.sample_tokens is None:
        return None
    if not workload.token_mode:
        raise InputError("sample_tokens", request.sample_tokens, "a token workload (--tokens): padding is counted in tokens")
    if request.sample_tokens > tokens_per_sample:
        raise InputError("sample_tokens", request.sample_tokens, f"at most the sequence length ({tokens_per_sample:.0f} "
                                                                 "tokens) that samples are padded to")
    share = 1.0 - request.sample_tokens / tokens_per_sample
    return float(request.sample_tokens), Assumption(
        name="padding", value=f"samples of {request.sample_tokens} real tokens padded to {tokens_per_sample:.0f}: "
        f"{share:.0%} of each sequence's compute is padding (packing sequences would remove it); memory is the "
        "padded sequence's", source="given (sample_tokens); Hugging Face DataCollatorWithPadding / torchtune "
        "packed=False pad each batch, packed datasets concatenate samples")


def _batches(request: WorkloadRequest, workload: Workload, tokens_per_sample: float,
             sample: str, given: bool, batch_given: bool = True,
             sample_tokens: float | None = None) -> tuple[float, float, float | None]:
    """(samples per epoch, global batch, micro-batch) in the job's samples (sequences for token workloads);
    ``given``: whether the run's length was given (else 0 samples: a step time only); ``batch_given``:
    whether the user gave the batch (a default is not refused for a short run); ``sample_tokens``: the
    real tokens of a padded sample, which the run's tokens are divided into."""
    samples = workload.samples / (sample_tokens or tokens_per_sample) if given else 0.0  # 0: a step time only
    batch = workload.batch_size / tokens_per_sample
    if batch < 1:
        raise InputError("batch_size", request.batch_size,
                         f"at least one sequence ({tokens_per_sample:.0f} tokens) per step")
    if given and batch_given and batch > max(samples, 1.0):
        # one step cannot draw more than the data holds: the run would be one step of a batch never read
        amount = (f"{workload.samples:.4g} tokens" if workload.token_mode else f"{samples:.4g} {sample}s")
        raise InputError("batch_size", request.batch_size, f"at most the data of the run ({amount} per epoch): a step "
                                                           "draws its batch from the data, so give a smaller batch_size "
                                                           "or more tokens / samples")
    micro = None
    if request.micro_batch is not None:
        micro = request.micro_batch
        if micro < 1 or micro != int(micro):
            raise InputError("micro_batch", request.micro_batch, f"a whole number of {sample}s, at least 1")
        if micro > batch:
            raise InputError("micro_batch", request.micro_batch, f"at most the global batch ({batch:g} {sample}s)")
    return samples, batch, micro


# Defaults from the model: the sequence length it trained at, a pre-training batch that scales with the run
# (sizer.formulas.batch_rule), a fine-tuning batch for LoRA/QLoRA. Each is stated as an assumption and never changed
# silently.
TRAINING_CONTEXT_CAP = 8192  # Llama 3 pre-trained at 8,192 before its long-context stage (Llama 3 paper §3.4)
FINETUNE_BATCH = 64  # sequences per step (LoRA paper: 16-128 per step for GPT-3/RoBERTa; QLoRA: 16-64); full fine-tunes too
BATCH_BY_SIZE = _batch.BATCH_BY_SIZE  # re-exported: the size rule's table


def default_batch_tokens(params: float, tokens: float | None = None, *, active_params: float | None = None) -> float:
    """Pre-training tokens per step: DeepSeek LLM's batch for the run's compute where its length is known,
    else the batch by model size (:mod:`sizer.formulas.batch_rule`).

    Parameters
    ----------
    params : float
        Parameters of the model [1].
    tokens : float, optional
        Training tokens D [token]; None where the run's length is not given.
    active_params : float, optional
        Parameters one token passes through [1] (a mixture of experts); default ``params``.

    Returns
    -------
    float
        Tokens per optimizer step [token].

    References
    ----------
    [deepseek-llm], [touvron]
    """
    if tokens is None:
        return _batch.batch_tokens_by_size(params)
    active = params if active_params is None else active_params
    return _batch.scaled_batch_tokens(6.0 * active * tokens)


def _pretraining_batch_default(request: WorkloadRequest, arch: Architecture | None, base: WorkloadRequest,
                               cited: PretrainingBatch | None, seq_len: int | None,
                               length_given: bool) -> tuple[float, Assumption]:
    """The default pre-training batch [token] and the assumption that states it: the model's own where its
    report states one (``cited``), else the scaled rule (:func:`default_batch_tokens`)."""
    if cited is not None:
        assert arch is not None  # a cited batch is a named model's (model_defaults)
        tokens = float(cited.sequences * cited.seq_len)
        return tokens, Assumption(name="batch size", value=f"{tokens:.0f} tokens per step: {arch.name}'s own "
                                  f"pre-training batch ({cited.sequences:,} sequences of {cited.seq_len:,} tokens)",
                                  source=f"{cited.source}; give --batch-size", verified=cited.verified)
    params = _model_params(arch, base)
    if not length_given:
        tokens = float(default_batch_tokens(params))
        return tokens, Assumption(name="batch size", value=f"{tokens:.0f} tokens per step (by model size, no run "
                                  "length given: 0.5M below 1e9 parameters, 2M to 6.5e9, 4M from 6.5e9)",
                                  source=f"{_batch.BY_SIZE_SOURCE}; give --batch-size")
    active = float(arch.params_active()) if arch is not None else params
    run = request.tokens
    if run is None:  # samples given for a language model: its run is counted in tokens
        raise InputError("tokens", None, "a plain number")
    bounded = default_batch_tokens(params, run, active_params=active)
    # whole sequences, a power of two of them (as published runs take: 1,024, 2,048, ...), the nearest in ratio
    sequence = float(seq_len or DEFAULT_SEQ_LEN)
    tokens = sequence * 2.0 ** round(math.log2(max(bounded / sequence, 1.0)))
    rule = _batch.deepseek_llm_batch_tokens(6.0 * active * run)
    bound = "" if bounded == rule else (", the rule's floor" if bounded > rule else ", the rule's ceiling")
    return tokens, Assumption(name="batch size", value=f"{tokens:,.0f} tokens per step ({tokens / sequence:,.0f} "
                              f"sequences): the near-optimal batch for {6.0 * active * run:.3g} FLOP, "
                              f"0.2920 C^0.3271 = {rule:,.0f} tokens (kept within {_batch.BATCH_TOKENS_FLOOR:,}-"
                              f"{_batch.BATCH_TOKENS_CEILING:,}{bound}), to a power of two sequences",
                              source=f"{_batch.DEEPSEEK_BATCH_SOURCE}; give --batch-size", verified=False)


def model_defaults(request: WorkloadRequest, base: WorkloadRequest, *,
                   length_given: bool = True) -> tuple[WorkloadRequest, list[Assumption]]:
    """``base`` with the sequence length and batch the model implies where the request gives none.

    Parameters
    ----------
    request : WorkloadRequest
        The request as given (what it leaves out is defaulted).
    base : WorkloadRequest
        The request to update.
    length_given : bool, default True
        Whether the request's token count is the run's (else a placeholder for a step-time question).

    Returns
    -------
    tuple of (WorkloadRequest, list of Assumption)
        ``base`` with ``seq_len`` and ``batch_size`` [token] filled in, and the assumptions that
        state each default.

    References
    ----------
    [touvron], [deepseek-llm]
    """
    if request.tokens is None or request.workload is not None:
        return base, []
    update: dict[str, float] = {}  # the fields of ``base`` to default: seq_len [token], batch_size [token]
    said: list[Assumption] = []
    # adapters (lora, qlora) are a fine-tune of the model's weights: a batch in sequences. ``full`` is the default, and
    # a default said aloud never changes an answer (issue 43: --method full switched to the fine-tuning batch, up to
    # 4.2x the time); a full fine-tune names its batch with --batch-size.
    finetune = (request.method or "full") != "full"
    arch: Architecture | None = None
    cited: PretrainingBatch | None = None
    if request.model is not None:  # the registry (models by name) only where a model is named
        from sizer.workloads.registry import pretraining_batch, resolve_model

        arch = resolve_model(request.model)
        cited = pretraining_batch(request.model) if not finetune else None
    seq_len = request.seq_len
    if seq_len is None and cited is not None:
        assert arch is not None  # a cited batch is a named model's
        seq_len = cited.seq_len
        update["seq_len"] = seq_len
        said.append(Assumption(name="sequence length", value=f"{seq_len} tokens: {arch.name}'s pre-training sequence",
                               source=f"{cited.source}; give --seq-len", verified=cited.verified))
    elif seq_len is None and arch is not None:
        seq_len = min(arch.max_context, TRAINING_CONTEXT_CAP)
        update["seq_len"] = seq_len
        said.append(Assumption(name="sequence length", value=f"{seq_len} tokens: {arch.name}'s training context"
                               + (f" (its {arch.max_context:,} extended context aside)" if arch.max_context > seq_len else ""),
                               source=f"{arch.source}; give --seq-len"))
    if request.batch_size is None:
        if finetune:
            tokens: float = FINETUNE_BATCH * (seq_len or DEFAULT_SEQ_LEN)  # whole sequences
            said.append(Assumption(name="batch size", value=f"{tokens:.0f} tokens per step ({FINETUNE_BATCH} sequences): "
                                   "a fine-tuning batch, not the pre-training one",
                                   source="Hu et al. 2021 (LoRA), Dettmers et al. 2023 (QLoRA); give --batch-size"))
        else:
            tokens, stated = _pretraining_batch_default(request, arch, base, cited, seq_len, length_given)
            said.append(stated)
        update["batch_size"] = tokens
    return (base.model_copy(update=update) if update else base), said


def _model_params(arch: Architecture | None, request: WorkloadRequest) -> float:
    """The parameters of the model that runs: the architecture's, or for a bare count the generated
    shape's own (its layers give the FLOP and memory), so that every count with one shape runs alike."""
    if arch is not None:
        return arch.params_total()
    from sizer.workloads.decoder_shape import decoder_for_params

    if request.params is None:  # neither a model nor a count: as the count's parser said of a missing one
        raise InputError("params", None, "a plain number")
    return decoder_for_params(request.params)[0].params_total()


def resolve_job(request: WorkloadRequest, *, need_samples: bool = True) -> Job:
    """Check a training request and build its layer table (module docstring).

    Parameters
    ----------
    request : WorkloadRequest
        The workload as given (CLI options or an HTTP body).
    need_samples : bool
        Whether the run's length (samples or tokens) must be given; memory needs none.

    Returns
    -------
    Job
        The checked run; its workload's parameter count and forward FLOP are the layers' own
        where a model or a profile gives them.
    """
    from_layers = _check_sources(request)
    batch_given = request.batch_size is not None
    length_given = request.samples is not None or request.tokens is not None
    if request.model is not None and not length_given and not need_samples:
        # An architecture is a language model: memory and a step's time need no token count, so
        # the run is read as token-based with no length (``length_given`` stays False).
        request = request.model_copy(update={"tokens": 1.0})
    request, defaults = model_defaults(request, request, length_given=length_given)
    workload = resolve_workload(request, need_samples=need_samples and request.workload is None, need_params=not from_layers)
    precision, optimizer = request.precision, request.optimizer
    found = _layers(request, workload, precision)
    # FLOP and activations of a profile or a layer graph are its own, not the parameter-count rule's
    graph = from_layers or workload.token_mode
    assumptions = [*found.assumptions, *(a for a in workload.assumptions
                                         if a.name not in ("forward FLOP per sample", "activations") or not graph),
                   *defaults]
    layers = found.table
    if from_layers:  # the parameter count and FLOP are the layers'
        workload = workload._replace(params=layers.total_params,
                           forward_flops_per_sample=Quantity(layers.total_forward_flops, "FLOP"))
    named = framework_of(request)
    recipe = resolve_recipe(state_precision=request.state_precision, optimizer=optimizer, precision=precision,
                            optimizer_in_backward=request.optimizer_in_backward, offload=getattr(request, "offload", False),
                            offload_params=request.offload_params, offload_activations=request.offload_activations,
                            loss=request.loss, framework=named.recipe_name)
    assumptions.extend(named.assumptions)
    finetune = resolve_finetune(request.method, request.lora_rank, request.lora_targets, found.arch, precision,
                                layers.total_params)
    if finetune is not None:
        # resolve_finetune refuses a fine-tune without an architecture, whose generated graph has a sequence length
        assert found.arch is not None and found.table.seq_len is not None
        adapters = adapter_profile(found.arch, int(found.table.seq_len), finetune.rank, finetune.targets)
        layers = with_trained_rows(layers, layer_table(adapters))
        assumptions.extend(finetune.assumptions)
    tokens_per_sample = float(found.table.seq_len or workload.seq_len or 1) if workload.token_mode else 1.0
    padded = _padding(request, workload, tokens_per_sample)
    if padded is not None:
        assumptions.append(padded[1])
    samples, batch, micro = _batches(request, workload, tokens_per_sample, found.table.sample, length_given, batch_given,
                                     None if padded is None else padded[0])
    return Job(description=found.described, layers=layers, samples=samples, epochs=workload.epochs, batch_size=batch,
               micro_batch=micro, batch_given=batch_given, precision=precision, optimizer=optimizer,
               tokens_per_sample=tokens_per_sample, token_mode=workload.token_mode, workload=workload,
               assumptions=tuple(assumptions), arch=found.arch, finetune=finetune, recipe=recipe,
               sample_tokens=None if padded is None else padded[0], layouts=named.layouts)


def job_from_profile(profile: Profile, batch_size: float, precision: Precision = Precision.FP32,
                     optimizer: Optimizer = Optimizer.ADAM, *,
                     samples: float = 0.0, micro_batch: float | None = None) -> Job:
    """A job straight from a profile: for calibration, reference runs and validation predictions.

    Parameters
    ----------
    profile : Profile
        The measured or built-in layers.
    batch_size : float
        Global batch [sample].
    precision : Precision
        Training precision.
    optimizer : Optimizer
        Optimizer.
    samples : float
        Samples per epoch [sample]; 0 for a step time only.
    micro_batch : float, optional
        Samples per device per pass [sample].

    Returns
    -------
    Job
        The run, with no stated assumptions.
    """
    request = WorkloadRequest(params=max(profile.params, 1.0), samples=samples or batch_size, batch_size=batch_size,
                              precision=precision, optimizer=optimizer)
    workload = resolve_workload(request)
    return Job(description=f"{profile.name} ({profile.description})", layers=layer_table(profile), samples=samples,
               epochs=1.0, batch_size=float(batch_size), micro_batch=micro_batch, batch_given=True,
               precision=workload.precision, optimizer=workload.optimizer, tokens_per_sample=1.0, token_mode=False,
               workload=workload, assumptions=())
