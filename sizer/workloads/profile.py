"""Workload profiles: a model described layer by layer, read without torch (spec §3.3).

A profile is YAML written by ``sizer profile`` (``validation/profiler.py``): per layer the
forward FLOP, the bytes the forward pass reads and writes, the parameters and the activation
memory it keeps for the backward pass, all per sample at FP32 storage. Built-in profiles lie in
``catalog/workloads/``; a profile may exist at several sequence lengths, between which
:func:`profile_for` interpolates layer by layer.

>>> p = load_profile("mlp-seed001")
>>> p.params == 569354 and p.forward_flops > 2 * p.params * 0.99
True
"""
from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sizer.datafile import load_yaml, parse_yaml, read_text
from sizer.errors import InputError
from sizer.memo import registered_cache
from sizer.workloads.source import FileRef

LayerKind = Literal["matmul", "conv", "attention", "norm", "elementwise", "embedding", "pool", "loss", "other"]
# Kinds whose FLOP run on tensor cores (matrix units); the rest run on the vector units.
MATRIX_KINDS = ("matmul", "conv", "attention")
MAX_PROFILE_BYTES = 5_000_000
# The libraries a workload name may be prefixed with (``torchvision:vgg16``): profiled from their models.
LIBRARY_PREFIXES = ("torchvision", "timm", "hf")
# The Hub organisations that publish the shipped Hugging Face models (validation/library_models.py):
# their name with or without the organisation is the same checkpoint.
HUB_PUBLISHERS = ("distilbert", "facebookai", "microsoft", "google-t5", "openai", "google")
# Names people write for a built-in profile that are neither its own name nor its library's name for
# it (those are found without a list): the family name means the variant the measured runs used.
ALIASES = {
    "mobilenetv3": "mobilenet-v3-large", "mobilenet": "mobilenet-v2", "squeezenet": "squeezenet1-1",
    "efficientnet": "efficientnet-b0", "vit": "vit-b-16", "vitbase": "vit-b-16", "vitlarge": "vit-l-16",
    "deit": "deit-small", "deits": "deit-small", "deitb": "deit-base", "swin": "swin-t", "swintiny": "swin-t",
    "convnext": "convnext-tiny", "convnextt": "convnext-tiny", "regnet": "regnet-y-400mf",
    "regnety400mf": "regnet-y-400mf", "shufflenet": "shufflenet-v2-x1-0", "shufflenetv2": "shufflenet-v2-x1-0",
    "mnasnet": "mnasnet1-0", "inceptionv1": "googlenet", "inception": "inception-v3",
    "distilbertbase": "distilbert", "roberta": "roberta-base", "debertav3": "deberta-v3-base",
    "deberta": "deberta-v3-base", "t5": "t5-small", "clip": "clip-vit-b-32", "clipvitb32": "clip-vit-b-32",
    "whisper": "whisper-base", "bert": "bert-base", "gpt2": "gpt2-small",
    # BERT's uncased checkpoints have the shipped shapes (vocabulary 30,522); the original VGG-A is VGG-11
    # and AlexNet's "one weird trick" variant is torchvision's, both at ImageNet's 1000 classes
    "bertbaseuncased": "bert-base", "bertlargeuncased": "bert-large", "hf:bert-base-uncased": "bert-base",
    "hf:bert-large-uncased": "bert-large", "vgga": "vgg11-imagenet", "alexnetowt": "alexnet-imagenet",
    "torchvision:resnet50": "resnet50",  # written with torchvision's resnet50 shapes (validation/model_zoo.py)
}


class Layer(BaseModel):
    """One layer (or group of layers) of a model, per sample, forward pass, FP32 storage."""

    # defer_build: its validator is built on first use, not when a command that reads no profile imports this
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    kind: LayerKind
    forward_flops: float = Field(ge=0)
    bytes: float = Field(ge=0, description="bytes read and written by the forward pass's activations")
    params: float = Field(0, ge=0)
    activation_bytes: float = Field(0, ge=0, description="memory kept for the backward pass")
    kernels: int = Field(1, ge=0, le=100_000, description="kernels the forward pass launches (LoRA over 256 experts: thousands)")
    expert: bool = Field(False, description="routed-expert work of a mixture of experts: split over expert-parallel ranks")


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    description: str
    sample: str = "sample"
    seq_len: int | None = None
    input_shape: list[int] = []
    generated_by: str
    torch_version: str | None = None
    source: str | None = Field(None, description="the library model it was profiled from: torchvision:vgg16, "
                                                 "timm:deit_small_patch16_224, hf:distilbert-base-uncased")
    versions: dict[str, str] = Field({}, description="versions of torch and the library that built it")
    layers: list[Layer]

    @property
    def params(self) -> float:
        """Parameters over every layer [1].
        """
        return sum(layer.params for layer in self.layers)

    @property
    def forward_flops(self) -> float:
        """Forward FLOP of one sample (one sequence for a language model) over every layer [FLOP].
        """
        return sum(layer.forward_flops for layer in self.layers)

    @property
    def activation_bytes(self) -> float:
        """Activation bytes one sample keeps for the backward pass over every layer, at FP32 storage [B].
        """
        return sum(layer.activation_bytes for layer in self.layers)


