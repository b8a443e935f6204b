"""Fuzzing every public core function: any input gives a result or the project's own error.

"The project's own error" is a :class:`sizer.errors.SizerError` (a ValueError naming the
field); a pydantic ``ValidationError`` is accepted only where a request model is built from a
mapping, which is the documented boundary. Anything else (TypeError, OverflowError,
ZeroDivisionError, RecursionError, a pint error, an AssertionError) is a bug. A result must
also hold only finite numbers: an answer of inf or NaN would be silently wrong.

The suite runs FUZZ_EXAMPLES examples per test (30 by default, to stay fast); ``make fuzz`` runs
thousands (``SIZER_FUZZ_EXAMPLES``), and writes the counts to benchmarks/results/fuzz.md.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pint
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from sizer import facade
from sizer.engine.job import resolve_job
from sizer.engine.roofline import ring_allreduce_seconds
from sizer.engine.workload import resolve_workload
from sizer.errors import SizerError
from sizer.formulas.cells import estimate_cells
from sizer.formulas.complexity import estimate_complexity
from sizer.formulas.compute import training_compute, training_compute_from_forward
from sizer.formulas.peaks import Derating, cpu_peak_flops, estimate_peak, gpu_peak_flops
from sizer.formulas.redundancy import estimate_k1
from sizer.formulas.tco import CostAssumptions, estimate_tco
from sizer.hardware.catalog import load_catalog
from sizer.plan.recommend import recommend
from sizer.plan.sweep import sweep
from sizer.results import Estimate
from sizer.schemas.base import WorkloadRequest
from sizer.schemas.recommendation import RecommendRequest
from sizer.training.memory_answer import training_memory
from sizer.training.time_answer import estimate_training
from sizer.units import Quantity, parse_count, parse_quantity

FUZZ_EXAMPLES = int(os.environ.get("SIZER_FUZZ_EXAMPLES", "30"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=FUZZ_EXAMPLES <= 30,
                suppress_health_check=list(HealthCheck))
CATALOG = load_catalog()
DEVICE_IDS = sorted(CATALOG.devices)

# Raw values as a user could send them: numbers of every size and sign, strings with and
# without units, hostile strings, and wrong types.
finite_numbers = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10**40, 10**40)
numbers = st.floats() | st.integers(-10**400, 10**400) | finite_numbers
units = st.sampled_from(["", "Hz", "GHz", "MHz", "GB", "GiB", "B", "GB/s", "W", "USD", "USD/hour", "USD/kWh", "d", "h", "s",
                         "hour", "FLOP", "TFLOPS", "FLOP/s", "m", "kg", "degC", "delta_degC", "percent", "%", "bit",
                         "Hz**99", "GHz**-1", "1/s", "count", "dimensionless", "Ｈｚ", "GНz", "µs", "\u202eHz"])
hostile = st.sampled_from(["", " ", "nan", "NaN Hz", "inf", "-inf GHz", "1e400", "1e-400 GHz", "10**10**10 Hz", "2**1000",
                           "(1)", "1 GHz GHz", "1 / / s", "1e9999 B", "0x10", "1_000", "True", "None", "[]", "{}",
                           "１.５ GHz", "1,5 GHz", "1.5GHz\x00", "9" * 400, "x" * 10_000, "1 " + "* Hz " * 50,
                           "eval('1')", "__import__('os')", "1e30 GHz", "-0", "+0.0 s", "1 delta_degC", "1 degC"])
text_values = hostile | st.builds(lambda n, u: f"{n} {u}", finite_numbers, units) | st.text(max_size=80)
quantity_dicts = st.fixed_dictionaries({"value": numbers | st.text(max_size=5) | st.none(), "unit": units | st.integers()}) | \
    st.dictionaries(st.text(max_size=6), numbers, max_size=3)
raw_values = numbers | text_values | quantity_dicts | st.none() | st.booleans() | st.lists(finite_numbers, max_size=3)
# Good values in two draws of three, so that most examples get past the request models and
# exercise the estimates themselves; bad ones in the third.
good_counts = st.floats(1, 1e15) | st.integers(1, 10**9) | st.sampled_from(["1e9", "7e9", "2e10", "512", "4096"])
bad_counts = st.integers(-3, 0) | numbers | text_values
counts = st.one_of(good_counts, good_counts, bad_counts)
good_precisions = st.sampled_from(["fp64", "fp32", "tf32", "fp16", "bf16", "fp8"])
precisions = st.one_of(good_precisions, good_precisions,
                       st.sampled_from(["FP16", "int8", "", "ｆｐ３２"]) | st.text(max_size=8))
good_durations = st.builds(lambda n, u: f"{n:g} {u}", st.floats(1e-3, 1e6), st.sampled_from(["d", "h", "s", "week"]))
good_money = st.builds(lambda n: f"{n:g} USD", st.floats(1, 1e9))
durations = st.one_of(good_durations, good_durations, raw_values)
money = st.one_of(good_money, good_money, raw_values)
devices = st.sampled_from(DEVICE_IDS) | st.sampled_from(["p40", "A10", "H100 SXM", "xeon", "rtx", "", " ", "ａ100"]) | \
    st.text(max_size=120)


def _finite(value, path="result"):
    if isinstance(value, float):
        assert math.isfinite(value), path
    elif isinstance(value, dict):
        for key, item in value.items():
            _finite(item, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _finite(item, f"{path}[{index}]")


def _checked_number(value) -> bool:
    """A number as the request layer passes it on: not a bool, finite, |x| <= 1e30."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= 1e30 and \
        (isinstance(value, int) or math.isfinite(value))


