"""The user's own measurement and efficiency (sizer/measured.py): parsed once into a typed measurement, the answer
and every figure derived from it rescaled by one factor, what-ifs reported as given, wrong kinds refused by name."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sizer import facade
from sizer.errors import InputError
from sizer.measured import REFERENCE_MODE_P90, REPEATABILITY
from sizer.results import unit_factor
from sizer.schemas.measurement import MeasuredKind, parse_measured

ROOT = Path(__file__).resolve().parents[2]
TRAIN = dict(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e10)  # the contract question


@pytest.mark.parametrize(("text", "kind", "si"), [
    ("2900 tokens/s", MeasuredKind.THROUGHPUT, 2900.0), ("2,900 tokens/s", MeasuredKind.THROUGHPUT, 2900.0),
    ("2900 tok/s", MeasuredKind.THROUGHPUT, 2900.0), ("1.2 s/step", MeasuredKind.STEP_TIME, 1.2),
    ("step time 1.2 s", MeasuredKind.STEP_TIME, 1.2), ("1.2 s", MeasuredKind.DURATION, 1.2),
    ("TTFT 350 ms", MeasuredKind.TTFT, 0.35), ("25 ms/token", MeasuredKind.TOKEN_LATENCY, 0.025),
    ("peak memory 18 GiB", MeasuredKind.PEAK_MEMORY, 18 * 2**30), ("18 GiB", MeasuredKind.PEAK_MEMORY, 18 * 2**30)])
def test_a_measurement_is_typed_once_with_its_si_magnitude(text, kind, si):
    m = parse_measured(text)
    assert m.kind is kind and m.value == pytest.approx(si) and m.on is None


def test_the_device_it_was_taken_on_is_kept():
    assert parse_measured("2900 tokens/s on RTX 4090").on == "RTX 4090"


@pytest.mark.parametrize("text", ["fast", "2900", "TTFT 18 GiB", "peak memory 2 s", "-5 tokens/s", "3 W"])
def test_a_bad_measurement_names_the_field(text):
    with pytest.raises(InputError) as error:
        parse_measured(text)
    assert error.value.field == "measured"


def _seconds(r) -> float:
    return r.expected * unit_factor(r.unit, "s")


def test_a_measured_throughput_sets_the_training_time():
    # the contract: 1e10 tokens at a measured 20,000 tokens/s take 1e10 / 20,000 s (within 2 %)
    plain = facade.estimate_time(facade.TimeRequest(**TRAIN))
    measured = facade.estimate_time(facade.TimeRequest(**TRAIN, measured="20000 tokens/s"))
    assert _seconds(measured.training_time) == pytest.approx(1e10 / 20000, rel=0.02)
    factor = 20000 / plain.throughput.expected
    assert measured.rescaled.factor == pytest.approx(factor)
    # every dependant moves by the same factor
    assert measured.step_time.expected == pytest.approx(plain.step_time.expected / factor)
    assert measured.mfu == pytest.approx(plain.mfu * factor)
    assert measured.kernels_per_step.value == pytest.approx(plain.kernels_per_step.value / factor)
    assert f"{factor:.2f}x sizer's" in measured.rescaled.statement and measured.assumptions[0].name == "measured"
    # the range is the measurement's own repeatability, not the model's spread
    t = measured.training_time
    assert t.high / t.expected == pytest.approx(1 + REPEATABILITY)


def test_a_measured_step_time_sets_the_step():
    measured = facade.estimate_time(facade.TimeRequest(**TRAIN, measured="60 s/step"))
    assert measured.step_time.expected == pytest.approx(60.0)
    assert _seconds(measured.training_time) == pytest.approx(60.0 * measured.steps)


def test_a_measurement_of_another_kind_is_refused_naming_measured():
    with pytest.raises(InputError) as error:
        facade.estimate_time(facade.TimeRequest(**TRAIN, measured="TTFT 350 ms"))
    assert error.value.field == "measured"


def test_a_measurement_faster_than_the_physical_limit_is_refused():
    with pytest.raises(InputError) as error:
        facade.estimate_time(facade.TimeRequest(**TRAIN, measured="1e7 tokens/s"))
    assert error.value.field == "measured" and "physical limit" in str(error.value)


def test_a_given_mfu_is_the_answer_s_mfu():
    # the contract: --mfu 0.4 is reported as the MFU; the time is C / (n R_peak MFU)
    r = facade.estimate_time(facade.TimeRequest(params="7B", tokens=1e12, device="H100 SXM", count=64, mfu=0.4))
    assert r.mfu == 0.4 and r.rescaled.basis == "mfu" and "40% MFU (given)" in r.rescaled.statement
    limit = r.physical_limit.value * unit_factor(r.physical_limit.unit, "s")
    assert _seconds(r.training_time) == pytest.approx(limit / 0.4, rel=1e-6)
    assert any("given" in a.source for a in r.assumptions if a.name == "MFU")


@pytest.mark.parametrize("value", [0, -0.1, 1.2])
def test_an_mfu_out_of_range_names_the_field(value):
    with pytest.raises(ValidationError) as error:
        facade.TimeRequest(**TRAIN, mfu=value)
    assert error.value.errors()[0]["loc"] == ("mfu",)


def test_a_measurement_and_an_mfu_together_are_refused():
    with pytest.raises(InputError) as error:
        facade.estimate_time(facade.TimeRequest(**TRAIN, mfu=0.4, measured="20000 tokens/s"))
    assert error.value.field == "mfu"


def test_reference_mode_carries_the_factor_over_through_the_engine():
    on_4090 = facade.estimate_time(facade.TimeRequest(model="llama-2-7b", method="lora", tokens=1e8, device="RTX 4090"))
    asked = dict(model="llama-2-7b", method="lora", tokens=1e8, device="H100 SXM")
    plain = facade.estimate_time(facade.TimeRequest(**asked))
    carried = facade.estimate_time(facade.TimeRequest(**asked, measured="3000 tokens/s", measured_on="RTX 4090"))
    factor = 3000 / on_4090.throughput.expected
    assert carried.rescaled.basis == "reference" and carried.rescaled.factor == pytest.approx(factor)
    assert carried.throughput.expected == pytest.approx(plain.throughput.expected * factor)
    # its range is the mode's held-out error
    assert carried.step_time.high / carried.step_time.expected == pytest.approx(1 + REFERENCE_MODE_P90)


def test_the_reference_mode_range_is_the_benchmark_s_figure():
    results = ROOT / "benchmarks" / "results" / "reference_mode.json"
    assert json.loads(results.read_text())["all"]["p90_abs_error"] == pytest.approx(REFERENCE_MODE_P90, abs=0.005)


def test_measured_on_without_a_measurement_is_refused():
    with pytest.raises(InputError) as error:
        facade.estimate_time(facade.TimeRequest(**TRAIN, measured_on="RTX 4090"))
    assert error.value.field == "measured_on"


LOCAL = dict(model="llama-3.1-8b", device="RTX 4090", weights="q4_k_m")


def test_a_measured_throughput_rescales_a_local_answer():
    plain = facade.estimate_inference(facade.InferenceRequest(**LOCAL))
    measured = facade.estimate_inference(facade.InferenceRequest(**LOCAL, measured="100 tokens/s"))
    factor = 100 / plain.total_tokens_per_s.expected
    assert measured.total_tokens_per_s.expected == pytest.approx(100.0)
    assert measured.decode_tokens_per_s.expected == pytest.approx(plain.decode_tokens_per_s.expected * factor)
    assert measured.time_to_first_token.expected == pytest.approx(plain.time_to_first_token.expected / factor)


def test_a_measured_ttft_rescales_a_serving_answer_and_its_cost():
    ask = dict(model="llama-3.1-8b", device="H100 SXM", batch=8)
    plain = facade.estimate_inference(facade.InferenceRequest(**ask))
    ttft = plain.time_to_first_token.expected * unit_factor(plain.time_to_first_token.unit, "s")
    measured = facade.estimate_inference(facade.InferenceRequest(**ask, measured=f"TTFT {ttft * 2e3:g} ms"))
    assert measured.rescaled.factor == pytest.approx(0.5)
    assert measured.total_tokens_per_s.expected == pytest.approx(plain.total_tokens_per_s.expected * 0.5)
    assert measured.cost_per_million_tokens.expected == pytest.approx(plain.cost_per_million_tokens.expected * 2)


def test_a_step_time_is_refused_on_inference_naming_measured():
    with pytest.raises(InputError) as error:
        facade.estimate_inference(facade.InferenceRequest(**LOCAL, measured="peak memory 9 GiB"))
    assert error.value.field == "measured"


def test_a_given_efficiency_is_a_fraction_of_the_roofline():
    half = facade.estimate_inference(facade.InferenceRequest(**LOCAL, efficiency=0.3))
    more = facade.estimate_inference(facade.InferenceRequest(**LOCAL, efficiency=0.6))
    # generation time is the roofline step over the efficiency: twice the efficiency, half the time
    assert half.decode_latency.expected == pytest.approx(2 * more.decode_latency.expected)
    assert half.time_to_first_token.expected == pytest.approx(2 * more.time_to_first_token.expected)
    assert more.rescaled.basis == "efficiency" and "60% of the roofline (given)" in more.rescaled.statement


def test_an_efficiency_out_of_range_names_the_field():
    with pytest.raises(ValidationError) as error:
        facade.InferenceRequest(**LOCAL, efficiency=1.5)
    assert error.value.errors()[0]["loc"] == ("efficiency",)


def test_a_measured_peak_memory_rescales_the_memory_answer():
    ask = dict(model="llama-2-7b", method="lora", device="RTX 4090")
    plain = facade.estimate_memory(facade.MemoryRequest(**ask))
    total_gib = plain.total.value * unit_factor(plain.total.unit, "GiB")
    measured = facade.estimate_memory(facade.MemoryRequest(**ask, measured=f"peak memory {total_gib * 0.5:g} GiB"))
    assert measured.total.value == pytest.approx(plain.total.value * 0.5, rel=1e-3)
    assert measured.activations.value == pytest.approx(plain.activations.value * 0.5, rel=1e-3)
    assert measured.fits is True and measured.rescaled.basis == "measured"


def test_a_throughput_is_refused_on_memory():
    with pytest.raises(InputError) as error:
        facade.estimate_memory(facade.MemoryRequest(model="llama-2-7b", device="RTX 4090", measured="100 tokens/s"))
    assert error.value.field == "measured"


def test_under_load_a_measured_throughput_changes_the_replicas_and_their_cost():
    ask = dict(model="llama-3.1-8b", device="H100 SXM", rate=20)
    plain = facade.estimate_inference(facade.InferenceRequest(**ask))
    peak = plain.capacity.max_request_rate.value * plain.load.output_len.mean  # one replica's output tokens/s
    slower = facade.estimate_inference(facade.InferenceRequest(**ask, measured=f"{peak / 3:g} tokens/s"))
    assert slower.capacity.max_request_rate.value == pytest.approx(plain.capacity.max_request_rate.value / 3, rel=1e-5)
    needed = -(-20 // slower.capacity.max_request_rate.value)  # ceil: replicas for 20 requests/s
    assert slower.capacity.replicas == needed > plain.capacity.replicas
    assert slower.cost_per_million_tokens.expected == pytest.approx(
        plain.cost_per_million_tokens.expected * needed / plain.capacity.replicas)
    assert slower.output_tokens_per_s.value == plain.output_tokens_per_s.value  # the load's tokens, served as before


def test_a_given_mfu_times_every_layout_of_a_plan():
    r = facade.plan(facade.PlanRequest(model="llama-2-7b", tokens=1e11, device="H100 SXM", count=64, mfu=0.4))
    assert r.layouts and all(layout.mfu == pytest.approx(0.4) for layout in r.layouts)
    times = {round(layout.training_time.expected, 6) for layout in r.layouts}
    assert len(times) == 1  # C / (n R_peak MFU): the same for every layout of one batch
    assert any(a.name == "MFU" and "given" in a.value for a in r.assumptions)


def test_a_given_mfu_times_every_device_of_a_recommendation():
    r = facade.recommend(facade.RecommendRequest(model="llama-2-7b", tokens=2e10, mfu=0.4, kinds=["gpu"]))
    rows = r.ranked[:5]
    assert rows and all(row.mfu == pytest.approx(0.4) for row in rows)
    assert r.assumptions[0].name == "MFU"
    # each device's time is its fitted time x its fitted MFU / 0.4 (C / (n R_peak MFU)), at the same count
    fitted = {(row.device, row.count): row for row in facade.recommend(
        facade.RecommendRequest(model="llama-2-7b", tokens=2e10, kinds=["gpu"])).ranked}
    compared = [(row, fitted[(row.device, row.count)]) for row in rows if (row.device, row.count) in fitted]
    assert compared
    for given, own in compared:
        assert _seconds(given.training_time) == pytest.approx(_seconds(own.training_time) * own.mfu / 0.4, rel=1e-6)


def test_a_recommendation_carries_a_measurement_to_every_device():
    base = dict(model="llama-2-7b", tokens=2e10, kinds=["gpu"])
    on = facade.estimate_time(facade.TimeRequest(model="llama-2-7b", tokens=2e10, device="H100 SXM", count=8))
    half = f"{on.throughput.expected / 2:.0f} tokens/s"
    fitted = {(r.device, r.count): r for r in facade.recommend(facade.RecommendRequest(**base)).ranked}
    carried = facade.recommend(facade.RecommendRequest(**base, measured=half, measured_on="8x H100 SXM"))
    assert carried.assumptions[0].name == "measured" and "8 x NVIDIA H100" in carried.assumptions[0].value
    compared = [(r, fitted[(r.device, r.count)]) for r in carried.ranked[:5] if (r.device, r.count) in fitted]
    assert compared
    for r, own in compared:  # every device twice as slow as sizer's, as the measured one was
        assert _seconds(r.training_time) == pytest.approx(2 * _seconds(own.training_time), rel=1e-3)


def test_a_recommendation_needs_the_device_measured_on():
    with pytest.raises(InputError) as error:
        facade.recommend(facade.RecommendRequest(model="llama-2-7b", tokens=2e10, measured="3000 tokens/s"))
    assert error.value.field == "measured_on"


def test_a_measurement_beside_several_owned_sets_must_name_its_set():
    ask = dict(model="llama-2-7b", tokens=1e10, have=["8x H100 SXM", "8x A100 80GB SXM"], measured="20000 tokens/s")
    with pytest.raises(InputError) as error:
        facade.answer_owned(facade.TimeRequest(**ask))
    assert error.value.field == "measured_on"
    named = facade.answer_owned(facade.TimeRequest(**ask, measured_on="8x H100 SXM"))
    h100 = next(o for o in named.options if "H100" in o.name)
    assert _seconds(h100.training_time) == pytest.approx(1e10 / 20000, rel=0.02)  # the set measured on
    assert all(o.training_time is not None for o in named.options)  # the other carried over
