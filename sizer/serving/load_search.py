"""`sizer recommend --inference` under load: device x weight format x KV format x devices per replica x
replicas, ranked by cost per million output tokens (or the objective).

The search screens every point with the one engine first (no simulation): a lone request's own
prefill and decode step bound the time to first token and per output token from below, and the
saturated batch (the scheduler's slots or the KV cache, whichever is fewer) gives the requests/s a
replica can at most serve, hence the fewest replicas the load needs. Per device the points are
tried in order of that estimate: the best is simulated under continuous batching at its share of
the load (:func:`sizer.simulator.simulate.simulate`) and given replicas until its percentiles meet
the SLOs at its share over the headroom's utilisation (:mod:`sizer.serving.production`: the load at
most 70 % of the capacity by default), so that the rate it is shown to serve is a lower bound of its
capacity and its utilisation an upper bound. The leading rows then get the full capacity search
(bisection over simulations, :func:`sizer.serving.capacity.serve_load`) and the replicas that keep
the load within the headroom of the capacity found. Data-centre devices only unless ``consumer`` is asked.
A user-given weight or KV format pins that dimension.

References
----------
docs/references.md [agrawal2024vidur].
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sizer.choices import Split
from sizer.errors import InputError
from sizer.hardware.catalog import Catalog
from sizer.passes.arithmetic import ServingCase, evaluate_serving, serving_table, table_row, total_tokens_per_second
from sizer.passes.moe_decode import TENSOR_PARALLEL, MoeLayout
from sizer.results import Assumption, QuantityOut, unit_factor
from sizer.runtimes.formats import WeightFormat, kv_cache_bytes_per_value, quality_note, weight_format
from sizer.schemas.serving import InferenceOption, InferenceRecommendResult, LoadOption, RejectedOption
from sizer.serving.capacity import SEARCH_STEPS, serve_load, simulated_requests
from sizer.serving.disaggregated import PREFILL_TTFT_SHARE, serve_disaggregated
from sizer.serving.estimate import speed_spread
from sizer.serving.production import headroom_assumption, max_utilisation, production_devices, segments_assumption
from sizer.serving.ranking import PriceLookup, SortKey, keeps_format, load_key, preferred_eight_bit
from sizer.serving.recommend_answer import node_reason, unsupported_reason
from sizer.serving.search_space import device_counts, devices_of_kinds, moe_layouts
from sizer.serving.serving_ranges import for_load, ranged, spread_of
from sizer.serving.under_load import (
    SERVING_PRICING,
    check_split,
    cost_out,
    default_split,
    delivered,
    latency_out,
    load_out,
    parse_load,
    runtime_assumption,
    runtime_memory,
    runtime_refusal,
    serving_prices,
    serving_runtime,
    usd_per_million,
)
from sizer.simulator.simulate import runtime_replica, simulate
from sizer.simulator.traffic import Load, arrivals_label
from sizer.workloads.registry import checkpoint_weights

if TYPE_CHECKING:  # names for annotations only (deployments imports this module)
    from sizer.engine.devices import DeviceTable
    from sizer.hardware.schema import Device
    from sizer.results import PriceBasis
    from sizer.runtimes.runtime import Runtime
    from sizer.schemas.serving_requests import InferenceRecommendRequest, ServedModel
    from sizer.serving.capacity import LoadAnswer, Slo
    from sizer.simulator.metrics import SimulationResult
    from sizer.simulator.simulate import Replica
    from sizer.simulator.traffic import Lengths
    from sizer.workloads.architecture import Architecture

# Formats searched where the request pins none: 16 bits; an 8-bit weight-and-activation format where the
# device has its peak (FP8, else SmoothQuant int8); a 4-bit weight-only format (AWQ, vLLM's usual int4)
SEARCH_WEIGHTS = ("bf16", "fp8", "w8a8", "awq-int4-g128")
SEARCH_KV = ("fp16", "fp8")
FULL_SEARCH_ROWS = 5  # leading rows whose capacity is bisected (the first 3 of them also sized as disaggregated pools)
DISAGGREGATED_ROWS = 3
CANDIDATES_PER_DEVICE = 2  # screened points simulated per device before it is rejected
REPLICA_TRIES = 3  # replicas added (the worst percentile over its limit times, 1.25-4) when a share misses the SLOs
MIN_GROWTH, MAX_GROWTH = 1.25, 4.0
SCREEN_HEADROOM = 0.8  # of the saturated rate a replica is first given within the SLOs (less where the headroom asks)

# One format pair's screen: arrays over (device, count) rows and what simulating a row needs (:func:`_screen`)
Screen = dict[str, Any]
# A screened point: (sort key, weight format, its screen, row)
Point = tuple[SortKey, WeightFormat, Screen, np.intp]
# A device's chosen deployment: (weight format, screen, row, replica, replicas, its simulation at its share of the load,
# the requests/s one replica was shown to serve within the SLOs at the headroom's share)
Chosen = tuple[WeightFormat, Screen, np.intp, "Replica", int, "SimulationResult", float]


def searched_weights(request: ServedModel) -> list[WeightFormat]:
    """The weight formats a deployment search tries: the common ones, and the model's published
    checkpoint format where it is none of them (gpt-oss: mxfp4).

    Parameters
    ----------
    request : ServedModel
        Its ``model`` names the checkpoint.

    Returns
    -------
    list of WeightFormat
        :data:`SEARCH_WEIGHTS` in order, then the checkpoint's format where it is not among them (none
        where its ``quantization_config`` names a format sizer lacks: the search tries the others).
    """
    try:
        own = checkpoint_weights(request.model)
    except InputError as error:
        if not (error.field or "").startswith("model.quantization_config") and \
                not (error.field or "").startswith("model.text_config.quantization_config"):
            raise
        own = None
    return [weight_format(w) for w in (*SEARCH_WEIGHTS, *([own] if own and own not in SEARCH_WEIGHTS else []))]


def _formats(request: InferenceRecommendRequest) -> tuple[list[WeightFormat], list[str]]:
    weights = [request.weights] if request.weights is not None else searched_weights(request)
    kvs = [request.kv_cache.strip().lower()] if request.kv_cache else list(SEARCH_KV)
    for kv in kvs:
        kv_cache_bytes_per_value(kv)
    return weights, kvs


def _screen(request: InferenceRecommendRequest, arch: Architecture, devices: tuple[Device, ...], counts: list[int],
            lengths: Lengths, slo: Slo, load: Load, fmt: WeightFormat, kv_name: str, engine: Runtime,
            layout: MoeLayout = TENSOR_PARALLEL) -> Screen:
    # the refusal filter: a (runtime, format, device generation) the runtime cannot run is no candidate (runtime_refusal)
    """Per (device, count) of one format pair and layout: fits and lone bounds met, estimated replicas and saturated rate."""
    split = default_split(request, fmt)
    mean_prompt, mean_output = lengths.mean()
    case = ServingCase(arch, fmt, kv_cache_bytes_per_value(kv_name), max(1, round(mean_prompt)), max(1, round(mean_output)), split,
                       **runtime_memory(request, split), moe=layout if split == Split.TENSOR else None)
    table = serving_table(devices, fmt)
    n = len(devices)
    d = np.repeat(np.arange(n), len(counts))
    c = np.tile(np.asarray(counts, dtype=float), n)
    lone = evaluate_serving(case, table, d, c, np.ones(len(d)))
    slots = np.clip(np.minimum(request.max_running or engine.profile.max_running, lone.max_batch), 1, None)
    busy = evaluate_serving(case, table, d, c, slots)
    sat_rate = total_tokens_per_second(slots, case.output_len, busy.prefill_seconds, busy.decode_seconds) / case.output_len
    # the runtime's kernels for the format on the device's generation; tensor parallelism within a node
    runs = np.array([runtime_refusal(engine, fmt, dev, kv_name) is None for dev in devices])[d]
    in_node = c <= table.devices_per_node[d]
    # an expert or attention split only where the runtime runs it on that many devices (search_space.moe_layouts)
    runs = runs & np.array([layout in moe_layouts(arch, int(x), engine) for x in c], dtype=bool)
    ok = lone.fits & table.supported[d] & runs & in_node & (lone.max_batch >= 1)
    why = np.where(~table.supported[d], "format", np.where(~runs, "runtime", np.where(~in_node, "node",
                                                                                    np.where(~ok, "fit", ""))))
    if slo.ttft is not None:
        slow = ok & (lone.prefill_seconds > slo.ttft)
        why, ok = np.where(slow, "slow", why), ok & ~slow
    if slo.tpot is not None:
        slow = ok & (lone.decode_seconds > slo.tpot)
        why, ok = np.where(slow, "slow", why), ok & ~slow
    first_share = min(SCREEN_HEADROOM, max_utilisation(request))
    with np.errstate(divide="ignore", invalid="ignore"):
        replicas = (np.ceil(load.rate / (sat_rate * first_share)) if load.rate is not None
                    else np.ceil(load.users / (slots * first_share)))
    replicas = np.where(ok, np.maximum(replicas, 1), np.inf)
    return dict(table=table, case=case, split=split, d=d, c=c, ok=ok, why=why, replicas=replicas, sat_rate=sat_rate, lone=lone,
                memory=lone.memory, device_memory=table.memory[d], kv=kv_name)


def _candidates(points: list[Point]) -> list[Point]:
    """The points a device gets simulated, best first: the best of each devices-per-replica count (so that a
    count the screen ranks low, such as a larger tensor-parallel group that meets a TPOT limit the smaller
    ones miss, is tried) and the second best overall."""
    best_per_count: dict[int, Point] = {}
    for p in points:
        best_per_count.setdefault(int(p[2]["c"][p[3]]), p)
    chosen = list(best_per_count.values()) + points[:CANDIDATES_PER_DEVICE]
    unique: list[Point] = []  # a point is its format, screen (the same object: one layout's) and row
    for p in chosen:
        if not any(q[1].name == p[1].name and q[2] is p[2] and int(q[3]) == int(p[3]) for q in unique):
            unique.append(p)
    return sorted(unique, key=lambda p: p[0])


def _growth(run: SimulationResult, slo: Slo) -> float:
    """How many times the replicas to try next after a miss: the worst percentile over its limit, 1.25 to 4."""
    if not run.complete or not slo.any:
        return MAX_GROWTH
    worst = max(run.percentile(name, slo.percentile) / limit
                for name, limit in (("ttft", slo.ttft), ("tpot", slo.tpot), ("e2e", slo.e2e)) if limit is not None)
    return min(max(worst, MIN_GROWTH), MAX_GROWTH)


def _share(load: Load, replicas: int, utilisation: float = 1.0) -> Load:
    """One replica's share of ``load`` over ``replicas``, over ``utilisation`` (the headroom: the share it must
    be shown to meet so that the load is at most that part of its capacity)."""
    return (Load(rate=load.rate / (replicas * utilisation)) if load.rate is not None else
            Load(users=math.ceil((load.users or 0) / (replicas * utilisation)), think_time=load.think_time))


def recommend_under_load(request: InferenceRecommendRequest, catalog: Catalog, arch: Architecture,
                         notes: list[Assumption]) -> InferenceRecommendResult:
    """Per device, the formats, count and replicas that serve the load within the SLOs, best by the objective
    (the search in the module docstring).

    Parameters
    ----------
    request : InferenceRecommendRequest
        With a rate [1/s] or users, the SLOs (time to first token, per output token, end to end [s] at a
        percentile [%]), the kinds of device, max_devices and max_replicas [1], the objective and pricing.
    catalog : Catalog
        The devices searched.
    arch : Architecture
        The model served (:func:`sizer.serving.estimate.served_architecture`).
    notes : list of Assumption
        What resolving the model assumed; they lead the answer's assumptions.

    Returns
    -------
    InferenceRecommendResult
        One ranked row per device that serves the load (``scenario="load"``), the others rejected with the reason.
    """
    load, lengths, slo = parse_load(request)
    assert load is not None  # asked only with a rate or users
    for field in ("prompts", "burst"):  # a benchmark on one given deployment: not a search over devices
        if getattr(request, field, None) is not None:
            raise InputError(field, getattr(request, field), "a deployment to run the benchmark on (sizer inference "
                                                             "with a device): a recommendation sizes a steady load")
    devices, segments = production_devices(devices_of_kinds(catalog, request.kinds), request.consumer)
    weights, kvs = _formats(request)
    pinned = request.weights is not None
    engine = serving_runtime(request)
    check_split(engine, request.split)
    requests = simulated_requests(slo.percentile)
    screens = _screens(request, arch, devices, weights, kvs, lengths, slo, load, engine)
    options: list[dict[str, Any]] = []
    rejected: list[RejectedOption] = []
    prices = serving_prices(devices, request.pricing)  # of the asked basis, from offers that run one replica
    for i, device in enumerate(devices):
        points, reasons = _device_points(request, i, screens, pinned, prices)
        chosen, why = _first_serving(request, arch, engine, i, points, load, lengths, slo, requests)
        if chosen is None:
            reason = why or _rejection(reasons, pinned, weights, engine, device, screens[0][1]["table"], i, kvs)
            rejected.append(RejectedOption(device=device.id, name=device.name, reason=reason))
            continue
        hourly, basis, used = prices(i, int(chosen[1]["c"][chosen[2]]))
        options.append(_option(request, device, hourly, basis, *chosen, searched=False, load=load, lengths=lengths,
                               used=used))
    options.sort(key=lambda o: o["key"])
    _search_leading(request, options, load, lengths, slo, requests)
    if request.disaggregated:
        options = sorted(options + _split_options(request, options[:DISAGGREGATED_ROWS], load, lengths, slo),
                         key=lambda o: o["key"])
    ranked: list[InferenceOption | LoadOption] = [LoadOption(rank=rank, **{**o["row"], "cost_per_million_tokens": (
        cost_out(o["per_million"], o["basis"], spread_of(o["row"]["output_tokens_per_s"]))
        if o["per_million"] is not None else None)})
        for rank, o in enumerate(options, start=1)]
    weights_label = weights[0].name if pinned else "searched: " + ", ".join(f.name for f in weights)
    first = screens[0][1]["case"]
    return InferenceRecommendResult(task="inference", model=arch.name, weights=weights_label, prompt_len=first.prompt_len,
                                    output_len=first.output_len, ranked=ranked, rejected=rejected,
                                    assumptions=[*_search_assumptions(request, notes, engine, weights, kvs, load, lengths,
                                                                      slo, requests),
                                                 headroom_assumption(max_utilisation(request),
                                                                     request.max_utilisation is not None),
                                                 segments_assumption(segments)],
                                    objective=request.objective, scenario="load", load=load_out(load, lengths),
                                    devices_searched=segments, max_utilisation=max_utilisation(request))


def _screens(request: InferenceRecommendRequest, arch: Architecture, devices: tuple[Device, ...],
             weights: list[WeightFormat], kvs: list[str], lengths: Lengths, slo: Slo, load: Load,
             engine: Runtime) -> list[tuple[WeightFormat, Screen]]:
    """Every format pair's screen over the devices and the devices per replica its split allows."""
    screens: list[tuple[WeightFormat, Screen]] = []
    for fmt in weights:
        limit = arch.heads if default_split(request, fmt) == Split.TENSOR else arch.layers
        counts = [int(x) for x in device_counts(request.max_devices, limit)]
        layouts = {x for n in counts for x in moe_layouts(arch, n, engine)} if default_split(request, fmt) == Split.TENSOR \
            else {TENSOR_PARALLEL}
        for kv_name in kvs:
            for layout in sorted(layouts, key=lambda x: (x.expert, x.dp_attention)):  # tensor parallel first
                screens.append((fmt, _screen(request, arch, devices, counts, lengths, slo, load, fmt, kv_name, engine,
                                             layout)))
    return screens


