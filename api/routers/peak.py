"""`POST /v1/peak`: peak and sustained FLOP/s of a device, or of a core count and clock."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import PeakResult

from ..deps import ERROR_RESPONSES, CatalogDep, finite

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/peak", response_model=PeakResult, summary="Peak FLOP/s (R = 2NC or the catalog's tensor peak) and the sustained range")
def peak(body: facade.PeakRequest, catalog: CatalogDep) -> PeakResult:
    return finite(facade.peak(body, catalog))
