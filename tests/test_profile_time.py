"""sizer/layer_time.py, profile_time.py, time_modes.py: per-layer roofline, modes, ranges."""
import pytest
from hypothesis import given, settings, strategies as st

from sizer.errors import InputError, SizerError
from sizer.estimates import TimeRequest, estimate_time
from sizer.layer_time import GPU_EFFICIENCIES, device_rates
from sizer.profile import load_profile
from sizer.profile_time import estimate_profile_time, expected_step_seconds, physical_limit_seconds, reference_efficiencies
from sizer.time_modes import parse_reference_throughput


def test_fp32_convolutions_use_tf32_on_ampere_but_matmuls_do_not(catalog):
    rates = device_rates(catalog.find("A100 80GB SXM"), "fp32")
    assert rates.conv_unit == "tf32" and rates.conv_peak == pytest.approx(156e12)
    assert rates.matrix_unit == "fp32" and rates.matrix_peak == pytest.approx(19.5e12, rel=0.01)
    assert device_rates(catalog.find("Tesla P40"), "fp32").conv_unit == "fp32"


def test_reference_mode_reproduces_its_own_measurement(catalog):
    profile, v100 = load_profile("resnet50"), catalog.find("V100 SXM2 16GB")
    scaled, factor = reference_efficiencies(profile, v100, "fp16", 256, "momentum", 1200.0, GPU_EFFICIENCIES)
    step = expected_step_seconds(profile, v100, "fp16", 256, "momentum", scaled)[0]
    assert 256 / step == pytest.approx(1200, rel=0.01) and factor > 0


def test_reference_prediction_moves_with_the_hardware(catalog):
    base = dict(workload="resnet50", batch_size=256, precision="fp16", reference="V100 SXM2 16GB=1200/s")
    h100 = estimate_time(TimeRequest(device="H100 SXM", **base))
    t4 = estimate_time(TimeRequest(device="T4", **base))
    assert h100.mode == "reference" and t4.throughput.expected < 1200 < h100.throughput.expected


def test_layer_groups_say_what_bounds_them(catalog):
    result = estimate_time(TimeRequest(workload="bert-large", seq_len=384, batch_size=32, device="A100 80GB SXM",
                                       precision="fp16", samples=88000, epochs=2))
    kinds = {g.kind: g for g in result.layer_groups}
    assert kinds["matmul"].bound == "compute" and kinds["norm"].bound == "memory"
    assert sum(g.share for g in result.layer_groups) == pytest.approx(1)
    assert result.training_time is not None and result.steps == 5500


def test_reference_parsing():
    assert parse_reference_throughput("833/s") == 833
    assert parse_reference_throughput("3600 images per hour") == pytest.approx(1)
    for bad in ("fast", "-3/s", "1e400/s", "833"):
        with pytest.raises(InputError):
            parse_reference_throughput(bad)


def test_reference_needs_a_profile_and_a_known_device(catalog):
    with pytest.raises(InputError, match="reference"):
        estimate_time(TimeRequest(params=1e8, samples=1e6, device="T4", reference="V100 SXM2 16GB=100/s"))
    with pytest.raises(SizerError, match="reference: no device matches"):
        estimate_time(TimeRequest(workload="resnet50", batch_size=64, device="T4", reference="Nonexistent GPU=100/s"))


DEVICES = ["T4", "A100 80GB SXM", "H100 SXM", "RTX 4090", "V100 SXM2 16GB", "Xeon Platinum 8180"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["mlp-seed001", "resnet50", "bert-base"]), st.sampled_from(DEVICES), st.integers(1, 512),
       st.sampled_from([1, 2, 8]))
def test_never_below_the_physical_limit_and_monotone_in_batch(catalog, name, device_name, batch, count):
    device, profile = catalog.find(device_name), load_profile(name)
    if batch < count:
        return
    result = estimate_profile_time(profile, device, batch_size=batch, count=count)
    limit = physical_limit_seconds(profile, device, "fp32", batch, count)
    assert result.step_time.low >= limit * (1 - 1e-12)
    assert result.step_time.low <= result.step_time.expected <= result.step_time.high
    bigger = estimate_profile_time(profile, device, batch_size=batch * 2, count=count)
    assert bigger.step_time.expected >= result.step_time.expected
