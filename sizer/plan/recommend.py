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

import functools
from collections import OrderedDict
from typing import Literal

import numpy as np
from pydantic import Field

from sizer.engine.calibration import Calibration, calibrated_efficiencies
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.schema import Device
from sizer.engine.evaluate import error_spread, range_arrays
from sizer.engine.search import search
from sizer.engine.devices import build_device_table, cached_device_table
from sizer.engine.roofline import BOUNDS, RECOMPUTE
from sizer.engine.training import time_unit
from sizer.choices import Precision, parse_choice
from sizer.deadline import check_deadline
from sizer.errors import InputError, InputErrors
from sizer.formulas.host import HostResult, StorageClass, estimate_host
from sizer.formulas.redundancy import K1Result, estimate_k1
from sizer.results import Assumption, Model, QuantityOut, RangeOut, unit_factor
from sizer.formulas.tco import CostAssumptions, RentBasis, amortised_capital, check_provider, energy_cost, hourly_price, rent_cost
from sizer.formulas.peaks import supported_precisions
from sizer.units import Quantity, parse_count, parse_quantity
from sizer.workloads.request import DEFAULT_WORKLOAD, DEFAULT_WORKLOAD_DESCRIPTION, WorkloadRequest, check_search_grid
from sizer.workloads.job import resolve_job

Objective = Literal["time", "cost", "pareto"]
Purchase = Literal["rent", "buy"]
Kind = Literal["gpu", "cpu", "accelerator"]
DEFAULT_MAX_DEVICES = 64


class RecommendRequest(WorkloadRequest):
    """A workload plus the constraints of the choice."""

    deadline: str | dict | None = Field(None, description="longest acceptable training time, e.g. '14 d'")
    budget: str | dict | None = Field(None, description="most money to spend, e.g. '50000 USD'")
    max_devices: int = Field(DEFAULT_MAX_DEVICES, ge=1, le=65536)
    purchase: Purchase = "rent"
    cloud: str | None = Field(None, max_length=50, description="cloud provider whose on-demand prices to use (AWS, GCP, "
                                                               "Lambda, ...); where a device has none, its amortised purchase cost")
    objective: Objective = "time"
    kinds: list[Kind] = Field(default_factory=lambda: ["gpu", "accelerator", "cpu"])
    headroom: bool = Field(False, description="reserve seed 003's 25-30 % extra memory")
    features: float | str | None = Field(None, description="input features per sample, for the K1 verdict")
    storage: StorageClass = "nvme"
    calibration: Calibration | None = Field(None, description="per-device efficiencies from sizer calibrate")


class CostSummary(Model):
    rent: RangeOut | None
    rent_basis: RentBasis = "unknown"  # "amortised purchase": no rent price, the owning cost per hour stands in
    buy: RangeOut | None


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


class RecommendResult(Model):
    workload: str
    objective: Objective
    purchase: Purchase
    ranked: list[RankedDevice]
    rejected: list[RejectedDevice]
    k1: K1Result | None
    host: HostResult | None
    assumptions: list[Assumption]


COUNT_CHOICE = ("without a deadline, each device at its time-cost knee: the fastest power-of-two count whose "
                "device-hours stay within {knee:.0%} of that device's cheapest fitting count; with a deadline, the "
                "cheapest count that meets it")
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


@functools.lru_cache(maxsize=32)
def _price_arrays(devices: tuple[str, ...], catalog_id: int, provider: str | None) -> dict[str, np.ndarray]:
    """Rent [USD/h] (a cloud price, else the amortised purchase cost, as ``sizer tco`` prices it) with
    its basis, purchase [USD] and TDP [W] per device, NaN where unknown; converted once."""
    catalog = _CATALOGS[catalog_id]
    rent, basis, buy, tdp = [], [], [], []
    for device_id in devices:
        device = catalog.find(device_id)
        price = hourly_price(device, provider)
        rent.append(price.hourly.to("USD/hour").magnitude if price.hourly is not None else np.nan)
        basis.append(price.basis)
        buy.append(parse_quantity("purchase_price", device.purchase_price.value, "[currency]").to("USD").magnitude
                   if device.purchase_price else np.nan)
        tdp.append(device.tdp.quantity("tdp", "[power]").to("W").magnitude if device.tdp is not None else np.nan)
    return {"rent": np.asarray(rent, dtype=float), "basis": np.asarray(basis, dtype=object),
            "buy": np.asarray(buy, dtype=float), "tdp": np.asarray(tdp, dtype=float)}


_CATALOGS: dict[int, Catalog] = {}


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


