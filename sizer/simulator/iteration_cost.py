"""Seconds of the simulated iterations, from the engine's grid (:func:`sizer.simulator.simulate.iteration_grid`).

One iteration passes ``n`` tokens (prefill chunks and one token per running answer) and reads the
``K`` KV tokens held; the runtime's CPU adds a share per running request:

.. math:: t_{iter} = t_{grid}(n, K) + c_{seq}\\, n_{running}

While only answers decode and nothing waits, the simulation runs a stretch of iterations at once.
Within one cell of the grid the time grows linearly with the KV tokens read, by :math:`d` per
iteration (each running answer adds a token), so :math:`k` iterations from a first of :math:`t_0` take

.. math:: T(k) = k\\, t_0 + d\\, k (k - 1) / 2

and the stretch stops at the next end, the edge of the cell or the cache, or the next arrival (the
fewest iterations with :math:`T(k) \\ge` the gap).

References
----------
docs/references.md [agrawal2024vidur], [agrawal2024sarathi].
"""
from __future__ import annotations

import math
from collections.abc import Callable

from sizer.simulator.invariants import broken

#: (tokens in the iteration [tokens], KV tokens read [tokens]) -> seconds of the iteration [s]
Interpolator = Callable[[float, float], float]


def iteration_seconds(interp: Interpolator, tokens: int, kv_tokens: int, sequences: int, per_sequence: float) -> float:
    """Seconds of one iteration; refuse the run unless time moves forward by a finite step.

    Parameters
    ----------
    interp : callable
        The engine's grid, (tokens, KV tokens) -> seconds [s].
    tokens : int
        Prefill and decode tokens in the iteration [tokens].
    kv_tokens : int
        KV tokens held (read once) [tokens].
    sequences : int
        Requests running or prefilling [1].
    per_sequence : float
        The runtime's CPU time per running request and iteration [s].

    Returns
    -------
    float
        :math:`t_{grid}(n, K) + c_{seq} n_{running}` [s], positive and finite.

    >>> iteration_seconds(lambda n, k: 1e-3 * n + 1e-6 * k, 10, 1000, 4, 1e-4)
    0.0114
    """
    seconds = interp(tokens, kv_tokens) + per_sequence * sequences
    if not seconds > 0.0 or seconds == math.inf:
        broken(f"an iteration of {tokens} tokens over {kv_tokens} KV tokens took {seconds!r} s")
    return seconds


def batch_seconds(interp: Interpolator, prefill: int, decoding: int, kv_tokens: int, running: int, per_sequence: float,
                  mixed: bool) -> tuple[float, float]:
    """Seconds of one scheduling step: prefill chunks and running answers in one iteration (``mixed``, chunked
    prefill), or a prefill-only iteration followed by the answers' decode iteration (vLLM's V0 scheduler without
    chunked prefill: prompts first, the answers wait for them).

    Parameters
    ----------
    interp : callable
        The engine's grid, (tokens, KV tokens) -> seconds [s].
    prefill : int
        Prefill tokens scheduled [tokens].
    decoding : int
        Running answers, one token each [1].
    kv_tokens : int
        KV tokens held (read once per iteration) [tokens].
    running : int
        Requests running or prefilling [1].
    per_sequence : float
        The runtime's CPU time per running request and iteration [s].
    mixed : bool
        Whether prefill and decode tokens share one iteration.

    Returns
    -------
    tuple of (float, float)
        Seconds of the step [s] (:math:`t(p + d, K)` mixed, else :math:`t(p, 0) + t(d, K)` when both are
        scheduled), and the seconds after which the prompts done in it give their first token [s] (the step's
        end, else the end of the prefill-only iteration).

    >>> f = lambda n, k: 1e-3 + 1e-4 * n
    >>> [round(x, 6) for x in batch_seconds(f, 10, 5, 0, 6, 0.0, True) + batch_seconds(f, 10, 5, 0, 6, 0.0, False)]
    [0.0025, 0.0025, 0.0035, 0.002]
    """
    if mixed or prefill == 0 or decoding == 0:
        seconds = iteration_seconds(interp, prefill + decoding, kv_tokens, running, per_sequence)
        return seconds, seconds
    # the prefill-only pass reads no running answer's cache
    first = iteration_seconds(interp, prefill, 0, running - decoding, per_sequence)
    return first + iteration_seconds(interp, decoding, kv_tokens, decoding, per_sequence), first


def steps_within_cell(kv_tokens: int, decoding: int, cell: float) -> int:
    """Decode iterations before the KV tokens read leave their cell of the grid (time linear within it).

    Parameters
    ----------
    kv_tokens : int
        KV tokens held now [tokens].
    decoding : int
        Running answers, each adding a token per iteration (at least one) [1].
    cell : float
        Width of a cell of the grid's KV axis [tokens].

    Returns
    -------
    int
        Whole iterations [1].

    >>> steps_within_cell(100, 10, 64.0)
    2
    """
    return int((int(kv_tokens / cell) + 1) * cell - kv_tokens) // decoding


def iterations_until(first: float, growth: float, gap: float) -> float:
    """The (real) number of iterations after which ``gap`` seconds have passed: the root of :math:`T(k) = gap`.

    Parameters
    ----------
    first : float
        Seconds of the first iteration, :math:`t_0` [s].
    growth : float
        Seconds each next iteration adds, :math:`d` [s].
    gap : float
        Seconds to cover [s].

    Returns
    -------
    float
        :math:`k` with :math:`k t_0 + d k (k - 1) / 2 = gap` [1] (``gap / first`` when :math:`d = 0`).

    >>> iterations_until(0.01, 0.0, 0.05), round(iterations_until(0.01, 0.002, 0.07), 9)
    (5.0, 5.0)
    """
    a2, b1 = growth / 2, first - growth / 2
    return gap / b1 if abs(a2) < 1e-15 else (-b1 + math.sqrt(b1 * b1 + 4 * a2 * gap)) / (2 * a2)


def decode_stretch(interp: Interpolator, decoding: int, kv_tokens: int, per_sequence: float, most: int,
                   until_arrival: float) -> tuple[int, float]:
    """Iterations of a decode-only stretch and their seconds (the module's :math:`T(k)`).

    Parameters
    ----------
    interp : callable
        The engine's grid, (tokens, KV tokens) -> seconds [s].
    decoding : int
        Running answers (the tokens of each iteration) [1].
    kv_tokens : int
        KV tokens held at the first iteration [tokens].
    per_sequence : float
        The runtime's CPU time per running request and iteration [s].
    most : int
        Iterations before the next end or the edge of the grid's cell or of the cache [1].
    until_arrival : float
        Seconds until the next arrival [s]; inf when none is known.

    Returns
    -------
    tuple of (int, float)
        The iterations :math:`k` [1], at most ``most`` and at least one, and :math:`T(k)` [s].

    >>> decode_stretch(lambda n, k: 0.01 + 1e-6 * k, 2, 0, 0.0, 10, math.inf)
    (10, 0.10009)
    """
    first = interp(decoding, kv_tokens)
    growth = interp(decoding, kv_tokens + decoding) - first
    first += per_sequence * decoding
    steps = most
    if until_arrival != math.inf:  # the fewest iterations after which the next arrival has come
        steps = min(steps, max(math.ceil(iterations_until(first, growth, until_arrival)), 1))
    return steps, steps * first + growth * steps * (steps - 1) / 2
