"""Disaggregated serving (DistServe, Splitwise): prompts on a pool of prefill replicas, answers on a
pool of decode replicas, the prompt's KV cache sent from one to the other.

Each pool is the same replica (device, format, devices per replica) simulated for its phase
(:attr:`sizer.simulator.simulate.Replica.phase`): a prefill replica runs prompts only, so no decode
iteration waits behind a long prompt and no prompt behind a full batch; a decode replica receives
the prompt's cache whole and never prefills. The time to first token is the prefill replica's
plus the transfer plus the decode replica's admission wait, request by request (both pools serve
the same requests, the same draws):

.. math:: \\mathrm{TTFT} = \\mathrm{TTFT}_{prefill} + t_{KV} + \\mathrm{wait}_{decode},\\qquad
          t_{KV} = s \\cdot b_{KV} / (n \\cdot \\beta)

for a prompt of ``s`` tokens of ``b_KV`` cache bytes per token sent by the replica's ``n`` devices,
each at ``β``: the node's link where a prefill and a decode replica fit one node together, the
network between nodes otherwise. Capacities are bisected per pool: the prefill pool within
:data:`PREFILL_TTFT_SHARE` of the TTFT limit left after the transfer, the decode pool within the
rest and the TPOT limit; the pools' replicas are then grown, side by side, until the combined
percentiles hold.

References
----------
docs/references.md [zhong2024distserve], [patel2024splitwise].
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from sizer.serving.capacity import Slo, max_rate
from sizer.simulator.metrics import SimulationResult
from sizer.simulator.simulate import Replica, device_kv_bytes_per_token, simulate
from sizer.simulator.traffic import Lengths, Load

PREFILL_TTFT_SHARE = 0.9  # of the TTFT limit (less the transfer) the prefill pool is sized within; the rest: decode admission
GROWTH_TRIES = 4  # replicas added to the pool that misses, after the bisected sizes


@dataclass(frozen=True)
class SplitAnswer:
    """Prefill and decode pools for a rate, and the latency a request sees across them [s]."""

    prefill_replicas: int
    decode_replicas: int
    transfer: float  # s per request at the mean prompt
    prefill_rate: float  # per prefill replica, within its share of the TTFT [1/s]
    decode_rate: float  # per decode replica, within the TPOT limit [1/s]
    ttft: np.ndarray
    tpot: np.ndarray
    e2e: np.ndarray
    decode_run: SimulationResult  # one decode replica at its share: output tokens, memory
    complete: bool  # both pools finished every request
    slo_met: bool = False

    def percentile(self, name: str, q: float) -> float:
        """The ``q``-th percentile of the combined ``name`` latencies across both pools; inf without any.

        Parameters
        ----------
        name : str
            ``"ttft"``, ``"tpot"`` or ``"e2e"``.
        q : float
            Percentile [%].

        Returns
        -------
        float
            Seconds [s].
        """
        values = getattr(self, name)
        return float(np.percentile(values, q)) if len(values) else math.inf


def kv_transfer_seconds(replica: Replica, prompt: float) -> float:
    """Seconds to send a ``prompt``-token KV cache from a prefill to a decode replica: each of its
    devices sends its share, over the node link where two replicas fit a node, else the network.

    Parameters
    ----------
    replica : Replica
        A replica of either pool (the same devices and split send and receive).
    prompt : float
        Prompt tokens whose KV cache is sent [tokens].

    Returns
    -------
    float
        Seconds [s]: the bytes over the link's bandwidth plus its latency.
    """
    table, d = replica.table, replica.device
    per_device = prompt * device_kv_bytes_per_token(replica, prompt)
    inside = 2 * replica.count <= table.devices_per_node[d]
    bandwidth, latency = ((table.link[d], table.link_latency[d]) if inside else (table.network[d], table.network_latency[d]))
    return float(per_device / bandwidth + latency)


def _combined(prefill: SimulationResult, decode: SimulationResult,
              transfer: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per request across the pools (both ran the same requests in the same order)."""
    n = min(len(prefill.ttft), len(decode.ttft))
    ttft = prefill.ttft[:n] + transfer + decode.ttft[:n]
    e2e = prefill.ttft[:n] + transfer + decode.e2e[:n]
    return ttft, decode.tpot, e2e


def serve_disaggregated(replica: Replica, load: Load, lengths: Lengths, slo: Slo, requests: int = 600,
                        steps: int = 6, seed: int = 0) -> SplitAnswer | None:
    """The prefill and decode replicas a Poisson ``load`` needs within ``slo``, and their latency.

    Parameters
    ----------
    replica : Replica
        One replica of either pool (device, formats, devices per replica, scheduler limits).
    load : Load
        A request rate [1/s] (a closed loop is not split).
    lengths : Lengths
        Request lengths [tokens].
    slo : Slo
        Limits [s] at a percentile [%].
    requests : int
        Requests per simulation [1].
    steps : int
        Bisection halvings of each pool's rate [1].
    seed : int
        Seed of the random lengths and arrivals [1].

    Returns
    -------
    SplitAnswer or None
        None where no pool sizes meet the SLOs (the transfer alone past the TTFT limit, or a pool
        that serves not even lone requests within its share).

    References
    ----------
    docs/references.md [zhong2024distserve], [patel2024splitwise].
    """
    rate = load.rate
    assert rate is not None, "a closed loop is not split"  # callers split only a Poisson rate
    prefill = dataclasses.replace(replica, phase="prefill")
    decode = dataclasses.replace(replica, phase="decode")
    transfer = kv_transfer_seconds(replica, lengths.mean()[0])
    budget = None if slo.ttft is None else slo.ttft - transfer
    if budget is not None and budget <= 0:
        return None
    prefill_slo = Slo(ttft=None if budget is None else budget * PREFILL_TTFT_SHARE, percentile=slo.percentile)
    decode_slo = Slo(ttft=None if budget is None else budget * (1 - PREFILL_TTFT_SHARE), tpot=slo.tpot,
                     percentile=slo.percentile)
    p_rate, _ = max_rate(prefill, lengths, prefill_slo, requests, seed, steps=steps)
    d_rate, _ = max_rate(decode, lengths, decode_slo, requests, seed, steps=steps)
    if p_rate <= 0 or d_rate <= 0:
        return None
    p, d = (max(1, math.ceil(rate / r - 1e-9)) for r in (p_rate, d_rate))
    for _ in range(GROWTH_TRIES + 1):
        p_run = simulate(prefill, Load(rate=rate / p), lengths, requests, seed)
        d_run = simulate(decode, Load(rate=rate / d), lengths, requests, seed)
        answer = SplitAnswer(p, d, transfer, p_rate, d_rate, *_combined(p_run, d_run, transfer), d_run,
                             p_run.complete and d_run.complete)
        if slo.met(answer):
            return dataclasses.replace(answer, slo_met=True)
        # the prefill pool grows where it missed its share of the time to first token, else the decode pool
        prefill_side = (p_run.percentile("ttft", slo.percentile) > (prefill_slo.ttft or math.inf)
                        or not p_run.complete)
        if prefill_side:
            p += max(1, p // 4)
        else:
            d += max(1, d // 4)
    return None
