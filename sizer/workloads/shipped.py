"""The Hugging Face ``config.json`` files shipped with sizer (``catalog/hf_configs``), by hub id and short name.

Each file is a published model's config, copied byte for byte from a public copy; the folder's
``index-2026-12.csv`` gives each its hub id, source (``owner/repo@commit:path``) and confidence, and
``names.yaml`` the few short names and checkpoint facts a config does not state. Names come from
those two small files: a config is parsed only when its model is asked for (start-up reads none).

Names, most specific first (:func:`find_shipped`):

1. the hub id, any case: ``Qwen/Qwen3-32B``;
2. the part after the organisation, compared as :func:`~sizer.workloads.names.name_key` does
   (``qwen3-32b``); two hub ids of one short name (``org-a/X`` and ``org-b/X``) make it ambiguous;
3. a short form: the name without trailing variant words (``-Instruct``, ``-Base``, ``-it``, ``-chat``,
   ``-hf``, ``-BF16``, ``-Thinking`` or a four-digit release such as ``-2507``), or a name in
   ``names.yaml``. A form that is also an entry's own name is that entry (``deepseek-r1`` is
   DeepSeek-R1, not R1-0528); a form two entries share is refused, naming both.

Quantisation words (``-FP8``, ``-NVFP4``) are never dropped: a re-quantised copy is another checkpoint.

>>> find_shipped("qwen/qwen3-32b").hub_id, find_shipped("kimi-k2").hub_id
('Qwen/Qwen3-32B', 'moonshotai/Kimi-K2-Instruct')
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sizer.errors import CatalogError, InputError
from sizer.memo import registered_cache
from sizer.workloads.architecture import Architecture
from sizer.workloads.names import name_key

INDEX_FILE = "index-2026-12.csv"
NAMES_FILE = "names.yaml"
MAX_INDEX_BYTES = 200_000
# Trailing words that name a release variant of the same architecture, dropped for a short form.
VARIANT_WORDS = frozenset({"instruct", "base", "it", "chat", "hf", "bf16", "thinking"})
RELEASE = re.compile(r"^\d{4}$")  # a month or date tag: -2507, -0528


def configs_dir() -> Path:
    """The folder of the shipped configs, ``catalog/hf_configs``.

    Returns
    -------
    Path
        The folder.
    """
    from sizer.hardware.catalog import builtin_catalog_dir

    return builtin_catalog_dir() / "hf_configs"


@dataclass(frozen=True)
class ShippedConfig:
    """One shipped config: its hub id, file, source and confidence (a row of the index), and the
    names and checkpoint facts ``names.yaml`` adds."""

    hub_id: str
    file: str
    family: str
    params_total: str  # as the model's name or card states it ("32.8B"), for people, not computation
    params_active: str
    source_ref: str  # owner/repo@commit:path of the copy
    confidence: str  # high, medium or low (the index's definitions)
    notes: str
    aliases: tuple[str, ...] = ()
    checkpoint_weights: str | None = None  # a checkpoint format the config does not state (names.yaml)
    checkpoint_source: str | None = None  # where that format is stated

    @property
    def verified(self) -> bool:
        """True where the index rates the copy high confidence."""
        return self.confidence == "high"

    @property
    def short_name(self) -> str:
        """The part of the hub id after the organisation (``Qwen3-32B``)."""
        return self.hub_id.rsplit("/", 1)[-1]

    @property
    def path(self) -> Path:
        """The config file."""
        return configs_dir() / self.file

    @property
    def source(self) -> str:
        """The citation an answer carries: the copy's source, the shipped file and the confidence."""
        return f"{self.source_ref} (catalog/hf_configs/{self.file}; {self.confidence} confidence)"


def _variant_forms(short: str) -> list[str]:
    """The short forms of a hub name: each trailing variant word or release tag dropped in turn."""
    words = short.split("-")
    forms = []
    while len(words) > 1 and (words[-1].lower() in VARIANT_WORDS or RELEASE.match(words[-1])):
        words = words[:-1]
        forms.append("-".join(words))
    return forms


