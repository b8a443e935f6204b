"""`POST /v1/recommend`: which device, how many, how long, what cost; or, with
``"task": "inference"``, the cheapest devices that serve a model at a target."""
from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Response
from pydantic import ConfigDict, RootModel

from api.deps import CatalogDep, ERROR_RESPONSES, finite, served_from_builtins
from sizer.facade import InferenceRecommendRequest, InferenceRecommendResult, recommend_inference
from sizer.facade import InferenceRequest, OwnedResult, RecommendRequest, RecommendResult, answer_owned, recommend as rank

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
def recommend(body: RecommendBody, catalog: CatalogDep) -> RecommendResult | InferenceRecommendResult | OwnedResult:
    fields = body.root
    if fields.get("have") and fields.get("task") == "inference":  # serving on the user's own hardware only
        served = InferenceRequest.model_validate({k: v for k, v in fields.items() if k != "task"})
        served_from_builtins(served)
        return finite(answer_owned(served, catalog))
    if fields.get("task") == "inference":
        request = InferenceRecommendRequest.model_validate(fields)
        served_from_builtins(request)
        return finite(recommend_inference(request, catalog))
    key = (json.dumps(fields, sort_keys=True, default=str), id(catalog))
    answered = _BY_BODY.get(key)
    if answered is not None and answered[0] is catalog:  # the same body again: the same bytes
        return Response(content=answered[1], media_type="application/json")
    request = RecommendRequest.model_validate(fields)
    served_from_builtins(request)
    if request.have:  # the user's own hardware only
        return finite(answer_owned(request, catalog))
    response = rendered(rank(request, catalog))
    if len(_BY_BODY) > 64:
        _BY_BODY.clear()
    _BY_BODY[key] = (catalog, response.body)
    return response


_BY_BODY: dict[tuple[str, int], tuple[object, bytes]] = {}


_RENDERED: dict[int, tuple[RecommendResult, bytes]] = {}


def rendered(result: RecommendResult) -> Response:
    """The result, checked finite, as JSON bytes, rendered once per result object: the core hands back
    the same object for the same question (its answers are kept), so a repeated question skips both."""
    kept = _RENDERED.get(id(result))
    if kept is None or kept[0] is not result:
        if len(_RENDERED) > 64:
            _RENDERED.clear()
        kept = _RENDERED[id(result)] = (result, finite(result).model_dump_json().encode("utf-8"))
    return Response(content=kept[1], media_type="application/json")
