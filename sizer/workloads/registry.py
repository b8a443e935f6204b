"""Architectures by name: the built-in models of ``catalog/models.yaml``, a Hugging Face
``config.json``, or a decoder shape derived from a bare parameter count.

Names are forgiving: case, an organisation prefix (``meta-llama/``), a ``-hf`` suffix and the
punctuation between words do not matter, so ``"llama-2-7b"``, ``"Llama-2-7B"`` and
``"meta-llama/Llama-2-7b-hf"`` are one model. An unknown name raises
:class:`~sizer.errors.InputError` listing the closest built-in names.

>>> find_model("meta-llama/Llama-2-7b-hf").name
'llama-2-7b'
>>> round(find_model("mixtral-8x7b").params_active() / 1e9, 1)
12.9
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sizer.datafile import load_yaml
from sizer.errors import CatalogError, InputError
from sizer.memo import registered_cache
from sizer.workloads.architecture import MAX_BLOCKS, Architecture, Family, FfnType, Norm, Position
from sizer.workloads.names import name_key
from sizer.workloads.source import FileRef

if TYPE_CHECKING:
    from sizer.workloads.checkpoint import Checkpoint
    from sizer.workloads.shipped import ShippedConfig

MAX_MODELS_FILE_BYTES = 1_000_000
MAX_NAME_LENGTH = 200


class Published(BaseModel):
    """A parameter count the cited source states: an exact count or a release label ("7B")."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when models.yaml is read

    params_total: int = Field(gt=0)
    params_active: int | None = Field(None, gt=0)
    kind: Literal["exact", "nominal"]


class PretrainingBatch(BaseModel):
    """The global batch a model's report states for its pre-training (the final one where it ramped up)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when models.yaml is read

    sequences: int = Field(ge=1, le=10_000_000)  # sequences per optimizer step [1]
    seq_len: int = Field(ge=1, le=10_000_000)  # tokens per sequence [token]
    source: str = Field(min_length=10)
    verified: bool  # False where the figure is recalled rather than read in the cited source


class ModelEntry(BaseModel):
    """One entry of ``catalog/models.yaml``: the fields of :class:`Architecture` plus its names,
    its source and the published parameter count."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when models.yaml is read

    name: str = Field(min_length=1, max_length=80)
    display_name: str
    aliases: list[str] = []
    family: Family
    layers: int = Field(ge=1, le=10_000)
    hidden: int = Field(ge=1, le=1_000_000)
    heads: int = Field(ge=1, le=10_000)
    kv_heads: int = Field(ge=1, le=10_000)
    ffn_hidden: int = Field(ge=1, le=10_000_000)
    ffn_type: FfnType
    vocab: int = Field(ge=1, le=10_000_000)
    max_context: int = Field(ge=1, le=100_000_000)
    tied_embeddings: bool
    norm: Norm
    position: Position
    source: str = Field(min_length=10)
    head_dim: int | None = Field(None, ge=1, le=100_000)
    experts: int = Field(1, ge=1, le=10_000)
    experts_per_token: int = Field(1, ge=1, le=10_000)
    attention_bias: bool = False
    mlp_bias: bool = False
    parallel_attention: bool = False
    encoder_layers: int = Field(0, ge=0, le=10_000)
    type_vocab: int = Field(0, ge=0)
    pooler: bool = False
    verified: bool
    block_norms: int | None = Field(None, ge=0, le=8)
    norm_bias: bool = True
    attention_out_bias: bool | None = None
    position_offset: int = Field(0, ge=0)
    embedding_norm: bool = False
    relative_buckets: int = Field(0, ge=0)
    mlm_head: bool = False
    dropout: bool = False
    moe_ffn_hidden: int | None = Field(None, ge=1, le=10_000_000)
    shared_experts: int = Field(0, ge=0, le=1_000)
    shared_ffn_hidden: int | None = Field(None, ge=1, le=10_000_000)
    shared_expert_gate: bool = False
    dense_layers: int = Field(0, ge=0, le=10_000)
    moe_every: int = Field(1, ge=1, le=100)
    router_bias: bool = False
    capacity_factor: float | None = Field(None, gt=0, le=64)
    q_lora_rank: int = Field(0, ge=0, le=1_000_000)
    kv_lora_rank: int = Field(0, ge=0, le=1_000_000)
    rope_head_dim: int = Field(0, ge=0, le=100_000)
    v_head_dim: int | None = Field(None, ge=1, le=100_000)
    sliding_window: int = Field(0, ge=0, le=100_000_000)
    global_every: int = Field(0, ge=0, le=1_000)
    published: Published | None = None
    notes: str | None = None
    # the weight format the published checkpoint is stored in, where it is not 16-bit (gpt-oss: mxfp4)
    checkpoint_weights: str | None = Field(None, max_length=40)
    # the batch its report pre-trained with, the default batch where a request gives none (sizer.engine.job)
    pretraining_batch: PretrainingBatch | None = None

    def architecture(self) -> Architecture:
        """The entry's architecture, without the catalog-only fields (display name, aliases, notes ...).

        Returns
        -------
        Architecture
            The checked architecture.
        """
        fields = self.model_dump(exclude={"display_name", "aliases", "published", "notes", "checkpoint_weights",
                                          "pretraining_batch"})
        return Architecture(**fields)


class ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when models.yaml is read

    models: list[ModelEntry]


def models_file() -> Path:
    """The built-in model catalog, ``catalog/models.yaml``.

    Returns
    -------
    Path
        The file's path.
    """
    from sizer.hardware.catalog import builtin_catalog_dir

    return builtin_catalog_dir() / "models.yaml"


def models_files() -> list[Path]:
    """Every built-in preset file: ``catalog/models.yaml``, then each ``catalog/model_presets/*.yaml`` by name
    but the table of refused models there (:mod:`sizer.workloads.refused`).

    Returns
    -------
    list of Path
        The files, in the order their entries are listed.
    """
    from sizer.workloads.refused import REFUSED_FILE_NAME

    main = models_file()
    return [main, *sorted(p for p in (main.parent / "model_presets").glob("*.yaml") if p.name != REFUSED_FILE_NAME)]


@registered_cache()
def builtin_entries() -> tuple[ModelEntry, ...]:
    """Every entry of the preset files (:func:`models_files`), checked; a malformed file is a :class:`CatalogError`.

    Returns
    -------
    tuple of ModelEntry
        The entries in file order, read once per process.

    Raises
    ------
    CatalogError
        A malformed file, or one name that stands for two entries.
    """
    entries: list[ModelEntry] = []
    for path in models_files():
        data = load_yaml(path, "model", MAX_MODELS_FILE_BYTES)
        try:
            entries += ModelsFile.model_validate(data).models
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CatalogError(f"models file {path}: field {where}: {first['msg']}", "model") from None
    path = models_file()
    seen: dict[str, str] = {}
    for entry in entries:
        for alias in (entry.name, entry.display_name, *entry.aliases):
            key = name_key(alias)
            if seen.setdefault(key, entry.name) != entry.name:
                raise CatalogError(f"models file {path}: name {alias!r} of {entry.name} also names {seen[key]}",
                                   "model")
    return tuple(entries)


@registered_cache()
def _index() -> dict[str, ModelEntry]:
    index: dict[str, ModelEntry] = {}
    for entry in builtin_entries():
        for alias in (entry.name, entry.display_name, *entry.aliases):
            index[name_key(alias)] = entry
    return index


def model_names() -> list[str]:
    """The canonical names of the built-in architectures, sorted.

    Returns
    -------
    list of str
        The names, e.g. ``"llama-2-7b"``.
    """
    return sorted(entry.name for entry in builtin_entries())


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH:
        raise InputError("model", name, "a model name such as 'llama-2-7b' or a hub id such as 'Qwen/Qwen3-32B', "
                                        "or a config.json path")
    return name


