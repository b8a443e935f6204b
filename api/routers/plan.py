"""`POST /v1/plan`: the layouts of one (model, device, count) that fit, fastest first."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import OwnedResult, PlanRequest, PlanResult

from ..deps import ERROR_RESPONSES, CatalogDep, finite, price, run_estimate, served_from_builtins

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/plan", response_model=PlanResult | OwnedResult,
             summary="Search tensor x pipeline x data parallel, ZeRO, recomputation and micro-batch; rank what fits")
async def plan(body: PlanRequest, catalog: CatalogDep) -> PlanResult | OwnedResult:
    return await run_estimate(_plan, body, catalog, work=price(body))


def _plan(body: PlanRequest, catalog) -> PlanResult | OwnedResult:
    served_from_builtins(body)
    return finite(facade.answer(body, catalog))  # with have: on the user's own hardware only
