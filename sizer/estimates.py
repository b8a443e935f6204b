"""Request-level entry points: one request model and one function per estimate.

The CLI and the HTTP service both build these requests (the CLI from options, the service
from JSON bodies) and call these functions, so the two can never disagree. Every field error
is an :class:`~sizer.errors.InputError` naming the field.

>>> estimate_compute(WorkloadRequest(params=175e9, samples=300e9)).training_compute.value
3.15e+23
"""
from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from sizer.calibration import Calibration, calibrated_rates
from sizer.catalog import Catalog, load_catalog
from sizer.cells import CellsResult, estimate_cells
from sizer.complexity import ComplexityResult, estimate_complexity
from sizer.compute import COMPUTE_SOURCE, ComputeResult, training_compute_from_forward
from sizer.memory import MemoryResult, training_memory
from sizer.redundancy import DEFAULT_TOLERANCE, K1Result, estimate_k1
from sizer.results import Assumption, Estimate, QuantityOut
from sizer.tco import CostAssumptions, TcoResult, estimate_tco
from sizer.throughput import DEFAULT_DERATING, Derating, PeakResult, estimate_peak
from sizer.errors import InputError
from sizer.precision import check_precision
from sizer.profile import builtin_profile_names, load_profile
from sizer.profile_time import ProfileTimeResult, estimate_profile_time
from sizer.time_modes import choose_efficiencies
from sizer.timing import DEFAULT_STEP_OVERHEAD, TimeResult, estimate_training_time
from sizer.units import parse_count, parse_quantity
from sizer.workload import RequestModel, WorkloadRequest, check_batch_size, check_steps, resolve_workload

Sharding = Literal["none", "full"]
WORKLOAD_NAMES = tuple(builtin_profile_names())
Scalar = float | str
QuantityIn = str | dict | None


def _derating(value: float | None) -> Derating:
    return DEFAULT_DERATING if value is None else Derating.single(value)


def _catalog(catalog: Catalog | None) -> Catalog:
    return catalog if catalog is not None else load_catalog()


class PeakRequest(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"device": "Tesla P40"}, {"cores": 3840, "clock": "1.531 GHz"}, {"device": "H100 SXM", "precision": "bf16"}]})

    device: str | None = Field(None, description="device id or name; or give cores and clock")
    precision: str = "fp32"
    cores: Scalar | None = None
    clock: QuantityIn = None
    derating: float | None = Field(None, ge=0, lt=1)


def peak(request: PeakRequest, catalog: Catalog | None = None) -> PeakResult:
    device = _catalog(catalog).find(request.device) if request.device is not None else None
    return estimate_peak(device, request.precision, cores=request.cores, clock=request.clock,
                         derating=_derating(request.derating))


def estimate_compute(request: WorkloadRequest) -> ComputeResult:
    """Training compute of a workload: ``O_b · F_fwd · S · E``, with ``F_fwd = O_f · P`` by default."""
    workload = resolve_workload(request)
    compute = training_compute_from_forward(workload.forward_flops_per_sample, workload.samples, workload.epochs,
                                            workload.backward_factor)
    kept = [a for a in workload.assumptions if a.name == "forward FLOP per sample"]
    return ComputeResult(training_compute=QuantityOut.of(compute, "FLOP"),
                         forward_flops_per_sample=QuantityOut.of(workload.forward_flops_per_sample, "FLOP"),
                         formula=COMPUTE_SOURCE,
                         assumptions=[*kept, Assumption(name="backward factor O_b", value=f"{workload.backward_factor:g}",
                                                        source="seed 004 eq. 3: backward costs about twice the forward")])


class TimeRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"params": 175e9, "samples": 300e9, "device": "A100 80GB SXM", "count": 1024, "precision": "bf16"},
        {"workload": "resnet50", "batch_size": 256, "device": "H100 SXM", "precision": "fp16",
         "reference": "V100 SXM2 16GB=1200/s"}]})

    device: str
    count: int = Field(1, ge=1, le=1_000_000)
    derating: float | None = Field(None, ge=0, lt=1)
    sharding: Sharding = "none"
    overlap_allreduce: bool = False
    workload: str | None = Field(None, max_length=300, description=f"a built-in workload profile ({', '.join(WORKLOAD_NAMES)}) "
                                                                   "or, on the command line, a profile file")
    reference: str | None = Field(None, max_length=200, description="one measurement to predict from: 'DEVICE=THROUGHPUT/s'")
    reference_batch_size: Scalar | None = Field(None, description="batch of the reference measurement (default: batch_size)")
    calibration: Calibration | None = Field(None, description="per-device efficiencies from sizer calibrate")


def estimate_time(request: TimeRequest, catalog: Catalog | None = None) -> TimeResult | ProfileTimeResult:
    """Training time: per layer from a workload profile when ``workload`` is given, else from
    the parameter count (spec §3.3)."""
    catalog = _catalog(catalog)
    device = catalog.find(request.device)
    if request.workload is not None:
        return _profiled_time(request, device, catalog)
    if request.reference is not None:
        raise InputError("reference", request.reference, "a workload profile too (--workload): a reference "
                                                         "measurement calibrates a profiled workload")
    workload = resolve_workload(request)
    derating, overhead = _derating(request.derating), DEFAULT_STEP_OVERHEAD
    entry = request.calibration.for_device(device) if request.calibration else None
    if entry is not None:
        derating, overhead = calibrated_rates(entry)
    return estimate_training_time(workload, device, request.count, derating=derating, overhead=overhead,
                                  sharding=request.sharding, overlap_allreduce=request.overlap_allreduce)


