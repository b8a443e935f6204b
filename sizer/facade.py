"""The one facade of the core: every entry function that the CLI (``cli/``) and the HTTP service
(``api/``) call, one per question, and every request and result model they use, re-exported from
:mod:`sizer.schemas` (where they are defined) and the rooms that answer.

The CLI and the HTTP service both build these requests (the CLI from options, the service
from JSON bodies) and call these functions, so the two can never disagree; a question asked two ways
(:func:`recommend`: training or serving, or on the hardware one has) is told apart here, by the request's
type. Every field error is an :class:`~sizer.errors.InputError` naming the field.

>>> estimate_compute(WorkloadRequest(params=175e9, samples=300e9)).training_compute.value
3.15e+23
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from sizer.asked import Asked, on_catalog
from sizer.choices import (  # noqa: F401
    CATALOG_KINDS,
    PRICINGS,
    CatalogKindName,
    DeviceKind,
    Precision,
    PrecisionName,
    Recompute,
    RecomputeName,
    Sharding,
    ShardingName,
    parse_choice,
    recompute_index,
    zero_stage_of,
)

# Re-exported for cli/ and api/, which import the core through this module only.
from sizer.datafile import check_writable, load_json, read_text, write_text  # noqa: E402,F401
from sizer.deadline import Clock, clear_deadline, remaining_seconds, set_deadline, time_limit  # noqa: E402,F401
from sizer.errors import CatalogError, DeviceLookupError, EstimateTimeout, InputError, InputErrors, SizerError, require_device  # noqa: E402,F401
from sizer.formulas.cells import CellsResult, estimate_cells
from sizer.formulas.complexity import ComplexityResult, estimate_complexity
from sizer.formulas.compute import COMPUTE_SOURCE, ComputeResult
from sizer.formulas.peaks import DEFAULT_DERATING, Derating, PeakResult, estimate_peak
from sizer.formulas.redundancy import K1Result, estimate_k1
from sizer.hardware.catalog import CATALOG_ENV, Catalog, catalog_template, load_catalog  # noqa: F401
from sizer.memo import registered_cache  # noqa: F401  (the service's caches are declared as the core's)
from sizer.results import Assumption, Estimate, Model, QuantityOut, ensure_finite, unit_factor  # noqa: E402,F401
from sizer.schemas.base import RequestModel, WorkloadRequest  # noqa: F401
from sizer.schemas.formulas import CellsRequest, ComplexityRequest, K1Request, PeakRequest, TcoRequest
from sizer.units import TEXT_ERROR, Quantity, parse_count, parse_quantity  # noqa: F401
from sizer.vocabularies import ChoiceOut, Choices, choices  # noqa: E402,F401

if TYPE_CHECKING:  # imported when first used (below), named here for the type checker
    from sizer.formulas.tco import TcoResult
    from sizer.schemas.owned_hardware import OwnedResult
    from sizer.schemas.plan import PlanRequest, PlanResult
    from sizer.schemas.recommendation import RecommendRequest
    from sizer.schemas.recommendation_result import RecommendResult
    from sizer.schemas.serving import InferenceRecommendResult, InferenceResult
    from sizer.schemas.serving_requests import InferenceRecommendRequest, InferenceRequest
    from sizer.schemas.time_and_memory import MemoryRequest, MemoryResult, TimeRequest, TimeResult

# The rest of the facade's names are imported when first used (PEP 562), so that a command that
# needs none of them (`sizer peak`) does not pay for importing the engine, the planner and serving
# at start-up (benchmarks/startup.py). name -> module that defines it.
_LAZY = {
    **dict.fromkeys(("DeviceDetail", "DeviceSummary", "describe_device", "summarize_device"), "sizer.device_view"),
    **dict.fromkeys(("InferenceRequest", "InferenceRecommendRequest"), "sizer.schemas.serving_requests"),
    **dict.fromkeys(("InferenceResult", "InferenceRecommendResult"), "sizer.schemas.serving"),
    "recommend_inference": "sizer.plan.launch_top",  # the ranking, with its first row's --emit command
    **dict.fromkeys(("PlanRequest", "PlanResult"), "sizer.schemas.plan"), "plan": "sizer.plan.planner",
    "OwnedResult": "sizer.schemas.owned_hardware",
    **dict.fromkeys(("answer_inference", "answer_training"), "sizer.plan.owned_answer"),
    **dict.fromkeys(("MemoryRequest", "MemoryResult", "TimeRequest", "TimeResult"), "sizer.schemas.time_and_memory"),
    **dict.fromkeys(("memory_estimate", "node_type", "time_estimate", "zero_stage"), "sizer.training.estimates"),
    "suggestions_for": "sizer.plan.suggestions",
    "LENGTH_DISTRIBUTIONS": "sizer.simulator.traffic",
    "awaiting_prices": "sizer.hardware.catalog",
    **dict.fromkeys(("every_bad_field", "in_form_order"), "sizer.workloads.field_check"),

    **dict.fromkeys(("recommend_serving_iterations", "refuse_over_budget", "serving_iterations"), "sizer.serving.load_price"),
    **dict.fromkeys(("estimate_seconds", "ranking_seconds"), "sizer.work_price"),
    **dict.fromkeys(("RecommendRequest", "HTTP_TOP"), "sizer.schemas.recommendation"),
    "RecommendResult": "sizer.schemas.recommendation_result",
    **dict.fromkeys(("keep_search", "pending_search", "quick_question", "recommend_json", "search_share", "warm_up"),
                    "sizer.plan.recommend"),
    **dict.fromkeys(("MAX_EVALUATIONS", "sweep"), "sizer.plan.sweep"),
    **dict.fromkeys(("find_model", "model_names", "model_source"), "sizer.workloads.registry"),
    **dict.fromkeys(("FileRef", "profile_source"), "sizer.workloads.source"),
    **dict.fromkeys(("ModelSummary", "ModelNotSupported", "list_models", "unsupported_models",
                     "configs_answered_by_presets"), "sizer.workloads.listing"),
    **dict.fromkeys(("WorkloadSummary", "list_workloads"), "sizer.workloads.profile_listing"),
    "check_served_workload": "sizer.workloads.workload_profile",
    "estimate_training": "sizer.training.time_answer",
    "training_memory": "sizer.training.memory_answer",
    **dict.fromkeys(("CostAssumptions", "TcoResult", "check_provider", "estimate_tco"), "sizer.formulas.tco"),
    "choose_efficiencies": "sizer.engine.modes", "RECOMPUTE": "sizer.engine.roofline",
    "resolve_job": "sizer.engine.job",
    **dict.fromkeys(("calibrate_runs", "load_calibration", "runs_from_report", "save_calibration"),
                    "sizer.engine.calibration"),
}


def __getattr__(name: str) -> Any:  # PEP 562: any of the names in _LAZY, and WORKLOAD_NAMES
    import importlib

    if name == "WORKLOAD_NAMES":  # the built-in workload profiles' names (reads their folder)
        value: Any = tuple(importlib.import_module("sizer.workloads.profile").builtin_profile_names())
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once imported, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "WORKLOAD_NAMES"})


# An answer that can carry suggestions (named as strings: the result modules load on first use)
Fixable = TypeVar("Fixable", "TimeResult", "MemoryResult", "InferenceResult")


def _derating(value: float | None) -> Derating:
    return DEFAULT_DERATING if value is None else Derating.single(value)


def _catalog(catalog: Catalog | None) -> Catalog:
    return catalog if catalog is not None else load_catalog()


def peak(request: PeakRequest, catalog: Catalog | None = None) -> PeakResult:
    """Peak and sustained throughput of a catalog device, or of a core count and clock (``sizer peak``).

    Parameters
    ----------
    request : PeakRequest
        A device name and precision; or, for a device not in the catalog, its FP32 cores and clock
        (R = 2NC, seed 004 eq. 1); and optionally the fraction of the peak lost (``derating``).
    catalog : Catalog or None
        The device catalog; None loads the built-in one (or ``SIZER_CATALOG``).

    Returns
    -------
    PeakResult
        The peak [FLOP/s], the sustained range [FLOP/s] after derating, the basis of the figure and
        the assumptions (:func:`sizer.formulas.peaks.estimate_peak`).
    """
    asked = on_catalog(request, _catalog(catalog))
    return _stated(estimate_peak(asked.device, request.precision, cores=request.cores, clock=request.clock,
                                 derating=_derating(request.derating)), asked)


Stated = TypeVar("Stated", "PeakResult", "TimeResult", "MemoryResult", "InferenceResult", "TcoResult")


def _stated(result: Stated, asked: Asked[Any]) -> Stated:
    """``result`` with the configuration assumed for a chip named without its GPU cores or memory ("M1 Max")
    first among its assumptions (:meth:`sizer.hardware.catalog.Catalog.assumed`), so that every answer says it."""
    statement = asked.assumed
    if statement is None:
        return result
    said = Assumption(name="device configuration", value=statement,
                      source="sizer catalog: a chip named without its GPU-core count or memory is its smallest "
                             "configuration in the catalog (sizer.hardware.variants)")
    return result.model_copy(update={"assumptions": [said, *result.assumptions]})


def estimate_compute(request: WorkloadRequest) -> ComputeResult:
    """Training compute of a workload (``sizer compute``).

    The engine's own count (:attr:`sizer.engine.job.Job.training_flops`), ``O_b · F_fwd · S · E`` over
    the layers, a LoRA/QLoRA base at ``1 + (O_b − 1)/2`` (no weight gradients), so that ``compute`` and
    ``time`` can never disagree.

    Parameters
    ----------
    request : WorkloadRequest
        The workload: a model or parameter count, and the run's samples or tokens and epochs.

    Returns
    -------
    ComputeResult
        The training compute [FLOP], the forward FLOP per sample [FLOP], the formula, and the
        assumptions it rests on (the backward factor O_b among them).
    """
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
    """Step time, training time, memory and utilisation from the one engine (spec §3.3).

    Parameters
    ----------
    request : TimeRequest
        The workload, the device and count, and the training choices (precision, optimizer, layout).
    catalog : Catalog or None
        The device catalog; None loads the built-in one.
    suggest : bool
        Whether, where the job does not fit, to add the changes that would make it fit
        (:mod:`sizer.plan.suggestions`); each is evaluated again by the engine.

    Returns
    -------
    TimeResult
        The step and training time ranges [s, or a unit a person reads], the memory per device, the
        layout, whether it fits, the assumptions and any suggestions.
    """
    from sizer.launch.dispatch import check_emit
    from sizer.plan.launch_answer import with_launch
    from sizer.training.estimates import time_on

    catalog = _catalog(catalog)
    check_emit(request)  # a tool that launches no training layout is refused before the answer is computed
    asked = on_catalog(request, catalog)
    result = time_on(asked)
    if suggest and not result.fits:
        result = _with_suggestions(asked, result)
    return with_launch(asked, _stated(result, asked))


def estimate_memory(request: MemoryRequest, catalog: Catalog | None = None, *, suggest: bool = True) -> MemoryResult:
    """Training memory per device and the fit decision (``sizer memory``).

    Parameters
    ----------
    request : MemoryRequest
        The workload, and optionally the device, count and layout to hold it on.
    catalog : Catalog or None
        The device catalog; None loads the built-in one.
    suggest : bool
        Whether, where it does not fit, to add the changes that would (:mod:`sizer.plan.suggestions`).

    Returns
    -------
    MemoryResult
        The memory per device by part (weights, gradients, optimizer states, activations, logits,
        overhead) and in total [GB], whether it fits the device (None without a device), the
        recipe as a line for a trainer's configuration, the assumptions and any suggestions.
    """
    from sizer.launch.dispatch import check_emit
    from sizer.plan.launch_answer import with_launch
    from sizer.training.estimates import memory_on

    catalog = _catalog(catalog)
    check_emit(request)
    asked = on_catalog(request, catalog)
    result = memory_on(asked)
    if suggest and result.fits is False and asked.device is not None:  # a verdict needs a device
        result = _with_suggestions(asked, result)
    return with_launch(asked, _stated(result, asked))


def estimate_inference(request: InferenceRequest, catalog: Catalog | None = None, *, suggest: bool = True) -> InferenceResult:
    """Serving a model (:func:`sizer.serving.estimate.estimate_inference`, ``sizer inference``).

    Parameters
    ----------
    request : InferenceRequest
        The model, the device and count (or a mix of devices), the precision and the traffic.
    catalog : Catalog or None
        The device catalog; None loads the built-in one.
    suggest : bool
        Whether, where it does not fit, to add the changes that would (:mod:`sizer.plan.suggestions`);
        only for one kind of device, as the suggestions vary its count.

    Returns
    -------
    InferenceResult
        Memory per device, time to first token and per output token [s], decode and prefill
        throughput [token/s], cost per million tokens where a price is known, whether it fits, the
        assumptions and any suggestions.
    """
    from sizer.launch.dispatch import check_emit
    from sizer.plan.launch_answer import with_launch
    from sizer.serving.estimate import serve

    catalog = _catalog(catalog)
    check_emit(request)
    asked = on_catalog(request, catalog)
    result = serve(asked)
    if suggest and not result.fits and request.devices is None:  # suggestions vary one device kind's count
        result = _with_suggestions(asked, result)
    elif suggest and not result.fits:  # unequal devices: a narrower GGUF mix on the same devices
        from sizer.plan.suggestions import unequal_devices_suggestions

        result = result.model_copy(update={"suggestions": unequal_devices_suggestions(asked)})
    return with_launch(asked, _stated(result, asked))


def _with_suggestions(asked: Asked[TimeRequest | MemoryRequest | InferenceRequest], result: Fixable) -> Fixable:
    """``result`` with the changes that would make it work (:mod:`sizer.plan.suggestions`)."""
    from sizer.plan.suggestions import suggestions_for

    return result.model_copy(update={"suggestions": suggestions_for(asked, result)})


def answer_owned(request: TimeRequest | MemoryRequest | RecommendRequest | PlanRequest | InferenceRequest,
                 catalog: Catalog | None = None) -> OwnedResult:
    """The answer for the hardware the user has (``request.have``) only, no other device.

    Parameters
    ----------
    request : WorkloadRequest or InferenceRequest
        A training request (time, memory, plan, recommend) or a serving request whose ``have`` lists
        the hardware sets (``"8x A100 80GB SXM"``).
    catalog : Catalog or None
        The device catalog; None loads the built-in one.

    Returns
    -------
    OwnedResult
        One answer per hardware set (time or memory for training, serving figures for inference),
        with the assumptions.
    """
    from sizer.launch.dispatch import check_emit
    from sizer.measured import check_owned
    from sizer.plan.owned_answer import answer_inference, answer_training
    from sizer.schemas.serving_requests import InferenceRequest

    check_owned(request)  # a measurement beside several sets names the one it was taken on
    check_emit(request)  # emit with have: refused (an answer per hardware set launches none)
    catalog = _catalog(catalog)
    if isinstance(request, InferenceRequest):
        return answer_inference(on_catalog(request, catalog))
    return answer_training(on_catalog(request, catalog))


def recommend(request: RecommendRequest | InferenceRecommendRequest | InferenceRequest | None = None,
              catalog: Catalog | None = None) -> RecommendResult | InferenceRecommendResult | OwnedResult:
    """Which device, how many, how long, what cost (``sizer recommend``, ``POST /v1/recommend``): the one entry of
    the question, for training and serving alike, chosen by the request's type.

    Parameters
    ----------
    request : RecommendRequest, InferenceRecommendRequest, InferenceRequest or None
        A training workload and its constraints (None: the built-in default workload, named in the answer); a
        served model and its target (:class:`~sizer.schemas.serving_requests.InferenceRecommendRequest`); or,
        to serve on the hardware one has, the serving request asked of each set of its ``have``. A training request
        with ``have`` is answered on those sets too.
    catalog : Catalog or None
        The device catalog; None loads the built-in one.

    Returns
    -------
    RecommendResult, InferenceRecommendResult or OwnedResult
        The training ranking (:func:`sizer.plan.recommend.recommend`), the serving ranking with its first row's
        launch command (:func:`sizer.plan.launch_top.recommend_inference`), or one answer per hardware set
        (:func:`answer_owned`).
    """
    from sizer.schemas.recommendation import RecommendRequest

    if request is None or (isinstance(request, RecommendRequest) and not request.have):
        from sizer.plan.recommend import recommend as rank

        return rank(request, catalog)
    if isinstance(request, RecommendRequest):
        return answer_owned(request, catalog)
    from sizer.schemas.serving_requests import InferenceRecommendRequest

    if isinstance(request, InferenceRecommendRequest):
        from sizer.plan.launch_top import recommend_inference

        return recommend_inference(request, catalog)
    return answer_owned(request, catalog)


def answer(request: TimeRequest | MemoryRequest | PlanRequest | InferenceRequest, catalog: Catalog | None = None
           ) -> TimeResult | MemoryResult | PlanResult | InferenceResult | OwnedResult:
    """How long, how much memory, which layout, how fast served (``POST /v1/time``, ``/v1/memory``, ``/v1/plan``,
    ``/v1/inference``): the one entry of those questions, chosen by the request's type; with ``have``, the answer
    on the hardware one has (:func:`answer_owned`).

    Parameters
    ----------
    request : TimeRequest, MemoryRequest, PlanRequest or InferenceRequest
        The question.
    catalog : Catalog or None
        The device catalog; None loads the built-in one.

    Returns
    -------
    TimeResult, MemoryResult, PlanResult, InferenceResult or OwnedResult
        The answer of :func:`estimate_time`, :func:`estimate_memory`, :func:`sizer.plan.planner.plan` or
        :func:`estimate_inference`; with ``have``, one per hardware set.
    """
    from sizer.schemas.plan import PlanRequest
    from sizer.schemas.time_and_memory import MemoryRequest, TimeRequest

    if request.have:
        return answer_owned(request, catalog)
    if isinstance(request, TimeRequest):
        return estimate_time(request, catalog)
    if isinstance(request, MemoryRequest):
        return estimate_memory(request, catalog)
    if isinstance(request, PlanRequest):
        from sizer.launch.dispatch import check_emit
        from sizer.plan.planner import plan_on

        check_emit(request)  # a tool that launches no training layout is refused before the search
        return plan_on(on_catalog(request, _catalog(catalog)))
    return estimate_inference(request, catalog)


def recommend_model(*, inference: bool, have: bool) -> type[RecommendRequest | InferenceRecommendRequest | InferenceRequest]:
    """The request model a recommendation takes: the serving ranking's with ``inference``, the serving request asked
    of each hardware set with ``inference`` and ``have``, else the training ranking's (which holds ``have`` itself).

    Parameters
    ----------
    inference : bool
        Whether the question is serving a model (``--inference``, ``"task": "inference"``).
    have : bool
        Whether the user names the hardware they have (``have``).

    Returns
    -------
    type
        :class:`~sizer.schemas.recommendation.RecommendRequest`,
        :class:`~sizer.schemas.serving_requests.InferenceRecommendRequest` or
        :class:`~sizer.schemas.serving_requests.InferenceRequest`.
    """
    if not inference:
        from sizer.schemas.recommendation import RecommendRequest

        return RecommendRequest
    if have:
        from sizer.schemas.serving_requests import InferenceRequest

        return InferenceRequest
    from sizer.schemas.serving_requests import InferenceRecommendRequest

    return InferenceRecommendRequest


def fields_not_read(*, inference: bool, have: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields a recommendation does not read, derived from the request models: those of the other question
    (a serving field in a training question, a training one in a serving question), and, serving on the hardware one
    has, the search's targets and bounds (the ranking's fields the serving request on each set lacks). A client that
    takes one set of options for both questions (the command line) refuses these where given.

    Parameters
    ----------
    inference : bool
        Whether the question is serving a model.
    have : bool
        Whether the user names the hardware they have.

    Returns
    -------
    tuple of (tuple of str, tuple of str)
        The other question's fields, and the search's fields not read with ``have`` (empty unless serving with it).
    """
    from sizer.schemas.recommendation import RecommendRequest
    from sizer.schemas.serving_requests import InferenceRecommendRequest, InferenceRequest

    mine, other = (InferenceRecommendRequest, RecommendRequest) if inference else (RecommendRequest, InferenceRecommendRequest)
    foreign = tuple(f for f in other.model_fields if f not in mine.model_fields)
    search = tuple(f for f in InferenceRecommendRequest.model_fields
                   if f not in InferenceRequest.model_fields) if inference and have else ()
    return foreign, search


