"""`sizer inference` / `POST /v1/inference`: serving one model on ``count`` devices.

>>> r = estimate_inference(InferenceRequest(model="llama-2-7b", device="A100 80GB SXM", weights="fp16", batch=1))
>>> r.fits, round(r.weights_memory.value, 1)  # 6.74e9 parameters x 2 B
(True, 13.5)
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sizer.asked import Asked, on_catalog
from sizer.choices import GGML_KV_CACHES, DeviceKind, KvCache, Split
from sizer.datafile import load_yaml
from sizer.engine.constants import (
    FRAMEWORK_OVERHEAD_SOURCE,
    SERVING_MATRIX_EFFICIENCY,
    SERVING_MEMORY_EFFICIENCY,
    SERVING_SOURCE,
    SERVING_STEP_OVERHEAD,
)
from sizer.errors import InputError
from sizer.formulas.tco import Pricing, hourly_price
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.nodes import node_layout
from sizer.hardware.schema import Device
from sizer.local.machine import (
    kernel_assumption,
    local_runtime,
    local_table,
    prefill_seconds,
    run_settings,
    wired_device,
)
from sizer.local.split import check_unequal_devices, layer_shares, split_layers, split_ratios
from sizer.measured import inference_answer
from sizer.memo import registered_cache
from sizer.passes.arithmetic import (
    ServingCase,
    check_servable,
    check_tensor_ranks,
    compute_bound_batch,
    evaluate_serving,
    head_splitting_ranks,
    host_share,
    serving_table,
    splits_heads,
    stored_weight_bytes,
    tensor_replicas,
    total_tokens_per_second,
    unfused_attention_seconds,
)
from sizer.passes.layer_offload import host_memory_note, offload_host
from sizer.passes.moe_decode import MOE_LAYER_VERIFIED, TENSOR_PARALLEL, MoeLayout, layout_note, layout_refusal
from sizer.request_edits import edited
from sizer.results import Assumption, PriceBasis, QuantityOut, RangeOut, unit_factor
from sizer.runtimes.formats import (
    WeightFormat,
    ggml_kv_refusal,
    kv_cache_bytes_per_value,
    quality_note,
    weight_format,
)
from sizer.runtimes.local_runtimes import device_family
from sizer.runtimes.precision_support import generation, weight_mode
from sizer.runtimes.serving_runtimes import DEFAULT_SERVING_RUNTIME
from sizer.schemas.serving import DeviceShare, InferenceResult, ServingCostOut
from sizer.schemas.serving_requests import MAX_TOKENS, InferenceRequest, ServedModel
from sizer.serving.benchmark_load import benchmark_notes, scale_out_note, serve_benchmark
from sizer.serving.capacity import serve_load
from sizer.serving.production import headroom_assumption, max_utilisation
from sizer.serving.replicas import SOURCE as REPLICAS_SOURCE
from sizer.serving.replicas import replica_batches, replicas_note, replicated
from sizer.serving.serving_ranges import assumption as ranges_assumption
from sizer.serving.serving_ranges import for_load, ranged
from sizer.serving.under_load import (
    capacity_out,
    check_runtime,
    check_split,
    cost_out,
    default_split,
    delivered,
    latency_out,
    load_assumptions,
    load_out,
    parse_load,
    runtime_assumption,
    runtime_memory,
    serving_runtime,
    tuned_assumption,
    tuned_matrix,
    usd_per_million,
)
from sizer.simulator.simulate import batching_table, runtime_replica
from sizer.units import Quantity
from sizer.workloads.architecture import Architecture
from sizer.workloads.decoder_shape import decoder_for_params
from sizer.workloads.registry import checkpoint, checkpoint_weights, resolve_model

if TYPE_CHECKING:  # names for annotations only
    from sizer.engine.devices import DeviceTable
    from sizer.passes.arithmetic import ServingArrays
    from sizer.runtimes.runtime import Runtime
    from sizer.serving.capacity import Slo
    from sizer.simulator.traffic import Lengths, Load

SPREAD_FILE = Path(__file__).with_name("error_spread.yaml")


@registered_cache()
def speed_spread() -> dict[str, Any]:
    """Factors of the expected speed bounding a range, from the held-out rows (error_spread.yaml).

    Parameters
    ----------
    None

    Returns
    -------
    dict
        ``low`` and ``high`` [1]: the expected speed times these bound the range; ``source``: where they were fitted.
    """
    spread: dict[str, Any] = load_yaml(SPREAD_FILE, "error_spread")["speed"]
    return spread






def served_format(request: ServedModel) -> tuple[WeightFormat, list[Assumption]]:
    """The weight format asked for, or else the one the model's published checkpoint is stored in
    (bf16 where the catalog names none), said as an assumption.

    Parameters
    ----------
    request : ServedModel
        Its ``weights`` (the format, found where the request was built, or None) and ``model``.

    Returns
    -------
    tuple of (WeightFormat, list of Assumption)
        The format, and the assumption saying why where it was not given (else none).
    """
    if request.weights is not None:
        fmt = request.weights
        note = quality_note(fmt) if fmt.name != checkpoint_weights(request.model) else None  # not the published form
        return fmt, [] if note is None else [Assumption(name="quality", value=note, source=fmt.source, verified=False)]
    stated = checkpoint(request.model)
    name = "bf16" if stated is None else stated.weights
    why = ("16 bits, as most published checkpoints; give --weights for another" if stated is None
           else f"the format its published checkpoint is stored in ({stated.stated_by})"
           + (f"; {stated.note}" if stated.note else ""))
    return weight_format(name), [Assumption(name="weight format", value=f"{name}, not given: {why}",
                                            source=weight_format(name).source)]


def served_architecture(request: ServedModel) -> tuple[Architecture, list[Assumption]]:
    """The architecture a request names (a model, or a decoder shaped from a parameter count).

    Parameters
    ----------
    request : ServedModel
        Exactly one of ``model`` (a name or config.json) and ``params`` (a parameter count [1], e.g. '7B').

    Returns
    -------
    tuple of (Architecture, list of Assumption)
        The architecture and the assumption describing it; InputError naming ``model`` where both or
        neither are given.
    """
    if (request.model is None) == (request.params is None):
        raise InputError("model", request.model, "either a model or a parameter count (params), not both")
    if request.model is not None:
        arch = resolve_model(request.model)
        note = Assumption(name="model", value=f"{arch.name}: {arch.layers} layers of {arch.hidden}, {arch.heads} heads, "
                          f"{arch.kv_heads} key/value heads of {arch.head_size}", source=arch.source)
    else:
        assert request.params is not None  # either a model or params, checked above
        arch, why = decoder_for_params(request.params)
        note = Assumption(name="model", value=why, source=arch.source)
    check_servable(arch)
    return arch, [note]


def _speed(value: float, unit: str, s: dict[str, Any] | None = None) -> RangeOut:
    """A speed and its range: ``s``'s factors (default: the serving rows' :func:`speed_spread`)."""
    s = s or speed_spread()
    return RangeOut.model_construct(low=float(value * s["low"]), expected=float(value), high=float(value * s["high"]), unit=unit)


def _speed_within(value: float, limit: float, unit: str, s: dict[str, Any] | None = None) -> RangeOut:
    """A speed's range whose optimistic end never beats ``limit`` (the physical bound, same unit) [1/s]."""
    r = _speed(value, unit, s)
    high = max(min(r.high, limit), r.expected)
    return RangeOut.model_construct(low=min(r.low, high), expected=r.expected, high=high, unit=unit)


