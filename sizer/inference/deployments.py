"""`sizer recommend --inference`: the cheapest devices and counts that serve a model at a target.

Every (device, count, batch) of the catalog is evaluated in one engine call; a configuration
serves when it fits and meets every target given (decode tokens/s per user, total tokens/s,
time to first token). Per (device, count) the largest serving batch is taken (total tokens/s
never falls with the batch), per device the count with the lowest rent per hour. Devices are
ranked by rent per hour, then cost per million output tokens; devices without a rent price
come last, and those that cannot serve are listed with the reason.

>>> r = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", weights="q4_k_m", tokens_per_s_per_user=20))
>>> len(r.ranked) > 0 and all(x.reason for x in r.rejected)
True
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import ConfigDict, Field

from sizer.hardware.catalog import Catalog, load_catalog
from sizer.errors import InputError
from sizer.inference.estimate import ServedModel, _per_output, _speed, _time, rent_per_hour, served_architecture, speed_spread
from sizer.inference.formats import kv_cache_bytes_per_value, weight_format
from sizer.inference.serving import ServingCase, evaluate_serving, serving_table, total_tokens_per_second
from sizer.results import Assumption, Model, QuantityOut, RangeOut, unit_factor
from sizer.units import parse_quantity

Kind = Literal["gpu", "cpu", "accelerator"]
BATCHES = np.unique(np.round(np.geomspace(1, 2048, 34)))  # about 25 % apart, up to TensorRT-LLM's default maximum


class InferenceRecommendRequest(ServedModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"task": "inference", "model": "llama-2-70b", "weights": "fp8", "tokens_per_s_per_user": 30,
         "total_tokens_per_s": 2000, "time_to_first_token": "2 s"}]})

    task: Literal["inference"] = Field("inference", description="'inference' selects this body on /v1/recommend")
    batch: int | None = Field(None, ge=1, le=1_000_000, description="concurrent sequences (default: the largest that serves)")
    tokens_per_s_per_user: float | None = Field(None, gt=0, le=1e7, description="decode tokens/s each sequence needs")
    total_tokens_per_s: float | None = Field(None, gt=0, le=1e12, description="output tokens/s over all sequences")
    time_to_first_token: str | dict | None = Field(None, description="longest acceptable, e.g. '500 ms'")
    context_length: int | None = Field(None, ge=2, le=10_000_000, description="tokens a sequence must hold; the prompt is "
                                                                               "this less the output")
    max_devices: int = Field(8, ge=1, le=1024, description="largest tensor-parallel group")
    kinds: list[Kind] = Field(default_factory=lambda: ["gpu", "accelerator", "cpu"])


class InferenceOption(Model):
    rank: int
    device: str
    name: str
    kind: str
    count: int
    batch: int
    precision: str
    decode_tokens_per_s: RangeOut
    total_tokens_per_s: RangeOut
    time_to_first_token: RangeOut
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    rent_per_hour: QuantityOut | None
    cost_per_million_tokens: RangeOut | None
    decode_bound: str


class RejectedOption(Model):
    device: str
    name: str
    reason: str


class InferenceRecommendResult(Model):
    task: Literal["inference"]
    model: str
    weights: str
    prompt_len: int
    output_len: int
    ranked: list[InferenceOption]
    rejected: list[RejectedOption]
    assumptions: list[Assumption]


def _reason(fits, per_user, total, ttft, supported, need_user, need_total, need_ttft, memory, has) -> str:
    """Why no (count, batch) of one device serves (arrays over its configurations)."""
    if not supported:
        return "no usable precision in the catalog"
    if not fits.any():
        return f"does not fit: needs {memory.min() * unit_factor('B', 'GB'):.3g} GB per device at best, has {has * unit_factor('B', 'GB'):.3g} GB"
    if need_user is not None and not (fits & (per_user >= need_user)).any():
        return f"too slow per user: at most {per_user[fits].max():.3g} tokens/s per sequence (target {need_user:g})"
    if need_ttft is not None and not (fits & (ttft <= need_ttft)).any():
        return f"time to first token at least {ttft[fits].min() * unit_factor('s', 'ms'):.3g} ms (target {need_ttft * unit_factor('s', 'ms'):.3g} ms)"
    if need_total is None:
        return "no batch meets the tokens/s per user and the time to first token together"
    return f"at most {total[fits].max():.4g} output tokens/s in total while meeting the other targets (target {need_total:g})"


def recommend_inference(request: InferenceRecommendRequest, catalog: Catalog | None = None) -> InferenceRecommendResult:
    """Rank the catalog's devices for serving (module docstring)."""
    catalog = catalog if catalog is not None else load_catalog()
    arch, notes = served_architecture(request)
    fmt = weight_format(request.weights)
    kv = kv_cache_bytes_per_value(request.kv_cache)
    prompt, output = request.prompt_len, request.output_len
    if request.context_length is not None:
        prompt = request.context_length - output
        if prompt < 1:
            raise InputError("context_length", request.context_length, f"more tokens than output_len ({output})")
    ttft_target = (float(parse_quantity("time_to_first_token", request.time_to_first_token, "[time]").to("s").magnitude)
                   if request.time_to_first_token is not None else None)
    devices = tuple(d for d in catalog if d.kind in request.kinds)
    if not devices:
        raise InputError("kinds", request.kinds, "kinds of device the catalog has")
    table = serving_table(devices, fmt)
    counts = np.exp2(np.arange(int(np.log2(request.max_devices)) + 1))
    counts = counts[counts <= arch.heads]
    batches = np.asarray([float(request.batch)]) if request.batch is not None else BATCHES
    d, c, b = (g.ravel() for g in np.meshgrid(np.arange(len(devices)), counts, batches, indexing="ij"))
    case = ServingCase(arch, fmt, kv, prompt, output)
    a = evaluate_serving(case, table, d, c, b)
    per_user = 1.0 / a.decode_seconds
    total = total_tokens_per_second(b, output, a.prefill_seconds, a.decode_seconds)
    ok = a.fits & table.supported[d]
    if request.tokens_per_s_per_user is not None:
        ok &= per_user >= request.tokens_per_s_per_user
    if request.total_tokens_per_s is not None:
        ok &= total >= request.total_tokens_per_s
    if ttft_target is not None:
        ok &= a.prefill_seconds <= ttft_target
    rent = {i: rent_per_hour(dev) for i, dev in enumerate(devices)}

    options, rejected = [], []
    for i, device in enumerate(devices):
        rows = np.flatnonzero(d == i)
        good = rows[ok[rows]]
        if not len(good):
            rejected.append(RejectedOption(device=device.id, name=device.name, reason=_reason(
                a.fits[rows], per_user[rows], total[rows], a.prefill_seconds[rows], bool(table.supported[i]),
                request.tokens_per_s_per_user, request.total_tokens_per_s, ttft_target, a.memory[rows], table.memory[i])))
            continue
        # per count the largest serving batch; then the fewest devices (lowest rent), the larger batch on a tie
        best = {}
        for r in good:
            best[c[r]] = r if c[r] not in best or b[r] > b[best[c[r]]] else best[c[r]]
        r = best[min(best)]
        price = rent[i][0]
        hourly = price * c[r] if price is not None else None
        per_million = hourly * unit_factor("1/hour", "1/s") / total[r] * 1e6 if hourly is not None else None
        options.append((hourly is None, hourly or 0.0, per_million or 0.0, i, r))
    options.sort()
    ranked = []
    for rank, (_, hourly, per_million, i, r) in enumerate(options, start=1):
        device = devices[i]
        ranked.append(InferenceOption(
            rank=rank, device=device.id, name=device.name, kind=device.kind, count=int(c[r]), batch=int(b[r]),
            precision=table.precisions[i], decode_tokens_per_s=_speed(per_user[r], "tokens/s"),
            total_tokens_per_s=_speed(total[r], "tokens/s"), time_to_first_token=_time(a.prefill_seconds[r], "ms"),
            memory_per_device=QuantityOut.convert(a.memory[r], "B", "GB"),
            device_memory=QuantityOut.convert(table.memory[i], "B", "GB"),
            rent_per_hour=QuantityOut(value=hourly, unit="USD/hour") if rent[i][0] is not None else None,
            cost_per_million_tokens=_per_output(per_million, "USD") if rent[i][0] is not None else None,
            decode_bound="compute" if a.decode_compute[r] > a.decode_memory[r] else "memory"))
    s = speed_spread()
    assumptions = [*notes,
                   Assumption(name="weights", value=f"{fmt.name}: {fmt.bits:g} bits per weight", source=fmt.source),
                   Assumption(name="KV cache", value=f"{kv:g} B per value, {prompt} + {output} tokens per sequence",
                              source="layers x 2 x KV heads x head size x bytes x tokens"),
                   Assumption(name="search", value=f"tensor parallel over 1, 2, 4 ... {int(counts.max())} devices; batches "
                              + (f"{request.batch}" if request.batch else "1 to 2048, about 25 % apart") + "; per device the "
                              "fewest devices that serve, at the largest batch that serves", source="sizer's default criterion"),
                   Assumption(name="rent price", value="the catalog's cheapest on-demand price per device; devices "
                              "without one are ranked last", source="catalog cloud_prices"),
                   Assumption(name="range", value=f"speed {s['low']:g}-{s['high']:g} x expected", source=s["source"])]
    return InferenceRecommendResult(task="inference", model=arch.name, weights=fmt.name, prompt_len=prompt,
                                    output_len=output, ranked=ranked, rejected=rejected, assumptions=assumptions)
