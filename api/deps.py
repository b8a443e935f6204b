"""What every route shares: the catalog loaded at start-up, and the finiteness check of answers."""
from __future__ import annotations

import asyncio
import logging
import math
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar, copy_context
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any, Callable, Hashable, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel

from sizer.facade import (
    Catalog,
    SizerError,
    ensure_finite,
    estimate_seconds,
    refuse_over_budget,
    remaining_seconds,
    serving_iterations,
    time_limit,
)

from .fair import FairQueue, QueueFull
from .pool import CatalogMarker, WorkerPool
from .settings import Settings

T = TypeVar("T", bound=BaseModel)
Result = TypeVar("Result")
Share = TypeVar("Share")
log = logging.getLogger("sizer.api")

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {"description": "request body larger than the documented limit (SIZER_API_MAX_BODY_BYTES, 64 KiB by default)"},
    422: {"description": "invalid input: `detail[].loc` is the field path, `detail[].msg` says what was expected; "
                         "an unknown device also lists `candidates`"},
    408: {"description": "the request body arrived slower than SIZER_API_BODY_TIMEOUT_S (10 s by default)"},
    503: {"description": "the request ran longer than SIZER_API_TIMEOUT_S (20 s by default) and its estimate was "
                         "stopped; or the service had SIZER_API_MAX_CONNECTIONS open connections; or this client "
                         "had SIZER_API_MAX_CLIENT_WAITING estimates waiting (or all clients SIZER_API_MAX_WAITING), "
                         "answered with Retry-After"},
}


# Cheap estimates run in the service's process (the inline lane), one at a time. The engine's numpy operations
# release the GIL between array passes, so threads running estimates side by side hand the GIL to and fro: eight at
# once cost about twice the CPU per answer of one at a time (in-process, 0.60 -> 1.12 ms per new recommend question;
# over HTTP with eight clients, 390 -> 520 new questions/s with one). Every question priced (sizer.work_price) over
# SIZER_API_INLINE_BUDGET_S runs in a worker process instead (api.pool), one per core; both lanes hand out their
# slots fairly across clients (api.fair), and the request deadline (GuardMiddleware) ends a wait in either.
# The inline lane's one thread is its own (not the event loop's shared pool): an estimate whose client hung up
# keeps its slot until it has stopped, so abandoned estimates never run side by side (nor grow the process).
ESTIMATE_THREADS = 1
# the process's estimate thread, shared by every application in it (a test suite makes hundreds)
_ESTIMATE_THREAD = ThreadPoolExecutor(ESTIMATE_THREADS, thread_name_prefix="sizer-estimate")


@dataclass
class Lanes:
    """Where estimates run: one thread at a time in this process, or ``pool``'s worker processes; each lane's
    slots handed out in turn across clients (a queue per event loop: each test client runs its own)."""

    settings: Settings
    pool: WorkerPool | None
    catalog_key: str | None = None  # the fingerprint of the catalog the workers load (the service's at start)
    queues: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[FairQueue, FairQueue]]" = field(
        default_factory=weakref.WeakKeyDictionary)
    threads: ThreadPoolExecutor = _ESTIMATE_THREAD
    searches: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, asyncio.Task[bool]]]" = field(
        default_factory=weakref.WeakKeyDictionary)  # the searches in shares running now, by key (search_once)

    def searches_of(self, loop: asyncio.AbstractEventLoop) -> dict[Hashable, asyncio.Task[bool]]:
        return self.searches.setdefault(loop, {})

    def of(self, loop: asyncio.AbstractEventLoop) -> tuple[FairQueue, FairQueue]:
        lanes = self.queues.get(loop)
        if lanes is None:
            waiting, total = self.settings.max_client_waiting, self.settings.max_waiting
            lanes = self.queues[loop] = (FairQueue(ESTIMATE_THREADS, waiting, total),
                                         FairQueue(self.pool.size if self.pool else 1, waiting, total))
        return lanes


# Set per request by GuardMiddleware: the application's lanes and the client asking (its fair-queueing key).
LANES: ContextVar[Lanes | None] = ContextVar("sizer_lanes", default=None)
CLIENT: ContextVar[str] = ContextVar("sizer_client", default="unknown")
_default_lanes: list[Lanes] = []


def _lanes() -> Lanes:
    lanes = LANES.get()
    if lanes is None:  # called outside the middleware (a test calling a route function): the default settings
        if not _default_lanes:
            _default_lanes.append(Lanes(Settings(estimate_workers=0), None))
        lanes = _default_lanes[0]
    return lanes


def priced(body, iterations: float) -> float:
    """``iterations`` [1], the simulated iterations ``body`` costs, after refusing it (422 naming the fields that lower
    the price) when they are over the service's budget (SIZER_API_MAX_SERVING_ITERATIONS)."""
    refuse_over_budget(body, iterations, _lanes().settings.max_serving_iterations)
    return iterations


def price(body) -> float:
    """CPU-seconds [s] a question on named hardware costs (:func:`sizer.work_price.estimate_seconds`: once per
    ``have`` entry, by its count, and its serving load), after refusing a load over the service's budget."""
    from sizer.facade import InferenceRequest

    if isinstance(body, InferenceRequest):  # a serving question: its simulated iterations within the budget
        priced(body, serving_iterations(body) * max(1, len(getattr(body, "have", None) or ())))
    return estimate_seconds(body)


