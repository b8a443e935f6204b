"""`GET /v1/models`: the built-in architectures by name, with their parameter counts, training
context and source (the web page's model picker lists them; `sizer models` prints the same)."""
from __future__ import annotations

from fastapi import APIRouter

from sizer.facade import Model, ModelSummary, list_models

router = APIRouter(prefix="/v1", tags=["catalog"])


class ModelList(Model):
    """The JSON of `sizer models --json`."""

    models: list[ModelSummary]


@router.get("/models", response_model=ModelList,
            summary="Built-in architectures by name, with total and active parameters, context length and source")
def list_builtin_models() -> ModelList:
    return ModelList(models=list_models())
