"""Ranges on the figures of a serving answer under load, from the cross-source spread (issue 38, item 6).

Every figure an answer under load gives -- time to first token and per output token at p50/p90/p99, end to end,
output tokens/s, the capacity (largest request rate) and the cost per million tokens -- carries a low-high range:
the predicted figure times the factors ``serving_ranges.yaml`` states for its metric and load group. The factors are
the central 90 % (92 % for tokens/s) of measured / predicted over independent sources (each source weighted equally),
fitted and judged leave-one-source-out by ``benchmarks/serving_ranges.py`` on ``shared/data/serving-tails.csv``.

What an answer knows picks the group: a closed loop of users (a serial run is one user), a burst of prompts at
t = 0, or a Poisson rate in a band of utilisation (rate over the saturated capacity): light, near saturation,
overloaded. Figures the file does not measure (capacity, end to end, cost) follow from measured ones, as
:func:`for_load` and :func:`e2e_bounds` say.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sizer.datafile import load_yaml
from sizer.memo import registered_cache
from sizer.results import Assumption
from sizer.schemas.serving import PercentileBounds, RangedQuantityOut
from sizer.simulator.traffic import Load

RANGES_FILE = Path(__file__).with_name("serving_ranges.yaml")
BANDS = (0.7, 1.0)  # utilisation bounds of a rate's bands: light below 0.7, near saturation up to 1, overloaded above
GROUPS = ("closed", "burst", "rate_light", "rate_near", "rate_over")
GROUP_WORDS = {"closed": "a closed loop of users", "burst": "a burst of prompts at t = 0",
               "rate_light": f"a rate below {BANDS[0]:g} of capacity", "rate_near": f"a rate at {BANDS[0]:g}-{BANDS[1]:g} "
               "of capacity (near saturation)", "rate_over": "a rate above capacity (overloaded)"}
SATURATED = ("output_tokens_per_s", "burst")  # every prompt in flight: the throughput measured is the saturated one


def load_group(kind: str, utilisation: float) -> str:
    """The load group a range is taken from.

    Parameters
    ----------
    kind : str
        ``"rate"`` (Poisson), ``"burst"`` (every prompt at t = 0), ``"users"`` or ``"serial"`` (a closed loop).
    utilisation : float
        Rate over the replicas' saturated request rate [1] (used for a rate only).

    Returns
    -------
    str
        One of :data:`GROUPS`.

    >>> load_group("rate", 0.5), load_group("rate", 0.9), load_group("rate", 3.0), load_group("serial", 0.1)
    ('rate_light', 'rate_near', 'rate_over', 'closed')
    """
    if kind == "burst":
        return "burst"
    if kind != "rate":
        return "closed"
    return "rate_light" if utilisation < BANDS[0] else "rate_near" if utilisation <= BANDS[1] else "rate_over"


@registered_cache()
def _table() -> dict[str, Any]:
    table: dict[str, Any] = load_yaml(RANGES_FILE, "serving_ranges")
    return table


def factors(metric: str, group: str) -> tuple[float, float]:
    """The low and high factors [1] of a scored metric in a load group (``serving_ranges.yaml``).

    Parameters
    ----------
    metric : str
        ``output_tokens_per_s``, ``ttft_p50``/``p90``/``p99`` or ``tpot_p50``/``p90``/``p99``.
    group : str
        One of :data:`GROUPS`.

    Returns
    -------
    tuple of (float, float)
        Low <= 1 <= high: the predicted figure times these bound its range.
    """
    entry = _table()["metrics"][metric][group]
    return float(entry["low"]), float(entry["high"])


def source() -> str:
    """Where the factors come from: the data file, the date and the method.

    Returns
    -------
    str
        The source and method of ``serving_ranges.yaml``, in words.
    """
    table = _table()
    return f"{table['source']}; {table['method']}"


@dataclass(frozen=True)
class FigureRanges:
    """Low and high factors [1] of each figure of one answer under load."""

    group: str
    ttft: dict[str, tuple[float, float]]  # by percentile name: p50, p90, p99
    tpot: dict[str, tuple[float, float]]
    throughput: tuple[float, float]  # output (and prompt-plus-output) tokens/s
    capacity: tuple[float, float]  # the largest request rate per replica


def for_load(load: Load, utilisation: float) -> FigureRanges:
    """The factors of every figure of an answer under ``load`` at ``utilisation``.

    Figures the data scores: TTFT and TPOT p50, p90 and p99, output tokens/s. The others: the capacity takes the
    saturated throughput's (a burst keeps every slot busy); under a rate the replicas keep up with, the output is the
    rate times the lengths unless the capacity is lower: low = min(1, capacity low / utilisation), high = 1. End to
    end is bounded by :func:`e2e_bounds` from its two parts.

    Parameters
    ----------
    load : Load
        The load asked: rate, users (a closed loop) or a burst.
    utilisation : float
        The load over the replicas' saturated capacity [1] (``capacity.utilisation``); infinite where nothing is served.

    Returns
    -------
    FigureRanges
        Low and high factors [1] of each figure.
    """
    kind = "burst" if load.burst else "rate" if load.rate is not None else "users"
    util = utilisation if math.isfinite(utilisation) else math.inf  # nothing served (inf or nan): overloaded
    group = load_group(kind, util)
    ttft = {p: factors(f"ttft_{p}", group) for p in ("p50", "p90", "p99")}
    tpot = {p: factors(f"tpot_{p}", group) for p in ("p50", "p90", "p99")}
    capacity = factors(*SATURATED)
    if kind == "rate" and util <= 1.0:
        throughput = (min(1.0, capacity[0] / util) if util > 0 else 1.0, 1.0)
    elif kind == "rate":
        throughput = capacity
    else:
        throughput = factors("output_tokens_per_s", group)
    return FigureRanges(group=group, ttft=ttft, tpot=tpot, throughput=throughput, capacity=capacity)


def ranged(value: float, unit: str, bounds: tuple[float, float]) -> RangedQuantityOut:
    """``value`` [unit] with its range ``value * bounds``.

    Parameters
    ----------
    value : float
        The figure [unit].
    unit : str
        Its unit.
    bounds : tuple of (float, float)
        Low and high factors [1].

    Returns
    -------
    RangedQuantityOut
        The figure and its low and high [unit].
    """
    return RangedQuantityOut(value=value, unit=unit, low=value * bounds[0], high=value * bounds[1])


def spread_of(figure: RangedQuantityOut) -> dict[str, float]:
    """A ranged figure's low and high factors [1] (``{"low", "high"}``, as a cost's range takes them).

    Parameters
    ----------
    figure : RangedQuantityOut
        A figure with its range; without one, or at 0, the factors are 1.

    Returns
    -------
    dict
        ``low`` and ``high`` [1].
    """
    if figure.low is None or figure.high is None or not figure.value > 0:
        return {"low": 1.0, "high": 1.0}
    return {"low": figure.low / figure.value, "high": figure.high / figure.value}


def e2e_bounds(e2e: Any, ttft: Any, ranges: FigureRanges) -> tuple[PercentileBounds, PercentileBounds]:
    """The range of each end-to-end percentile from its two parts: the time to first token at that percentile in its
    range, plus the rest (the decode, end to end less that TTFT, at least 0) in the TPOT's range.

    Parameters
    ----------
    e2e : Percentiles-like
        End-to-end ``p50``, ``p90``, ``p99`` [s].
    ttft : Percentiles-like
        Time to first token at the same percentiles, in the same unit [s].
    ranges : FigureRanges
        The answer's factors.

    Returns
    -------
    tuple of PercentileBounds
        The low and high ends [s].
    """
    ends: list[dict[str, float]] = [{}, {}]
    for p in ("p50", "p90", "p99"):
        first = min(float(getattr(ttft, p)), float(getattr(e2e, p)))
        rest = float(getattr(e2e, p)) - first
        for end in (0, 1):
            ends[end][p] = first * ranges.ttft[p][end] + rest * ranges.tpot[p][end]
    return PercentileBounds(**ends[0]), PercentileBounds(**ends[1])


def percentile_bounds(values: Any, bounds: dict[str, tuple[float, float]]) -> tuple[PercentileBounds, PercentileBounds]:
    """The low and high ends of a set of percentiles (an object with ``p50``, ``p90``, ``p99``) under ``bounds``.

    Parameters
    ----------
    values : object
        Its ``p50``, ``p90`` and ``p99`` [any unit].
    bounds : dict
        Per percentile name, the (low, high) factors [1].

    Returns
    -------
    tuple of PercentileBounds
        The low ends and the high ends [the values' unit].
    """
    low = PercentileBounds(**{p: float(getattr(values, p)) * bounds[p][0] for p in ("p50", "p90", "p99")})
    high = PercentileBounds(**{p: float(getattr(values, p)) * bounds[p][1] for p in ("p50", "p90", "p99")})
    return low, high


def assumption(ranges: FigureRanges) -> Assumption:
    """What the ranges of an answer under load are, in words, with their source.

    Parameters
    ----------
    ranges : FigureRanges
        The factors of the answer's figures.

    Returns
    -------
    Assumption
        The load group and the factors of TTFT p99, TPOT p99 and output tokens/s.
    """
    t99, tpot, out = ranges.ttft["p99"], ranges.tpot["p99"], ranges.throughput
    return Assumption(name="serving ranges", value=(
        f"low-high of every figure under load: the spread of measured / predicted across independent sources for "
        f"{GROUP_WORDS[ranges.group]}: TTFT p99 x {t99[0]:.2g}-{t99[1]:.3g}, TPOT p99 x {tpot[0]:.2g}-{tpot[1]:.3g}, "
        f"output tokens/s x {out[0]:.2g}-{out[1]:.3g}; about 8 in 10 held-out sources' points fall inside"),
        source=source(), verified=False)
