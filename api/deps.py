"""What every route shares: the catalog loaded at start-up, and the finiteness check of answers."""
from __future__ import annotations

import math
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel

from sizer.catalog import Catalog
from sizer.errors import SizerError

T = TypeVar("T", bound=BaseModel)

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {"description": "request body larger than the documented limit (SIZER_API_MAX_BODY_BYTES, 64 KiB by default)"},
    422: {"description": "invalid input: `detail[].loc` is the field path, `detail[].msg` says what was expected; "
                         "an unknown device also lists `candidates`"},
    503: {"description": "the request ran longer than SIZER_API_TIMEOUT_S (20 s by default)"},
}


def _catalog(request: Request) -> Catalog:
    return request.app.state.catalog


CatalogDep = Annotated[Catalog, Depends(_catalog)]


def _non_finite(value: Any, path: str = "") -> str | None:
    if isinstance(value, float):
        return None if math.isfinite(value) else path or "result"
    if isinstance(value, dict):
        return next((p for k, v in value.items() if (p := _non_finite(v, f"{path}.{k}" if path else str(k)))), None)
    if isinstance(value, (list, tuple)):
        return next((p for i, v in enumerate(value) if (p := _non_finite(v, f"{path}[{i}]"))), None)
    return None


def finite(result: T) -> T:
    """The result, or a 422 when the inputs drove a number out of the finite range (JSON has no inf)."""
    where = _non_finite(result.model_dump())
    if where is not None:
        raise SizerError(f"the inputs give a result too large to represent ({where}); use smaller values")
    return result


def builtin_workload_only(workload: str | None) -> None:
    """Workload profiles come from the built-in set over HTTP: a file path would read the server's disk."""
    from sizer.errors import InputError
    from sizer.estimates import WORKLOAD_NAMES

    if workload is not None and workload not in WORKLOAD_NAMES:
        raise InputError("workload", workload, f"one of {', '.join(WORKLOAD_NAMES)}")


def builtin_model_only(model: str | None) -> None:
    """Architectures come by name over HTTP: a config.json path would read the server's disk."""
    from sizer.errors import InputError

    if model is not None and model.strip().lower().endswith(".json"):
        raise InputError("model", model, "a built-in model name (config files are a command-line feature)")


def served_from_builtins(body) -> None:
    """Refuse a request that names a file (a workload profile or config.json): over HTTP, built-ins only."""
    builtin_workload_only(getattr(body, "workload", None))
    builtin_model_only(getattr(body, "model", None))
