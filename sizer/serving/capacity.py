"""Capacity under latency objectives: the largest load one replica sustains, and the replicas a load needs.

A replica meets its service-level objectives (SLOs) at a load when the chosen percentile of time to
first token, time per output token and end-to-end latency are each within their limit. Since
latency grows with the rate, the largest rate is found by bisection between 0 and the replica's
saturated throughput (a closed loop that always has work waiting), simulating the same requests
(the same seed) at every rate. Without SLOs the capacity is the saturated throughput itself.

.. math:: R_{max} = \\max \\{ R : P_q(\\mathrm{TTFT}) \\le T_1,\\ P_q(\\mathrm{TPOT}) \\le T_2,\\ P_q(\\mathrm{E2E}) \\le T_3 \\},
          \\qquad n = \\lceil R / R_{max} \\rceil

References
----------
docs/references.md [agrawal2024vidur], [agrawal2024sarathi], [mlperf-inference].
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from sizer.simulator.metrics import WARMUP_SHARE, SimulationResult
from sizer.simulator.simulate import Replica, simulate
from sizer.simulator.traffic import Lengths, Load

SEARCH_STEPS = 8  # bisection halvings: the rate to within 0.4 % of the saturated throughput
MAX_REPLICAS = 100_000
MISSED_SLO_TRIES = 3  # replicas added one at a time when the sized count's own run misses the SLOs
# One rule for how long every path simulates (sizer inference, recommend --inference, the page): enough measured
# requests that TAIL_SAMPLES of them lie beyond the asked percentile, so that the percentile is an order statistic
# with that many above it (at p99 about 600 requests, at p90 the floor).
TAIL_SAMPLES = 6
MIN_REQUESTS, MAX_REQUESTS = 200, 3000


def percentile_interval(values: npt.ArrayLike, percentile: float, z: float = 1.96) -> tuple[float, float] | None:
    r"""The order-statistic interval of the ``percentile`` [%] of ``values`` at about 95 % confidence (``z``):
    ranks :math:`n q \pm z \sqrt{n q (1 - q)}` of the sorted values (distribution-free); None without values.

    Parameters
    ----------
    values : array_like
        The sample, e.g. measured latencies [s]; any order.
    percentile : float
        The percentile whose interval is wanted [%], e.g. 99.
    z : float
        Standard-normal quantile of the confidence [1]: 1.96 for about 95 %.

    Returns
    -------
    tuple of (float, float) or None
        The lower and upper sample values bounding the percentile [unit of ``values``]; None for an
        empty sample.

    >>> percentile_interval(list(range(1, 1001)), 50.0)
    (469.0, 531.0)
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n == 0:
        return None
    q = percentile / 100.0
    spread = z * math.sqrt(n * q * (1.0 - q))
    lo, hi = int(max(math.floor(n * q - spread), 1)), int(min(math.ceil(n * q + spread), n))
    return float(x[lo - 1]), float(x[hi - 1])


def simulated_requests(percentile: float) -> int:
    """Requests simulated per run for an SLO at ``percentile`` [%] [1]: :data:`TAIL_SAMPLES` measured requests
    beyond it (the warm-up tenth not measured), between :data:`MIN_REQUESTS` and :data:`MAX_REQUESTS`.

    Parameters
    ----------
    percentile : float
        The SLO's percentile [%], e.g. 99: the higher, the more requests are needed to see its tail.

    Returns
    -------
    int
        Requests to simulate [1].

    >>> simulated_requests(99.0), simulated_requests(90.0)
    (667, 200)
    """
    tail = max(1.0 - percentile / 100.0, 1e-4)
    return int(min(max(math.ceil(TAIL_SAMPLES / tail / (1.0 - WARMUP_SHARE)), MIN_REQUESTS), MAX_REQUESTS))


class LatencyPercentiles(Protocol):
    """What an SLO is checked against: a simulated run, or a disaggregated split's combined latencies."""

    @property
    def complete(self) -> bool:
        """Whether every request finished."""

    def percentile(self, name: str, q: float) -> float:
        """The ``q``-th percentile of the ``name`` latencies.

        Parameters
        ----------
        name : str
            ``"ttft"``, ``"tpot"`` or ``"e2e"``.
        q : float
            Percentile [%].

        Returns
        -------
        float
            Seconds [s]; inf where the run did not finish or measured nothing.
        """