def _device_points(request: InferenceRecommendRequest, i: int, screens: list[tuple[WeightFormat, Screen]], pinned: bool,
                   prices: PriceLookup) -> tuple[list[Point], set[str]]:
    """Device ``i``'s screened points that pass, best first by the engine's estimate, and why the others fail."""
    eight = preferred_eight_bit(fmt.name for fmt, s in screens if s["ok"][s["d"] == i].any())
    points: list[Point] = []
    reasons: set[str] = set()
    for fmt, s in screens:
        if not pinned and not keeps_format(fmt.name, eight):
            continue  # one 8-bit format per device: FP8 where it has the peak, else int8
        for r in np.flatnonzero(s["d"] == i):
            if not s["ok"][r]:
                reasons.add(str(s["why"][r]))
                continue
            count, reps = int(s["c"][r]), int(s["replicas"][r])
            hourly, basis, _ = prices(i, count)
            lone_e2e = float(s["lone"].prefill_seconds[r] + (s["case"].output_len - 1) * s["lone"].decode_seconds[r])
            price = hourly * count * reps if hourly is not None else None
            points.append((load_key(request.objective, hourly, count, reps, price, lone_e2e, float(s["sat_rate"][r]),
                                    basis), fmt, s, r))
    points.sort(key=lambda p: p[0])
    return points, reasons


