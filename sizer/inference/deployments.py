"""`sizer recommend --inference`: the devices, counts and replicas that serve a model at a target.

Offline (no rate or users): every (device, count, batch) of the catalog is evaluated in one engine
call; a configuration serves when it fits and meets every target given (decode tokens/s per user,
total tokens/s, time to first token: one request's own prefill, as continuous batching schedules
it). Per (device, count) the largest serving batch is taken (total tokens/s never falls with the
batch). Under load (a rate or users, with SLOs): every (device, count) that holds the weights is
simulated under continuous batching (:mod:`sizer.inference.capacity`) for the replicas the load
needs. Per device the best count by the objective is kept; devices are ranked by the objective
(``cost``: cost per million output tokens, the default; ``latency``; ``throughput``); devices
without a price come last, and those that cannot serve are listed with the reason.

>>> r = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", weights="q4_k_m", tokens_per_s_per_user=20))
>>> len(r.ranked) > 0 and all(x.reason for x in r.rejected)
True
"""
from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import ConfigDict, Field

from sizer.hardware.catalog import Catalog, load_catalog
from sizer.errors import InputError
from sizer.inference.estimate import ServedModel, _per_output, _speed, _time, rent_per_hour, served_architecture, speed_spread
from sizer.inference.formats import kv_cache_bytes_per_value, weight_format
from sizer.inference.offload import check_gpu_layers, host_table, offload_refusal
from sizer.inference.capacity import saturated, serve_load
from sizer.inference.serving import ServingCase, evaluate_serving, serving_table, total_tokens_per_second
from sizer.inference.simulate import DEFAULT_MAX_BATCH, DEFAULT_TOKEN_BUDGET, Replica, batching_table
from sizer.inference.under_load import (CostOut, LatencyOut, cost_out, default_split, latency_out, load_out, LoadOut,
                                        parse_load, price_per_hour)
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
    max_devices: int = Field(8, ge=1, le=1024, description="largest tensor-parallel group (or layer split)")
    max_replicas: int = Field(64, ge=1, le=100_000, description="most replicas of one deployment (under load)")
    objective: Literal["cost", "latency", "throughput"] = Field("cost", description="rank by cost per million output "
                                                                "tokens, latency, or throughput per device")
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
    cost_per_million_tokens: CostOut | None
    decode_bound: str
    tp: int = 1
    replicas: int = 1


class LoadOption(Model):
    """One device's best deployment under load: ``replicas`` replicas of ``count`` devices."""

    rank: int
    device: str
    name: str
    kind: str
    count: int  # devices per replica
    tp: int
    pp: int
    split: str
    replicas: int
    devices_total: int
    max_request_rate: QuantityOut  # per replica, within the SLOs
    utilisation: float
    latency: LatencyOut
    output_tokens_per_s: QuantityOut  # all replicas
    prompt_and_output_tokens_per_s: QuantityOut  # all replicas, prompt and output tokens
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    price_per_hour: QuantityOut | None  # per device
    cost_per_million_tokens: CostOut | None


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
    ranked: list[InferenceOption | LoadOption]
    rejected: list[RejectedOption]
    assumptions: list[Assumption]
    objective: str = "cost"
    scenario: str = "offline"
    load: LoadOut | None = None


def unsupported_reason(fmt) -> str:
    return (f"no {fmt.compute} peak in the catalog ({fmt.name} quantises activations too)" if fmt.activations
            else "no usable precision in the catalog")


