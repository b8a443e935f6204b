"""`POST /v1/time`: training time on n devices, per step and in all."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import ERROR_RESPONSES, CatalogDep, finite
from sizer import estimates
from sizer.timing import TimeResult

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/time", response_model=TimeResult, summary="Training time: compute- vs memory-bound steps, overhead, all-reduce")
def time(body: estimates.TimeRequest, catalog: CatalogDep) -> TimeResult:
    return finite(estimates.estimate_time(body, catalog))