def _first_serving(request: InferenceRecommendRequest, arch: Architecture, engine: Runtime, i: int, points: list[Point],
                   load: Load, lengths: Lengths, slo: Slo, requests: int) -> tuple[Chosen | None, str | None]:
    """The first of device ``i``'s candidates whose simulation meets the SLOs at some replicas, else why the last missed."""
    why = None
    for _, fmt, s, r in _candidates(points):
        count = int(s["c"][r])
        replica = runtime_replica(engine, arch, fmt, kv_cache_bytes_per_value(s["kv"]), table_row(s["table"], i), 0,
                                  count, s["split"], max_running=request.max_running,
                                  token_budget=request.token_budget, prefix_hit=request.prefix_cache_hit,
                                  moe=s["case"].moe or TENSOR_PARALLEL, version=request.runtime_version,
                                  max_model_len=arch.max_context)
        served, missed = _replicas_for_share(request, replica, int(s["replicas"][r]), count, load, lengths, slo, requests)
        if served is not None:
            return (fmt, s, r, replica, *served), why
        why = missed if missed is not None else why
    return None, why


def _replicas_for_share(request: InferenceRecommendRequest, replica: Replica, reps: int, count: int, load: Load,
                        lengths: Lengths, slo: Slo,
                        requests: int) -> tuple[tuple[int, SimulationResult, float] | None, str | None]:
    """Simulate one replica at its share of the load over the headroom's utilisation, adding replicas while the SLOs
    are missed: (replicas, the run at the share itself, the rate shown to meet the SLOs) where they are met, else
    None and why not."""
    why = None
    most = max_utilisation(request)
    for _ in range(REPLICA_TRIES):
        if reps > request.max_replicas:
            return None, f"needs more than {request.max_replicas} replicas (max_replicas)"
        share = _share(load, reps, most)
        run = simulate(replica, share, lengths, max(requests, 3 * (share.users or 0)))
        if (slo.met(run) if slo.any else run.complete) and len(run.ttft):
            shown = share.rate if share.rate is not None else run.request_rate
            if most < 1.0:  # the latency reported is the one at the share itself
                actual = _share(load, reps)
                run = simulate(replica, actual, lengths, max(requests, 3 * (actual.users or 0)))
            return (reps, run, float(shown)), None
        lat = latency_out(run)
        why = (f"misses the SLOs at {reps} replica(s) of {count}" + ("" if lat is None else
               f": p{slo.percentile:g} time to first token {lat.ttft.p99:.3g} ms"
               + (f", per output token {lat.tpot.p99:.3g} ms" if lat.tpot else "")))
        reps = max(reps + 1, math.ceil(reps * _growth(run, slo)))
    return None, why


