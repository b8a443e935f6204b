"""What every route shares: the catalog loaded at start-up, and the finiteness check of answers."""
from __future__ import annotations

from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel

from sizer.facade import Catalog
from sizer.facade import ensure_finite

T = TypeVar("T", bound=BaseModel)

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {"description": "request body larger than the documented limit (SIZER_API_MAX_BODY_BYTES, 64 KiB by default)"},
    422: {"description": "invalid input: `detail[].loc` is the field path, `detail[].msg` says what was expected; "
                         "an unknown device also lists `candidates`"},
    408: {"description": "the request body arrived slower than SIZER_API_BODY_TIMEOUT_S (10 s by default)"},
    503: {"description": "the request ran longer than SIZER_API_TIMEOUT_S (20 s by default) and its estimate was "
                         "stopped; or the service had SIZER_API_MAX_CONNECTIONS open connections"},
}


def _catalog(request: Request) -> Catalog:
    return request.app.state.catalog


CatalogDep = Annotated[Catalog, Depends(_catalog)]


def finite(result: T) -> T:
    """The result, or a 422 when the inputs drove a number out of the finite range (JSON has no inf)."""
    return ensure_finite(result)


def builtin_workload_only(workload: str | None) -> None:
    """Workload profiles come from the built-in set over HTTP: a file path would read the server's disk."""
    from sizer.facade import InputError
    from sizer.facade import WORKLOAD_NAMES

    # the names as the command line takes them (sizer.workloads.profile.load_profile): case and spaces aside
    if workload is not None and workload.strip().lower() not in WORKLOAD_NAMES:
        raise InputError("workload", workload, f"one of {', '.join(WORKLOAD_NAMES)}")


def builtin_model_only(model: str | None) -> None:
    """Architectures come by name over HTTP: a config.json path would read the server's disk."""
    from sizer.facade import InputError

    if model is not None and model.strip().lower().endswith(".json"):
        raise InputError("model", model, "a built-in model name (config files are a command-line feature)")


def served_from_builtins(body) -> None:
    """Refuse a request that names a file (a workload profile or config.json): over HTTP, built-ins only."""
    builtin_workload_only(getattr(body, "workload", None))
    builtin_model_only(getattr(body, "model", None))