def outcome(call, *args, model_boundary=False, **kwargs):
    """Run ``call``; a result must be finite, an error must be the project's own."""
    allowed = (SizerError, ValidationError) if model_boundary else (SizerError,)
    try:
        result = call(*args, **kwargs)
    except allowed as error:
        message = getattr(error, "message", str(error))
        assert message and "Traceback" not in message
        return None
    if isinstance(result, BaseModel):
        _finite(result.model_dump())
    elif isinstance(result, pint.Quantity):
        assert math.isfinite(result.magnitude)
    return result


def build(model, fields):
    """A request model from fuzzed fields, or None where the model itself refuses them (422 / exit 2)."""
    try:
        return model.model_validate(fields)
    except ValidationError:
        return None


@FUZZ
@given(raw=raw_values, dimension=st.sampled_from(["", "[frequency]", "[time]", "[information]", "[information] / [time]",
                                                  "[currency]", "[currency] / [time]", "[computation] / [time]", "[power]"]),
       default=st.sampled_from([None, "", "Hz", "B"]), zero=st.booleans(), negative=st.booleans())
def test_parse_quantity(raw, dimension, default, zero, negative):
    quantity = outcome(parse_quantity, "field", raw, dimension, default_unit=default, allow_zero=zero, allow_negative=negative)
    if quantity is not None:
        assert abs(quantity.magnitude) <= 1e30


@FUZZ
@given(raw=raw_values, zero=st.booleans(), integer=st.booleans())
def test_parse_count(raw, zero, integer):
    outcome(parse_count, "field", raw, allow_zero=zero, integer=integer)


workload_extras = {
    "epochs": counts, "batch_size": counts, "precision": precisions, "optimizer": st.sampled_from(["adam", "sgd", "adamw", "lion"]),
    "forward_flops_per_param": numbers, "backward_factor": numbers, "forward_flops_per_sample": counts,
    "seq_len": st.integers(-5, 10**8) | st.none(), "activation_memory_per_sample": raw_values, "sample_size": raw_values}
good_memory = st.builds(lambda n, u: f"{n:g} {u}", st.floats(0, 1e4), st.sampled_from(["B", "kB", "MB", "GiB"]))
good_extras = {
    "epochs": st.integers(1, 100), "batch_size": good_counts, "precision": good_precisions,
    "optimizer": st.sampled_from(["adam", "sgd", "adamw", "momentum", "adagrad", "rmsprop"]),
    "forward_flops_per_param": st.floats(0.1, 1e3), "backward_factor": st.floats(1, 100),
    "forward_flops_per_sample": good_counts, "seq_len": st.integers(1, 10**5),
    "activation_memory_per_sample": good_memory, "sample_size": good_memory}
