"""Chips sold in several GPU-core and memory configurations (Apple silicon), named as people write them.

A catalog entry of such a chip names its configuration: ``Apple M1 Max (24-core GPU, 32 GB unified memory)``
(one memory size) or ``Apple M1 Max (24-core GPU, unified memory)`` (its largest), with the GPU-core count in
its architecture, ``Apple M1 (24-core GPU)``. The entries of one chip make a family. A name that is the chip's
name with or without a GPU-core count and a memory size ("M1 Max", "Apple M1 Max 32-core", "M1 Ultra 64 core",
"M1 Max (24-core GPU)", "M2 Pro 16c", "M3 Max 40-core 64GB") is resolved within its family: to the fewest GPU
cores, then the smallest memory, that fit what it names, which is the configuration the cheapest machine with
that chip has. Where the name leaves a choice open, the answer states what was assumed (:attr:`Chosen.statement`).

>>> parse_variant_name("Apple M1 Max (32-core GPU, 64GB)")
VariantName(chip=('m1', 'max'), gpu_cores=32, memory_gb=64)
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sizer.choices import DeviceKind
from sizer.errors import DeviceLookupError
from sizer.hardware.schema import Device
from sizer.units import Quantity

# "(24-core GPU)" in an entry's architecture: the GPU-core count of that configuration
_ARCHITECTURE_CORES = re.compile(r"\(([0-9]+)-core GPU\)")
# "24-core", "24 core", "24 cores", "24-core GPU", "24c"; never "12-core CPU" nor "12 CPU cores"
_CORES = re.compile(r"(?<![\w.])([0-9]{1,3})\s*-?\s*(?:cores?\b|c\b)(?:\s*-?\s*gpu\b)?(?!\s*-?\s*cpu)", re.IGNORECASE)
# "12 CPU cores", "10-core CPU": the CPU of a machine named by its GPU, dropped before the GPU's words are read
_CPU_CORES = re.compile(r"(?<![\w.])[0-9]{1,3}\s*-?\s*(?:cpu\s*cores?|cores?\s*cpu)\b", re.IGNORECASE)
_MEMORY = re.compile(r"(?<![\w.])([0-9]{1,4})\s*-?\s*gb\b", re.IGNORECASE)
# the machine around the chip and the words of a configuration, which do not change which chip is meant
_MACHINE = re.compile(r"\b(?:mac\s*book\s+(?:pro|air)|mac\s+(?:studio|mini|pro)|imac|macbook)\b", re.IGNORECASE)
_FILLER = frozenset({"apple", "gpu", "unified", "memory", "with", "and", "ram", "base"})


@dataclass(frozen=True)
class VariantName:
    """What a name says of a chip configuration: the chip's words (lower case, without "Apple") and, where
    given, the GPU-core count and the memory size [GB]."""

    chip: tuple[str, ...]
    gpu_cores: int | None
    memory_gb: int | None


@dataclass(frozen=True)
class Variant:
    """One catalog entry of a chip family: its GPU-core count and memory [GB]."""

    device: Device
    chip: str  # the chip's name as the entry writes it, e.g. "Apple M1 Max"
    gpu_cores: int
    memory_gb: float


@dataclass(frozen=True)
class Chosen:
    """The entry a chip name resolved to, and what was assumed for what the name left open (None: nothing)."""

    device: Device
    statement: str | None


def _words(text: str) -> tuple[str, ...]:
    return tuple(word for word in re.split(r"[^a-z0-9+]+", text.lower()) if word and word not in _FILLER)


def parse_variant_name(name: str) -> VariantName | None:
    """The chip, GPU-core count and memory a name gives, or None where it names a CPU or gives none of a chip.

    Parameters
    ----------
    name : str
        A device name as a user writes it, e.g. ``"M1 Max 24-core"`` or ``"Mac Studio M2 Ultra, 192 GB"``.

    Returns
    -------
    VariantName or None
        The chip's words and what the name states of its configuration [cores, GB].
    """
    name = _CPU_CORES.sub(" ", name)
    if re.search(r"\bcpu\b", name, re.IGNORECASE):  # "Apple M1 Max CPU": the chip's CPU, never its GPU
        return None
    cores = [int(n) for n in _CORES.findall(name)]
    memory = [int(n) for n in _MEMORY.findall(name)]
    if len(cores) > 1 or len(memory) > 1:
        return None
    rest = _MEMORY.sub(" ", _CORES.sub(" ", _MACHINE.sub(" ", name)))
    chip = _words(rest)
    if not chip:
        return None
    return VariantName(chip, cores[0] if cores else None, memory[0] if memory else None)


def families(devices: Iterable[Device]) -> dict[tuple[str, ...], list[Variant]]:
    """The catalog's entries of chips with GPU-core configurations, by the chip's words (fewest cores first).

    Parameters
    ----------
    devices : iterable of Device
        The catalog's devices; those whose architecture names an "N-core GPU" form families.

    Returns
    -------
    dict
        Chip words (without "Apple"), e.g. ``("m1", "max")`` -> its entries, ordered by GPU cores and memory.
    """
    found: dict[tuple[str, ...], list[Variant]] = {}
    for device in devices:
        cores = _ARCHITECTURE_CORES.search(device.architecture)
        if cores is None or device.kind is not DeviceKind.GPU or " (" not in device.name:
            continue
        chip = device.name.split(" (", 1)[0]
        memory = float(Quantity(device.memory.si("memory", "[information]"), "B").to("GB").magnitude)
        found.setdefault(_words(chip), []).append(Variant(device, chip, int(cores.group(1)), memory))
    for variants in found.values():
        variants.sort(key=lambda v: (v.gpu_cores, v.memory_gb, v.device.id))
    return found


def _listed(values: Iterable[int]) -> str:
    items = [str(v) for v in sorted(set(values))]
    return " or ".join(items) if len(items) <= 2 else ", ".join(items[:-1]) + " or " + items[-1]


def resolve_variant(family_index: dict[tuple[str, ...], list[Variant]], name: str,
                    field_name: str = "device") -> Chosen | None:
    """The entry a chip name means within its family, with what was assumed; None where it names no family.

    Parameters
    ----------
    family_index : dict
        :func:`families` of the catalog.
    name : str
        The name a user gave, e.g. ``"M1 Max"`` or ``"M1 Ultra 64 core"``.
    field_name : str, default ``"device"``
        The input field the name came from, named in an error.

    Returns
    -------
    Chosen or None
        The fewest GPU cores, then the smallest memory, that fit the name, and the statement of what the
        name left open; None where the name is no chip of a family (the ordinary lookup goes on).

    Raises
    ------
    DeviceLookupError
        A chip named with a GPU-core count or memory size that no entry of it has (its entries are listed).
    """
    asked = parse_variant_name(name)
    if asked is None or asked.chip not in family_index:
        return None
    variants = family_index[asked.chip]
    chip = variants[0].chip.removeprefix("Apple ")
    fitting = [v for v in variants if (asked.gpu_cores is None or v.gpu_cores == asked.gpu_cores)
               and (asked.memory_gb is None or abs(v.memory_gb - asked.memory_gb) < 0.5)]
    if not fitting:
        names = [f"{v.device.name} ({v.device.id})" for v in variants]
        given = " with ".join(part for part in (f"{asked.gpu_cores}-core GPU" if asked.gpu_cores else "",
                                                 f"{asked.memory_gb} GB" if asked.memory_gb else "") if part)
        raise DeviceLookupError(
            f"{field_name}: the catalog has no {chip} with {given}; it has the {chip} with "
            f"{_listed(v.gpu_cores for v in variants)} GPU cores ({', '.join(f'{v.device.id}' for v in variants)}): "
            "name one of those, or add yours with --catalog", names, field_name)
    chosen = fitting[0]
    core_options = sorted({v.gpu_cores for v in fitting})
    memory_options = sorted({round(v.memory_gb) for v in fitting if v.gpu_cores == chosen.gpu_cores})
    open_parts, unnamed = [], []
    if asked.gpu_cores is None and len(core_options) > 1:
        open_parts.append(f"the {chip} comes with {_listed(core_options)} GPU cores")
        unnamed.append("GPU-core count")
    if asked.memory_gb is None and len(memory_options) > 1:
        open_parts.append(f"the {chosen.gpu_cores}-core {chip} with {_listed(memory_options)} GB")
        unnamed.append("memory size")
    if not open_parts:
        return Chosen(chosen.device, None)
    others = [f"'{chip} {n}-core'" for n in core_options if n != chosen.gpu_cores][-1:]
    others += [f"'{chip} {chosen.gpu_cores}-core {m}GB'" for m in memory_options if m != round(chosen.memory_gb)][-1:]
    statement = (f"{name.strip()!r} names no {' or '.join(unnamed)}: {'; '.join(open_parts)}; the smallest in the catalog, the "
                 f"{chosen.gpu_cores}-core variant with {round(chosen.memory_gb)} GB ({chosen.device.id}), assumed; "
                 f"name {' or '.join(others)} for another")
    return Chosen(chosen.device, statement)
