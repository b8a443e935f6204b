"""`POST /v1/recommend`: which device, how many, how long, what cost."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import CatalogDep, ERROR_RESPONSES, finite, served_from_builtins
from sizer.recommend import RecommendRequest, RecommendResult, recommend as rank

router = APIRouter(prefix="/v1", tags=["recommendation"], responses=ERROR_RESPONSES)


@router.post("/recommend", response_model=RecommendResult,
             summary="Rank every catalog device for a workload and constraints; rejected devices with reasons")
def recommend(body: RecommendRequest, catalog: CatalogDep) -> RecommendResult:
    served_from_builtins(body)
    return finite(rank(body, catalog))
