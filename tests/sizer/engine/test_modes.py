"""sizer/engine/modes.py: where the efficiencies come from (datasheet, calibration, a reference run).

test_engine.py checks that the reference mode reproduces its own measurement and moves with the
hardware; here the parsing, the carry-over rule, the calibration and the choice between modes.
"""
import pytest

from sizer.asked import reference_device
from sizer.choices import Mode, Optimizer, Precision
from sizer.engine.constants import GPU_EFFICIENCIES, device_efficiencies
from sizer.engine.job import job_from_profile
from sizer.engine.modes import (
    REFERENCE_WEIGHT,
    calibrated_efficiencies,
    carried_over,
    choose_efficiencies,
    job_from_profile_like,
    job_step_seconds,
    parse_reference_throughput,
    reference_efficiencies,
)
from sizer.errors import DeviceLookupError, InputError
from sizer.schemas.calibration_file import Calibration, DeviceCalibration
from sizer.workloads.profile import load_profile


@pytest.mark.parametrize("text, per_second", [("833/s", 833.0), ("1,200 images/s", 1200.0), ("3e3 per min", 50.0),
                                              ("36000 samples per hour", 10.0), ("2.5/sec", 2.5), (" 7 / SECOND ", 7.0)])
def test_a_measured_throughput_in_any_time_unit(text, per_second):
    # 1 min = 60 s, 1 h = 3600 s (SI brochure)
    assert parse_reference_throughput(text) == pytest.approx(per_second, rel=1e-12)


@pytest.mark.parametrize("text", ["fast", "833", "833/day", "-5/s", "0/s", "1" * 70 + "/s", None])
def test_other_forms_are_refused_naming_reference(text):
    with pytest.raises(InputError, match="^reference: "):
        parse_reference_throughput(text)


def test_a_reference_names_a_catalog_device_and_a_throughput(catalog):
    device, rate = reference_device("V100 SXM2 16GB=833/s", catalog), parse_reference_throughput("833/s")
    assert device is not None and device.id == "tesla-v100-sxm2-16gb" and rate == 833
    with pytest.raises(DeviceLookupError) as error:
        reference_device("V1000 XYZ=833/s", catalog)
    assert error.value.field == "reference"
    with pytest.raises(InputError, match="^reference: "):
        reference_device("V100 at 833/s", catalog)


def test_half_of_a_reference_factor_carries_over():
    # w = 0.5: a run 4x slower than the model moves the target's efficiencies by 4^0.5 = 2
    moved = carried_over(GPU_EFFICIENCIES, 4.0, "ref")
    assert REFERENCE_WEIGHT == 0.5
    assert moved.matrix == pytest.approx(GPU_EFFICIENCIES.matrix / 2) and moved.launch == pytest.approx(GPU_EFFICIENCIES.launch * 2)
    assert moved.source == "ref"


def _calibration(device_id="tesla-v100-sxm2-16gb", name="NVIDIA Tesla V100 SXM2 16GB"):
    return Calibration(created="2026-11-01", source="my runs", devices=[DeviceCalibration(
        device_id=device_id, device_name=name, efficiency_scale=2.0, step_overhead_s=0.005, runs=6,
        median_abs_error=0.03)])


def test_a_calibration_scales_the_defaults_and_sets_the_step_overhead(catalog):
    v100 = catalog.find("V100 SXM2 16GB")
    eff = calibrated_efficiencies(v100, _calibration().devices[0])
    # the defaults of a profiled network on this GPU (sizer/engine/stacks.py's fit), halved
    assert eff.matrix == pytest.approx(device_efficiencies(v100).matrix / 2) and eff.step_overhead == 0.005
    assert "6 measured runs" in eff.source


@pytest.fixture(scope="module")
def resnet_job():
    # ResNet-50 at batch 256 in FP16 with momentum SGD: NVIDIA DeepLearningExamples' V100 setting
    return job_from_profile(load_profile("resnet50"), 256, Precision.FP16, Optimizer.MOMENTUM, micro_batch=256)


def test_without_reference_or_calibration_the_datasheet_mode(catalog, resnet_job):
    v100 = catalog.find("V100 SXM2 16GB")
    eff, mode, said = choose_efficiencies(resnet_job, v100)
    assert mode is Mode.DATASHEET and eff == device_efficiencies(v100) and said == []


def test_a_calibrated_device_uses_its_calibration_and_others_say_they_have_none(catalog, resnet_job):
    v100, t4 = catalog.find("V100 SXM2 16GB"), catalog.find("T4")
    eff, mode, said = choose_efficiencies(resnet_job, v100, calibration=_calibration())
    assert mode is Mode.CALIBRATED and eff.step_overhead == 0.005 and said[0].name == "calibration"
    _, mode, said = choose_efficiencies(resnet_job, t4, calibration=_calibration())
    assert mode is Mode.DATASHEET and "none for" in said[0].value


def test_a_reference_wins_and_is_stated(catalog, resnet_job):
    eff, mode, said = choose_efficiencies(resnet_job, catalog.find("T4"),
                                          reference=(catalog.find("V100 SXM2 16GB"), "V100 SXM2 16GB=1200/s"), calibration=_calibration())
    assert mode is Mode.REFERENCE and said[0].name == "reference" and "1200" in said[0].value


def test_slower_efficiencies_never_give_a_shorter_step(catalog, resnet_job):
    # the bisection of reference_efficiencies needs t_step(f) monotone in the factor
    v100 = catalog.find("V100 SXM2 16GB")
    steps = [job_step_seconds(resnet_job, v100, GPU_EFFICIENCIES.scaled(f, "")) for f in (0.5, 1, 2, 4, 8)]
    assert steps == sorted(steps) and steps[0] < steps[-1]


def test_a_throughput_no_factor_explains_is_refused(catalog, resnet_job):
    # a million ResNet-50 images per second on one V100 is ~1000x its FP16 peak
    with pytest.raises(InputError, match="^reference: .*explain"):
        reference_efficiencies(resnet_job, catalog.find("V100 SXM2 16GB"), 1e6, GPU_EFFICIENCIES)


def test_a_precision_the_device_lacks_is_refused(catalog, resnet_job):
    from dataclasses import replace

    from sizer.choices import Precision

    with pytest.raises(InputError, match="^precision: "):
        job_step_seconds(replace(resnet_job, precision=Precision.BF16), catalog.find("Tesla P40"))


def test_a_reference_job_runs_its_whole_batch_per_device(resnet_job):
    like = job_from_profile_like(resnet_job, 128)
    assert (like.batch_size, like.micro_batch, like.batch_given) == (128, 128, True)
    assert like.layers is resnet_job.layers
