"""sizer/facade.py: the one door of the core for cli/ and api/.

The figures below are worked out by hand from the equations the docstrings cite, not taken from
the code's output; each says where it comes from.
"""
import math

import pytest

from sizer import facade
from sizer.facade import (
    CellsRequest,
    ComplexityRequest,
    InputError,
    K1Request,
    PeakRequest,
    SizerError,
    TcoRequest,
    WorkloadRequest,
    cells,
    complexity,
    estimate_compute,
    estimate_cost,
    k1,
    peak,
)


@pytest.fixture(scope="module")
def catalog():
    return facade.load_catalog()


# --- the lazy names (PEP 562) -------------------------------------------------------------------

def test_a_lazy_name_is_the_object_its_module_defines():
    from sizer.plan.planner import plan
    from sizer.schemas.serving_requests import InferenceRequest

    assert facade.plan is plan
    assert facade.InferenceRequest is InferenceRequest
    assert "plan" in dir(facade) and "estimate_tco" in dir(facade)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        facade.no_such_name  # noqa: B018


# --- the small formulas ---------------------------------------------------------------------------

def test_compute_is_six_n_d_for_a_dense_model():
    # Kaplan et al. 2020 / seed 004 eq. 3: C = 3 x forward = 6 N D; GPT-3 175B on 300B tokens:
    # 6 x 175e9 x 300e9 = 3.15e23 FLOP (Brown et al. 2020 report 3.14e23, from their rounding of N)
    result = estimate_compute(WorkloadRequest(params=175e9, samples=300e9))
    assert result.training_compute.unit == "FLOP"
    assert result.training_compute.value == pytest.approx(3.15e23, rel=1e-12)
    # the backward factor the total rests on is stated, with its source
    backward = next(a for a in result.assumptions if a.name == "backward factor O_b")
    assert backward.value == "3" and "seed 004 eq. 3" in backward.source


def test_compute_follows_a_given_backward_factor():
    # O_b x F_fwd x S: a backward factor of 2 instead of 3 is two thirds of the compute
    three = estimate_compute(WorkloadRequest(params=1e9, samples=1e9)).training_compute.value
    two = estimate_compute(WorkloadRequest(params=1e9, samples=1e9, backward_factor=2)).training_compute.value
    assert two == pytest.approx(three * 2 / 3, rel=1e-12)


def test_peak_from_cores_and_clock_is_two_n_c_and_derating_lowers_it():
    # seed 004 eq. 1, R = 2 N C: 2 x 3840 cores x 1.531 GHz (a Tesla P40) = 11.75808 TFLOPS;
    # sustained R (1 - d) with d = 0.5 is half of it
    result = peak(PeakRequest(cores=3840, clock="1.531 GHz", derating=0.5))
    assert result.peak.unit == "FLOP/s"
    assert result.peak.value == pytest.approx(2 * 3840 * 1.531e9, rel=1e-12)
    assert result.sustained.expected == pytest.approx(result.peak.value * 0.5, rel=1e-12)
    assert result.device is None


def test_peak_of_a_catalog_device_names_it(catalog):
    result = peak(PeakRequest(device="H100 SXM", precision="bf16"), catalog)
    assert result.device is not None and "H100" in result.device
    assert result.precision == "bf16"
    low, high = result.sustained.low, result.sustained.high
    assert 0 < low <= high <= result.peak.value  # derating never gives more than the peak


def test_peak_refuses_a_precision_that_cores_and_clock_cannot_give():
    with pytest.raises(InputError) as error:
        peak(PeakRequest(cores=3840, clock="1.531 GHz", precision="bf16"))
    assert error.value.field == "precision"


def test_cells_follow_seed_003_eq_1():
    # N_na = eta_b S (N + N_M) + eta_w N_w + eta_v N_v = 101136 x (75 + 10) + 700000 = 9,296,560 cells;
    # at 4 B a cell: 37,186,240 B = 0.03718624 GB
    result = cells(CellsRequest(samples=101136, features=75, outputs=10, weights=700000))
    assert result.cells == 9_296_560
    assert (result.training_data_cells, result.weight_cells, result.variable_cells) == (8_596_560, 700_000, 0)
    assert result.memory.unit == "GB" and result.memory.value == pytest.approx(0.03718624, rel=1e-12)


def test_k1_follows_seed_003_eq_4():
    # K1 = N_w / (S N) = 5000 / (10 x 100) = 5 > 1: more weights than values in the data
    result = k1(K1Request(weights=5000, samples=10, features=100))
    assert result.k1 == pytest.approx(5.0)
    assert result.verdict == "redundant"
    # 1000 / (10 x 100) = 1 exactly
    assert k1(K1Request(weights=1000, samples=10, features=100)).verdict == "exact"


