"""`POST /v1/recommend`: which device, how many, how long, what cost; or, with
``"task": "inference"``, the cheapest devices that serve a model at a target."""
from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Response
from pydantic import ConfigDict, RootModel, ValidationError

from api.deps import CatalogDep, ERROR_RESPONSES, finite, served_from_builtins, run_estimate
from sizer.facade import InferenceRecommendRequest, InferenceRecommendResult, recommend_inference
from sizer.facade import InferenceRequest, OwnedResult, RecommendRequest, RecommendResult, answer_owned, answered_quickly
from sizer.memo import keyed_cache
from sizer.plan.recommend import HTTP_TOP, recommend_json

router = APIRouter(prefix="/v1", tags=["recommendation"], responses=ERROR_RESPONSES)


class RecommendBody(RootModel[dict[str, Any]]):
    """A RecommendRequest (training), or an InferenceRecommendRequest when ``"task": "inference"``.

    The body is validated against the one model its ``task`` chooses, so that a bad field is
    reported against that model alone, as ``["body", field]`` (a plain union would report it
    against both)."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        *RecommendRequest.model_json_schema().get("examples", []),
        *InferenceRecommendRequest.model_json_schema().get("examples", [])]})


@router.post("/recommend", response_model=RecommendResult | InferenceRecommendResult | OwnedResult,
             summary="Rank every catalog device for a workload (training) or a served model (\"task\": \"inference\")")
async def recommend(body: RecommendBody, catalog: CatalogDep) -> RecommendResult | InferenceRecommendResult | OwnedResult:
    fields = body.root
    if _quick(fields, catalog):  # about a millisecond: answered here, no hand-over to a worker thread and back
        return _recommend(fields, catalog)
    return await run_estimate(_recommend, fields, catalog)


def _quick(fields: dict, catalog) -> bool:
    """A training question whose layouts are kept (or one refused at once): run where it arrives. Handed
    to a thread, the engine's numpy passes release the GIL to the event loop and take it back some
    hundred times an answer, which costs more than the answer (benchmarks/results/http_load.md)."""
    if fields.get("have") or fields.get("task") == "inference":
        return False
    try:
        request = RecommendRequest.model_validate({"top": HTTP_TOP, **fields})
    except ValidationError:
        return True
    return answered_quickly(request, catalog)


def _recommend(fields: dict, catalog) -> RecommendResult | InferenceRecommendResult | OwnedResult | Response:
    if fields.get("have") and fields.get("task") == "inference":  # serving on the user's own hardware only
        served = InferenceRequest.model_validate({k: v for k, v in fields.items() if k != "task"})
        served_from_builtins(served)
        return finite(answer_owned(served, catalog))
    if fields.get("task") == "inference":
        request = InferenceRecommendRequest.model_validate(fields)
        served_from_builtins(request)
        return finite(recommend_inference(request, catalog))
    if fields.get("have"):  # the user's own hardware only
        request = RecommendRequest.model_validate(fields)
        served_from_builtins(request)
        return finite(answer_owned(request, catalog))
    return Response(content=_ranked_bytes(json.dumps(fields, sort_keys=True, default=str), fields, catalog),
                    media_type="application/json")


@keyed_cache(maxsize=256, key=lambda body, fields, catalog: (body, catalog.key))
def _ranked_bytes(body: str, fields: dict, catalog) -> bytes:
    """The answer to a training body (``fields``; ``body`` is their canonical text, the key), as JSON
    bytes: rendered once per body (a page or client asking again gets the same bytes; an error is
    never kept). Compact unless the body asks for more rows (``top``)."""
    request = RecommendRequest.model_validate({"top": HTTP_TOP, **fields})
    served_from_builtins(request)
    return recommend_json(request, catalog)
