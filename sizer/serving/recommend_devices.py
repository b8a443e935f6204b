"""`sizer recommend --inference`: the devices, counts and replicas that serve a model at a target.

Offline (no rate or users): every (device, count, batch) of the catalog is evaluated in one engine
call; a configuration serves when it fits and meets every target given (decode tokens/s per user,
total tokens/s, time to first token: one request's own prefill, as continuous batching schedules
it). Per (device, count) the largest serving batch is taken (total tokens/s never falls with the
batch). Under load (a rate or users, with SLOs): device x weight and KV format x count x replicas,
screened by the engine and simulated under continuous batching (:mod:`sizer.serving.load_search`).
Data-centre devices only, unless ``consumer`` is asked (:mod:`sizer.serving.production`).
Per device the best point by the objective is kept; devices are ranked by the objective
(``cost``: cost per million output tokens, the default; ``latency``; ``throughput``; the sort keys in
:mod:`sizer.serving.ranking`); devices
without a price come last, and those that cannot serve are listed with the reason.

>>> r = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", weights="q4_k_m", tokens_per_s_per_user=20))
>>> len(r.ranked) > 0 and all(x.reason for x in r.rejected)
True
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sizer.asked import on_catalog
from sizer.choices import Split
from sizer.engine.devices import DeviceTable
from sizer.errors import InputError
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.schema import Device
from sizer.passes.arithmetic import (
    ServingArrays,
    ServingCase,
    evaluate_serving,
    serving_table,
    splits_heads,
    total_tokens_per_second,
)
from sizer.passes.layer_offload import DEFAULT_HOST, check_gpu_layers, check_no_host, host_table, offload_refusal
from sizer.passes.moe_decode import TENSOR_PARALLEL
from sizer.results import Assumption, QuantityOut, unit_factor
from sizer.runtimes.formats import WeightFormat, kv_cache_bytes_per_value, quality_note
from sizer.schemas.serving import InferenceOption, InferenceRecommendResult, LoadOption, RejectedOption
from sizer.schemas.serving_requests import InferenceRecommendRequest
from sizer.serving.estimate import _speed_within, _time, served_architecture, served_format, speed_spread
from sizer.serving.load_search import SEARCH_KV, searched_weights
from sizer.serving.production import production_devices, segments_assumption
from sizer.serving.ranking import PriceLookup, SortKey, keeps_format, largest_batch_per_count, offline_key, preferred_eight_bit
from sizer.serving.recommend_answer import node_reason, unsupported_reason
from sizer.serving.search_space import device_counts, devices_of_kinds
from sizer.serving.under_load import (
    SERVING_PRICING,
    RuntimeMemory,
    cost_out,
    default_split,
    named_serving_runtime,
    refuse_load_options_without_load,
    runtime_memory,
    searched_refusal,
    serving_prices,
    usd_per_million,
)
from sizer.workloads.architecture import Architecture

BATCHES = np.unique(np.round(np.geomspace(1, 2048, 34)))  # about 25 % apart, up to TensorRT-LLM's default maximum


def _reason(fits: npt.NDArray[np.bool_], per_user: npt.NDArray[np.float64], total: npt.NDArray[np.float64],
            ttft: npt.NDArray[np.float64], supported: bool, need_user: float | None, need_total: float | None,
            need_ttft: float | None, memory: npt.NDArray[np.float64], has: float, unsupported: str,
            host_memory: npt.NDArray[np.float64] | float = 0.0, host_has: float | None = None) -> str:
    """Why no (count, batch) of one device serves (arrays over its configurations)."""
    if not supported:
        return unsupported
    if host_has is not None and not (np.asarray(host_memory) <= host_has).any():
        return (f"does not fit in host memory: the offloaded layers need {np.min(host_memory) * unit_factor('B', 'GB'):.3g} GB "
                f"of host RAM at best, has {host_has * unit_factor('B', 'GB'):.3g} GB (give --host-memory if it has more)")
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
    """Rank the catalog's devices for serving (module docstring): offline, or under load where a rate or
    users are given (:func:`sizer.serving.load_search.recommend_under_load`).

    Parameters
    ----------
    request : InferenceRecommendRequest
        The model, its formats (pinned or searched), the targets (tokens/s per user and in total [1/s],
        time to first token [s]), the kinds of device and the objective; with a rate [1/s] or users,
        the load and its SLOs.
    catalog : Catalog or None
        The devices to rank (default: the built-in catalog).

    Returns
    -------
    InferenceRecommendResult
        One ranked row per device that serves, best first; the others rejected with the reason.
    """
    catalog = catalog if catalog is not None else load_catalog()
    arch, notes = served_architecture(request)
    offloading = _check_request(request, arch)
    if request.rate is not None or request.users is not None or request.burst is not None:
        from sizer.serving.load_search import recommend_under_load
        return recommend_under_load(request, catalog, arch, notes)
    prompt, output = _sequence_lengths(request)
    ttft_target = (float(request.time_to_first_token.to("s").magnitude)
                   if request.time_to_first_token is not None else None)
    devices, segments = production_devices(devices_of_kinds(catalog, request.kinds), request.consumer)
    # formats: a given one pins its dimension; offloaded layers keep the given (or the checkpoint's) weights: CPUs lack
    # W8A8 peaks
    pinned = request.weights is not None or offloading
    weights, format_notes = _searched_weights(request, pinned)
    kvs = [request.kv_cache.strip().lower()] if request.kv_cache else list(SEARCH_KV)
    host: DeviceTable | None = None
    host_notes: list[Assumption] = []
    rejected: list[RejectedOption] = []
    if offloading:
        host, host_notes, rejected, devices = _offload(request, arch, weights[0], catalog, devices)
    counts = device_counts(request.max_devices, arch.heads)
    found, reasons = _search_offline(request, arch, devices, weights, kvs, prompt, output, ttft_target, counts, host,
                                     offloading)
    ranked, unserved = _best_per_device(devices, found, reasons, pinned)
    assumptions = [*notes, *format_notes, *host_notes, *named_serving_runtime(request),
                   *_offline_assumptions(request, weights, kvs, pinned, prompt, output, counts),
                   segments_assumption(segments)]
    rows: list[InferenceOption | LoadOption] = list(ranked)
    return InferenceRecommendResult(task="inference", model=arch.name,
                                    weights=weights[0].name if pinned else "searched: " + ", ".join(f.name for f in weights),
                                    prompt_len=prompt,
                                    output_len=output, ranked=rows, rejected=[*rejected, *unserved],
                                    assumptions=assumptions, objective=request.objective, devices_searched=segments)


def _check_request(request: InferenceRecommendRequest, arch: Architecture) -> bool:
    """Refuse fields that do not go together; True where layers are offloaded to the host CPU."""
    check_gpu_layers(request.gpu_layers, arch)
    offloading = request.gpu_layers is not None and request.gpu_layers < arch.layers
    if not offloading:
        check_no_host(request.host_cpu, request.host_memory)
    if request.disaggregated and request.rate is None:
        raise InputError("disaggregated", True, "a request rate (rate): disaggregated pools are sized for Poisson arrivals")
    refuse_load_options_without_load(request)
    if (request.rate is not None or request.users is not None) and offloading:
        raise InputError("gpu_layers", request.gpu_layers, f"all {arch.layers} layers on the devices under load (rate "
                                                           "or users): offloaded layers are sized for a static batch only")
    return offloading


def _sequence_lengths(request: InferenceRecommendRequest) -> tuple[int, int]:
    """Prompt and output tokens per sequence: the prompt is the context length less the output where one is given."""
    prompt, output = request.prompt_len, request.output_len
    if request.context_length is not None:
        prompt = request.context_length - output
        if prompt < 1:
            raise InputError("context_length", request.context_length, f"more tokens than output_len ({output})")
    return prompt, output


def _searched_weights(request: InferenceRecommendRequest, pinned: bool) -> tuple[list[WeightFormat], list[Assumption]]:
    """The weight formats searched: the one given (or the checkpoint's), said as an assumption, or the common ones."""
    if pinned:
        fmt, format_notes = served_format(request)
        return [fmt], format_notes
    return searched_weights(request), []


def _offload(request: InferenceRecommendRequest, arch: Architecture, weights: WeightFormat, catalog: Catalog,
             devices: tuple[Device, ...]) -> tuple[DeviceTable, list[Assumption], list[RejectedOption], tuple[Device, ...]]:
    """With layers offloaded: the host CPU's table, its assumption, the devices that cannot offload (rejected) and
    the devices that can."""
    assert request.gpu_layers is not None  # offloading means some layers are on the host
    # the ranking's one join of its request and catalog: host_cpu is its only device name (sizer.asked)
    found = on_catalog(request, catalog).host(DEFAULT_HOST)
    host, note = host_table(request.gpu_layers, request.host_cpu, found, arch, weights, request.host_memory)
    rejected = [RejectedOption(device=d.id, name=d.name, reason=why) for d in devices
                if (why := offload_refusal(d, arch)) is not None]
    return host, [note], rejected, tuple(d for d in devices if offload_refusal(d, arch) is None)


def _search_offline(request: InferenceRecommendRequest, arch: Architecture, devices: tuple[Device, ...],
                    weights: list[WeightFormat], kvs: list[str], prompt: int, output: int, ttft_target: float | None,
                    counts: npt.NDArray[np.float64], host: DeviceTable | None,
                    offloading: bool) -> tuple[dict[int, list[tuple[SortKey, InferenceOption]]], dict[int, str]]:
    """Per device index, its best (key, row) of every format pair that serves, and the first reason one does not."""
    rent = serving_prices(devices, request.pricing)
    found: dict[int, list[tuple[SortKey, InferenceOption]]] = {}
    reasons: dict[int, str] = {}
    for fmt in weights:
        for kv_name in kvs:
            for i, option, reason in _offline_options(request, arch, devices, fmt, kv_name, prompt, output, ttft_target,
                                                      counts, host, offloading, rent):
                if option is not None:
                    found.setdefault(i, []).append(option)
                elif reason is not None:
                    reasons.setdefault(i, reason)
    return found, reasons


def _best_per_device(devices: tuple[Device, ...], found: dict[int, list[tuple[SortKey, InferenceOption]]],
                     reasons: dict[int, str], pinned: bool) -> tuple[list[InferenceOption], list[RejectedOption]]:
    """Per device its best row by the objective, ranked; and the devices no format serves on, with the reason."""
    options: list[tuple[SortKey, InferenceOption]] = []
    rejected: list[RejectedOption] = []
    for i, device in enumerate(devices):
        if i not in found:
            rejected.append(RejectedOption(device=device.id, name=device.name, reason=reasons.get(i, "no format serves")))
            continue
        usable = found[i]
        if not pinned:  # one 8-bit format per device: FP8 where it has the peak, else int8
            eight = preferred_eight_bit(o[1].weights for o in usable)
            usable = [o for o in usable if keeps_format(o[1].weights, eight)]
        options.append(min(usable, key=lambda o: o[0]))
    options.sort(key=lambda o: o[0])
    return [option.model_copy(update={"rank": rank}) for rank, (_, option) in enumerate(options, start=1)], rejected


def _offline_assumptions(request: InferenceRecommendRequest, weights: list[WeightFormat], kvs: list[str], pinned: bool,
                         prompt: int, output: int, counts: npt.NDArray[np.float64]) -> list[Assumption]:
    """What the offline ranking assumed: formats, lengths, the search, prices, the ranking and the range."""
    fmt = weights[0]
    s = speed_spread()
    return [Assumption(name="weights", value=(f"{fmt.name}: {fmt.bits:g} bits per weight" if pinned else
                       "searched: " + ", ".join(f.name for f in weights) + " (fp8 where the device has an FP8 "
                       "peak, else w8a8 where it has an int8 one); each row says its format"),
                       source="; ".join(dict.fromkeys(f.source for f in weights))),
            Assumption(name="KV cache", value=f"{' or '.join(kvs)}" + (" (searched)" if len(kvs) > 1 else "") +
                       f", {prompt} + {output} tokens per sequence",
                       source="layers x 2 x KV heads x head size x bytes x tokens"),
            Assumption(name="search", value=f"tensor parallel over 1, 2, 4 ... {int(counts.max())} devices; batches "
                       + (f"{request.batch}" if request.batch else "1 to 2048, about 25 % apart") + "; per device the "
                       f"count best by {request.objective}, at the largest batch that serves; time to first token "
                       "is one request's own prefill", source="sizer's default criterion"),
            Assumption(name="price", value=SERVING_PRICING[request.pricing], source="--pricing rent|buy|any; "
                       "sizer/formulas/tco.py hourly_price"),
            Assumption(name="ranking", value={"cost": "cost per million output tokens", "latency": "one "
                       "request's end-to-end time", "throughput": "output tokens/s per device"}[request.objective],
                       source="objective"),
            Assumption(name="range", value=f"speed {s['low']:g}-{s['high']:g} x expected", source=s["source"])]


@dataclass(frozen=True)
class _Grid:
    """Every (device, count, batch) of one format pair, evaluated by the engine, and which of them serve."""

    table: DeviceTable
    case: ServingCase
    d: npt.NDArray[np.int64]  # device index per configuration
    c: npt.NDArray[np.float64]  # devices per replica
    b: npt.NDArray[np.float64]  # concurrent sequences
    a: ServingArrays
    in_node: npt.NDArray[np.bool_]  # the replica's devices within one node (tensor parallel), or a layer split
    own_prefill: npt.NDArray[np.float64]  # one request's time to first token [s]
    own_prefill_limit: npt.NDArray[np.float64]  # its prompt's model FLOP, each unit's at its datasheet peak [s]
    per_user: npt.NDArray[np.float64]  # decode tokens/s per sequence
    total: npt.NDArray[np.float64]  # output tokens/s over all sequences
    ok: npt.NDArray[np.bool_]  # fits, computes and meets every target given


def _offline_grid(request: InferenceRecommendRequest, arch: Architecture, devices: tuple[Device, ...], fmt: WeightFormat,
                  kv_name: str, prompt: int, output: int, ttft_target: float | None, counts: npt.NDArray[np.float64],
                  host: DeviceTable | None, offloading: bool) -> _Grid:
    """Evaluate every (device, count, batch) of one format pair in one engine call, against the targets."""
    table = serving_table(devices, fmt)
    batches = np.asarray([float(request.batch)]) if request.batch is not None else BATCHES
    d, c, b = (g.ravel() for g in np.meshgrid(np.arange(len(devices)), counts, batches, indexing="ij"))
    split = default_split(request, fmt)
    case = ServingCase(arch, fmt, kv_cache_bytes_per_value(kv_name), prompt, output, split,
                       request.gpu_layers if offloading else None,
                       **(RuntimeMemory() if offloading else runtime_memory(request, split)),
                       moe=TENSOR_PARALLEL if split == Split.TENSOR and not offloading else None)  # as `sizer inference`
    a = evaluate_serving(case, table, d, c, b, host)
    # one request's time to first token is its own prefill (continuous batching admits prompts as they come)
    own = evaluate_serving(case, table, d, c, np.ones_like(b), host)
    own_prefill = own.prefill_seconds
    own_prefill_limit = np.broadcast_to(np.asarray(own.prefill_limit, dtype=float), own_prefill.shape)
    per_user = 1.0 / a.decode_seconds
    total = total_tokens_per_second(b, output, a.prefill_seconds, a.decode_seconds)
    runs = np.array([searched_refusal(request, fmt, device, kv_name) is None for device in devices])  # deployable picks only
    # tensor parallelism stays inside a node, as under load (a layer split's hosts share nothing but activations)
    in_node = (c <= table.devices_per_node[d]) if split == Split.TENSOR else np.ones_like(c, dtype=bool)
    ok = a.fits & table.supported[d] & runs[d] & in_node
    if case.split == Split.TENSOR:  # tensor ranks hold whole heads
        ok &= np.isin(c, [n for n in counts if splits_heads(int(n), arch)])
    if request.tokens_per_s_per_user is not None:
        ok &= per_user >= request.tokens_per_s_per_user
    if request.total_tokens_per_s is not None:
        ok &= total >= request.total_tokens_per_s
    if ttft_target is not None:
        ok &= own_prefill <= ttft_target
    return _Grid(table, case, d, c, b, a, in_node, own_prefill, own_prefill_limit, per_user, total, ok)


def _offline_options(request: InferenceRecommendRequest, arch: Architecture, devices: tuple[Device, ...],
                     fmt: WeightFormat, kv_name: str, prompt: int, output: int, ttft_target: float | None,
                     counts: npt.NDArray[np.float64], host: DeviceTable | None, offloading: bool,
                     rent: PriceLookup) -> Iterator[tuple[int, tuple[SortKey, InferenceOption] | None, str | None]]:
    """Per device of one format pair: (index, (key, option) or None, the reason it cannot serve or None)."""
    g = _offline_grid(request, arch, devices, fmt, kv_name, prompt, output, ttft_target, counts, host, offloading)
    for i, device in enumerate(devices):
        rows = np.flatnonzero(g.d == i)
        good = rows[g.ok[rows]]
        if (refused := searched_refusal(request, fmt, device, kv_name)) is not None:
            yield i, None, refused
            continue
        if not len(good) and g.a.fits[rows].any() and not (g.a.fits & g.in_node)[rows].any():
            yield i, None, node_reason(int(g.table.devices_per_node[i]))
            continue
        if not len(good):
            yield i, None, _reason(g.a.fits[rows], g.per_user[rows], g.total[rows], g.own_prefill[rows],
                                   bool(g.table.supported[i]), request.tokens_per_s_per_user, request.total_tokens_per_s,
                                   ttft_target, g.a.memory[rows], g.table.memory[i], unsupported_reason(fmt),
                                   np.broadcast_to(g.a.host_memory, g.b.shape)[rows],
                                   float(host.memory[0]) if host is not None else None)
            continue
        yield i, _offline_option(request, g, i, device, good, output, rent, fmt, kv_name), None


def _offline_option(request: InferenceRecommendRequest, g: _Grid, i: int, device: Device, good: npt.NDArray[np.int64],
                    output: int, rent: PriceLookup, fmt: WeightFormat,
                    kv_name: str) -> tuple[SortKey, InferenceOption]:
    """One device's row of one format pair: per count the largest serving batch, then the count best by the objective."""
    scored = []
    for r in largest_batch_per_count(good, g.c, g.b):
        price, basis, used = rent(i, int(g.c[r]))  # an offer that runs this many devices, of the asked basis
        hourly = price * g.c[r] if price is not None else None
        per_million = usd_per_million(hourly, 1, float(g.total[r]))
        key = offline_key(request.objective, per_million, basis, g.c[r],
                          float(g.own_prefill[r] + (output - 1) * g.a.decode_seconds[r]), g.total[r])
        scored.append((key, hourly, per_million, r, price, basis, used))
    key, hourly, per_million, r, price, basis, used = min(scored, key=lambda x: x[0])
    # the optimistic end never beats the decode step's memory-bound part at datasheet bandwidth
    step_limit = float(g.a.decode_memory[r]) * g.table.efficiencies[i].memory
    user_limit = 1.0 / step_limit if step_limit > 0 else math.inf
    a, c, b, table = g.a, g.c, g.b, g.table
    return key, InferenceOption(
        rank=0, device=device.id, name=device.name, kind=device.kind, count=int(c[r]), batch=int(b[r]),
        precision=table.precisions[i], decode_tokens_per_s=_speed_within(g.per_user[r], user_limit, "tokens/s"),
        total_tokens_per_s=_speed_within(g.total[r], user_limit * b[r], "tokens/s"),
        time_to_first_token=_time(g.own_prefill[r], "ms", limit=float(g.own_prefill_limit[r])),
        memory_per_device=QuantityOut.convert(a.memory[r], "B", "GB"),
        device_memory=QuantityOut.convert(table.memory[i], "B", "GB"),
        rent_per_hour=QuantityOut(value=hourly, unit="USD/hour") if price is not None else None,
        cost_per_million_tokens=(cost_out(per_million, basis, speed_spread())
                                 if per_million is not None and basis is not None else None),
        price_basis=basis, price=used,
        decode_bound="compute" if a.decode_compute[r] > a.decode_memory[r] else "memory",
        tp=int(c[r]) if g.case.split == Split.TENSOR else 1, weights=fmt.name, kv_cache=kv_name, quality=quality_note(fmt))
