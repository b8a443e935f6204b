"""`POST /v1/time`: training time on n devices, per step and in all."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import OwnedResult, TimeResult

from ..deps import ERROR_RESPONSES, CatalogDep, finite, price, run_estimate, served_from_builtins

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/time", response_model=TimeResult | OwnedResult,
             summary="Training time from the one per-layer engine: a built-in workload, a model by name or a parameter count")
async def time(body: facade.TimeRequest, catalog: CatalogDep) -> TimeResult | OwnedResult:
    return await run_estimate(_time, body, catalog, work=price(body))


def _time(body: facade.TimeRequest, catalog) -> TimeResult | OwnedResult:
    served_from_builtins(body)
    return finite(facade.answer(body, catalog))  # with have: on the user's own hardware only
