"""The paged KV cache of one simulated replica, counted in tokens.

Two totals are kept (:mod:`sizer.simulator.simulate` runs the iterations that move them):

- ``used``: the KV tokens the requests in flight hold: an admitted prompt and the slot of the token its
  prefill produces, plus one token per running answer per iteration; freed when an answer ends or is
  preempted;
- ``reserved``: the tokens promised to the admitted requests, prompt and whole answer each.

Admission follows the runtime's policy. Reserving (TensorRT-LLM's GUARANTEED_NO_EVICT) admits a request
when its prompt and whole answer fit beside the promises; otherwise (vLLM) it admits when the prompt and
its first token fit beside what is held and what the running answers add this iteration, and the youngest
answers are preempted when they outgrow the cache.

The invariants: ``0 <= used <= capacity``, ``reserved >= 0`` (and ``<= capacity`` when reserving), and at
the end of a run the totals equal what the requests in flight hold and were promised
(:meth:`KvCache.check_conserved`); a broken one is a refusal
(:class:`~sizer.simulator.invariants.SimulationInvariantError`).

References
----------
docs/references.md [kwon2023vllm].
"""
from __future__ import annotations

from sizer.simulator.invariants import broken


class KvCache:
    """KV tokens held and promised on one replica of ``capacity`` tokens.

    >>> cache = KvCache(capacity=100, reserving=True)
    >>> cache.admits(need=40, whole=90, decoding=0), cache.admits(need=40, whole=101, decoding=0)
    (True, False)
    >>> cache.admit(whole=90, held=41); cache.grow(5); (cache.used, cache.reserved)
    (46, 90)
    """

    __slots__ = ("capacity", "reserved", "reserving", "used")

    def __init__(self, capacity: int, reserving: bool) -> None:
        self.capacity = capacity  # tokens
        self.reserving = reserving  # admit on prompt + whole answer (True) or on the prompt (False)
        self.used = 0  # tokens held by the requests in flight
        self.reserved = 0  # tokens promised to the admitted requests (prompt + whole answer each)

    def admits(self, need: int, whole: int, decoding: int) -> bool:
        """Whether a waiting request may be admitted now, under the cache's policy.

        Parameters
        ----------
        need : int
            Prompt tokens to prefill (the prompt, and the answer so far of a preempted request) [tokens].
        whole : int
            Prompt and whole answer of the request, the promise a reserving cache makes [tokens].
        decoding : int
            Running answers, each of which grows by one token in this iteration [1].

        Returns
        -------
        bool
            Reserving: the promises and ``whole`` fit the capacity. Otherwise: what is held, this
            iteration's answer tokens, ``need`` and the slot of the first token fit.
        """
        if self.reserving:
            return self.reserved + whole <= self.capacity
        return self.used + decoding + need + 1 <= self.capacity

    def admit(self, whole: int, held: int) -> None:
        """Count an admitted request: ``held`` tokens taken now, ``whole`` promised.

        Parameters
        ----------
        whole : int
            Prompt and whole answer [tokens].
        held : int
            Tokens it takes on admission: its prompt (to prefill) and its first token's slot [tokens].
        """
        self.reserved += whole
        self.used += held

    def grow(self, tokens: int) -> None:
        """Count ``tokens`` new answer tokens held (one per running answer per iteration).

        Parameters
        ----------
        tokens : int
            Tokens added [tokens].
        """
        self.used += tokens

    def free(self, held: int) -> None:
        """Count ``held`` tokens freed (an answer ended or was preempted).

        Parameters
        ----------
        held : int
            Tokens the request held [tokens].
        """
        self.used -= held

    def release(self, whole: int) -> None:
        """Withdraw a request's promise (it ended or was preempted).

        Parameters
        ----------
        whole : int
            Prompt and whole answer of the request [tokens].
        """
        self.reserved -= whole

    def overfull(self, decoding: int) -> bool:
        """Whether the running answers, one more token each, would outgrow the cache.

        Parameters
        ----------
        decoding : int
            Running answers [1].

        Returns
        -------
        bool
            ``used + decoding > capacity``: the youngest answer must be preempted first.
        """
        return self.used + decoding > self.capacity

    def decode_steps_left(self, decoding: int) -> int:
        """Iterations ``decoding`` running answers can grow before the cache is full.

        Parameters
        ----------
        decoding : int
            Running answers, at least one [1].

        Returns
        -------
        int
            ``(capacity - used) // decoding`` [1].
        """
        return (self.capacity - self.used) // decoding

    def check(self) -> None:
        """Refuse the run unless ``0 <= used <= capacity``, ``reserved >= 0`` and, when reserving,
        ``reserved <= capacity``."""
        if not 0 <= self.used <= self.capacity or self.reserved < 0 or (self.reserving and self.reserved > self.capacity):
            broken(f"{self.used} KV tokens held, {self.reserved} promised, of a cache of {self.capacity}")

    def check_conserved(self, held: int, promised: int) -> None:
        """At the end of a run: refuse it unless the totals are what the requests in flight hold and
        (when reserving) were promised (admitted = held + freed).

        Parameters
        ----------
        held : int
            Tokens the requests in flight hold, summed request by request [tokens].
        promised : int
            Tokens promised to the requests in flight, summed request by request [tokens].
        """
        if held != self.used:
            broken(f"{self.used} KV tokens counted held at the end, the requests in flight hold {held}")
        reserved = self.reserved if self.reserving else 0
        if reserved and reserved != promised:
            broken(f"{reserved} KV tokens counted promised at the end, the requests in flight were promised {promised}")
