"""Hugging Face configs of mixtures of experts (sizer.workloads.hf_config): each reader lands on the
built-in entry of the same model, whose counts match the releases (tests/sizer/workloads/test_moe.py).

The dicts below carry the keys of each model's hub config.json that the readers use (recalled, as the
catalog entries; no copy is in ../shared/data/hf-configs)."""

import pytest

from sizer.errors import InputError
from sizer.workloads.hf_config import architecture_from_config
from sizer.workloads.registry import find_model

CONFIGS = {
    "deepseek-v3": {"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
                    "num_key_value_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,
                    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
                    "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
                    "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
                    "tie_word_embeddings": False},
    "qwen3-30b-a3b": {"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
                      "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
                      "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936,
                      "max_position_embeddings": 40960, "tie_word_embeddings": False},
    "qwen2-57b-a14b": {"model_type": "qwen2_moe", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
                       "num_key_value_heads": 4, "intermediate_size": 18944, "moe_intermediate_size": 2560,
                       "shared_expert_intermediate_size": 20480, "num_experts": 64, "num_experts_per_tok": 8,
                       "vocab_size": 151936, "max_position_embeddings": 32768},
    "olmoe-1b-7b": {"model_type": "olmoe", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
                    "num_key_value_heads": 16, "intermediate_size": 1024, "num_experts": 64, "num_experts_per_tok": 8,
                    "vocab_size": 50304, "max_position_embeddings": 4096},
    "gpt-oss-120b": {"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64,
                     "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "num_local_experts": 128,
                     "num_experts_per_tok": 4, "vocab_size": 201088, "max_position_embeddings": 131072},
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_moe_configs_read_as_the_builtin_entries(name):
    read = architecture_from_config(CONFIGS[name], name=name)
    builtin = find_model(name)
    assert read.params_total() == builtin.params_total()
    assert read.params_active() == builtin.params_active()
    assert read.kv_values_per_token() == builtin.kv_values_per_token()


@pytest.mark.parametrize("key, value", [("num_experts_per_tok", 200), ("num_experts", 0)])
def test_bad_expert_keys_are_refused_naming_the_field(key, value):
    config = {**CONFIGS["qwen3-30b-a3b"], key: value}
    with pytest.raises(InputError) as error:
        architecture_from_config(config)
    assert "expert" in str(error.value)
