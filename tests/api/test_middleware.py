"""GuardMiddleware at the ASGI level: each guard (body size, body time, request time, hang-up, last-resort
500, fair-queue client, deadline) driven by hand-made receive/send channels, so that the timing is ours
and not a test client's. Each request runs on an event loop whose clock is the test's (VirtualTimeLoop): time
moves only when every task waits, straight to the next timer, so a pause of 1 s against a limit of 0.1 s
comes after the limit on every run, however loaded the machine, and costs no real time."""
from __future__ import annotations

import asyncio
import json
import selectors
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from api.deps import CLIENT
from api.middleware import REQUEST_ID_HEADER, GuardMiddleware
from sizer.deadline import remaining_seconds


class _JumpingSelector(selectors.BaseSelector):
    """The loop's selector: it polls the real one without waiting, and where nothing is ready it moves the
    loop's clock by the time the loop would have waited (to its next timer) instead of sleeping."""

    def __init__(self, loop: "VirtualTimeLoop"):
        self.real, self.loop = selectors.DefaultSelector(), loop

    def register(self, fileobj, events, data=None):
        return self.real.register(fileobj, events, data)

    def unregister(self, fileobj):
        return self.real.unregister(fileobj)

    def select(self, timeout=None):
        ready = self.real.select(0 if timeout is not None else None)
        if not ready and timeout:
            self.loop.now += timeout
        return ready

    def get_map(self):
        return self.real.get_map()

    def close(self) -> None:
        self.real.close()


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time (it starts at 0 s): only the loop's own waits move it."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        return self.now


def run_on_virtual_time(main: Awaitable[Any]) -> Any:
    """``main`` run to its end on a :class:`VirtualTimeLoop`."""
    loop = VirtualTimeLoop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    finally:  # as asyncio.run ends: what is left is cancelled and let finish
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()


