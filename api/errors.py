"""The one place where errors become HTTP answers.

- a user error from the core (:class:`~sizer.errors.SizerError`) -> 422 naming the field;
- a body that fails the request model -> 422 with the field path (FastAPI's shape, without
  echoing the input back, so that a NaN or a huge string can never break the answer);
- a device the catalog does not know -> 422 in a body, 404 in a URL path, with close matches;
- an estimate that ran past the service's time limit (:class:`~sizer.errors.EstimateTimeout`) -> 503;
- anything else -> 500 with a request id, logged here, no internals in the answer
  (see :class:`api.middleware.GuardMiddleware`).
"""
from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from sizer.facade import CatalogError, DeviceLookupError, EstimateTimeout, InputErrors, SizerError

log = logging.getLogger("sizer.api")
MAX_MESSAGE = 300


def _item(loc: list, msg: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"loc": [str(p) if not isinstance(p, int) else p for p in loc], "msg": str(msg)[:MAX_MESSAGE],
            "type": kind, **extra}


def detail(loc: list, msg: str, kind: str = "value_error", status: int = 422, **extra: Any) -> JSONResponse:
    return JSONResponse({"detail": [_item(loc, msg, kind, **extra)]}, status_code=status)


def _sizer_error(request: Request, error: SizerError) -> JSONResponse:
    loc = ["body", error.field] if error.field else ["body"]
    if isinstance(error, DeviceLookupError):
        return detail(loc, error.message, candidates=list(error.candidates))
    if isinstance(error, InputErrors):  # several bad fields: one item each, so a form can mark them all
        return JSONResponse({"detail": [_item(["body", each.field], each.message, "value_error") for each in error.errors]},
                            status_code=422)
    return detail(loc, error.message)


def _estimate_timeout(request: Request, error: EstimateTimeout) -> JSONResponse:
    request_id = getattr(request.state, "request_id", "-")
    return JSONResponse({"detail": error.message, "request_id": request_id}, status_code=503)


def _catalog_error(request: Request, error: CatalogError) -> JSONResponse:
    # The catalog is loaded when the app starts; a broken one here is the operator's, not the user's.
    request_id = getattr(request.state, "request_id", "-")
    log.error("catalog error [%s]: %s", request_id, error.message)
    return JSONResponse({"detail": "internal error: the device catalog could not be read", "request_id": request_id},
                        status_code=500)


def _validation_items(errors: list[dict], prefix: tuple = ()) -> list[dict[str, Any]]:
    from sizer.facade import TEXT_ERROR  # a count or quantity its parser refused: a value error like any other

    return [_item([*prefix, *e.get("loc", ())], e.get("msg", "invalid value"),
                  "value_error" if e.get("type") == TEXT_ERROR else e.get("type", "value_error")) for e in errors]


def _request_validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
    errors = list(error.errors())
    if isinstance(error.body, dict):  # the schema's own refusals first, then each count or quantity as given
        from sizer.facade import in_form_order

        errors = in_form_order(errors, error.body, at=1)
    # every bad field is among them: each field is typed where the body is validated, and a field the model lacks is
    # refused there too (extra="forbid")
    return JSONResponse({"detail": _validation_items(errors)}, status_code=422)


def _pydantic_error(request: Request, error: ValidationError) -> JSONResponse:
    return JSONResponse({"detail": _validation_items(error.errors(include_input=False), ("body",))}, status_code=422)


async def _http_error(request: Request, error: HTTPException):
    # FastAPI answers a body it cannot decode (not UTF-8, say) with 400; every invalid body is 422 here.
    if error.status_code == 400:
        return detail(["body"], "the body is not valid JSON text (UTF-8 expected)", kind="json_invalid")
    return await http_exception_handler(request, error)


def install(app: FastAPI) -> None:
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(CatalogError, _catalog_error)
    app.add_exception_handler(SizerError, _sizer_error)
    app.add_exception_handler(EstimateTimeout, _estimate_timeout)
    app.add_exception_handler(RequestValidationError, _request_validation_error)
    app.add_exception_handler(ValidationError, _pydantic_error)
