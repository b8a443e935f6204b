"""What to change (sizer/plan/suggestions.py, issue 19 item 3): every suggestion is evaluated again
here, through the public facade with its ``apply`` edits, and must fit (and meet the deadline)."""
from __future__ import annotations

from sizer import facade
from sizer.engine.constants import optimizer_state_bytes
from sizer.results import unit_factor


def _again_time(base: dict, suggestion, device: str, count: int, catalog):
    fields = {**base, **{k: v for k, v in suggestion.apply.items() if k != "count"}}
    fields = {k: v for k, v in fields.items() if v is not None}
    return facade.estimate_time(facade.TimeRequest(**fields, device=device, count=suggestion.apply.get("count", count)),
                                catalog, suggest=False)


def test_full_fine_tune_of_8b_on_one_4090_lists_changes_that_each_fit(catalog):
    # The case: full fine-tuning of Llama-3-8B on one RTX 4090 does not fit (>128 GB of model states).
    base = dict(model="llama-3-8b", tokens=1e8)
    result = facade.estimate_time(facade.TimeRequest(**base, device="RTX 4090"), catalog)
    assert not result.fits
    changes = result.suggestions
    # at its 8,192-token context the FP32 logits (8.4 GB a sequence) leave plain LoRA short of 24 GB: QLoRA remains
    assert "qlora" in {s.apply.get("method") for s in changes}
    assert any("count" in s.apply for s in changes)  # more devices, sharded
    for s in changes:
        again = _again_time(base, s, "RTX 4090", 1, catalog)
        assert s.fits and again.fits, s.change
        assert again.memory_per_device == s.memory_per_device and again.training_time == s.training_time
    same_card = [s.cost.expected for s in changes if "count" not in s.apply]
    more_cards = [s.cost.expected for s in changes if "count" in s.apply]
    # changes on the card as it is (recipes, methods) before more cards, each group cheapest first
    assert [("count" in s.apply) for s in changes] == sorted("count" in s.apply for s in changes)
    assert same_card == sorted(same_card) and more_cards == sorted(more_cards)


def test_qlora_fits_65b_on_one_48gb_gpu(catalog):
    # Dettmers et al. 2023 (QLoRA), abstract: finetuning a 65B model on a single 48 GB GPU.
    base = dict(model="llama-65b", tokens=1e7)
    result = facade.estimate_time(facade.TimeRequest(**base, device="RTX A6000"), catalog)
    assert not result.fits
    same_card = [s for s in result.suggestions if "count" not in s.apply]
    assert same_card and all(s.apply["method"] == "qlora" for s in same_card)
    for s in same_card:
        assert _again_time(base, s, "RTX A6000", 1, catalog).fits


def test_eight_bit_optimizer_suggested_where_it_is_what_makes_the_difference(catalog):
    # 1.3e9 parameters, AdamW: (2 + 2 + 4 + 8) x 1.3e9 = 20.8 GB of model states; with 8-bit states
    # (2 + 2 + 4 + 2) x 1.3e9 = 13 GB. A 16 GB card holds the second and not the first.
    base = dict(params=1.3e9, tokens=1e8, optimizer="adamw", micro_batch=1)
    result = facade.estimate_time(facade.TimeRequest(**base, device="V100 SXM2 16GB"), catalog)
    assert not result.fits
    eight = [s for s in result.suggestions if s.apply.get("optimizer") == "adamw-8bit"]
    assert eight and _again_time(base, eight[0], "V100 SXM2 16GB", 1, catalog).fits


def test_eight_bit_states_are_a_quarter_of_adams():
    # Dettmers et al. 2022 (8-bit optimizers): 75 % less optimizer memory than 32-bit Adam; the
    # block-wise absmax (one FP32 per 2048 values) adds 0.2 %.
    assert abs(optimizer_state_bytes("adamw-8bit") / optimizer_state_bytes("adamw") - 0.25) < 0.001
    assert optimizer_state_bytes("paged-adamw") == optimizer_state_bytes("adamw")


def test_missed_deadline_lists_counts_that_meet_it(catalog):
    request = facade.RecommendRequest(model="llama-2-7b", tokens=2e10, deadline="3 d", have=["8x A100 80GB SXM"])
    option = facade.answer_owned(request, catalog).options[0]
    assert option.fits and option.meets_deadline is False and option.suggestions
    for s in option.suggestions:
        again = _again_time(dict(model="llama-2-7b", tokens=2e10), s, "A100 80GB SXM", 8, catalog)
        seconds = again.training_time.expected * unit_factor(again.training_time.unit, "s")
        assert again.fits and seconds <= 3 * 86400 and s.meets_deadline


def test_serving_suggestions_each_fit(catalog):
    base = dict(model="llama-2-13b", weights="bf16", batch=8)
    result = facade.estimate_inference(facade.InferenceRequest(**base, device="RTX 4090"), catalog)
    # 13e9 x 2 B = 26 GB of weights: not on a 24 GB card; 4-bit formats are (int8's 13 GB plus 8 sequences' KV cache
    # pass 90 % of the card, the share vLLM takes by default).
    assert not result.fits and any(s.apply.get("weights") in ("int8", "awq-int4-g128") for s in result.suggestions)
    for s in result.suggestions:
        fields = {**base, **{k: v for k, v in s.apply.items() if k != "count"}}
        again = facade.estimate_inference(facade.InferenceRequest(**fields, device="RTX 4090",
                                                                  count=s.apply.get("count", 1)), catalog, suggest=False)
        assert again.fits and again.decode_tokens_per_s == s.decode_tokens_per_s


