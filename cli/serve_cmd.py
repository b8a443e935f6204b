"""`sizer serve`: the HTTP service and the web page, with uvicorn."""
from __future__ import annotations

from typing import Annotated, Optional

import typer


def serve(host: Annotated[Optional[str], typer.Option("--host", help="Interface to listen on (default 127.0.0.1, or SIZER_API_HOST).")] = None,
          port: Annotated[Optional[int], typer.Option("--port", min=1, max=65535, help="TCP port (default 8000, or SIZER_API_PORT).")] = None,
          workers: Annotated[Optional[int], typer.Option("--workers", min=1, max=256, help="Worker processes; the service is stateless, so more workers scale it out.")] = None,
          catalog: Annotated[Optional[str], typer.Option("--catalog", help="A YAML file adding or overriding devices (also SIZER_CATALOG).")] = None,
          timeout: Annotated[Optional[float], typer.Option("--timeout", min=0.001, max=600, help="Seconds a request may run; then it is answered 503 and its estimate stops (default 20, or SIZER_API_TIMEOUT_S).")] = None,
          body_timeout: Annotated[Optional[float], typer.Option("--body-timeout", min=0.001, max=600, help="Seconds a request body may take to arrive; then 408 (default 10, or SIZER_API_BODY_TIMEOUT_S).")] = None,
          header_timeout: Annotated[Optional[float], typer.Option("--header-timeout", min=0.001, max=600, help="Seconds a connection may take to send its request headers; then 408 and closed (default 10, or SIZER_API_HEADER_TIMEOUT_S).")] = None,
          keep_alive: Annotated[Optional[float], typer.Option("--keep-alive", min=0.001, max=600, help="Seconds an idle keep-alive connection stays open (default 5, or SIZER_API_KEEP_ALIVE_S).")] = None,
          max_connections: Annotated[Optional[int], typer.Option("--max-connections", min=1, max=100_000, help="Open connections per worker; one more is answered 503 and closed (default 1000, or SIZER_API_MAX_CONNECTIONS).")] = None,
          max_client_connections: Annotated[Optional[int], typer.Option("--max-client-connections", min=1, max=100_000, help="Open connections per client address and worker; one more from it is answered 503 and closed (default 32, or SIZER_API_MAX_CLIENT_CONNECTIONS).")] = None,
          forwarded_allow_ips: Annotated[Optional[str], typer.Option("--forwarded-allow-ips", help="Comma-separated addresses or networks of trusted reverse proxies ('*': any): X-Forwarded-For from them names the client (default none: the header is ignored; or SIZER_API_FORWARDED_ALLOW_IPS).")] = None) -> None:
    """Serve the JSON API under /v1, the OpenAPI document and the web calculator at /.

    Slow or numerous clients are limited: headers must arrive within --header-timeout, a body
    within --body-timeout, a request may run --timeout, idle connections close after
    --keep-alive, and past --max-connections (or --max-client-connections from one address) a new
    connection gets 503. Behind a reverse proxy, --forwarded-allow-ips names it, so that each
    client behind it is queued as itself. Repeated warnings are
    logged at most once per SIZER_API_LOG_FLOOD_INTERVAL_S (10 s) with a count.
    """
    import os

    import uvicorn
    from pydantic import ValidationError

    from sizer.facade import InputError

    from .port_check import check_address
    from .siblings import sibling

    app_module = sibling("api.app")
    create_app = app_module.create_app
    uvicorn_options = sibling("api.server").uvicorn_options
    Settings = sibling("api.settings").Settings

    given = {k: v for k, v in {"host": host, "port": port, "workers": workers, "catalog_file": catalog, "timeout_s": timeout,
                               "body_timeout_s": body_timeout, "header_timeout_s": header_timeout,
                               "keep_alive_s": keep_alive, "max_connections": max_connections,
                               "max_client_connections": max_client_connections,
                               "forwarded_allow_ips": forwarded_allow_ips}.items() if v is not None}
    try:
        settings = Settings(**given)
    except ValidationError as error:  # a bad SIZER_API_* variable: name it, and the values it takes
        first = error.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else "settings"
        where = f"--{name.replace('_', '-')}" if name in given else f"SIZER_API_{name.upper()}"
        raise InputError(where, first.get("input"), first["msg"].replace("Input should be ", "")) from None
    check_address(settings.host, settings.port)  # a busy port: one line, exit 2, not uvicorn's six and 3
    create_app(settings)  # read the catalog now: a broken one is one clear error, not a failing worker
    for name, value in given.items():  # the worker processes build their app (and protocol) from the same settings
        os.environ[f"SIZER_API_{name.upper()}"] = str(value)
    os.environ.setdefault("SIZER_API_PRESTART_WORKERS", "true")  # estimate workers ready before the first long question
    os.environ.setdefault("SIZER_API_GC_FREEZE", "true")  # a full collection scans only what requests made (api/heap.py)
    uvicorn.run(f"{app_module.__name__}:create_app", factory=True, host=settings.host, port=settings.port, workers=settings.workers,
                log_level=settings.log_level, timeout_graceful_shutdown=5, **uvicorn_options(settings))


def register(app: typer.Typer) -> None:
    app.command()(serve)
