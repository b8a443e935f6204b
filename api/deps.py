"""What every route shares: the catalog loaded at start-up, and the finiteness check of answers."""
from __future__ import annotations

import asyncio
import weakref
from functools import partial
from typing import Annotated, Any, Callable, TypeVar

import anyio

from fastapi import Depends, Request
from pydantic import BaseModel

from sizer.facade import Catalog
from sizer.facade import ensure_finite

T = TypeVar("T", bound=BaseModel)
Result = TypeVar("Result")

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {"description": "request body larger than the documented limit (SIZER_API_MAX_BODY_BYTES, 64 KiB by default)"},
    422: {"description": "invalid input: `detail[].loc` is the field path, `detail[].msg` says what was expected; "
                         "an unknown device also lists `candidates`"},
    408: {"description": "the request body arrived slower than SIZER_API_BODY_TIMEOUT_S (10 s by default)"},
    503: {"description": "the request ran longer than SIZER_API_TIMEOUT_S (20 s by default) and its estimate was "
                         "stopped; or the service had SIZER_API_MAX_CONNECTIONS open connections"},
}


# Engine estimates in flight at once per process. The engine's numpy operations release the GIL between
# array passes, so threads running estimates side by side hand the GIL to and fro: eight at once cost about
# twice the CPU per answer of one at a time (in-process, 0.60 -> 1.12 ms per new recommend question; over
# HTTP with eight clients, 390 -> 520 new questions/s with one). One process uses one core for Python
# either way; the waiting requests wait in the event loop, where the request deadline (GuardMiddleware)
# still ends the wait. More cores: more worker processes (uvicorn --workers).
ESTIMATE_THREADS = 1
_limiters: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter]" = weakref.WeakKeyDictionary()


async def run_estimate(function: Callable[..., Result], *args: Any) -> Result:
    """``function(*args)`` in a worker thread, at most :data:`ESTIMATE_THREADS` at a time (per event
    loop: each test client runs its own)."""
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(ESTIMATE_THREADS)
    return await anyio.to_thread.run_sync(partial(function, *args), limiter=limiter)


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
    """Refuse a request that names a file (a workload profile or config.json): over HTTP, built-ins only;
    and one with bad free-text fields, naming every one of them (not only the first the core reads)."""
    from sizer.facade import InputErrors
    from sizer.facade import text_field_errors

    builtin_workload_only(getattr(body, "workload", None))
    builtin_model_only(getattr(body, "model", None))
    errors = text_field_errors(body.model_dump(exclude_unset=True)) if hasattr(body, "model_dump") else []
    if errors:
        raise InputErrors(errors)