def _time(seconds: float, unit: str, s: dict[str, Any] | None = None, limit: float = 0.0) -> RangeOut:
    """A time and its range: ``s``'s factors (default: the serving rows' :func:`speed_spread`), the optimistic end
    never below ``limit`` (the physical bound [s], e.g. the prompt's FLOP at the peak; 0: none known)."""
    s = s or speed_spread()
    return RangeOut.of_seconds((min(max(seconds / s["high"], limit), seconds), seconds, seconds / s["low"]), unit)


def _per_output(value: float, unit: str, s: dict[str, Any] | None = None) -> RangeOut:
    """A cost or energy per output token: inverse to the speed."""
    s = s or speed_spread()
    return RangeOut.model_construct(low=float(value / s["high"]), expected=float(value), high=float(value / s["low"]), unit=unit)


@dataclasses.dataclass(frozen=True)
class _Spreads:
    """The range factors of one static answer: of the prompt, of generation, and of the total they make."""

    prompt: dict[str, Any]
    generation: dict[str, Any]
    total: dict[str, Any]
    local: bool = False  # a local runtime's own held-out ranges, not the serving rows' one


def _spreads(served: "_Served", prefill: float, step: float) -> _Spreads:
    """A local runtime's answer: its own held-out ranges for the device's family (prompt and generation apart,
    the total combined from them for ``prefill`` and ``step`` [s]); otherwise the serving rows' one range."""
    s = speed_spread()
    local = served.local if served.load is None else None
    found = [local.profile.spread(device_family(served.device), test) if local is not None else None
             for test in ("prompt", "generation")]
    if found[0] is None and found[1] is None:
        return _Spreads(s, s, s)
    source = f"10%-90% percentile of measured/predicted speed of {local.name if local else ''} on the held-out half " \
             "of the local runs (benchmarks/local_inference_accuracy.py)"
    prompt, generation = ({**f, "source": source} if f is not None else s for f in found)
    out = served.request.output_len
    expected = prefill + out * step  # one sequence's time; the total's ends take each part at its own end
    total = {"low": expected / (prefill / prompt["low"] + out * step / generation["low"]),
             "high": expected / (prefill / prompt["high"] + out * step / generation["high"]), "source": source}
    return _Spreads(prompt, generation, total, local=True)


def rent_per_hour(device: Device, given: object = None, pricing: Pricing = "rent",
                  count: int = 1) -> tuple[float | None, PriceBasis | None, Assumption]:
    """USD per device-hour of the ``pricing`` asked (given, an offer that runs ``count`` devices, or the
    amortised purchase), its basis, and where it comes from: the one price function,
    :func:`sizer.formulas.tco.hourly_price`. By default a rent: a cost per token is quoted at a price
    someone charges unless buy or any is asked.

    Parameters
    ----------
    device : Device
        The device priced.
    given : object
        A price per device-hour the user gave, e.g. '2.5 USD/hour' [USD/hour]; None: the catalog's.
    pricing : str
        ``rent``, ``buy`` (amortised purchase plus energy) or ``any`` (rent, else buy).
    count : int
        Devices the offer must run [1].

    Returns
    -------
    tuple of (float or None, str or None, Assumption)
        USD per device-hour [USD/hour] (None where unknown), its basis (``rent`` or ``buy``), and the
        assumption naming the price and its source.
    """
    price = hourly_price(device, given=given, pricing=pricing, count=count)
    name = "rent price" if pricing == "rent" else "price"
    if price.hourly is None:
        return None, None, Assumption(name=name, value=f"unknown: {price.source}",
                                      source="give rent_price (--rent-price), or pricing buy or any, for a cost per token")
    return float(price.hourly.to("USD/hour").magnitude), price.price_basis, Assumption(name=name, value=price.label,
                                                                                       source=price.source)


