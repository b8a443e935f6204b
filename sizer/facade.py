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
from sizer.hardware.catalog import CATALOG_ENV, Catalog, catalog_template, load_catalog  # noqa: F401
from sizer.formulas.cells import CellsResult, estimate_cells
from sizer.choices import Precision, PrecisionName, Recompute, RecomputeName, Sharding, ShardingName, parse_choice, recompute_index, zero_stage_of  # noqa: F401
from sizer.formulas.complexity import ComplexityResult, estimate_complexity
from sizer.formulas.compute import COMPUTE_SOURCE, ComputeResult
from sizer.errors import InputError, require_device
from sizer.workloads.profile import builtin_profile_names
from sizer.formulas.redundancy import DEFAULT_TOLERANCE, K1Result, estimate_k1
from sizer.results import Assumption, Estimate, QuantityOut
from sizer.formulas.tco import COST_DEFAULTS, Pricing
from sizer.hardware.schema import OfferTerm
from sizer.formulas.peaks import DEFAULT_DERATING, Derating, PeakResult, estimate_peak
from sizer.units import Quantity, parse_count, parse_quantity  # noqa: F401
from sizer.workloads.request import RequestModel, WorkloadRequest

# Re-exported for cli/ and api/, which import the core through this module only.
from sizer.datafile import check_writable, load_json, write_text  # noqa: E402,F401
from sizer.deadline import clear_deadline, remaining_seconds, set_deadline, time_limit  # noqa: E402,F401
from sizer.engine.calibration import calibrate_runs, load_calibration, runs_from_report, save_calibration  # noqa: E402,F401
from sizer.errors import CatalogError, DeviceLookupError, EstimateTimeout, InputErrors, SizerError  # noqa: E402,F401
from sizer.results import Model, ensure_finite, unit_factor  # noqa: E402,F401

