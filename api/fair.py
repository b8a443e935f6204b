"""Fair queueing of estimates: slots handed out in turn across clients, not in order of arrival.

A client is its address (or the value of the header that ``SIZER_API_FAIR_KEY_HEADER`` names, e.g.
an API key set by an authenticating proxy). When every slot is busy, waiting requests queue per
client, and a freed slot goes to the waiting client served least recently (round robin, one request
per turn): a client that sends a hundred requests waits for its own, while a client that sends one
is served after at most one request of each other client. A client may hold at most
``max_waiting`` waiting requests, and all clients together ``max_total``; one more is refused
(:class:`QueueFull`, answered 503 with Retry-After), so that what waits stays bounded.

>>> import asyncio
>>> async def demo():
...     queue, order = FairQueue(slots=1), []
...     async def ask(client, n):
...         async with queue.slot(client):
...             order.append(f"{client}{n}")
...             await asyncio.sleep(0)
...     await asyncio.gather(*(ask("a", i) for i in range(3)), ask("b", 0))
...     return order
>>> asyncio.run(demo())
['a0', 'b0', 'a1', 'a2']
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from contextlib import asynccontextmanager
from typing import AsyncIterator

from starlette.exceptions import HTTPException

RETRY_AFTER_S = 1  # [s] the Retry-After of a refusal for a full queue: a slot frees within an estimate's time


class QueueFull(HTTPException):
    """A client already has ``limit`` requests waiting (or all clients together ``limit`` of them, ``everyone``);
    an HTTPException so that FastAPI answers 503, with Retry-After."""

    def __init__(self, limit: int, everyone: bool = False):
        detail = (f"the service has {limit} estimates waiting already (SIZER_API_MAX_WAITING); try again shortly"
                  if everyone else f"this client has {limit} estimates waiting already "
                                   "(SIZER_API_MAX_CLIENT_WAITING); wait for their answers before asking more")
        super().__init__(503, detail, headers={"Retry-After": str(RETRY_AFTER_S)})


class FairQueue:
    """``slots`` estimates at once; the waiting ones served a client at a time, in turn (see the module)."""

    def __init__(self, slots: int, max_waiting: int = 32, max_total: int = 256):
        self.slots = slots
        self.max_waiting = max_waiting
        self.max_total = max_total
        self.queued = 0  # requests waiting, all clients together
        self.busy = 0
        self.waiting: OrderedDict[str, deque[asyncio.Future]] = OrderedDict()
        self.turns = 0  # slots granted so far
        self.last_turn: dict[str, int] = {}  # per client with requests waiting or running: its latest slot

    def waiting_of(self, client: str) -> int:
        return len(self.waiting.get(client, ()))

    async def acquire(self, client: str) -> None:
        """Wait for a slot, in this client's turn."""
        if self.busy < self.slots and not self.waiting:
            self._grant(client)
            return
        line = self.waiting.get(client)
        if line is not None and len(line) >= self.max_waiting:
            raise QueueFull(self.max_waiting)
        if self.queued >= self.max_total:
            raise QueueFull(self.max_total, everyone=True)
        turn = asyncio.get_running_loop().create_future()
        if line is None:
            line = self.waiting[client] = deque()  # a new client joins the end of the round
        line.append(turn)
        self.queued += 1
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # granted as it was cancelled: pass the slot on
                self.release()
            else:
                self._forget(client, turn)
            raise

    def try_acquire(self, client: str) -> bool:
        """A slot now if one is free and nobody waits for one (then True), else none (False): never waits."""
        if self.busy < self.slots and not self.waiting:
            self._grant(client)
            return True
        return False

    def _forget(self, client: str, turn: asyncio.Future) -> None:
        line = self.waiting.get(client)
        if line is not None and turn in line:
            line.remove(turn)
            self.queued -= 1
            if not line:
                del self.waiting[client]

    def release(self) -> None:
        """Free a slot: the next client in the round gets it."""
        self.busy -= 1
        while self.waiting and self.busy < self.slots:
            client = min(self.waiting, key=lambda c: self.last_turn.get(c, -1))  # first of equals: who queued first
            line = self.waiting[client]
            turn = line.popleft()
            self.queued -= 1
            if not line:
                del self.waiting[client]
            if not turn.done():
                self._grant(client)
                turn.set_result(None)
        if len(self.last_turn) > 4 * (len(self.waiting) + self.slots) + 64:  # keep only clients seen lately
            keep = sorted(self.last_turn, key=self.last_turn.get)[-(len(self.waiting) + self.slots + 16):]
            self.last_turn = {c: self.last_turn[c] for c in keep} | {c: self.last_turn.get(c, -1) for c in self.waiting}

    def _grant(self, client: str) -> None:
        self.busy += 1
        self.turns += 1
        self.last_turn[client] = self.turns

    @asynccontextmanager
    async def slot(self, client: str) -> AsyncIterator[None]:
        await self.acquire(client)
        try:
            yield
        finally:
            self.release()
