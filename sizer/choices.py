"""The named choices a request makes, parsed once where input enters.

Every choice is a ``StrEnum``; :func:`parse_choice` turns a user's string (any case, ``-`` or
``_``) into the member or raises :class:`~sizer.errors.InputError` listing the valid names,
from the CLI, HTTP and Python alike.

>>> parse_choice(Precision, "BF16", "precision")
<Precision.BF16: 'bf16'>
>>> parse_choice(Optimizer, "lamb", "optimizer")
Traceback (most recent call last):
...
sizer.errors.InputError: optimizer: got 'lamb'; expected one of sgd, momentum, adam, adamw, adagrad, rmsprop, adam-8bit, adamw-8bit, paged-adamw, paged-adamw-8bit, adafactor, lion
"""
from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args

from pydantic import BeforeValidator, PlainSerializer, PlainValidator, ValidationInfo, WithJsonSchema
from pydantic_core import PydanticCustomError

from sizer.errors import InputError


class Precision(StrEnum):
    FP64 = "fp64"
    FP32 = "fp32"
    TF32 = "tf32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    FP4 = "fp4"  # NVFP4 (FP4 E2M1 values, an FP8 scale per 16) on devices whose catalog entry has an FP4 peak
    MIXED = "mixed"  # bf16 where the device has it, else fp16, else fp32: resolved per device


class Optimizer(StrEnum):
    SGD = "sgd"
    MOMENTUM = "momentum"
    ADAM = "adam"
    ADAMW = "adamw"
    ADAGRAD = "adagrad"
    RMSPROP = "rmsprop"
    # bitsandbytes (Dettmers et al. 2022; paged: QLoRA, Dettmers et al. 2023), named as its classes
    ADAM_8BIT = "adam-8bit"
    ADAMW_8BIT = "adamw-8bit"
    PAGED_ADAMW = "paged-adamw"
    PAGED_ADAMW_8BIT = "paged-adamw-8bit"
    ADAFACTOR = "adafactor"  # factored second moment, no first moment (Shazeer & Stern 2018)
    LION = "lion"  # sign of an interpolated momentum: one state (Chen et al. 2023)


class Sharding(StrEnum):
    """Kept for the first release's ``--sharding``: ``full`` is ZeRO stage 3 (FSDP FULL_SHARD)."""

    NONE = "none"
    FULL = "full"


class Method(StrEnum):
    """How a model is trained: every weight (full), or low-rank adapters over a frozen base
    (LoRA, Hu et al. 2021; QLoRA over a 4-bit base, Dettmers et al. 2023)."""

    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class Loss(StrEnum):
    """How the loss over the vocabulary is computed, which sets the memory its logits take:
    ``standard`` materialises FP32 logits and their softmax gradient (Hugging Face's default);
    ``chunked`` keeps 16-bit logits and upcasts one chunk at a time (torchtune's
    CEWithChunkedOutputLoss); ``fused`` never materialises the logits (Liger Kernel's fused linear
    cross-entropy, Apple's Cut Cross-Entropy)."""

    STANDARD = "standard"
    CHUNKED = "chunked"
    FUSED = "fused"


class Attention(StrEnum):
    """How attention keeps its activations (Korthikanti et al. 2022 §4.1): ``flash`` keeps only the
    softmax statistics (Dao et al. 2022), ``standard`` keeps the s x s scores, softmax and dropout mask."""

    FLASH = "flash"
    STANDARD = "standard"


class Recompute(StrEnum):
    """Activation recomputation (Korthikanti et al. 2022 §5): none, the attention layers' forward pass
    again in the backward pass (selective), or every layer's (full)."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"

    # The property shadows str.index (mypy: an incompatible override); renaming it is a code change.
    @property
    def index(self) -> int:  # type: ignore[override]
        """The engine's array code: 0 none, 1 selective, 2 full."""
        return list(Recompute).index(self)


