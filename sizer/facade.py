"""The one facade of the core: every request model, result model and entry function that the
CLI (``cli/``) and the HTTP service (``api/``) use, in one place.

The CLI and the HTTP service both build these requests (the CLI from options, the service
from JSON bodies) and call these functions, so the two can never disagree. Every field error
is an :class:`~sizer.errors.InputError` naming the field. The answers defined elsewhere in the
core (recommend, plan, sweep, inference, catalog views, calibration) are re-exported here.

>>> estimate_compute(WorkloadRequest(params=175e9, samples=300e9)).training_compute.value
3.15e+23
"""
from __future__ import annotations

from pydantic import ConfigDict, Field

from sizer.engine.calibration import Calibration
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.formulas.cells import CellsResult, estimate_cells
from sizer.choices import zero_stage_of
from sizer.formulas.complexity import ComplexityResult, estimate_complexity
from sizer.formulas.compute import COMPUTE_SOURCE, ComputeResult, training_compute_from_forward
from sizer.errors import InputError
from sizer.workloads.profile import builtin_profile_names
from sizer.formulas.redundancy import DEFAULT_TOLERANCE, K1Result, estimate_k1
from sizer.results import Assumption, Estimate, QuantityOut
from sizer.formulas.peaks import DEFAULT_DERATING, Derating, PeakResult, estimate_peak
from sizer.units import Quantity, parse_count, parse_quantity
from sizer.workloads.request import RequestModel, WorkloadRequest

# Re-exported for cli/ and api/, which import the core through this module only.
from sizer.datafile import check_writable, load_json, write_text  # noqa: E402,F401
from sizer.deadline import clear_deadline, set_deadline  # noqa: E402,F401
from sizer.engine.calibration import calibrate_runs, load_calibration, runs_from_report, save_calibration  # noqa: E402,F401
from sizer.errors import CatalogError, DeviceLookupError, EstimateTimeout, InputErrors, SizerError  # noqa: E402,F401
from sizer.results import Model, ensure_finite, unit_factor  # noqa: E402,F401