# The rest of the facade's names are imported when first used (PEP 562), so that a command that
# needs none of them (`sizer peak`) does not pay for importing the engine, the planner and serving
# at start-up (benchmarks/startup.py). name -> module that defines it.
_LAZY = {
    **dict.fromkeys(("DeviceDetail", "DeviceSummary", "describe_device", "summarize_device"), "sizer.device_view"),
    **dict.fromkeys(("InferenceRequest", "InferenceResult"), "sizer.inference.estimate"),
    **dict.fromkeys(("InferenceRecommendRequest", "InferenceRecommendResult", "recommend_inference"),
                    "sizer.inference.deployments"),
    **dict.fromkeys(("PlanRequest", "PlanResult", "plan"), "sizer.plan.planner"),
    **dict.fromkeys(("OwnedResult", "answer_inference", "answer_training"), "sizer.plan.owned_answer"),
    **dict.fromkeys(("MemoryRequest", "TimeRequest", "memory_estimate", "node_type", "time_estimate", "zero_stage"),
                    "sizer.plan.estimates"),
    "suggestions_for": "sizer.plan.suggestions",
    **dict.fromkeys(("every_bad_field", "text_field_errors"), "sizer.field_check"),

    **dict.fromkeys(("recommend_serving_iterations", "refuse_over_budget", "serving_iterations"), "sizer.inference.work"),
    **dict.fromkeys(("RecommendRequest", "RecommendResult", "quick_question", "recommend", "recommend_json", "warm_up"),
                    "sizer.plan.recommend"),
    **dict.fromkeys(("MAX_EVALUATIONS", "sweep"), "sizer.plan.sweep"),
    **dict.fromkeys(("find_model", "model_names"), "sizer.workloads.registry"),
    **dict.fromkeys(("FileRef", "model_source", "profile_source"), "sizer.workloads.source"),
    **dict.fromkeys(("ModelSummary", "list_models"), "sizer.workloads.listing"),
    **dict.fromkeys(("TimeResult", "estimate_training"), "sizer.engine.training"),
    **dict.fromkeys(("MemoryResult", "training_memory"), "sizer.plan.memory_report"),
    **dict.fromkeys(("CostAssumptions", "TcoResult", "check_provider", "estimate_tco"), "sizer.formulas.tco"),
    "choose_efficiencies": "sizer.engine.modes", "RECOMPUTE": "sizer.engine.roofline",
    "resolve_job": "sizer.engine.job",
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
    precision: PrecisionName = Precision.FP32
    cores: Scalar | None = None
    clock: QuantityIn = None
    derating: float | None = Field(None, ge=0, lt=1)


def peak(request: PeakRequest, catalog: Catalog | None = None) -> PeakResult:
    device = _catalog(catalog).find(request.device) if request.device is not None else None
    return estimate_peak(device, request.precision, cores=request.cores, clock=request.clock,
                         derating=_derating(request.derating))


def estimate_compute(request: WorkloadRequest) -> ComputeResult:
    """Training compute of a workload: the engine's own count (:attr:`sizer.engine.job.Job.training_flops`),
    ``O_b · F_fwd · S · E`` over the layers, a LoRA/QLoRA base at ``1 + (O_b − 1)/2`` (no weight gradients),
    so that ``compute`` and ``time`` can never disagree."""
    from sizer.engine.job import resolve_job

    job = resolve_job(request)
    forward = Quantity(job.layers.total_forward_flops, "FLOP")
    compute = Quantity(job.training_flops, "FLOP")
    kept = [a for a in job.assumptions if a.name in ("forward FLOP per sample", "layers", "workload profile")
            or a.name in ("fine-tuning", "fine-tuning time")]
    backward = job.workload.backward_factor
    frozen = f"; the frozen base {job.pass_kind.flops:g} x (no weight gradients)" if job.finetune is not None else ""
    return ComputeResult(training_compute=QuantityOut.of(compute, "FLOP"),
                         forward_flops_per_sample=QuantityOut.of(forward, "FLOP"),
                         formula=COMPUTE_SOURCE,
                         assumptions=[*kept, Assumption(name="backward factor O_b", value=f"{backward:g}{frozen}",
                                                        source="seed 004 eq. 3: backward costs about twice the forward"
                                                        + ("" if backward == 3 else "; given (--backward-factor), the "
                                                           "step time uses it too"))])


def estimate_time(request: TimeRequest, catalog: Catalog | None = None, *, suggest: bool = True) -> TimeResult:
    """Step time, training time, memory and utilisation from the one engine (spec §3.3); where the job
    does not fit, the changes that would (``suggest``)."""
    from sizer.plan.estimates import time_estimate

    catalog = _catalog(catalog)
    result = time_estimate(request, catalog)
    if suggest and not result.fits:
        result = _with_suggestions(request, result, catalog.find(require_device(request)), catalog)
    return result


def estimate_memory(request: MemoryRequest, catalog: Catalog | None = None, *, suggest: bool = True) -> MemoryResult:
    """Training memory per device and the fit decision; where it does not fit, the changes that would."""
    from sizer.plan.estimates import memory_estimate

    catalog = _catalog(catalog)
    result = memory_estimate(request, catalog)
    if suggest and result.fits is False:
        device = catalog.find(request.device) if request.device is not None else None
        result = _with_suggestions(request, result, device, catalog)
    return result


def estimate_inference(request: InferenceRequest, catalog: Catalog | None = None, *, suggest: bool = True) -> InferenceResult:
    """Serving a model (:func:`sizer.inference.estimate.estimate_inference`); where it does not fit,
    the changes that would (``suggest``, :mod:`sizer.plan.suggestions`)."""
    from sizer.inference.estimate import estimate_inference as serving_estimate

    catalog = _catalog(catalog)
    result = serving_estimate(request, catalog)
    if suggest and not result.fits and request.devices is None:  # suggestions vary one device kind's count
        result = _with_suggestions(request, result, catalog.find(require_device(request)), catalog)
    return result


def _with_suggestions(request, result, device, catalog: Catalog):
    """``result`` with the changes that would make it work (:mod:`sizer.plan.suggestions`)."""
    from sizer.plan.suggestions import suggestions_for

    return result.model_copy(update={"suggestions": suggestions_for(request, result, device, catalog)})


def answer_owned(request, catalog: Catalog | None = None) -> OwnedResult:
    """The answer for the hardware in ``request.have`` only (training, memory or serving requests)."""
    from sizer.inference.estimate import InferenceRequest
    from sizer.plan.owned_answer import answer_inference, answer_training

    catalog = _catalog(catalog)
    if isinstance(request, InferenceRequest):
        return answer_inference(request, catalog)
    return answer_training(request, catalog)


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
    pricing: Pricing = Field("rent", description="rent: cloud prices only; buy: the buy side only; any: where a "
                                                 "device has no rent price, its amortised purchase cost stands in")
    terms: list[OfferTerm] = Field(default_factory=lambda: ["on-demand"], min_length=1, max_length=5,
                                   description="offer terms a rent may have: on-demand, spot, reserved ...")
    lifetime: QuantityIn = Field(None, description=f"amortisation period; default {COST_DEFAULTS.lifetime:~P}")
    pue: float | None = Field(None, ge=1, le=5, description=f"power usage effectiveness; default {COST_DEFAULTS.pue:g}")
    electricity_price: QuantityIn = Field(None, description=f"default {COST_DEFAULTS.electricity_price:~P}")
    utilisation: float | None = Field(None, gt=0, le=1, description=f"average power as a fraction of TDP; default "
                                                                  f"{COST_DEFAULTS.utilisation:g}")
    host_share: QuantityIn = Field(None, description="capital for hosts, network, racks; default none")
    zero: int | None = Field(None, ge=0, le=3, description="ZeRO stage 0-3 (FSDP FULL_SHARD is 3)")
    sharding: ShardingName = Sharding.NONE


def estimate_cost(request: TcoRequest, catalog: Catalog | None = None) -> TcoResult:
    from sizer.engine.job import resolve_job
    from sizer.engine.training import estimate_training
    from sizer.formulas.tco import CostAssumptions, check_provider, estimate_tco
    from sizer.plan.estimates import zero_stage

    catalog = _catalog(catalog)
    device = catalog.find(request.device)
    cloud = check_provider(request.cloud, catalog)
    if request.training_time is not None:
        duration = Estimate.exact(parse_quantity("training_time", request.training_time, "[time]"))
    else:
        time = estimate_training(resolve_job(request), device, request.count, zero=zero_stage(request))
        t = time.training_time
        duration = Estimate(*(Quantity(v, t.unit) for v in (t.low, t.expected, t.high)))
    costs = CostAssumptions.given(lifetime=request.lifetime, utilisation=request.utilisation, pue=request.pue,
                                  electricity_price=request.electricity_price, host_share=request.host_share)
    return estimate_tco(device, request.count, duration, rent_price=request.rent_price,
                        purchase_price=request.purchase_price, costs=costs, cloud=cloud, pricing=request.pricing,
                        terms=tuple(request.terms))
