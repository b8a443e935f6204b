"""Which device, how many, how long, what cost: the recommendation (spec §3.10).

For every catalog device: the smallest count (1, 2, 4, ...) at which the workload fits in
memory and meets the deadline, its time and cost ranges, and its rank; every device that
cannot serve gets a reason.

>>> result = recommend(RecommendRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw"))
>>> result.ranked[0].count >= 1 and all(r.reason for r in result.rejected)
True
"""
from __future__ import annotations

from typing import Literal

import pint
from pydantic import Field

from sizer.catalog import Catalog, load_catalog
from sizer.calibration import Calibration, calibrated_efficiencies, calibrated_rates
from sizer.catalog_schema import Device
from sizer.deadline import check_deadline
from sizer.layer_time import default_efficiencies
from sizer.precision import check_precision, storage_scale
from sizer.profile import Profile, load_profile
from sizer.profile_time import ProfileTimeResult, estimate_profile_time
from sizer.errors import InputError
from sizer.host import HostResult, StorageClass, estimate_host
from sizer.memory import MemoryResult, training_memory
from sizer.redundancy import K1Result, estimate_k1
from sizer.results import Assumption, Estimate, Model, QuantityOut, RangeOut
from sizer.tco import CostAssumptions, TcoResult, estimate_tco
from sizer.throughput import supported_precisions
from sizer.throughput import DEFAULT_DERATING
from sizer.compute import training_compute_from_forward
from sizer.throughput import device_peak
from sizer.timing import DEFAULT_STEP_OVERHEAD, TimeResult, estimate_training_time, first_order_training_time
from sizer.units import Quantity, parse_quantity
from sizer.workload import (DEFAULT_WORKLOAD, DEFAULT_WORKLOAD_DESCRIPTION, Workload, WorkloadRequest, check_search_grid,
                            resolve_workload)

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
    objective: Objective = "time"
    kinds: list[Kind] = Field(default_factory=lambda: ["gpu", "accelerator", "cpu"])
    headroom: bool = Field(False, description="reserve seed 003's 25-30 % extra memory")
    features: float | str | None = Field(None, description="input features per sample, for the K1 verdict")
    storage: StorageClass = "nvme"
    workload: str | None = Field(None, max_length=300, description="a built-in workload profile (resnet50, bert-large, ...): "
                                                                   "time per layer instead of from the parameter count")
    calibration: Calibration | None = Field(None, description="per-device efficiencies from sizer calibrate")


class CostSummary(Model):
    rent: RangeOut | None
    buy: RangeOut | None


class RankedDevice(Model):
    rank: int
    device: str
    name: str
    kind: str
    count: int
    sharding: str
    training_time: RangeOut
    cost: CostSummary
    energy: RangeOut | None
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    fits: bool
    bound: str
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


class _Candidate(Model):
    device: Device
    memory: MemoryResult
    time: TimeResult | ProfileTimeResult
    tco: TcoResult


def _counts(max_devices: int) -> list[int]:
    counts, n = [], 1
    while n <= max_devices:
        counts.append(n)
        n *= 2
    return counts


def _bound(time: TimeResult | ProfileTimeResult) -> str:
    if isinstance(time, ProfileTimeResult):
        return time.layer_groups[0].bound if time.layer_groups else "overhead"
    return time.bound


def _time_on(device: Device, workload: Workload, request: RecommendRequest, count: int, sharding: str,
             profile: Profile | None) -> TimeResult | ProfileTimeResult:
    """Training time of the workload on ``count`` devices: per layer with a profile, else from
    the parameter count; with the device's calibration where one is given."""
    entry = request.calibration.for_device(device) if request.calibration else None
    if profile is not None:
        efficiency = calibrated_efficiencies(device, entry) if entry else default_efficiencies(device)
        return estimate_profile_time(profile, device, batch_size=workload.batch_size, precision=workload.precision,
                                     optimizer=workload.optimizer, count=count, samples=workload.samples,
                                     epochs=workload.epochs, efficiency=efficiency,
                                     mode="calibrated" if entry else "datasheet", sharding=sharding)
    derating, overhead = calibrated_rates(entry) if entry else (DEFAULT_DERATING, DEFAULT_STEP_OVERHEAD)
    return estimate_training_time(workload, device, count, sharding=sharding, derating=derating, overhead=overhead)


def _duration(time: TimeResult | ProfileTimeResult) -> Estimate:
    unit = time.training_time.unit
    return Estimate(Quantity(time.training_time.low, unit), Quantity(time.training_time.expected, unit),
                    Quantity(time.training_time.high, unit))


