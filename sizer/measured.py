"""The user's own measurement and efficiency: one answer rescaled to what was measured, or to a given
MFU or fraction of the roofline (what-ifs).

A measurement (``--measured "2900 tokens/s"``, ``"1.2 s/step"``, ``"TTFT 350 ms"``, ``"peak memory 18 GiB"``) is
parsed once, at the edge, into a :class:`~sizer.schemas.measurement.Measurement`: its kind and its magnitude in SI
units (:mod:`sizer.schemas.measurement`, where the request field is defined). For the setup
asked, the engine's figure of that kind gives a factor (measured / sizer's) and every figure derived from it is
rescaled by that factor (time, throughput, cost, capacity, replicas ...), in one place per question
(:func:`time_answer`, :func:`inference_answer`, :func:`memory_answer`). With ``measured_on`` (reference mode) the
factor comes from the engine's figure for the device the measurement was taken on and carries over to the
device asked: its range is that mode's held-out error (``benchmarks/reference_mode.py``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from sizer.asked import Asked
from sizer.errors import InputError, SizerError
from sizer.results import Assumption, QuantityOut, RangeOut, unit_factor
from sizer.schemas.base import RequestModel
from sizer.schemas.measurement import FIELD, MeasuredKind, Measurement
from sizer.schemas.rescaled import Rescaled

if TYPE_CHECKING:
    # Type-only: a training recommendation reads the MFU and measured helpers below and never these answers'
    # models, whose modules are ~15 ms of its start-up (benchmarks/startup.py)
    import numpy as np
    import numpy.typing as npt

    from sizer.hardware.schema import Device
    from sizer.schemas.serving import InferenceResult
    from sizer.schemas.time_and_memory import MemoryRequest, MemoryResult, TimeRequest, TimeResult

# A serving or local request: this module reads only its measurement fields (``measured``, ``measured_on``,
# ``efficiency``), so it takes any request model (the serving requests live in the serving room, above this module)
Served = TypeVar("Served", bound=RequestModel)
Other = TypeVar("Other", bound=RequestModel)

# A measured point's range is its own run-to-run repeatability, not the model's spread across sources: the 90th
# percentile of llama-bench's "± x" (standard deviation over its repetitions) over the mean, 394 rows of
# ../shared/data/local-inference-measurements.csv (median 0.34 %, p90 1.8 %). Taken for training steps too: assumed.
REPEATABILITY = 0.018
REPEATABILITY_SOURCE = ("p90 of llama-bench's ± (standard deviation over repetitions) / mean, 394 rows of "
                        "local-inference-measurements.csv (median 0.34 %); for a training step assumed the same")
# Reference mode's range: the held-out error of carrying a measurement over to another device
# (benchmarks/reference_mode.py, benchmarks/results/reference_mode.json: p90 |error| over every source's pairs).
REFERENCE_MODE_RESULTS = "benchmarks/results/reference_mode.json"
# its "all" p90 |error| (1,870 pairs of 7 sources, 2026-12-06); tests/sizer/test_measured.py keeps the two equal
REFERENCE_MODE_P90 = 0.85


# ----------------------------------------------------------------------------------------------- shared pieces


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _shown(kind: MeasuredKind, value: float) -> tuple[float, str]:
    """An SI magnitude in the unit a person reads: tokens/s, s, ms or GiB."""
    if kind is MeasuredKind.PEAK_MEMORY:
        return value * unit_factor("B", "GiB"), "GiB"
    if kind in (MeasuredKind.TTFT, MeasuredKind.TOKEN_LATENCY) and value < 1:
        return value * unit_factor("s", "ms"), "ms"
    return value, ("/s" if kind is MeasuredKind.THROUGHPUT else "s")


def _statement(m: Measurement, sizer_si: float, factor: float, unit_word: str, on: str | None) -> str:
    value, unit = _shown(m.kind, m.value)
    mine, mine_unit = _shown(m.kind, sizer_si)
    unit = unit_word if m.kind is MeasuredKind.THROUGHPUT else unit
    where = f" on {on}" if on else ""
    ratio = m.value / sizer_si
    carried = (f": the factor {factor:.3g}x carries over to the setup asked through the engine; every figure below is "
               "rescaled") if on else ": every figure below is rescaled"
    theirs = _fmt(mine) if m.kind is MeasuredKind.THROUGHPUT else f"{_fmt(mine)} {mine_unit}"
    return f"measured {_fmt(value)} {unit}{where} is {ratio:.2f}x sizer's {theirs}{carried}"


def _range(expected: float, low_factor: float, high_factor: float, unit: str, floor: float = 0.0) -> RangeOut:
    low = max(expected * low_factor, min(floor, expected))
    return RangeOut.model_construct(low=float(low), expected=float(expected), high=float(expected * high_factor), unit=unit)


def _spread(basis: str) -> tuple[float, float, str]:
    """The range of a rescaled answer as (low, high) factors of a time, and where it comes from: an error e either
    way is a factor 1 + e either way (a speed e too fast or too slow by the same ratio)."""
    if basis == "reference":
        error = reference_mode_error()
        return 1 / (1 + error), 1 + error, (f"reference mode's held-out p90 |error| {error:.0%} over every source's "
                                            f"pairs (benchmarks/reference_mode.py, {REFERENCE_MODE_RESULTS})")
    if basis == "measured":
        return 1 / (1 + REPEATABILITY), 1 + REPEATABILITY, REPEATABILITY_SOURCE
    return 1.0, 1.0, "a what-if: the time at a given efficiency is exact, its range is the given value's"


def reference_mode_error() -> float:
    """Reference mode's held-out error.

    Returns
    -------
    float
        The p90 |error| over every source's pairs [1] (:data:`REFERENCE_MODE_P90`, benchmarks/reference_mode.py).
    """
    return REFERENCE_MODE_P90


def _check_one_basis(measured: Measurement | None, what_if: float | None, what_if_field: str, measured_on: str | None,
                     *, field: str = FIELD) -> None:
    if measured is not None and what_if is not None:
        raise InputError(what_if_field, what_if, f"either {what_if_field} (a what-if) or measured (your own measurement), "
                                                 "not both")
    if measured_on is not None and measured is None:
        raise InputError("measured_on", measured_on, "a measurement too (measured): the device it was taken on")
    if measured is not None and measured.on is not None and measured_on is not None:
        raise InputError("measured_on", measured_on, f"the device once: the measurement already says 'on {measured.on}'")


def _refuse(m: Measurement, command: str, kinds: tuple[MeasuredKind, ...]) -> None:
    if m.kind not in kinds:
        names = ", ".join(k.value for k in kinds if k is not MeasuredKind.DURATION)
        raise InputError(FIELD, m.text, f"a measurement {command} answers ({names}); a {m.kind.value} is not one")


def _measured_on(asked: Asked[Any]) -> tuple[int, Device]:
    """The count and device a measurement was taken on, found in the catalog by :func:`sizer.asked.on_catalog`."""
    assert asked.measured_on is not None  # on_catalog finds measured_on (or the measurement's "on ...") where given
    return asked.measured_on


def _on(asked: Asked[Any], request: Other, device: Device) -> Asked[Other]:
    """The question asked again of the device measured on: that device, no hardware sets, no measurement."""
    return asked.again(request, device=device, devices=None, have=(), measured_on_found=None)


# ----------------------------------------------------------------------------------------------------- training


def time_answer(asked: Asked[TimeRequest], result: TimeResult,
                again: Callable[[Asked[TimeRequest]], TimeResult]) -> TimeResult:
    """A training-time answer rescaled by the request's measurement or MFU; unchanged without either.

    Parameters
    ----------
    asked : Asked of TimeRequest
        Its ``measured`` (a throughput or step time), ``measured_on`` (reference mode, the device found in the
        catalog) and ``mfu`` [1].
    result : TimeResult
        The engine's answer for the setup asked.
    again : callable
        The time estimate (:func:`sizer.training.estimates.time_on`), asked again for the device measured on.

    Returns
    -------
    TimeResult
        Step time, throughput, training time, the step's parts, MFU and HFU rescaled by one factor, the range
        narrowed to the basis's, and the statement first among the assumptions.

    Raises
    ------
    InputError
        Naming ``measured`` (a kind training does not answer, faster than the physical limit), ``measured_on`` or
        ``mfu`` (with a measurement too).
    """
    request = asked.request
    measured, mfu = getattr(request, "measured", None), getattr(request, "mfu", None)
    on = getattr(request, "measured_on", None)
    _check_one_basis(measured, mfu, "mfu", on)
    if mfu is not None:
        if not 0 < mfu <= 1:
            raise InputError("mfu", mfu, "a fraction of the peak above 0 and at most 1")
        if not result.mfu > 0:
            raise InputError("mfu", mfu, "a workload whose model FLOP sizer counts (a model, parameters or a profile)")
        factor = mfu / result.mfu
        said = (f"{mfu:.0%} MFU (given): replaces the fitted efficiencies; every time is C / (n R_peak MFU), "
                f"{1 / factor:.3g}x sizer's (fitted {result.mfu:.0%} MFU)")
        rescaled = Rescaled(basis="mfu", given=f"{mfu:g}", factor=factor, sizer=None, statement=said)
        return _scale_time(result, rescaled, _spread("mfu"))
    if measured is None:
        return result
    _refuse(measured, "sizer time", (MeasuredKind.THROUGHPUT, MeasuredKind.STEP_TIME, MeasuredKind.DURATION))
    on = on or measured.on
    basis = result
    where = None
    if on is not None:
        basis, where = _reference_time(asked, on, again)
    if measured.kind is MeasuredKind.THROUGHPUT:
        mine = basis.throughput.expected
        if not mine > 0:
            raise InputError(FIELD, measured.text, "a step time: sizer has no throughput for this question")
        factor = measured.value / mine
        shown = QuantityOut(value=mine, unit=basis.throughput.unit)
    else:
        mine = basis.step_time.expected
        factor = mine / measured.value
        shown = QuantityOut(value=mine, unit="s")
    if result.mfu * factor > 1:
        raise InputError(FIELD, measured.text, f"at most the physical limit: that is {result.mfu * factor:.0%} MFU on "
                                               f"{result.count} x {result.device} (a step no faster than its FLOP at "
                                               "the datasheet peak)")
    said = _statement(measured, mine, factor, basis.throughput.unit.replace(" / s", "s/s"), where)
    rescaled = Rescaled(basis="reference" if where else "measured", given=measured.text, factor=factor, sizer=shown,
                        measured_on=where, statement=said)
    return _scale_time(result, rescaled, _spread(rescaled.basis))


def _reference_time(asked: Asked[TimeRequest], on: str,
                    again: Callable[[Asked[TimeRequest]], TimeResult]) -> tuple[TimeResult, str]:
    """The engine's answer for the same workload on the device the measurement was taken on."""
    request = asked.request
    count, device = _measured_on(asked)
    fields = request.model_dump(exclude_unset=True, exclude_none=True)
    for key in ("measured", "measured_on", "mfu", "have", "tp", "pp", "cp", "ep", "interleave", "system", "zero",
                "sharding", "hybrid_shard"):
        fields.pop(key, None)
    try:
        other = again(_on(asked, type(request)(**{**fields, "device": device.name, "count": count}), device))
    except SizerError as error:
        raise InputError("measured_on", on, f"a setup sizer can time this workload on ({error.message})") from error
    return other, f"{count} x {other.device}"


