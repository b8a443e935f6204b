"""sizer/workloads/checkpoint.py: a config's quantization_config decides the default serving weights, for
presets, shipped configs and config.json paths alike, and the answer says which field stated it."""
from __future__ import annotations

import json

import pytest

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.runtimes.formats import WEIGHT_FORMATS
from sizer.workloads.checkpoint import GROUPED, config_checkpoint
from sizer.workloads.registry import checkpoint, checkpoint_weights
from sizer.workloads.shipped import configs_dir
from sizer.workloads.source import FileRef


@pytest.mark.parametrize("name, weights", [
    ("deepseek-r1", "fp8"),  # quantization_config quant_method fp8, weight_block_size [128, 128]
    ("deepseek-v3", "fp8"),  # the preset: its checkpoint_weights, as the shipped copy of its config states
    ("deepseek-ai/DeepSeek-V3.1", "fp8"),
    ("gpt-oss-120b", "mxfp4"),  # the preset's checkpoint_weights
    ("Qwen/Qwen3-32B-FP8", "fp8"),
    ("Qwen/Qwen3-32B", None),  # no quantization_config: 16-bit
    ("nvidia/Gemma-4-31B-IT-NVFP4", "nvfp4"),  # modelopt, quant_algo NVFP4
    ("nvidia/Kimi-K2.6-NVFP4", "nvfp4"),
    ("moonshotai/Kimi-K3", "mxfp4"),  # compressed-tensors, FP4 in groups of 32 (in text_config)
    # compressed-tensors int4, symmetric, groups of 32 with a bf16 scale (4.5 bits), routed experts only
    ("moonshotai/Kimi-K2.5", "int4-g32"),
    ("nvidia/Llama-3.1-70B-Instruct-FP8", "fp8"),  # names.yaml: the config states none (hf_quant_config.json does)
    ("llama-3.3-70b", None),
])
def test_the_published_checkpoint_format(name, weights):
    assert checkpoint_weights(name) == weights


def test_a_format_sizer_lacks_is_refused_naming_the_field():
    # an asymmetric int4 group also stores a zero point: no format of sizer's sizes it
    asymmetric = {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "type": "int", "num_bits": 4, "group_size": 32, "symmetric": False}}}}
    with pytest.raises(InputError, match=r"quantization_config\.config_groups\.group_0\.weights"):
        config_checkpoint({"quantization_config": asymmetric})
    # NVIDIA's Qwen3.6 copies mix FP8 and NVFP4 layer by layer
    with pytest.raises(InputError, match=r"quantization_config\.quant_algo") as error:
        checkpoint("nvidia/Qwen3.6-27B-NVFP4")
    assert error.value.field == "model.quantization_config.quant_algo"


@pytest.mark.parametrize("quant, weights", [
    ({"quant_method": "mxfp4"}, "mxfp4"),
    ({"quant_method": "modelopt", "quant_algo": "FP8"}, "fp8"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128}, "gptq-int4-g128"),
    ({"quant_method": "awq", "bits": 4, "group_size": 64}, "awq-int4-g64"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"type": "float", "num_bits": 8}}}}, "fp8"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"type": "int", "num_bits": 8},
                                                                   "input_activations": {"num_bits": 8}}}}, "w8a8"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"type": "int", "num_bits": 8}}}}, "int8"),
    ({"quant_method": "compressed-tensors",
      "config_groups": {"g": {"weights": {"type": "float", "num_bits": 4, "group_size": 16}}}}, "nvfp4"),
])
def test_each_method_maps_to_its_format(quant, weights):
    assert config_checkpoint({"quantization_config": quant}).weights == weights
    assert weights in WEIGHT_FORMATS


@pytest.mark.parametrize("quant, field", [
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "model.quantization_config.quant_method"),
    ({"quant_method": "gptq", "bits": 3, "group_size": 128}, "model.quantization_config.group_size"),
    ({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}, "model.quantization_config.quant_algo"),
    ({"quant_method": "compressed-tensors", "config_groups": {}}, "model.quantization_config.config_groups"),
])
def test_unknown_quantisations_name_the_field(quant, field):
    with pytest.raises(InputError) as error:
        config_checkpoint({"quantization_config": quant})
    assert error.value.field == field


