"""The web calculator (`/`) and the catalog page (`/catalog`): static files calling the JSON API."""
from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

STATIC = Path(__file__).resolve().parent.parent / "static"
router = APIRouter(include_in_schema=False)


@router.get("/")
def calculator() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html")


@router.get("/catalog")
def catalog_page() -> FileResponse:
    return FileResponse(STATIC / "catalog.html", media_type="text/html")


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """Browsers ask for /favicon.ico before they read the page's icon link."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")