def serving_assumptions(arch: Architecture, case: ServingCase, table: DeviceTable, i: int, count: int = 1) -> list[Assumption]:
    """What the serving model assumed for one device of ``table``: weights, KV cache, decode, prefill,
    efficiencies, the range, the runtime reserve and activations, and where they apply the compute
    precision, sliding window, experts and a context beyond the model's.

    Parameters
    ----------
    arch : Architecture
        The model served.
    case : ServingCase
        Its formats and lengths [tokens].
    table : DeviceTable
        The devices' rates (:func:`sizer.passes.arithmetic.serving_table`).
    i : int
        The device's row in ``table`` [1].
    count : int
        Devices in the replica [1] (for the expert and attention split's note).

    Returns
    -------
    list of Assumption
        In the order shown, the conditional ones (compute precision, sliding window, experts, context) last.
    """
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
                   f"{arch.rope_head_dim} rotary key) x bytes x tokens, "
                   + ("each sequence's on its own attention rank" if case.moe is not None and case.moe.dp_attention
                      else "whole on every tensor rank") + " (multi-head latent attention)", source="DeepSeek-AI 2024, DeepSeek-V2 §2.1.2 and Table 1 (docs/references.md [deepseek-v2])"),
        Assumption(name="decode", value=f"one token per sequence at the mean context prompt + output/2 = {case.mean_context:g} "
                   "tokens: weights plus KV cache read per step (memory-bound), or FLOP (compute-bound), per layer",
                   source="per-layer roofline (sizer.engine.roofline, INFERENCE pass)"),
        Assumption(name="prefill", value="all prompts of the batch at once, causal attention at half the square, "
                   "LM head on the last token; time to first token = prefill", source="sizer.passes.arithmetic"),
        Assumption(name="serving efficiencies", value=f"{SERVING_MEMORY_EFFICIENCY:g} of memory bandwidth, "
                   f"{SERVING_MATRIX_EFFICIENCY:g} of the matrix peak, {SERVING_STEP_OVERHEAD * unit_factor('s', 'ms'):.3g} ms per forward "
                   "pass (GPUs and accelerators)", source=SERVING_SOURCE),
        Assumption(name="range", value=f"speed {s['low']:g}-{s['high']:g} x expected (times: the inverse)", source=s["source"]),
        Assumption(name="runtime reserve", value=f"{table.framework_overhead[i] / 2 ** 30:g} GiB per device", source=FRAMEWORK_OVERHEAD_SOURCE),
        Assumption(name="activations", value=f"the widest layer's tensors over at most {case.prefill_chunk} prompt "
                   "tokens at once, and each sequence's FP32 logits", source="runtimes prefill in chunks "
                   "(TensorRT-LLM max_num_tokens 8192; vLLM chunked prefill)"),
    ]
    if table.precisions[i] != fmt.compute and fmt.compute != "mixed":
        # the kernel that does it (FP8 Marlin W8A16, FP4 Marlin W4A16) and where that was read, from the support matrix
        cell = weight_mode(DEFAULT_SERVING_RUNTIME, fmt.name, table.devices[i].architecture)
        kernel = f"{cell.note} ({cell.source})" if cell.mode == "weight-only" else "weight-only kernels (W8A16)"
        notes.append(Assumption(name="compute precision", value=f"{table.devices[i].name} has no {fmt.compute}: weights "
                                f"dequantised to {table.precisions[i]}", source=kernel,
                                verified=cell.mode != "weight-only"))
    if arch.sliding_window:
        notes.append(Assumption(name="sliding window", value=f"{arch.sliding_blocks} of {arch.layers} blocks attend over "
                                f"the last {arch.sliding_window} tokens: their KV cache holds and reads that window only "
                                f"({arch.kv_blocks(case.context):.3g} blocks' worth per token at {case.context} tokens), "
                                "their prefill computes the band", source=arch.source, verified=arch.verified))
    if arch.moe:
        notes.append(Assumption(name="mixture of experts", value=f"weights of all {arch.experts} experts in memory; a token "
                                f"computes with and reads {arch.experts_per_token}; a batch of B reads E(1-(1-k/E)^B) "
                                "distinct experts", source="uniform routing (Fedus et al. 2022, Switch Transformer)"))
    runtime_moe = layout_note(arch, count, case.moe) if case.moe is not None else None
    if runtime_moe is not None:
        notes.append(Assumption(name="MoE and MLA under the runtime", value=runtime_moe[0], source=runtime_moe[1],
                                verified=MOE_LAYER_VERIFIED))
    if case.context > arch.max_context:
        notes.append(Assumption(name="context", value=f"{case.context} tokens, beyond the model's {arch.max_context}",
                                source=arch.source))
    return notes


def refused_format(fmt: WeightFormat, device: Device) -> str:
    """Why a weight-and-activation format cannot run on a device (it has no such peak in the catalog).

    Parameters
    ----------
    fmt : WeightFormat
        A format that quantises activations too (fp8, w8a8, nvfp4 ...).
    device : Device
        The device that has no peak for it.

    Returns
    -------
    str
        What to give instead, as the ``expected`` part of an InputError.
    """
    either = (f", and no serving engine runs {fmt.name} weight-only on {device.architecture} (vLLM's FP8 Marlin needs "
              "Ampere or newer)" if fmt.name == "fp8" and generation(device.architecture) is not None else "")
    return (f"a format {device.name} computes: the catalog has no {fmt.compute} peak for it, which {fmt.name} "
            f"(weights and activations quantised) needs{either}; weight-only formats (int8, int4, awq-int4-g128, "
            "q4_k_m) run at its 16-bit rate")


def estimate_inference(request: InferenceRequest, catalog: Catalog | None = None) -> InferenceResult:
    """Serving a model (:func:`serve`), its devices found in ``catalog`` first (:func:`sizer.asked.on_catalog`): a
    public entry for a caller holding a request and a catalog; the facade and the core call :func:`serve`.

    Parameters
    ----------
    request : InferenceRequest
        The model, its formats, the device and count (or unequal devices), the batch [sequences], prompt and
        output lengths [tokens]; with a rate [1/s] or users, the load and its SLOs.
    catalog : Catalog or None
        Where the devices are found (default: the built-in catalog).

    Returns
    -------
    InferenceResult
        As :func:`serve`.
    """
    return serve(on_catalog(request, catalog if catalog is not None else load_catalog()))


def serve(asked: Asked[InferenceRequest]) -> InferenceResult:
    """Memory, time to first token, decode and total tokens/s, cost and energy of serving a model;
    with a rate or users, also latency percentiles, capacity and replicas under continuous batching.
    (The facade adds what would make it fit where it does not.)

    Parameters
    ----------
    asked : Asked of InferenceRequest
        The model (or a parameter count), its weight and KV-cache formats, the device and count (or unequal
        devices), the batch [sequences], prompt and output lengths [tokens]; with a rate [1/s] or users, the
        load and its SLOs; its devices (and host CPU, device measured on) found in the catalog.

    Returns
    -------
    InferenceResult
        Speeds as ranges [tokens/s], times [ms], memory per device [GB], cost per million output tokens
        [USD] and energy per output token [J], with the assumptions behind them.
    """
    return _serve(asked, _replicas_asked(asked))


def serve_on_every_device(asked: Asked[InferenceRequest]) -> InferenceResult:
    """:func:`serve` on hardware one has: a count that does not split the heads answered as replicas of a
    tensor-parallel size that does (:func:`sizer.passes.arithmetic.tensor_replicas`) even where the split or a
    local runtime was given, so that every device serves.

    Parameters
    ----------
    asked : Asked of InferenceRequest
        As :func:`serve`.

    Returns
    -------
    InferenceResult
        As :func:`serve`.
    """
    return _serve(asked, _replicas_asked(asked, any_split=True))


def _serve(asked: Asked[InferenceRequest], layout: tuple[int, int, bool] | None) -> InferenceResult:
    """:func:`serve` on one deployment (``layout`` None), or on ``layout``'s replicas and tensor-parallel size
    (under load where its last item is True)."""
    if layout is None:
        result, request, limits = _one_replica(asked)
        asked = asked.again(request)
    elif layout[2]:  # under load: the replicas are sized (or given) in units of the tensor-parallel size that serves
        result, request, limits = _one_replica(_under_load_replicas(asked, layout[0], layout[1]))
        result = result.model_copy(update={"assumptions": [*result.assumptions, _load_replicas_note(asked, *layout[:2])]})
        asked = asked.again(request)
    else:
        result, limits = _over_replicas(asked, layout[0], layout[1])
    # the user's measurement or efficiency, where given (the roofline: the prompt at the peak, a step at the bandwidth)
    answered: InferenceResult = inference_answer(asked, result, serve, prefill_limit=limits[0], step_limit=limits[1])
    return answered


