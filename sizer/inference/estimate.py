"""`sizer inference` / `POST /v1/inference`: serving one model on ``count`` devices.

>>> r = estimate_inference(InferenceRequest(model="llama-2-7b", device="A100 80GB SXM", weights="fp16", batch=1))
>>> r.fits, round(r.weights_memory.value, 1)  # 6.74e9 parameters x 2 B
(True, 13.5)
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
from pydantic import ConfigDict, Field

from sizer.datafile import load_yaml
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.schema import Device
from sizer.engine.constants import (FRAMEWORK_OVERHEAD_SOURCE, PREFILL_CHUNK_TOKENS, SERVING_MATRIX_EFFICIENCY,
                                    SERVING_MEMORY_EFFICIENCY, SERVING_SOURCE, SERVING_STEP_OVERHEAD)
from sizer.errors import InputError, require_device
from sizer.inference.formats import KV_CACHE_BYTES, WeightFormat, kv_cache_bytes_per_value, weight_format
from sizer.inference.layer_offload import host_memory_note, offload_host
from sizer.inference.local import kernel_assumption, local_runtime, local_table, prefill_seconds, wired_device
from sizer.inference.local_split import DeviceShare, split_layers
from sizer.inference.serving import (ServingCase, check_servable, check_tensor_ranks, compute_bound_batch, evaluate_serving,
                                     serving_table,
                                     stored_weight_bytes, total_tokens_per_second)
from sizer.results import Assumption, Model, QuantityOut, RangeOut, Suggestion, unit_factor
from sizer.formulas.tco import PriceBasis, Pricing, hourly_price
from sizer.units import Quantity, parse_count
from sizer.workloads.request import RequestModel
from sizer.inference.capacity import serve_load
from sizer.inference.simulate import batching_table, runtime_replica
from sizer.inference.under_load import (CapacityOut, ServingCostOut, LatencyOut, LoadFields, LoadOut, capacity_out, check_runtime,
                                        cost_out, default_split, delivered, latency_out, load_assumptions, load_out,
                                        parse_load, runtime_assumption, runtime_memory, serving_runtime,
                                        usd_per_million)
from sizer.workloads.architecture import Architecture
from sizer.workloads.registry import checkpoint_weights, decoder_for_params, resolve_model
from sizer.workloads.source import Source
from sizer.memo import registered_cache

SPREAD_FILE = Path(__file__).with_name("error_spread.yaml")
MAX_TOKENS = 10_000_000


@registered_cache()
def speed_spread() -> dict:
    """Factors of the expected speed bounding a range, from the held-out rows (error_spread.yaml)."""
    return load_yaml(SPREAD_FILE, "error_spread")["speed"]


class ServedModel(LoadFields, RequestModel):
    """What is served and how it is stored: shared by inference and its recommendation."""

    model: Source | None = Field(None, description="architecture by name, or a config.json path (CLI)")
    params: float | str | None = Field(None, description="parameter count, for a generated Llama-style decoder")
    weights: str | None = Field(None, max_length=40, description="fp32, bf16, fp16, fp8, int8, int4, q4_0, q4_k_m, q8_0, "
                                "gptq-int4-g128, awq-int4-g128, nvfp4, mxfp4 ... (default: the format the model's published "
                                "checkpoint is stored in: bf16, or mxfp4 for gpt-oss)")
    kv_cache: str = Field("fp16", max_length=10, description=f"KV-cache storage: {', '.join(KV_CACHE_BYTES)}")
    prompt_len: int = Field(1024, ge=1, le=MAX_TOKENS, description="prompt tokens per sequence")
    output_len: int = Field(256, ge=1, le=MAX_TOKENS, description="generated tokens per sequence")
    gpu_layers: int | None = Field(None, ge=0, le=10_000, description="layers on the devices, the rest offloaded to the "
                                                                        "host CPU (llama.cpp --n-gpu-layers; default: all)")
    host_cpu: str | None = Field(None, max_length=100, description="the catalog CPU that runs offloaded layers "
                                                                   "(default: Ryzen 9 7950X, a DDR5 desktop)")
    host_memory: str | dict | None = Field(None, description="with gpu_layers: RAM of the host, e.g. '128 GB', checked "
                                                             "against the offloaded layers' weights and KV cache "
                                                             "(default: the host CPU's in the catalog)")


class InferenceRequest(ServedModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"model": "llama-2-70b", "device": "H100 SXM", "count": 2, "weights": "fp8", "batch": 64},
        {"params": "7B", "device": "RTX 4090", "weights": "q4_k_m", "batch": 1}]})

    device: str | None = Field(None, max_length=100, description="the device (or give have)")
    count: int = Field(1, ge=1, le=1024, description="devices, tensor parallel")
    have: list[str] | None = Field(None, max_length=8, description="hardware you already have, e.g. ['8x A100 80GB SXM']: "
                                                                 "the answer is for these only")
    batch: int = Field(1, ge=1, le=1_000_000, description="concurrent sequences")
    devices: list[str] | None = Field(None, min_length=2, max_length=16, description="unequal devices of one machine "
                                      "(e.g. ['RTX 3090', 'RTX 4090']): layers split over them in proportion to their "
                                      "memory, as llama.cpp does; instead of device and count")
    runtime: str | None = Field(None, max_length=40, description="the runtime: llama.cpp (default for GGUF weights, "
                                "CPUs and unified memory) or a serving engine; default: by device and format, stated")
    depth: int = Field(0, ge=0, le=MAX_TOKENS, description="tokens already in the KV cache before the prompt (a "
                                                           "conversation's earlier turns; llama-bench -d)")
    rent_price: str | dict | None = Field(None, description="per device, e.g. '2.5 USD/hour' (default: the catalog's)")
    pricing: Pricing = Field("rent", description="rent (a cloud offer that runs count devices), buy (amortised purchase "
                             "plus energy) or any (rent, else buy); the cost says its price_basis")


class InferenceResult(Model):
    model: str
    device: str
    count: int
    weights: str
    kv_cache: str
    batch: int
    prompt_len: int
    output_len: int
    decode_tokens_per_s: RangeOut  # per sequence
    decode_latency: RangeOut  # per token
    total_tokens_per_s: RangeOut  # output tokens over all sequences, prefill included
    prefill_tokens_per_s: RangeOut
    time_to_first_token: RangeOut
    memory_per_device: QuantityOut
    weights_memory: QuantityOut
    kv_cache_memory: QuantityOut
    activations_memory: QuantityOut
    reserve_memory: QuantityOut
    device_memory: QuantityOut
    fits: bool
    max_batch: int
    decode_bound: str  # "memory" or "compute" at this batch
    compute_bound_batch: int | None
    cost_per_million_tokens: ServingCostOut | None  # offline: at the static batch; under load: at that load
    energy_per_token: RangeOut | None  # None: the catalog has no power figure for the device
    assumptions: list[Assumption]
    scenario: str = "offline"  # "offline": a static batch; "load": a rate or users under continuous batching
    split: str = "tensor"
    load: LoadOut | None = None
    latency: LatencyOut | None = None
    capacity: CapacityOut | None = None
    output_tokens_per_s: QuantityOut | None = None  # under load, over all replicas
    prompt_and_output_tokens_per_s: QuantityOut | None = None  # under load, over all replicas: prompt + output tokens
    per_device: list[DeviceShare] | None = None  # a split over unequal devices: each device's layers and memory
    suggestions: list[Suggestion] = []  # where it does not fit: the changes that would (sizer.plan.suggestions)


def served_format(request: ServedModel) -> tuple[WeightFormat, list[Assumption]]:
    """The weight format asked for, or else the one the model's published checkpoint is stored in
    (bf16 where the catalog names none), said as an assumption."""
    if request.weights is not None:
        return weight_format(request.weights), []
    name = checkpoint_weights(request.model) or "bf16"
    why = ("the format its published checkpoint is stored in (catalog/models.yaml checkpoint_weights)" if name != "bf16"
           else "16 bits, as most published checkpoints; give --weights for another")
    return weight_format(name), [Assumption(name="weight format", value=f"{name}, not given: {why}",
                                            source=weight_format(name).source)]


def served_architecture(request: ServedModel) -> tuple[Architecture, list[Assumption]]:
    """The architecture a request names (a model, or a decoder shaped from a parameter count)."""
    if (request.model is None) == (request.params is None):
        raise InputError("model", request.model, "either a model or a parameter count (params), not both")
    if request.model is not None:
        arch = resolve_model(request.model)
        note = Assumption(name="model", value=f"{arch.name}: {arch.layers} layers of {arch.hidden}, {arch.heads} heads, "
                          f"{arch.kv_heads} key/value heads of {arch.head_size}", source=arch.source)
    else:
        arch, why = decoder_for_params(parse_count("params", request.params))
        note = Assumption(name="model", value=why, source=arch.source)
    check_servable(arch)
    return arch, [note]


def _speed(value: float, unit: str) -> RangeOut:
    s = speed_spread()
    return RangeOut.model_construct(low=float(value * s["low"]), expected=float(value), high=float(value * s["high"]), unit=unit)


def _speed_within(value: float, limit: float, unit: str) -> RangeOut:
    """A speed's range whose optimistic end never beats ``limit`` (the physical bound, same unit) [1/s]."""
    r = _speed(value, unit)
    high = max(min(r.high, limit), r.expected)
    return RangeOut.model_construct(low=min(r.low, high), expected=r.expected, high=high, unit=unit)


