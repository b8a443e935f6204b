"""`POST /v1/time`: training time on n devices, per step and in all."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import ERROR_RESPONSES, CatalogDep, builtin_workload_only, finite
from sizer import estimates
from sizer.profile_time import ProfileTimeResult
from sizer.timing import TimeResult

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/time", response_model=TimeResult | ProfileTimeResult,
             summary="Training time: per layer for a built-in workload, else from the parameter count")
def time(body: estimates.TimeRequest, catalog: CatalogDep) -> TimeResult | ProfileTimeResult:
    builtin_workload_only(body.workload)
    return finite(estimates.estimate_time(body, catalog))
