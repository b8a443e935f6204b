"""Continuous batching's scheduler: which requests run in the next iteration, and what ends in it.

As vLLM, TensorRT-LLM and SGLang schedule (chunked prefill): every running answer decodes one token;
the token budget left over goes to prefilling, first to the prompts already admitted (oldest first),
then to waiting requests admitted in order of arrival while a batch slot is free and the KV cache
(:class:`~sizer.simulator.kv_cache.KvCache`) admits them. A prompt done gives its first token at the
end of the iteration; an answer ends at the iteration its last token is due. Under the non-reserving
policy the youngest running answers are preempted when the cache cannot hold one more token of each,
and are later prefilled again, prompt and answer so far (recompute preemption).

References
----------
docs/references.md [kwon2023vllm], [agrawal2024sarathi].
"""
from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable

from sizer.simulator.kv_cache import KvCache
from sizer.simulator.requests import RequestLedger


class Scheduler:
    """The queues of one replica: waiting, prefilling, decoding (with each answer's scheduled end).

    >>> ledger = RequestLedger([30, 10], [3, 1], prefix_hit=0.0)
    >>> scheduler = Scheduler(ledger, KvCache(capacity=1000, reserving=True), max_batch=8, token_budget=32)
    >>> scheduler.enqueue([0, 1]); scheduler.schedule()  # 30 tokens of one prompt, 2 of the other
    (32, [0])
    """

    __slots__ = ("decoding", "ends", "kv", "ledger", "max_batch", "preemptions", "prefilling", "running",
                 "token_budget", "waiting")

    def __init__(self, ledger: RequestLedger, kv: KvCache, max_batch: int, token_budget: int) -> None:
        self.ledger = ledger
        self.kv = kv
        self.max_batch = max_batch  # running and prefilling requests [1]
        self.token_budget = token_budget  # tokens per iteration [tokens]
        self.waiting: deque[int] = deque()
        self.prefilling: list[int] = []  # admitted, prompt not yet done
        self.ends: list[tuple[int, int, int]] = []  # a heap of (iteration of the last token, request, version)
        self.running: list[int] = []  # decoding, oldest first (preemption takes the last alive)
        self.decoding = 0  # running answers alive
        self.preemptions = 0

    def enqueue(self, arrived: Iterable[int]) -> None:
        """Queue the requests that arrived, in order; one the cache can never hold is left out (it ended at the start).

        Parameters
        ----------
        arrived : iterable of int
            Their indices [1].
        """
        unservable = self.ledger.unservable
        for r in arrived:
            if not unservable[r]:
                self.waiting.append(r)

    def decode_only(self) -> bool:
        """Whether the iteration only decodes: answers running, nothing waiting or prefilling.

        Returns
        -------
        bool
            True when a stretch of decode iterations can be run at once.
        """
        return bool(self.decoding) and not self.waiting and not self.prefilling

    def iterations_to_next_end(self, it: int) -> int:
        """Iterations from ``it`` to the next scheduled end (possibly of a preempted, void entry).

        Parameters
        ----------
        it : int
            The current iteration [1].

        Returns
        -------
        int
            The iterations [1]; 0 when none is scheduled.
        """
        return self.ends[0][0] - it if self.ends else 0

    def preempt_to_fit(self, it: int) -> None:
        """Preempt the youngest running answers while one more token of each would not fit the cache.

        Parameters
        ----------
        it : int
            The current iteration [1].
        """
        alive = self.ledger.alive
        while self.decoding and self.kv.overfull(self.decoding):
            r = self.running.pop()
            if alive[r]:
                self._preempt(r, it)

    def _preempt(self, r: int, it: int) -> None:
        """Stop request ``r``'s answer, free its cache and queue it first to be prefilled again, answer so far."""
        ledger = self.ledger
        ledger.alive[r] = False
        ledger.version[r] += 1  # its scheduled end is void
        self.decoding -= 1
        grown = it - 1 - ledger.start_iter[r]  # tokens decoded since its first, all iterations before this one
        self.kv.free(ledger.held[r] + grown)
        self.kv.release(ledger.whole(r))
        ledger.made[r] += grown
        ledger.todo[r] = ledger.prompt[r] + ledger.made[r]
        ledger.held[r] = 0
        self.waiting.appendleft(r)
        self.preemptions += 1

    def schedule(self) -> tuple[int, list[int]]:
        """Spend the token budget the running answers leave on prefill chunks: the prompts admitted, then
        waiting requests admitted one by one.

        Returns
        -------
        tuple of (int, list of int)
            Prefill tokens in the iteration [tokens], and the requests whose prompt is done with it.
        """
        start = self.token_budget - self.decoding
        left = start
        completed: list[int] = []
        for r in self.prefilling:
            if left <= 0:
                break
            left = self._prefill_chunk(r, left, completed)
        while left > 0 and self._admit_next():
            left = self._prefill_chunk(self.prefilling[-1], left, completed)
        return start - left, completed

    def _prefill_chunk(self, r: int, left: int, completed: list[int]) -> int:
        """Prefill what the budget ``left`` allows of request ``r``'s prompt; the budget left after it."""
        todo = self.ledger.todo
        chunk = min(left, todo[r])
        todo[r] -= chunk
        if todo[r] == 0:
            completed.append(r)
        return left - chunk

    def _admit_next(self) -> bool:
        """Admit the first waiting request if a batch slot is free and the cache admits it."""
        if not self.waiting or self.decoding + len(self.prefilling) >= self.max_batch:
            return False
        ledger = self.ledger
        r = self.waiting[0]
        need = ledger.prompt[r] + ledger.made[r]
        whole = ledger.prompt[r] + ledger.output[r]  # (ledger.whole, inline: tried nearly every iteration when full)
        if not self.kv.admits(need, whole, self.decoding):  # (the running answers grow by one token each here too)
            return False
        self.waiting.popleft()
        self.kv.admit(whole, need + 1)  # the prompt and the slot of the token its prefill produces (vLLM allocates both)
        ledger.held[r] = need + 1
        self.prefilling.append(r)
        return True

    def end_answers(self, it: int) -> list[int]:
        """The answers whose last token is this iteration's: they stop decoding and free their cache.

        Parameters
        ----------
        it : int
            The iteration just run [1].

        Returns
        -------
        list of int
            The requests that ended [1].
        """
        ledger, ends = self.ledger, self.ends
        ended = []
        while ends and ends[0][0] <= it:
            _, r, version = heapq.heappop(ends)
            if version != ledger.version[r]:
                continue  # preempted since it was scheduled
            ledger.alive[r] = False
            self.decoding -= 1
            self.kv.free(ledger.held[r] + (it - ledger.start_iter[r]))
            ended.append(r)
        return ended

    def first_tokens(self, completed: list[int], now: float, it: int) -> list[int]:
        """The prompts done in this iteration give their first token: each answer starts decoding, or
        ends here if that token was its last.

        Parameters
        ----------
        completed : list of int
            Requests whose prompt was done in the iteration [1].
        now : float
            Simulated time at the iteration's end [s].
        it : int
            The iteration just run [1].

        Returns
        -------
        list of int
            The requests that ended with their first token [1].
        """
        ledger = self.ledger
        ended = []
        for r in completed:
            self.prefilling.remove(r)
            if ledger.first[r] != ledger.first[r]:  # NaN: the first time (a recomputed prompt keeps its first)
                ledger.first[r] = now
            ledger.made[r] += 1
            remaining = ledger.output[r] - ledger.made[r]
            if remaining <= 0:  # a one-token answer ends with its prefill
                self.kv.free(ledger.held[r])
                ended.append(r)
                continue
            ledger.start_iter[r] = it
            heapq.heappush(self.ends, (it + remaining, r, ledger.version[r]))
            self.running.append(r)
            ledger.alive[r] = True
            self.decoding += 1
        return ended

    def check_conserved(self, it: int) -> None:
        """At the end of a run: refuse it unless the cache's totals are what the requests in flight hold
        and were promised.

        Parameters
        ----------
        it : int
            Iterations run [1].
        """
        ledger = self.ledger
        held = sum(ledger.held[r] for r in self.prefilling)
        promised = sum(ledger.whole(r) for r in self.prefilling)
        for r in set(self.running):
            if ledger.alive[r]:
                held += ledger.held[r] + (it - 1 - ledger.start_iter[r])
                promised += ledger.whole(r)
        self.kv.check_conserved(held, promised)