def _rejection(reasons: set[str], pinned: bool, weights: list[WeightFormat], engine: Runtime, device: Device,
               table: DeviceTable, i: int, kvs: Sequence[str] = ()) -> str:
    """Why no screened point of a device passed, from the screen's reasons (format, runtime, node, fit, slow)."""
    if reasons == {"format"}:
        return unsupported_reason(weights[0]) if pinned else "no searched format computes on it"
    if reasons == {"runtime"} or reasons == {"format", "runtime"}:  # the weights' refusal, else the KV cache's
        return next(filter(None, (*(runtime_refusal(engine, f, device) for f in weights),
                                  *(runtime_refusal(engine, f, device, kv) for f in weights for kv in kvs))), "")
    if "slow" in reasons:
        return "too slow even for a lone request"
    if "node" in reasons:
        return node_reason(int(table.devices_per_node[i]))
    if "fit" in reasons or not reasons:
        return "does not fit in any format searched"
    return "no point serves"


def _search_leading(request: InferenceRecommendRequest, options: list[dict[str, Any]], load: Load, lengths: Lengths,
                    slo: Slo, requests: int) -> None:
    """The leading rows' capacity itself (bisection) and the replicas that keep the load within the headroom
    (:mod:`sizer.serving.production`), until the lead is searched; ``options`` updated and re-sorted in place."""
    for _ in range(2 * FULL_SEARCH_ROWS):
        todo = [o for o in options[:FULL_SEARCH_ROWS] if not o.get("tried")]
        if not todo:
            break
        for o in todo:
            o["tried"] = True
            answer = serve_load(o["replica"], load, lengths, slo, requests=requests,
                                max_utilisation=max_utilisation(request))
            if (answer.replicas is not None and answer.slo_met and answer.replicas <= request.max_replicas
                    and len(answer.run.ttft)):
                o.update(_option(request, o["device"], o["hourly"], o["basis"], o["fmt"], o["screen"], o["r"],
                                 o["replica"], answer.replicas, answer.run, answer.max_request_rate, searched=True,
                                 load=load, lengths=lengths, answer=answer, used=o["used"]))
        options.sort(key=lambda o: o["key"])


