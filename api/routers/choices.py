"""`GET /v1/choices`: every fixed list of names a question chooses from (device kinds, price bases, objectives,
weight formats, KV caches, runtimes, length sets, launch tools), read from the core's one definition of each; the
page fills its selects from here rather than writing the names out again."""
from __future__ import annotations

from fastapi import APIRouter

from sizer.facade import Choices, choices

router = APIRouter(prefix="/v1", tags=["catalog"])


@router.get("/choices", response_model=Choices,
            summary="The names each choice takes (device kinds, prices, objectives, formats, runtimes, length sets)")
def list_choices() -> Choices:
    return choices()
