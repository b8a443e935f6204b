"""--model by every name people use (presets, hub ids, short names, a config.json path) and `sizer models`
listing presets, shipped configs and the configs the engine refuses."""
from __future__ import annotations

import json

import pytest

from sizer.workloads.shipped import configs_dir


@pytest.mark.parametrize("name, model", [
    ("llama-3.3-70b", "llama-3.3-70b"), ("qwen2.5-32b", "Qwen/Qwen2.5-32B"), ("Qwen/Qwen2.5-32B", "Qwen/Qwen2.5-32B"),
    ("deepseek-r1", "deepseek-ai/DeepSeek-R1"), ("deepseek-v3", "deepseek-v3"),
    ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),  # a hub id with a slash is a name, not a missing file
])
def test_the_issue_names_answer(cli, name, model):
    count = "8" if "deepseek" in name or "70b" in name else "1"
    result = cli("inference", "--model", name, "--device", "H200", "--count", count, "--prompt-len", "64",
                 "--output-len", "8", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == model


def test_a_hub_id_the_engine_cannot_read_yet_is_refused_naming_the_field(cli):
    # Qwen/Qwen3-32B is found by hub id and short name; on a branch without a qwen3 reader it is refused naming
    # model.model_type (exit 2), never read as a file
    for name in ("Qwen/Qwen3-32B", "qwen3-32b"):
        result = cli("inference", "--model", name, "--device", "H200", "--json")
        assert result.exit_code in (0, 2), result.output
        if result.exit_code == 2:
            assert "model.model_type" in result.output and "readable file" not in result.output


def test_deepseek_r1_fits_8_h200_in_its_fp8_checkpoint(cli):
    result = cli("inference", "--model", "deepseek-r1", "--device", "H200", "--count", "8", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["weights"] == "fp8" and data["fits"] is True
    note = next(a for a in data["assumptions"] if a["name"] == "weight format")["value"]
    assert "published checkpoint" in note and "quantization_config" in note


def test_a_config_path_is_named_by_its_file_name(cli, tmp_path):
    path = tmp_path / "Qwen--Qwen2.5-14B.json"
    path.write_bytes((configs_dir() / "Qwen--Qwen2.5-14B.json").read_bytes())
    result = cli("inference", "--model", str(path), "--device", "H200", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == "Qwen/Qwen2.5-14B"  # org--name.json -> org/name, not the folder


def test_a_missing_path_is_still_a_missing_file(cli, tmp_path):
    result = cli("inference", "--model", "nowhere/mine", "--device", "H200")
    assert result.exit_code == 2 and "readable file" in result.output


def test_models_lists_presets_configs_and_refusals(cli):
    result = cli("models", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    kinds = {m["name"]: m["kind"] for m in data["models"]}
    assert kinds["llama-3.3-70b"] == "preset" and kinds["Qwen/Qwen2.5-32B"] == "config"
    assert kinds["deepseek-ai/DeepSeek-R1"] == "config"
    refused = {r["name"]: r for r in data["not_supported"]}
    assert refused and all(r["field"].startswith("model") and r["reason"] for r in refused.values())
    assert not set(refused) & set(kinds)
    assert data["answered_by_preset"]["deepseek-ai/DeepSeek-V3"] == "deepseek-v3"
    # every shipped config is somewhere: listed, refused with a reason, or answered by a preset
    shipped = {path.stem.replace("--", "/", 1) for path in configs_dir().glob("*.json")}
    assert shipped == (shipped & set(kinds)) | (shipped & set(refused)) | set(data["answered_by_preset"])
    table = cli("models")
    assert table.exit_code == 0 and "Models not supported" in table.stdout and "Qwen/Qwen2.5-32B" in table.stdout
    # the models refused by name are listed beside the shipped configs, with the config field
    assert refused["LiquidAI/LFM2-1.2B"]["field"] == "model.layer_types"
    assert "LiquidAI/LFM2-1.2B" in table.stdout


@pytest.mark.parametrize("name", ["LiquidAI/LFM2-1.2B", "lfm2-1.2b"])
def test_a_model_refused_by_name_exits_2_naming_the_field_and_the_mechanism(cli, name):
    result = cli("memory", "--model", name, "--device", "H100")
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "model.layer_types" in text and "short-convolution" in text and "readable file" not in text


def test_the_model_option_help_names_hub_ids_and_config_paths(cli):
    text = " ".join(cli("inference", "--help").stdout.split())
    assert "Qwen/Qwen3-32B" in text and "config.json" in text and "sizer models" in text