Message = dict[str, Any]
App = Callable[[dict[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]


def body(data: bytes, more: bool = False) -> Message:
    return {"type": "http.request", "body": data, "more_body": more}


def run(app: App, messages: list[Message | float], *, headers: list[tuple[bytes, bytes]] | None = None,
        timeout_s: float = 1.0, body_timeout_s: float | None = None, then: str = "wait",
        lanes: Any = None, scope_type: str = "http") -> tuple[list[Message], dict[str, Any]]:
    """Drive ``app`` behind the guard: ``messages`` are received in turn (a number: a pause [s] first);
    after them the client hangs up (``then="disconnect"``) or says nothing more. Returns what was sent and
    the scope."""
    queue = list(messages)
    sent: list[Message] = []

    async def receive() -> Message:
        if queue:
            item = queue.pop(0)
            if isinstance(item, (int, float)):
                await asyncio.sleep(item)
                item = queue.pop(0)
            assert isinstance(item, dict)
            return item
        if then == "disconnect":
            await asyncio.sleep(0.05)
            return {"type": "http.disconnect"}
        await asyncio.sleep(30)
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {"type": scope_type, "path": "/v1/x", "method": "POST", "headers": headers or [],
                             "client": ("10.0.0.1", 1234)}
    guard = GuardMiddleware(app, 100, timeout_s, body_timeout_s, lanes)
    run_on_virtual_time(guard(scope, receive, send))
    return sent, scope


def status_and_body(sent: list[Message]) -> tuple[int, dict[str, Any]]:
    start, end = sent
    assert start["type"] == "http.response.start" and end["type"] == "http.response.body"
    return start["status"], json.loads(end["body"])


async def echo(scope: dict[str, Any], receive: Callable[[], Awaitable[Message]],
               send: Callable[[Message], Awaitable[None]]) -> None:
    """Reads the whole body and answers it back, saying whether a deadline was set for it."""
    data = b""
    while True:
        message = await receive()
        data += message.get("body", b"")
        if not message.get("more_body"):
            break
    note = b"deadline" if remaining_seconds() is not None else b"none"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": data + b"|" + note})


def test_an_answer_carries_the_request_id_of_the_scope_and_the_app_runs_under_a_deadline() -> None:
    sent, scope = run(echo, [body(b"ab", more=True), body(b"cd")])
    start, end = sent
    ids = [value for name, value in start["headers"] if name == REQUEST_ID_HEADER]
    assert ids == [scope["state"]["request_id"].encode()] and len(ids[0]) == 16
    assert any(name.lower() == b"x-content-type-options" for name, _ in start["headers"])  # the security headers
    assert end["body"] == b"abcd|deadline"
    assert remaining_seconds() is None  # cleared after the request


def test_a_declared_length_over_the_limit_is_413_before_the_app_runs() -> None:
    ran = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        ran.append(True)

    sent, scope = run(app, [body(b"x")], headers=[(b"content-length", b"101")])
    status, answer = status_and_body(sent)
    assert status == 413 and answer["request_id"] == scope["state"]["request_id"] and not ran
    assert "100 bytes" in answer["detail"]


def test_a_declared_length_at_the_limit_is_read() -> None:
    sent, _ = run(echo, [body(b"x")], headers=[(b"content-length", b"100")])
    assert sent[0]["status"] == 200


def test_a_malformed_content_length_is_400() -> None:
    status, answer = status_and_body(run(echo, [body(b"x")], headers=[(b"content-length", b"12a")])[0])
    assert status == 400 and answer["detail"] == "malformed Content-Length header"


def test_a_chunked_body_is_counted_as_it_arrives_and_refused_past_the_limit() -> None:
    status, answer = status_and_body(run(echo, [body(b"a" * 60, more=True), body(b"b" * 60)])[0])
    assert status == 413 and "request_id" in answer


def test_a_body_slower_than_its_own_limit_is_408_naming_that_limit() -> None:
    sent, _ = run(echo, [body(b"a", more=True), 1.0, body(b"b")], timeout_s=5.0, body_timeout_s=0.1)
    status, answer = status_and_body(sent)
    assert status == 408 and "within 0.1 s" in answer["detail"]


def test_a_body_still_arriving_when_the_request_limit_passes_is_408() -> None:
    # the body may take 5 s, the whole request 0.2 s: at 0.2 s the client is still sending, so the fault is its own
    sent, _ = run(echo, [body(b"a", more=True), 1.0, body(b"b")], timeout_s=0.2, body_timeout_s=5.0)
    status, answer = status_and_body(sent)
    assert status == 408 and "within 0.2 s" in answer["detail"]


def test_work_over_the_request_limit_is_503() -> None:
    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await asyncio.sleep(2.0)

    sent = run(slow, [body(b"x")], timeout_s=0.1)[0]
    status, answer = status_and_body(sent)
    assert status == 503 and answer["request_id"] and "longer than 0.1 s" in answer["detail"]
    assert (b"x-content-type-options", b"nosniff") in sent[0]["headers"]  # the middleware's own answer, headers and all


def test_an_answer_already_started_is_not_answered_again() -> None:
    async def slow_after_start(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await asyncio.sleep(2.0)

    sent, _ = run(slow_after_start, [body(b"x")], timeout_s=0.1)
    assert [m["type"] for m in sent] == ["http.response.start"] and sent[0]["status"] == 200


def test_an_unexpected_error_is_500_without_its_text() -> None:
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        raise RuntimeError("secret internal detail")

    sent, _ = run(broken, [body(b"x")])
    status, answer = status_and_body(sent)
    assert status == 500 and "secret" not in json.dumps(answer) and answer["request_id"]


def test_a_client_that_hangs_up_has_its_work_cancelled_and_gets_nothing() -> None:
    cancelled = []

    async def waits(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        try:
            await asyncio.sleep(2.0)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        await send({"type": "http.response.start", "status": 200, "headers": []})

    sent, _ = run(waits, [body(b"x")], timeout_s=5.0, then="disconnect")
    assert cancelled == [True] and sent == []


def test_the_fair_key_header_names_the_client_and_is_cut_to_200_characters() -> None:
    seen = []

    class Settings:
        fair_key_header = "X-Fair-Key"

    class Lanes:
        settings = Settings()

    async def who(scope: Any, receive: Any, send: Any) -> None:
        seen.append(CLIENT.get(None))
        await send({"type": "http.response.start", "status": 204, "headers": []})

    run(who, [body(b"")], headers=[(b"x-fair-key", b"k" * 300)], lanes=Lanes())
    run(who, [body(b"")], lanes=Lanes())
    run(who, [body(b"")], headers=[(b"x-fair-key", b"k")])  # no lanes: no key header is read
    assert seen == ["key:" + "k" * 200, "10.0.0.1", "10.0.0.1"]


@pytest.mark.parametrize("scope_type", ["lifespan", "websocket"])
def test_other_scopes_pass_through_untouched(scope_type: str) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "passed"})

    sent, scope = run(app, [], scope_type=scope_type)
    assert sent == [{"type": "passed"}] and "state" not in scope


def test_an_answer_started_at_the_deadline_is_sent_whole() -> None:
    # a finished estimate (a cached one) caught by the deadline between its start and its body left the client a
    # 200 with no body; the started answer gets the limit again to finish
    async def start_then_body(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await asyncio.sleep(0.15)
        await send({"type": "http.response.body", "body": b'{"ok": true}'})

    status, answer = status_and_body(run(start_then_body, [body(b"x")], timeout_s=0.1)[0])
    assert status == 200 and answer == {"ok": True}