def _reason(device: Device, table, i: int, ev, rows: np.ndarray, deadline_s: float | None, request) -> str:
    """Why no option of device ``i`` serves."""
    if not table.supported[i]:
        return f"no {request.precision} support (has {', '.join(supported_precisions(device)) or 'none'})"
    feasible = ev.feasible[rows]
    if not feasible.any():
        return "the batch has fewer samples than the smallest device count"
    fits = ev.fits[rows] & feasible
    if not fits.any():
        best = rows[feasible][np.argmin(ev.memory_needed[rows][feasible])]
        return (f"does not fit: needs {ev.memory_needed[best] * unit_factor('B', 'GB'):.3g} GB per device even sharded over "
                f"{int(ev.configs.count[best])}, has {table.memory[i] * unit_factor('B', 'GB'):.3g} GB")
    fastest = rows[fits][np.argmin(ev.training_seconds[rows][fits])]
    days = ev.training_seconds[fastest] * unit_factor("s", "day")
    return (f"misses deadline: {days:.3g} days expected with {int(ev.configs.count[fastest])} device(s) "
            f"(max_devices {request.max_devices})")


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


_ANSWERS: "OrderedDict[tuple[str, int], tuple[Catalog, RecommendResult]]" = OrderedDict()
_ANSWERS_KEPT = 64


