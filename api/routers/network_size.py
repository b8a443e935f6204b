"""`POST /v1/cells`, `/v1/k1`, `/v1/complexity`: the analytic expressions of seed 003."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import CellsResult, ComplexityResult, K1Result

from ..deps import ERROR_RESPONSES, finite

router = APIRouter(prefix="/v1", tags=["network size"], responses=ERROR_RESPONSES)


@router.post("/cells", response_model=CellsResult, summary="Memory cells of the model-synthesis algorithm (seed 003 eq. 1)")
def cells(body: facade.CellsRequest) -> CellsResult:
    return finite(facade.cells(body))


@router.post("/k1", response_model=K1Result, summary="K1 = N_w / (S N): memory redundancy (seed 003 eq. 4)")
def k1(body: facade.K1Request) -> K1Result:
    return finite(facade.k1(body))


@router.post("/complexity", response_model=ComplexityResult, summary="Sequential T1 and parallel T2 complexity (seed 003 eq. 2, 3)")
def complexity(body: facade.ComplexityRequest) -> ComplexityResult:
    return finite(facade.complexity(body))