def _replicas_asked(asked: Asked[InferenceRequest], any_split: bool = False) -> tuple[int, int, bool] | None:
    """Replicas, devices per replica and whether under load, where the request's count does not split the model's
    heads and the split was left to sizer (a tensor split by default, a data-centre runtime; ``any_split``: any
    tensor split); None otherwise (one deployment of the count, refused as before where it does not split)."""
    request = asked.request
    if request.count == 1 or request.devices is not None or (request.split is not None and not any_split):
        return None
    try:
        arch, _ = served_architecture(request)
        if splits_heads(request.count, arch):
            return None
        fmt, _ = served_format(request)
        local, _ = local_runtime(request.runtime, asked.the_device, fmt)
        load, _, _ = parse_load(request)
        if default_split(request, fmt) != Split.TENSOR or (local is not None and not any_split):
            return None
    except InputError:  # the one deployment's answer refuses it, naming the field
        return None
    replicas, tp = tensor_replicas(request.count, arch, node_layout(asked.the_device)[0])  # tensor parallel in a node
    return replicas, tp, load is not None


def _fitting_ranks(count: int, arch: Architecture) -> str:
    """The tensor-parallel sizes up to ``count`` that split ``arch``'s heads, as words ('1, 2 or 5')."""
    fitting = [str(n) for n in head_splitting_ranks(arch, count)]
    return fitting[0] if len(fitting) == 1 else f"{', '.join(fitting[:-1])} or {fitting[-1]}"


def _over_replicas(asked: Asked[InferenceRequest], replicas: int, tp: int) -> tuple[InferenceResult, tuple[float, float]]:
    """The static answer on ``replicas`` replicas of ``tp`` devices, the batch spread over them, and the busiest
    replica's roofline prompt and decode step [s]."""
    request = asked.request
    shares = replica_batches(request.batch, replicas)
    answers: dict[int, InferenceResult] = {}
    limits: list[tuple[float, float]] = []
    for batch in shares:
        answer, _, limit = _one_replica(asked.again(edited(request, {"count": tp, "batch": batch})))
        answers[batch] = answer
        limits.append(limit)
    device = asked.the_device
    hourly, basis, price_note = rent_per_hour(device, request.rent_price, request.pricing, request.count)
    tdp = float(device.tdp.quantity("tdp", "[power]").to("W").magnitude) if device.tdp is not None else None
    arch, _ = served_architecture(request)
    unbounded = tensor_replicas(request.count, arch)[1]  # a larger size that splits the heads, were nodes no bound
    note = replicas_note(arch.name, arch.heads, arch.kv_heads, request.count, replicas, tp, shares,
                         _fitting_ranks(request.count, arch), node_layout(device)[0] if unbounded > tp else None)
    notes = {price_note.name: price_note, "energy": _energy_note(device, request.count, tdp), "replicas": note}
    return replicated(answers, shares, request.count, request.batch, (hourly, basis), tdp, notes), limits[0]


def _under_load_replicas(asked: Asked[InferenceRequest], replicas: int, tp: int) -> Asked[InferenceRequest]:
    """The question under load on replicas of ``tp`` devices: replicas given (or a benchmark's deployment as
    given) counted in them, else sized for the load."""
    request = asked.request
    benchmark = request.burst is not None or request.prompts is not None
    given = request.replicas * replicas if request.replicas is not None else replicas if benchmark else None
    return asked.again(edited(request, {"count": tp, "replicas": given}))


def _load_replicas_note(asked: Asked[InferenceRequest], replicas: int, tp: int) -> Assumption:
    """Under load: the count answered as replicas of ``tp`` devices (the answer's count is one replica's)."""
    request = asked.request
    arch, _ = served_architecture(request)
    return Assumption(name="replicas", value=f"{request.count} devices as replicas of tensor parallel {tp}: "
                      f"{arch.name}'s {arch.heads} heads and {arch.kv_heads} key/value heads split over "
                      f"{_fitting_ranks(request.count, arch)} ranks, not {request.count}; count is one replica's "
                      f"devices, and replicas are counted in them ({request.count} devices = {replicas} replicas)",
                      source=REPLICAS_SOURCE)


def _one_replica(asked: Asked[InferenceRequest]) -> tuple[InferenceResult, InferenceRequest, tuple[float, float]]:
    """The engine's answer for the request's devices as one deployment, the request as resolved, and the roofline's
    prompt and decode step [s] (0: unknown)."""
    served = _resolve(asked)
    ev = _evaluate(served, asked.devices or ())
    request, device, a = served.request, served.device, ev.a
    total = float(total_tokens_per_second(np.asarray([float(request.batch)]), request.output_len, a.prefill_seconds,
                                          a.decode_seconds)[0])
    if ev.per_device is None:
        price, price_basis, price_note = rent_per_hour(device, request.rent_price, request.pricing, request.count)
    else:  # one card's offer would misprice a split over unequal cards, so no cost and a note saying why
        price, price_basis = None, None
        price_note = Assumption(name="price", value="not quoted: unequal devices are not one offer",
                                source="a cost per token needs one device model (use --device and --count)")
    tdp = float(device.tdp.quantity("tdp", "[power]").to("W").magnitude) if device.tdp is not None else None
    spreads = _spreads(served, ev.prefill, ev.step)
    # cost and energy per token are inverse to the total speed, whose optimistic end stops at the physical limit:
    # theirs stop there too (a cost's low end is the speed's high end)
    limited = _speed_within(total, request.batch / ev.step_limit if ev.step_limit > 0 else math.inf, "tokens/s",
                            spreads.total)
    within = {**spreads.total, "low": limited.low / total, "high": limited.high / total} if total > 0 else spreads.total
    cost = None
    if price is not None and price_basis is not None and a.fits[0]:  # a setup that does not fit serves nothing
        per_million = usd_per_million(price, request.count, total)
        cost = cost_out(per_million, price_basis, within) if per_million is not None else None
    energy = (_per_output(float((Quantity(tdp * request.count, "W") / Quantity(total, "1/s")).to("J").magnitude), "J",
                          within) if tdp is not None else None)
    turn = compute_bound_batch(ev.case, ev.table, 0, request.count, host=served.host)
    assumptions = _static_assumptions(served, ev, price_note, tdp, spreads)
    if ev.per_device is not None:  # no cost or energy summed over unequal devices
        cost = energy = None
    fields = _static_fields(served, ev, total, turn, cost, energy, spreads)
    result = InferenceResult(**fields, assumptions=assumptions) if served.load is None else \
        _answer_under_load(served, ev, fields, assumptions, tdp)
    return result, request, (ev.prefill_limit, ev.step_limit)