@dataclass(frozen=True)
class Slo:
    """Latency limits [s] (None: no limit) at a percentile [%]."""

    ttft: float | None = None
    tpot: float | None = None
    e2e: float | None = None
    percentile: float = 99.0

    @property
    def any(self) -> bool:
        """Whether any limit is set (without one, the saturated throughput is the capacity)."""
        return any(v is not None for v in (self.ttft, self.tpot, self.e2e))

    def met(self, result: LatencyPercentiles) -> bool:
        """Whether every limit holds at the percentile (an unfinished run meets none).

        Parameters
        ----------
        result : LatencyPercentiles
            A simulated run (or a disaggregated split), with its latencies [s] per request.

        Returns
        -------
        bool
            True where the run finished and each set limit holds at :attr:`percentile`.
        """
        if not result.complete:
            return False
        q = self.percentile
        return all(limit is None or result.percentile(name, q) <= limit
                   for name, limit in (("ttft", self.ttft), ("tpot", self.tpot), ("e2e", self.e2e)))


SATURATED_ROUNDS = 4  # requests per user in the saturated run: the middle of the run is steady


def saturated(replica: Replica, lengths: Lengths, requests: int, seed: int = 0,
              rounds: int = SATURATED_ROUNDS) -> SimulationResult:
    """The replica kept full: a closed loop of more users than its batch slots, no think time; its
    ``steady_*`` figures are the saturated throughput (the start and the drain left out).

    Parameters
    ----------
    replica : Replica
        The deployment of one replica.
    lengths : Lengths
        Request lengths [tokens].
    requests : int
        Requests to simulate at least [1].
    seed : int
        Seed of the random lengths and arrivals [1].
    rounds : int
        Requests per user at least [1], so the middle of the run is steady.

    Returns
    -------
    SimulationResult
        The run; its ``steady_*`` figures are the replica's saturated throughput.
    """
    users = int(replica.max_batch * 1.25) + 1
    return simulate(replica, Load(users=users), lengths, requests=max(requests, rounds * users), seed=seed)


def max_rate(replica: Replica, lengths: Lengths, slo: Slo, requests: int = 600, seed: int = 0,
             steps: int = SEARCH_STEPS, full: SimulationResult | None = None) -> tuple[float, SimulationResult]:
    """The largest Poisson rate [1/s] one replica serves within ``slo``, and its saturated run.

    Parameters
    ----------
    replica : Replica
        The deployment of one replica.
    lengths : Lengths
        Request lengths [tokens].
    slo : Slo
        Limits [s] at a percentile [%]; without any, the saturated throughput is the capacity.
    requests : int
        Requests per simulation [1].
    seed : int
        Seed of the random lengths and arrivals [1].
    steps : int
        Bisection halvings of the rate [1] (:data:`SEARCH_STEPS`: within 0.4 % of the saturated throughput).
    full : SimulationResult or None
        The saturated run, where already simulated (None: simulate it).

    Returns
    -------
    tuple of float and SimulationResult
        The rate [1/s] (0: not even a lone request meets the SLOs; never above the saturated
        throughput for the same lengths) and the saturated run.

    References
    ----------
    docs/references.md [agrawal2024vidur].
    """
    full = full or saturated(replica, lengths, requests, seed)
    top = full.steady_request_rate
    if top <= 0 or not slo.any:
        return top, full
    # never above the saturated throughput: a Poisson stream at that rate already queues without bound
    lo, hi = 0.0, top
    if not slo.met(simulate(replica, Load(rate=top * 1e-3), lengths, min(requests, 100), seed)):  # lone requests
        return 0.0, full
    lo = top * 1e-3
    for _ in range(steps):
        mid = (lo + hi) / 2
        if slo.met(simulate(replica, Load(rate=mid), lengths, requests, seed)):
            lo = mid
        else:
            hi = mid
    return lo, full


def max_users(replica: Replica, lengths: Lengths, slo: Slo, think_time: float, requests: int = 600,
              seed: int = 0) -> int:
    """The most closed-loop users [1] one replica serves within ``slo`` (at least 0), by doubling then bisection.

    Parameters
    ----------
    replica : Replica
        The deployment of one replica.
    lengths : Lengths
        Request lengths [tokens].
    slo : Slo
        Limits [s] at a percentile [%].
    think_time : float
        Each user's pause between an answer and the next request [s].
    requests : int
        Requests per simulation at least [1] (three per user where more).
    seed : int
        Seed of the random lengths [1].

    Returns
    -------
    int
        Users [1]; 0 where even one user misses the SLOs.
    """
    def ok(users: int) -> bool:
        return slo.met(simulate(replica, Load(users=users, think_time=think_time), lengths,
                                max(requests, 3 * users), seed))
    if not ok(1):
        return 0
    lo, hi = 1, 2
    while hi <= 4 * replica.max_batch and ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


@dataclass(frozen=True)
class LoadAnswer:
    """A load served by ``replicas`` replicas: one replica's simulation at its share of the load."""

    run: SimulationResult  # one replica at rate / replicas (or users / replicas)
    replicas: int | None  # None: no number of replicas tried meets the SLOs (never a count that misses them)
    max_request_rate: float  # per replica [1/s]
    max_users: int | None  # per replica, for a closed loop
    slo_met: bool
    utilisation: float  # the load over what the replicas sustain
    saturated_output_tokens_per_s: float  # per replica