# Half the workloads are valid throughout (they reach the estimates); half mix in bad values.
workload_fields = st.one_of(
    st.fixed_dictionaries({"params": good_counts, "samples": good_counts}, optional=good_extras),
    st.fixed_dictionaries({"params": good_counts, "tokens": good_counts}, optional=good_extras),
    st.fixed_dictionaries({"params": counts, "samples": counts}, optional=workload_extras),
    st.fixed_dictionaries({"params": counts, "tokens": counts}, optional=workload_extras),
    st.fixed_dictionaries({}, optional={"params": counts, "samples": counts, "tokens": counts, **workload_extras}))


@FUZZ
@given(fields=workload_fields)
def test_resolve_workload_and_compute(fields):
    request = build(WorkloadRequest, fields)
    if request is not None:
        workload = outcome(resolve_workload, request)
        outcome(facade.estimate_compute, request)
        if workload is not None:
            outcome(training_compute_from_forward, workload.forward_flops_per_sample, workload.samples, workload.epochs)


@FUZZ
@given(fields=workload_fields, device=st.sampled_from(DEVICE_IDS), count=st.integers(-2, 2_000_000),
       sharding=st.sampled_from(["none", "full"]), overlap=st.booleans(), headroom=st.booleans())
def test_time_memory_cost(fields, device, count, sharding, overlap, headroom):
    request = build(WorkloadRequest, fields)
    job = outcome(resolve_job, request) if request is not None else None
    if job is None:
        return
    hardware = CATALOG.devices[device]
    zero = 3 if sharding == "full" else 0
    time = outcome(estimate_training, job, hardware, count, zero=zero, overlap_allreduce=overlap)
    outcome(training_memory, job, hardware, max(count, 1), zero=zero, headroom=headroom)
    if time is not None:
        t = time.training_time
        outcome(estimate_tco, hardware, count, Estimate(*(Quantity(v, t.unit) for v in (t.low, t.expected, t.high))))


request_models = [
    (facade.PeakRequest, facade.peak, {"device": devices, "precision": precisions, "cores": counts, "clock": raw_values,
                                             "derating": numbers}),
    (facade.TimeRequest, facade.estimate_time, {"device": devices, "count": st.integers(-1, 10**7), "params": counts,
                                                      "samples": counts, "tokens": counts, "batch_size": counts,
                                                      "precision": precisions, "sharding": st.sampled_from(["none", "full"]),
                                                      "workload": st.sampled_from(["resnet50", "mlp-seed001", "nope"])}),
    (facade.MemoryRequest, facade.estimate_memory, {"device": devices, "count": st.integers(-1, 10**7), "params": counts,
                                                          "tokens": counts, "precision": precisions,
                                                          "micro_batch": counts, "headroom": st.booleans()}),
    (facade.CellsRequest, facade.cells, {"samples": counts, "features": counts, "outputs": counts, "weights": counts,
                                               "variables": counts, "eta_b": counts, "cell_size": raw_values}),
    (facade.K1Request, facade.k1, {"weights": counts, "samples": counts, "features": counts, "tolerance": numbers}),
    (facade.ComplexityRequest, facade.complexity, {"layers": st.lists(counts, max_size=12),
                                                         "operation_time": raw_values, "inputs": counts}),
    (facade.TcoRequest, facade.estimate_cost, {"device": devices, "count": st.integers(-1, 10**7),
                                                     "training_time": durations, "rent_price": raw_values,
                                                     "purchase_price": money, "lifetime": durations, "pue": numbers,
                                                     "electricity_price": raw_values, "utilisation": numbers,
                                                     "host_share": raw_values, "params": counts, "tokens": counts}),
]


@FUZZ
@given(data=st.data(), which=st.integers(0, len(request_models) - 1))
def test_request_level_functions(data, which):
    model, function, fields = request_models[which]
    body = data.draw(st.fixed_dictionaries({}, optional=fields))
    request = build(model, body)
    if request is not None:
        if function in (facade.cells, facade.k1, facade.complexity):
            outcome(function, request)
        else:
            outcome(function, request, CATALOG)


good_constraints = st.fixed_dictionaries({}, optional={
    "deadline": good_durations, "budget": good_money, "max_devices": st.integers(1, 65536),
    "objective": st.sampled_from(["time", "cost", "pareto"]), "features": good_counts,
    "kinds": st.lists(st.sampled_from(["gpu", "cpu", "accelerator"]), min_size=1, max_size=3),
    "purchase": st.sampled_from(["rent", "buy"]), "headroom": st.booleans(),
    "storage": st.sampled_from(["hdd", "sata-ssd", "nvme", "ramdisk"])})