def _cost_of(candidate: _Candidate, purchase: str) -> RangeOut | None:
    if purchase == "rent":
        return candidate.tco.rent
    return candidate.tco.buy.total if candidate.tco.buy else None


def _evaluate(device: Device, workload: Workload, request: RecommendRequest, deadline: pint.Quantity | None,
              budget: pint.Quantity | None, profile: Profile | None = None) -> _Candidate | str:
    """The cheapest-in-devices way to run the workload on this device, or why there is none."""
    if workload.precision not in supported_precisions(device):
        return f"no {workload.precision} support (has {', '.join(supported_precisions(device)) or 'none'})"
    counts = _counts(min(request.max_devices, int(workload.batch_size)))
    if deadline is not None and profile is None:
        out_of_reach = _deadline_out_of_reach(device, workload, counts[-1], deadline)
        if out_of_reach:
            return out_of_reach
    closest_fit = None
    fastest = None
    for count in counts:
        check_deadline()
        sharding = "none"
        memory = training_memory(workload, device, count, headroom=request.headroom)
        if not memory.fits and count > 1:
            sharding = "full"
            memory = training_memory(workload, device, count, sharding="full", headroom=request.headroom)
        if not memory.fits:
            closest_fit = memory
            continue
        time = _time_on(device, workload, request, count, sharding, profile)
        fastest = time
        if deadline is not None and Quantity(time.training_time.expected, time.training_time.unit) > deadline:
            continue
        tco = estimate_tco(device, count, _duration(time), costs=CostAssumptions())
        candidate = _Candidate(device=device, memory=memory, time=time, tco=tco)
        if budget is not None:
            cost = _cost_of(candidate, request.purchase)
            if cost is None:
                return f"no {request.purchase} price in the catalog to check the budget against"
            spent = Quantity(tco.buy.capital.value, "USD") if request.purchase == "buy" else Quantity(cost.expected, "USD")
            if spent > budget:
                what = "capital" if request.purchase == "buy" else "rent"
                return f"over budget: {what} {spent.to('USD'):,.0f~P} for {count} device(s) against {budget.to('USD'):,.0f~P}"
        return candidate
    if fastest is None:
        need = closest_fit.required_with_headroom or closest_fit.total if closest_fit else None
        where = f" even sharded over {closest_fit.count}" if closest_fit and closest_fit.count > 1 else ""
        return (f"does not fit: needs {need.value:.3g} GB per device{where}, has "
                f"{closest_fit.device_memory.value:.3g} GB" if need else "does not fit in memory")
    return (f"misses deadline: {fastest.training_time.expected:.3g} {fastest.training_time.unit} expected "
            f"with {fastest.count} device(s) (max_devices {request.max_devices})")


