"""The FastAPI application: routers, error handling, the page, and the catalog loaded once.

Thin by design (spec §6): every route parses a body into the core's own request model, calls
the core, and returns the core's own result model. Run it with ``sizer serve``, or with any
ASGI server as ``uvicorn --factory sizer.api.app:create_app`` (``api.app:create_app`` in a checkout).

>>> from fastapi.testclient import TestClient
>>> TestClient(create_app()).get("/healthz").json()["status"]
'ok'
"""
from __future__ import annotations

import logging
import sys
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from sizer.facade import Clock, SizerError, load_catalog, warm_up

from . import errors
from .deps import Lanes
from .heap import freeze_start_up
from .middleware import GuardMiddleware
from .pool import WorkerPool
from .routers import (
    catalog,
    choices,
    compute,
    health,
    inference,
    memory,
    models,
    network_size,
    pages,
    peak,
    plan,
    recommend,
    tco,
    time,
    workloads,
)
from .routers.pages import STATIC
from .server import install_flood_filter
from .settings import Settings
from .trim import MemoryTrimmer

GIL_SWITCH_INTERVAL_S = 0.0005

DESCRIPTION = """Hardware sizing and cost estimation for neural-network training, over HTTP.

Request fields use the CLI's option names (`device`, `cores`, `clock`, `params`, `tokens`, ...).
A quantity may be a string with its unit (`"1.531 GHz"`, `"14 d"`, `"50000 USD"`) or an object
`{"value": 1.531, "unit": "GHz"}`. Answers use the CLI's JSON contract: a quantity is
`{"value", "unit"}`, a range `{"low", "expected", "high", "unit"}`.

Bad input is answered 422 with `detail[].loc` (the field path) and `detail[].msg` (what was
expected); bodies over the size limit get 413. The service keeps no state between requests.
"""


def create_app(settings: Settings | None = None, *, deadline_clock: Clock | None = None) -> FastAPI:
    """A new application; the catalog (built-in plus ``catalog_file`` or SIZER_CATALOG) is read now, once.
    ``deadline_clock`` is the clock the estimates' deadline (``timeout_s``) is read on: default
    :func:`time.monotonic`; a test hands one it moves itself (:mod:`sizer.deadline`)."""
    settings = settings or Settings()
    # /docs and /redoc load Swagger UI and ReDoc from the fastapi-offline package, not a CDN, so the
    # API's pages work without internet (FastAPI's self-hosting recipe, packaged and kept up to date).
    # long estimates go to worker processes, started with the first of them (start-up stays the catalog's)
    pool = (WorkerPool(settings.estimate_workers, settings.catalog_file, settings.worker_nice, settings.cancel_grace_s)
            if settings.estimate_workers else None)

    trimmer = MemoryTrimmer(settings.memory_trim_interval_s)

    @asynccontextmanager
    async def lifespan(_app):
        if settings.gc_freeze:
            freeze_start_up()
        if pool is not None and settings.prestart_workers:
            pool.start()  # each loads the catalog while the service answers its first questions
        trimmer.start()  # after a burst, the freed memory goes back to the system
        try:
            yield
        finally:
            await trimmer.stop()
            if pool is not None:
                pool.close()

    app = FastAPIOffline(title="sizer", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.catalog = load_catalog(settings.catalog_file)
    try:
        warm_up(app.state.catalog)  # the tables every recommendation reads, built before the first question
    except SizerError as error:  # a catalog the tables cannot be built from: its questions say why
        logging.getLogger("sizer.api").warning("tables not built at start: %s", error)
    errors.install(app)
    for module in (peak, compute, time, memory, plan, inference, network_size, tco, recommend, catalog, models, workloads,
                   choices, health, pages):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.state.lanes = Lanes(settings, pool, app.state.catalog.key)
    # An estimate in the worker thread gives the GIL up at every numpy pass and waits to take it back; while the
    # event loop is busy (a flood of connections) each wait lasts up to the switch interval (5 ms by default),
    # some hundred times an answer. A shorter interval keeps a cheap question cheap under a flood.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    app.add_middleware(GuardMiddleware, max_body_bytes=settings.max_body_bytes, timeout_s=settings.timeout_s,
                       body_timeout_s=settings.body_timeout_s, lanes=app.state.lanes, deadline_clock=deadline_clock)
    install_flood_filter(settings.log_flood_interval_s)
    return app