def _time(seconds: float, unit: str) -> RangeOut:
    s = speed_spread()
    return RangeOut.of_seconds((seconds / s["high"], seconds, seconds / s["low"]), unit)


def _per_output(value: float, unit: str) -> RangeOut:
    """A cost or energy per output token: inverse to the speed."""
    s = speed_spread()
    return RangeOut.model_construct(low=float(value / s["high"]), expected=float(value), high=float(value / s["low"]), unit=unit)


def rent_per_hour(device: Device, given: object = None, pricing: Pricing = "rent",
                  count: int = 1) -> tuple[float | None, PriceBasis | None, Assumption]:
    """USD per device-hour of the ``pricing`` asked (given, an offer that runs ``count`` devices, or the
    amortised purchase), its basis, and where it comes from: the one price function,
    :func:`sizer.formulas.tco.hourly_price`. By default a rent: a cost per token is quoted at a price
    someone charges unless buy or any is asked."""
    price = hourly_price(device, given=given, pricing=pricing, count=count)
    name = "rent price" if pricing == "rent" else "price"
    if price.hourly is None:
        return None, None, Assumption(name=name, value=f"unknown: {price.source}",
                                      source="give rent_price (--rent-price), or pricing buy or any, for a cost per token")
    return float(price.hourly.to("USD/hour").magnitude), price.price_basis, Assumption(name=name, value=price.label,
                                                                                       source=price.source)


