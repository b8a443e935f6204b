"""What the serving simulation knows of each request, by its index.

Plain per-request lists (the simulation reads and writes them once per iteration and request, so
Python lists of ints and floats, not arrays): the lengths drawn, the prefill still to compute, the KV
tokens held, when its first token came and when it ended, and the bookkeeping that recompute
preemption needs (the answer made so far, the iteration its decoding began, a version that
invalidates a preempted request's scheduled end). A request ends once: a second end is a refusal
(:class:`~sizer.simulator.invariants.SimulationInvariantError`).
"""
from __future__ import annotations

import math

from sizer.simulator.invariants import broken


class RequestLedger:
    """The state of every request of one run.

    >>> ledger = RequestLedger([1000, 10], [200, 5], prefix_hit=0.25)
    >>> ledger.todo, ledger.whole(0)
    ([750, 8], 1200)
    >>> ledger.finish(1, 2.5); ledger.finished, ledger.done[1]
    (1, 2.5)
    """

    __slots__ = ("alive", "done", "finished", "first", "held", "made", "output", "prompt", "start_iter", "todo",
                 "unservable", "version")

    def __init__(self, prompts: list[int], outputs: list[int], prefix_hit: float) -> None:
        n = len(prompts)
        self.prompt = prompts  # tokens
        self.output = outputs  # tokens
        # prefill tokens still to compute (the prefix cache's share is found, at least one token is computed)
        self.todo = [max(1, round(p * (1 - prefix_hit))) for p in prompts]
        self.held = [0] * n  # KV tokens held when admitted (the running answer's tokens are counted apart)
        self.first: list[float] = [math.nan] * n  # time of the first token [s]; NaN: none yet
        self.done: list[float] = [math.nan] * n  # time of the end [s]; NaN: not ended; inf: never servable
        self.start_iter = [0] * n  # iteration whose end gave the latest first token
        self.made = [0] * n  # output tokens before the latest (re)prefill
        self.version = [0] * n  # bumped on preemption: a scheduled end of an older version is void
        self.alive = [False] * n  # decoding now
        self.unservable = [False] * n  # prompt and answer larger than the whole cache
        self.finished = 0  # requests ended (servable or not)

    def whole(self, request: int) -> int:
        """Prompt and whole answer of ``request`` [tokens] (what a reserving cache promises it).

        Parameters
        ----------
        request : int
            Its index [1].

        Returns
        -------
        int
            ``prompt + output`` [tokens].
        """
        return self.prompt[request] + self.output[request]

    def refuse(self, request: int) -> None:
        """Mark ``request`` as one the cache can never hold: ended at the start, as a failure (its end is inf).

        Parameters
        ----------
        request : int
            Its index [1].
        """
        self.unservable[request] = True
        self.done[request] = math.inf
        self.finished += 1

    def finish(self, request: int, now: float) -> None:
        """Record the end of ``request`` at ``now``; refuse the run if it had ended before.

        Parameters
        ----------
        request : int
            Its index [1].
        now : float
            Simulated time of its last token [s].
        """
        if self.done[request] == self.done[request]:  # not NaN: it had already finished
            broken(f"request {request} finished twice")
        self.done[request] = now
        self.finished += 1