# The rest of the facade's names are imported when first used (PEP 562), so that a command that
# needs none of them (`sizer peak`) does not pay for importing the engine, the planner and serving
# at start-up (benchmarks/startup.py). name -> module that defines it.
_LAZY = {
    **dict.fromkeys(("DeviceDetail", "DeviceSummary", "describe_device", "summarize_device"), "sizer.hardware.view"),
    **dict.fromkeys(("InferenceRequest", "InferenceResult", "estimate_inference"), "sizer.inference.estimate"),
    **dict.fromkeys(("InferenceRecommendRequest", "InferenceRecommendResult", "recommend_inference"),
                    "sizer.inference.deployments"),
    **dict.fromkeys(("PlanRequest", "PlanResult", "plan"), "sizer.plan.planner"),
    **dict.fromkeys(("RecommendRequest", "RecommendResult", "recommend"), "sizer.plan.recommend"),
    **dict.fromkeys(("MAX_EVALUATIONS", "sweep"), "sizer.plan.sweep"),
    **dict.fromkeys(("find_model", "model_names"), "sizer.workloads.registry"),
    **dict.fromkeys(("TimeResult", "estimate_training"), "sizer.engine.training"),
    **dict.fromkeys(("MemoryResult", "training_memory"), "sizer.plan.memory_report"),
    **dict.fromkeys(("CostAssumptions", "TcoResult", "check_provider", "estimate_tco"), "sizer.formulas.tco"),
    "choose_efficiencies": "sizer.engine.modes", "RECOMPUTE": "sizer.engine.roofline",
    "resolve_job": "sizer.workloads.job",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once imported, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

Sharding = str  # "none" or "full" (ZeRO-3), parsed by sizer.choices: a wrong name is an InputError
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
    """Training compute of a workload: ``O_b · F_fwd · S · E``, with the forward FLOP of its layers
    (``F_fwd = O_f · P`` for a dense network given by its parameter count)."""
    from sizer.workloads.job import resolve_job

    job = resolve_job(request)
    workload = job.workload
    forward = Quantity(job.layers.total_forward_flops, "FLOP")
    compute = training_compute_from_forward(forward, job.samples, job.epochs, workload.backward_factor)
    kept = [a for a in job.assumptions if a.name in ("forward FLOP per sample", "layers", "workload profile")]
    return ComputeResult(training_compute=QuantityOut.of(compute, "FLOP"),
                         forward_flops_per_sample=QuantityOut.of(forward, "FLOP"),
                         formula=COMPUTE_SOURCE,
                         assumptions=[*kept, Assumption(name="backward factor O_b", value=f"{workload.backward_factor:g}",
                                                        source="seed 004 eq. 3: backward costs about twice the forward")])


class TimeRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"model": "llama-2-7b", "tokens": 2e12, "device": "H100 SXM", "count": 256},
        {"params": 175e9, "samples": 300e9, "device": "A100 80GB SXM", "count": 1024, "precision": "bf16"},
        {"workload": "resnet50", "batch_size": 256, "device": "H100 SXM", "precision": "fp16",
         "reference": "V100 SXM2 16GB=1200/s"}]})

    device: str
    count: int = Field(1, ge=1, le=1_000_000)
    zero: int | None = Field(None, ge=0, le=3, description="ZeRO stage 0-3 (FSDP FULL_SHARD is 3)")
    tp: int | None = Field(None, ge=1, le=1024, description="tensor-parallel size (Megatron style, with sequence "
                                                          "parallelism); no layout given: the search chooses")
    pp: int | None = Field(None, ge=1, le=1024, description="pipeline-parallel stages (1F1B)")
    ep: int | None = Field(None, ge=1, le=1024, description="expert-parallel size (a mixture of experts): divides the "
                                                          "experts and the data-parallel size; no layout given: the search chooses")
    interleave: int = Field(1, ge=1, le=64, description="virtual pipeline chunks per stage (interleaved 1F1B)")
    recompute: str | None = Field(None, description="activation recomputation: none, selective or full")
    sharding: Sharding = "none"
    overlap_allreduce: bool = False
    headroom: bool = False
    offload: bool = Field(False, description="optimizer states and master weights in host memory (ZeRO-Offload)")
    hybrid_shard: bool = Field(False, description="ZeRO-3 within a node, replicated across nodes (FSDP HYBRID_SHARD)")
    system: str | None = Field(None, max_length=100, description="a catalog node type (DGX H100, AWS p5, ...): devices "
                                                                "per node, the link inside and the network between nodes")
    reference: str | None = Field(None, max_length=200, description="one measurement to predict from: 'DEVICE=THROUGHPUT/s'")
    reference_batch_size: Scalar | None = Field(None, description="batch of the reference measurement (default: batch_size)")
    calibration: Calibration | None = Field(None, description="per-device efficiencies from sizer calibrate")


def recompute_index(value: str | None) -> int | None:
    """The recomputation policy's index (none, selective, full), or InputError listing them."""
    from sizer.engine.roofline import RECOMPUTE

    if value is None:
        return None
    name = value.strip().lower() if isinstance(value, str) else value
    if name not in RECOMPUTE:
        raise InputError("recompute", value, f"one of {', '.join(RECOMPUTE)}")
    return RECOMPUTE.index(name)


def node_type(name: str | None, device):
    """The topology of a catalog node type, checked to hold ``device``; None when no name is given."""
    if name is None:
        return None
    from sizer.hardware.networks import load_networks

    topology = load_networks().topology(name)
    if topology.device != device.id:
        raise InputError("system", name, f"a node type of {device.name} ({topology.system} holds {topology.device})")
    return topology


def _zero_stage(request) -> int | None:
    if request.zero is None and request.sharding == "none":
        return None  # not given
    stage = zero_stage_of(request.sharding)
    if request.zero is not None:
        if stage and request.zero != stage:
            raise InputError("zero", request.zero, f"the stage --sharding {request.sharding} means ({stage}), or one of the two")
        return request.zero
    return stage