def _deadline_out_of_reach(device: Device, workload: Workload, count: int, deadline: pint.Quantity) -> str | None:
    """Why no count up to ``count`` can meet the deadline, found without trying each: the physical
    limit ``C / (n R_peak)`` (seed 004 eq. 4), below which no estimate goes, already exceeds it."""
    peak, _ = device_peak(device, workload.precision)
    compute = training_compute_from_forward(workload.forward_flops_per_sample, workload.samples, workload.epochs,
                                            workload.backward_factor)
    limit = first_order_training_time(compute, peak, count)
    if limit <= deadline:
        return None
    return (f"misses deadline: even {count} device(s) need at least {limit.to('hour').magnitude:.3g} hour "
            "(physical limit C/(n R_peak))")


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

    With no request, the built-in default workload is used and named in the result.
    """
    described = "default: " + DEFAULT_WORKLOAD_DESCRIPTION
    if request is None:
        request = RecommendRequest(**DEFAULT_WORKLOAD.model_dump(exclude_unset=True))
    elif request.params is None and request.samples is None and request.tokens is None:
        request = request.model_copy(update=DEFAULT_WORKLOAD.model_dump(exclude_unset=True))
    else:
        described = "given"
    catalog = catalog or load_catalog()
    profile = None
    if request.workload is not None:
        profile = load_profile(request.workload, request.seq_len)
        request = _with_profile_figures(request, profile)
    workload = resolve_workload(request)
    deadline = parse_quantity("deadline", request.deadline, "[time]") if request.deadline is not None else None
    budget = parse_quantity("budget", request.budget, "[currency]") if request.budget is not None else None
    if not request.kinds:
        raise InputError("kinds", request.kinds, "at least one of gpu, accelerator, cpu")
    check_search_grid(sum(device.kind in request.kinds for device in catalog), request.max_devices, workload.batch_size)

    candidates: list[_Candidate] = []
    rejected: list[RejectedDevice] = []
    for device in catalog:
        check_deadline()
        if device.kind not in request.kinds:
            continue
        outcome = _evaluate(device, workload, request, deadline, budget, profile)
        if isinstance(outcome, str):
            rejected.append(RejectedDevice(device=device.id, name=device.name, reason=outcome))
        else:
            candidates.append(outcome)

    def cost_expected(candidate: _Candidate) -> float | None:
        cost = _cost_of(candidate, request.purchase)
        return cost.expected if cost else None

    def seconds(candidate: _Candidate) -> float:
        return Quantity(candidate.time.training_time.expected, candidate.time.training_time.unit).to("s").magnitude

    pareto = dict(zip((c.device.id for c in candidates),
                      _pareto([(seconds(c), cost_expected(c)) for c in candidates])))
    if request.objective == "time":
        key = seconds
        order = sorted(candidates, key=lambda c: (key(c), cost_expected(c) or float("inf")))
    elif request.objective == "cost":
        order = sorted(candidates, key=lambda c: (cost_expected(c) is None, cost_expected(c) or 0.0, seconds(c)))
    else:
        order = sorted(candidates, key=lambda c: (not pareto[c.device.id], seconds(c)))

    ranked = []
    for rank, c in enumerate(order, start=1):
        buy = c.tco.buy
        ranked.append(RankedDevice(
            rank=rank, device=c.device.id, name=c.device.name, kind=c.device.kind, count=c.time.count,
            sharding=c.memory.sharding, training_time=c.time.training_time.model_copy(),
            cost=CostSummary(rent=c.tco.rent, buy=buy.total if buy else None),
            energy=buy.energy_used if buy else None, memory_per_device=c.memory.required_with_headroom or c.memory.total,
            device_memory=c.memory.device_memory, fits=bool(c.memory.fits), bound=_bound(c.time),
            pareto=pareto[c.device.id]))
    ranked = _same_time_unit(ranked)

    k1 = None
    if request.features is not None:
        k1 = estimate_k1(workload.params, workload.samples, request.features)
    host = None
    if workload.sample_size is not None and order:
        best = order[0].time.throughput
        host = estimate_host(workload.samples, workload.sample_size, Quantity(best.high, best.unit).to("sample/s"),
                             request.storage)
    assumptions = list(workload.assumptions)
    if order:
        assumptions += [a for a in order[0].time.assumptions if a.name in ("derating d", "per-step overhead")]
        assumptions += [a for a in order[0].tco.assumptions if a.name in ("lifetime", "PUE", "electricity price")]
    assumptions.append(Assumption(name="device counts", value=f"each device at the smallest of 1, 2, 4, ... {request.max_devices} that fits in memory "
                                                                     "and meets the deadline, so ranks compare different counts; "
                                                                     "sharded (ZeRO-3/FSDP) when replicas do not fit",
                                  source="spec §3.10"))
    return RecommendResult(workload=described, objective=request.objective, purchase=request.purchase,
                           ranked=ranked, rejected=rejected, k1=k1, host=host, assumptions=assumptions)


def _with_profile_figures(request: RecommendRequest, profile: Profile) -> RecommendRequest:
    """The request with the profile's parameters, forward FLOP and activation memory."""
    if request.tokens is not None:
        raise InputError("tokens", request.tokens, "samples (images or sequences) with a workload profile")
    if request.samples is None:
        raise InputError("samples", None, f"the number of training samples ({profile.sample}s) of the {profile.name} workload")
    if request.batch_size is None:
        raise InputError("batch_size", None, f"the global batch size of the {profile.name} workload")
    activations = profile.activation_bytes * storage_scale(check_precision(request.precision))
    return request.model_copy(update={"params": profile.params, "forward_flops_per_sample": profile.forward_flops,
                                      "activation_memory_per_sample": {"value": activations, "unit": "B"}})


def _same_time_unit(ranked: list[RankedDevice]) -> list[RankedDevice]:
    """Give every ranked time the same unit so that a table reads down a column."""
    if not ranked:
        return ranked
    longest = max(Quantity(r.training_time.expected, r.training_time.unit) for r in ranked)
    unit = "day" if longest >= Quantity(3, "day") else ("hour" if longest >= Quantity(2, "hour") else "s")
    out = []
    for r in ranked:
        t = r.training_time
        estimate = Estimate(Quantity(t.low, t.unit), Quantity(t.expected, t.unit), Quantity(t.high, t.unit))
        out.append(r.model_copy(update={"training_time": estimate.out(unit)}))
    return out