async def run_estimate(function: Callable[..., Result], *args: Any, work: float = 0.0) -> Result:
    """``function(*args)``: in this process's estimate thread, one at a time, or, when its price ``work`` [s]
    (:mod:`sizer.work_price`) is over SIZER_API_INLINE_BUDGET_S, in a worker process; either way in this
    client's turn (:mod:`api.fair`), and stopped when the request is abandoned (its slot held until it has)."""
    lanes = _lanes()
    loop = asyncio.get_running_loop()
    inline, pooled = lanes.of(loop)
    client = CLIENT.get()
    if lanes.pool is None or work <= lanes.settings.inline_budget_s:
        await inline.acquire(client)
        left, cancel = remaining_seconds(), threading.Event()
        try:
            running = loop.run_in_executor(lanes.threads, copy_context().run,  # the request's context vars go along
                                           partial(_limited, left, cancel, function, *args))
        except BaseException:
            inline.release()
            raise
        running.add_done_callback(lambda _: inline.release())  # when the thread has stopped, not when abandoned
        try:
            return await asyncio.shield(running)
        except BaseException:
            cancel.set()  # abandoned (or ended): the core's next deadline check stops it
            raise
    await pooled.acquire(client)
    left = remaining_seconds() or (lanes.settings.timeout_s, lanes.settings.timeout_s)
    # the catalog the workers loaded stands in by its fingerprint; another one (a test's slice) travels whole
    marked = tuple(CatalogMarker(a.key) if isinstance(a, Catalog) and a.key == lanes.catalog_key else a for a in args)
    return await lanes.pool.run(function, marked, left, done=pooled.release)


async def search_once(key: Hashable, share: Callable[..., Share], args: tuple[Any, ...],
                      keep: Callable[[list[Share]], None]) -> bool:
    """One search per ``key`` at a time, in shares over the worker processes: ``share(*args, k, n)`` for share
    ``k`` of ``n`` in ``n`` workers at once (as many as have a slot free now, one at least, in this client's turn),
    then ``keep(shares)`` here. Questions that ask for a key being searched wait for that search instead of each
    starting one (a burst of one new shape's questions cost two workers one search each, and the workers then
    answered the burst in turn; a search in two shares takes about half the time). The search goes on when the
    question that started it is abandoned, within that question's time limit.

    Returns
    -------
    bool
        Whether the search was kept; False where there are no worker processes (nothing is searched) or it
        failed (the question then goes its usual way, which says why).
    """
    lanes = _lanes()
    if lanes.pool is None:
        return False
    loop = asyncio.get_running_loop()
    running = lanes.searches_of(loop)
    search = running.get(key)
    if search is None:
        search = running[key] = loop.create_task(_search_in_shares(lanes, share, args, keep))
        search.add_done_callback(lambda done: (running.pop(key, None), done.cancelled() or done.exception()))
    try:
        return await asyncio.shield(search)
    except asyncio.CancelledError:
        raise
    except (SizerError, QueueFull):  # its time ran out, or its client has too many waiting: its usual way says so
        return False
    except Exception:  # noqa: BLE001 - the question goes its usual way, which says what went wrong
        log.warning("a layout search in shares failed; its questions are answered one by one", exc_info=True)
        return False


async def _search_in_shares(lanes: Lanes, share: Callable[..., Share], args: tuple[Any, ...],
                            keep: Callable[[list[Share]], None]) -> bool:
    assert lanes.pool is not None
    _, pooled = lanes.of(asyncio.get_running_loop())
    client = CLIENT.get()
    await pooled.acquire(client)
    shares = 1
    while shares < lanes.pool.size and pooled.try_acquire(client):
        shares += 1
    left = remaining_seconds() or (lanes.settings.timeout_s, lanes.settings.timeout_s)
    marked = tuple(CatalogMarker(a.key) if isinstance(a, Catalog) and a.key == lanes.catalog_key else a for a in args)
    found = await asyncio.gather(*(lanes.pool.run(share, (*marked, k, shares), left, done=pooled.release)
                                   for k in range(shares)))
    keep(list(found))
    return True


def _limited(left: tuple[float, float] | None, cancel: threading.Event, function: Callable[..., Result],
             *args: Any) -> Result:
    """``function(*args)`` within the request's time left and limit (``left``), stopped once ``cancel`` is set."""
    seconds, limit = left if left is not None else (math.inf, math.inf)
    with time_limit(seconds, cancel, limit):
        return function(*args)


async def _catalog(request: Request) -> Catalog:
    # async: FastAPI runs a plain function dependency in its pool of up to 40 threads, a hand-over per request
    # (and, in a burst, many threads each with a heap of its own that the process keeps)
    return request.app.state.catalog


CatalogDep = Annotated[Catalog, Depends(_catalog)]


def finite(result: T) -> T:
    """The result, or a 422 when the inputs drove a number out of the finite range (JSON has no inf)."""
    return ensure_finite(result)


def builtin_workload_only(workload: str | None) -> None:
    """Workload profiles come from the built-in set (any name the command line takes for one) or
    ``mlp:`` widths over HTTP: a file path would read the server's disk, a library model run torch."""
    from sizer.facade import check_served_workload

    check_served_workload(workload)


def builtin_model_only(model: str | None) -> None:
    """Architectures come by name over HTTP: a config.json path would read the server's disk."""
    from sizer.facade import InputError

    if model is not None and model.strip().lower().endswith(".json"):
        raise InputError("model", model, "a built-in model name (config files are a command-line feature)")


def served_from_builtins(body) -> None:
    """Refuse a request that names a file (a workload profile or config.json): over HTTP, built-ins only. (Its
    counts and quantities were read where the body became the request model, every bad one refused there.)"""
    builtin_workload_only(getattr(body, "workload", None))
    builtin_model_only(getattr(body, "model", None))
