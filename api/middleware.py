"""ASGI middleware guarding every request: a request id, a body-size limit, no 500 with internals, and
abandoned requests stopped (a client that hangs up has its estimate cancelled, not computed to the deadline)."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException

from sizer.facade import Clock, EstimateTimeout, clear_deadline, set_deadline

from .deps import CLIENT, LANES, Lanes
from .headers import security_headers
from .proxies import TrustedProxies

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
    """The answer to a body that did not arrive in time.

    Parameters
    ----------
    seconds : float
        The time the body had [s].
    """
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
                 lanes: Lanes | None = None, deadline_clock: Clock | None = None):
        self.app = app
        self.deadline_clock = deadline_clock  # the core's deadline is read on it (default time.monotonic); a test's own
        self.max_body_bytes = max_body_bytes
        self.timeout_s = timeout_s
        self.body_timeout_s = timeout_s if body_timeout_s is None else body_timeout_s
        self.lanes = lanes
        header = lanes.settings.fair_key_header if lanes is not None else None
        self.key_header = header.lower().encode() if header else None
        self.proxies = TrustedProxies.parse(getattr(lanes.settings, "forwarded_allow_ips", None) if lanes else None)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        exchange = _Exchange(scope, receive, send, self.max_body_bytes, self.body_timeout_s)
        request_id = exchange.request_id
        too_large = {"detail": f"request body larger than {self.max_body_bytes} bytes", "request_id": request_id}
        headers = dict(scope.get("headers") or [])
        refusal = self._refuse_declared_length(headers.get(b"content-length"), too_large)
        if refusal is not None:
            return await exchange.answer(*refusal)
        client = self._client(scope, headers)
        exchange.start_body_clock()
        token = set_deadline(self.timeout_s, clock=self.deadline_clock)
        lanes_token, client_token = LANES.set(self.lanes), CLIENT.set(client)
        try:
            await exchange.run(self.app, self.timeout_s)
        except asyncio.CancelledError:
            if not exchange.hung_up:  # the server is stopping
                raise
            log.warning("client hung up before its answer: %s %s, estimate stopped [%s]", scope.get("method"),
                        scope.get("path"), request_id)
        except TimeoutError:
            await self._timed_out(exchange)
        except BodyTooLarge:
            if not exchange.started:
                await exchange.answer(413, too_large)
        except BodyTimeout:
            log.warning("request body too slow: %s %s over %g s", scope.get("method"), scope.get("path"), self.body_timeout_s)
            if not exchange.started:
                await exchange.answer(408, {"detail": body_timeout_message(self.body_timeout_s), "request_id": request_id})
        except Exception:  # the last line of defence: log everything, show nothing
            log.exception("unexpected error [request %s] %s %s", request_id, scope.get("method"), scope.get("path"))
            if not exchange.started:
                await exchange.answer(500, {"detail": "internal error; quote the request id when reporting it",
                                            "request_id": request_id})
        finally:
            if exchange.watcher is not None:
                exchange.watcher.cancel()
            CLIENT.reset(client_token)
            LANES.reset(lanes_token)
            clear_deadline(token)

    def _refuse_declared_length(self, length: bytes | None, too_large: dict[str, str]) -> tuple[int, dict[str, str]] | None:
        """(status, body) refusing a request by its Content-Length header before any body is read: 400 where
        the header is not a number, 413 where it declares more than ``max_body_bytes``; None: read on.

        Parameters
        ----------
        length : bytes or None
            The Content-Length header's value [B]; None: not sent (a chunked body).
        too_large : dict
            The 413 answer's body.
        """
        if length is None:
            return None
        try:
            declared = int(length)
        except ValueError:
            return 400, {"detail": "malformed Content-Length header", "request_id": too_large["request_id"]}
        if declared > self.max_body_bytes:
            return 413, too_large
        return None

    def _client(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> str:
        """The client a request is queued fairly as: the value of the fair-key header where one is named
        and sent (its first 200 characters), else the peer's address (the client's that X-Forwarded-For names where
        the peer is a trusted proxy, SIZER_API_FORWARDED_ALLOW_IPS: :mod:`api.proxies`)."""
        peer = scope.get("client")
        client = str(peer[0]) if peer else "unknown"
        if self.proxies:
            forwarded = b", ".join(v for k, v in scope.get("headers") or [] if k == b"x-forwarded-for")  # every hop
            client = self.proxies.client(client, forwarded.decode("latin-1") or None)
        if self.key_header is not None and headers.get(self.key_header):
            client = "key:" + headers[self.key_header].decode("latin-1")[:200]
        return client

    async def _timed_out(self, exchange: _Exchange) -> None:
        """Answer a request over ``timeout_s``: 408 where its body was still arriving (the client's fault),
        else 503 (the estimate's); nothing where the answer has started."""
        scope, request_id = exchange.scope, exchange.request_id
        if exchange.reading or exchange.stopped_reading:  # still waiting for the client: its fault, not the estimate's
            log.warning("request body too slow: %s %s over %g s", scope.get("method"), scope.get("path"), self.timeout_s)
            if not exchange.started:
                await exchange.answer(408, {"detail": body_timeout_message(self.timeout_s), "request_id": request_id})
            return
        log.warning("request took over %g s: %s %s [%s]", self.timeout_s, scope.get("method"), scope.get("path"), request_id)
        if not exchange.started:
            await exchange.answer(503, {"detail": EstimateTimeout(self.timeout_s).message, "request_id": request_id})


class _Exchange:
    """One HTTP request on its way through :class:`GuardMiddleware`: its id, whether its answer has started,
    the body received so far, and the work it asked for (cancelled where the client hangs up)."""

    def __init__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                 send: Callable[[dict[str, Any]], Awaitable[None]], max_body_bytes: int, body_timeout_s: float):
        self.scope, self._receive, self._send = scope, receive, send
        self.max_body_bytes, self.body_timeout_s = max_body_bytes, body_timeout_s
        self.request_id = uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = self.request_id
        self.started = False  # the answer's start has been sent
        self.headers_out = security_headers(str(scope.get("path", "")))
        self.hung_up = False
        self.watcher: asyncio.Task[None] | None = None
        self.inner: asyncio.Future[Any] | None = None
        self.received = 0  # body bytes [B]
        self.body_done = False  # the last body chunk has arrived
        self.reading = False  # waiting for a body chunk right now
        self.stopped_reading = False  # the request's time ran out while a body chunk was awaited
        self.body_deadline = 0.0  # the event loop's time by which the whole body must have arrived [s]

    def start_body_clock(self) -> None:
        """Start the time the body has to arrive in (``body_timeout_s`` [s] from now)."""
        self.body_deadline = asyncio.get_running_loop().time() + self.body_timeout_s

    async def run(self, app: Any, timeout_s: float) -> None:
        """Run ``app`` on this request, for at most ``timeout_s`` [s] (TimeoutError past it); an answer whose start
        has been sent gets ``timeout_s`` more to send its body, since cutting it off leaves the client a status with
        no body (a finished estimate caught at the deadline between its start and its body)."""
        self.inner = asyncio.ensure_future(app(self.scope, self.counting_receive, self.send_with_id))
        try:
            done, _ = await asyncio.wait({self.inner}, timeout=timeout_s)
            if not done and self.started:
                done, _ = await asyncio.wait({self.inner}, timeout=timeout_s)
        except asyncio.CancelledError:  # the server stopping: the work goes with it
            self.inner.cancel()
            raise
        if not done:
            self.inner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.inner
            raise TimeoutError
        self.inner.result()  # its exception, if it raised one

    async def send_with_id(self, message: dict[str, Any]) -> None:
        """Send ``message``; an answer's start with the request id and the security headers added."""
        if message["type"] == "http.response.start":
            self.started = True
            message = {**message, "headers": [*message.get("headers", []), (REQUEST_ID_HEADER, self.request_id.encode()),
                                              *self.headers_out]}
        await self._send(message)

    async def answer(self, status: int, body: dict[str, Any]) -> None:
        """Answer with ``status`` and ``body`` as JSON."""
        data = json.dumps(body).encode()
        await self.send_with_id({"type": "http.response.start", "status": status,
                                 "headers": [(b"content-type", b"application/json"),
                                             (b"content-length", str(len(data)).encode())]})
        await self.send_with_id({"type": "http.response.body", "body": data})

    async def watch_disconnect(self) -> None:
        """After the body: the next message is the client hanging up; stop the work it asked for."""
        if (await self._receive())["type"] != "http.disconnect":  # a server that repeats the body: nothing to watch
            return
        if not self.started and self.inner is not None and not self.inner.done():
            self.hung_up = True
            self.inner.cancel()

    async def counting_receive(self) -> dict[str, Any]:
        """The next message of the request, its body counted against ``max_body_bytes`` [B] and timed against
        the body's deadline (BodyTooLarge, BodyTimeout); after the last chunk, the disconnect is watched for."""
        if self.body_done:  # after the body, receive() only waits for a disconnect: not the client's slowness
            return await self._receive()
        self.reading = True
        loop = asyncio.get_running_loop()
        try:
            message = await asyncio.wait_for(self._receive(), max(0.0, self.body_deadline - loop.time()))
        except TimeoutError:
            raise BodyTimeout(self.body_timeout_s) from None
        except asyncio.CancelledError:  # the request's limit cancelled the app mid-read: the client was still sending
            self.stopped_reading = True
            raise
        finally:
            self.reading = False
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.max_body_bytes:
                raise BodyTooLarge(self.max_body_bytes)
            self.body_done = not message.get("more_body", False)
            if self.body_done:
                self.watcher = asyncio.ensure_future(self.watch_disconnect())
        elif message["type"] == "http.disconnect":
            self.body_done = True
        return message
