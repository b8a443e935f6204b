"""What a simulated serving run measured: latencies per request and the rates of the measured window.

The first :data:`WARMUP_SHARE` of the requests by arrival warm the replica up (an empty start) and are
not measured, nor are those that never ended. Per measured request:

.. math:: TTFT = t_{first} - t_{arrival}, \\quad E2E = t_{end} - t_{arrival}, \\quad
          TPOT = (t_{end} - t_{first}) / (n_{out} - 1)

(TPOT only for answers of more than one token). Rates are over the window from the first measured
arrival to the last measured end; the steady rates over the completions between the 20th and 80th
percentile of completion times (no start, no drain).

References
----------
docs/references.md [agrawal2024vidur].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WARMUP_SHARE = 0.1  # of the requests, left out of percentiles and throughput (the empty start)


@dataclass(frozen=True)
class SimulationResult:
    """Per measured request (seconds) and the totals of the measured window."""

    ttft: np.ndarray
    tpot: np.ndarray  # requests of more than one output token
    e2e: np.ndarray
    output_tokens_per_s: float
    total_tokens_per_s: float  # prompt and output tokens
    request_rate: float  # completed requests per second
    preemptions: int
    busy: float  # share of the window with work running
    complete: bool  # every request finished within the work bound
    iterations: int
    simulated_seconds: float
    kv_capacity: int
    steady_output_tokens_per_s: float = 0.0  # over the middle 60 % of completions (no start, no drain)
    steady_request_rate: float = 0.0

    def percentile(self, name: str, q: float) -> float:
        """The ``q``-th percentile of the measured ``name`` latencies; inf for an unfinished run.

        Parameters
        ----------
        name : str
            ``"ttft"``, ``"tpot"`` or ``"e2e"``.
        q : float
            Percentile [%].

        Returns
        -------
        float
            Seconds [s]; inf when the run did not finish or measured nothing.
        """
        values = getattr(self, name)
        if not self.complete or len(values) == 0:
            return float("inf")
        return float(np.percentile(values, q))


@dataclass(frozen=True)
class RunTotals:
    """What the iterations of a run counted, beside the per-request times."""

    finished: int  # requests ended, servable or not [1]
    preemptions: int  # [1]
    busy_seconds: float  # simulated time with an iteration running [s]
    simulated_seconds: float  # [s]
    iterations: int  # [1]
    kv_capacity: int  # [tokens]


def measured_requests(arrival: np.ndarray, done: np.ndarray, warmup: float = WARMUP_SHARE) -> np.ndarray:
    """The requests measured: past the warm-up share by arrival, and ended.

    Parameters
    ----------
    arrival : numpy.ndarray
        Arrival of every request [s].
    done : numpy.ndarray
        End of every request [s] (NaN or inf: not ended).
    warmup : float
        Share of the requests, first by arrival, left out [1] (0: a finite benchmark measures every prompt).

    Returns
    -------
    numpy.ndarray
        Their indices, in order of arrival [1].
    """
    past_warmup: np.ndarray = np.argsort(arrival, kind="stable")[int(len(arrival) * warmup):]
    ended: np.ndarray = past_warmup[np.isfinite(done[past_warmup])]
    return ended


def window_rates(arrival: np.ndarray, done: np.ndarray, prompts: np.ndarray, outputs: np.ndarray,
                 measured: np.ndarray) -> tuple[float, float, float]:
    """Output tokens, prompt and output tokens, and requests per second over the measured window.

    Parameters
    ----------
    arrival, done : numpy.ndarray
        Arrival and end of every request [s].
    prompts, outputs : numpy.ndarray
        Prompt and output lengths of every request [tokens].
    measured : numpy.ndarray
        The measured requests [1].

    Returns
    -------
    tuple of float
        Output [1/s], total [1/s] and request [1/s] rates; zeros when nothing was measured.
    """
    if not len(measured):
        return 0.0, 0.0, 0.0
    span = max(float(np.max(done[measured])) - float(np.min(arrival[measured])), 1e-9)
    return (float(outputs[measured].sum() / span), float((outputs[measured] + prompts[measured]).sum() / span),
            len(measured) / span)


def steady_rates(done: np.ndarray, outputs: np.ndarray) -> tuple[float, float]:
    """Output tokens and requests per second between the 20th and 80th percentile of completion times.

    Parameters
    ----------
    done : numpy.ndarray
        End of every request [s] (NaN or inf: not ended).
    outputs : numpy.ndarray
        Output lengths of every request [tokens].

    Returns
    -------
    tuple of float
        Output [1/s] and request [1/s] rates; zeros with fewer than ten completions or none apart in time.

    >>> steady_rates(np.arange(10.0), np.full(10, 100))
    (100.0, 1.0)
    """
    ends = np.flatnonzero(np.isfinite(done))
    if len(ends) < 10:
        return 0.0, 0.0
    ends = ends[np.argsort(done[ends], kind="stable")]
    i0, i1 = int(len(ends) * 0.2), int(len(ends) * 0.8)
    span = float(done[ends[i1]] - done[ends[i0]])
    if not span > 0:
        return 0.0, 0.0
    return float(outputs[ends[i0 + 1:i1 + 1]].sum() / span), (i1 - i0) / span


def summarize(arrivals: list[float], first: list[float], done: list[float], prompts: np.ndarray, outputs: np.ndarray,
              totals: RunTotals, warmup: float = WARMUP_SHARE) -> SimulationResult:
    """The result of a run from its per-request times and totals.

    Parameters
    ----------
    arrivals, first, done : list of float
        Arrival, first token and end of every request [s] (NaN: none; inf: never).
    prompts, outputs : numpy.ndarray
        Prompt and output lengths of every request [tokens].
    totals : RunTotals
        What the iterations counted.
    warmup : float
        Share of the requests, first by arrival, not measured [1].

    Returns
    -------
    SimulationResult
        Latencies of the measured requests [s], the window's and the steady rates [1/s], and the totals.
    """
    arrival = np.asarray(arrivals, dtype=float)
    first_a, done_a = np.asarray(first, dtype=float), np.asarray(done, dtype=float)
    measured = measured_requests(arrival, done_a, warmup)
    long = outputs[measured] > 1
    tpot = (done_a[measured][long] - first_a[measured][long]) / (outputs[measured][long] - 1)
    out_rate, tot_rate, req_rate = window_rates(arrival, done_a, prompts, outputs, measured)
    steady_out, steady_rate = steady_rates(done_a, outputs)
    now = totals.simulated_seconds
    return SimulationResult(ttft=first_a[measured] - arrival[measured], tpot=tpot, e2e=done_a[measured] - arrival[measured],
                            output_tokens_per_s=out_rate, total_tokens_per_s=tot_rate, request_rate=req_rate,
                            preemptions=totals.preemptions, busy=min(totals.busy_seconds / max(now, 1e-9), 1.0),
                            complete=totals.finished >= len(arrival) and bool(np.all(np.isfinite(done_a))),
                            iterations=totals.iterations, simulated_seconds=now, kv_capacity=totals.kv_capacity,
                            steady_output_tokens_per_s=steady_out, steady_request_rate=steady_rate)


def empty_result(kv_capacity: int) -> SimulationResult:
    """The result of a run that served nothing (no request fits the cache).

    Parameters
    ----------
    kv_capacity : int
        The replica's KV cache [tokens].

    Returns
    -------
    SimulationResult
        No latencies, zero rates, not complete.
    """
    nothing = np.zeros(0)
    return SimulationResult(ttft=nothing, tpot=nothing, e2e=nothing, output_tokens_per_s=0.0, total_tokens_per_s=0.0,
                            request_rate=0.0, preemptions=0, busy=0.0, complete=False, iterations=0,
                            simulated_seconds=0.0, kv_capacity=kv_capacity)
