"""`GET /v1/models`: the built-in architectures by name, with their parameter counts (the web
page's model picker lists them)."""
from __future__ import annotations

import functools

from fastapi import APIRouter

from sizer.facade import Model, find_model, model_names

router = APIRouter(prefix="/v1", tags=["catalog"])


class ModelSummary(Model):
    name: str
    family: str
    params_total: int  # every weight, embeddings included
    params_active: int  # weights used per token (fewer than params_total for a mixture of experts)


class ModelList(Model):
    models: list[ModelSummary]


@functools.lru_cache(maxsize=1)
def _builtin_models() -> ModelList:
    """Built once: the registry's models do not change while the process runs."""
    summaries = []
    for name in model_names():
        arch = find_model(name)
        summaries.append(ModelSummary(name=name, family=arch.family, params_total=arch.params_total(),
                                      params_active=arch.params_active()))
    return ModelList(models=summaries)


@router.get("/models", response_model=ModelList,
            summary="Built-in architectures by name, with total and active parameter counts")
def list_models() -> ModelList:
    return _builtin_models()