def shipped_configs() -> tuple[ShippedConfig, ...]:
    """Every shipped config, from the index and ``names.yaml`` (no config is parsed; about 2.4 ms, read once
    per process by :func:`_names` and by the model list, which keep what they need).

    Returns
    -------
    tuple of ShippedConfig
        In the index's order.

    Raises
    ------
    CatalogError
        A malformed index, a row whose file is missing, or a ``names.yaml`` entry for no row.
    """
    from sizer.datafile import load_yaml, read_text

    folder = configs_dir()
    rows = list(csv.DictReader(io.StringIO(read_text(folder / INDEX_FILE, "model", MAX_INDEX_BYTES))))
    extra = load_yaml(folder / NAMES_FILE, "model", MAX_INDEX_BYTES) or {}
    extras: dict[str, Any] = {str(k).lower(): v for k, v in (extra.get("configs") or {}).items()}
    configs = []
    for row in rows:
        hub_id = row["hub_id"].strip()
        if not (folder / row["file"]).is_file() or "/" not in hub_id:
            raise CatalogError(f"{folder / INDEX_FILE}: row {hub_id!r}: no file {row['file']!r} or no organisation",
                               "model")
        more = extras.pop(hub_id.lower(), None) or {}
        configs.append(ShippedConfig(
            hub_id=hub_id, file=row["file"], family=row["family"], params_total=row["params_total"],
            params_active=row["params_active"], source_ref=row["source_ref"], confidence=row["confidence"],
            notes=row["notes"], aliases=tuple(str(a) for a in more.get("aliases", ())),
            checkpoint_weights=more.get("checkpoint_weights"), checkpoint_source=more.get("checkpoint_source")))
    if extras:
        raise CatalogError(f"{folder / NAMES_FILE}: entries for no shipped config: {', '.join(sorted(extras))}", "model")
    return tuple(configs)


@dataclass(frozen=True)
class _Names:
    exact: dict[str, ShippedConfig]  # hub id, lower case
    own: dict[str, tuple[ShippedConfig, ...]]  # name_key of the part after the organisation
    forms: dict[str, tuple[ShippedConfig, ...]]  # name_key of a short form or an alias


@registered_cache()
def _names() -> _Names:
    """The shipped configs by every name (built once, from the index only)."""
    exact: dict[str, ShippedConfig] = {}
    own: dict[str, list[ShippedConfig]] = {}
    forms: dict[str, list[ShippedConfig]] = {}
    for config in shipped_configs():
        exact[config.hub_id.lower()] = config
        own.setdefault(name_key(config.hub_id), []).append(config)
        for form in (*_variant_forms(config.short_name), *config.aliases):
            kept = forms.setdefault(name_key(form), [])
            if config not in kept:
                kept.append(config)
    return _Names(exact, {k: tuple(v) for k, v in own.items()},
                  {k: tuple(v) for k, v in forms.items() if k not in own})


def shipped_keys() -> dict[str, str]:
    """Every compared name of the shipped configs and the hub id it names (ambiguous ones left out): for suggestions.

    Returns
    -------
    dict of str to str
        name_key -> hub id.
    """
    names = _names()
    keys = {key: found[0].hub_id for key, found in names.forms.items() if len(found) == 1}
    keys.update({key: found[0].hub_id for key, found in names.own.items() if len(found) == 1})
    return keys


def find_shipped(name: str) -> ShippedConfig | None:
    """The shipped config a name means, or None where it names none.

    Parameters
    ----------
    name : str
        A hub id, a short name or a short form (module docstring).

    Returns
    -------
    ShippedConfig or None
        The config.

    Raises
    ------
    InputError
        A short name or form that two shipped configs share: the message names both hub ids.
    """
    names = _names()
    found = names.exact.get(name.strip().lower())
    if found is not None:
        return found
    key = name_key(name)
    for table in (names.own, names.forms):
        matches = table.get(key)
        if matches:
            if len(matches) > 1:
                raise InputError("model", name, "one model: it names " + " and ".join(c.hub_id for c in matches)
                                                + "; give the hub id")
            return matches[0]
    return None


def config_data(hub_id: str) -> dict[str, Any]:
    """The parsed config of a shipped model (about 0.13 ms: not kept, its architecture is).

    Parameters
    ----------
    hub_id : str
        The hub id, exactly as the index gives it.

    Returns
    -------
    dict of str to Any
        The config.
    """
    from sizer.workloads.hf_config import load_json

    return load_json(_by_hub_id(hub_id).path)


def _by_hub_id(hub_id: str) -> ShippedConfig:
    config = _names().exact.get(hub_id.lower())
    if config is None:
        raise InputError("model", hub_id, "a shipped config's hub id")
    return config


@registered_cache()
def shipped_architecture(hub_id: str) -> Architecture:
    """The architecture of a shipped config, named by its hub id and citing its source.

    Parameters
    ----------
    hub_id : str
        The hub id, exactly as the index gives it.

    Returns
    -------
    Architecture
        The checked architecture, ``verified`` where the index rates the copy high confidence.

    Raises
    ------
    InputError
        The engine cannot express the config: the error names the config field
        (``model.model_type`` for an unsupported type ...), passed on unchanged.
    """
    from sizer.workloads.hf_config import architecture_from_config

    config = _by_hub_id(hub_id)
    arch = architecture_from_config(config_data(hub_id), name=config.hub_id, source=config.source)
    return replace(arch, verified=arch.verified and config.verified)
