"""``--workload torchvision:NAME`` / ``timm:NAME`` / ``hf:NAME``: a library model profiled on the fly.

A built-in profile of that library model is used first, without torch (``torchvision:vgg16`` is
``catalog/workloads/vgg16.yaml``; :func:`sizer.workloads.profile.builtin_name`). Any other is built
with random weights and counted by the same profiler as ``sizer profile`` (``validation/profiler.py``,
``validation/library_models.py``), imported only here and only then, so the core never imports torch
unless asked to profile. The profile is kept in the disk cache (:mod:`sizer.diskcache`, kind
``library-profile``), keyed by the library model, its sequence length and the versions of torch, the
library and the profiler's code, so the next command reads it in milliseconds instead of seconds.
"""
from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from sizer.diskcache import cached, file_stamp, key_of
from sizer.errors import InputError
from sizer.workloads.profile import Profile

# The package a library prefix needs beside torch.
PACKAGES = {"torchvision": "torchvision", "timm": "timm", "hf": "transformers"}
PROFILED_BATCH = 2  # figures are per sample; two, not one: batch norm needs more than one value per channel to train


def validation_module(name: str) -> ModuleType:
    """The module ``name`` of the validation suite beside this core: ``validation.NAME`` in a checkout,
    ``sizer.validation.NAME`` installed (the same rule as :func:`sizer.__main__.command_module`).

    Parameters
    ----------
    name : str
        The module's name inside the validation suite, e.g. ``"library_models"``.

    Returns
    -------
    ModuleType
        The imported module (importing it may import torch: call only where profiling is asked).
    """
    core = Path(__file__).resolve().parents[1]
    if not (core / "validation").is_dir():  # a checkout: validation/ beside sizer/
        found = find_spec("validation")
        if found is not None and found.origin and Path(found.origin).resolve().parent == core.parent / "validation":
            return import_module(f"validation.{name}")
    return import_module(f"sizer.validation.{name}")


def install_hint(library: str) -> str:
    """How to install what profiling a ``library:`` model needs.

    Parameters
    ----------
    library : str
        ``torchvision``, ``timm`` or ``hf``.

    Returns
    -------
    str
        The pip command, e.g. ``pip install 'sizer[validation]' torchvision``.
    """
    return f"pip install 'sizer[validation]' {PACKAGES[library]}"


def _installed(package: str) -> bool:
    try:
        return find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def library_profile(name: str, seq_len: int | None = None) -> Profile:
    """The profile of a library model named ``library:model``, counted with torch (cached on disk).

    Parameters
    ----------
    name : str
        ``torchvision:NAME``, ``timm:NAME`` or ``hf:NAME`` (a Hugging Face model id).
    seq_len : int, optional
        Tokens per sequence for a text model [token]; None takes 128. An image model takes none.

    Returns
    -------
    Profile
        Per sample (per sequence for a text model), forward pass, FP32 storage.

    Raises
    ------
    InputError
        ``workload``: torch or the library is not installed (the message says how to install them), or
        the library has no such model; ``seq_len``: a length given for a model that takes none.
    """
    library, _, model = name.strip().partition(":")
    library, model = library.lower(), model.strip()
    package = PACKAGES[library]
    if not model:
        raise InputError("workload", name, f"{library}:NAME, a model name of {package}")
    if not (_installed("torch") and _installed(package)):
        raise InputError("workload", name, f"a built-in workload (sizer workloads lists them), or torch and {package} "
                                           f"installed to profile {library}:{model} on the fly: {install_hint(library)}")
    if seq_len is not None and not 1 <= seq_len <= 100_000:
        raise InputError("seq_len", seq_len, "a sequence length from 1 to 100,000 to profile a library model at")
    profiler, models = validation_module("profiler"), validation_module("library_models")
    versions = models.library_versions(library)
    stamps = [file_stamp(Path(module.__file__ or "")) for module in (profiler, models)]
    data = cached("library-profile", key_of(library, model, seq_len, sorted(versions.items()), stamps),
                  lambda: _profile(profiler, models, library, model, seq_len, versions))
    try:
        profile = Profile.model_validate(data)
    except ValidationError as error:
        raise InputError("workload", name, f"a model the profiler can count ({error.errors()[0]['msg']})") from None
    if seq_len is not None and profile.seq_len is None:
        raise InputError("seq_len", seq_len, f"no sequence length: {name} takes none")
    return profile


def _profile(profiler: ModuleType, models: ModuleType, library: str, model: str, seq_len: int | None,
             versions: dict[str, str]) -> dict[str, Any]:
    """Build and count the model (seconds to minutes): what the disk cache keeps. Only the validation
    modules import torch."""
    target = f"{library}:{model}"
    try:
        built = models.build(library, model, seq_len)
        example = built.example_input(PROFILED_BATCH)
        command = f"sizer profile {target} --batch {PROFILED_BATCH}" + (f" --seq-len {seq_len}" if seq_len else "")
        return dict(profiler.profile_model(
            built, example, name=target, description=f"{target} ({_version(PACKAGES[library])}, random weights)",
            sample=built.sample, seq_len=built.seq_len, generated_by=f"{command} (on the fly)", source=target,
            versions=versions))
    except (ValueError, KeyError, OSError, RuntimeError, TypeError, AttributeError, MemoryError) as error:
        # an unknown name (torchvision ValueError, timm RuntimeError), a config not to be had (OSError), or a
        # model whose forward pass the profiler's one example cannot drive
        first = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        raise InputError("workload", target, f"a model {PACKAGES[library]} can build and run here ({first})") from None


def _version(package: str) -> str:
    try:
        return f"{package} {version(package)}"
    except PackageNotFoundError:
        return package