def _scale_time(result: TimeResult, rescaled: Rescaled, spread: tuple[float, float, str]) -> TimeResult:
    """Every time of ``result`` divided by ``rescaled.factor``, rates multiplied, the range from ``spread``."""
    f = rescaled.factor
    low_f, high_f, range_source = spread

    def per_step(q: QuantityOut) -> QuantityOut:
        return QuantityOut(value=q.value / f, unit=q.unit)

    step = result.step_time.expected / f
    limit_step = result.step_time.expected * result.mfu  # the step at MFU 1: its model FLOP at the peak
    step_range = _range(step, low_f, high_f, "s", floor=limit_step)
    per_sample = result.throughput.expected * result.step_time.expected  # data per step
    throughput = RangeOut.model_construct(low=per_sample / step_range.high, expected=per_sample / step,
                                          high=per_sample / step_range.low, unit=result.throughput.unit)
    mfu = float(rescaled.given) if rescaled.basis == "mfu" else result.mfu * f  # the given MFU exactly
    update: dict[str, Any] = {"step_time": step_range, "throughput": throughput, "mfu": mfu,
                              "hfu": result.hfu * f}
    if result.training_time is not None:
        t = result.training_time
        ratio = step_range.expected / result.step_time.expected
        scale = t.expected * ratio / step_range.expected
        update["training_time"] = RangeOut.model_construct(low=step_range.low * scale, expected=t.expected * ratio,
                                                           high=step_range.high * scale, unit=t.unit)
    if result.with_interruptions is not None:
        w = result.with_interruptions
        update["with_interruptions"] = w.model_copy(update={"training_time": RangeOut.model_construct(
            low=w.training_time.low / f, expected=w.training_time.expected / f, high=w.training_time.high / f,
            unit=w.training_time.unit)})
    for name in ("kernels_per_step", "optimizer_time_per_step", "overhead_per_step", "communication_per_step",
                 "tensor_parallel_per_step", "pipeline_per_step", "context_parallel_per_step", "data_parallel_per_step",
                 "expert_parallel_per_step", "bubble_per_step"):
        update[name] = per_step(getattr(result, name))
    update["layer_groups"] = [g.model_copy(update={"time_per_step": per_step(g.time_per_step)}) for g in result.layer_groups]
    update["assumptions"] = _with_statement(result.assumptions, rescaled, low_f, high_f, range_source)
    update["rescaled"] = rescaled
    return result.model_copy(update=update)