def _profiled_time(request: TimeRequest, device, catalog: Catalog) -> ProfileTimeResult:
    if request.tokens is not None:
        raise InputError("tokens", request.tokens, "samples (sequences or images) for a profiled workload")
    profile = load_profile(request.workload, request.seq_len)
    if request.batch_size is None:
        raise InputError("batch_size", None, "the global batch size of the profiled workload")
    batch = parse_count("batch_size", request.batch_size)
    precision = check_precision(request.precision)
    reference_batch = parse_count("reference_batch_size", request.reference_batch_size) \
        if request.reference_batch_size is not None else None
    efficiency, mode, notes = choose_efficiencies(profile, device, precision=precision, batch_size=batch,
                                                  optimizer=request.optimizer, catalog=catalog, reference=request.reference,
                                                  reference_batch_size=reference_batch, calibration=request.calibration)
    samples = parse_count("samples", request.samples) if request.samples is not None else None
    epochs = parse_count("epochs", request.epochs)
    check_batch_size(batch)
    if samples is not None:
        check_steps(samples * epochs, batch)
    return estimate_profile_time(profile, device, batch_size=batch, precision=precision, optimizer=request.optimizer,
                                 count=request.count, samples=samples, epochs=epochs,
                                 efficiency=efficiency, mode=mode, sharding=request.sharding,
                                 overlap_allreduce=request.overlap_allreduce, extra_assumptions=tuple(notes))


class MemoryRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"params": 7e9, "tokens": 2e10, "precision": "bf16", "optimizer": "adamw", "device": "H100 SXM", "count": 8,
         "sharding": "full"}]})

    device: str | None = None
    count: int = Field(1, ge=1, le=1_000_000)
    sharding: Sharding = "none"
    headroom: bool = False
    micro_batch: Scalar | None = None


def estimate_memory(request: MemoryRequest, catalog: Catalog | None = None) -> MemoryResult:
    device = _catalog(catalog).find(request.device) if request.device is not None else None
    micro = parse_count("micro_batch", request.micro_batch) if request.micro_batch is not None else None
    return training_memory(resolve_workload(request, need_samples=False), device, request.count,
                           sharding=request.sharding, headroom=request.headroom, micro_batch=micro)


class CellsRequest(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"samples": 101136, "features": 75, "outputs": 10, "weights": 700000}]})

    samples: Scalar
    features: Scalar
    outputs: Scalar = 1
    weights: Scalar
    variables: Scalar = 0
    eta_b: Scalar = 1
    eta_w: Scalar = 1
    eta_v: Scalar = 1
    cell_size: QuantityIn = "4 B"


def cells(request: CellsRequest) -> CellsResult:
    return estimate_cells(request.samples, request.features, request.outputs, request.weights,
                          variables=request.variables, eta_b=request.eta_b, eta_w=request.eta_w, eta_v=request.eta_v,
                          cell_size=request.cell_size)


class K1Request(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"weights": 5000, "samples": 10, "features": 100}]})

    weights: Scalar
    samples: Scalar
    features: Scalar
    tolerance: float = Field(DEFAULT_TOLERANCE, ge=0, lt=1)


def k1(request: K1Request) -> K1Result:
    return estimate_k1(request.weights, request.samples, request.features, request.tolerance)


class ComplexityRequest(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"layers": [75, 512, 512, 512, 10]}]})

    layers: list[Scalar] = Field(..., max_length=10_000, description="input width, then each layer's width")
    operation_time: QuantityIn = "1 ns"
    inputs: Scalar | None = Field(None, description="fan-in of the first layer; then layers are all neuron layers")


def complexity(request: ComplexityRequest) -> ComplexityResult:
    return estimate_complexity(request.layers, request.operation_time, request.inputs)


class TcoRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"device": "H100 SXM", "count": 8, "training_time": "14 d"},
        {"device": "A100 80GB SXM", "params": 7e9, "tokens": 2e10, "precision": "bf16", "count": 8}]})

    device: str
    count: int = Field(1, ge=1, le=1_000_000)
    training_time: QuantityIn = Field(None, description="the run's length; else estimated from the workload")
    rent_price: QuantityIn = Field(None, description="per device, e.g. '2.5 USD/hour'")
    purchase_price: QuantityIn = Field(None, description="per device, e.g. '30000 USD'")
    lifetime: QuantityIn = "3 year"
    pue: float = Field(1.5, ge=1, le=5)
    electricity_price: QuantityIn = "0.15 USD/kWh"
    utilisation: float = Field(1.0, gt=0, le=1)
    host_share: QuantityIn = "0 USD"
    sharding: Sharding = "none"


def estimate_cost(request: TcoRequest, catalog: Catalog | None = None) -> TcoResult:
    device = _catalog(catalog).find(request.device)
    if request.training_time is not None:
        duration = Estimate.exact(parse_quantity("training_time", request.training_time, "[time]"))
    else:
        time = estimate_training_time(resolve_workload(request), device, request.count, sharding=request.sharding)
        t = time.training_time
        duration = Estimate(*(parse_quantity("training_time", {"value": v, "unit": t.unit}, "[time]")
                              for v in (t.low, t.expected, t.high)))
    defaults = CostAssumptions()
    costs = CostAssumptions(
        lifetime=parse_quantity("lifetime", request.lifetime, "[time]"), utilisation=request.utilisation, pue=request.pue,
        electricity_price=parse_quantity("electricity_price", request.electricity_price, "[currency]/[energy]"),
        host_share=parse_quantity("host_share", request.host_share, "[currency]", allow_zero=True),
        lifetime_source=defaults.lifetime_source if request.lifetime == "3 year" else "given",
        pue_source=defaults.pue_source if request.pue == 1.5 else "given",
        electricity_source=defaults.electricity_source if request.electricity_price == "0.15 USD/kWh" else "given")
    return estimate_tco(device, request.count, duration, rent_price=request.rent_price,
                        purchase_price=request.purchase_price, costs=costs)