def test_the_grouped_formats_are_the_serving_formats():
    # the serving formats are made from checkpoint.py's group sizes: every one is a format, and no other exists
    for method, groups in GROUPED.items():
        assert {name for name in WEIGHT_FORMATS if name.startswith(f"{method}-int4-g")} == \
            {f"{method}-int4-g{g}" for g in groups}


def test_a_config_path_defaults_to_its_checkpoint_format_too(tmp_path):
    path = tmp_path / "deepseek-ai--DeepSeek-R1.json"
    path.write_bytes((configs_dir() / "deepseek-ai--DeepSeek-R1.json").read_bytes())
    assert checkpoint_weights(FileRef(str(path))) == "fp8"
    r = estimate_inference(InferenceRequest(model=FileRef(str(path)), device="H200", count=8, prompt_len=64, output_len=8))
    note = next(a for a in r.assumptions if a.name == "weight format")
    assert r.weights == "fp8" and r.model == "deepseek-ai/DeepSeek-R1"  # named by the file name org--name.json
    assert "published checkpoint" in note.value and "quantization_config.quant_method fp8" in note.value


def test_deepseek_r1_defaults_to_fp8_and_fits_8_h200():
    # 671 B parameters: ~671 GB in FP8 fit 8 x 141 GB; in BF16 (1.34 TB) they would not
    r = estimate_inference(InferenceRequest(model="deepseek-r1", device="H200", count=8, prompt_len=64, output_len=8))
    assert r.weights == "fp8" and r.fits is True
    assert 600 / 8 < r.weights_memory.value < 700 / 8  # GB per device
    bf16 = estimate_inference(InferenceRequest(model="deepseek-r1", device="H200", count=8, weights="bf16",
                                               prompt_len=64, output_len=8))
    assert bf16.fits is False


def test_qwen3_32b_fp8_and_bf16_checkpoints():
    assert checkpoint_weights("Qwen/Qwen3-32B-FP8") == "fp8" and checkpoint_weights("qwen3-32b") is None


def test_a_device_without_fp8_says_the_checkpoint_is_the_reason():
    # a Volta: no FP8 peak and no engine's weight-only FP8 kernel (an A100 runs it as vLLM's FP8 Marlin W8A16)
    with pytest.raises(InputError, match="published checkpoint is stored in.*give weights int8") as error:
        estimate_inference(InferenceRequest(model="deepseek-v3", device="V100 SXM2 32GB", count=32))
    assert error.value.field == "weights"
    ampere = estimate_inference(InferenceRequest(model="deepseek-v3", device="A100 80GB SXM", count=16))
    assert ampere.weights == "fp8" and any(a.name == "compute precision" for a in ampere.assumptions)


def test_a_quantised_config_file_is_refused_where_its_format_is_unknown(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                                "num_attention_heads": 4, "vocab_size": 100,
                                "quantization_config": {"quant_method": "bitsandbytes"}}))
    with pytest.raises(InputError) as error:
        estimate_inference(InferenceRequest(model=FileRef(str(path)), device="H100 SXM"))
    assert error.value.field == "model.quantization_config.quant_method"


def test_a_recommendation_searches_the_common_formats_where_the_checkpoints_is_unknown(tmp_path):
    from sizer.serving.load_search import SEARCH_WEIGHTS, searched_weights
    from sizer.serving.recommend_devices import InferenceRecommendRequest

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "quantization_config": {"quant_method": "bitsandbytes"}}))
    assert [f.name for f in searched_weights(InferenceRecommendRequest(model=FileRef(str(path))))] == list(SEARCH_WEIGHTS)
    fp8 = configs_dir() / "Qwen--Qwen3-32B-FP8.json"
    assert [f.name for f in searched_weights(InferenceRecommendRequest(model=FileRef(str(fp8))))] == list(SEARCH_WEIGHTS)