@dataclasses.dataclass(frozen=True)
class _Served:
    """A request resolved at the boundary: what is served, on what, under which load and runtime."""

    request: InferenceRequest  # unequal devices rewritten as the first device, count 1, a layer split
    device: Device  # under a local runtime, with only the memory its GPU may wire
    arch: Architecture
    fmt: WeightFormat
    kv: float  # B per KV-cache value
    load: Load | None  # None: one static batch
    lengths: Lengths
    slo: Slo
    split: Split
    host: DeviceTable | None  # the host CPU that runs offloaded layers; None: every layer on the devices
    local: Runtime | None  # a local runtime (llama.cpp, MLX); None: a serving runtime or the data-centre model
    table: DeviceTable
    notes: list[Assumption]  # the model and its format
    local_notes: list[Assumption]
    offload_notes: list[Assumption]


@dataclasses.dataclass(frozen=True)
class _Evaluated:
    """The engine's answer for one deployment: the case, its arrays and the times [s] they give."""

    case: ServingCase
    a: ServingArrays
    table: DeviceTable
    prefill: float  # time to first token [s]
    step: float  # one decode step [s]
    prefill_limit: float  # the prompt's model FLOP, each unit's at its datasheet peak [s]; 0: no limit known
    step_limit: float  # the decode step at the datasheet bandwidth [s]; 0: no limit known
    per_device: list[DeviceShare] | None  # unequal devices: each one's layers and memory


def _resolve(asked: Asked[InferenceRequest]) -> _Served:
    """Parse and check the request: the model, formats, load, split, host and runtime, refusing what cannot run."""
    request = _unequal_devices(asked.request)
    unequal = list(asked.devices or ())
    device = asked.the_device
    arch, notes = served_architecture(request)
    fmt, format_notes = served_format(request)
    kv = kv_cache_bytes_per_value(request.kv_cache)
    load, lengths, slo = parse_load(request)
    if request.lengths is not None or request.trace is not None:  # the one batch's lengths are the set's means
        prompt, output = lengths.mean()
        request = request.model_copy(update={"prompt_len": max(1, round(prompt)), "output_len": max(1, round(output))})
    split = default_split(request, fmt)
    _check_lengths_and_split(request, arch, split)
    host, offload_notes = offload_host(request.gpu_layers, request.host_cpu, device, arch, fmt, asked.host,
                                       request.host_memory)
    if host is not None and load is not None:
        raise InputError("gpu_layers", request.gpu_layers, f"all {arch.layers} layers on the devices under load (rate or "
                                                           "users): offloaded layers are sized for a static batch only")
    local, local_notes = local_runtime(request.runtime, device, fmt)
    if local is None and request.runtime is not None:  # a serving runtime named: it must run here, with or without load
        kv_asked = KvCache(request.kv_cache)  # llama.cpp's blocks are refused below, with what to give instead
        check_runtime(serving_runtime(request), fmt, device, None if kv_asked in GGML_KV_CACHES else kv_asked.value)
    if local is None and (request.runtime is not None or load is not None):
        check_split(serving_runtime(request), split)
    local, settings_notes = run_settings(local, device, flash_attention=request.flash_attention, ubatch=request.ubatch,
                                         threads=request.threads, host=host.devices[0] if host is not None else None)
    local_notes += settings_notes
    _settings_apply(request, host is not None or load is not None)
    _check_kv_cache(request, local)
    if unequal and (local is None or load is not None or request.gpu_layers is not None):
        raise InputError("devices", request.devices, "a local runtime (llama.cpp: GGUF weights such as q4_k_m, or "
                                                     "runtime llama.cpp), one static batch (no rate or users) and every "
                                                     "layer on the devices (no gpu_layers) for a split over unequal devices")
    if request.tensor_split is not None and not unequal:
        raise InputError("tensor_split", request.tensor_split, "leave it out, or name the devices (devices): the ratios "
                                                               "split layers over unequal devices")
    if unequal and local is not None:
        check_unequal_devices(unequal, local)
        split_ratios(request.tensor_split, len(unequal))
    if local is not None and request.count > 1:
        _check_one_machine(request.count, device)
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
            raise InputError("weights", fmt.name, refused_format(fmt, device) + _checkpoint_remedy(request, fmt))
        raise InputError("device", request.device, "a device with a 16- or 32-bit rate in the catalog")
    return _Served(request, device, arch, fmt, kv, load, lengths, slo, split, host, local, table,
                   notes + format_notes, local_notes, offload_notes)


def _checkpoint_remedy(request: InferenceRequest, fmt: WeightFormat) -> str:
    """Where the refused format was not asked but is the published checkpoint's: say so, and what to ask instead."""
    if request.weights is not None:
        return ""
    stated = checkpoint(request.model)
    where = f" ({stated.stated_by})" if stated is not None else ""
    return (f"; {fmt.name} is not asked but the format its published checkpoint is stored in{where}: give weights int8 "
            f"for its 8-bit weights computed in 16 bits, or bf16")


def _check_one_machine(count: int, device: Device) -> None:
    """Refuse a count of Macs or CPUs under a local runtime: each is one machine, and several are not modelled."""
    if device.runtime_kind is DeviceKind.APPLE:
        raise InputError("count", count, f"1: {device.name} is a Mac's one chip, and several Macs (llama.cpp's "
                                         "RPC, mlx's distributed runs over a network) are not modelled")
    if device.runtime_kind is DeviceKind.CPU:
        raise InputError("count", count, f"1: a CPU-only run is one {device.name}'s cores and memory (--threads "
                                         "sets how many); a second socket (NUMA) or several machines "
                                         "(llama.cpp's RPC over a network) are not modelled")


def _check_kv_cache(request: InferenceRequest, local: Runtime | None) -> None:
    """Refuse a KV-cache type the runtime does not store: llama.cpp's q8_0/q4_0 blocks anywhere but llama.cpp (and
    there, with flash attention: its quantised V cache needs it), FP8 or int8 under llama.cpp or MLX."""
    kv = KvCache(request.kv_cache)
    if local is None:
        expected = ggml_kv_refusal(kv)
        if expected is not None:
            raise InputError("kv_cache", kv.value, expected)
        return
    why = local.refusal(kv_cache=kv)
    if why is not None:
        raise InputError("kv_cache", kv.value, f"a KV cache {local.name} stores: {why}")
    if kv in GGML_KV_CACHES and not local.profile.flash_attention:
        raise InputError("kv_cache", kv.value, "fp16, or flash attention on: llama.cpp quantises the V cache "
                                                       "only with flash attention (-fa)")


def _settings_apply(request: InferenceRequest, offloaded_or_loaded: bool) -> None:
    """Refuse flash attention or a micro-batch where the answer would not use them (under load, offloaded layers)."""
    for field in ("flash_attention", "ubatch"):
        value = getattr(request, field)
        if value is not None and offloaded_or_loaded:
            raise InputError(field, value, "leave it out: it is modelled for one static batch with every layer on the "
                                           "devices (not under load, not with gpu_layers)")