def _unknown(name: str) -> InputError:
    """The error for a name that is no built-in and no shipped config: the refusal naming the config field where
    ``catalog/model_presets/not-supported.yaml`` lists the model (:mod:`sizer.workloads.refused`), else one offering close
    names of both."""
    from sizer.workloads.refused import refusal
    from sizer.workloads.shipped import shipped_keys

    refused = refusal(name)
    if refused is not None:
        return refused

    names = {key: entry.name for key, entry in _index().items()}
    names.update({key: hub_id for key, hub_id in shipped_keys().items() if key not in names})
    close = difflib.get_close_matches(name_key(name), list(names), n=5, cutoff=0.6)
    suggestions = list(dict.fromkeys(names[key] for key in close))
    hint = f"did you mean {', '.join(suggestions)}? " if suggestions else ""
    return InputError("model", name, f"a built-in model name or hub id ({hint}{len(builtin_entries())} presets and "
                                     f"{len(set(names.values())) - len(builtin_entries())} shipped configs: "
                                     "`sizer models` lists them, e.g. llama-2-7b, llama-3.3-70b, Qwen/Qwen3-32B, "
                                     "deepseek-r1) or a config.json path")


def model_entry(name: str) -> ModelEntry:
    """The catalog entry of a built-in model (with its published parameter count and notes).

    Parameters
    ----------
    name : str
        A built-in model's name, display name or alias, compared by :func:`name_key`.

    Returns
    -------
    ModelEntry
        The entry.

    Raises
    ------
    InputError
        An empty, overlong or unknown name (a shipped config's name included: it has no entry);
        the message offers close names.
    """
    entry = _index().get(name_key(_check_name(name)))
    if entry is None:
        raise _unknown(name)
    return entry


def lookup(name: str) -> ModelEntry | ShippedConfig:
    """What a model name means: a built-in preset (every name it had before configs were shipped),
    else a shipped config by hub id, short name or short form (:mod:`sizer.workloads.shipped`).

    Parameters
    ----------
    name : str
        A preset's name or alias, or a shipped config's hub id or short name (any case).

    Returns
    -------
    ModelEntry or ShippedConfig
        The preset, or the shipped config.

    Raises
    ------
    InputError
        An empty, overlong or unknown name, a short name two shipped configs share (naming both), or a model
        ``catalog/model_presets/not-supported.yaml`` refuses (naming its ``model.<field>``).

    >>> lookup("llama-2-7b").name, lookup("Qwen/Qwen3-32B").hub_id
    ('llama-2-7b', 'Qwen/Qwen3-32B')
    """
    entry = _index().get(name_key(_check_name(name)))
    if entry is not None:
        return entry
    from sizer.workloads.shipped import find_shipped  # only for a name no preset has

    shipped = find_shipped(name)
    if shipped is None:
        raise _unknown(name)
    return shipped


def find_model(name: str) -> Architecture:
    """An architecture by a forgiving name: a built-in preset or a shipped config.

    Parameters
    ----------
    name : str
        A preset's name, display name or alias, or a shipped config's hub id or short name (:func:`lookup`).

    Returns
    -------
    Architecture
        The model's architecture.

    Raises
    ------
    InputError
        An unknown or ambiguous name, or a shipped config the engine cannot express (naming its
        ``model.<field>``).

    >>> find_model("Llama-2-7B").params_total()
    6738415616
    """
    found = lookup(name)
    if isinstance(found, ModelEntry):
        return found.architecture()
    from sizer.workloads.shipped import shipped_architecture

    return shipped_architecture(found.hub_id)


