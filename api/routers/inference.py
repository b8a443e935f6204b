"""`POST /v1/inference`: serving a model, memory, time to first token, tokens/s and cost."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import CatalogDep, ERROR_RESPONSES, finite, served_from_builtins
from sizer.facade import InferenceRequest, InferenceResult, estimate_inference

router = APIRouter(prefix="/v1", tags=["estimates"], responses=ERROR_RESPONSES)


@router.post("/inference", response_model=InferenceResult,
             summary="Serving: memory per device, fit, largest batch, time to first token, decode and total tokens/s, cost; "
                     "with rate or users (and SLOs): latency percentiles, capacity, replicas and cost per million tokens "
                     "under continuous batching")
def inference(body: InferenceRequest, catalog: CatalogDep) -> InferenceResult:
    served_from_builtins(body)
    return finite(estimate_inference(body, catalog))
