"""`POST /v1/compute`: training compute of a workload (seed 004 eq. 3)."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import ComputeResult, WorkloadRequest

from ..deps import ERROR_RESPONSES, finite, served_from_builtins

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/compute", response_model=ComputeResult, summary="Training compute C = O_b F_fwd S E")
def compute(body: WorkloadRequest) -> ComputeResult:
    served_from_builtins(body)
    return finite(facade.estimate_compute(body))