def test_a_job_that_fits_has_no_suggestions(catalog):
    result = facade.estimate_time(facade.TimeRequest(model="llama-3-8b", tokens=1e8, device="H100 SXM", count=8), catalog)
    assert result.fits and result.suggestions == []


def test_serving_that_does_not_fit_suggests_offloading_layers_to_the_host():
    # issue 16: 70B at q4_k_m (~42 GB) on one 24 GB RTX 4090: llama.cpp keeps part of the layers on the GPU
    from sizer import facade

    result = facade.answer_owned(facade.InferenceRequest(model="llama-2-70b", weights="q4_k_m", have=["1x RTX 4090"]))
    offload = next(s for s in result.options[0].suggestions if "gpu_layers" in s.apply)
    assert offload.fits and 0 < offload.apply["gpu_layers"] < 80
    assert offload.memory_per_device.value <= offload.device_memory.value
    # one more layer would not fit: the suggestion keeps the most that do
    more = facade.estimate_inference(facade.InferenceRequest(model="llama-2-70b", weights="q4_k_m", device="RTX 4090",
                                                             gpu_layers=offload.apply["gpu_layers"] + 1), suggest=False)
    assert not more.fits
    unified = facade.answer_owned(facade.InferenceRequest(model="llama-2-70b", weights="fp16", have=["1x M2 Max"]))
    assert not unified.options[0].fits  # 140 GB of weights in 96 GB of unified memory: no host memory to offload to
    assert not any("gpu_layers" in s.apply for s in unified.options[0].suggestions)


def test_a_gguf_model_that_does_not_fit_is_offered_the_widest_narrower_gguf_mix(catalog):
    # Llama-3.1-8B at Q4_K_M (4.9 GB, plus 1 GiB reserve) on a 6 GB RTX 2060: a llama.cpp user is offered the widest
    # GGUF mix that fits, not a data-centre format (fp8, AWQ) that llama.cpp does not run, and no narrower mix besides
    base = dict(model="llama-3.1-8b", weights="q4_k_m")
    result = facade.estimate_inference(facade.InferenceRequest(**base, device="RTX 2060"), catalog)
    assert not result.fits
    mixes = [s.apply["weights"] for s in result.suggestions if "weights" in s.apply]
    assert len(mixes) == 1 and mixes[0].upper() in ("Q4_K_S", "Q4_0", "IQ4_XS", "IQ4_NL", "Q3_K_L", "Q3_K_M")
    again = facade.estimate_inference(facade.InferenceRequest(**{**base, "weights": mixes[0]}, device="RTX 2060"),
                                      catalog, suggest=False)
    assert again.fits
    # more cards of a GGUF run are llama.cpp's layer split, not tensor parallel
    more = next(s for s in result.suggestions if "count" in s.apply)
    assert "layer split" in more.change and "tensor parallel" not in more.change


def test_a_mac_or_a_desk_cpu_is_not_told_to_add_more_of_itself(catalog):
    # 70B in bf16 (141 GB) on an M2 Max (72 GB wired): "4 x Apple M2 Max in tensor parallel" was offered; a Mac has one
    # chip and a desk CPU one socket, so what fits is a narrower format on the one the user has
    for device in ("apple-m2-max-gpu", "Ryzen 9 7950X"):
        result = facade.estimate_inference(facade.InferenceRequest(model="llama-3.1-70b", device=device), catalog)
        assert not result.fits and result.suggestions
        assert not any("count" in s.apply for s in result.suggestions)


def test_serving_suggestions_keep_tensor_parallelism_inside_a_node():
    # a workstation holds 4 PCIe cards (sizer.hardware.nodes); recommend --inference never splits tensors across
    # hosts, so a suggestion does not either: 70B on one 24 GB card needs 4 of them and lighter weights
    from sizer.facade import InferenceRequest, estimate_inference

    answer = estimate_inference(InferenceRequest(model="llama-3-70b", device="RTX 3090", rate=5))
    assert answer.suggestions
    for suggestion in answer.suggestions:
        assert suggestion.apply.get("count", 1) <= 4, suggestion.change
    assert any(s.apply.get("count") == 4 and "weights" in s.apply and s.fits for s in answer.suggestions)


def test_a_llama_cpp_question_is_offered_llama_cpp_kv_blocks(catalog):
    # llama.cpp stores no FP8 or int8 KV cache: those changes were refused and dropped, so a long prompt that its fp16
    # cache overflowed got no KV suggestion; its own q8_0/q4_0 blocks are offered, each evaluated again and fitting
    base = dict(model="llama-3.1-8b", weights="q4_k_m", prompt_len=60000)
    result = facade.estimate_inference(facade.InferenceRequest(**base, device="RTX 3060 12GB"), catalog)
    assert not result.fits
    kv = [s for s in result.suggestions if "kv_cache" in s.apply]
    assert [s.apply["kv_cache"] for s in kv] and {s.apply["kv_cache"] for s in kv} <= {"q8_0", "q4_0"}
    for s in kv:
        again = facade.estimate_inference(facade.InferenceRequest(**{**base, **s.apply}, device="RTX 3060 12GB"), catalog)
        assert again.fits
