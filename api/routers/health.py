"""`GET /healthz`: the process answers and its catalog is loaded."""
from __future__ import annotations

from fastapi import APIRouter

from sizer.facade import Model

from ..deps import CatalogDep

router = APIRouter(tags=["service"])


class Health(Model):
    status: str
    devices: int


@router.get("/healthz", response_model=Health, summary="Liveness: answers 200 with the number of catalog devices")
def healthz(catalog: CatalogDep) -> Health:
    return Health(status="ok", devices=len(catalog))
