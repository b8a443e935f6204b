"""`GET /v1/catalog` and `GET /v1/catalog/{device}`: the sourced hardware catalog."""
from __future__ import annotations

from fastapi import APIRouter

from sizer.facade import CatalogKindName, DeviceDetail, DeviceLookupError, DeviceSummary, Model, describe_device, summarize_device

from ..deps import CatalogDep
from ..errors import detail

router = APIRouter(prefix="/v1/catalog", tags=["catalog"])


class CatalogList(Model):
    """The JSON of `sizer catalog list --json`."""

    devices: list[DeviceSummary]


@router.get("", response_model=CatalogList, summary="Every device with its memory, bandwidth and FP32 peak")
def list_devices(catalog: CatalogDep, kind: CatalogKindName | None = None) -> CatalogList:
    return CatalogList(devices=[summarize_device(d) for d in catalog if kind is None or d.kind is kind])


@router.get("/{device}", response_model=DeviceDetail, summary="Every figure of one device, with its source",
            responses={404: {"description": "no device, or more than one, matches; `candidates` lists close matches"}})
def show_device(device: str, catalog: CatalogDep):
    try:
        return describe_device(catalog.find(device), catalog.assumed(device))
    except DeviceLookupError as error:
        return detail(["path", "device"], error.message, status=404, candidates=list(error.candidates))
