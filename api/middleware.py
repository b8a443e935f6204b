"""ASGI middleware guarding every request: a request id, a body-size limit, no 500 with internals, and
abandoned requests stopped (a client that hangs up has its estimate cancelled, not computed to the deadline)."""
from __future__ import annotations

import asyncio
import json
import logging
import uuid

from starlette.exceptions import HTTPException

from .deps import CLIENT, LANES, Lanes
from .headers import security_headers
from sizer.facade import clear_deadline, set_deadline
from sizer.facade import EstimateTimeout

log = logging.getLogger("sizer.api")
REQUEST_ID_HEADER = b"x-request-id"


class BodyTooLarge(HTTPException):
    """Raised while reading a body past the limit; an HTTPException so that FastAPI passes it on as 413."""

    def __init__(self, limit: int):
        super().__init__(413, f"request body larger than {limit} bytes")


class BodyTimeout(HTTPException):
    """Raised when a request body arrives too slowly; an HTTPException so that FastAPI passes it on as 408."""

    def __init__(self, seconds: float):
        super().__init__(408, body_timeout_message(seconds))


def body_timeout_message(seconds: float) -> str:
    return f"the request body did not arrive within {seconds:g} s; send it at once"


class GuardMiddleware:
    """Refuse bodies over ``max_body_bytes`` with 413; answer unexpected errors with 500 and a request id;
    answer 408 when the body takes longer than ``body_timeout_s`` to arrive, and 503 when the
    request takes longer than ``timeout_s`` (a guard: no estimate should come near it).

    The size is checked on the Content-Length header before anything is read, and again on
    the bytes actually received (a chunked body has no Content-Length). The time limit is
    also handed to the core as a deadline (:mod:`sizer.deadline`), so that an estimate
    answered 503 stops computing instead of running on in its worker thread.

    Once the body is in, the next message can only be the client hanging up: the request is
    then cancelled, and with it the estimate it waits for (:func:`api.deps.run_estimate` sets
    its cancel flag). Each request also carries its client (address, or the header named by
    ``SIZER_API_FAIR_KEY_HEADER``) and the application's estimate lanes, for fair queueing.
    """

    def __init__(self, app, max_body_bytes: int, timeout_s: float, body_timeout_s: float | None = None,
                 lanes: Lanes | None = None):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.timeout_s = timeout_s
        self.body_timeout_s = timeout_s if body_timeout_s is None else body_timeout_s
        self.lanes = lanes
        header = lanes.settings.fair_key_header if lanes is not None else None
        self.key_header = header.lower().encode() if header else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request_id = uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        started = False
        headers_out = security_headers(str(scope.get("path", "")))

        async def send_with_id(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), (REQUEST_ID_HEADER, request_id.encode()),
                                                  *headers_out]}
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

        peer = scope.get("client")
        client = str(peer[0]) if peer else "unknown"
        if self.key_header is not None and headers.get(self.key_header):
            client = "key:" + headers[self.key_header].decode("latin-1")[:200]
        hung_up = False
        watcher: asyncio.Task | None = None
        inner: asyncio.Future | None = None

        async def watch_disconnect():
            """After the body: the next message is the client hanging up; stop the work it asked for."""
            nonlocal hung_up
            if (await receive())["type"] != "http.disconnect":  # a server that repeats the body: nothing to watch
                return
            if not started and inner is not None and not inner.done():
                hung_up = True
                inner.cancel()

        received = 0
        body_done = False  # the last body chunk has arrived
        reading = False  # waiting for a body chunk right now
        loop = asyncio.get_running_loop()
        body_deadline = loop.time() + self.body_timeout_s

        async def counting_receive():
            nonlocal received, body_done, reading, watcher
            if body_done:  # after the body, receive() only waits for a disconnect: not the client's slowness
                return await receive()
            reading = True
            try:
                message = await asyncio.wait_for(receive(), max(0.0, body_deadline - loop.time()))
            except TimeoutError:
                raise BodyTimeout(self.body_timeout_s) from None
            finally:
                reading = False
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge(self.max_body_bytes)
                body_done = not message.get("more_body", False)
                if body_done:
                    watcher = asyncio.ensure_future(watch_disconnect())
            elif message["type"] == "http.disconnect":
                body_done = True
            return message

        token = set_deadline(self.timeout_s)
        lanes_token, client_token = LANES.set(self.lanes), CLIENT.set(client)
        try:
            inner = asyncio.ensure_future(self.app(scope, counting_receive, send_with_id))
            await asyncio.wait_for(inner, self.timeout_s)
        except asyncio.CancelledError:
            if not hung_up:  # the server is stopping
                raise
            log.warning("client hung up before its answer: %s %s, estimate stopped [%s]", scope.get("method"),
                        scope.get("path"), request_id)
        except TimeoutError:
            if reading:  # still waiting for the client: its fault, not the estimate's
                log.warning("request body too slow: %s %s over %g s", scope.get("method"), scope.get("path"), self.timeout_s)
                if not started:
                    await answer(408, {"detail": body_timeout_message(self.timeout_s), "request_id": request_id})
                return
            log.warning("request took over %g s: %s %s [%s]", self.timeout_s, scope.get("method"), scope.get("path"), request_id)
            if not started:
                await answer(503, {"detail": EstimateTimeout(self.timeout_s).message, "request_id": request_id})
        except BodyTooLarge:
            if not started:
                await answer(413, too_large)
        except BodyTimeout:
            log.warning("request body too slow: %s %s over %g s", scope.get("method"), scope.get("path"), self.body_timeout_s)
            if not started:
                await answer(408, {"detail": body_timeout_message(self.body_timeout_s), "request_id": request_id})
        except Exception:  # the last line of defence: log everything, show nothing
            log.exception("unexpected error [request %s] %s %s", request_id, scope.get("method"), scope.get("path"))
            if not started:
                await answer(500, {"detail": "internal error; quote the request id when reporting it",
                                   "request_id": request_id})
        finally:
            if watcher is not None:
                watcher.cancel()
            CLIENT.reset(client_token)
            LANES.reset(lanes_token)
            clear_deadline(token)