def _with_statement(assumptions: list[Assumption], rescaled: Rescaled, low_f: float, high_f: float,
                    range_source: str) -> list[Assumption]:
    name = {"mfu": "MFU", "efficiency": "efficiency"}.get(rescaled.basis, "measured")
    source = {"mfu": "given (--mfu): a what-if, not a prediction", "efficiency": "given (--efficiency): a what-if, not "
              "a prediction", "measured": "your measurement (--measured) of the setup asked",
              "reference": "your measurement (--measured) on another device, carried over through the engine "
                           "(reference mode)"}[rescaled.basis]
    kept = [a for a in assumptions if a.name != "range"]
    spread = (f"{low_f:.3g}-{high_f:.3g} x expected ({rescaled.basis})" if low_f != high_f
              else f"none: {range_source}")
    return [Assumption(name=name, value=rescaled.statement, source=source),
            Assumption(name="range", value=spread, source=range_source,
                       verified=rescaled.basis != "measured"), *kept]


# ------------------------------------------------------------------------------------------------------ memory


def memory_answer(request: MemoryRequest, result: MemoryResult) -> MemoryResult:
    """A training-memory answer rescaled to a measured peak memory; unchanged without one.

    Parameters
    ----------
    request : MemoryRequest
        Its ``measured`` (a peak memory only).
    result : MemoryResult
        The engine's answer.

    Returns
    -------
    MemoryResult
        Every part and the totals scaled so that the reserved total is the measurement; the fit decided again.
    """
    measured = getattr(request, "measured", None)
    if measured is None:
        return result
    _refuse(measured, "sizer memory", (MeasuredKind.PEAK_MEMORY,))
    if measured.on is not None:
        raise InputError(FIELD, measured.text, "a peak memory of the setup asked: memory does not carry over to another "
                                               "device through a speed factor")


    total_b = result.total.value * unit_factor(result.total.unit, "B")
    factor = measured.value / total_b
    update: dict[str, Any] = {}
    for name in ("weights", "gradients", "optimizer_states", "master_weights", "model_states", "activations",
                 "framework_overhead", "buffers", "logits", "dequant_buffer", "total", "active", "required_with_headroom"):
        q = getattr(result, name)
        if q is not None:
            update[name] = QuantityOut(value=q.value * factor, unit=q.unit)
    if result.device_memory is not None:
        need = update.get("required_with_headroom") or update["total"]
        have = result.device_memory.value * unit_factor(result.device_memory.unit, need.unit)
        update["fits"] = need.value <= have
    value, _ = _shown(measured.kind, measured.value)
    mine = total_b * unit_factor("B", "GiB")
    said = (f"measured {_fmt(value)} GiB is {factor:.2f}x sizer's {_fmt(mine)} GiB (its reserved total): every part "
            "below is rescaled (the fit decided again)")
    rescaled = Rescaled(basis="measured", given=measured.text, factor=factor,
                        sizer=QuantityOut(value=mine, unit="GiB"), statement=said)
    update["assumptions"] = [Assumption(name="measured", value=said, source="your measurement (--measured) of the "
                                        "setup asked; the parts keep sizer's shares"), *result.assumptions]
    update["rescaled"] = rescaled
    return result.model_copy(update=update)


