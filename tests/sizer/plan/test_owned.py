"""`have`: answers for hardware the user already has (sizer/plan/owned.py, issue 19 item 2)."""
from __future__ import annotations

import pytest

from sizer import facade
from sizer.asked import have_sets
from sizer.errors import SizerError
from sizer.results import unit_factor

LLAMA3_8B = dict(model="llama-3-8b", tokens=1e8)


@pytest.mark.parametrize("text, count, device", [
    ("8x A100 80GB SXM", 8, "a100-80gb-sxm4"),
    ("2 × RTX 4090", 2, "rtx-4090"),
    ("4 * H100 SXM", 4, "h100-sxm5-80gb"),
    ("T4", 1, "tesla-t4"),
])
def test_have_text_parses_once_into_a_count_and_a_catalog_device(catalog, text, count, device):
    ((n, found),) = have_sets([text], catalog)
    assert (n, found.id) == (count, device)


@pytest.mark.parametrize("values, field", [
    (["0x T4"], "have"), (["8x"], "have"), (["8x T4", "3x no-such-device-xyz"], "have[1]"), (["T4"] * 9, "have"),
])
def test_bad_have_names_the_entry(catalog, values, field):
    with pytest.raises(SizerError) as raised:
        have_sets(values, catalog)
    assert raised.value.field == field


def test_each_hardware_set_is_answered_in_order_and_only_those(catalog):
    result = facade.answer_owned(facade.RecommendRequest(**LLAMA3_8B, method="full", have=["8x A100 80GB SXM", "1x RTX 4090"]),
                                 catalog)
    assert [(o.device, o.count) for o in result.options] == [("a100-80gb-sxm4", 8), ("rtx-4090", 1)]
    lab, student = result.options
    # Full fine-tuning of an 8B model keeps (2 + 2 + 12) x 8e9 = 128 GB of model states (ZeRO paper §3):
    # it fits 8 x 80 GB sharded, not one 24 GB card.
    assert lab.fits and lab.training_time is not None and lab.cost.price_basis in ("rent", "buy")
    assert lab.layout["dp"] * lab.layout["tp"] * lab.layout["pp"] == 8
    assert not student.fits and student.training_time is None and student.cost is None
    assert student.memory_per_device.value > 128 and student.suggestions
    assert lab.method == student.method == "full"  # the method given is kept


def test_without_a_method_the_best_that_fits_is_chosen_and_said(catalog):
    """Issue 19: on one RTX 4090 a fine-tune of Llama-3-8B with no method given is answered with a method
    that fits (full needs > 128 GB of model states), chosen among full, LoRA and QLoRA and said."""
    result = facade.answer_owned(facade.TimeRequest(**LLAMA3_8B, have=["1x RTX 4090"]), catalog)
    (student,) = result.options
    assert student.fits and student.method in ("lora", "qlora") and not student.suggestions
    assert student.training_time is not None and student.cost is not None
    said = [a for a in result.assumptions if a.name == "method and precision"]
    assert len(said) == 1 and "full" in said[0].value and "does not fit" in said[0].value
    # the one engine: the same time as asking for that method on that card
    direct = facade.estimate_time(facade.TimeRequest(**{**LLAMA3_8B, **student.chosen}, device="RTX 4090"), catalog)
    assert direct.fits and direct.training_time == student.training_time


def test_the_choice_is_the_fastest_of_the_candidates_that_fit(catalog):
    result = facade.answer_owned(facade.TimeRequest(**LLAMA3_8B, have=["8x H100 SXM"]), catalog)
    (chosen,) = result.options
    for method in ("full", "lora", "qlora"):
        for precision in ("mixed", "fp8"):
            try:
                other = facade.estimate_time(facade.TimeRequest(**LLAMA3_8B, method=method, precision=precision,
                                                                device="H100 SXM", count=8), catalog, suggest=False)
            except SizerError:  # QLoRA computes in bf16 only
                continue
            if other.fits:
                assert chosen.training_time.expected * unit_factor(chosen.training_time.unit, "s") <= \
                    other.training_time.expected * unit_factor(other.training_time.unit, "s") * (1 + 1e-9)


def test_pre_training_keeps_full_and_a_pinned_precision_is_kept(catalog):
    # 2e12 tokens for 7e9 parameters is far above the 20 per parameter of a compute-optimal run: pre-training
    result = facade.answer_owned(facade.TimeRequest(model="llama-2-7b", tokens=2e12, precision="bf16",
                                                    have=["8x H100 SXM"]), catalog)
    (option,) = result.options
    assert option.method == "full" and option.precision == "bf16"


