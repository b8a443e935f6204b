"""`POST /v1/tco`: total cost of ownership, rent and buy side by side."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import TcoResult

from ..deps import ERROR_RESPONSES, CatalogDep, finite, served_from_builtins

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/tco", response_model=TcoResult, summary="Cost of a training run: cloud rent, and purchase amortised plus energy")
def tco(body: facade.TcoRequest, catalog: CatalogDep) -> TcoResult:
    served_from_builtins(body)
    return finite(facade.estimate_cost(body, catalog))