def _reason(fits, per_user, total, ttft, supported, need_user, need_total, need_ttft, memory, has, unsupported) -> str:
    """Why no (count, batch) of one device serves (arrays over its configurations)."""
    if not supported:
        return unsupported
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
    check_gpu_layers(request.gpu_layers, arch)
    offloading = request.gpu_layers is not None and request.gpu_layers < arch.layers
    if request.rate is not None or request.users is not None:
        if offloading:
            raise InputError("gpu_layers", request.gpu_layers, f"all {arch.layers} layers on the devices under load (rate "
                                                               "or users): offloaded layers are sized for a static batch only")
        return recommend_under_load(request, catalog, arch, notes, fmt, kv)
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
    host, host_notes, rejected = None, [], []
    if offloading:
        host, note = host_table(request.gpu_layers, request.host_cpu, arch, fmt, catalog)
        host_notes = [note]
        rejected = [RejectedOption(device=d.id, name=d.name, reason=offload_refusal(d, arch)) for d in devices
                    if offload_refusal(d, arch) is not None]
        devices = tuple(d for d in devices if offload_refusal(d, arch) is None)
    elif request.host_cpu is not None:
        raise InputError("host_cpu", request.host_cpu, "gpu_layers below the model's layers as well (a host runs offloaded layers)")
    table = serving_table(devices, fmt)
    counts = np.exp2(np.arange(int(np.log2(request.max_devices)) + 1))
    counts = counts[counts <= arch.heads]
    batches = np.asarray([float(request.batch)]) if request.batch is not None else BATCHES
    d, c, b = (g.ravel() for g in np.meshgrid(np.arange(len(devices)), counts, batches, indexing="ij"))
    case = ServingCase(arch, fmt, kv, prompt, output, default_split(request, fmt), request.gpu_layers if offloading else None)
    a = evaluate_serving(case, table, d, c, b, host)
    # one request's time to first token is its own prefill (continuous batching admits prompts as they come)
    own_prefill = evaluate_serving(case, table, d, c, np.ones_like(b), host).prefill_seconds
    per_user = 1.0 / a.decode_seconds
    total = total_tokens_per_second(b, output, a.prefill_seconds, a.decode_seconds)
    ok = a.fits & table.supported[d]
    if request.tokens_per_s_per_user is not None:
        ok &= per_user >= request.tokens_per_s_per_user
    if request.total_tokens_per_s is not None:
        ok &= total >= request.total_tokens_per_s
    if ttft_target is not None:
        ok &= own_prefill <= ttft_target
    rent = {i: rent_per_hour(dev) for i, dev in enumerate(devices)}

    options = []
    for i, device in enumerate(devices):
        rows = np.flatnonzero(d == i)
        good = rows[ok[rows]]
        if not len(good):
            rejected.append(RejectedOption(device=device.id, name=device.name, reason=_reason(
                a.fits[rows], per_user[rows], total[rows], own_prefill[rows], bool(table.supported[i]),
                request.tokens_per_s_per_user, request.total_tokens_per_s, ttft_target, a.memory[rows], table.memory[i],
                unsupported_reason(fmt))))
            continue
        # per count the largest serving batch; then the count best by the objective
        best = {}
        for r in good:
            best[c[r]] = r if c[r] not in best or b[r] > b[best[c[r]]] else best[c[r]]
        price = rent[i][0]
        scored = []
        for r in best.values():
            hourly = price * c[r] if price is not None else None
            per_million = hourly * unit_factor("1/hour", "1/s") / total[r] * 1e6 if hourly is not None else None
            key = {"cost": (per_million is None, per_million or 0.0, c[r]),
                   "latency": (float(own_prefill[r] + (output - 1) * a.decode_seconds[r]), c[r]),
                   "throughput": (-float(total[r] / c[r]), c[r])}[request.objective]
            scored.append((key, hourly, per_million, i, r))
        options.append(min(scored))
    options.sort(key=lambda o: o[0])
    ranked = []
    for rank, (_, hourly, per_million, i, r) in enumerate(options, start=1):
        device = devices[i]
        ranked.append(InferenceOption(
            rank=rank, device=device.id, name=device.name, kind=device.kind, count=int(c[r]), batch=int(b[r]),
            precision=table.precisions[i], decode_tokens_per_s=_speed(per_user[r], "tokens/s"),
            total_tokens_per_s=_speed(total[r], "tokens/s"), time_to_first_token=_time(own_prefill[r], "ms"),
            memory_per_device=QuantityOut.convert(a.memory[r], "B", "GB"),
            device_memory=QuantityOut.convert(table.memory[i], "B", "GB"),
            rent_per_hour=QuantityOut(value=hourly, unit="USD/hour") if rent[i][0] is not None else None,
            cost_per_million_tokens=cost_out(per_million, "rent", speed_spread()) if rent[i][0] is not None else None,
            decode_bound="compute" if a.decode_compute[r] > a.decode_memory[r] else "memory",
            tp=int(c[r]) if case.split == "tensor" else 1))
    s = speed_spread()
    assumptions = [*notes, *host_notes,
                   Assumption(name="weights", value=f"{fmt.name}: {fmt.bits:g} bits per weight", source=fmt.source),
                   Assumption(name="KV cache", value=f"{kv:g} B per value, {prompt} + {output} tokens per sequence",
                              source="layers x 2 x KV heads x head size x bytes x tokens"),
                   Assumption(name="search", value=f"tensor parallel over 1, 2, 4 ... {int(counts.max())} devices; batches "
                              + (f"{request.batch}" if request.batch else "1 to 2048, about 25 % apart") + "; per device the "
                              f"count best by {request.objective}, at the largest batch that serves; time to first token "
                              "is one request's own prefill", source="sizer's default criterion"),
                   Assumption(name="rent price", value="the catalog's cheapest on-demand price per device; devices "
                              "without one are ranked last", source="catalog cloud_prices"),
                   Assumption(name="ranking", value={"cost": "cost per million output tokens", "latency": "one "
                              "request's end-to-end time", "throughput": "output tokens/s per device"}[request.objective],
                              source="objective"),
                   Assumption(name="range", value=f"speed {s['low']:g}-{s['high']:g} x expected", source=s["source"])]
    return InferenceRecommendResult(task="inference", model=arch.name, weights=fmt.name, prompt_len=prompt,
                                    output_len=output, ranked=ranked, rejected=rejected, assumptions=assumptions,
                                    objective=request.objective)