def test_complexity_follows_seed_003_eq_2_and_3():
    # T1 = sum N_mu N_(mu-1) t = (512 x 75 + 10 x 512) x 1 ns = 43,520 ns;
    # T2 = sum N_(mu-1) t = (75 + 512) x 1 ns = 587 ns; T1 / T2 = 74.14
    result = complexity(ComplexityRequest(layers=[75, 512, 10]))
    assert (result.layers, result.neurons) == (2, 522)
    assert result.sequential.value == pytest.approx(43_520e-9, rel=1e-12)
    assert result.parallel.value == pytest.approx(587e-9, rel=1e-12)
    assert result.speedup == pytest.approx(43_520 / 587, rel=1e-12)


# --- the engine's answers, through the facade -------------------------------------------------------

def test_time_without_a_device_says_to_give_one(catalog):
    with pytest.raises(SizerError) as error:
        facade.estimate_time(facade.TimeRequest(params=7e9, tokens=1e9), catalog)
    assert error.value.field == "device" and "--device" in error.value.message


def test_a_suggestion_for_memory_fits_when_asked_again(catalog):
    # 7e9 parameters with Adam in mixed precision hold 16 B each (Rajbhandari et al. 2020): 112 GB,
    # more than an 80 GB H100 holds
    request = facade.MemoryRequest(params=7e9, device="H100 SXM")
    result = facade.estimate_memory(request, catalog)
    assert result.fits is False and result.suggestions
    first = result.suggestions[0]
    assert first.fits is True
    again = facade.estimate_memory(request.model_copy(update=first.apply), catalog, suggest=False)
    assert again.fits is True


def test_no_suggestions_when_not_asked(catalog):
    request = facade.TimeRequest(params=7e9, tokens=1e9, device="H100 SXM")
    assert facade.estimate_time(request, catalog).suggestions
    quiet = facade.estimate_time(request, catalog, suggest=False)
    assert quiet.fits is False and not quiet.suggestions


def test_a_suggestion_for_serving_fits_when_asked_again(catalog):
    # Llama 2 70B in 16-bit: 2 B x 69e9 parameters = 138 GB of weights, more than one 80 GB H100
    request = facade.InferenceRequest(model="llama-2-70b", device="H100 SXM")
    result = facade.estimate_inference(request, catalog)
    assert result.fits is False and result.suggestions
    bigger = next(s for s in result.suggestions if "count" in s.apply)
    again = facade.estimate_inference(request.model_copy(update=bigger.apply), catalog, suggest=False)
    assert again.fits is True


# --- cost ------------------------------------------------------------------------------------------

def test_cost_of_a_given_run_is_price_times_devices_times_hours(catalog):
    # 8 devices x 2.5 USD/hour x 14 d (336 h) = 6,720 USD, exactly: the run's length is given
    result = estimate_cost(TcoRequest(device="H100 SXM", count=8, training_time="14 d", rent_price="2.5 USD/hour"),
                           catalog)
    assert result.rent is not None and result.rent.unit == "USD"
    assert (result.rent.low, result.rent.expected, result.rent.high) == pytest.approx((6720.0,) * 3, rel=1e-12)
    assert result.training_time.expected * {"hour": 1, "day": 24}[result.training_time.unit] == pytest.approx(336)


def test_cost_of_a_run_with_no_length_names_the_missing_field(catalog):
    # A workload profile need not give the run's length; the cost needs one (this was an
    # AttributeError on None before, a 500 over HTTP)
    request = TcoRequest(device="H100 SXM", count=8, workload="alexnet", batch_size=256)
    with pytest.raises(InputError) as error:
        estimate_cost(request, catalog)
    assert error.value.field == "training_time"
    assert "samples" in error.value.message and "tokens" in error.value.message


def test_cost_of_an_estimated_run_grows_with_its_length(catalog):
    # the engine's time is linear in the tokens (a step count), so twice the tokens is twice the rent
    short = estimate_cost(TcoRequest(device="H100 SXM", count=8, params=1e9, tokens=1e10, rent_price="2 USD/hour"),
                          catalog)
    long = estimate_cost(TcoRequest(device="H100 SXM", count=8, params=1e9, tokens=2e10, rent_price="2 USD/hour"),
                         catalog)
    assert short.rent is not None and long.rent is not None
    assert long.rent.expected == pytest.approx(2 * short.rent.expected, rel=1e-3)
    assert math.isfinite(long.rent.high) and long.rent.low <= long.rent.expected <= long.rent.high


def test_resnet50_at_512_with_amp_is_one_pass_on_a_24gb_card():
    # issue 40: timm trains ResNet-50 at 512 per GPU with AMP in 24 GB; the time answer once split it into two passes
    from sizer.facade import TimeRequest, estimate_time

    result = estimate_time(TimeRequest(workload="resnet50", device="rtx-3090", batch_size=512, precision="fp16",
                                       optimizer="momentum", samples=1_281_167), suggest=False)
    assert result.fits is True
    assert result.layout.micro_batch == 512 and result.layout.accumulation == 1