# --------------------------------------------------------------------------------------------------- inference

def inference_answer(asked: Asked[Served], result: InferenceResult,
                     again: Callable[[Asked[Served]], InferenceResult], *,
                     prefill_limit: float = 0.0, step_limit: float = 0.0) -> InferenceResult:
    """A serving or local answer rescaled by the request's measurement or efficiency; unchanged without either.

    Parameters
    ----------
    asked : Asked of InferenceRequest
        Its ``measured`` (a throughput, a time to first token or a time per output token), ``measured_on`` (the
        device found in the catalog) and ``efficiency`` [1] (a fraction of the roofline).
    result : InferenceResult
        The engine's answer.
    again : callable
        The serving estimate (:func:`sizer.serving.estimate.serve`), asked again for the device measured on.
    prefill_limit, step_limit : float
        The prompt at the datasheet peak and a decode step at the datasheet bandwidth [s] (the roofline; 0:
        unknown).

    Returns
    -------
    InferenceResult
        Speeds, times, cost, energy, latency percentiles, capacity and replicas rescaled, the statement first.
    """
    request = asked.request
    measured, efficiency = getattr(request, "measured", None), getattr(request, "efficiency", None)
    on = getattr(request, "measured_on", None)
    _check_one_basis(measured, efficiency, "efficiency", on)
    if efficiency is not None:
        if not 0 < efficiency <= 1:
            raise InputError("efficiency", efficiency, "a fraction of the roofline above 0 and at most 1")
        step = result.decode_latency.expected * _to_s(result.decode_latency.unit)
        prefill = result.time_to_first_token.expected * _to_s(result.time_to_first_token.unit)
        if step_limit <= 0 or prefill_limit <= 0:
            raise InputError("efficiency", efficiency, "a setup whose roofline sizer knows (the devices' datasheet "
                                                       "bandwidth and peak; not a split with the host CPU)")
        f_gen = step * efficiency / step_limit
        f_prompt = prefill * efficiency / prefill_limit
        said = (f"{efficiency:.0%} of the roofline (given): replaces the fitted efficiencies; generation "
                f"{1 / f_gen:.3g}x and the prompt {1 / f_prompt:.3g}x sizer's times")
        rescaled = Rescaled(basis="efficiency", given=f"{efficiency:g}", factor=f_gen, sizer=None, statement=said)
        return _scale_inference(result, rescaled, f_prompt, f_gen, _spread("efficiency"))
    if measured is None:
        return result
    _refuse(measured, "sizer inference", (MeasuredKind.THROUGHPUT, MeasuredKind.TTFT, MeasuredKind.TOKEN_LATENCY,
                                          MeasuredKind.DURATION))
    on = on or measured.on
    basis, where = result, None
    if on is not None:
        basis, where = _reference_inference(asked, on, again)
    if measured.kind is MeasuredKind.THROUGHPUT:
        mine = _peak_output_rate(basis)
        factor = measured.value / mine
        shown, word = QuantityOut(value=mine, unit="tokens/s"), "tokens/s"
    elif measured.kind is MeasuredKind.TOKEN_LATENCY:
        mine = basis.decode_latency.expected * _to_s(basis.decode_latency.unit)
        factor, shown, word = mine / measured.value, QuantityOut(value=mine, unit="s"), "s"
    else:  # a time to first token (a bare duration on serving)
        mine = basis.time_to_first_token.expected * _to_s(basis.time_to_first_token.unit)
        factor, shown, word = mine / measured.value, QuantityOut(value=mine, unit="s"), "s"
    if step_limit > 0 and result.decode_latency.expected * _to_s(result.decode_latency.unit) / factor < step_limit * 0.999:
        raise InputError(FIELD, measured.text, "at most the physical limit: that decode step would read the weights "
                                               "and KV cache faster than the datasheet bandwidth")
    said = _statement(measured, mine, factor, word, where)
    rescaled = Rescaled(basis="reference" if where else "measured", given=measured.text, factor=factor, sizer=shown,
                        measured_on=where, statement=said)
    return _scale_inference(result, rescaled, factor, factor, _spread(rescaled.basis))


