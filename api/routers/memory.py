"""`POST /v1/memory`: training memory footprint, and whether it fits a device."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import MemoryResult, OwnedResult

from ..deps import ERROR_RESPONSES, CatalogDep, finite, price, run_estimate, served_from_builtins

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/memory", response_model=MemoryResult | OwnedResult, summary="Weights, gradients, optimizer state, activations; fit and largest batch")
async def memory(body: facade.MemoryRequest, catalog: CatalogDep) -> MemoryResult | OwnedResult:
    return await run_estimate(_memory, body, catalog, work=price(body))


def _memory(body: facade.MemoryRequest, catalog) -> MemoryResult | OwnedResult:
    served_from_builtins(body)
    return finite(facade.answer(body, catalog))  # with have: on the user's own hardware only
