"""sizer/runtimes/runtime.py: one frozen description per runtime, and its refusals."""
import dataclasses

import pytest

from sizer.runtimes.runtime import Purpose, Runtime

TOY = Runtime(name="toy", purpose=Purpose.SERVING, summary="a test runtime", sources=("test",),
              weight_formats=frozenset({"fp16", "int8"}), device_kinds=frozenset({"gpu", "accelerator"}))


def test_a_runtime_that_can_run_the_combination_does_not_refuse():
    assert TOY.refusal() is None
    assert TOY.refusal(weights="int8", device_kind="accelerator") is None


def test_a_refusal_names_what_it_runs_instead_sorted():
    assert TOY.refusal(weights="q4_k_m") == "toy does not run q4_k_m weights (it runs fp16, int8)"
    assert TOY.refusal(device_kind="cpu") == "toy does not run on a cpu (it runs on accelerator, gpu)"


def test_the_weights_are_refused_before_the_device():
    # one sentence at a time: the first reason (the format) is the one given
    assert "weights" in TOY.refusal(weights="q4_k_m", device_kind="cpu")


def test_purposes_are_the_two_names_users_see():
    assert [p.value for p in Purpose] == ["local", "serving"]
    assert Purpose("local") is Purpose.LOCAL


def test_a_runtime_is_frozen_and_has_no_aliases_by_default():
    assert TOY.aliases == () and TOY.profile is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        TOY.name = "other"


def test_a_runtime_of_one_vendor_refuses_the_others_devices_by_name():
    only = dataclasses.replace(TOY, vendors=frozenset({"NVIDIA"}))
    assert only.refusal(device_kind="gpu", vendor="NVIDIA") is None
    assert only.refusal(device_kind="gpu", vendor="AMD") == "toy does not run on AMD devices (it runs on NVIDIA ones)"
    assert TOY.refusal(device_kind="gpu", vendor="AMD") is None  # no vendors listed: any vendor of its kinds


def test_a_refusal_names_apple_silicon_and_an_accelerator_in_words():
    assert TOY.refusal(device_kind="apple") == "toy does not run on Apple silicon (it runs on accelerator, gpu)"
    cpu_only = dataclasses.replace(TOY, device_kinds=frozenset({"cpu"}))
    assert cpu_only.refusal(device_kind="accelerator").startswith("toy does not run on an accelerator")