def serving_assumptions(arch: Architecture, case: ServingCase, table, i: int) -> list[Assumption]:
    fmt = case.weights
    s = speed_spread()
    notes = [
        Assumption(name="weights", value=f"{fmt.name}: {fmt.bits:g} bits per weight, "
                   f"{stored_weight_bytes(arch, fmt) * 8:.3g} bits per parameter on average over all "
                   f"{arch.params_total():.4g} (where the format keeps some at 16 bits); matrix products at "
                   f"{table.precisions[i]}", source=fmt.source),
        Assumption(name="KV cache", value=f"{case.kv_bytes:g} B per value: layers x 2 x {arch.kv_heads} KV heads x "
                   f"{arch.head_size} x bytes x tokens; heads split over tensor ranks, never a head", source="GQA-aware KV cache "
                   "(Ainslie et al. 2023); cursor.so 'Why GPT-3.5 is (mostly) cheaper than Llama 2': 320 KB/token for Llama-2-70B")
        if not arch.mla else
        Assumption(name="KV cache", value=f"{case.kv_bytes:g} B per value: layers x ({arch.kv_lora_rank} latent + "
                   f"{arch.rope_head_dim} rotary key) x bytes x tokens, whole on every tensor rank (multi-head latent "
                   "attention)", source="DeepSeek-AI 2024, DeepSeek-V2 §2.1.2 and Table 1 (docs/references.md [deepseek-v2])"),
        Assumption(name="decode", value=f"one token per sequence at the mean context prompt + output/2 = {case.mean_context:g} "
                   "tokens: weights plus KV cache read per step (memory-bound), or FLOP (compute-bound), per layer",
                   source="per-layer roofline (sizer.engine.roofline, INFERENCE pass)"),
        Assumption(name="prefill", value="all prompts of the batch at once, causal attention at half the square, "
                   "LM head on the last token; time to first token = prefill", source="sizer.inference.serving"),
        Assumption(name="serving efficiencies", value=f"{SERVING_MEMORY_EFFICIENCY:g} of memory bandwidth, "
                   f"{SERVING_MATRIX_EFFICIENCY:g} of the matrix peak, {SERVING_STEP_OVERHEAD * unit_factor('s', 'ms'):.3g} ms per forward "
                   "pass (GPUs and accelerators)", source=SERVING_SOURCE),
        Assumption(name="range", value=f"speed {s['low']:g}-{s['high']:g} x expected (times: the inverse)", source=s["source"]),
        Assumption(name="runtime reserve", value=f"{table.framework_overhead[i] / 2 ** 30:g} GiB per device", source=FRAMEWORK_OVERHEAD_SOURCE),
        Assumption(name="activations", value=f"the widest layer's tensors over at most {PREFILL_CHUNK_TOKENS} prompt "
                   "tokens at once, and each sequence's FP32 logits", source="runtimes prefill in chunks "
                   "(TensorRT-LLM max_num_tokens 8192; vLLM chunked prefill)"),
    ]
    if table.precisions[i] != fmt.compute and fmt.compute != "mixed":
        notes.append(Assumption(name="compute precision", value=f"{table.devices[i].name} has no {fmt.compute}: weights "
                                f"dequantised to {table.precisions[i]}", source="weight-only kernels (W8A16)"))
    if arch.sliding_window:
        notes.append(Assumption(name="sliding window", value=f"{arch.sliding_blocks} of {arch.layers} blocks attend over "
                                f"the last {arch.sliding_window} tokens: their KV cache holds and reads that window only "
                                f"({arch.kv_blocks(case.context):.3g} blocks' worth per token at {case.context} tokens), "
                                "their prefill computes the band", source=arch.source, verified=arch.verified))
    if arch.moe:
        notes.append(Assumption(name="mixture of experts", value=f"weights of all {arch.experts} experts in memory; a token "
                                f"computes with and reads {arch.experts_per_token}; a batch of B reads E(1-(1-k/E)^B) "
                                "distinct experts", source="uniform routing (Fedus et al. 2022, Switch Transformer)"))
    if case.context > arch.max_context:
        notes.append(Assumption(name="context", value=f"{case.context} tokens, beyond the model's {arch.max_context}",
                                source=arch.source))
    return notes