def _unequal_devices(request: InferenceRequest) -> InferenceRequest:
    """Unequal devices as the first of them, count 1, a layer split (each device's share comes later)."""
    if request.devices is None:
        return request
    if request.device is not None or request.count != 1:
        raise InputError("devices", request.devices, "the devices alone (not with device or count)")
    return request.model_copy(update={"device": request.devices[0], "count": 1, "split": Split.LAYER})


def _check_lengths_and_split(request: InferenceRequest, arch: Architecture, split: Split) -> None:
    """Refuse a split the model cannot take and a prompt and output longer than sizer evaluates."""
    if split == Split.TENSOR:
        check_tensor_ranks(request.count, arch)
    if split == Split.LAYER and request.count > arch.layers:
        raise InputError("count", request.count, f"at most {arch.layers} devices: a layer split gives each at least one layer")
    if request.prompt_len + request.output_len > MAX_TOKENS:
        raise InputError("output_len", request.output_len, f"prompt and output of at most {MAX_TOKENS:,} tokens together")


def served_layout(served: _Served) -> MoeLayout:
    """The expert and attention split the request asks of its serving runtime, or InputError naming the field.

    Parameters
    ----------
    served : _Served
        The request resolved at the boundary (its runtime, host and model).

    Returns
    -------
    MoeLayout
        Expert parallelism and data-parallel attention as asked (tensor parallel when neither is).
    """
    request = served.request
    layout = MoeLayout(expert=request.expert_parallel or request.dp_attention, dp_attention=request.dp_attention)
    if layout == TENSOR_PARALLEL:
        return layout
    if served.local is not None or served.host is not None:
        raise InputError("dp_attention" if request.dp_attention else "expert_parallel", True,
                         "a data-centre serving runtime with every layer on the devices (not a local runtime or "
                         "offloaded layers)")
    engine = serving_runtime(request)
    reason = layout_refusal(served.arch, request.count, layout, engine.profile.parallelism, engine.name)
    if reason is None and served.split != Split.TENSOR:
        reason = "a tensor split of the devices (not a layer split)"
    if reason is not None:
        raise InputError("dp_attention" if request.dp_attention else "expert_parallel", True, reason)
    return layout


def _no_layout(served: _Served) -> MoeLayout | None:
    """No serving runtime's layout where a local runtime or offloaded layers serve (refused where one is asked)."""
    served_layout(served)
    return None