def recommend(request: RecommendRequest | None = None, catalog: Catalog | None = None) -> RecommendResult:
    """Rank every catalog device for the workload and constraints (spec §3.10).

    With no request, the built-in default workload is used and named in the result. The answer is a
    pure function of the request and the catalog, so the last few are kept: a page or a client asking
    the same question again is answered without evaluating it again.
    """
    catalog = catalog or load_catalog()
    key = ((request or RecommendRequest()).model_dump_json(warnings=False), id(catalog))
    kept = _ANSWERS.get(key)
    if kept is not None and kept[0] is catalog:
        _ANSWERS.move_to_end(key)
        return kept[1]
    result = _recommend(request, catalog)
    _ANSWERS[key] = (catalog, result)  # the catalog is held, so its identity is not reused while kept
    if len(_ANSWERS) > _ANSWERS_KEPT:
        _ANSWERS.popitem(last=False)
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
    _CATALOGS[id(catalog)] = catalog
    prices = _price_arrays(tuple(d.id for d in devices), id(catalog), request.cloud)
    mode = "calibrated" if request.calibration is not None else "datasheet"
    lows, highs = range_arrays(mode, job, devices)

    chosen, rejected = [], []
    for i, device in enumerate(devices):
        check_deadline()
        pairs = np.arange(i * len(counts), (i + 1) * len(counts))
        rows = found.chosen[pairs]
        pick = _choose(ev.training_seconds[rows], ev.configs.count[rows], found.found[pairs], deadline_s)
        if pick is None:
            every = np.flatnonzero((found.pair >= pairs[0]) & (found.pair <= pairs[-1]))
            rejected.append(RejectedDevice(device=device.id, name=device.name,
                                           reason=_reason(device, table, i, ev, every, deadline_s, request)))
            continue
        chosen.append((i, rows[pick]))

    index = np.asarray([i for i, _ in chosen], dtype=np.int64)
    row = np.asarray([r for _, r in chosen], dtype=np.int64)
    count = ev.configs.count[row]
    hours = ev.training_seconds[row] * unit_factor("s", "hour")
    low, high = lows[index], highs[index]
    costs = CostAssumptions()
    rent = rent_cost(Quantity(prices["rent"][index], "USD/hour"), count, Quantity(hours, "hour")).magnitude
    capital = prices["buy"][index] * count
    amortised = amortised_capital(Quantity(capital, "USD"), Quantity(hours, "hour"), costs.lifetime).magnitude
    energy = energy_cost(Quantity(prices["tdp"][index], "W"), count, Quantity(hours, "hour"), costs.utilisation,
                         costs.pue, costs.electricity_price).magnitude
    energy_kwh = prices["tdp"][index] * costs.utilisation * count * hours * costs.pue / 1000.0
    buy = amortised + energy
    spent = capital if request.purchase == "buy" else rent
    keep = np.ones(len(row), dtype=bool)
    if budget is not None:
        limit = float(budget.to("USD").magnitude)
        for k, (i, _) in enumerate(chosen):
            if np.isnan(spent[k]):
                rejected.append(RejectedDevice(device=devices[i].id, name=devices[i].name,
                                               reason=f"no {request.purchase} price in the catalog to check the budget against"))
                keep[k] = False
            elif spent[k] > limit:
                what = "capital" if request.purchase == "buy" else "rent"
                rejected.append(RejectedDevice(device=devices[i].id, name=devices[i].name,
                                               reason=f"over budget: {what} {spent[k]:,.0f} USD for {int(count[k])} device(s) "
                                                      f"against {limit:,.0f} USD"))
                keep[k] = False
    order_cost = buy if request.purchase == "buy" else rent
    seconds = ev.training_seconds[row]
    candidates = [k for k in range(len(row)) if keep[k]]
    pareto = _pareto([(float(seconds[k]), None if np.isnan(order_cost[k]) else float(order_cost[k])) for k in candidates])
    flags = dict(zip(candidates, pareto))
    if request.objective == "time":
        order = sorted(candidates, key=lambda k: (seconds[k], np.inf if np.isnan(order_cost[k]) else order_cost[k]))
    elif request.objective == "cost":
        order = sorted(candidates, key=lambda k: (bool(np.isnan(order_cost[k])), 0.0 if np.isnan(order_cost[k]) else order_cost[k],
                                                  seconds[k]))
    else:
        order = sorted(candidates, key=lambda k: (not flags[k], seconds[k]))
    unit = time_unit(float(max((seconds[k] for k in order), default=0.0)))
    ranked = []
    for rank, k in enumerate(order, start=1):
        i, r = chosen[k]
        device = devices[i]
        span = lambda value, u, k=k: dict(low=float(value * low[k]), expected=float(value),  # noqa: E731
                                          high=float(value * high[k]), unit=u)
        ranked.append(dict(
            rank=rank, device=device.id, name=device.name, kind=device.kind, count=int(count[k]),
            sharding="full" if ev.configs.zero[r] == 3 else "none", zero=int(ev.configs.zero[r]),
            tp=int(ev.configs.tp[r]), pp=int(ev.configs.pp[r]),
            ep=int(np.broadcast_to(ev.configs.ep, ev.configs.tp.shape)[r]), recompute=RECOMPUTE[int(ev.configs.recompute[r])],
            precision=table.precisions[i], micro_batch=float(ev.configs.micro_batch[r]),
            training_time=span(seconds[k] * unit_factor("s", unit), unit),
            cost=dict(rent=None if np.isnan(rent[k]) else span(rent[k], "USD"), rent_basis=prices["basis"][index[k]],
                             buy=None if np.isnan(buy[k]) else span(buy[k], "USD")),
            energy=None if np.isnan(energy_kwh[k]) else span(energy_kwh[k], "kWh"),
            memory_per_device=dict(value=float(ev.memory_needed[r]) * unit_factor("B", "GB"), unit="GB"),
            device_memory=dict(value=float(table.memory[i]) * unit_factor("B", "GB"), unit="GB"), fits=bool(ev.fits[r]),
            bound=BOUNDS[int(ev.parts.bound[r])], mfu=float(_mfu(job, ev, table, r)), pareto=flags[k]))

    k1 = estimate_k1(job.workload.params, job.workload.samples, request.features) if request.features is not None else None
    host = None
    if job.workload.sample_size is not None and order:
        best = order[0]
        fastest_step = ev.parts.step[chosen[best][1]] * low[best]  # the host must keep up with the fast end
        rate = ev.batch[chosen[best][1]] * job.tokens_per_sample / fastest_step
        host = estimate_host(job.samples, job.workload.sample_size, Quantity(rate, "sample/s"), request.storage)
    assumptions = list(job.assumptions)
    assumptions += [
        Assumption(name="device counts", value=COUNT_CHOICE.format(knee=KNEE_COST - 1) + f"; counts 1, 2, 4 ... {request.max_devices}",
                   source="sizer's default criterion"),
        Assumption(name="layouts", value="per device and count, the fastest that fits among data parallel with ZeRO 0/1/3, "
                   "recomputation none or full, tensor parallel inside a node and, for a mixture of experts, expert "
                   "parallel inside a node (sizer plan searches pipelines and "
                   "micro-batches too)", source="sizer's layout search"),
        Assumption(name="range", value=f"{lows.min():.3g}-{highs.max():.3g} x expected at most, per device by its kind "
                   "and the workload's", source=error_spread()[mode]["source"] + "; sizer/engine/error_spread.yaml"),
        Assumption(name="between nodes", value="data-centre parts 8 to a node with a 400 Gb/s NIC per device; other GPUs "
                   "4 to a host on 100 Gb/s Ethernet", source="sizer/engine/constants.py (docs/references.md)"),
        Assumption(name="lifetime", value=f"{costs.lifetime:~P}", source=costs.lifetime_source),
        Assumption(name="PUE", value=f"{costs.pue:g}", source=costs.pue_source),
        Assumption(name="electricity price", value=f"{costs.electricity_price:~P}", source=costs.electricity_source),
    ]
    return RecommendResult(workload=described, objective=request.objective, purchase=request.purchase,
                           ranked=ranked, rejected=rejected, k1=k1, host=host, assumptions=assumptions)


def _mfu(job, ev, table, r: int) -> float:
    return ev.parts.model_flops[r] / (ev.parts.step[r] * table.peak[ev.configs.device[r]])


def _is_default(request: RecommendRequest) -> bool:
    fields = DEFAULT_WORKLOAD.model_dump(exclude_unset=True)
    return all(getattr(request, k) == v for k, v in fields.items()) and request.model is None and request.workload is None \
        and request.batch_size is None and request.seq_len is None