def checkpoint(source: str | FileRef | None) -> Checkpoint | None:
    """The weight format a model's published checkpoint is stored in, and where that is stated:
    a preset's ``checkpoint_weights`` (gpt-oss: mxfp4), a config's ``quantization_config``
    (:mod:`sizer.workloads.checkpoint`; a shipped config or a config.json path), or ``names.yaml``
    where a shipped config states none. None for 16-bit checkpoints and parameter counts.

    Parameters
    ----------
    source : str or FileRef or None
        A request's model: a name, a config file, or None.

    Returns
    -------
    Checkpoint or None
        The checkpoint's format name (e.g. ``"fp8"``) with the field that states it, or None.

    Raises
    ------
    InputError
        A ``quantization_config`` naming a format sizer has none for (naming that field).
    """
    from sizer.workloads.checkpoint import Checkpoint, config_checkpoint

    if isinstance(source, FileRef):
        from sizer.workloads.hf_config import load_json

        return config_checkpoint(load_json(source.path))
    if not isinstance(source, str) or source.strip().lower().endswith(".json"):
        return None
    found = lookup(source)
    if isinstance(found, ModelEntry):
        if found.checkpoint_weights is None:
            return None
        return Checkpoint(found.checkpoint_weights, f"catalog/models.yaml checkpoint_weights of {found.name}")
    from sizer.workloads.shipped import config_data

    stated = config_checkpoint(config_data(found.hub_id))
    if stated is None and found.checkpoint_weights is not None:
        return Checkpoint(found.checkpoint_weights, f"catalog/hf_configs/names.yaml: {found.checkpoint_source}")
    return stated


def checkpoint_weights(source: str | FileRef | None) -> str | None:
    """The weight format a model's published checkpoint is stored in (:func:`checkpoint`), by name only.

    Parameters
    ----------
    source : str or FileRef or None
        A request's model: a name, a config file, or None.

    Returns
    -------
    str or None
        The checkpoint's weight format name (e.g. ``"mxfp4"``), or None for a 16-bit checkpoint.
    """
    found = checkpoint(source)
    return None if found is None else found.weights


def pretraining_batch(source: str | FileRef | None) -> PretrainingBatch | None:
    """The pre-training batch a built-in model's report states, where the catalog cites one (DeepSeek-V3,
    Llama 3.1 405B); None for other models, config files and parameter counts.

    Parameters
    ----------
    source : str or FileRef or None
        A request's model: a built-in name, a config file, or None.

    Returns
    -------
    PretrainingBatch or None
        The stated batch with its source, or None.
    """
    if not isinstance(source, str) or source.strip().lower().endswith(".json"):
        return None
    found = lookup(source)
    return found.pretraining_batch if isinstance(found, ModelEntry) else None


HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9]$")  # org/name, as the hub writes repository ids


def config_file_name(path: str | Path, data: dict[str, object]) -> str:
    """The name a config.json file's model is given: its ``_name_or_path`` where that is a hub id
    (``org/name``, not a local folder), else ``org/name`` from a file named ``org--name.json`` (as the
    shipped configs are), else the file's folder (``Llama-2-7b-hf/config.json``), else the file name.

    Parameters
    ----------
    path : str or Path
        The config file.
    data : dict of str to object
        Its parsed content.

    Returns
    -------
    str
        The model's name.

    >>> config_file_name("/tmp/Qwen--Qwen3-32B.json", {}), config_file_name("x/config.json", {"_name_or_path": "a/b"})
    ('Qwen/Qwen3-32B', 'a/b')
    """
    path = Path(path)
    declared = data.get("_name_or_path")
    if isinstance(declared, str) and len(declared) <= MAX_NAME_LENGTH and HUB_ID.match(declared.strip()):
        return declared.strip()
    org, sep, model = path.stem.partition("--")
    if sep and org and model and HUB_ID.match(f"{org}/{model}"):
        return f"{org}/{model}"
    if path.name == "config.json" and path.parent.name:
        return path.parent.name
    return path.stem or path.name


def model_source(value: Any) -> Any:
    """The command line's reading of ``--model``: :func:`sizer.workloads.source.model_source` (a ``.json``
    path, a path with a folder or an existing file is a file), except that a hub id the registry knows
    (``Qwen/Qwen3-32B``, ``meta-llama/Llama-2-7b-hf``) stays a name where no file of that path exists.

    Parameters
    ----------
    value : Any
        The text given to ``--model`` (anything else is passed on unchanged, for the request to refuse).

    Returns
    -------
    Any
        A :class:`FileRef` for a file, else ``value`` itself.

    >>> model_source("Qwen/Qwen3-32B"), model_source("models/mine")
    ('Qwen/Qwen3-32B', FileRef('models/mine'))
    """
    import os

    from sizer.workloads import source

    read = source.model_source(value)
    if isinstance(read, FileRef) and isinstance(value, str) and HUB_ID.match(value.strip()) \
            and not value.strip().lower().endswith(".json") and not os.path.exists(value.strip()):
        try:
            lookup(value)
        except InputError as error:
            if error.field == "model":
                return read  # not a known name: a path, refused as a missing file
            # a model refused by name (its config field named): the refusal is the answer, not a missing file
        return value
    return read