def estimate_time(request: TimeRequest, catalog: Catalog | None = None) -> TimeResult:
    """Step time, training time, memory and utilisation from the one engine (spec §3.3)."""
    from sizer.engine.modes import choose_efficiencies
    from sizer.engine.training import estimate_training
    from sizer.workloads.job import resolve_job

    catalog = _catalog(catalog)
    device = catalog.find(request.device)
    job = resolve_job(request)
    if request.reference is not None and request.workload is None and request.model is None:
        raise InputError("reference", request.reference, "a workload profile or a model too (--workload or --model): a "
                                                         "reference measurement calibrates a described workload")
    reference_batch = parse_count("reference_batch_size", request.reference_batch_size) \
        if request.reference_batch_size is not None else None
    efficiency, mode, notes = choose_efficiencies(job, device, catalog=catalog, reference=request.reference,
                                                  reference_batch_size=reference_batch, calibration=request.calibration)
    topology = node_type(request.system, device)
    return estimate_training(job, device, request.count, zero=_zero_stage(request), tp=request.tp, pp=request.pp,
                             ep=request.ep,
                             topology=topology, offload=request.offload, hybrid_shard=request.hybrid_shard,
                             recompute=recompute_index(request.recompute), interleave=request.interleave,
                             mode=mode, efficiency=efficiency,
                             headroom=request.headroom, overlap_allreduce=request.overlap_allreduce,
                             extra_assumptions=tuple(notes))


class MemoryRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"params": 7e9, "tokens": 2e10, "precision": "bf16", "optimizer": "adamw", "device": "H100 SXM", "count": 8,
         "sharding": "full"},
        {"params": 7.5e9, "count": 64, "zero": 2, "precision": "fp16", "optimizer": "adam"}]})

    device: str | None = None
    count: int = Field(1, ge=1, le=1_000_000)
    zero: int | None = Field(None, ge=0, le=3, description="ZeRO stage 0-3 (FSDP FULL_SHARD is 3)")
    sharding: Sharding = "none"
    headroom: bool = False
    recompute: str = Field("none", description="activation recomputation: none, selective or full")
    ep: int = Field(1, ge=1, le=1024, description="expert-parallel size (a mixture of experts): routed experts split over "
                                                 "ep of the count data-parallel devices")


def estimate_memory(request: MemoryRequest, catalog: Catalog | None = None) -> MemoryResult:
    from sizer.plan.memory_report import training_memory
    from sizer.workloads.job import resolve_job

    device = _catalog(catalog).find(request.device) if request.device is not None else None
    return training_memory(resolve_job(request, need_samples=False), device, request.count, zero=_zero_stage(request) or 0,
                           headroom=request.headroom, recompute=recompute_index(request.recompute) or 0, ep=request.ep)


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
    cloud: str | None = Field(None, max_length=50, description="cloud provider whose on-demand price to use (AWS, GCP, "
                                                               "Lambda, ...); the cheapest of any provider if left out")
    purchase_price: QuantityIn = Field(None, description="per device, e.g. '30000 USD'")
    lifetime: QuantityIn = "3 year"
    pue: float = Field(1.5, ge=1, le=5)
    electricity_price: QuantityIn = "0.15 USD/kWh"
    utilisation: float = Field(1.0, gt=0, le=1)
    host_share: QuantityIn = "0 USD"
    zero: int | None = Field(None, ge=0, le=3, description="ZeRO stage 0-3 (FSDP FULL_SHARD is 3)")
    sharding: Sharding = "none"


def estimate_cost(request: TcoRequest, catalog: Catalog | None = None) -> TcoResult:
    from sizer.engine.training import estimate_training
    from sizer.formulas.tco import CostAssumptions, check_provider, estimate_tco
    from sizer.workloads.job import resolve_job

    catalog = _catalog(catalog)
    device = catalog.find(request.device)
    cloud = check_provider(request.cloud, catalog)
    if request.training_time is not None:
        duration = Estimate.exact(parse_quantity("training_time", request.training_time, "[time]"))
    else:
        time = estimate_training(resolve_job(request), device, request.count, zero=_zero_stage(request))
        t = time.training_time
        duration = Estimate(*(Quantity(v, t.unit) for v in (t.low, t.expected, t.high)))
    defaults = CostAssumptions()
    costs = CostAssumptions(
        lifetime=parse_quantity("lifetime", request.lifetime, "[time]"), utilisation=request.utilisation, pue=request.pue,
        electricity_price=parse_quantity("electricity_price", request.electricity_price, "[currency]/[energy]"),
        host_share=parse_quantity("host_share", request.host_share, "[currency]", allow_zero=True),
        lifetime_source=defaults.lifetime_source if request.lifetime == "3 year" else "given",
        pue_source=defaults.pue_source if request.pue == 1.5 else "given",
        electricity_source=defaults.electricity_source if request.electricity_price == "0.15 USD/kWh" else "given")
    return estimate_tco(device, request.count, duration, rent_price=request.rent_price,
                        purchase_price=request.purchase_price, costs=costs, cloud=cloud)
