"""How `sizer recommend --inference` orders what its searches found: the sort key of a deployment by
the objective (cost, latency or throughput), the rule that keeps one 8-bit format per device, and the
largest serving batch per devices-per-replica count. Shared by the offline ranking
(:mod:`sizer.serving.recommend_devices`) and the search under load (:mod:`sizer.serving.load_search`).

By cost, one price basis per ranked column: rents first, then amortised purchases, and deployments
without a price last.

>>> offline_key(Objective.COST, per_million=0.5, basis="rent", count=2, end_to_end=1.0, total_tokens_per_s=100.0)
(False, False, 0.5, 2)
>>> sorted([offline_key(Objective.COST, None, None, 1, 1.0, 1.0), offline_key(Objective.COST, 2.0, "buy", 1, 1.0, 1.0),
...         offline_key(Objective.COST, 9.0, "rent", 1, 1.0, 1.0)])[0][2]
9.0
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sizer.choices import ServingObjective as Objective

# A sort key: smaller is better. bool and int entries compare as numbers (False before True).
SortKey = tuple[float, ...]
# What a cost key is priced from: (device index, devices per replica) -> (USD per device-hour or None, price basis
# or None, the price used or None), as :func:`sizer.serving.under_load.serving_prices` returns
PriceLookup = Callable[[int, int], tuple[Any, ...]]

# 8-bit formats in order of preference: FP8 where the device has its peak, else SmoothQuant int8
EIGHT_BIT = ("fp8", "w8a8")


def offline_key(objective: Objective, per_million: float | None, basis: str | None, count: float, end_to_end: float,
                total_tokens_per_s: float) -> SortKey:
    """The sort key of one offline deployment (one replica of ``count`` devices at its batch).

    Parameters
    ----------
    objective : ServingObjective
        ``cost`` (cost per million output tokens), ``latency`` (one request's end-to-end time) or
        ``throughput`` (output tokens/s per device).
    per_million : float or None
        Cost per million output tokens [USD]; None where no price is known.
    basis : str or None
        The price's basis: ``rent`` or ``buy`` (an amortised purchase).
    count : float
        Devices per replica [1].
    end_to_end : float
        One request's time to first token plus its other output tokens [s].
    total_tokens_per_s : float
        Output tokens over all sequences of the batch [1/s].

    Returns
    -------
    tuple
        Smaller is better; ties go to fewer devices.
    """
    if objective == Objective.COST:
        return (per_million is None, basis == "buy", per_million or 0.0, count)
    if objective == Objective.LATENCY:
        return (end_to_end, count)
    return (-float(total_tokens_per_s / count), count)


def load_key(objective: Objective, hourly: float | None, count: int, replicas: int, per_million: float | None,
             end_to_end: float, rate_per_replica: float, basis: str | None = None) -> SortKey:
    """The sort key of one deployment under load: ``replicas`` replicas of ``count`` devices.

    Parameters
    ----------
    objective : ServingObjective
        ``cost``, ``latency`` or ``throughput`` (as :func:`offline_key`).
    hourly : float or None
        Price per device-hour [USD/hour]; None where unknown.
    count : int
        Devices per replica [1].
    replicas : int
        Replicas [1].
    per_million : float or None
        Cost per million output tokens [USD]; None where no price is known.
    end_to_end : float
        End-to-end latency at the SLO percentile [ms].
    rate_per_replica : float
        Requests per second one replica serves [1/s].
    basis : str or None
        The price's basis: ``rent`` or ``buy``.

    Returns
    -------
    tuple
        Smaller is better; ties go to fewer devices in all.
    """
    devices = count * replicas
    if objective == Objective.COST:
        return (per_million is None, basis == "buy", per_million or 0.0, hourly is None, devices)
    if objective == Objective.LATENCY:
        return (end_to_end, devices)
    return (-rate_per_replica / count, devices)


def preferred_eight_bit(usable: Iterable[str]) -> str | None:
    """The 8-bit format a device is offered in: the first of :data:`EIGHT_BIT` among the formats that serve on it.

    Parameters
    ----------
    usable : iterable of str
        Names of the weight formats that serve on the device.

    Returns
    -------
    str or None
        ``fp8``, else ``w8a8``, else None where neither serves.
    """
    names = set(usable)
    return next((name for name in EIGHT_BIT if name in names), None)


def keeps_format(name: str, eight_bit: str | None) -> bool:
    """Whether a weight format stays in a device's search: every format but the 8-bit one not preferred.

    Parameters
    ----------
    name : str
        The weight format's name.
    eight_bit : str or None
        The device's preferred 8-bit format (:func:`preferred_eight_bit`).

    Returns
    -------
    bool
    """
    return name not in EIGHT_BIT or name == eight_bit


def largest_batch_per_count(rows: Sequence[int] | npt.NDArray[np.int64], counts: npt.NDArray[np.float64],
                            batches: npt.NDArray[np.float64]) -> list[int]:
    """Per devices-per-replica count, the row with the largest batch (the first such row on a tie).

    Total tokens/s never falls with the batch, so the largest batch that serves is the one to offer.

    Parameters
    ----------
    rows : sequence of int
        Indices of the configurations that serve [1], in search order.
    counts : ndarray
        Devices per replica of every configuration [1].
    batches : ndarray
        Concurrent sequences of every configuration [1].

    Returns
    -------
    list of int
        One row per count, counts in the order they first appear in ``rows``.
    """
    best: dict[float, int] = {}
    for r in rows:
        c = counts[r]
        if c not in best or batches[r] > batches[best[c]]:
            best[c] = int(r)
    return list(best.values())
