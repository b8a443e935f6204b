"""ASGI middleware guarding every request: a request id, a body-size limit, and no 500 with internals."""
from __future__ import annotations

import asyncio
import json
import logging
import uuid

from starlette.exceptions import HTTPException

log = logging.getLogger("sizer.api")
REQUEST_ID_HEADER = b"x-request-id"


class BodyTooLarge(HTTPException):
    """Raised while reading a body past the limit; an HTTPException so that FastAPI passes it on as 413."""

    def __init__(self, limit: int):
        super().__init__(413, f"request body larger than {limit} bytes")


class GuardMiddleware:
    """Refuse bodies over ``max_body_bytes`` with 413; answer unexpected errors with 500 and a request id;
    answer 503 when a request takes longer than ``timeout_s`` (a guard: no estimate should come near it).

    The size is checked on the Content-Length header before anything is read, and again on
    the bytes actually received (a chunked body has no Content-Length).
    """

    def __init__(self, app, max_body_bytes: int, timeout_s: float):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request_id = uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), (REQUEST_ID_HEADER, request_id.encode())]}
            await send(message)

        async def answer(status: int, body: dict):
            data = json.dumps(body).encode()
            await send_with_id({"type": "http.response.start", "status": status,
                                "headers": [(b"content-type", b"application/json"),
                                            (b"content-length", str(len(data)).encode())]})
            await send_with_id({"type": "http.response.body", "body": data})

        too_large = {"detail": f"request body larger than {self.max_body_bytes} bytes", "request_id": request_id}
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                return await answer(400, {"detail": "malformed Content-Length header", "request_id": request_id})
            if declared > self.max_body_bytes:
                return await answer(413, too_large)

        received = 0

        async def counting_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge(self.max_body_bytes)
            return message

        try:
            await asyncio.wait_for(self.app(scope, counting_receive, send_with_id), self.timeout_s)
        except TimeoutError:
            log.warning("request %s %s %s took over %g s", request_id, scope.get("method"), scope.get("path"), self.timeout_s)
            if not started:
                await answer(503, {"detail": f"the estimate took longer than {self.timeout_s:g} s; try fewer devices "
                                             "(max_devices) or a smaller request", "request_id": request_id})
        except BodyTooLarge:
            if not started:
                await answer(413, too_large)
        except Exception:  # the last line of defence: log everything, show nothing
            log.exception("unexpected error [request %s] %s %s", request_id, scope.get("method"), scope.get("path"))
            if not started:
                await answer(500, {"detail": "internal error; quote the request id when reporting it",
                                   "request_id": request_id})