def builtin_profile_dir() -> Path:
    """The folder of the built-in workload profiles (``catalog/workloads/``).

    Returns
    -------
    Path
        The folder; a profile with several lengths has one file per length, ``name@s<length>.yaml``.
    """
    from sizer.hardware.catalog import builtin_catalog_dir

    return builtin_catalog_dir() / "workloads"


def _read(path: Path) -> Profile:
    try:
        profile = Profile.model_validate(load_yaml(path, "workload", MAX_PROFILE_BYTES))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError("workload", str(path), f"a valid profile: field {where}: {first['msg']}") from None
    if not profile.forward_flops > 0:  # an empty profile once gave a 0-FLOP "training run" of 31 s
        raise InputError("workload", str(path), "a profile with at least one layer of forward FLOP above zero "
                                                f"(it has {len(profile.layers)} layers and 0 FLOP)")
    return profile


@registered_cache()
def _builtin(name: str) -> tuple[Profile, ...]:
    """Every built-in profile of a workload name, at each sequence length it was profiled at."""
    found = []
    for path in sorted(builtin_profile_dir().glob(f"{name}*.yaml")):  # name.yaml, name@s128.yaml ...
        if path.name.split("@")[0].removesuffix(".yaml") == name:
            profile = _read(path)
            if profile.name == name:
                found.append(profile)
    return tuple(sorted(found, key=lambda p: p.seq_len or 0))


def builtin_variants(name: str) -> tuple[Profile, ...]:
    """A built-in workload's profiles, one per profiled sequence length, shortest first.

    Parameters
    ----------
    name : str
        The profile's own name (:func:`builtin_profile_names`).

    Returns
    -------
    tuple of Profile
        Empty for a name that is not built in.
    """
    return _builtin(name)


def profile_key(name: str) -> str:
    """The form workload names are compared in: lower case, letters and digits only, no Hub organisation
    (``"VGG-16"``, ``"vgg_16"`` -> ``"vgg16"``; ``"distilbert/distilbert-base-uncased"`` -> ``"distilbertbaseuncased"``).

    Parameters
    ----------
    name : str
        A workload name as a user writes it, without a library prefix.

    Returns
    -------
    str
        The comparison key.

    >>> profile_key("ViT-B/16"), profile_key("google/vit_b_16")
    ('vitb16', 'vitb16')
    """
    text = name.strip().lower()
    if "/" in text and not re.search(r"/\d+$", text):  # an organisation, not ViT-B/16's patch size
        text = text.rsplit("/", 1)[-1]
    return re.sub(r"[^a-z0-9]", "", text)


def _header(path: Path) -> dict[str, object]:
    """A profile file's fields above its layers (name, source): read without parsing every layer."""
    text = read_text(path, "workload", MAX_PROFILE_BYTES).split("\nlayers:", 1)[0]
    data = parse_yaml(text, "workload", str(path))
    return data if isinstance(data, dict) else {}


@registered_cache()
def _name_index() -> dict[str, str]:
    """Every name a built-in profile answers to -> its own name: its name's key, its library name
    (``torchvision:vgg16``, lower case) and that name's key, and :data:`ALIASES`."""
    headers = [_header(path) for path in sorted(builtin_profile_dir().glob("*.yaml"))]
    index: dict[str, str] = {}
    for header in headers:  # own names first: "alexnet" is alexnet.yaml, not torchvision's alexnet-imagenet
        index.setdefault(profile_key(str(header.get("name", ""))), str(header.get("name", "")))
    for header in headers:
        source = header.get("source")
        if isinstance(source, str):
            index[source.lower()] = str(header.get("name", ""))
            index.setdefault(profile_key(source.partition(":")[2]), str(header.get("name", "")))
    for alias, name in ALIASES.items():
        index.setdefault(alias, name)
    return index


def library_of(name: str) -> str | None:
    """The library a workload name is prefixed with (``timm:convnext_tiny`` -> ``timm``), or None.

    Parameters
    ----------
    name : str
        A workload name.

    Returns
    -------
    str or None
        One of :data:`LIBRARY_PREFIXES`, or None for a name without one.
    """
    prefix, colon, _ = name.strip().partition(":")
    return prefix.lower() if colon and prefix.lower() in LIBRARY_PREFIXES else None


def builtin_name(name: str) -> str | None:
    """The built-in profile a forgiving name means (``VGG-16``, ``resnet-101``, ``vit_b_16``,
    ``torchvision:vgg16``), or None.

    Parameters
    ----------
    name : str
        A workload name; one with a library prefix matches only a profile made from that library's model.

    Returns
    -------
    str or None
        The profile's own name, e.g. ``"vgg16"``.

    >>> builtin_name("VGG-16"), builtin_name("torchvision:vgg16"), builtin_name("timm:vgg16")
    ('vgg16', 'vgg16', None)
    """
    index = _name_index()
    text = name.strip()
    if library_of(text) is not None:
        library, _, model = text.partition(":")
        org, slash, rest = model.strip().lower().rpartition("/")
        if slash and library.lower() == "hf" and org in HUB_PUBLISHERS:  # openai/whisper-small is whisper-small
            model = rest
        return index.get(f"{library.lower()}:{model.strip().lower()}")
    return index.get(profile_key(text))