class KvCache(StrEnum):
    """How a runtime stores the KV cache: 16- or 32-bit floats, 8 bits (FP8 E4M3 or int8 with a scale), or
    llama.cpp's ggml block types (``--cache-type-k/-v q8_0`` or ``q4_0``: 32 values and one 16-bit scale a block)."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    Q8_0 = "q8_0"
    Q4_0 = "q4_0"


# The KV-cache types only llama.cpp stores (its --cache-type-k/-v); a quantised V cache needs its flash attention
GGML_KV_CACHES = frozenset({KvCache.Q8_0, KvCache.Q4_0})


class DeviceKind(StrEnum):
    """What a device is. A catalog writes the first three (:data:`CATALOG_KINDS`); ``apple`` is Apple silicon's GPU
    and unified memory, which runtimes tell apart from other GPUs (mlx runs there only): never written in a catalog,
    where such a chip is a ``gpu`` of vendor Apple, it is derived from those two fields
    (:attr:`sizer.hardware.schema.Device.runtime_kind`)."""

    GPU = "gpu"
    ACCELERATOR = "accelerator"
    CPU = "cpu"
    APPLE = "apple"


# The kinds a catalog entry is, in the order a recommendation ranks them by default
CATALOG_KINDS: tuple[DeviceKind, ...] = (DeviceKind.GPU, DeviceKind.ACCELERATOR, DeviceKind.CPU)


class Split(StrEnum):
    """How a replica's devices share a model: tensor parallelism (heads split over ranks), llama.cpp's layer split
    (``--split-mode layer``: layers in turn), or its row split (``--split-mode row``, refused: not modelled)."""

    TENSOR = "tensor"
    LAYER = "layer"
    ROW = "row"


# Which price one cost is on: a cloud rent or an amortised purchase (plus energy).
PriceBasis = Literal["rent", "buy"]
# Which prices a question may use: rent (cloud on-demand only), buy (amortised purchase plus energy), or any (rent
# where the catalog has one, else the amortised purchase, each labelled). Literals, checked by mypy's strict equality
# where compared; the names are written here only (PRICINGS lists them for the page and the checks).
Pricing = Literal[PriceBasis, "any"]
PRICE_BASES: tuple[PriceBasis, ...] = get_args(PriceBasis)
PRICINGS: tuple[Pricing, ...] = get_args(Pricing)
# The storage a training set is read from (--storage); its read rates are sizer.formulas.host's. A vocabulary of its
# own here, so that the request models that take it need not import the host formulas.
StorageClass = Literal["hdd", "sata-ssd", "nvme", "ramdisk"]


class Objective(StrEnum):
    """What a training recommendation ranks by: time to train, cost, or the time-cost (Pareto) front."""

    TIME = "time"
    COST = "cost"
    PARETO = "pareto"


class ServingObjective(StrEnum):
    """What a serving recommendation ranks deployments by: cost per million output tokens, one request's
    end-to-end latency, or output tokens/s per device."""

    COST = "cost"
    LATENCY = "latency"
    THROUGHPUT = "throughput"


class Mode(StrEnum):
    """Where the engine's efficiencies come from."""

    DATASHEET = "datasheet"
    CALIBRATED = "calibrated"
    REFERENCE = "reference"


Choice = TypeVar("Choice", bound=StrEnum)


def parse_choice(kind: type[Choice], value: object, field: str, members: tuple[Choice, ...] | None = None) -> Choice:
    """The member of ``kind`` named by ``value``, or InputError naming the field and the choices.

    Parameters
    ----------
    kind : type[StrEnum]
        The choice's enum (:class:`Precision`, :class:`Optimizer`, ...).
    value : object
        What the user gave: a member of ``kind`` (returned as it is) or its name in any case, with
        ``-`` or ``_`` between words (``"Adam_8bit"`` is ``adam-8bit``).
    field : str
        The request field the value came from, named in the error.
    members : tuple of StrEnum, optional
        The members this field takes, where it takes fewer than the enum has (a catalog writes three of the
        four device kinds); None: every member.

    Returns
    -------
    StrEnum
        The member of ``kind``.

    Raises
    ------
    InputError
        When ``value`` names no member; the message lists every valid name.
    """
    allowed = tuple(kind) if members is None else members
    if isinstance(value, kind) and value in allowed:
        return value
    if isinstance(value, str):
        key = value.strip().lower().replace("_", "-")
        for member in allowed:
            if member.value.replace("_", "-") == key:  # a name spelled with "_" (ggml's q8_0) matches either way
                return member
    raise InputError(field, value, f"one of {', '.join(member.value for member in allowed)}")


def zero_stage_of(sharding: Sharding) -> int:
    """The ZeRO stage a first-release sharding name means (Rajbhandari et al. 2020).

    Parameters
    ----------
    sharding : Sharding
        ``none`` (every device holds all model states) or ``full`` (FSDP FULL_SHARD).

    Returns
    -------
    int
        The ZeRO stage: 0 for ``none``, 3 for ``full`` (weights, gradients and optimizer states
        sharded).
    """
    return 3 if sharding is Sharding.FULL else 0