def read_config_file(path: str | Path) -> Architecture:
    """The architecture of a config.json a user named, called by :func:`config_file_name`.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    Architecture
        The checked architecture (errors name the config field, :mod:`sizer.workloads.hf_config`).
    """
    from sizer.workloads.hf_config import architecture_from_config, load_json

    data = load_json(path)
    return architecture_from_config(data, name=config_file_name(path, data), source=f"Hugging Face config {path}")


def resolve_model(source: str | FileRef) -> Architecture:
    """A model by name (a preset or a shipped config), or a Hugging Face ``config.json`` where the edge
    (the CLI) named a file.

    Parameters
    ----------
    source : str or FileRef
        A model name, or a file reference made where input entered (:mod:`sizer.workloads.source`).

    Returns
    -------
    Architecture
        The model's shape.
    """
    if isinstance(source, FileRef):
        return read_config_file(source.path)
    if isinstance(source, str) and source.strip().lower().endswith(".json"):
        raise InputError("model", source, "a built-in model name or hub id (a config.json file is read by the command line "
                                         "only)")
    return find_model(source)


# --- A decoder shape from a parameter count --------------------------------------------------

GENERATED_VOCAB = 32000  # Llama 1/2's SentencePiece vocabulary (Touvron et al. 2023)
GENERATED_HEAD_DIM = 128
MIN_GENERATED_PARAMS = 1e6
FFN_MULTIPLE = 256  # Llama's ``multiple_of`` (meta-llama/llama model.py FeedForward)
# Published models the depth rule is fitted to: Llama 1, Llama 2 and Llama 3.1 405B (the style generated).
DEPTH_FIT_MODELS = ("llama-7b", "llama-13b", "llama-33b", "llama-65b", "llama-2-7b", "llama-2-13b", "llama-2-70b",
                    "llama-3.1-405b")
# Least-squares fit of ln L = ln DEPTH_COEFFICIENT + DEPTH_EXPONENT ln P over DEPTH_FIT_MODELS
# (reproduced by tests/sizer/workloads/test_registry.py::test_depth_rule_is_the_fit_to_llama).
DEPTH_COEFFICIENT = 0.01111
DEPTH_EXPONENT = 0.3530


def generated_layers(params: float) -> int:
    """Depth of a generated decoder: ``L = round(c · P^e)``, at least 1, with c and e fitted to
    the Llama family (:data:`DEPTH_FIT_MODELS`).

    Parameters
    ----------
    params : float
        Parameters P [1].

    Returns
    -------
    int
        Blocks L [1], at least 1.

    >>> generated_layers(7e9), generated_layers(70e9)  # Llama 2: 32 and 80
    (33, 75)
    """
    depth: float = DEPTH_COEFFICIENT * params ** DEPTH_EXPONENT
    return max(1, round(depth))


def generated_width(params: float, layers: int, vocab: int = GENERATED_VOCAB) -> float:
    """Width ``d`` (continuous) from ``P = 12·L·d² + 2·V·d``: four d×d attention matrices and a
    SwiGLU FFN of 8d/3 (3 × 8d²/3 = 8d²) per block, untied input and output embeddings
    (docs/references.md [kaplan], eq. 2.1 plus the embeddings).

    Parameters
    ----------
    params : float
        Parameters P [1].
    layers : int
        Blocks L [1].
    vocab : int, default 32000
        Vocabulary V [1].

    Returns
    -------
    float
        Width d [1], not yet rounded to whole heads.
    """
    a, b = 12.0 * layers, 2.0 * vocab
    return (-b + math.sqrt(b * b + 4.0 * a * params)) / (2.0 * a)