def serve_load(replica: Replica, load: Load, lengths: Lengths, slo: Slo, requests: int | None = None, seed: int = 0,
               full: SimulationResult | None = None, replicas: int | None = None,
               steps: int = SEARCH_STEPS, max_utilisation: float = 1.0) -> LoadAnswer:
    """Replicas for ``load`` within ``slo``, and the latency each replica sees at its share.

    Parameters
    ----------
    replica : Replica
        One replica.
    load : Load
        Total request rate [1/s] or users [1].
    lengths : Lengths
        Request lengths [tokens].
    slo : Slo
        Limits [s] at a percentile [%].
    requests : int or None
        Requests per simulation [1] (None: :func:`simulated_requests` for the SLO's percentile).
    seed : int
        Seed of the random lengths and arrivals [1].
    full : SimulationResult or None
        The replica's saturated run, where already simulated (None: simulate it).
    replicas : int or None
        A fixed number of replicas [1] to spread the load over (None: search the fewest that meet the SLOs).
    steps : int
        Bisection halvings of the per-replica rate [1].
    max_utilisation : float
        Most share of the capacity the load may use when replicas are searched [1] (headroom:
        :mod:`sizer.serving.production`); 1 sizes to the capacity itself.

    Returns
    -------
    LoadAnswer
        Replicas [1] (``replicas`` if given: the load spread over that many, whether or not they
        meet the SLOs), capacity per replica [1/s], utilisation [1] and the simulated run.

    References
    ----------
    docs/references.md [agrawal2024vidur].
    """
    requests = requests or simulated_requests(slo.percentile)
    rate_cap, full = max_rate(replica, lengths, slo, requests, seed, steps=steps, full=full)
    users = load.users or 0  # a Load without a rate is a closed loop of users
    if full.kv_capacity <= 0:  # the cache holds not one request: no number of replicas serves anything
        run = simulate(replica, load if load.rate is not None else Load(users=load.users), lengths, MIN_REQUESTS, seed)
        return LoadAnswer(run, None, 0.0, 0 if load.users else None, False, math.inf, 0.0)
    if replicas is not None:  # a fixed number of replicas: the latency they give at this load
        share = (Load(rate=load.rate / replicas) if load.rate is not None else
                 Load(users=math.ceil(users / replicas), think_time=load.think_time))
        run = simulate(replica, share, lengths, requests if share.rate else max(requests, 3 * (share.users or 0)), seed)
        met = slo.met(run) if slo.any else run.complete
        util = (load.rate / (replicas * rate_cap) if load.rate is not None and rate_cap > 0 else
                run.request_rate / rate_cap if rate_cap > 0 else math.inf)
        return LoadAnswer(run, replicas, rate_cap, None, met, util, full.steady_output_tokens_per_s)
    if load.rate is not None:
        if rate_cap <= 0:
            run = simulate(replica, Load(rate=load.rate), lengths, requests, seed)
            return LoadAnswer(run, None, 0.0, None, False, math.inf, full.steady_output_tokens_per_s)
        replicas = min(max(1, math.ceil(load.rate / (rate_cap * max_utilisation) - 1e-9)), MAX_REPLICAS)
        # a count whose own run misses the SLOs (the share's arrivals are not the bisection's) gets one more, a few times
        for _ in range(MISSED_SLO_TRIES):
            run = simulate(replica, Load(rate=load.rate / replicas), lengths, requests, seed)
            met = slo.met(run) if slo.any else run.complete
            if met or replicas >= MAX_REPLICAS:
                break
            replicas += 1
        return LoadAnswer(run, replicas if met else None, rate_cap, None, met, load.rate / (replicas * rate_cap),
                          full.steady_output_tokens_per_s)
    users_cap = (max_users(replica, lengths, slo, load.think_time, requests, seed) if slo.any
                 else replica.max_batch)
    if users_cap <= 0:
        run = simulate(replica, load, lengths, max(requests, 3 * users), seed)
        return LoadAnswer(run, None, rate_cap, 0, False, math.inf, full.steady_output_tokens_per_s)
    replicas = min(max(1, math.ceil(users / (users_cap * max_utilisation) - 1e-9)), MAX_REPLICAS)
    for _ in range(MISSED_SLO_TRIES):
        users_share = math.ceil(users / replicas)
        run = simulate(replica, Load(users=users_share, think_time=load.think_time), lengths,
                       max(requests, 3 * users_share), seed)
        met = slo.met(run) if slo.any else run.complete
        if met or replicas >= MAX_REPLICAS:
            break
        replicas += 1
    return LoadAnswer(run, replicas if met else None, rate_cap, users_cap, met, users / (replicas * users_cap),
                      full.steady_output_tokens_per_s)
