"""Every real hub config of ../shared/data/hf-configs (82 files, README-2026-12.md there) through
sizer.workloads.hf_config: each loads with its parameter count within the tolerance of the size stated for
it (index-2026-12.csv ``params_total``/``params_active``: the model name's or model card's label), or is
refused with an InputError naming the config key of the mechanism sizer does not cost."""
import csv
import json
import re

import pytest

from sizer.errors import InputError
from sizer.workloads.hf_config import architecture_from_config, load_json, read_hf_config
from sizer.workloads.layer_graph import layer_graph
from tests.conftest import SHARED_DATA

FOLDER = SHARED_DATA / "hf-configs"
INDEX = {row["file"]: row for row in csv.DictReader((FOLDER / "index-2026-12.csv").open(encoding="utf-8"))}
FILES = sorted(INDEX)

# The configs whose architecture has a mechanism the engine lacks, and the key each refusal names.
REFUSED = {
    "MiniMaxAI--MiniMax-M3.json": "model.sparse_attention_config",
    "Qwen--Qwen3-Next-80B-A3B-Instruct.json": "model.full_attention_interval",
    "Qwen--Qwen3.5-122B-A10B.json": "model.text_config.layer_types",
    "Qwen--Qwen3.5-27B.json": "model.text_config.layer_types",
    "Qwen--Qwen3.5-35B-A3B.json": "model.text_config.layer_types",
    "Qwen--Qwen3.5-397B-A17B.json": "model.text_config.layer_types",
    "Qwen--Qwen3.5-9B.json": "model.text_config.layer_types",
    "nvidia--Qwen3.6-27B-NVFP4.json": "model.text_config.layer_types",
    "nvidia--Qwen3.6-35B-A3B-NVFP4.json": "model.text_config.layer_types",
    "XiaomiMiMo--MiMo-V2-Flash.json": "model.hybrid_layer_pattern",
    "deepseek-ai--DeepSeek-V4-Flash.json": "model.compress_ratios",
    "deepseek-ai--DeepSeek-V4-Pro.json": "model.compress_ratios",
    "google--gemma-4-26B-A4B.json": "model.text_config.global_head_dim",
    "nvidia--Gemma-4-31B-IT-NVFP4.json": "model.text_config.global_head_dim",
    "meta-llama--Llama-3.2-90B-Vision-Instruct.json": "model.text_config.cross_attention_layers",
    "moonshotai--Kimi-K3.json": "model.text_config.linear_attn_config",
    "nvidia--Llama-3_3-Nemotron-Super-49B-v1.json": "model.block_configs",
    "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json": "model.hybrid_override_pattern",
    "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json": "model.hybrid_override_pattern",
    "nvidia--Nemotron-H-56B-Base-8K.json": "model.hybrid_override_pattern",
    "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.json": "model.layers_block_type",
    "nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4.json": "model.layers_block_type",
    "openai--clip-vit-base-patch32.json": "model.vision_config",
}

# Makers whose "active" count leaves out the input-embedding lookup (a row read per token, no compute):
# gpt-oss's model card (OpenAI 2025) gives 5.13B of 116.83B and 3.61B of 20.91B active, the counts read
# here less one 201,088 x 2,880 table (5.71B and 4.19B with it); DeepSeek-V2-Lite's 2.4B active (DeepSeek-V2
# paper, appendix) matches the count without its 102,400 x 2,048 embedding (2.45B; 2.66B with it).
EMBEDDING_NOT_ACTIVE = {"openai--gpt-oss-120b.json", "openai--gpt-oss-20b.json", "deepseek-ai--DeepSeek-V2-Lite.json"}
UNITS = {"M": 1e6, "B": 1e9, "T": 1e12}


def stated(label: str) -> tuple[float, float] | None:
    """The size a label states and the tolerance it allows. A label of three or more significant digits is
    the model card's exact figure ("32.5B", "1.23B", "671B") rounded to its last digit: 2 % covers that
    rounding plus what a card counts differently (a vision tower, the embedding lookup, MTP layers, all
    below 2 % here). A label of one or two digits ("7B", "1T") is the model's name, rounded by up to ~7 %
    (Mistral 7B: 7.24B): 10 %."""
    if not label:
        return None
    number, unit = re.fullmatch(r"([\d.]+)([MBT])", label).groups()
    digits = len(number.replace(".", "").lstrip("0"))
    return float(number) * UNITS[unit], 0.02 if digits >= 3 else 0.10


