"""How `sizer serve` holds up against slow and numerous clients: uvicorn's HTTP protocol with
a header timeout and a connection limit, and warnings that a flood cannot multiply.

- **Header timeout**: a connection must send complete request headers within
  ``header_timeout_s`` of connecting (or of its first byte after a keep-alive pause);
  otherwise it is answered 408 and closed. Without it, idle connections pile up until the
  process runs out of file descriptors.
- **Connection limits**: past ``max_client_connections`` from one client address (32 by default,
  well under the global limit), a new connection from it is answered 503 and closed at once, without
  reading anything from it, so that a handful of addresses holding connections open (half-open, or
  re-opened as each is timed out) cannot lock every other client out. Past ``max_connections`` open
  connections (per worker process), the connection that has waited longest for complete request
  headers or for the rest of its body (a body trickled byte by byte holds a connection as surely
  as headers do; the headers' wait counts from the connection, the body's from its headers) is
  dropped (408) to make room; only when every open connection has sent its whole request is the new one answered
  503 (with Retry-After) and closed. Connections from a trusted proxy
  (``forwarded_allow_ips``) carry many clients: the per-address cap does not apply to them.
- **Body deadline**: a connection whose request body is not all in ``body_timeout_s`` after its
  headers (plus a second, in which the application answers 408 itself) is answered 408 and closed
  here, whether or not the application reads the body.
- **Keep-alive**: an idle connection between requests is closed after ``keep_alive_s``
  (uvicorn's own ``timeout_keep_alive``).
- **Flood-proof log**: :class:`FloodFilter` lets the first warning of each kind through and
  then at most one per ``log_flood_interval_s``, saying how many were left out; a flood of
  refused connections writes a line per interval, not a line per connection.

The protocol class reads its limits from :class:`api.settings.Settings` (``SIZER_API_*``), so
that each uvicorn worker process finds the same limits that ``sizer serve`` was given.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from sizer.facade import registered_cache

from .headers import raw_header_lines, security_headers
from .settings import Settings

log = logging.getLogger("sizer.api")
FLOOD_LOGGERS = ("sizer.api", "uvicorn.error", "asyncio")
MAX_KINDS = 1000


class FloodFilter(logging.Filter):
    """Pass the first record of each kind (logger and message template), then at most one per ``interval_s`` [s].

    The record that ends a quiet interval says how many like it were left out.

    >>> flood = FloodFilter(60)
    >>> records = [logging.makeLogRecord({"name": "x", "msg": "refused %d", "args": (i,)}) for i in range(5)]
    >>> [flood.filter(r) for r in records]
    [True, False, False, False, False]
    """

    def __init__(self, interval_s: float):
        super().__init__()
        self.interval_s = interval_s
        self.last: dict[tuple[str, str], float] = {}
        self.left_out: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if self.interval_s <= 0:
            return True
        key = (record.name, record.msg if isinstance(record.msg, str) else type(record.msg).__name__)
        now = time.monotonic()
        last = self.last.get(key)
        if last is not None and now - last < self.interval_s:
            self.left_out[key] = self.left_out.get(key, 0) + 1
            return False
        if len(self.last) >= MAX_KINDS:  # messages built with f-strings would otherwise grow this without end
            self.last.clear()
            self.left_out.clear()
        self.last[key] = now
        skipped = self.left_out.pop(key, 0)
        if skipped and isinstance(record.msg, str):
            record.msg += f" [{skipped} more like this not logged in the last {now - last:.0f} s]"
        return True


def install_flood_filter(interval_s: float) -> None:
    """Put one :class:`FloodFilter` on each logger a flood can reach (replacing an earlier one)."""
    for name in FLOOD_LOGGERS:
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, FloodFilter)]:
            logger.removeFilter(old)
        logger.addFilter(FloodFilter(interval_s))


def _raw_response(status: int, reason: str, detail: str) -> bytes:
    """An answer written straight to the socket, before any request reaches the application (and its middleware);
    a 503 says when to try again (Retry-After)."""
    body = json.dumps({"detail": detail}).encode()
    retry = f"retry-after: {RETRY_AFTER_S}\r\n" if status == 503 else ""
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"{retry}{raw_header_lines()}connection: close\r\n\r\n").encode()
    return head + body


@registered_cache()
def _limits() -> Settings:
    return Settings()


# Open connections per client address in this worker process; an address leaves when its last closes,
# so the table holds at most as many entries as there are open connections.
_CLIENT_CONNECTIONS: dict[str, int] = {}
# Connections still waiting for complete request headers, oldest first: the first dropped when the limit is reached.
_AWAITING_HEADERS: dict["GuardedH11Protocol", float] = {}  # -> the event loop's time it began waiting [s]
# Connections past their headers still waiting for the rest of the body, oldest first: dropped next.
_AWAITING_BODY: dict["GuardedH11Protocol", float] = {}
BODY_GRACE_S = 1.0  # [s] past the body deadline, in which the application's own 408 (GuardMiddleware) comes first
RETRY_AFTER_S = 1  # [s] the Retry-After of a connection refused at a limit


def _client_of(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, (tuple, list)) and peer else "unknown"


def _slowest() -> "GuardedH11Protocol | None":
    """The connection that has waited longest for the rest of its request (headers or body), or None: the oldest of
    each table is its first (each is in the order its connections began waiting)."""
    firsts = [next(iter(table.items())) for table in (_AWAITING_HEADERS, _AWAITING_BODY) if table]
    return min(firsts, key=lambda first: first[1])[0] if firsts else None


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a connection limit (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        limits = _limits()
        self.header_timeout_s = limits.header_timeout_s
        self.max_connections = limits.max_connections
        self.max_client_connections = limits.max_client_connections
        self.body_timeout_s = limits.body_timeout_s
        self.header_timer: asyncio.TimerHandle | None = None
        self.body_timer: asyncio.TimerHandle | None = None
        self.refused = False
        self.client_key: str | None = None  # not `client`: uvicorn keeps the peer address there

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        client = _client_of(transport)
        slowest = _slowest() if len(self.connections) >= self.max_connections else None
        if slowest is not None and slowest in _AWAITING_HEADERS:
            log.warning("connection limit reached: %d open connections (SIZER_API_MAX_CONNECTIONS); the one "
                        "waiting longest for request headers is dropped", self.max_connections)
            slowest._drop_slow_headers("dropped to make room: no complete request headers yet")
        elif slowest is not None:
            log.warning("connection limit reached: %d open connections (SIZER_API_MAX_CONNECTIONS); the one "
                        "waiting longest for its request body is dropped", self.max_connections)
            slowest._drop_slow_body("dropped to make room: the request body was still arriving")
        elif len(self.connections) >= self.max_connections:
            log.warning("connection limit reached: %d open connections (SIZER_API_MAX_CONNECTIONS); "
                        "new connections are answered 503 and closed", self.max_connections)
            return self._refuse(transport, f"the service has {self.max_connections} open connections, its limit; "
                                           "try again shortly")
        if _CLIENT_CONNECTIONS.get(client, 0) >= self.max_client_connections \
                and not _limits().trusted_proxies().trusts(client):
            log.warning("client connection limit reached: %d open connections from one address "
                        "(SIZER_API_MAX_CLIENT_CONNECTIONS); its new connections are answered 503 and closed",
                        self.max_client_connections)
            return self._refuse(transport, f"this address has {self.max_client_connections} open connections, its "
                                           "limit; close some or try again shortly")
        self.client_key = client
        _CLIENT_CONNECTIONS[client] = _CLIENT_CONNECTIONS.get(client, 0) + 1
        super().connection_made(transport)
        self._arm_header_timer()

    def _refuse(self, transport: asyncio.Transport, detail: str) -> None:
        self.refused = True
        self.transport = transport
        transport.write(_raw_response(503, "Service Unavailable", detail))
        transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        self._cancel_body_timer()
        if self.refused:
            return
        if self.client_key is not None:
            left = _CLIENT_CONNECTIONS.get(self.client_key, 1) - 1
            if left > 0:
                _CLIENT_CONNECTIONS[self.client_key] = left
            else:
                _CLIENT_CONNECTIONS.pop(self.client_key, None)
            self.client_key = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        super().data_received(data)
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            self._cancel_header_timer()  # the headers are in (or the connection is over)
        else:
            self._arm_header_timer()  # part of a request line or headers: the clock runs from the first byte
        if not self.transport.is_closing() and self.conn.their_state is h11.SEND_BODY:
            self._arm_body_timer()  # headers in, body not: the body's clock runs from the headers
        else:
            self._cancel_body_timer()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 cannot parse, with the security headers every answer carries."""
        headers = [(b"content-type", b"text/plain; charset=utf-8"), *security_headers(), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=msg.encode("ascii", "replace")), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()

    def _arm_header_timer(self) -> None:
        if self.header_timer is None:
            self.header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)
            _AWAITING_HEADERS[self] = self.loop.time()

    def _cancel_header_timer(self) -> None:
        _AWAITING_HEADERS.pop(self, None)
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _drop_slow_headers(self, detail: str) -> None:
        self._cancel_header_timer()
        if not self.transport.is_closing():
            self.transport.write(_raw_response(408, "Request Timeout", detail))
            self.transport.close()

    def _arm_body_timer(self) -> None:
        if self.body_timer is None:
            self.body_timer = self.loop.call_later(self.body_timeout_s + BODY_GRACE_S, self._body_too_slow)
            _AWAITING_BODY[self] = self.loop.time()

    def _cancel_body_timer(self) -> None:
        _AWAITING_BODY.pop(self, None)
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None

    def _drop_slow_body(self, detail: str) -> None:
        """Close a connection whose body is still arriving: 408 where no answer has started (else just closed)."""
        self._cancel_body_timer()
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            if self.cycle is not None:  # the application reads a disconnect and writes nothing more (as on a hang-up)
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            self.transport.write(_raw_response(408, "Request Timeout", detail))
        self.transport.close()

    def _body_too_slow(self) -> None:
        self.body_timer = None
        _AWAITING_BODY.pop(self, None)
        if self.transport.is_closing() or self.conn.their_state is not h11.SEND_BODY:
            return
        log.warning("closed a connection whose request body was not in within %g s of its headers "
                    "(SIZER_API_BODY_TIMEOUT_S)", self.body_timeout_s)
        self._drop_slow_body(f"the request body did not arrive within {self.body_timeout_s:g} s; send it at once")

    def _headers_too_slow(self) -> None:
        self.header_timer = None
        _AWAITING_HEADERS.pop(self, None)
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE or self.cycle is not None \
                and not self.cycle.response_complete:
            return
        log.warning("closed a connection that sent no complete request headers within %g s "
                    "(SIZER_API_HEADER_TIMEOUT_S)", self.header_timeout_s)
        self.transport.write(_raw_response(408, "Request Timeout",
                                           f"no complete request headers within {self.header_timeout_s:g} s"))
        self.transport.close()


# Connections the kernel queues before the service accepts them. asyncio accepts up to this many per pass of the
# event loop, each with its protocol and task: uvicorn's 2,048 let a burst of hang-ups build some 4,000 at once, a
# high-water mark the heaps kept (+25 % after a 20 s fire-and-forget burst, +4 % with 256: benchmarks/holds_load.py)
BACKLOG = 256


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The keyword arguments for ``uvicorn.run`` that put these limits in place; uvicorn's own X-Forwarded-For
    handling (which trusts 127.0.0.1 by default) off: the service believes only the proxies its settings name
    (:mod:`api.proxies`)."""
    return {"http": GuardedH11Protocol, "timeout_keep_alive": settings.keep_alive_s, "proxy_headers": False,
            "backlog": BACKLOG}