MAX_GENERATED_PARAMS = 1e13  # above every published dense model (~1e12) by 10x: a larger count is refused up front
GQA_FROM_PARAMS = 3e10  # grouped-query attention with 8 KV heads from here up (Llama 2 34B/70B, Llama 3 8B+)
GQA_KV_HEADS = 8
HEADS_MULTIPLE = 8  # heads a multiple of 8, so tensor parallelism up to 8 (an NVLink node) divides them
LAYERS_MULTIPLE = 4  # layers a multiple of 4, so pipelines of 2 and 4 stages divide them
FFN_RATIO = (2.0, 4.0)  # SwiGLU FFN width over model width: Llama 2.7-3.5, kept within this band
# The FFN ratio aimed at: Llama 2 7B/13B's 11008/4096 ~ 8/3 with multi-head attention, Llama 2 70B's and
# Llama 3 70B's 28672/8192 = 3.5 with grouped-query attention (Touvron et al. 2023, Table 1; Llama 3 config.json)
FFN_RATIO_MHA, FFN_RATIO_GQA = 8 / 3, 3.5


def _head_dim(width: float) -> int:
    """128 (Llama, GPT-3 XL and up) from a width of 2048; 64 (GPT-2, GPT-3 Small-Large) from 512;
    below, the power of two that leaves 8 heads."""
    if width >= 2048:
        return GENERATED_HEAD_DIM
    if width >= 512:
        return 64
    return int(max(2, 2 ** math.floor(math.log2(max(width, 16.0) / HEADS_MULTIPLE))))


def _ffn_multiple(ffn: float) -> int:
    """Llama's 256 (``multiple_of``) for FFNs of 2048 and more; 32 below, so small models keep their count."""
    return FFN_MULTIPLE if ffn >= 2048 else 32


def _shape(params: float, layers: int, heads: int, head_dim: int, kv_heads: int) -> tuple[int, float]:
    """(FFN width, parameters) of the decoder of this depth and width whose SwiGLU FFN takes up the rest of ``params``."""
    hidden = heads * head_dim
    rest = params - _shape_params(layers, heads, head_dim, kv_heads, 1) + 3 * hidden * layers  # all but the FFN matrices
    ffn = max(1.0, rest / (3 * hidden * layers))
    step = _ffn_multiple(ffn)
    ffn = max(step, int(round(ffn / step) * step))
    return ffn, _shape_params(layers, heads, head_dim, kv_heads, ffn)


# A shape's parameter count, kept: nearby counts try the same few shapes (a new question costs no
# Architecture built per candidate); at most a few hundred floats.
@registered_cache()
def _shape_params(layers: int, heads: int, head_dim: int, kv_heads: int, ffn: int) -> float:
    return _decoder(layers, heads * head_dim, heads, head_dim, kv_heads, ffn).params_total()


@registered_cache()
def _decoder(layers: int, hidden: int, heads: int, head_dim: int, kv_heads: int, ffn: int) -> Architecture:
    """The generated decoder of this shape, named by its own parameter count: equal shapes are equal
    architectures (one layer graph and one layout search for every count that gives them)."""
    probe = Architecture(
        name="decoder", family="decoder", layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
        ffn_hidden=ffn, ffn_type="swiglu", vocab=GENERATED_VOCAB, max_context=4096, tied_embeddings=False,
        norm="rmsnorm", position="rotary", head_dim=head_dim,
        source="generated by sizer.workloads.registry.decoder_for_params (shaped like Llama 1/2/3)", verified=False)
    return replace(probe, name=f"decoder-{probe.params_total():.4g}")