def _peak_output_rate(result: InferenceResult) -> float:
    """The output tokens/s a measured throughput is compared with: of the static batch (prefill included), or under
    load one replica's at its capacity (the most requests/s it serves within the SLOs x the mean output) [1/s]."""
    if result.capacity is not None and result.load is not None:
        return float(result.capacity.max_request_rate.value * result.load.output_len.mean)
    return float(result.total_tokens_per_s.expected)


def _to_s(unit: str) -> float:


    return unit_factor(unit, "s")


def _reference_inference(asked: Asked[Served], on: str,
                         again: Callable[[Asked[Served]], InferenceResult]) -> tuple[InferenceResult, str]:
    request = asked.request
    count, device = _measured_on(asked)
    fields = request.model_dump(exclude_unset=True, exclude_none=True)
    for key in ("measured", "measured_on", "efficiency", "have", "devices", "gpu_layers", "threads"):
        fields.pop(key, None)
    try:
        other = again(_on(asked, type(request)(**{**fields, "device": device.name, "count": count}), device))
    except SizerError as error:
        raise InputError("measured_on", on, f"a setup sizer can serve this model on ({error.message})") from error
    return other, f"{count} x {other.device}"


def _scale_inference(result: InferenceResult, rescaled: Rescaled, f_prompt: float, f_gen: float,
                     spread: tuple[float, float, str]) -> InferenceResult:
    """Prompt figures by ``f_prompt``, generation figures by ``f_gen``, the figures both make by their mix."""
    low_f, high_f, range_source = spread

    def speed(r: RangeOut, f: float) -> RangeOut:
        e = r.expected * f
        return RangeOut.model_construct(low=e / high_f, expected=e, high=e / low_f, unit=r.unit)

    def time(r: RangeOut, f: float) -> RangeOut:
        e = r.expected / f
        return RangeOut.model_construct(low=e * low_f, expected=e, high=e * high_f, unit=r.unit)

    prefill = result.time_to_first_token.expected * _to_s(result.time_to_first_token.unit)
    step = result.decode_latency.expected * _to_s(result.decode_latency.unit)
    out = max(result.output_len, 1)
    before = prefill + out * step
    after = prefill / f_prompt + out * step / f_gen
    g = before / after if after > 0 else f_gen  # the whole sequence's speed factor
    update: dict[str, Any] = {
        "decode_tokens_per_s": speed(result.decode_tokens_per_s, f_gen), "decode_latency": time(result.decode_latency, f_gen),
        "prefill_tokens_per_s": speed(result.prefill_tokens_per_s, f_prompt),
        "time_to_first_token": time(result.time_to_first_token, f_prompt),
        "total_tokens_per_s": speed(result.total_tokens_per_s, g)}
    cost_factor = 1 / g
    if result.capacity is not None:  # under load: the load's tokens are served as before, by more or fewer replicas
        update["capacity"], cost_factor = _rescaled_capacity(result, g)
    if result.cost_per_million_tokens is not None:
        c = result.cost_per_million_tokens
        e = c.expected * cost_factor
        update["cost_per_million_tokens"] = c.model_copy(update={"low": e * low_f, "expected": e, "high": e * high_f,
                                                                 "value": e})
    if result.energy_per_token is not None:
        update["energy_per_token"] = time(result.energy_per_token, g)
    if result.load is None:  # offline: the batch's tokens/s; under load they are the load's, unchanged
        for name in ("output_tokens_per_s", "prompt_and_output_tokens_per_s"):
            q = getattr(result, name)
            if q is not None:
                update[name] = QuantityOut(value=q.value * g, unit=q.unit)
    if result.latency is not None:
        lat = result.latency

        def pct(p: Any, f: float) -> Any:
            return None if p is None else p.model_copy(update={"p50": p.p50 / f, "p90": p.p90 / f, "p99": p.p99 / f})

        update["latency"] = lat.model_copy(update={"ttft": pct(lat.ttft, f_prompt), "tpot": pct(lat.tpot, f_gen),
                                                   "e2e": pct(lat.e2e, g)})
    update["assumptions"] = _with_statement(result.assumptions, rescaled, low_f, high_f, range_source)
    update["rescaled"] = rescaled
    return result.model_copy(update=update)