def _evaluate(served: _Served, unequal: tuple[Device, ...]) -> _Evaluated:
    """The engine's times and memory for the request's batch on its devices."""
    request, host, local = served.request, served.host, served.local
    # a local runtime holds one micro-batch's activations at a time (llama.cpp -ub), not a serving engine's chunk
    chunk = {"prefill_chunk": local.profile.ubatch} if local is not None and served.load is None else {}
    case = ServingCase(served.arch, served.fmt, served.kv, request.prompt_len, request.output_len, served.split,
                       request.gpu_layers if host is not None else None, depth=request.depth,
                       **(runtime_memory(request, served.split) if host is None and local is None else {}), **chunk,
                       moe=served_layout(served) if host is None and local is None else _no_layout(served))
    a = evaluate_serving(case, served.table, 0, request.count, float(request.batch), host)
    prefill, step = float(a.prefill_seconds[0]), float(a.decode_seconds[0])
    # the decode step's bytes at the datasheet bandwidth: no step is faster (the range's optimistic end)
    datasheet = served.device.memory_bandwidth.si("memory_bandwidth", "[information]/[time]")
    step_limit = float(a.decode_memory[0]) * float(served.table.bandwidth[0]) / datasheet if host is None else 0.0
    if local is not None and host is None and served.load is None:  # the prompt in micro-batches, one sequence after another
        prefill = request.batch * prefill_seconds(served.arch, served.fmt, served.table, local.profile.ubatch,
                                                  request.prompt_len, request.depth, served.kv,
                                                  flash_attention=local.profile.flash_attention)
        if not local.profile.flash_attention:  # every decode step also moves its scores
            step += unfused_attention_seconds(served.arch, served.table, request.batch,
                                              request.depth + request.prompt_len + request.output_len // 2)
        a = dataclasses.replace(a, prefill_seconds=np.asarray([prefill]), decode_seconds=np.asarray([step]))
    # the prompt's FLOP, each unit's at its datasheet peak (the table's rates are achieved ones): no prefill is faster
    prefill_limit = float(np.asarray(a.prefill_limit).ravel()[0])
    evaluated = _Evaluated(case, a, served.table, prefill, step, prefill_limit, step_limit, None)
    if request.devices is not None:
        return _over_unequal_devices(served, evaluated, unequal)
    return evaluated


def _over_unequal_devices(served: _Served, ev: _Evaluated, unequal: tuple[Device, ...]) -> _Evaluated:
    """Unequal devices: each its share of the layers, the times summed; memory and fit of the fullest device."""
    assert served.request.devices is not None and served.local is not None  # _resolve refuses devices without both
    answer = split_layers(served.arch, list(unequal), served.fmt,
                          served.local.profile, ev.case, served.request.batch, served.request.tensor_split)
    per_device = answer.shares
    most = max(per_device, key=lambda d: d.memory.value / d.device_memory.value)
    a = dataclasses.replace(ev.a, prefill_seconds=np.asarray([answer.prefill_seconds]),
                            decode_seconds=np.asarray([answer.decode_seconds]),
                            fits=np.asarray([answer.fits]), max_batch=np.asarray([answer.max_batch]),
                            weights=np.asarray([most.weights_memory.value * unit_factor("GB", "B")]),
                            kv_cache=np.asarray([most.kv_cache_memory.value * unit_factor("GB", "B")]))
    table = dataclasses.replace(ev.table, memory=np.asarray([most.device_memory.value * unit_factor("GB", "B")]))
    # no single-device limit for a chain of unequal devices
    return _Evaluated(ev.case, a, table, answer.prefill_seconds, answer.decode_seconds, 0.0, 0.0, per_device)


def _static_assumptions(served: _Served, ev: _Evaluated, price_note: Assumption, tdp: float | None,
                        spreads: _Spreads) -> list[Assumption]:
    """What the static answer assumed, in the order shown: the model, the runtime, the fit, the serving model,
    the depth, the split, the host, the runtime's memory, the price and the energy."""
    request, device, a = served.request, served.device, ev.a
    energy_note = _energy_note(device, request.count, tdp, unequal=ev.per_device is not None)
    offload_notes = list(served.offload_notes)
    if served.host is not None:
        offload_notes.append(host_memory_note(float(np.asarray(a.host_memory).ravel()[0]), served.host))
        if tdp is not None:
            energy_note = energy_note.model_copy(update={"value": energy_note.value + " (the host CPU's power not counted)"})
    local_notes = served.local_notes + _unequal_split_notes(ev.per_device)
    split_note = ([Assumption(name="layer split", value=f"layers split over {request.count} devices, each token passes "
                              "them in turn: per token the time of one device holding every layer (no tensor-parallel "
                              "collectives; the hop between devices neglected)", source="llama.cpp --split-mode layer "
                              "(its default)")] if served.split == Split.LAYER and request.count > 1 else [])
    fit_note = ([] if a.memory[0] <= ev.table.memory[0] else [Assumption(
        name="does not fit", value=f"needs {float(a.memory[0]) * unit_factor('B', 'GB'):.3g} GB per device of "
              f"{float(ev.table.memory[0]) * unit_factor('B', 'GB'):.3g} GB: "
        "the speeds are what the devices would reach with the memory, and no cost per token is given",
        source="memory per device against the catalog")])
    depth_note = ([Assumption(name="depth", value=f"{request.depth} tokens already in the KV cache: the prompt attends "
                              "over them too, and every generated token reads their keys and values",
                              source="llama-bench -d (context depth)")] if request.depth else [])
    serving_notes = serving_assumptions(served.arch, ev.case, ev.table, 0, served.request.count)
    if served.local is not None:  # the runtime's fitted kernels replace the data-centre serving efficiencies
        serving_notes = [n for n in serving_notes if n.name != "serving efficiencies"]
    if served.local is not None and served.host is None:  # the prompt as _evaluate times it (prefill_seconds)
        prompt_note = Assumption(name="prefill", value=f"each prompt in passes of {served.local.profile.ubatch} tokens, "
                                 "each pass reading every weight and attending over the tokens before it, the batch's "
                                 "prompts one after another; time to first token = all of them", source=served.local.profile.source)
        serving_notes = [prompt_note if n.name == "prefill" else n for n in serving_notes]
    if served.local is not None and served.load is None:  # its compute buffers hold one micro-batch (_evaluate)
        buffers = Assumption(name="activations", value=f"the widest layer's tensors over one micro-batch of "
                             f"{ev.case.prefill_chunk} prompt tokens, and each sequence's FP32 logits",
                             source=served.local.profile.source)
        serving_notes = [buffers if n.name == "activations" else n for n in serving_notes]
    if spreads.local:  # a local runtime's own ranges replace the serving rows' one
        p, g = spreads.prompt, spreads.generation
        serving_notes = [Assumption(name="range", value=f"prompt {p['low']:.3g}-{p['high']:.3g} x expected, generation "
                                    f"{g['low']:.3g}-{g['high']:.3g} x expected, on {device_family(device)} devices "
                                    "(times: the inverse)", source=g["source"]) if n.name == "range" else n
                         for n in serving_notes]
    return [*served.notes, *local_notes, *fit_note, *serving_notes, *depth_note, *split_note, *offload_notes,
            *_runtime_memory_notes(request, ev.case, device), price_note, energy_note]


def _energy_note(device: Device, count: int, tdp: float | None, unequal: bool = False) -> Assumption:
    """Where the energy per token comes from: the catalog's TDP [W] of ``count`` devices, or why there is none
    (``unequal``: a split over unequal devices, whose powers are not summed)."""
    if unequal:
        return Assumption(name="energy", value="not estimated for unequal devices", source="catalog tdp")
    if tdp is not None:
        assert device.tdp is not None  # tdp is read from it
        return Assumption(name="energy", value=f"TDP {tdp:g} W x {count} devices over the total tokens/s",
                          source=device.tdp.source)
    return Assumption(name="energy", value=f"not estimated: the catalog has no power figure for {device.name}",
                      source="catalog tdp")


def _unequal_split_notes(per_device: list[DeviceShare] | None) -> list[Assumption]:
    """How layers are split over unequal devices (none without them)."""
    if per_device is None:
        return []
    shares = ", ".join(f"{d.device} {d.layers} layers" for d in per_device)
    return [Assumption(name="layer split", value=f"{shares}: layers in proportion to each device's memory, "
                       "a token passes them in turn (each device's time for its own layers, summed); "
                       "memory and fit shown for the fullest device, every device in per_device; no "
                       "cost or energy per token (not summed over unequal devices)",
                       source="llama.cpp --split-mode layer, "
                       "--tensor-split (default: proportional to free memory)")]


def _runtime_memory_notes(request: InferenceRequest, case: ServingCase, device: Device) -> list[Assumption]:
    """The share of device memory a serving runtime takes, where it takes less than all (not on CPUs)."""
    if not ((case.memory_share < 1 or case.kv_free_share < 1) and device.kind is not DeviceKind.CPU):
        return []
    return [Assumption(name="runtime memory", value=f"{case.memory_share:.0%} of device memory for weights, "
                       f"activations and KV cache, {case.kv_free_share:.0%} of what they leave to the cache "
                       f"({serving_runtime(request).name}'s default, as the largest batch and the fit use it)",
                       source=serving_runtime(request).profile.sources)]


def _gb(value: object) -> QuantityOut:
    """The first value of a number or array of bytes [B], in GB."""
    return QuantityOut.convert(float(np.asarray(value).ravel()[0]), "B", "GB")


def _static_fields(served: _Served, ev: _Evaluated, total: float, turn: int | None, cost: ServingCostOut | None,
                   energy: RangeOut | None, spreads: _Spreads) -> dict[str, Any]:
    """The static answer's fields (all but the assumptions); ``total`` in output tokens/s."""
    request, a, per_device = served.request, ev.a, ev.per_device
    step, step_limit, s = ev.step, ev.step_limit, spreads.generation
    return dict(
        model=served.arch.name, device=" + ".join(d.device for d in per_device) if per_device else served.device.name,
        count=len(per_device) if per_device else request.count, weights=served.fmt.name,
        kv_cache=request.kv_cache.strip().lower(),
        batch=request.batch, prompt_len=request.prompt_len, output_len=request.output_len,
        decode_tokens_per_s=_speed_within(1.0 / step, 1.0 / step_limit if step_limit > 0 else math.inf, "tokens/s", s),
        decode_latency=RangeOut.of_seconds((max(step / s["high"], min(step_limit, step)), step, step / s["low"]), "ms"),
        total_tokens_per_s=_speed_within(total, request.batch / step_limit if step_limit > 0 else math.inf, "tokens/s",
                                         spreads.total),
        prefill_tokens_per_s=_speed_within(request.batch * request.prompt_len / ev.prefill,
                                           request.batch * request.prompt_len / ev.prefill_limit if ev.prefill_limit > 0
                                           else math.inf, "tokens/s", spreads.prompt),
        time_to_first_token=_time(ev.prefill, "ms", spreads.prompt, ev.prefill_limit), memory_per_device=_gb(a.memory), weights_memory=_gb(a.weights),
        kv_cache_memory=_gb(a.kv_cache), activations_memory=_gb(a.activations), reserve_memory=_gb(a.reserve),
        device_memory=_gb(ev.table.memory[0]), fits=bool(a.fits[0]), max_batch=int(a.max_batch[0]),
        decode_bound="compute" if a.decode_compute[0] > a.decode_memory[0] else "memory", compute_bound_batch=turn,
        cost_per_million_tokens=cost, energy_per_token=energy, split=served.split,
        per_device=per_device or _offload_shares(served, ev))


def _offload_shares(served: _Served, ev: _Evaluated) -> list[DeviceShare] | None:
    """With layers offloaded to the host CPU (gpu_layers): the device's and the host's layers, weights and KV cache
    [GB], each against its own memory (None without offload)."""
    host, case, a = served.host, ev.case, ev.a
    if host is None or case.gpu_layers is None:
        return None
    count = served.request.count  # a layer split gives each device its share of the layers kept, tensor ranks all of them
    layers = layer_shares(case.gpu_layers, [1.0] * count) if served.split == Split.LAYER and count > 1 else [case.gpu_layers] * count
    on_devices = [DeviceShare(device=served.device.name, layers=kept, weights_memory=_gb(a.weights),
                              kv_cache_memory=_gb(a.kv_cache), memory=_gb(a.memory), device_memory=_gb(ev.table.memory[0]),
                              fits=bool(a.memory[0] <= ev.table.memory[0])) for kept in layers]
    weights, kv_sequence = host_share(case)
    kv = kv_sequence * served.request.batch
    on_host = DeviceShare(device=host.devices[0].name, layers=served.arch.layers - case.gpu_layers, weights_memory=_gb(weights),
                          kv_cache_memory=_gb(kv), memory=_gb(weights + kv), device_memory=_gb(host.memory[0]),
                          fits=bool(weights + kv <= host.memory[0]))
    return [*on_devices, on_host]


def _answer_under_load(served: _Served, ev: _Evaluated, static: dict[str, Any], assumptions: list[Assumption],
                       tdp: float | None) -> InferenceResult:
    """Under load: continuous batching on as many replicas as the load needs, its latency, capacity and cost."""
    request, device, load = served.request, served.device, served.load
    assert load is not None  # only asked with a rate or users
    engine = serving_runtime(request)
    check_runtime(engine, served.fmt, device)
    matrix = tuned_matrix(request.tuned, engine)
    replica = runtime_replica(engine, served.arch, served.fmt, served.kv, batching_table((device,), served.fmt, matrix), 0,
                              request.count, served.split, max_running=request.max_running,
                              token_budget=request.token_budget, prefix_hit=request.prefix_cache_hit,
                              moe=served_layout(served), version=request.runtime_version,
                              max_model_len=served.arch.max_context)
    prompts = request.burst or request.prompts  # a finite benchmark on the deployment as given (issue 38)
    answer = (serve_benchmark(replica, load, served.lengths, served.slo, prompts, request.replicas) if prompts else
              serve_load(replica, load, served.lengths, served.slo, replicas=request.replicas,
                         max_utilisation=max_utilisation(request)))
    if not ev.a.fits[0]:  # a deployment that does not fit serves nothing: no replica count, no SLO met
        answer = dataclasses.replace(answer, replicas=None, slo_met=False)
    replicas = answer.replicas or 1
    out_rate, all_rate = delivered(load, served.lengths, replicas, answer.run,
                                   kept_up=answer.run.complete and answer.utilisation <= 1.0)
    hourly, basis, hourly_note = rent_per_hour(device, request.rent_price, request.pricing, request.count)
    per_million = usd_per_million(hourly, request.count * replicas, out_rate) if answer.replicas else None
    ranges = for_load(load, answer.utilisation)  # the cross-source spread of every figure below (issue 38)
    spread = {"low": ranges.throughput[0], "high": ranges.throughput[1]}  # a cost per token is inverse to the throughput
    load_cost = cost_out(per_million, basis, spread) if per_million is not None and basis is not None else None
    load_energy = (_per_output(tdp * request.count * replicas / out_rate, "J") if tdp is not None and out_rate > 0 else None)
    notes_load = [runtime_assumption(engine, request.runtime is not None, request.runtime_version),
                  *([tuned_assumption()] if matrix is not None else []),
                  *load_assumptions(load, served.lengths, served.slo, answer, served.split, replica.max_batch,
                                    replica.token_budget, replica.prefix_hit), ranges_assumption(ranges)]
    if prompts:
        notes_load += benchmark_notes(load, answer, prompts)
    elif request.replicas is None:  # replicas sized: with the headroom recommend --inference sizes them with
        notes_load.append(headroom_assumption(max_utilisation(request), request.max_utilisation is not None))
        if (scaled := scale_out_note(load, answer, served.slo.any)) is not None:
            notes_load.append(scaled)  # one replica would be saturated: said, as the benchmark says it (issue 38)
    fields = {**static, "scenario": "load", "cost_per_million_tokens": load_cost, "energy_per_token": load_energy,
              "load": load_out(load, served.lengths), "latency": latency_out(answer.run, ranges),
              "capacity": capacity_out(answer, served.slo, ranges),
              "output_tokens_per_s": ranged(out_rate, "tokens/s", ranges.throughput),
              "prompt_and_output_tokens_per_s": ranged(all_rate, "tokens/s", ranges.throughput),
              "fits": bool(ev.a.fits[0]) and answer.run.kv_capacity > 0}
    # under load the serving runtime runs the replicas (a local runtime's choice and kernels were the static answer's)
    assumptions = [n for n in assumptions if n.name not in ("runtime", "runtime kernels")]
    cost_note = Assumption(name="cost under load", value=_load_cost_text(answer.replicas, replicas, request.count,
                                                                         hourly, basis, out_rate),
                           source=hourly_note.source)
    return InferenceResult(**fields, assumptions=[*assumptions, *notes_load, cost_note])


def _load_cost_text(searched: int | None, replicas: int, count: int, hourly: float | None, basis: PriceBasis | None,
                    out_rate: float) -> str:
    """How the cost under load was reached: ``replicas`` of ``count`` devices at ``hourly`` [USD/hour] each over
    ``out_rate`` [tokens/s]; ``searched`` None where no replica count serves the load."""
    if hourly is None:
        return "no price known"
    if searched is None:
        return "none: no replica count serves the load within the SLOs"
    return (f"{replicas} replica(s) x {count} devices at {hourly:.4g} USD/hour each "
            f"({'rent' if basis == 'rent' else 'amortised purchase, not a rent'}) over {out_rate:.4g} output tokens/s")