def named(kind: type[Choice], members: tuple[Choice, ...] | None = None) -> Any:
    """The type of a request field that takes one of ``kind``'s names: the member itself.

    Parameters
    ----------
    kind : type[StrEnum]
        The choice's enum.
    members : tuple of StrEnum, optional
        The members the field takes, where fewer than the enum has; None: every member.

    Returns
    -------
    Any
        An ``Annotated[kind, ...]`` type for a pydantic field (typed ``Any``: a type built at run time
        has no static type). The field holds the member, is written as its name and lists the names
        in its JSON schema.

    Notes
    -----
    A name in any case, with ``-`` or ``_``, becomes the member where the request is built (the one
    parse); any other value is refused there, naming the field and the choices, together with the
    request's other bad fields (pydantic collects every field's error before raising). The schema
    lists the names.
    """
    allowed = tuple(kind) if members is None else members

    def member(value: object, info: ValidationInfo) -> Choice:
        field = info.field_name or kind.__name__.lower()
        try:
            return parse_choice(kind, value, field, allowed)
        except InputError:
            raise PydanticCustomError("choice", "got {given}; expected one of {names}", {
                "given": repr(value), "names": ", ".join(m.value for m in allowed)}) from None

    return Annotated[kind, BeforeValidator(member), PlainSerializer(lambda m: m.value, return_type=str),
                     WithJsonSchema({"type": "string", "enum": [m.value for m in allowed]})]


def _parsed(parse: Callable[[Any, str], Any], value: object, info: ValidationInfo) -> Any:
    """``parse(value, field)``'s entry; its InputError as the request's error for that field (pydantic's, so that
    it is collected with the request's other bad fields)."""
    field = info.field_name or "name"
    try:
        return parse(value, field)
    except InputError as error:
        raise PydanticCustomError("choice", "{message}",
                                  {"message": error.message.removeprefix(f"{field}: ")}) from None


def checked_name(parse: Callable[[Any, str], Any]) -> Any:
    """The type of a request field that takes a name from an open vocabulary.

    A table is the vocabulary (the ``--emit`` launch tools): ``parse(value, field)`` checks the name where the request
    is built, refusing an unknown one there with the request's other bad fields; the field keeps the name as given.
    A field whose entry the core reads (a runtime, a weight format, a length set) holds the entry instead
    (:func:`entry_named`).

    Parameters
    ----------
    parse : callable
        ``parse(value, field)``: the vocabulary's entry, or :class:`~sizer.errors.InputError`.

    Returns
    -------
    typing.Annotated
        A ``str`` field type with the check.
    """
    def check(value: object, info: ValidationInfo) -> str:
        _parsed(parse, value, info)
        return str(value)

    return Annotated[str, BeforeValidator(check)]


def entry_named(kind: type[Any], parse: Callable[[Any, str], Any], max_length: int = 40) -> Any:
    """The type of a request field that takes a name from an open vocabulary and holds the vocabulary's entry.

    A registry (weight formats, runtimes, length sets) is the vocabulary: ``parse(value, field)`` finds the entry
    where the request is built, refusing an unknown name there with the request's other bad fields; past that
    edge the field is the entry itself (its bits, its profile, its laws), never a name to look up again.

    Parameters
    ----------
    kind : type
        The entry's type (a frozen dataclass with a ``name``): an entry of it is taken as it is (a request copied
        with ``model_copy``, or built in Python with the entry).
    parse : callable
        ``parse(value, field)``: the vocabulary's entry, or :class:`~sizer.errors.InputError`.
    max_length : int, default 40
        The longest name the JSON schema allows [characters] (a longer one names no entry: refused by ``parse``).

    Returns
    -------
    typing.Annotated
        An ``Annotated[kind, ...]`` type for a pydantic field (typed ``Any``: a type built at run time has no static
        type): it holds the entry, is written as the entry's canonical ``name`` (``model_dump``, JSON) and is a
        string in the JSON schema.
    """
    def entry(value: object, info: ValidationInfo) -> Any:
        return value if isinstance(value, kind) else _parsed(parse, value, info)

    return Annotated[kind, PlainValidator(entry), PlainSerializer(lambda e: e.name, return_type=str),
                     WithJsonSchema({"type": "string", "maxLength": max_length})]


if TYPE_CHECKING:  # to the type checker a choice field holds its member, as it does once validated
    PrecisionName = Precision
    OptimizerName = Optimizer
    ShardingName = Sharding
    MethodName = Method
    AttentionName = Attention
    RecomputeName = Recompute
    LossName = Loss
    KvCacheName = KvCache
    CatalogKindName = DeviceKind
else:
    PrecisionName = named(Precision)
    OptimizerName = named(Optimizer)
    ShardingName = named(Sharding)
    MethodName = named(Method)
    AttentionName = named(Attention)
    RecomputeName = named(Recompute)
    LossName = named(Loss)
    KvCacheName = named(KvCache)
    CatalogKindName = named(DeviceKind, CATALOG_KINDS)  # a catalog entry's kind, or a kind a request filters by


def recompute_index(value: Recompute | None) -> int | None:
    """The engine's code of a recomputation policy (:attr:`Recompute.index`).

    Parameters
    ----------
    value : Recompute or None
        The policy, or None where the request leaves it to sizer.

    Returns
    -------
    int or None
        0 none, 1 selective, 2 full; None where no policy is pinned.
    """
    return None if value is None else value.index
