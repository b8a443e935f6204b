"""The built-in architectures as a list a person or a page can choose from: name, parameters,
training context and the published config each came from (``catalog/models.yaml``).

>>> llama = {m.name: m for m in list_models()}["llama-2-7b"]
>>> llama.params_total, llama.context
(6738415616, 4096)
"""
from __future__ import annotations

from sizer.memo import registered_cache
from sizer.results import Model
from sizer.workloads.registry import builtin_entries


class ModelSummary(Model):
    name: str
    display_name: str
    family: str
    params_total: int  # every weight, embeddings included
    params_active: int  # weights used per token (fewer than params_total for a mixture of experts)
    context: int  # the longest sequence the model was trained for [tokens] (max_context)
    source: str  # the published config the architecture was read from
    verified: bool  # False where a figure of the entry was recalled or its source row is not high confidence


@registered_cache()
def _summaries() -> tuple[ModelSummary, ...]:
    """Built once: the registry does not change while the process runs."""
    summaries = []
    for entry in sorted(builtin_entries(), key=lambda e: e.name):
        arch = entry.architecture()
        summaries.append(ModelSummary(name=entry.name, display_name=entry.display_name, family=arch.family,
                                      params_total=arch.params_total(), params_active=arch.params_active(),
                                      context=arch.max_context, source=arch.source, verified=arch.verified))
    return tuple(summaries)


def list_models() -> list[ModelSummary]:
    """Every built-in architecture, sorted by name.

    Returns
    -------
    list of ModelSummary
        Name, family, parameter counts and source of each built-in model.
    """
    return list(_summaries())