def _rescaled_capacity(result: InferenceResult, g: float) -> tuple[Any, float]:
    """A replica's capacity times ``g``, the replicas the load then needs, and the cost's factor (replicas paid)."""
    cap = result.capacity
    assert cap is not None
    rate = cap.max_request_rate.value * g
    changes: dict[str, Any] = {"max_request_rate": QuantityOut(value=rate, unit=cap.max_request_rate.unit),
                               "max_users": None if cap.max_users is None else max(int(cap.max_users * g), 0)}
    cost_factor = 1 / g
    if cap.replicas is not None:
        load = result.load
        if load is not None and load.request_rate is not None and rate > 0:
            replicas = max(1, math.ceil(load.request_rate.value / rate - 1e-9))
        elif load is not None and load.users is not None and changes["max_users"]:
            replicas = max(1, math.ceil(load.users / changes["max_users"] - 1e-9))
        else:
            replicas = max(1, math.ceil(cap.replicas / g - 1e-9))
        changes["replicas"] = replicas
        cost_factor = replicas / cap.replicas
    return cap.model_copy(update=changes), cost_factor


# ------------------------------------------------------------------------------- a given MFU on many layouts

class StepTimes(Protocol):
    """Step times of many layouts, as frozen arrays: the engine's :class:`~sizer.engine.summary.Summary` and a
    recommendation's :class:`~sizer.plan.layout_basis.Basis` (named by what they hold: both are above this module)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass: replaced, not changed

    @property
    def step_low(self) -> npt.NDArray[np.float64]:
        """The low end of each step's range [s]."""

    @property
    def step_expected(self) -> npt.NDArray[np.float64]:
        """Each expected step [s]."""

    @property
    def step_high(self) -> npt.NDArray[np.float64]:
        """The high end of each step's range [s]."""

    @property
    def mfu(self) -> npt.NDArray[np.float64]:
        """Each step's model FLOP utilisation [1]."""