def test_the_folder_holds_the_82_configs_of_the_index():
    assert len(FILES) == 82 and all((FOLDER / name).is_file() for name in FILES)


@pytest.mark.parametrize("name", [f for f in FILES if f not in REFUSED])
def test_each_config_loads_with_the_stated_size(name):
    arch = read_hf_config(FOLDER / name)
    row = INDEX[name]
    assert arch.name == row["hub_id"]  # named by its hub id: _name_or_path or the org--name file stem
    total = stated(row["params_total"])
    if total:
        size, tolerance = total
        assert arch.params_total() == pytest.approx(size, rel=tolerance), name
    active = stated(row["params_active"])
    if active:
        assert arch.moe
        size, tolerance = active
        embedding = arch.vocab * arch.hidden if name in EMBEDDING_NOT_ACTIVE else 0
        assert arch.params_active() - embedding == pytest.approx(size, rel=tolerance), name
    # the layer graph the engine costs holds the same weights
    assert layer_graph(arch, 128).params == arch.params_total()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_each_unsupported_config_is_refused_naming_its_key(name):
    with pytest.raises(InputError) as error:
        read_hf_config(FOLDER / name)
    assert error.value.field == REFUSED[name]
    key = REFUSED[name].rsplit(".", 1)[1]
    data = load_json(FOLDER / name)
    assert key in data or key in data.get("text_config", {})  # a key the file holds (or its class defaults)
    assert "sizer costs" in str(error.value)  # and says what sizer does cost


def test_the_refusals_are_the_ones_of_the_brief():
    """No config of a supported mechanism is refused, none of an unsupported one answered."""
    kinds = {name: load_json(FOLDER / name)["model_type"] for name in REFUSED}
    assert set(kinds.values()) == {"minimax_m3", "qwen3_next", "qwen3_5", "qwen3_5_moe", "mimo_v2_flash", "deepseek_v4",
                                   "gemma4", "mllama", "kimi_k3", "nemotron-nas", "nemotron_h", "clip"}


@pytest.mark.parametrize("name", ["deepseek-ai--DeepSeek-V3.2.json", "zai-org--GLM-5.json"])
def test_sparse_attention_is_read_as_mla_with_the_indexer_within_one_percent(name):
    """DeepSeek Sparse Attention (index_topk): costed as dense MLA, the indexer's weights left out; they are
    under 1 % of the model (wq_b, wk, k_norm, weights_proj of modeling_deepseek_v32.py per block)."""
    data = load_json(FOLDER / name)
    arch = read_hf_config(FOLDER / name)
    assert arch.mla and arch.moe and arch.dense_layers == data["first_k_dense_replace"]
    heads, width, hidden = data["index_n_heads"], data["index_head_dim"], data["hidden_size"]
    indexer = data["num_hidden_layers"] * (data["q_lora_rank"] * heads * width + hidden * width + 2 * width
                                           + hidden * heads)
    assert indexer < 0.01 * arch.params_total()
    assert "index_topk" in arch.source and "not counted" in arch.source


def test_glm5_reads_its_wider_latent_heads():
    """GLM-5: query/key heads of 192 + 64 and value heads of 256 (qk_nope_head_dim, v_head_dim)."""
    arch = read_hf_config(FOLDER / "zai-org--GLM-5.json")
    assert (arch.head_size, arch.rope_head_dim, arch.value_size) == (192, 64, 256)
    assert arch.kv_values_per_token() == 512 + 64


def test_multi_token_prediction_layers_are_said_not_counted():
    arch = read_hf_config(FOLDER / "deepseek-ai--DeepSeek-V3.json")  # num_nextn_predict_layers 1
    assert "1 multi-token-prediction layer(s) are not counted" in arch.source


def test_llama4_reads_the_chunked_blocks_from_layer_types_where_saved():
    config = load_json(FOLDER / "meta-llama--Llama-4-Scout-17B-16E-Instruct.json")
    kinds = ["full_attention" if i % 2 else "chunked_attention" for i in range(48)]
    arch = architecture_from_config({**config, "text_config": {**config["text_config"], "layer_types": kinds}})
    assert (arch.sliding_window, arch.global_every) == (8192, 2)
    kinds[0] = "linear_attention"
    with pytest.raises(InputError) as error:
        architecture_from_config({**config, "text_config": {**config["text_config"], "layer_types": kinds}})
    assert error.value.field == "model.text_config.layer_types"


