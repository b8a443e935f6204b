"""`GET /v1/models`: every model by name (the built-in presets and the shipped Hugging Face configs),
with their parameter counts, training context and source, and the shipped configs the engine refuses
with the reason (the web page's model picker lists them; `sizer models` prints the same)."""
from __future__ import annotations

from fastapi import APIRouter

from sizer.facade import Model, ModelNotSupported, ModelSummary, configs_answered_by_presets, list_models, unsupported_models

router = APIRouter(prefix="/v1", tags=["catalog"])


class ModelList(Model):
    """The JSON of `sizer models --json`."""

    models: list[ModelSummary]
    not_supported: list[ModelNotSupported] = []  # shipped configs an answer refuses, with the field and reason
    answered_by_preset: dict[str, str] = {}  # shipped config hub id -> the preset whose name covers it


@router.get("/models", response_model=ModelList,
            summary="Models by name (presets and shipped configs), with total and active parameters, context length "
                    "and source; unsupported shipped configs with the reason")
def list_builtin_models() -> ModelList:
    return ModelList(models=list_models(), not_supported=unsupported_models(),
                     answered_by_preset=configs_answered_by_presets())
