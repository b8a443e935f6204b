"""`POST /v1/plan`: the layouts of one (model, device, count) that fit, fastest first."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import ERROR_RESPONSES, CatalogDep, finite, served_from_builtins
from sizer.facade import PlanRequest, PlanResult, plan as search

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/plan", response_model=PlanResult,
             summary="Search tensor x pipeline x data parallel, ZeRO, recomputation and micro-batch; rank what fits")
def plan(body: PlanRequest, catalog: CatalogDep) -> PlanResult:
    served_from_builtins(body)
    return finite(search(body, catalog))
