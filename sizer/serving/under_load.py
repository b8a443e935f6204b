"""The serving-under-traffic part of `sizer inference` and `/v1/inference` (issue 16): the request's
load, lengths and SLO fields, their parsing at the boundary, and the JSON sections they add
(``load``, ``latency``, ``capacity``, ``output_tokens_per_s``, ``cost_per_million_tokens``)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypedDict, cast

import numpy as np

from sizer.choices import KvCache, Split
from sizer.errors import InputError
from sizer.formulas.tco import Pricing, hourly_price, price_used
from sizer.hardware.schema import Device
from sizer.results import Assumption, PriceBasis, QuantityOut, unit_factor
from sizer.runtimes.formats import WeightFormat
from sizer.runtimes.runtime import Purpose, Runtime
from sizer.schemas.serving import CapacityOut, LatencyOut, LengthOut, LoadOut, Percentiles, RangedQuantityOut, ServingCostOut
from sizer.schemas.serving_requests import LONGEST, LoadFields, ServedModel, TimeField
from sizer.serving.capacity import TAIL_SAMPLES, LoadAnswer, Slo, percentile_interval
from sizer.serving.serving_ranges import FigureRanges, e2e_bounds, percentile_bounds
from sizer.simulator.benchmark_lengths import random_dataset
from sizer.simulator.metrics import SimulationResult
from sizer.simulator.traffic import Lengths, Load, arrivals_label, parse_trace

# (USD per device-hour or None, its basis or None, the price used (sizer.formulas.tco.PriceUsed's fields) or None)
Price = tuple[float | None, PriceBasis | None, dict[str, Any] | None]


class RuntimeMemory(TypedDict, total=False):
    """The memory shares a serving runtime takes, as keyword arguments of ServingCase [1]."""

    memory_share: float
    kv_free_share: float




def serving_runtime(request: LoadFields) -> Runtime:
    """The serving runtime a request names (default vLLM), refused naming the field when it is not one.

    Parameters
    ----------
    request : LoadFields
        Its ``runtime`` (the entry, or None for vLLM).

    Returns
    -------
    Runtime
        The runtime's description; InputError naming ``runtime`` for a local runtime (llama.cpp, MLX).
    """
    from sizer.runtimes import Purpose, runtime
    from sizer.runtimes.serving_runtimes import DEFAULT_SERVING_RUNTIME

    entry: Runtime = getattr(request, "runtime", None) or runtime(DEFAULT_SERVING_RUNTIME)
    if entry.purpose is not Purpose.SERVING:
        raise InputError("runtime", entry.name, "a serving runtime under load (vllm, sglang or tensorrt-llm); "
                                                f"{entry.name} serves one user on a desk")
    return entry


def runtime_refusal(entry: Runtime, weights: WeightFormat, device: Device, kv_cache: str | None = None) -> str | None:
    """Why ``entry`` cannot serve ``weights`` (and a ``kv_cache`` KV cache) on ``device`` (kind, format, the device
    generation's kernels: sizer/runtimes/precision_support.py), or None.

    Parameters
    ----------
    entry : Runtime
        The runtime.
    weights : WeightFormat
        The weight format asked.
    device : Device
        The catalog device.
    kv_cache : str, optional
        The KV-cache type asked (None: not checked).

    Returns
    -------
    str or None
        The reason in words, or None where it runs.
    """
    from sizer.runtimes.serving_runtimes import format_refusal, kv_refusal

    why = device_refusal(entry, device) or format_refusal(entry, weights.name, device.architecture)
    if why is None and kv_cache is not None and entry.purpose is Purpose.SERVING:
        why = kv_refusal(entry, KvCache(kv_cache), device.architecture)
    return why


def searched_refusal(request: LoadFields, weights: WeightFormat, device: Device,
                     kv_cache: str | None = None) -> str | None:
    """Why a ranking without load may not pick ``weights`` on ``device``: the serving runtime named cannot run it
    there (its device kinds, vendor, formats and kernels); with none named, a 4-bit integer format on a device
    generation no serving engine has its kernels for (AWQ on a V100). A local runtime named refuses nothing here.

    Parameters
    ----------
    request : LoadFields
        Its ``runtime`` (None: not named).
    weights : WeightFormat
        The weight format searched or pinned.
    device : Device
        The catalog device.
    kv_cache : str, optional
        The KV-cache type searched or pinned (checked against the named serving runtime's support matrix).

    Returns
    -------
    str or None
        The reason in words, or None where the pick is deployable.
    """
    from sizer.runtimes import Purpose, runtime
    from sizer.runtimes.precision_support import no_engine_runs
    from sizer.runtimes.serving_runtimes import DEFAULT_SERVING_RUNTIME, FOUR_BIT_INT, format_refusal

    entry: Runtime | None = getattr(request, "runtime", None)
    if entry is None:  # no engine named: what none of them runs on the device's generation (NVFP4 on a V100)
        if weights.name in FOUR_BIT_INT or no_engine_runs(weights.name, device.architecture):
            return format_refusal(runtime(DEFAULT_SERVING_RUNTIME), weights.name, device.architecture)
        return None
    return runtime_refusal(entry, weights, device, kv_cache) if entry.purpose is Purpose.SERVING else None


def named_serving_runtime(request: LoadFields) -> list[Assumption]:
    """The assumption stating the serving runtime ``request`` names (its memory shares size the answer), or none
    where it names none or a local one.

    Parameters
    ----------
    request : LoadFields
        Its ``runtime``.

    Returns
    -------
    list of Assumption
        One assumption, or none.
    """
    entry: Runtime | None = getattr(request, "runtime", None)
    if entry is None or entry.purpose is not Purpose.SERVING:
        return []
    return [runtime_assumption(entry, given=True)]


def device_refusal(entry: Runtime, device: Device) -> str | None:
    """Why ``entry`` cannot run on ``device`` at all (its kind, Apple silicon counted apart, or its vendor), or None.

    Parameters
    ----------
    entry : Runtime
        The runtime.
    device : Device
        The catalog device.

    Returns
    -------
    str or None
        The reason in words, or None where it runs.
    """
    return entry.refusal(device_kind=device.runtime_kind, vendor=device.vendor)


def check_split(entry: Runtime, split: Split | None) -> None:
    """InputError naming ``split`` where a layer split is asked of a serving runtime without pipeline parallelism
    (a layer split is pipeline parallelism to a serving engine: SGLang 0.3 has none).

    Parameters
    ----------
    entry : Runtime
        The serving runtime.
    split : str or None
        ``"tensor"``, ``"layer"`` or None (not asked).
    """
    if split == Split.LAYER and "pipeline" not in entry.profile.parallelism:
        raise InputError("split", split, f"a split {entry.name} runs: tensor ({entry.name} {entry.profile.version} has no "
                                         "pipeline parallelism, which a layer split is to a serving engine)")


def check_runtime(entry: Runtime, weights: WeightFormat, device: Device, kv_cache: str | None = None) -> None:
    """InputError naming ``device``, ``weights`` or ``kv_cache`` when ``entry`` cannot serve ``weights`` with that
    KV cache on ``device``.

    Parameters
    ----------
    entry : Runtime
        The runtime.
    weights : WeightFormat
        The weight format asked.
    device : Device
        The catalog device.
    kv_cache : str, optional
        The KV-cache type asked (None: not checked).
    """
    if (why := device_refusal(entry, device)) is not None:
        local = "; llama.cpp and MLX run on it, for one user (no rate or users)" if "Apple" in why else ""
        raise InputError("device", device.name, f"a device {entry.name} runs on: {why}{local}")
    why = runtime_refusal(entry, weights, device)
    if why:
        raise InputError("weights", weights.name, f"a format {entry.name} runs on this device: {why}")
    if kv_cache is not None and (why := runtime_refusal(entry, weights, device, kv_cache)):
        raise InputError("kv_cache", kv_cache, f"a KV cache {entry.name} stores on this device: {why}")


def runtime_assumption(entry: Runtime, given: bool, version: str | None = None) -> Assumption:
    """The assumption naming the serving runtime and the defaults the simulation takes from it.

    Parameters
    ----------
    entry : Runtime
        The serving runtime.
    given : bool
        Whether the user named it (else the default is said to be one).
    version : str, optional
        The version the user named: its generation's policy and fitted costs are said
        (:mod:`sizer.runtimes.serving_mechanisms`).

    Returns
    -------
    Assumption
        Its version, scheduler limits, memory shares, admission policy and fitted CPU time per request;
        marked unverified (the defaults are recalled, not read in a data file).
    """
    p = entry.profile
    if version is not None:
        return _generation_assumption(entry, version)
    return Assumption(name="runtime", value=f"{entry.name} {p.version}" + ("" if given else " (the default; --runtime "
                      "sglang or tensorrt-llm for another)") + f": at most {p.max_running} running requests, "
                      f"{p.token_budget} tokens per iteration, {p.memory_share:.0%} of device memory"
                      + (f", {p.kv_free_share:.0%} of the rest to the KV cache" if p.kv_free_share < 1 else "")
                      + ("; each request's whole KV cache reserved at admission" if p.reserve_kv else
                         "; the youngest request preempted when the cache fills")
                      + f"; {p.sequence_overhead * unit_factor('s', 'us'):.0f} us of CPU per running request and iteration "
                        f"(fitted on {p.fitted_on})", source=p.sources + " (defaults recalled, not read in a data file)",
                      verified=False)


def runtime_memory(request: LoadFields, split: Split) -> RuntimeMemory:
    """The memory shares the serving runtime of ``request`` takes (``memory_share``, ``kv_free_share`` of
    :class:`~sizer.passes.arithmetic.ServingCase`); a layer split (llama.cpp) takes every byte.

    Parameters
    ----------
    request : LoadFields
        Its ``runtime`` (None: vLLM).
    split : str
        ``"tensor"`` or ``"layer"``.

    Returns
    -------
    RuntimeMemory
        ``memory_share`` and ``kv_free_share`` [1] as keyword arguments of ServingCase; empty for a layer
        split or a local runtime (every byte).
    """
    entry: Runtime | None = getattr(request, "runtime", None)
    if split != Split.TENSOR or (entry is not None and entry.purpose is not Purpose.SERVING):
        return {}
    p = serving_runtime(request).profile
    return RuntimeMemory(memory_share=p.memory_share, kv_free_share=p.kv_free_share)


def default_split(request: LoadFields, weights: WeightFormat) -> Split:
    """The split asked, else a layer split for GGUF formats (llama.cpp's default) and tensor parallel otherwise.

    Parameters
    ----------
    request : LoadFields
        Its ``split`` (None: by format).
    weights : WeightFormat
        The weight format.

    Returns
    -------
    str
        ``"tensor"`` or ``"layer"``.
    """
    if request.split == Split.ROW:
        from sizer.local.split import ROW_SPLIT_REFUSED
        raise InputError("split", Split.ROW.value, ROW_SPLIT_REFUSED)
    # every GGUF mix sizer.runtimes.gguf models is a GGUF file (its format says so), not a list of three names
    return request.split or (Split.LAYER if weights.gguf_mix is not None else Split.TENSOR)


def _seconds(field: str, raw: TimeField, allow_zero: bool = False) -> float | None:
    if raw is None:
        return None
    s = float(raw.to("s").magnitude)
    if not (0 <= s <= LONGEST):
        raise InputError(field, raw, f"a time from 0 to {LONGEST:g} s")
    return s


# Fields that only a load gives a meaning to (the offline answer serves one fixed batch): without rate or users
# they are refused, never silently ignored.
LOAD_ONLY_FIELDS = ("lengths", "trace", "slo_ttft", "slo_tpot", "slo_e2e", "max_running", "token_budget", "replicas",
                    "prompts", "range_ratio", "runtime_version", "max_utilisation", "tuned")


def refuse_load_options_without_load(request: ServedModel) -> None:
    """InputError naming ``rate`` and the serving-under-load fields given without ``rate`` or ``users``.

    Parameters
    ----------
    request : ServedModel
        The request's load fields.
    """
    if request.rate is not None or request.users is not None or getattr(request, "burst", None) is not None:
        return
    given = [name for name in LOAD_ONLY_FIELDS if getattr(request, name, None) is not None]
    if getattr(request, "prefix_cache_hit", 0.0):
        given.append("prefix_cache_hit")
    if getattr(request, "trace_arrivals", False):
        given.append("trace_arrivals")
    if getattr(request, "slo_percentile", 99.0) != 99.0:
        given.append("slo_percentile")
    if given:
        raise InputError("rate", None, f"rate or users with {', '.join(given)} (they describe traffic: without a "
                                       "load the answer is one fixed batch and they would be ignored)")


def parse_load(request: ServedModel) -> tuple[Load | None, Lengths, Slo]:
    """The load, lengths and SLOs a request asks for, checked and in SI units.

    Parameters
    ----------
    request : ServedModel
        Its rate [1/s] or users [1], think time, lengths (a named set, a trace, or the fixed prompt and
        output lengths [tokens]) and SLO limits [s] at a percentile [%].

    Returns
    -------
    tuple of (Load or None, Lengths, Slo)
        The load (None: no rate or users, the offline answer), the lengths and the limits [s].
    """
    if request.rate is not None and request.users is not None:
        raise InputError("users", request.users, "either rate or users, not both")
    burst = getattr(request, "burst", None)
    if burst is not None and (request.rate is not None or request.users is not None):
        raise InputError("burst", burst, "either a burst (every prompt at t = 0), a rate or users, not two")
    if burst is not None and getattr(request, "prompts", None) not in (None, burst):
        raise InputError("prompts", getattr(request, "prompts", None), f"the burst's own {burst} prompts, or none")
    refuse_load_options_without_load(request)
    think = _seconds("think_time", request.think_time, allow_zero=True) or 0.0
    if think and request.users is None:
        raise InputError("think_time", request.think_time, "users as well (a think time belongs to a closed loop)")
    load = (Load(rate=float(request.rate)) if request.rate is not None else
            Load(users=int(request.users), think_time=think) if request.users is not None else
            Load(users=int(burst), burst=True) if burst is not None else None)
    named = "trace" if request.trace is not None else "lengths" if request.lengths is not None else None
    for fixed in ("prompt_len", "output_len"):
        if named is not None and fixed in request.model_fields_set:
            own = "a trace brings" if named == "trace" else "a named length set brings"
            raise InputError(fixed, getattr(request, fixed), f"either {named} or prompt_len and output_len: {own} "
                                                             "its own")
    if getattr(request, "trace_arrivals", False) and (request.trace is None or request.rate is None):
        raise InputError("trace_arrivals", True, "a trace with an arrival_s column and a rate (its arrivals are "
                                                 "replayed at the rate; a closed loop's users send their own)")
    lengths = _lengths(request, named)
    slo = Slo(ttft=_seconds("slo_ttft", request.slo_ttft), tpot=_seconds("slo_tpot", request.slo_tpot),
              e2e=_seconds("slo_e2e", request.slo_e2e), percentile=float(request.slo_percentile))
    return load, lengths, slo


def _lengths(request: ServedModel, named: str | None) -> Lengths:
    """The request's lengths: its trace, its named set, or its fixed prompt and output lengths (spread within
    ``range_ratio`` as vLLM's random dataset spreads them); ``named`` says which of trace or lengths it gave."""
    if request.trace is not None:
        prompts, outputs, arrivals = parse_trace(request.trace)
        replay = bool(getattr(request, "trace_arrivals", False))
        if replay and arrivals is None:
            raise InputError("trace_arrivals", True, "a trace whose every row has an arrival_s (prompt_len,output_len,"
                                                     "arrival_s) to replay")
        # a trace's arrivals replace Poisson only where asked, and are then said (issue 43: they silently replaced the rate)
        lengths = Lengths(trace=(prompts, outputs, arrivals if replay else None),
                          unused_arrivals=arrivals is not None and not replay)
    elif request.lengths is not None:
        lengths = Lengths(distribution=request.lengths)
    else:
        lengths = Lengths(prompt_len=request.prompt_len, output_len=request.output_len)
    ratio = getattr(request, "range_ratio", None)
    if ratio is not None and named is not None:
        raise InputError("range_ratio", ratio, f"prompt_len and output_len to spread (the {named} brings its own lengths)")
    if ratio:  # vLLM's random dataset (issue 38): lengths uniform within +-ratio of those asked
        assert request.prompt_len is not None and request.output_len is not None  # fixed lengths carry both
        lengths = Lengths(distribution=random_dataset(request.prompt_len, request.output_len, float(ratio)))
    return lengths


def usd_per_million(hourly: float | None, devices: float, tokens_per_s: float) -> float | None:
    """USD per million tokens of ``devices`` devices at ``hourly`` USD per device-hour producing
    ``tokens_per_s`` [1/s]; None without a price or without tokens.

    Parameters
    ----------
    hourly : float or None
        USD per device-hour [USD/hour]; None: unknown.
    devices : float
        Devices paid for [1].
    tokens_per_s : float
        Tokens they produce [tokens/s].

    Returns
    -------
    float or None
        USD per million tokens [USD].
    """
    if hourly is None or not tokens_per_s > 0:
        return None
    return float(hourly * devices * unit_factor("1/hour", "1/s") / tokens_per_s * 1e6)


def cost_out(per_million: float, basis: PriceBasis, spread: dict[str, Any]) -> ServingCostOut:
    """A cost per million output tokens as a range: inverse to the speed's range.

    Parameters
    ----------
    per_million : float
        The expected USD per million output tokens [USD].
    basis : str
        ``"rent"`` or ``"buy"`` (an amortised purchase).
    spread : dict
        The speed's ``low`` and ``high`` factors [1] (:func:`sizer.serving.estimate.speed_spread`).

    Returns
    -------
    ServingCostOut
        Low, expected and high cost [USD] and the price basis.
    """
    return ServingCostOut.model_construct(low=float(per_million / spread["high"]), expected=float(per_million),
                                   high=float(per_million / spread["low"]), unit="USD", value=float(per_million),
                                   price_basis=basis)


def _pct(values: np.ndarray, unit: str, bounds: dict[str, tuple[float, float]] | None = None) -> Percentiles:
    f = unit_factor("s", unit)
    p = np.percentile(values, [50, 90, 99]) * f
    out = Percentiles(p50=float(p[0]), p90=float(p[1]), p99=float(p[2]), unit=unit)
    if bounds is None:
        return out
    low, high = percentile_bounds(out, bounds)
    return out.model_copy(update={"low": low, "high": high})


class MeasuredLatencies(Protocol):
    """Per measured request, the latencies [s]: a simulated run, or a disaggregated split across its pools."""

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token per request [s]."""

    @property
    def tpot(self) -> np.ndarray:
        """Time per output token per request of more than one token [s]."""

    @property
    def e2e(self) -> np.ndarray:
        """End-to-end latency per request [s]."""


def latency_out(run: MeasuredLatencies, ranges: FigureRanges | None = None) -> LatencyOut | None:
    """The run's latency percentiles: time to first token and per output token [ms], end to end [s].

    Parameters
    ----------
    run : MeasuredLatencies
        A simulated run (:class:`~sizer.simulator.metrics.SimulationResult`) or a disaggregated split.
    ranges : FigureRanges or None
        The factors bounding each percentile's range (:func:`sizer.serving.serving_ranges.for_load`); None: no range.

    Returns
    -------
    LatencyOut or None
        p50, p90 and p99 of each, and the requests measured; None where none was measured.
    """
    if len(run.ttft) == 0:
        return None
    e2e = _pct(run.e2e, "s")
    if ranges is not None:  # end to end: its first token and the rest, each in its own range
        low, high = e2e_bounds(e2e, _pct(run.ttft, "s"), ranges)
        e2e = e2e.model_copy(update={"low": low, "high": high})
    return LatencyOut(ttft=_pct(run.ttft, "ms", ranges.ttft if ranges else None),
                      tpot=_pct(run.tpot, "ms", ranges.tpot if ranges else None) if len(run.tpot) else None,
                      e2e=e2e, requests_measured=int(len(run.ttft)))


def delivered(load: Load, lengths: Lengths, replicas: int, run: SimulationResult, *, kept_up: bool) -> tuple[float, float]:
    """Output and prompt-plus-output tokens/s [1/s] of ``replicas`` replicas: a rate they keep up with
    (``kept_up``: within their capacity, or their SLOs met) is delivered whole, the rate times the mean
    lengths (a simulation's window, stretched by its last answers, would understate it); otherwise, and
    for a closed loop, what the simulation measured.

    Parameters
    ----------
    load : Load
        The total load.
    lengths : Lengths
        Request lengths [tokens].
    replicas : int
        Replicas sharing the load [1].
    run : SimulationResult
        One replica's simulated run at its share.
    kept_up : bool
        Whether the replicas keep up with an open load.

    Returns
    -------
    tuple of (float, float)
        Output tokens/s and prompt-plus-output tokens/s over all replicas [tokens/s].
    """
    if load.rate is not None and kept_up:
        prompt, output = lengths.mean()
        return load.rate * output, load.rate * (prompt + output)
    return run.output_tokens_per_s * replicas, run.total_tokens_per_s * replicas


def load_out(load: Load, lengths: Lengths) -> LoadOut:
    """The load's JSON section: the rate [1/s] or users and think time [s], and the mean lengths [tokens].

    Parameters
    ----------
    load : Load
        The load.
    lengths : Lengths
        Request lengths [tokens].

    Returns
    -------
    LoadOut
        The section.
    """
    prompt, output = lengths.mean()
    return LoadOut(request_rate=QuantityOut(value=load.rate, unit="1/s") if load.rate is not None else None,
                   users=load.users, think_time=QuantityOut(value=load.think_time, unit="s") if load.users else None,
                   prompt_len=LengthOut(mean=prompt, unit="tokens", distribution=lengths.label),
                   output_len=LengthOut(mean=output, unit="tokens", distribution=lengths.label))


def capacity_out(answer: LoadAnswer, slo: Slo, ranges: FigureRanges | None = None) -> CapacityOut:
    """The capacity's JSON section: per-replica rate [1/s] and users, replicas, utilisation and the SLOs [ms].

    Parameters
    ----------
    answer : LoadAnswer
        The load served (:func:`sizer.serving.capacity.serve_load`).
    slo : Slo
        The limits [s] at a percentile [%].
    ranges : FigureRanges or None
        The factors bounding the capacity's range (:func:`sizer.serving.serving_ranges.for_load`); None: no range.

    Returns
    -------
    CapacityOut
        The section; an infinite utilisation (nothing served) shows as 0.
    """
    limits = {k: QuantityOut(value=v * unit_factor("s", "ms"), unit="ms")
              for k, v in (("ttft", slo.ttft), ("tpot", slo.tpot), ("e2e", slo.e2e)) if v is not None}
    util = answer.utilisation if math.isfinite(answer.utilisation) else 0.0
    rate = answer.max_request_rate
    return CapacityOut(max_request_rate=RangedQuantityOut(value=rate, unit="1/s", low=rate * ranges.capacity[0],
                                                          high=rate * ranges.capacity[1]) if ranges else
                       RangedQuantityOut(value=rate, unit="1/s"),
                       max_users=answer.max_users, replicas=answer.replicas, slo_met=answer.slo_met,
                       utilisation=float(util), percentile=slo.percentile, slo=limits)


SERVING_PRICING = {
    "rent": "the cheapest on-demand offer per device that runs one replica's devices (price_basis 'rent'); devices "
            "without one are ranked last",
    "buy": "the amortised purchase plus energy per device-hour (price_basis 'buy'); devices without a purchase price "
           "are ranked last",
    "any": "rent where an offer runs one replica, else the amortised purchase; ranked by cost with rents first, then "
           "purchases (each row says its price_basis)"}


def serving_prices(devices: Sequence[Device], pricing: Pricing) -> Callable[[int, int], Price]:
    """A function (device index, devices per replica) -> (USD per device-hour or None, basis or None, the
    price's :class:`sizer.formulas.tco.PriceUsed` fields or None), each asked once: one price basis as
    ``pricing`` says, from offers that run one replica (:func:`sizer.formulas.tco.hourly_price`).

    Parameters
    ----------
    devices : sequence of Device
        The devices searched, by index.
    pricing : str
        ``rent``, ``buy`` or ``any``.

    Returns
    -------
    callable
        (device index, devices per replica) -> :data:`Price`: USD per device-hour [USD/hour] or None,
        its basis or None, the price used or None.
    """
    known: dict[tuple[int, int], Price] = {}

    def price(i: int, count: int) -> Price:
        if (i, count) not in known:
            chosen = hourly_price(devices[i], pricing=pricing, count=count)
            used = price_used(chosen)
            known[i, count] = ((float(cast(float, used["per_device_hour"])), cast(PriceBasis, used["price_basis"]),
                                dict(used)) if used is not None else (None, None, None))
        return known[i, count]

    return price


def load_assumptions(load: Load, lengths: Lengths, slo: Slo, answer: LoadAnswer, split: Split, max_running: int,
                     budget: int, hit: float) -> list[Assumption]:
    """What an answer under load assumed: the load, lengths, scheduler, iteration time, capacity search,
    layout, the simulation's length and, where they apply, an overload and an unreachable SLO.

    Parameters
    ----------
    load : Load
        The load.
    lengths : Lengths
        Request lengths [tokens].
    slo : Slo
        The limits [s] at a percentile [%].
    answer : LoadAnswer
        The load served.
    split : str
        ``"tensor"`` or ``"layer"`` within a replica.
    max_running : int
        The scheduler's most running requests [1].
    budget : int
        Tokens per iteration [tokens].
    hit : float
        Share of prompt tokens from the prefix cache [1].

    Returns
    -------
    list of Assumption
        In the order shown.
    """
    replayed = lengths.trace is not None and lengths.trace[2] is not None
    searched = "rate of the trace's arrival pattern" if replayed else "Poisson rate"
    notes = [
        Assumption(name="load", value=arrivals_label(load, lengths), source="given"),
        Assumption(name="lengths", value=lengths.label, source=lengths.source),
        Assumption(name="scheduler", value=f"continuous batching: chunked prefill within {budget} tokens per iteration, "
                   f"at most {max_running} running requests, paged KV cache of {answer.run.kv_capacity:,} tokens per "
                   f"replica, the youngest preempted and recomputed when it fills ({answer.run.preemptions} in the run)"
                   + (f"; {hit:.0%} of prompt tokens from the prefix cache" if hit else ""),
                   source="vLLM defaults (max_num_seqs 256, max_num_batched_tokens 2048); docs/references.md "
                          "[kwon2023vllm, agrawal2024sarathi]"),
        Assumption(name="iteration time", value="the engine's forward pass over the iteration's prefill and decode "
                   "tokens plus every running request's KV reads, interpolated on a grid built once per replica; "
                   "attention FLOP per token at the mean context", source="sizer.simulator.simulate"),
        Assumption(name="capacity", value=f"the largest {searched} whose percentiles meet the SLOs (bisection over "
                   "simulations of the same requests)" if slo.any else "no SLO given: the saturated throughput "
                   "(the queue grows without bound beyond it)", source="docs/references.md [agrawal2024vidur]"),
        Assumption(name="layout", value=f"{split} split within a replica (layer: llama.cpp's default for GGUF files; "
                   "tensor otherwise); replicas share nothing", source="llama.cpp --split-mode; tensor parallelism"),
    ]
    q = slo.percentile
    intervals = [(name, interval) for name, values in (("TTFT", answer.run.ttft), ("TPOT", answer.run.tpot))
                 if (interval := percentile_interval(values, q)) is not None]  # None: no values
    notes.append(Assumption(name="simulation length", value=f"{len(answer.run.ttft)} measured requests, as every serving "
                            f"answer simulates for p{q:g} (about {TAIL_SAMPLES} beyond it); 95 % order-statistic intervals "
                            "of the p" + f"{q:g}: " + "; ".join(f"{name} {lo * 1e3:.4g}-{hi * 1e3:.4g} ms"
                                                               for name, (lo, hi) in intervals),
                            source="sizer.serving.capacity.simulated_requests, percentile_interval"))
    if not answer.run.complete:
        notes.append(Assumption(name="overloaded", value="not every request finished within the work bound: the "
                                "latencies are of those that did and the SLOs are not met", source="simulation"))
    if answer.replicas is None:
        why = ("the deployment does not fit: its KV cache holds not one request, so no number of replicas serves"
               if answer.run.kv_capacity <= 0 else "even a lone request misses the SLOs on this replica"
               if answer.max_request_rate <= 0 else "the replicas sized by the capacity missed the SLOs in their own "
               "run, and so did up to three more: no replica count is given rather than one that misses")
        notes.append(Assumption(name="SLO unreachable", value=why, source="simulation"))
    return notes


def _generation_assumption(entry: Runtime, version: str) -> Assumption:
    """The assumption for a runtime named with its version: the generation whose policy and fitted costs apply."""
    from sizer.runtimes.serving_mechanisms import generation, generation_name

    name = generation_name(entry.name, version)
    g = generation(name)
    if g is None:  # no generation fitted for this engine: its profile, said so
        return Assumption(name="runtime", value=f"{entry.name} {version}: no generation of it is fitted, so its "
                          f"{entry.profile.version} profile's defaults apply", source=entry.profile.sources, verified=False)
    policy = ("prefill in iterations of its own, the running answers waiting" if g.policy.get("mixed_batches") is False
              else "prefill chunks sharing iterations with the running answers")
    return Assumption(name="runtime", value=f"{entry.name} {version} ({name}): "
                      + (f"{policy}" if g.policy_on else f"the {entry.profile.version} profile's scheduling")
                      + f"; {g.sequence_overhead * unit_factor('s', 'us'):.0f} us of CPU per running request "
                      f"and iteration, {g.request_latency * unit_factor('s', 'ms'):g} ms per request outside the engine "
                      f"({g.fitted_on})", source=f"{g.policy.get('source', entry.profile.sources)} (recalled, not read "
                      "in a data file); fitted values: sizer/runtimes/serving_mechanisms.yaml", verified=False)


def tuned_matrix(tuned: bool | None, engine: Runtime) -> float | None:
    """The matrix share of batched iterations of an engine tuned per system (``tuned``), None for a default engine.

    Parameters
    ----------
    tuned : bool or None
        The request's ``tuned``.
    engine : Runtime
        The serving runtime.

    Returns
    -------
    float or None
        :data:`~sizer.engine.constants.SERVING_TUNED_MATRIX_EFFICIENCY` [1]; None when not asked. InputError naming
        ``tuned`` for an engine without a ``tuned-build`` feature, i.e. other than TensorRT-LLM (the mechanism is chosen on NVIDIA's MLPerf TensorRT-LLM rows;
        vLLM's MLPerf rows on MI300X need none).
    """
    from sizer.engine.constants import SERVING_TUNED_MATRIX_EFFICIENCY
    from sizer.runtimes import Purpose, runtimes_for

    if not tuned:
        return None
    if "tuned-build" not in engine.profile.features:
        tuned_engines = [r.name for r in runtimes_for(Purpose.SERVING) if "tuned-build" in r.profile.features]
        raise InputError("tuned", tuned, f"runtime {' or '.join(tuned_engines)}: a tuned build is modelled for the "
                                         "engines NVIDIA's MLPerf harness builds; vLLM's MLPerf runs reach a default "
                                         "engine's share")
    return SERVING_TUNED_MATRIX_EFFICIENCY


def tuned_assumption() -> Assumption:
    """The assumption that states a tuned engine's matrix share and where it comes from.

    Returns
    -------
    Assumption
        The share, the mechanism and its source (marked unverified: chosen on a recalled prompt mean).
    """
    from sizer.engine.constants import SERVING_TUNED_MATRIX_EFFICIENCY, SERVING_TUNED_SOURCE

    return Assumption(name="tuned engine", value=f"batched iterations at {SERVING_TUNED_MATRIX_EFFICIENCY:.0%} of the "
                      "matrix peak (an engine built and tuned per system, as NVIDIA's MLPerf harness builds TensorRT-LLM)",
                      source=SERVING_TUNED_SOURCE, verified=False)

