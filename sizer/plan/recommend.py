"""Which device, how many, how long, what cost: the recommendation (spec §3.10).

Every (device, count, ZeRO stage) is evaluated at once by the engine; each device is then shown
at one count: without a deadline at its time-cost knee (the fastest count whose device-hours
stay within 25 % of its cheapest fitting count), with a deadline at the cheapest count that
meets it. Devices that cannot serve get a reason.

>>> result = recommend(RecommendRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw"))
>>> result.ranked[0].count >= 1 and all(r.reason for r in result.rejected)
True
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from sizer.engine.calibration import Calibration
from sizer.engine.modes import calibrated_efficiencies
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.schema import Device
from sizer.engine.evaluate import error_spread, range_arrays
from sizer.engine.search import search
from sizer.engine.summary import summarise
from sizer.engine.devices import build_device_table, cached_device_table
from sizer.engine.roofline import BOUNDS, RECOMPUTE
from sizer.engine.training import time_unit
from sizer.choices import Precision, parse_choice
from sizer.deadline import check_deadline
from sizer.errors import InputError, InputErrors
from sizer.formulas.host import HostResult, StorageClass, estimate_host
from sizer.formulas.redundancy import K1Result, estimate_k1
from sizer.results import Assumption, Model, QuantityOut, RangeOut, Suggestion, unit_factor
from sizer.formulas.tco import (COST_DEFAULTS, CostRange, PriceBasis, Pricing, amortised_capital, check_provider, energy_cost,
                                hourly_price, rent_cost)
from sizer.formulas.peaks import supported_precisions
from sizer.memo import keyed_cache
from sizer.units import Quantity, parse_count, parse_quantity
from sizer.workloads.request import DEFAULT_WORKLOAD, DEFAULT_WORKLOAD_DESCRIPTION, WorkloadRequest, check_search_grid
from sizer.engine.job import resolve_job

Objective = Literal["time", "cost", "pareto"]
Purchase = Literal["rent", "buy"]
Kind = Literal["gpu", "cpu", "accelerator"]
DEFAULT_MAX_DEVICES = 64


class RecommendRequest(WorkloadRequest):
    """A workload plus the constraints of the choice."""

    deadline: str | dict | None = Field(None, description="longest acceptable training time, e.g. '14 d'")
    have: list[str] | None = Field(None, max_length=8, description="hardware you already have, e.g. ['8x A100 80GB SXM']: "
                                                                 "the answer is for these only (sizer.plan.owned)")
    budget: str | dict | None = Field(None, description="most money to spend, e.g. '50000 USD'")
    host_memory: str | dict | None = Field(None, description="with have: RAM of one host, e.g. '128 GB', checked against "
                                                             "what ZeRO-Offload would put there")
    max_devices: int = Field(DEFAULT_MAX_DEVICES, ge=1, le=65536)
    purchase: Purchase = Field("rent", description="older name of pricing (rent or buy); pricing wins where given")
    pricing: Pricing | None = Field(None, description="rent (default: cloud prices; devices without one are listed "
                                    "apart, in 'unpriced'), buy (amortised purchase plus energy) or any (rent, else "
                                    "the amortised purchase; each cost says its price_basis)")
    cloud: str | None = Field(None, max_length=50, description="cloud provider whose on-demand prices to use (AWS, GCP, "
                                                               "Lambda, RunPod, Vast.ai, ...)")
    objective: Objective = "time"
    kinds: list[Kind] = Field(default_factory=lambda: ["gpu", "accelerator", "cpu"])
    headroom: bool = Field(False, description="reserve seed 003's 25-30 % extra memory")
    features: float | str | None = Field(None, description="input features per sample, for the K1 verdict")
    storage: StorageClass = "nvme"
    calibration: Calibration | None = Field(None, description="per-device efficiencies from sizer calibrate")
    suggest: int = Field(3, ge=0, le=16, description="rejected devices (the nearest to working first) that get the changes "
                                                   "that would make them work; 0: none (a faster answer)")


class CostSummary(Model):
    """Both sides, each with its basis, and which one ranks the device (``price_basis``)."""

    rent: CostRange | None  # cloud on-demand rent only
    buy: CostRange | None  # amortised purchase plus energy
    price_basis: PriceBasis | None  # the side the ranking and the budget use; None: neither is known


class RankedDevice(Model):
    rank: int
    device: str
    name: str
    kind: str
    count: int
    sharding: str
    zero: int
    tp: int
    pp: int
    ep: int = 1  # expert-parallel ranks (a mixture of experts)
    recompute: str
    precision: str
    micro_batch: float
    training_time: RangeOut
    cost: CostSummary
    price_basis: PriceBasis | None  # as cost.price_basis, beside the cost
    energy: RangeOut | None
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    fits: bool
    bound: str
    mfu: float
    pareto: bool


class RejectedDevice(Model):
    device: str
    name: str
    reason: str
    cause: Literal["precision", "batch", "memory", "deadline", "budget", "price"] = "memory"
    shortfall: float | None = Field(None, description="memory needed over the device's, or time over the deadline, at "
                                                      "the nearest option (above 1)")
    suggestions: list[Suggestion] = Field(default_factory=list, description="for the first few that do not fit or miss "
                                          "the deadline: the changes that would make them work, each evaluated again")


class RecommendResult(Model):
    workload: str
    objective: Objective
    purchase: Purchase
    pricing: Pricing = "rent"
    ranked: list[RankedDevice]
    unpriced: list[RankedDevice] = Field(default_factory=list,
                                         description="devices that serve but have no price of the asked basis, by time")
    rejected: list[RejectedDevice]
    k1: K1Result | None
    host: HostResult | None
    assumptions: list[Assumption]


COUNT_CHOICE = ("without a deadline, each device at its time-cost knee: the fastest power-of-two count whose "
                "device-hours stay within {knee:.0%} of that device's cheapest fitting count; with a deadline, the "
                "cheapest count that meets it")
PRICE_WORD = {"rent": "rent", "buy": "purchase", "any": "rent or purchase"}
PRICING_SAID = {"rent": "cloud on-demand rent only", "buy": "amortised purchase plus energy",
                "any": "cloud rent where the catalog has one, else the amortised purchase plus energy (each cost says which)"}
KNEE_COST = 1.25  # device-hours an option may cost over the cheapest, to be chosen for speed


# The request's free-text fields and how each is read: all are checked before any is used, so
# that every bad field is reported at once (the web form marks each).
_COUNT_FIELDS = ("params", "tokens", "samples", "epochs", "batch_size", "micro_batch", "forward_flops_per_sample")
_QUANTITY_FIELDS = {"deadline": "[time]", "budget": "[currency]"}


def field_errors(request: RecommendRequest) -> list[InputError]:
    """Every malformed free-text field of a request (not only the first), in field order.

    >>> [error.field for error in field_errors(RecommendRequest(params="seven", budget="5 GHz"))]
    ['params', 'budget']
    """
    errors: list[InputError] = []

    def check(field: str, parse) -> None:
        value = getattr(request, field)
        if value is not None:
            try:
                parse(field, value)
            except InputError as error:
                errors.append(error)

    for field in _COUNT_FIELDS:
        check(field, parse_count)
    check("precision", lambda field, value: parse_choice(Precision, value, field))
    for field, dimension in _QUANTITY_FIELDS.items():
        check(field, lambda field, value, dimension=dimension: parse_quantity(field, value, dimension))
    return errors


def _counts(max_devices: int) -> np.ndarray:
    return np.exp2(np.arange(int(np.log2(max_devices)) + 1))


@keyed_cache(maxsize=32, key=lambda devices, provider: (tuple(d.key for d in devices), provider))
def _price_arrays(devices: tuple[Device, ...], provider: str | None) -> dict[str, np.ndarray]:
    """Rent [USD/h] (a cloud price, as :func:`hourly_price` chooses it), purchase [USD] and TDP [W] per
    device, NaN where unknown; converted once."""
    rent, buy, tdp = [], [], []
    for device in devices:
        price = hourly_price(device, provider, pricing="rent")
        rent.append(price.hourly.to("USD/hour").magnitude if price.hourly is not None else np.nan)
        buy.append(parse_quantity("purchase_price", device.purchase_price.value, "[currency]").to("USD").magnitude
                   if device.purchase_price else np.nan)
        tdp.append(device.tdp.quantity("tdp", "[power]").to("W").magnitude if device.tdp is not None else np.nan)
    return {"rent": np.asarray(rent, dtype=float),
            "buy": np.asarray(buy, dtype=float), "tdp": np.asarray(tdp, dtype=float)}


def _choose(seconds: np.ndarray, count: np.ndarray, ok: np.ndarray, deadline_s: float | None) -> int | None:
    """The index of the chosen option of one device (module docstring), or None."""
    if not ok.any():
        return None
    device_hours = np.where(ok, seconds * count, np.inf)
    if deadline_s is not None:
        meets = ok & (seconds <= deadline_s)
        if not meets.any():
            return None
        return int(np.argmin(np.where(meets, device_hours, np.inf)))
    cheapest = device_hours.min()
    near = ok & (device_hours <= cheapest * KNEE_COST)
    return int(np.argmin(np.where(near, seconds, np.inf)))


def _reason(device: Device, table, i: int, ev, rows: np.ndarray, deadline_s: float | None, request) -> tuple[str, str, float | None]:
    """Why no option of device ``i`` serves, the kind of reason, and by how much it misses."""
    if not table.supported[i]:
        return f"no {request.precision} support (has {', '.join(supported_precisions(device)) or 'none'})", "precision", None
    feasible = ev.feasible[rows]
    if not feasible.any():
        return "the batch has fewer samples than the smallest device count", "batch", None
    fits = ev.fits[rows] & feasible
    if not fits.any():
        best = rows[feasible][np.argmin(ev.memory_needed[rows][feasible])]
        return (f"does not fit: needs {ev.memory_needed[best] * unit_factor('B', 'GB'):.3g} GB per device even sharded over "
                f"{int(ev.configs.count[best])}, has {table.memory[i] * unit_factor('B', 'GB'):.3g} GB"), "memory", \
            float(ev.memory_needed[best] / table.memory[i])
    fastest = rows[fits][np.argmin(ev.training_seconds[rows][fits])]
    days = ev.training_seconds[fastest] * unit_factor("s", "day")
    return (f"misses deadline: {days:.3g} days expected with {int(ev.configs.count[fastest])} device(s) "
            f"(max_devices {request.max_devices})"), "deadline", float(ev.training_seconds[fastest] / deadline_s)


def _pareto(points: list[tuple[float, float | None]]) -> list[bool]:
    """True where no other point is at least as fast and as cheap and better in one."""
    flags = []
    for i, (time_i, cost_i) in enumerate(points):
        if cost_i is None:
            flags.append(False)
            continue
        dominated = any(j != i and cost_j is not None and time_j <= time_i and cost_j <= cost_i
                        and (time_j < time_i or cost_j < cost_i) for j, (time_j, cost_j) in enumerate(points))
        flags.append(not dominated)
    return flags


def recommend(request: RecommendRequest | None = None, catalog: Catalog | None = None) -> RecommendResult:
    """Rank every catalog device for the workload and constraints (spec §3.10).

    With no request, the built-in default workload is used and named in the result. The answer is a
    pure function of the request and the catalog, so the last few are kept: a page or a client asking
    the same question again is answered without evaluating it again.
    """
    return _answer(request or RecommendRequest(), catalog or load_catalog())


@keyed_cache(maxsize=64, key=lambda request, catalog: (request.model_dump_json(warnings=False), catalog.key))
def _answer(request: RecommendRequest, catalog: Catalog) -> RecommendResult:
    result = _recommend(request, catalog)
    if request.suggest and any(r.cause in ("memory", "deadline") for r in result.rejected):
        from sizer.plan.suggestions import suggest_for_rejected  # the planner's what-to-change, on a few rows only

        result = suggest_for_rejected(request, result, catalog)
    return result


def _recommend(request: RecommendRequest | None, catalog: Catalog) -> RecommendResult:
    if request is None:
        request = RecommendRequest(**DEFAULT_WORKLOAD.model_dump(exclude_unset=True))
    elif request.params is None and request.samples is None and request.tokens is None \
            and request.model is None and request.workload is None:
        defaults = DEFAULT_WORKLOAD.model_dump(exclude_unset=True)
        request = request.model_copy(update={k: v for k, v in defaults.items() if k not in request.model_fields_set})
    problems = field_errors(request)
    if problems:
        raise problems[0] if len(problems) == 1 else InputErrors(problems)
    request = request.model_copy(update={"cloud": check_provider(request.cloud, catalog)})
    deadline = parse_quantity("deadline", request.deadline, "[time]") if request.deadline is not None else None
    budget = parse_quantity("budget", request.budget, "[currency]") if request.budget is not None else None
    if not request.kinds:
        raise InputError("kinds", request.kinds, "at least one of gpu, accelerator, cpu")
    job = resolve_job(request)
    described = ("default: " + DEFAULT_WORKLOAD_DESCRIPTION) if _is_default(request) else "given: " + job.summary
    devices = tuple(d for d in catalog if d.kind in request.kinds)
    if not devices:
        raise InputError("kinds", request.kinds, "kinds of device the catalog has")
    check_search_grid(len(devices), request.max_devices, job.batch_size)
    if request.calibration is not None:
        effs = tuple(calibrated_efficiencies(d, e) if (e := request.calibration.for_device(d)) else None for d in devices)
        table = build_device_table(devices, job.precision, effs)
    else:
        table = cached_device_table(devices, job.precision, job.arch is not None)
    counts = _counts(request.max_devices)
    pair_device, pair_count = (a.ravel() for a in np.meshgrid(np.arange(len(devices)), counts, indexing="ij"))
    found = search(job, table, pair_device, pair_count.astype(np.int64), headroom=request.headroom)
    ev = found.evaluation
    deadline_s = float(deadline.to("s").magnitude) if deadline is not None else None
    prices = _price_arrays(devices, request.cloud)
    mode = "calibrated" if request.calibration is not None else "datasheet"
    lows, highs = range_arrays(mode, job, devices)

    chosen, rejected = [], []
    for i, device in enumerate(devices):
        check_deadline()
        pairs = np.arange(i * len(counts), (i + 1) * len(counts))
        rows = found.chosen[pairs]
        ok = found.found[pairs]
        if (ok & ev.exact[rows]).any():  # counts that run the asked batch first; others only where none does
            ok = ok & ev.exact[rows]
        pick = _choose(ev.training_seconds[rows], ev.configs.count[rows], ok, deadline_s)
        if pick is None:
            every = np.flatnonzero((found.pair >= pairs[0]) & (found.pair <= pairs[-1]))
            reason, cause, shortfall = _reason(device, table, i, ev, every, deadline_s, request)
            rejected.append(RejectedDevice(device=device.id, name=device.name, reason=reason, cause=cause, shortfall=shortfall))
            continue
        chosen.append((i, rows[pick]))

    index = np.asarray([i for i, _ in chosen], dtype=np.int64)
    row = np.asarray([r for _, r in chosen], dtype=np.int64)
    count = ev.configs.count[row]
    hours = ev.training_seconds[row] * unit_factor("s", "hour")
    low, high = lows[index], highs[index]
    costs = COST_DEFAULTS
    pricing = request.pricing or request.purchase
    rent = rent_cost(Quantity(prices["rent"][index], "USD/hour"), count, Quantity(hours, "hour")).magnitude
    capital = prices["buy"][index] * count
    amortised = amortised_capital(Quantity(capital, "USD"), Quantity(hours, "hour"), costs.lifetime).magnitude
    energy = energy_cost(Quantity(prices["tdp"][index], "W"), count, Quantity(hours, "hour"), costs.utilisation,
                         costs.pue, costs.electricity_price).magnitude
    energy_kwh = prices["tdp"][index] * costs.utilisation * count * hours * costs.pue / 1000.0
    buy = amortised + energy
    # The one cost each device is ranked and budgeted by, and its basis (never mixed unlabelled).
    use_buy = np.full(len(row), pricing == "buy") if pricing != "any" else np.isnan(rent)
    order_cost = np.where(use_buy, buy, rent)
    basis = np.where(use_buy, "buy", "rent")
    spent = np.where(use_buy, capital, rent)
    keep = np.ones(len(row), dtype=bool)
    if budget is not None:
        limit = float(budget.to("USD").magnitude)
        for k, (i, _) in enumerate(chosen):
            if np.isnan(spent[k]):
                rejected.append(RejectedDevice(device=devices[i].id, name=devices[i].name, cause="price",
                                               reason=f"no {PRICE_WORD[pricing]} price in the catalog to check the budget against"))
                keep[k] = False
            elif spent[k] > limit:
                what = "capital" if basis[k] == "buy" else "rent"
                rejected.append(RejectedDevice(device=devices[i].id, name=devices[i].name, cause="budget",
                                               reason=f"over budget: {what} {spent[k]:,.0f} USD for {int(count[k])} device(s) "
                                                      f"against {limit:,.0f} USD"))
                keep[k] = False
    seconds = ev.training_seconds[row]
    unpriced = [k for k in range(len(row)) if keep[k] and np.isnan(order_cost[k])]
    candidates = [k for k in range(len(row)) if keep[k] and not np.isnan(order_cost[k])]
    flags = {k: False for k in unpriced}
    for side in ("rent", "buy"):  # a Pareto front of one basis at a time
        group = [k for k in candidates if basis[k] == side]
        flags.update(zip(group, _pareto([(float(seconds[k]), float(order_cost[k])) for k in group])))
    if request.objective == "time":
        order = sorted(candidates, key=lambda k: (seconds[k], np.inf if np.isnan(order_cost[k]) else order_cost[k]))
    elif request.objective == "cost":
        order = sorted(candidates, key=lambda k: (bool(np.isnan(order_cost[k])), 0.0 if np.isnan(order_cost[k]) else order_cost[k],
                                                  seconds[k]))
    else:
        order = sorted(candidates, key=lambda k: (not flags[k], seconds[k]))
    unit = time_unit(float(max((seconds[k] for k in order + unpriced), default=0.0)))
    # the one summary (sizer.engine.summary): each bound at least the physical limit, MFU at the floored step
    summary = summarise(ev, row, low, high, table.peak[index])
    floor_low = summary.step_low / np.maximum(summary.step_expected, 1e-300)
    floor_high = summary.step_high / np.maximum(summary.step_expected, 1e-300)
    ranked = []
    apart = sorted(unpriced, key=lambda k: seconds[k])
    for rank, k in enumerate(order + apart, start=1):
        i, r = chosen[k]
        device = devices[i]
        span = lambda value, u, k=k: dict(low=float(value * floor_low[k]), expected=float(value),  # noqa: E731
                                          high=float(value * floor_high[k]), unit=u)
        ranked.append(dict(
            rank=rank if rank <= len(order) else rank - len(order), device=device.id, name=device.name, kind=device.kind, count=int(count[k]),
            sharding="full" if ev.configs.zero[r] == 3 else "none", zero=int(ev.configs.zero[r]),
            tp=int(ev.configs.tp[r]), pp=int(ev.configs.pp[r]),
            ep=int(np.broadcast_to(ev.configs.ep, ev.configs.tp.shape)[r]), recompute=RECOMPUTE[int(ev.configs.recompute[r])],
            precision=table.precisions[i], micro_batch=float(ev.configs.micro_batch[r]),
            training_time=span(seconds[k] * unit_factor("s", unit), unit),
            cost=dict(rent=None if np.isnan(rent[k]) else dict(span(rent[k], "USD"), price_basis="rent"),
                      buy=None if np.isnan(buy[k]) else dict(span(buy[k], "USD"), price_basis="buy"),
                      price_basis=None if np.isnan(order_cost[k]) else str(basis[k])),
            price_basis=None if np.isnan(order_cost[k]) else str(basis[k]),
            energy=None if np.isnan(energy_kwh[k]) else span(energy_kwh[k], "kWh"),
            memory_per_device=dict(value=float(ev.memory_needed[r]) * unit_factor("B", "GB"), unit="GB"),
            device_memory=dict(value=float(table.memory[i]) * unit_factor("B", "GB"), unit="GB"), fits=bool(ev.fits[r]),
            bound=BOUNDS[int(ev.parts.bound[r])], mfu=float(summary.mfu[k]), pareto=flags[k]))

    k1 = estimate_k1(job.workload.params, job.workload.samples, request.features) if request.features is not None else None
    host = None
    if job.workload.sample_size is not None and (order or apart):
        best = (order or apart)[0]
        fastest_step = summary.step_low[best]  # the host must keep up with the fast end
        rate = ev.batch[chosen[best][1]] * job.tokens_per_sample / fastest_step
        host = estimate_host(job.samples, job.workload.sample_size, Quantity(rate, "sample/s"), request.storage)
    assumptions = list(job.assumptions)
    assumptions += [
        Assumption(name="device counts", value=COUNT_CHOICE.format(knee=KNEE_COST - 1) + f"; counts 1, 2, 4 ... {request.max_devices}",
                   source="sizer's default criterion"),
        Assumption(name="layouts", value="per device and count, the fastest that fits (the one layout search: tensor, "
                   "pipeline and context parallel, expert parallel for a mixture of experts, ZeRO 0-3, recomputation, "
                   "whole micro-batches; sizer plan ranks them)", source="sizer's layout search"),
        Assumption(name="range", value=f"{lows.min():.3g}-{highs.max():.3g} x expected at most, per device by its kind "
                   "and the workload's", source=error_spread()[mode]["source"] + "; sizer/engine/error_spread.yaml"),
        Assumption(name="between nodes", value="data-centre parts 8 to a node with a 400 Gb/s NIC per device; other GPUs "
                   "4 to a host on 100 Gb/s Ethernet", source="sizer/engine/constants.py (docs/references.md)"),
        Assumption(name="pricing", value=PRICING_SAID[pricing] + (
            f"; {len(unpriced)} device(s) without such a price listed apart (unpriced)" if unpriced else ""),
                   source="--pricing rent|buy|any; sizer/formulas/tco.py hourly_price"),
        Assumption(name="lifetime", value=f"{costs.lifetime:~P}", source=costs.lifetime_source),
        Assumption(name="PUE", value=f"{costs.pue:g}", source=costs.pue_source),
        Assumption(name="electricity price", value=f"{costs.electricity_price:~P}", source=costs.electricity_source),
    ]
    changed = [f"{devices[i].name} x {int(ev.configs.count[r])}: {ev.batch[r]:,.0f}" for i, r in chosen if not ev.exact[r]]
    if changed:  # the one search's rule (sizer.engine.evaluate): the nearest batch some layout runs, said
        assumptions.append(Assumption(
            name="batch size changed", value=f"{max(1.0, round(job.batch_size)):,.0f} {job.sample_word}s per step asked; "
            f"run instead (the nearest batch whole micro-batches on every replica make): {'; '.join(changed)}",
            source="sizer's layout search" + ("" if job.batch_given else "; the batch is the default: give --batch-size")))
    return RecommendResult(workload=described, objective=request.objective, purchase=request.purchase, pricing=pricing,
                           ranked=ranked[:len(order)], unpriced=ranked[len(order):], rejected=rejected, k1=k1, host=host, assumptions=assumptions)


def _is_default(request: RecommendRequest) -> bool:
    fields = DEFAULT_WORKLOAD.model_dump(exclude_unset=True)
    return all(getattr(request, k) == v for k, v in fields.items()) and request.model is None and request.workload is None \
        and request.batch_size is None and request.seq_len is None
