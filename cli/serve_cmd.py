"""`sizer serve`: the HTTP service and the web page, with uvicorn."""
from __future__ import annotations

from typing import Annotated, Optional

import typer


def serve(host: Annotated[Optional[str], typer.Option("--host", help="Interface to listen on (default 127.0.0.1, or SIZER_API_HOST).")] = None,
          port: Annotated[Optional[int], typer.Option("--port", min=1, max=65535, help="TCP port (default 8000, or SIZER_API_PORT).")] = None,
          workers: Annotated[Optional[int], typer.Option("--workers", min=1, max=256, help="Worker processes; the service is stateless, so more workers scale it out.")] = None,
          catalog: Annotated[Optional[str], typer.Option("--catalog", help="A YAML file adding or overriding devices (also SIZER_CATALOG).")] = None) -> None:
    """Serve the JSON API under /v1, the OpenAPI document and the web calculator at /."""
    import os

    import uvicorn
    from pydantic import ValidationError

    from api.app import create_app
    from api.settings import Settings
    from sizer.errors import InputError

    given = {k: v for k, v in {"host": host, "port": port, "workers": workers, "catalog_file": catalog}.items() if v is not None}
    try:
        settings = Settings(**given)
    except ValidationError as error:  # a bad SIZER_API_* variable: name it, and the values it takes
        first = error.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else "settings"
        where = f"--{name.replace('_', '-')}" if name in given else f"SIZER_API_{name.upper()}"
        raise InputError(where, first.get("input"), first["msg"].replace("Input should be ", "")) from None
    create_app(settings)  # read the catalog now: a broken one is one clear error, not a failing worker
    for name, value in given.items():  # the worker processes build their app from the same settings
        os.environ[f"SIZER_API_{name.upper()}"] = str(value)
    uvicorn.run("api.app:create_app", factory=True, host=settings.host, port=settings.port, workers=settings.workers,
                log_level=settings.log_level, timeout_graceful_shutdown=5)


def register(app: typer.Typer) -> None:
    app.command()(serve)