Steps = TypeVar("Steps", bound=StepTimes)


def at_mfu(steps: Steps, mfu: float | None) -> Steps:
    """Step times of many layouts (a :class:`~sizer.engine.summary.Summary`, a recommendation's
    :class:`~sizer.plan.layout_basis.Basis`) at a given MFU: each step ``C_step / (n R_peak MFU)``, that is its
    time times its fitted MFU over the given one; the range collapses to it (a what-if is exact).

    Parameters
    ----------
    steps : dataclass
        Frozen arrays ``step_low``, ``step_expected``, ``step_high`` [s] and ``mfu`` [1] (``hfu`` too, where it has
        one).
    mfu : float or None
        The given MFU (0, 1] [1]; None leaves ``steps`` as they are.

    Returns
    -------
    dataclass
        The same type with the step times and MFU (and HFU) at the given MFU.

    Raises
    ------
    InputError
        Naming ``mfu``: not in (0, 1].
    """
    if mfu is None:
        return steps
    if not 0 < mfu <= 1:
        raise InputError("mfu", mfu, "a fraction of the peak above 0 and at most 1")
    import dataclasses

    import numpy as np

    fitted = np.asarray(steps.mfu, dtype=np.float64)
    ratio = np.where(fitted > 0, fitted / mfu, 1.0)
    expected = np.asarray(steps.step_expected, dtype=np.float64) * ratio
    update: dict[str, Any] = {"step_low": expected, "step_expected": expected, "step_high": expected,
                              "mfu": np.where(fitted > 0, mfu, fitted)}
    hfu = getattr(steps, "hfu", None)  # a Summary's; a Basis has none
    if hfu is not None:
        update["hfu"] = np.asarray(hfu, dtype=np.float64) / ratio
    return dataclasses.replace(steps, **update)


def mfu_assumption(mfu: float) -> Assumption:
    """The statement a many-layout answer (plan, recommend) carries at a given MFU.

    Parameters
    ----------
    mfu : float
        The given MFU (0, 1] [1].

    Returns
    -------
    Assumption
        "40% MFU (given)", said as a what-if in place of the fitted efficiencies.
    """
    return Assumption(name="MFU", value=f"{mfu:.0%} MFU (given): replaces the fitted efficiencies; every time is "
                      "C / (n R_peak MFU), exact (no range)", source="given (--mfu): a what-if, not a prediction")