def refused_format(fmt, device: Device) -> str:
    """Why a weight-and-activation format cannot run on a device (it has no such peak in the catalog)."""
    return (f"a format {device.name} computes: the catalog has no {fmt.compute} peak for it, which {fmt.name} "
            "(weights and activations quantised) needs; weight-only formats (int8, int4, awq-int4-g128, q4_k_m) "
            "run at its 16-bit rate")


def estimate_inference(request: InferenceRequest, catalog: Catalog | None = None) -> InferenceResult:
    """Memory, time to first token, decode and total tokens/s, cost and energy of serving a model;
    with a rate or users, also latency percentiles, capacity and replicas under continuous batching.
    (The facade adds what would make it fit where it does not.)"""
    catalog = catalog if catalog is not None else load_catalog()
    if request.devices is not None:
        if request.device is not None or request.count != 1:
            raise InputError("devices", request.devices, "the devices alone (not with device or count)")
        request = request.model_copy(update={"device": request.devices[0], "count": 1, "split": "layer"})
    device = catalog.find(require_device(request))
    arch, notes = served_architecture(request)
    fmt, format_notes = served_format(request)
    notes = notes + format_notes
    kv = kv_cache_bytes_per_value(request.kv_cache)
    load, lengths, slo = parse_load(request)
    split = default_split(request, fmt)
    if split == "tensor":
        check_tensor_ranks(request.count, arch)
    if split == "layer" and request.count > arch.layers:
        raise InputError("count", request.count, f"at most {arch.layers} devices: a layer split gives each at least one layer")
    if request.prompt_len + request.output_len > MAX_TOKENS:
        raise InputError("output_len", request.output_len, f"prompt and output of at most {MAX_TOKENS:,} tokens together")
    host, offload_notes = offload_host(request.gpu_layers, request.host_cpu, device, arch, fmt, catalog,
                                       request.host_memory)
    if host is not None and load is not None:
        raise InputError("gpu_layers", request.gpu_layers, f"all {arch.layers} layers on the devices under load (rate or "
                                                           "users): offloaded layers are sized for a static batch only")
    local, local_notes = local_runtime(request.runtime, device, fmt)
    if request.devices is not None and (local is None or load is not None or request.gpu_layers is not None):
        raise InputError("devices", request.devices, "a local runtime (llama.cpp), one static batch and every layer "
                                                     "on the devices for a split over unequal devices")
    if local is not None and host is not None:  # offloaded layers run the runtime's CPU kernels, in the same RAM
        host = dataclasses.replace(local_table(host.devices[0], fmt, local.profile), memory=host.memory)
    if local is not None:
        device, wired_notes = wired_device(device)
        table = local_table(device, fmt, local.profile)
        local_notes += [*wired_notes, kernel_assumption(local.profile, device, fmt)]
    else:
        table = serving_table((device,), fmt)
    if not table.supported[0]:
        if fmt.activations:
            raise InputError("weights", request.weights, refused_format(fmt, device))
        raise InputError("device", request.device, "a device with a 16- or 32-bit rate in the catalog")
    case = ServingCase(arch, fmt, kv, request.prompt_len, request.output_len, split,
                       request.gpu_layers if host is not None else None, depth=request.depth,
                       **(runtime_memory(request, split) if host is None and local is None else {}))
    a = evaluate_serving(case, table, 0, request.count, float(request.batch), host)
    prefill, step = float(a.prefill_seconds[0]), float(a.decode_seconds[0])
    # the decode step's bytes at the datasheet bandwidth: no step is faster (the range's optimistic end)
    datasheet = device.memory_bandwidth.si("memory_bandwidth", "[information]/[time]")
    step_limit = float(a.decode_memory[0]) * float(table.bandwidth[0]) / datasheet if host is None else 0.0
    if local is not None and host is None and load is None:  # the prompt in micro-batches, one sequence after another
        prefill = request.batch * prefill_seconds(arch, fmt, table, local.profile.ubatch, request.prompt_len,
                                                  request.depth, kv)
        a = dataclasses.replace(a, prefill_seconds=np.asarray([prefill]))
    per_device = None
    if request.devices is not None:  # unequal devices: each its share of the layers, the times summed
        answer = split_layers(arch, [catalog.find(n, "devices") for n in request.devices], fmt, local.profile, case,
                              request.batch)
        prefill, step, per_device = answer.prefill_seconds, answer.decode_seconds, answer.shares
        step_limit = 0.0  # no single-device limit for a chain of unequal devices
        most = max(per_device, key=lambda d: d.memory.value / d.device_memory.value)
        a = dataclasses.replace(a, prefill_seconds=np.asarray([prefill]), decode_seconds=np.asarray([step]),
                                fits=np.asarray([answer.fits]), max_batch=np.asarray([answer.max_batch]),
                                weights=np.asarray([most.weights_memory.value * unit_factor("GB", "B")]),
                                kv_cache=np.asarray([most.kv_cache_memory.value * unit_factor("GB", "B")]))
        table = dataclasses.replace(table, memory=np.asarray([most.device_memory.value * unit_factor("GB", "B")]))
    total = float(total_tokens_per_second(np.asarray([float(request.batch)]), request.output_len, a.prefill_seconds,
                                          a.decode_seconds)[0])
    price, price_basis, price_note = rent_per_hour(device, request.rent_price, request.pricing, request.count)
    tdp = float(device.tdp.quantity("tdp", "[power]").to("W").magnitude) if device.tdp is not None else None
    s = speed_spread()
    cost = None
    if price is not None and a.fits[0]:  # a setup that does not fit serves nothing: no cost per token
        per_token = Quantity(price * request.count, "USD/hour") / Quantity(total, "1/s")
        cost = cost_out(float(per_token.to("USD").magnitude) * 1e6, price_basis, s)
    energy = (_per_output(float((Quantity(tdp * request.count, "W") / Quantity(total, "1/s")).to("J").magnitude), "J")
              if tdp is not None else None)
    turn = compute_bound_batch(case, table, 0, request.count, host=host)
    gb = lambda b: QuantityOut.convert(float(np.asarray(b).ravel()[0]), "B", "GB")  # noqa: E731
    energy_note = (Assumption(name="energy", value=f"TDP {tdp:g} W x {request.count} devices over the total tokens/s",
                              source=device.tdp.source) if tdp is not None else
                   Assumption(name="energy", value=f"not estimated: the catalog has no power figure for {device.name}",
                              source="catalog tdp"))
    if per_device is not None:
        shares = ", ".join(f"{d.device} {d.layers} layers" for d in per_device)
        local_notes.append(Assumption(name="layer split", value=f"{shares}: layers in proportion to each device's memory, "
                                      "a token passes them in turn (each device's time for its own layers, summed); "
                                      "memory and fit shown for the fullest device, every device in per_device; no "
                                      "cost or energy per token (not summed over unequal devices)",
                                      source="llama.cpp --split-mode layer, "
                                      "--tensor-split (default: proportional to free memory)"))
    split_note = ([Assumption(name="layer split", value=f"layers split over {request.count} devices, each token passes "
                              "them in turn: per token the time of one device holding every layer (no tensor-parallel "
                              "collectives; the hop between devices neglected)", source="llama.cpp --split-mode layer "
                              "(its default)")] if split == "layer" and request.count > 1 else [])
    fit_note = ([] if a.memory[0] <= table.memory[0] else [Assumption(
        name="does not fit", value=f"needs {float(a.memory[0]) / 1e9:.3g} GB per device of {float(table.memory[0]) / 1e9:.3g} GB: "
        "the speeds are what the devices would reach with the memory, and no cost per token is given",
        source="memory per device against the catalog")])
    if host is not None:
        offload_notes.append(host_memory_note(float(np.asarray(a.host_memory).ravel()[0]), host))
        if tdp is not None:
            energy_note = energy_note.model_copy(update={"value": energy_note.value + " (the host CPU's power not counted)"})
    share_note = ([Assumption(name="runtime memory", value=f"{case.memory_share:.0%} of device memory for weights, "
                              f"activations and KV cache, {case.kv_free_share:.0%} of what they leave to the cache "
                              f"({serving_runtime(request).name}'s default, as the largest batch and the fit use it)",
                              source=serving_runtime(request).profile.sources)]
                  if (case.memory_share < 1 or case.kv_free_share < 1) and device.kind != "cpu" else [])
    depth_note = ([Assumption(name="depth", value=f"{request.depth} tokens already in the KV cache: the prompt attends "
                              "over them too, and every generated token reads their keys and values",
                              source="llama-bench -d (context depth)")] if request.depth else [])
    serving_notes = serving_assumptions(arch, case, table, 0)
    if local is not None:  # the runtime's fitted kernels replace the data-centre serving efficiencies
        serving_notes = [n for n in serving_notes if n.name != "serving efficiencies"]
    assumptions = [*notes, *local_notes, *fit_note, *serving_notes, *depth_note, *split_note, *offload_notes,
                   *share_note, price_note, energy_note]
    if per_device is not None:
        cost = energy = None
        energy_note = Assumption(name="energy", value="not estimated for unequal devices", source="catalog tdp")
    fields = dict(
        model=arch.name, device=" + ".join(d.device for d in per_device) if per_device else device.name,
        count=len(per_device) if per_device else request.count, weights=fmt.name, kv_cache=request.kv_cache.strip().lower(),
        batch=request.batch, prompt_len=request.prompt_len, output_len=request.output_len,
        decode_tokens_per_s=_speed_within(1.0 / step, 1.0 / step_limit if step_limit > 0 else math.inf, "tokens/s"),
        decode_latency=RangeOut.of_seconds((max(step / s["high"], min(step_limit, step)), step, step / s["low"]), "ms"),
        total_tokens_per_s=_speed_within(total, request.batch / step_limit if step_limit > 0 else math.inf, "tokens/s"),
        prefill_tokens_per_s=_speed(request.batch * request.prompt_len / prefill, "tokens/s"),
        time_to_first_token=_time(prefill, "ms"), memory_per_device=gb(a.memory), weights_memory=gb(a.weights),
        kv_cache_memory=gb(a.kv_cache), activations_memory=gb(a.activations), reserve_memory=gb(a.reserve),
        device_memory=gb(table.memory[0]), fits=bool(a.fits[0]), max_batch=int(a.max_batch[0]),
        decode_bound="compute" if a.decode_compute[0] > a.decode_memory[0] else "memory", compute_bound_batch=turn,
        cost_per_million_tokens=cost, energy_per_token=energy, split=split, per_device=per_device)
    if load is None:
        return InferenceResult(**fields, assumptions=assumptions)

    # under load: continuous batching on as many replicas as the load needs
    engine = serving_runtime(request)
    check_runtime(engine, fmt, device)
    replica = runtime_replica(engine, arch, fmt, kv, batching_table((device,), fmt), 0, request.count, split,
                              max_running=request.max_running, token_budget=request.token_budget,
                              prefix_hit=request.prefix_cache_hit)
    answer = serve_load(replica, load, lengths, slo, replicas=request.replicas)
    if not a.fits[0]:  # a deployment that does not fit serves nothing: no replica count, no SLO met
        answer = dataclasses.replace(answer, replicas=None, slo_met=False)
    replicas = answer.replicas or 1
    out_rate, all_rate = delivered(load, lengths, replicas, answer.run,
                                   kept_up=answer.run.complete and answer.utilisation <= 1.0)
    hourly, basis, hourly_note = rent_per_hour(device, request.rent_price, request.pricing, request.count)
    per_million = usd_per_million(hourly, request.count * replicas, out_rate) if answer.replicas else None
    load_cost = cost_out(per_million, basis, s) if per_million is not None else None
    load_energy = (_per_output(tdp * request.count * replicas / out_rate, "J") if tdp is not None and out_rate > 0 else None)
    notes_load = [runtime_assumption(engine, request.runtime is not None),
                  *load_assumptions(load, lengths, slo, answer, split, replica.max_batch, replica.token_budget,
                                    replica.prefix_hit)]
    fields.update(scenario="load", cost_per_million_tokens=load_cost, energy_per_token=load_energy,
                  load=load_out(load, lengths), latency=latency_out(answer.run), capacity=capacity_out(answer, slo),
                  output_tokens_per_s=QuantityOut(value=out_rate, unit="tokens/s"),
                  prompt_and_output_tokens_per_s=QuantityOut(value=all_rate, unit="tokens/s"),
                  fits=bool(a.fits[0]) and answer.run.kv_capacity > 0)
    # under load the serving runtime runs the replicas (a local runtime's choice and kernels were the static answer's)
    assumptions = [n for n in assumptions if n.name not in ("runtime", "runtime kernels")]
    return InferenceResult(**fields, assumptions=[*assumptions, *notes_load, Assumption(
        name="cost under load", value=("none: no replica count serves the load within the SLOs" if answer.replicas is None
                                       else f"{replicas} replica(s) x {request.count} devices at {hourly:.4g} USD/hour each "
                                       f"({'rent' if basis == 'rent' else 'amortised purchase, not a rent'}) over "
                                       f"{out_rate:.4g} output tokens/s") if hourly is not None else "no price known",
        source=hourly_note.source)])