def cells(request: CellsRequest) -> CellsResult:
    """Memory cells a training algorithm needs, and their size (seed 003 eq. 1, ``sizer cells``).

    Parameters
    ----------
    request : CellsRequest
        Training samples S, features N, outputs N_M, weights N_w and other variables N_v [1]; cells
        per data element, weight and variable (``eta_b``, ``eta_w``, ``eta_v``); bytes per cell.

    Returns
    -------
    CellsResult
        The cell count and its three terms [1], the memory [GB] and the assumptions
        (:func:`sizer.formulas.cells.estimate_cells`).
    """
    return estimate_cells(request.samples, request.features, request.outputs, request.weights,
                          variables=request.variables, eta_b=request.eta_b, eta_w=request.eta_w, eta_v=request.eta_v,
                          cell_size=request.cell_size)


def k1(request: K1Request) -> K1Result:
    """The redundancy ratio K1 = N_w / (S N) and its verdict (seed 003 eq. 4, ``sizer k1``).

    Parameters
    ----------
    request : K1Request
        Weights N_w, training samples S and features per sample N [1], and the relative tolerance
        within which K1 counts as 1.

    Returns
    -------
    K1Result
        K1 [1], whether the network has fewer, as many or more weights than the data has values,
        what that means, and the assumptions (:func:`sizer.formulas.redundancy.estimate_k1`).
    """
    return estimate_k1(request.weights, request.samples, request.features, request.tolerance)