@registered_cache()  # asked twice per job: its batch default and its layers
def decoder_for_params(params: float) -> tuple[Architecture, str]:
    """A decoder shaped like the published Llama models whose parameter count is within 3 % of
    ``params``, and the sentence that states it.

    Depth about :func:`generated_layers` (a multiple of 4), width about :func:`generated_width`
    as heads x head dimension (128 from a width of 1024, heads a multiple of 8, so tensor
    parallelism of 2, 4 and 8 divides them), grouped-query attention with 8 KV heads from 3e10
    parameters up (Llama 2 70B, Llama 3), a SwiGLU FFN of 2-4 x the width (a multiple of 256)
    taking up the rest of ``P``; vocabulary 32000 untied, RMSNorm, rotary positions. Among the
    nearby depths and widths (heads of 64 too near a width of 2048, as GPT-3 Small-Large), the one
    closest to ``params`` is kept; below about 2e8 the vocabulary dominates and the FFN ratio departs.

    Parameters
    ----------
    params : float
        Parameters P [1], from :data:`MIN_GENERATED_PARAMS` to :data:`MAX_GENERATED_PARAMS`.

    Returns
    -------
    tuple of (Architecture, str)
        The decoder, and a sentence stating its shape and where the shape comes from.

    Raises
    ------
    InputError
        A count out of range.

    >>> arch, why = decoder_for_params(7e9)
    >>> arch.layers, arch.hidden, arch.heads, arch.ffn_hidden
    (32, 4096, 32, 11776)
    """
    if params < MIN_GENERATED_PARAMS:
        raise InputError("params", params, f"at least {MIN_GENERATED_PARAMS:.0e} parameters for a generated "
                                           f"transformer shape (its {GENERATED_VOCAB}-token embeddings alone "
                                           f"take {2 * GENERATED_VOCAB} per unit of width)")
    if params > MAX_GENERATED_PARAMS:
        raise InputError("params", params, f"at most {MAX_GENERATED_PARAMS:.0e} parameters for a generated transformer "
                                           f"(deeper than {MAX_BLOCKS:,} blocks otherwise); give a model or a "
                                           "config.json for larger shapes")
    depth = generated_layers(params)
    width = generated_width(params, depth)
    base = max(1, round(depth / LAYERS_MULTIPLE))
    depths = sorted({LAYERS_MULTIPLE * max(1, base + k) for k in (-1, 0, 1)})
    # heads of the width's head size, and of half of it near a boundary, where 8 heads of it are coarse
    head_dims = {_head_dim(width), _head_dim(max(width / 2, 512))}
    options = sorted({(HEADS_MULTIPLE * max(1, math.floor(width / (HEADS_MULTIPLE * hd)) + k), hd)
                      for hd in head_dims for k in (-1, 0, 1, 2)})
    best, best_key = None, None
    for layers in depths:
        for heads, head_dim in options:
            kv = GQA_KV_HEADS if params >= GQA_FROM_PARAMS else heads
            ffn, total = _shape(params, layers, heads, head_dim, kv)
            error = abs(total / params - 1)
            ratio = ffn / (heads * head_dim)
            off_band = max(0.0, FFN_RATIO[0] - ratio, ratio - FFN_RATIO[1])
            # within 1 % every candidate counts alike: then the proportions closest to Llama's decide
            aim = FFN_RATIO_GQA if kv != heads else FFN_RATIO_MHA
            key = (off_band > 0, max(error, 0.01), abs(math.log(ratio / aim)) + abs(math.log(layers / depth)))
            if best_key is None or key < best_key:
                best, best_key = (layers, heads * head_dim, heads, head_dim, kv, ffn), key
    assert best is not None  # depths and options are never empty, so some shape was kept
    arch = _decoder(*best)
    gqa = f", {arch.kv_heads} KV heads (grouped-query)" if arch.kv_heads != arch.heads else ""
    why = (f"a {params:.3g}-parameter Llama-style decoder: {arch.layers} layers, width {arch.hidden}, {arch.heads} heads "
           f"of {arch.head_size}{gqa}, SwiGLU FFN {arch.ffn_hidden}, vocabulary {GENERATED_VOCAB} untied "
           f"({arch.params_total():.4g} parameters); depth near L = {DEPTH_COEFFICIENT} P^{DEPTH_EXPONENT} fitted to "
           f"Llama 1/2/3.1 (a multiple of {LAYERS_MULTIPLE}), heads a multiple of {HEADS_MULTIPLE}, width from "
           f"P = 12 L d^2 + 2 V d")
    return arch, why