def carried_to_every_device(asked: Asked[Any], again: Callable[[Asked[TimeRequest]], TimeResult],
                            time_request: type[TimeRequest]) -> Rescaled | None:
    """A recommendation's measurement (reference mode): the factor measured / sizer's on the device measured on,
    for carrying over to every device ranked; None without a measurement.

    Parameters
    ----------
    asked : Asked of RecommendRequest
        Its ``measured`` (a throughput or step time), ``measured_on`` (or "... on DEVICE", found in the catalog)
        and ``mfu``.
    again : callable
        The time estimate (:func:`sizer.training.estimates.time_on`), asked for the device measured on.
    time_request : type
        :class:`sizer.schemas.time_and_memory.TimeRequest`, which the request's workload fields are put into.

    Returns
    -------
    Rescaled or None
        The factor [1] and the statement; None where no measurement is given.

    Raises
    ------
    InputError
        Naming ``measured`` (a kind training does not answer), ``measured_on`` (missing: a recommendation ranks many
        devices; not a device sizer can time the workload on) or ``mfu`` (with a measurement too).
    """
    request = asked.request
    measured: Measurement | None = request.measured
    _check_one_basis(measured, request.mfu, "mfu", request.measured_on)
    if measured is None:
        return None
    _refuse(measured, "sizer recommend", (MeasuredKind.THROUGHPUT, MeasuredKind.STEP_TIME, MeasuredKind.DURATION))
    on = request.measured_on or measured.on
    if on is None:
        raise InputError("measured_on", None, "the device the measurement was taken on ('RTX 4090', '8x A100 80GB "
                                              "SXM'): a recommendation ranks many devices, the factor carries over "
                                              "from that one")
    count, device = _measured_on(asked)
    given = request.model_dump(exclude_unset=True, exclude_none=True)
    fields = {k: v for k, v in given.items() if k in time_request.model_fields
              and k not in ("measured", "measured_on", "mfu", "have", "device", "count")}
    try:
        other = again(_on(asked, time_request(**fields, device=device.name, count=count), device))
    except SizerError as error:
        raise InputError("measured_on", on, f"a setup sizer can time this workload on ({error.message})") from error
    if measured.kind is MeasuredKind.THROUGHPUT:
        mine, factor = other.throughput.expected, measured.value / other.throughput.expected
        shown = QuantityOut(value=mine, unit=other.throughput.unit)
    else:
        mine, factor = other.step_time.expected, other.step_time.expected / measured.value
        shown = QuantityOut(value=mine, unit="s")
    where = f"{count} x {other.device}"
    said = _statement(measured, mine, factor, other.throughput.unit.replace(" / s", "s/s"), where)
    return Rescaled(basis="reference", given=measured.text, factor=factor, sizer=shown, measured_on=where, statement=said)


def at_speed(steps: Steps, rescaled: Rescaled | None) -> Steps:
    """Step times of many layouts divided by a measurement's factor, MFU times it, the range reference mode's.

    Parameters
    ----------
    steps : dataclass
        A :class:`~sizer.plan.layout_basis.Basis` or :class:`~sizer.engine.summary.Summary`.
    rescaled : Rescaled or None
        The factor [1] (:func:`carried_to_every_device`); None leaves ``steps`` as they are.

    Returns
    -------
    dataclass
        The same type, rescaled, the range ×/÷ (1 + the held-out p90 error), never below the physical limit.
    """
    if rescaled is None:
        return steps
    import dataclasses

    import numpy as np

    low_f, high_f, _ = _spread(rescaled.basis)
    old = np.asarray(steps.step_expected, dtype=np.float64)
    expected = old / rescaled.factor
    fitted = np.asarray(steps.mfu, dtype=np.float64)
    # the physical limit: the step at MFU 1 (its model FLOP at the peak)
    limit = np.where(fitted > 0, old * fitted, 0.0)
    update: dict[str, Any] = {"step_low": np.maximum(expected * low_f, np.minimum(limit, expected)),
                              "step_expected": expected, "step_high": expected * high_f, "mfu": fitted * rescaled.factor}
    hfu = getattr(steps, "hfu", None)
    if hfu is not None:
        update["hfu"] = np.asarray(hfu, dtype=np.float64) * rescaled.factor
    return dataclasses.replace(steps, **update)


def rescaled_assumption(rescaled: Rescaled) -> list[Assumption]:
    """The statement and the range a many-device answer carries when a measurement is carried over.

    Parameters
    ----------
    rescaled : Rescaled
        The factor and statement (:func:`carried_to_every_device`).

    Returns
    -------
    list of Assumption
        The statement, then the range and where it comes from.
    """
    low_f, high_f, source = _spread(rescaled.basis)
    return _with_statement([], rescaled, low_f, high_f, source)


def check_owned(request: Any) -> None:
    """A measurement beside several hardware sets (``have``) must say which set it was taken on.

    Parameters
    ----------
    request : TimeRequest, MemoryRequest, RecommendRequest, PlanRequest or InferenceRequest
        Its ``have`` list and, where the request takes them, ``measured`` and ``measured_on``.

    Raises
    ------
    InputError
        Naming ``measured_on``: a measurement of no named device beside two or more hardware sets (each set
        would otherwise be set to the same measurement).
    """
    measured: Measurement | None = getattr(request, "measured", None)
    have = getattr(request, "have", None) or []
    if measured is None or measured.on is not None or getattr(request, "measured_on", None) is not None:
        return
    if len(have) > 1:
        raise InputError("measured_on", None, "the hardware set the measurement was taken on (e.g. '8x H100 SXM'): "
                                              "have lists several, and the measurement carries over to the others")
