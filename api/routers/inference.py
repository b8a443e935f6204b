"""`POST /v1/inference`: serving a model, memory, time to first token, tokens/s and cost."""
from __future__ import annotations

from fastapi import APIRouter

from sizer import facade
from sizer.facade import InferenceRequest, InferenceResult, OwnedResult

from ..deps import ERROR_RESPONSES, CatalogDep, finite, price, run_estimate, served_from_builtins

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/inference", response_model=InferenceResult | OwnedResult,
             summary="Serving: memory per device, fit, largest batch, time to first token, decode and total tokens/s, cost; "
                     "with rate or users (and SLOs): latency percentiles, capacity, replicas and cost per million tokens "
                     "under continuous batching; with have: the answer on that hardware only")
async def inference(body: InferenceRequest, catalog: CatalogDep) -> InferenceResult | OwnedResult:
    return await run_estimate(_inference, body, catalog, work=price(body))


def _inference(body: InferenceRequest, catalog) -> InferenceResult | OwnedResult:
    served_from_builtins(body)
    return finite(facade.answer(body, catalog))  # with have: on the user's own hardware only