def test_owned_answer_is_the_engines_answer_for_that_device_and_count(catalog):
    """One engine: the time on owned hardware is the time `sizer time` gives for the same device and count."""
    # the recipe given whole (mixed states, no step in backward): --have would otherwise try lighter recipes
    owned = facade.answer_owned(facade.TimeRequest(**LLAMA3_8B, method="full", precision="bf16", have=["8x H100 SXM"],
                                                   state_precision="mixed", optimizer_in_backward=False),
                                catalog).options[0]
    direct = facade.estimate_time(facade.TimeRequest(**LLAMA3_8B, method="full", precision="bf16", device="H100 SXM", count=8),
                                  catalog)
    assert owned.training_time == direct.training_time and owned.memory_per_device == direct.memory_per_device
    # the cost is the time times the hourly price of 8 devices: never zero, never below the physical limit's cost
    assert owned.cost.low <= owned.cost.expected <= owned.cost.high and owned.cost.low > 0


def test_memory_only_answer_without_time(catalog):
    result = facade.answer_owned(facade.MemoryRequest(**LLAMA3_8B, have=["1x A100 80GB SXM"], method="qlora"), catalog)
    option = result.options[0]
    assert option.fits and option.method == "qlora"


def test_serving_on_owned_hardware(catalog):
    result = facade.answer_owned(facade.InferenceRequest(model="llama-2-70b", weights="fp8", have=["2x H100 SXM", "1x L4"]),
                                 catalog)
    big, small = result.options
    # 70e9 parameters x 1 byte of fp8 = 70 GB: over two 80 GB devices it fits; on one 24 GB L4 it does not.
    assert big.fits and big.decode_tokens_per_s.expected > 0
    assert not small.fits and small.decode_tokens_per_s is None


def test_no_device_and_no_have_says_what_to_give(catalog):
    with pytest.raises(SizerError, match="--have"):
        facade.estimate_time(facade.TimeRequest(**LLAMA3_8B), catalog)


def test_memory_on_several_devices_shards_before_it_gives_up_weights(catalog):
    # Full fine-tuning of Llama-3-8B keeps 16 B x 8e9 = 128 GB of model states: replicated on each of
    # 8 H100s it does not fit, sharded with ZeRO-3 (16 GB each) it does; the full method is kept.
    result = facade.answer_owned(facade.MemoryRequest(model="llama-3-8b", have=["8x H100 SXM"]), catalog)
    (option,) = result.options
    assert option.fits and option.method == "full" and option.layout["zero"] == 3
    direct = facade.estimate_memory(facade.MemoryRequest(model="llama-3-8b", device="H100 SXM", count=8, zero=3), catalog)
    assert direct.fits and option.memory_per_device == (direct.required_with_headroom or direct.total)


def test_serving_fp8_on_owned_hardware_without_the_peak_says_so(catalog):
    # issue 16: W8A8 FP8 needs an FP8 peak; a V100 has none (and, unlike an A100, no engine's weight-only FP8
    # kernel: sizer/runtimes/precision_support.py), so it cannot run fp8 and says which change would serve
    result = facade.answer_owned(facade.InferenceRequest(model="llama-2-7b", weights="fp8", have=["1x V100 SXM2 32GB"]),
                                 catalog)
    option = result.options[0]
    assert not option.fits and "cannot run these weights" in option.verdict and "fp8 peak" in option.verdict
    assert any(s.apply.get("weights") in ("int8", "awq-int4-g128", "q4_k_m") for s in option.suggestions)


def test_every_training_field_but_the_hardware_survives_have():
    # derived from the request model: a pinned --cp (dropped when the list was kept by hand) and the
    # fields added since reach the answer on one's own hardware
    from sizer.plan.owned import PER_HARDWARE, TRAINING_FIELDS, training_request
    from sizer.schemas.time_and_memory import TimeRequest

    assert set(TRAINING_FIELDS) == set(TimeRequest.model_fields) - PER_HARDWARE
    request = TimeRequest(model="llama-2-7b", tokens=1e9, cp=4, interruptions=False, overlap_all_to_all=True,
                          state_precision="bf16", have=["8x H100 SXM"])
    asked = training_request(request)
    assert asked.cp == 4 and asked.interruptions is False and asked.overlap_all_to_all is True
    assert "have" not in asked.model_fields_set and asked.have is None


@pytest.mark.parametrize("have", ["٣x H100 SXM", "３x H100 SXM"])  # issue 43: Arabic-Indic and fullwidth digits
def test_a_have_count_is_ascii_digits(catalog, have):
    with pytest.raises(SizerError, match="^have: "):
        have_sets([have], catalog)