def test_vision_language_configs_read_their_language_model_and_say_so():
    scout = read_hf_config(FOLDER / "meta-llama--Llama-4-Scout-17B-16E-Instruct.json")
    assert (scout.layers, scout.experts, scout.shared_experts, scout.experts_per_token) == (48, 16, 1, 1)
    # iRoPE: every fourth block (NoPE) attends over everything, the others within 8,192-token chunks
    assert (scout.sliding_window, scout.global_every) == (8192, 4)
    assert "vision tower" in scout.source and "chunked attention" in scout.source
    qwen_vl = read_hf_config(FOLDER / "Qwen--Qwen2.5-VL-3B-Instruct.json")  # flat keys, embeddings tied
    assert qwen_vl.tied_embeddings and qwen_vl.attention_bias and "vision tower" in qwen_vl.source


def test_sliding_window_layer_types_are_read():
    exaone = read_hf_config(FOLDER / "LGAI-EXAONE--EXAONE-4.0-32B.json")  # LLLG
    olmo = read_hf_config(FOLDER / "allenai--Olmo-3.1-32B-Instruct.json")
    assert (exaone.sliding_window, exaone.global_every) == (olmo.sliding_window, olmo.global_every) == (4096, 4)
    # without layer_types: EXAONE's sliding_window_pattern, "LLLG" as 4 (a global block first is irregular)
    config = {k: v for k, v in load_json(FOLDER / "LGAI-EXAONE--EXAONE-4.0-32B.json").items() if k != "layer_types"}
    assert architecture_from_config(config).params_total() == exaone.params_total()
    assert architecture_from_config({**config, "sliding_window_pattern": 4}).global_every == 4
    with pytest.raises(InputError) as error:
        architecture_from_config({**config, "sliding_window_pattern": "GLLL"})
    assert error.value.field == "model.sliding_window_pattern"


def test_a_linear_attention_layer_type_is_never_read_as_sliding():
    config = json.loads((FOLDER / "allenai--Olmo-3.1-32B-Instruct.json").read_text())
    config["layer_types"][0] = "linear_attention"
    with pytest.raises(InputError) as error:
        architecture_from_config(config)
    assert error.value.field == "model.layer_types"


def test_qwen3_moe_dense_blocks_follow_mlp_only_layers():
    config = load_json(FOLDER / "Qwen--Qwen3-30B-A3B.json")
    first_two = architecture_from_config({**config, "mlp_only_layers": [0, 1]})
    assert first_two.dense_layers == 2 and first_two.moe_blocks == config["num_hidden_layers"] - 2
    with pytest.raises(InputError) as error:
        architecture_from_config({**config, "mlp_only_layers": [5]})
    assert error.value.field == "model.mlp_only_layers"


def test_a_non_finite_value_of_an_unread_key_is_no_reason_to_refuse(tmp_path):
    """transformers writes Infinity (Mamba's time_step_limit): the file is read, a key sizer reads as a
    number that holds one is refused by name."""
    path = tmp_path / "org--model.json"
    text = (FOLDER / "Qwen--Qwen3-8B.json").read_text()
    path.write_text(text.replace('"use_cache"', '"time_step_limit": [0.0, Infinity], "use_cache"'))
    assert read_hf_config(path).name == "org/model"  # _name_or_path absent: the file's org--name stem
    path.write_text(text.replace('"hidden_size": 4096', '"hidden_size": Infinity'))
    with pytest.raises(InputError) as error:
        read_hf_config(path)
    assert error.value.field == "model.hidden_size"


@pytest.mark.parametrize("declared, file, expected", [
    ("/opt/ckpts/Llama-3.1-70B-Instruct/", "nvidia--Llama-3.1-70B-Instruct-FP8.json", "nvidia/Llama-3.1-70B-Instruct-FP8"),
    ("Phi-mini-MoE", "microsoft--Phi-mini-MoE-instruct.json", "microsoft/Phi-mini-MoE-instruct"),
    ("openai/clip-vit-base-patch32", "whatever.json", "openai/clip-vit-base-patch32"),
    (None, "config.json", "my-model"),
])
def test_the_name_is_a_hub_id_never_a_local_path(tmp_path, declared, file, expected):
    from sizer.workloads.hf_config import config_name

    folder = tmp_path / "my-model"
    assert config_name({"_name_or_path": declared}, folder / file) == expected