# The deployment search simulates each point more coarsely than one deployment's answer (600 requests,
# 9 halvings, a saturated loop four requests deep per user): the capacity to within about 2 %.
SEARCH_REQUESTS = 200
SEARCH_STEPS = 6
SEARCH_ROUNDS = 2


def recommend_under_load(request: InferenceRecommendRequest, catalog: Catalog, arch, notes, fmt, kv) -> InferenceRecommendResult:
    """Per device, the count and replicas that serve the load within the SLOs, best by the objective."""
    load, lengths, slo = parse_load(request)
    split = default_split(request, fmt)
    devices = tuple(d for d in catalog if d.kind in request.kinds)
    if not devices:
        raise InputError("kinds", request.kinds, "kinds of device the catalog has")
    table = serving_table(devices, fmt)
    batching = batching_table(devices, fmt)
    limit = arch.heads if split == "tensor" else arch.layers
    counts = [int(x) for x in np.exp2(np.arange(int(np.log2(request.max_devices)) + 1)) if x <= limit]
    mean_prompt, mean_output = lengths.mean()
    case = ServingCase(arch, fmt, kv, max(1, round(mean_prompt)), max(1, round(mean_output)), split)
    n = len(devices)
    d = np.repeat(np.arange(n), len(counts))
    c = np.tile(np.asarray(counts, dtype=float), n)
    a = evaluate_serving(case, table, d, c, np.ones(len(d)))
    options, rejected = [], []
    for i, device in enumerate(devices):
        if not table.supported[i]:
            rejected.append(RejectedOption(device=device.id, name=device.name, reason=unsupported_reason(fmt)))
            continue
        hourly, basis, _ = price_per_hour(device)
        scored, why = [], None
        for j, count in enumerate(counts):
            r = i * len(counts) + j
            if not a.fits[r]:
                why = why or (f"does not fit: needs {a.memory[i * len(counts):(i + 1) * len(counts)].min() * unit_factor('B', 'GB'):.3g} "
                              f"GB per device at best, has {table.memory[i] * unit_factor('B', 'GB'):.3g} GB")
                continue
            # a lone request's own prefill and decode step bound the latencies from below: no simulation can beat them
            if (slo.ttft is not None and a.prefill_seconds[r] > slo.ttft) or (slo.tpot is not None and a.decode_seconds[r] > slo.tpot):
                why = (f"too slow even for a lone request: time to first token {a.prefill_seconds[r] * 1e3:.3g} ms, "
                       f"per output token {a.decode_seconds[r] * 1e3:.3g} ms at {count} devices")
                continue
            replica = Replica(arch, fmt, kv, batching, i, count, split, request.max_running or DEFAULT_MAX_BATCH,
                              request.token_budget or DEFAULT_TOKEN_BUDGET, request.prefix_cache_hit)
            full = saturated(replica, lengths, SEARCH_REQUESTS, rounds=SEARCH_ROUNDS)
            if request.objective == "cost" and scored and full.steady_request_rate > 0:
                # the cost at the asked load is proportional to the devices in use: skip a count that cannot beat the best
                fewest = count * (math.ceil(load.rate / full.steady_request_rate) if load.rate is not None
                                  else math.ceil(load.users / replica.max_batch))
                if fewest >= min(o[2] * o[4].replicas for o in scored):
                    continue
            answer = serve_load(replica, load, lengths, slo, requests=SEARCH_REQUESTS, full=full, steps=SEARCH_STEPS)
            lat = latency_out(answer.run)
            if answer.replicas is None or not answer.slo_met or lat is None:
                p99 = "" if lat is None else (f": p{slo.percentile:g} time to first token {lat.ttft.p99:.3g} ms"
                                              + (f", per output token {lat.tpot.p99:.3g} ms" if lat.tpot else ""))
                why = f"misses the SLOs at every count up to {count}{p99}"
                continue
            if answer.replicas > request.max_replicas:
                why = f"needs {answer.replicas:,} replicas of {count} (more than max_replicas, {request.max_replicas})"
                continue
            out_rate = answer.run.output_tokens_per_s * answer.replicas
            per_million = (hourly * count * answer.replicas * unit_factor("1/hour", "1/s") / out_rate * 1e6
                           if hourly is not None and out_rate > 0 else None)
            key = {"cost": (per_million is None, per_million or 0.0, count),
                   "latency": (lat.e2e.p99, count),
                   "throughput": (-answer.max_request_rate / count, count)}[request.objective]
            scored.append((key, i, count, r, answer, lat, out_rate, per_million, hourly, basis))
        if not scored:
            rejected.append(RejectedOption(device=device.id, name=device.name, reason=why or "no count serves"))
            continue
        options.append(min(scored, key=lambda o: o[0]))
    options.sort(key=lambda o: o[0])
    s = speed_spread()
    ranked = [LoadOption(
        rank=rank, device=devices[i].id, name=devices[i].name, kind=devices[i].kind, count=count,
        tp=count if split == "tensor" else 1, pp=count if split == "layer" else 1, split=split,
        replicas=answer.replicas, devices_total=count * answer.replicas,
        max_request_rate=QuantityOut(value=answer.max_request_rate, unit="1/s"), utilisation=answer.utilisation,
        latency=lat, output_tokens_per_s=QuantityOut(value=out_rate, unit="tokens/s"),
        prompt_and_output_tokens_per_s=QuantityOut(value=answer.run.total_tokens_per_s * answer.replicas, unit="tokens/s"),
        memory_per_device=QuantityOut.convert(a.memory[r], "B", "GB"),
        device_memory=QuantityOut.convert(table.memory[i], "B", "GB"),
        price_per_hour=QuantityOut(value=hourly, unit="USD/hour") if hourly is not None else None,
        cost_per_million_tokens=cost_out(per_million, basis, s) if per_million is not None else None)
        for rank, (_, i, count, r, answer, lat, out_rate, per_million, hourly, basis) in enumerate(options, start=1)]
    slo_text = ", ".join(f"{k} {v * 1e3:.4g} ms" for k, v in (("TTFT", slo.ttft), ("TPOT", slo.tpot), ("E2E", slo.e2e))
                         if v is not None) or "none (capacity = saturated throughput)"
    assumptions = [*notes,
                   Assumption(name="weights", value=f"{fmt.name}: {fmt.bits:g} bits per weight", source=fmt.source),
                   Assumption(name="load", value=f"{load.label}; {lengths.label}", source=lengths.source),
                   Assumption(name="SLOs", value=f"{slo_text} at p{slo.percentile:g}", source="given"),
                   Assumption(name="search", value=f"{split} split over {', '.join(map(str, counts))} devices per replica, "
                              f"at most {request.max_replicas} replicas for the load; {SEARCH_REQUESTS} simulated requests "
                              "per point; per device the "
                              f"count best by {request.objective}", source="docs/references.md [agrawal2024vidur]"),
                   Assumption(name="price", value="rent where the catalog has one (price_basis 'rent'), else the "
                              "amortised purchase (price_basis 'buy'), ranked together by cost per million tokens; "
                              "devices without either come last",
                              source="sizer.formulas.tco.hourly_price"),
                   Assumption(name="range", value=f"cost {1 / s['high']:.3g}-{1 / s['low']:.3g} x expected", source=s["source"])]
    return InferenceRecommendResult(task="inference", model=arch.name, weights=fmt.name, prompt_len=case.prompt_len,
                                    output_len=case.output_len, ranked=ranked, rejected=rejected, assumptions=assumptions,
                                    objective=request.objective, scenario="load", load=load_out(load, lengths))