def complexity(request: ComplexityRequest) -> ComplexityResult:
    """Sequential and parallel time of a forward pass through layers of given widths (seed 003 eq. 2-3).

    Parameters
    ----------
    request : ComplexityRequest
        The layer widths [1] (the input width first, unless ``inputs`` gives it) and the time of one
        multiply-add.

    Returns
    -------
    ComplexityResult
        T1 (one processor) and T2 (one per neuron) [s], their ratio [1] and the assumptions
        (:func:`sizer.formulas.complexity.estimate_complexity`).
    """
    return estimate_complexity(request.layers, request.operation_time, request.inputs)


def estimate_cost(request: TcoRequest, catalog: Catalog | None = None) -> TcoResult:
    """What a training run costs on a device and count, rented or bought (``sizer tco``).

    Parameters
    ----------
    request : TcoRequest
        The device and count; the run's length (``training_time``), or a workload whose length the
        engine estimates; prices, or the catalog's; and the cost assumptions (lifetime, PUE,
        electricity price, utilisation).
    catalog : Catalog or None
        The device catalog; None loads the built-in one.

    Returns
    -------
    TcoResult
        The run's length [s, or a unit a person reads], the rent and the purchase cost ranges [USD]
        with their prices and sources, the energy used [kWh] and the assumptions
        (:func:`sizer.formulas.tco.estimate_tco`).

    Raises
    ------
    InputError
        A workload whose run length is not given (no samples or tokens) and no ``training_time``.
    """
    from sizer.engine.job import resolve_job
    from sizer.formulas.tco import CostAssumptions, check_provider, estimate_tco
    from sizer.training.estimates import zero_stage
    from sizer.training.time_answer import estimate_training

    catalog = _catalog(catalog)
    asked = on_catalog(request, catalog)
    device = asked.the_device
    cloud = check_provider(request.cloud, catalog)
    if request.training_time is not None:
        duration = Estimate.exact(request.training_time)
    else:
        time = estimate_training(resolve_job(request), device, request.count, zero=zero_stage(request))
        t = time.training_time
        if t is None:  # a workload profile need not give the run's length; the cost needs it
            raise InputError("training_time", None, "the run's length (e.g. '14 d'), or the run's samples or "
                                                    "tokens to estimate it from")
        duration = Estimate(*(Quantity(v, t.unit) for v in (t.low, t.expected, t.high)))
    costs = CostAssumptions.given(lifetime=request.lifetime, utilisation=request.utilisation, pue=request.pue,
                                  electricity_price=request.electricity_price, host_share=request.host_share)
    return _stated(estimate_tco(device, request.count, duration, rent_price=request.rent_price,
                                purchase_price=request.purchase_price, costs=costs, cloud=cloud,
                                pricing=request.pricing, terms=tuple(request.terms)), asked)
