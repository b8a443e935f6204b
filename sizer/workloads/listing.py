"""Every model ``--model`` answers, as a list a person or a page can choose from: the built-in presets
(``catalog/models.yaml``, ``catalog/model_presets/``) and the shipped Hugging Face configs
(``catalog/hf_configs``), with parameters, training context and the published config each came
from; the shipped configs the engine cannot express, and the models ``catalog/model_presets/not-supported.yaml``
refuses, are listed apart with the reason.

>>> llama = {m.name: m for m in list_models()}["llama-2-7b"]
>>> llama.params_total, llama.context, llama.kind
(6738415616, 4096, 'preset')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sizer.errors import InputError
from sizer.memo import registered_cache
from sizer.results import Model
from sizer.workloads.architecture import Architecture
from sizer.workloads.names import name_key
from sizer.workloads.refused import refused_models
from sizer.workloads.registry import _index, builtin_entries
from sizer.workloads.shipped import shipped_architecture, shipped_configs


class ModelSummary(Model):
    name: str  # what --model takes: a preset's name, or a shipped config's hub id
    display_name: str
    family: str
    params_total: int  # every weight, embeddings included
    params_active: int  # weights used per token (fewer than params_total for a mixture of experts)
    context: int  # the longest sequence the model was trained for [tokens] (max_context)
    source: str  # the published config the architecture was read from
    verified: bool  # False where a figure of the entry was recalled or its source row is not high confidence
    kind: Literal["preset", "config"] = "preset"  # a built-in preset, or a shipped config.json


class ModelNotSupported(Model):
    name: str  # the hub id: a shipped config's, or one of catalog/model_presets/not-supported.yaml
    source: str  # where the config (or the shape the table cites) was copied from
    field: str  # the config field the engine refuses, e.g. "model.model_type"
    reason: str  # the refusal, as an answer for it would give it


@dataclass(frozen=True)
class _Listing:
    models: tuple[ModelSummary, ...]
    not_supported: tuple[ModelNotSupported, ...]
    answered_by_preset: tuple[tuple[str, str], ...]  # (hub id, preset name): a shipped config a preset's name covers


def _summary(arch: Architecture, name: str, display: str, kind: Literal["preset", "config"]) -> ModelSummary:
    return ModelSummary(name=name, display_name=display, family=arch.family, params_total=arch.params_total(),
                        params_active=arch.params_active(), context=arch.max_context, source=arch.source,
                        verified=arch.verified, kind=kind)


@registered_cache()
def _listing() -> _Listing:
    """Built once: the presets and shipped configs do not change while the process runs (every config parsed)."""
    presets = [_summary(entry.architecture(), entry.name, entry.display_name, "preset")
               for entry in sorted(builtin_entries(), key=lambda e: e.name)]
    configs, refused, covered = [], [], []
    for config in sorted(shipped_configs(), key=lambda c: c.hub_id):
        preset = _index().get(name_key(config.hub_id))
        if preset is not None:  # its names reach the preset (every name a preset had keeps its meaning)
            covered.append((config.hub_id, preset.name))
            continue
        try:
            arch = shipped_architecture(config.hub_id)
        except InputError as error:
            refused.append(ModelNotSupported(name=config.hub_id, source=config.source, field=error.field,
                                             reason=error.message))
            continue
        configs.append(_summary(arch, config.hub_id, config.short_name, "config"))
    refused += [ModelNotSupported(name=entry.name, source=entry.source, field=entry.field,
                                  reason=entry.error(entry.name).message)
                for entry in refused_models()]
    return _Listing(tuple(sorted(presets + configs, key=lambda m: m.name)),
                    tuple(sorted(refused, key=lambda m: m.name)), tuple(covered))


def list_models() -> list[ModelSummary]:
    """Every model --model answers by name, presets and shipped configs, sorted by name (a hub id as written).

    Returns
    -------
    list of ModelSummary
        Name, family, parameter counts, context and source of each.
    """
    return list(_listing().models)


def unsupported_models() -> list[ModelNotSupported]:
    """The models the engine refuses, each with the field and the reason (an answer gives the same): the shipped
    configs it cannot express, and the models ``catalog/model_presets/not-supported.yaml`` lists.

    Returns
    -------
    list of ModelNotSupported
        By hub id.
    """
    return list(_listing().not_supported)


def configs_answered_by_presets() -> dict[str, str]:
    """The shipped configs whose hub id is a preset's name or alias, so the preset answers it
    (``deepseek-ai/DeepSeek-V3`` -> ``deepseek-v3``).

    Returns
    -------
    dict of str to str
        Hub id -> preset name.
    """
    return dict(_listing().answered_by_preset)