def _search_assumptions(request: InferenceRecommendRequest, notes: list[Assumption], engine: Runtime,
                        weights: list[WeightFormat], kvs: list[str], load: Load, lengths: Lengths, slo: Slo,
                        requests: int) -> list[Assumption]:
    """What the search under load assumed: the runtime, formats, load, SLOs, the search itself, prices and the range."""
    s = speed_spread()
    pinned = request.weights is not None
    slo_text = ", ".join(f"{k} {v * 1e3:.4g} ms" for k, v in (("TTFT", slo.ttft), ("TPOT", slo.tpot), ("E2E", slo.e2e))
                         if v is not None) or "none (capacity = saturated throughput)"
    searched_formats = (f"weights {', '.join(f.name for f in weights)}" + (" (given)" if pinned else
                        " (fp8 where the device has an FP8 peak, else w8a8 where it has an int8 peak)")
                        + f"; KV cache {', '.join(kvs)}" + (" (given)" if request.kv_cache else ""))
    assumptions = [*notes, runtime_assumption(engine, request.runtime is not None, request.runtime_version),
                   Assumption(name="formats", value=searched_formats, source="; ".join(dict.fromkeys(f.source for f in weights))),
                   Assumption(name="load", value=f"{arrivals_label(load, lengths)}; {lengths.label}", source=lengths.source),
                   Assumption(name="SLOs", value=f"{slo_text} at p{slo.percentile:g}", source="given"),
                   Assumption(name="search", value=f"device x format x 1, 2, 4 ... {request.max_devices} devices per replica "
                              "(tensor parallel within a node: across nodes runtimes use pipeline parallelism, not "
                              "searched here) screened by the engine (a lone request's prefill and decode step against the SLOs; the "
                              "saturated batch's requests/s for the replicas); per device the "
                              f"best of each devices-per-replica count and the {CANDIDATES_PER_DEVICE} best by {request.objective} simulated ({requests} requests, as every serving answer simulates for p{slo.percentile:g}) "
                              "at their share of the load over the headroom's utilisation, replicas added until the "
                              f"SLOs hold there; the leading {FULL_SEARCH_ROWS} rows' capacity bisected "
                              "(capacity_searched) and their replicas sized within the headroom of it; the others' "
                              "max_request_rate is the share they were shown to meet (a lower bound) and their "
                              "utilisation the load over it (an upper bound)",
                              source="docs/references.md [agrawal2024vidur]"),
                   Assumption(name="price", value=SERVING_PRICING[request.pricing], source="--pricing rent|buy|any; "
                              "sizer/formulas/tco.py hourly_price"),
                   Assumption(name="range", value=f"cost {1 / s['high']:.3g}-{1 / s['low']:.3g} x expected", source=s["source"])]
    if request.disaggregated:
        assumptions.append(Assumption(
            name="disaggregated", value=f"for the leading {DISAGGREGATED_ROWS} rows, the same replica as a pool of prefill "
            "replicas (prompts only) and one of decode replicas (answers only), sized by bisection each: prefill within "
            f"{PREFILL_TTFT_SHARE:.0%} of the TTFT limit less the KV transfer, decode within the rest and the TPOT limit; "
            "TTFT = prefill + transfer + decode admission, request by request; the transfer over the node link where "
            "two replicas share a node, else the network; the pools sized (and their latency simulated) at the rate over "
            "the headroom's share, a conservative latency", source="docs/references.md [zhong2024distserve], "
            "[patel2024splitwise]"))
    return assumptions


