"""The issue-17 contract on the command line: MoE models for training, fine-tuning and serving,
--ep on time/plan/memory, FP8 refused where a device has no FP8 peak (exit 2, one line naming the field)."""
import json

import pytest


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("model", ["deepseek-v3", "mixtral-8x7b", "qwen3-30b-a3b"])
def test_moe_models_train_fine_tune_and_serve(cli, model):
    common = ("--model", model, "--device", "H100 SXM", "--json")
    trained = _json(cli("time", *common, "--tokens", "1e10", "--count", "64"))
    assert trained["layout"]["ep"] >= 1 and trained["mfu"] > 0
    assert any(a["name"] == "experts" and "active per token" in a["value"] for a in trained["assumptions"])
    assert _json(cli("memory", *common, "--tokens", "1e10", "--count", "64", "--zero", "3", "--ep", "8"))["total"]["value"] > 0
    layouts = _json(cli("plan", *common, "--tokens", "1e10", "--count", "64", "--top", "3"))["layouts"]
    assert layouts and all("ep" in layout for layout in layouts)
    for method in ("lora", "qlora"):
        tuned = _json(cli("time", *common, "--tokens", "1e8", "--count", "8", "--method", method))
        assert 0 < tuned["trainable_params"] < tuned["memory_per_device"]["value"] * 1e9
    served = _json(cli("inference", "--model", model, "--device", "H100 SXM", "--count", "8", "--weights", "fp8", "--json"))
    assert served["kv_cache_memory"]["value"] > 0


@pytest.mark.parametrize("args, field", [
    (("time", "--model", "mixtral-8x7b", "--tokens", "1e9", "--device", "H100 SXM", "--count", "16", "--ep", "3"), "ep"),
    (("time", "--model", "llama-2-7b", "--tokens", "1e9", "--device", "H100 SXM", "--count", "16", "--ep", "2"), "ep"),
    (("memory", "--model", "mixtral-8x7b", "--tokens", "1e9", "--count", "4", "--ep", "8"), "ep"),
    (("plan", "--model", "qwen3-30b-a3b", "--tokens", "1e9", "--device", "H100 SXM", "--count", "8", "--ep", "16"), "ep"),
    (("time", "--model", "qwen3-30b-a3b", "--tokens", "1e9", "--device", "A100 80GB SXM", "--precision", "fp8"), "precision"),
    (("memory", "--model", "qwen3-30b-a3b", "--tokens", "1e9", "--device", "V100 SXM2 16GB", "--precision", "fp8"), "precision"),
    (("time", "--model", "llama-3-8b", "--tokens", "1e9", "--device", "H100 SXM", "--precision", "fp4"), "precision"),
])
def test_bad_expert_or_fp8_input_exits_2_naming_the_field(cli, args, field):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert field in result.output and "Traceback" not in result.output
