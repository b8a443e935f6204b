"""What a runtime is: one frozen description (:class:`Runtime`) and its purpose.

Kept apart from the registry (:mod:`sizer.runtimes`) so that the family modules that describe
runtimes import this and the registry imports them, without a circle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sizer.choices import DeviceKind, KvCache
from sizer.errors import WrittenByName


class Purpose(StrEnum):
    """What a runtime is for: one user's questions on their own machine, or many users' traffic."""

    LOCAL = "local"
    SERVING = "serving"


@dataclass(frozen=True)
class Runtime(WrittenByName):
    """One runtime: its name, what it supports and its fitted profile.

    Parameters
    ----------
    name : str
        The name users type (``llama.cpp``, ``vllm`` ...), lower case.
    purpose : Purpose
        Local or serving.
    summary : str
        One line a user reads in the assumptions.
    sources : tuple of str
        Where what is said of the runtime was read (``docs/references.md`` keys or URLs).
    weight_formats : frozenset of str
        The weight formats it runs (names of :mod:`sizer.runtimes.formats` or GGUF types).
    device_kinds : frozenset of DeviceKind
        The device kinds it runs on (``gpu``, ``cpu``, ``apple`` ...).
    profile : object
        The family's own frozen description (efficiencies, scheduler defaults, memory fraction).
    aliases : tuple of str
        Other spellings users type (``llamacpp``, ``trtllm``).
    vendors : frozenset of str
        The device vendors it runs on, as the catalog spells them (``NVIDIA`` for TensorRT-LLM, whose kernels
        are CUDA only); empty: any vendor of its device kinds.
    kv_caches : frozenset of KvCache
        The KV-cache storage types it offers; empty: any.
    """

    name: str
    purpose: Purpose
    summary: str
    sources: tuple[str, ...]
    weight_formats: frozenset[str]
    device_kinds: frozenset[DeviceKind]
    profile: Any = None
    aliases: tuple[str, ...] = field(default=())
    vendors: frozenset[str] = field(default=frozenset())
    kv_caches: frozenset[KvCache] = field(default=frozenset())

    def __hash__(self) -> int:
        """By name and purpose: a local profile holds dicts (kernels per type), and a request that holds a runtime
        is hashed (a frozen request model); equal runtimes have equal names, so the hash agrees with ``==``."""
        return hash((self.name, self.purpose))

    def refusal(self, *, weights: str | None = None, device_kind: DeviceKind | None = None,
                vendor: str | None = None, kv_cache: KvCache | None = None) -> str | None:
        """Why this runtime cannot run the combination, in a sentence, or None when it can.

        Parameters
        ----------
        weights : str, optional
            A weight format name; None: not checked.
        device_kind : DeviceKind, optional
            The kind a runtime tells apart (:attr:`sizer.hardware.schema.Device.runtime_kind`: ``gpu``, ``cpu``,
            ``apple`` ...); None: not checked.
        vendor : str, optional
            The device's vendor as the catalog names it (``NVIDIA``, ``AMD`` ...); None: not checked.
        kv_cache : KvCache, optional
            A KV-cache storage type (``fp16``, ``fp8``, ``q8_0`` ...); None: not checked.

        Returns
        -------
        str or None
            The first reason it cannot, naming what it does run; None when it can.
        """
        if weights is not None and weights not in self.weight_formats:
            return (f"{self.name} does not run {weights} weights "
                    f"(it runs {', '.join(sorted(self.weight_formats))})")
        if device_kind is not None and device_kind not in self.device_kinds:
            return (f"{self.name} does not run on {_KIND_WORDS.get(device_kind, f'a {device_kind}')} "
                    f"(it runs on {', '.join(sorted(self.device_kinds))})")
        if vendor is not None and self.vendors and vendor.strip().lower() not in {v.lower() for v in self.vendors}:
            return f"{self.name} does not run on {vendor} devices (it runs on {', '.join(sorted(self.vendors))} ones)"
        if kv_cache is not None and self.kv_caches and kv_cache not in self.kv_caches:
            return (f"{self.name} does not store a {kv_cache.value} KV cache "
                    f"(it stores {', '.join(sorted(k.value for k in self.kv_caches))})")
        return None


# How a refusal names a device kind where "a <kind>" reads wrong.
_KIND_WORDS = {DeviceKind.APPLE: "Apple silicon", DeviceKind.ACCELERATOR: "an accelerator"}