def _option(request: InferenceRecommendRequest, device: Device, hourly: float | None, basis: PriceBasis | None,
            fmt: WeightFormat, s: Screen, r: np.intp, replica: Replica, replicas: int, run: SimulationResult,
            shown_rate: float, *, searched: bool, load: Load, lengths: Lengths, answer: LoadAnswer | None = None,
            used: dict[str, Any] | None = None) -> dict[str, Any]:
    """One device's chosen deployment as a ranked row's fields, its sort key and what a full search needs;
    ``shown_rate`` the requests/s one replica was shown to serve within the SLOs [1/s] (a lower bound of its
    capacity where not ``searched``)."""
    count = int(s["c"][r])
    out_rate, total_rate = delivered(load, lengths, replicas, run, kept_up=run.complete)  # SLOs met, or sized by capacity
    per_million = usd_per_million(hourly, count * replicas, out_rate)
    share = _share(load, replicas)
    rate = answer.max_request_rate if answer is not None else shown_rate
    if answer is not None:  # the load over the capacity found
        utilisation = answer.utilisation if math.isfinite(answer.utilisation) else 0.0
    elif load.rate is not None:  # the share over the rate shown to meet the SLOs: an upper bound
        utilisation = min(float(share.rate or 0.0) / shown_rate, 1.0) if shown_rate > 0 else 0.0
    else:  # users: the share over the users shown to be served within the SLOs at the headroom
        shown_users = _share(load, replicas, max_utilisation(request)).users or 1
        utilisation = min((share.users or 0) / shown_users, 1.0)
    ranges = for_load(load, utilisation)  # the cross-source spread of the row's figures (issue 38)
    lat = latency_out(run, ranges)
    row = dict(device=device.id, name=device.name, kind=device.kind, count=count,
               tp=count if s["split"] == Split.TENSOR else 1, pp=count if s["split"] == Split.LAYER else 1, split=s["split"],
               replicas=replicas, devices_total=count * replicas, weights=fmt.name, kv_cache=s["kv"],
               max_request_rate=ranged(float(rate), "1/s", ranges.capacity), capacity_searched=searched,
               utilisation=float(utilisation), headroom=float(max(0.0, 1.0 - utilisation)), latency=lat,
               output_tokens_per_s=ranged(out_rate, "tokens/s", ranges.throughput),
               prompt_and_output_tokens_per_s=ranged(total_rate, "tokens/s", ranges.throughput),
               memory_per_device=QuantityOut.convert(float(s["memory"][r]), "B", "GB"),
               device_memory=QuantityOut.convert(float(s["device_memory"][r]), "B", "GB"),
               price_per_hour=QuantityOut(value=hourly, unit="USD/hour") if hourly is not None else None,
               cost_per_million_tokens=None, quality=quality_note(fmt), price_basis=basis, price=used,
               layout=(s["case"].moe or TENSOR_PARALLEL).label(count))
    e2e_p99 = lat.e2e.p99 if lat is not None else math.inf  # None: no request measured
    key = load_key(request.objective, hourly, count, replicas, per_million, e2e_p99, float(rate), basis)
    return dict(row=row, key=key, per_million=per_million, basis=basis, device=device, hourly=hourly, fmt=fmt, screen=s,
                r=r, replica=replica, used=used)