any_constraints = st.fixed_dictionaries({}, optional={
    "deadline": durations, "budget": money, "max_devices": st.integers(-1, 70000) | numbers,
    "objective": st.sampled_from(["time", "cost", "pareto", "speed"]), "features": counts,
    "kinds": st.lists(st.sampled_from(["gpu", "cpu", "accelerator", "tpu"]), max_size=3), "purchase": st.text(max_size=5)})


@FUZZ
@given(fields=workload_fields, constraints=good_constraints | any_constraints)
def test_recommend(fields, constraints):
    request = build(RecommendRequest, {**fields, **constraints})
    if request is not None:
        outcome(recommend, request, CATALOG)


@FUZZ
@given(cores=numbers | text_values, clock=raw_values, lanes=st.integers(-2, 100), fma=st.integers(-2, 10),
       derating=st.tuples(numbers, numbers, numbers))
def test_peak_formulas(cores, clock, lanes, fma, derating):
    rating = outcome(Derating, *derating)
    outcome(estimate_peak, cores=cores, clock=clock, **({"derating": rating} if rating is not None else {}))
    outcome(estimate_peak, CATALOG.devices["tesla-p40"], clock=clock, cores=cores)
    clock_q = outcome(parse_quantity, "clock", clock, "[frequency]")
    # The plain formulas take numbers already checked at the boundary (|x| <= 1e30, finite), as
    # their signatures say; within that contract they must give a finite result.
    if clock_q is not None and _checked_number(cores):
        assert math.isfinite(gpu_peak_flops(cores, clock_q).magnitude)
        assert math.isfinite(cpu_peak_flops(cores, clock_q, lanes, fma).magnitude)


@FUZZ
@given(params=numbers, samples=numbers, epochs=numbers, precision=precisions, optimizer=st.sampled_from(["adam", "sgd"]),
       count=st.integers(-3, 10**7))
def test_plain_formulas(params, samples, epochs, precision, optimizer, count):
    # The plain formulas take checked numbers (the request layer checks them); with finite
    # inputs they must not raise anything but the project's error.
    if all(_checked_number(x) for x in (params, samples, epochs)):
        outcome(training_compute, params, samples, epochs)
        outcome(ring_allreduce_seconds, np.asarray(abs(params)), np.asarray(float(count)), np.asarray(100e9),
                np.asarray(1e-5))


@FUZZ
@given(samples=counts, features=counts, outputs=counts, weights=counts, tolerance=numbers, layers=st.lists(counts, max_size=8),
       operation_time=raw_values)
def test_seed003_functions(samples, features, outputs, weights, tolerance, layers, operation_time):
    outcome(estimate_cells, samples, features, outputs, weights)
    if isinstance(tolerance, float) and 0 <= tolerance < 1:
        outcome(estimate_k1, weights, samples, features, tolerance)
    outcome(estimate_k1, weights, samples, features)
    outcome(estimate_complexity, layers, operation_time)


@FUZZ
@given(name=devices | text_values)
def test_find(name):
    outcome(CATALOG.find, name)


@FUZZ
@given(workloads=st.lists(workload_fields, max_size=3), counts_=st.lists(st.integers(-1, 5000) | numbers, max_size=4),
       precisions_=st.lists(precisions, max_size=3), shardings=st.lists(st.sampled_from(["none", "full", "half"]), max_size=2),
       names=st.none() | st.lists(devices, max_size=3))
def test_sweep(workloads, counts_, precisions_, shardings, names):
    table = outcome(sweep, workloads, devices=names, counts=counts_, precisions=precisions_ or None, shardings=shardings,
                    catalog=CATALOG)
    if table is not None:
        supported = table[table.supported]
        for column in ("training_time_s_expected", "memory_per_device_b"):
            assert supported[column].map(math.isfinite).all()


@FUZZ
@given(lifetime=raw_values, pue=numbers, utilisation=numbers)
def test_cost_assumptions(lifetime, pue, utilisation):
    life = outcome(parse_quantity, "lifetime", lifetime, "[time]")
    if life is not None and isinstance(pue, (int, float)) and isinstance(utilisation, (int, float)):
        outcome(CostAssumptions, lifetime=life, pue=pue, utilisation=utilisation)
