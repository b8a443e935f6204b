"""sizer.serving.estimate: the request's parsing (format, architecture), the price and energy notes, and
the unequal-device answer's honesty about what it does not estimate."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.hardware.catalog import load_catalog
from sizer.runtimes.formats import weight_format
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import (
    estimate_inference,
    refused_format,
    rent_per_hour,
    served_architecture,
    served_format,
    speed_spread,
)


def _note(result, name):
    return [a for a in result.assumptions if a.name == name]


def test_unequal_devices_say_energy_is_not_estimated():
    # the energy per token is None for a split over unequal devices; the note must say so, not quote
    # "TDP ... W x 1 devices" of the first device as if it had been counted
    r = estimate_inference(InferenceRequest(model="llama-3-8b", weights="q4_k_m", devices=["RTX 3090", "RTX 4090"]))
    assert r.energy_per_token is None and r.cost_per_million_tokens is None
    [energy] = _note(r, "energy")
    assert energy.value == "not estimated for unequal devices"
    assert "TDP" not in energy.value


def test_equal_devices_quote_their_tdp():
    r = estimate_inference(InferenceRequest(model="llama-3-8b", weights="q4_k_m", device="RTX 4090", count=2,
                                            split="layer"))
    [energy] = _note(r, "energy")
    assert r.energy_per_token is not None and energy.value.startswith("TDP ") and "x 2 devices" in energy.value


def test_speed_spread_brackets_the_expected_speed():
    s = speed_spread()  # fitted on held-out rows (error_spread.yaml): the expected speed lies inside the range
    assert 0 < s["low"] < 1 < s["high"]
    assert "held-out" in s["source"]


def test_format_defaults_to_the_published_checkpoint_and_says_so():
    fmt, notes = served_format(InferenceRequest(model="llama-3-8b", device="H100 SXM"))
    assert fmt.name == "bf16" and [n.name for n in notes] == ["weight format"]
    given, none = served_format(InferenceRequest(model="llama-3-8b", device="H100 SXM", weights="int8"))
    assert given.name == "int8" and none == []


@pytest.mark.parametrize("fields", [dict(), dict(model="llama-3-8b", params="7B")])
def test_architecture_needs_exactly_one_of_model_and_params(fields):
    with pytest.raises(InputError, match="model"):
        served_architecture(InferenceRequest(device="H100 SXM", **fields))


def test_params_give_a_decoder_of_about_that_size():
    arch, [note] = served_architecture(InferenceRequest(params="7B", device="H100 SXM"))
    assert arch.params_total() == pytest.approx(7e9, rel=0.15) and note.name == "model"


def test_rent_price_given_is_used_per_device_hour():
    device = load_catalog().find("H100 SXM")
    hourly, basis, note = rent_per_hour(device, given="2.5 USD/hour")
    assert hourly == pytest.approx(2.5) and basis == "rent" and note.name == "rent price"


def test_refused_format_names_the_missing_peak():
    device = load_catalog().find("RTX 3090")  # Ampere: no FP8 tensor cores in the catalog
    text = refused_format(weight_format("fp8"), device)
    assert "RTX 3090" in text and "fp8" in text