def builtin_profile_names() -> list[str]:
    """The names of the built-in workload profiles, each once whatever its lengths.

    Returns
    -------
    list of str
        Sorted names, e.g. ``"resnet50"``.
    """
    names = {path.name.split("@")[0].removesuffix(".yaml") for path in builtin_profile_dir().glob("*.yaml")}
    return sorted(names)


def load_profile(source: str | FileRef, seq_len: int | None = None) -> Profile:
    """A built-in profile by name (``resnet50``, ``bert-large`` …), or a profile file where the edge
    (the CLI) named one (:mod:`sizer.workloads.source`).

    Parameters
    ----------
    source : str or FileRef
        A built-in profile name (case-insensitive), or a reference to a profile file.
    seq_len : int, optional
        Tokens per sequence [token]; None takes the profile's own (its longest variant).

    Returns
    -------
    Profile
        The profile at ``seq_len`` (:func:`profile_for`).

    Raises
    ------
    InputError
        An unknown name, a missing file, or a length the profile cannot give.
    """
    if isinstance(source, FileRef):
        path = Path(source.path)
        if not path.is_file():
            raise InputError("workload", source.path, "a profile file that exists (from sizer profile)")
        return profile_for((_read(path),), seq_len)
    name_or_path = source
    if not isinstance(name_or_path, str) or not name_or_path.strip() or len(name_or_path) > 300:
        raise InputError("workload", name_or_path, "a built-in workload name or a profile file")
    name = builtin_name(name_or_path)
    variants = _builtin(name) if name is not None else ()
    if not variants:
        close = difflib.get_close_matches(profile_key(name_or_path), list(_name_index()), n=5, cutoff=0.6)
        suggestions = list(dict.fromkeys(_name_index()[key] for key in close))
        hint = f"did you mean {', '.join(suggestions)}? " if suggestions else ""
        raise InputError("workload", name_or_path,
                         f"a built-in workload ({hint}sizer workloads lists {len(builtin_profile_names())}), "
                         "torchvision:NAME, timm:NAME or hf:NAME (profiled on the fly), mlp:W1,W2,... "
                         "(layer widths) or a profile file")
    return profile_for(variants, seq_len)


def profile_for(variants: tuple[Profile, ...], seq_len: int | None) -> Profile:
    """The profile at ``seq_len``: an exact variant, or each layer's figures interpolated with
    the quadratic through three profiled lengths (attention grows with s², the rest with s).

    Parameters
    ----------
    variants : tuple of Profile
        One workload's profiles, one per profiled length, shortest first.
    seq_len : int or None
        Tokens per sequence wanted [token], from 1 to 1,000,000; None takes the last variant.

    Returns
    -------
    Profile
        An exact variant, or one interpolated from the three nearest lengths.

    Raises
    ------
    InputError
        A length out of range, or one that is neither profiled nor within reach of three profiled lengths.
    """
    if seq_len is None or len(variants) == 1 and variants[0].seq_len in (None, seq_len):
        if seq_len is not None and variants[0].seq_len is None:
            raise InputError("seq_len", seq_len, f"no sequence length: {variants[0].name} has none")
        return variants[-1] if seq_len is None else variants[0]
    if not 1 <= seq_len <= 1_000_000:
        raise InputError("seq_len", seq_len, "a sequence length from 1 to 1,000,000")
    for variant in variants:
        if variant.seq_len == seq_len:
            return variant
    profiled = [(v.seq_len, v) for v in variants if v.seq_len is not None]
    if len(variants) < 3 or len(profiled) < len(variants):  # interpolation needs three stated lengths
        raise InputError("seq_len", seq_len, f"one of the profiled lengths {[v.seq_len for v in variants]}")
    picks = sorted(profiled, key=lambda pair: abs(pair[0] - seq_len))[:3]
    xs = [float(length) for length, _ in picks]

    def at(values: list[float]) -> float:
        total = 0.0
        for i, (x_i, y_i) in enumerate(zip(xs, values, strict=True)):
            weight = 1.0
            for j, x_j in enumerate(xs):
                if j != i:
                    weight *= (seq_len - x_j) / (x_i - x_j)
            total += weight * y_i
        return max(0.0, total)

    layers = []
    for group in zip(*(p.layers for _, p in picks), strict=True):
        first = group[0]
        layers.append(first.model_copy(update={
            field: at([getattr(layer, field) for layer in group])
            for field in ("forward_flops", "bytes", "activation_bytes")}))
    base = picks[0][1]
    return base.model_copy(update={"seq_len": seq_len, "layers": layers,
                                   "generated_by": f"interpolated from seq_len {sorted(int(x) for x in xs)}"})
