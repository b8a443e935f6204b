"""Architectures by name: the built-in models of ``catalog/models.yaml`` or a Hugging Face
``config.json`` (a decoder shape derived from a bare parameter count is :mod:`sizer.workloads.decoder_shape`'s).

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
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sizer.datafile import load_yaml
from sizer.errors import CatalogError, InputError
from sizer.memo import registered_cache
from sizer.workloads.architecture import Architecture, Family, FfnType, Norm, Position
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