def _split_options(request: InferenceRecommendRequest, leading: list[dict[str, Any]], load: Load, lengths: Lengths,
                   slo: Slo) -> list[dict[str, Any]]:
    """The leading rows' replicas as disaggregated prefill and decode pools, where some sizes meet the SLOs."""
    out = []
    share = max_utilisation(request)
    # pools sized for the rate over the headroom, so that the load is at most that share of their capacity
    sized = Load(rate=load.rate / share) if load.rate is not None else load
    for o in leading:
        split = serve_disaggregated(o["replica"], sized, lengths, slo, simulated_requests(slo.percentile), SEARCH_STEPS)
        if split is None or split.prefill_replicas + split.decode_replicas > request.max_replicas:
            continue
        reps = split.prefill_replicas + split.decode_replicas
        count = o["row"]["count"]
        out_rate, total_rate = delivered(load, lengths, split.decode_replicas, split.decode_run, kept_up=split.slo_met)
        hourly = o["hourly"]
        per_million = usd_per_million(hourly, count * reps, out_rate)
        capacity = min(split.prefill_replicas * split.prefill_rate, split.decode_replicas * split.decode_rate)
        utilisation = float(min((load.rate or 0.0) / capacity, 1.0))
        ranges = for_load(load, utilisation)
        lat = latency_out(split, ranges)
        row = {**o["row"], "replicas": reps, "devices_total": count * reps, "deployment": "disaggregated",
               "prefill_replicas": split.prefill_replicas, "decode_replicas": split.decode_replicas,
               "kv_transfer": QuantityOut(value=split.transfer * unit_factor("s", "ms"), unit="ms"),
               "max_request_rate": ranged(capacity / reps, "1/s", ranges.capacity), "capacity_searched": True,
               "utilisation": utilisation, "headroom": float(max(0.0, 1.0 - utilisation)), "latency": lat,
               "output_tokens_per_s": ranged(out_rate, "tokens/s", ranges.throughput),
               "prompt_and_output_tokens_per_s": ranged(total_rate, "tokens/s", ranges.throughput)}
        e2e_p99 = lat.e2e.p99 if lat is not None else math.inf  # None: no request measured
        key = load_key(request.objective, hourly, count, reps, per_million, e2e_p99, capacity / reps, o["basis"])
        out.append({**o, "row": row, "key": key, "per_million": per_million})
    return out
