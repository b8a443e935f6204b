"""Hugging Face config.json reader (sizer.workloads.hf_config), offline."""
import json
from pathlib import Path

import pytest

from sizer.datafile import MAX_DEPTH as MAX_JSON_DEPTH
from sizer.errors import InputError
from sizer.workloads.hf_config import MAX_CONFIG_BYTES, architecture_from_config, read_hf_config, supported_model_types
from sizer.workloads.registry import find_model, resolve_model
from sizer.workloads.source import FileRef, model_source

CONFIGS = Path(__file__).resolve().parents[2] / "data" / "hf-configs"  # real hub configs; each folder's SOURCE.txt says from where

SHAPE = ("layers", "hidden", "heads", "kv_heads", "head_size", "ffn_hidden", "ffn_type", "vocab", "tied_embeddings",
         "experts", "experts_per_token", "norm", "position", "family", "dropout", "attention_bias", "mlp_bias",
         "parallel_attention", "norms_per_block")


@pytest.mark.parametrize("folder, builtin", [("Llama-2-7b-hf", "llama-2-7b"), ("Llama-2-70b-hf", "llama-2-70b"),
                                             ("Mistral-7B-v0.2", "mistral-7b"), ("Mixtral-8x7B-v0.1", "mixtral-8x7b"),
                                             ("gpt2", "gpt2"), ("gpt2-large", "gpt2-large")])
def test_real_configs_give_the_builtin_architecture(folder, builtin):
    from_file = read_hf_config(CONFIGS / folder / "config.json")
    reference = find_model(builtin)
    for field in SHAPE:
        assert getattr(from_file, field) == getattr(reference, field), field
    assert from_file.params_total() == reference.params_total()
    assert from_file.params_active() == reference.params_active()
    assert resolve_model(FileRef(str(CONFIGS / folder / "config.json"))).params_total() == reference.params_total()


def _write(tmp_path, data, name="config.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# Configs as transformers' configuration classes default them (configuration_<type>.py): each gives the
# exact count of the released checkpoint (see test_registry.py) by way of a different reader.
@pytest.mark.parametrize("config, builtin", [
    ({"model_type": "falcon", "hidden_size": 4544, "n_head": 71, "n_layer": 32, "vocab_size": 65024,
      "multi_query": True, "parallel_attn": True, "bias": False, "alibi": False}, "falcon-7b"),
    ({"model_type": "falcon", "hidden_size": 8192, "num_attention_heads": 128, "num_hidden_layers": 60,
      "num_kv_heads": 8, "new_decoder_architecture": True, "vocab_size": 65024, "parallel_attn": True,
      "bias": False}, "falcon-40b"),
    ({"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64, "num_hidden_layers": 44,
      "intermediate_size": 24576, "vocab_size": 50432, "max_position_embeddings": 2048,
      "use_parallel_residual": True, "tie_word_embeddings": False}, "gpt-neox-20b"),
    ({"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
      "num_hidden_layers": 28, "intermediate_size": 18944, "vocab_size": 152064, "max_position_embeddings": 131072,
      "tie_word_embeddings": False}, "qwen2.5-7b"),
    ({"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12,
      "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2},
     "bert-base"),
    ({"model_type": "roberta", "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 24,
      "intermediate_size": 4096, "vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1},
     "roberta-large"),
    ({"model_type": "t5", "d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12, "num_layers": 12,
      "num_decoder_layers": 12, "vocab_size": 32128, "feed_forward_proj": "relu"}, "t5-base"),
    ({"model_type": "opt", "hidden_size": 12288, "num_attention_heads": 96, "num_hidden_layers": 96,
      "ffn_dim": 49152, "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 12288},
     "opt-175b"),
    ({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_hidden_layers": 32,
      "intermediate_size": 8192, "vocab_size": 32064, "max_position_embeddings": 4096,
      "tie_word_embeddings": False}, "phi-3-mini"),
    ({"model_type": "gemma2", "hidden_size": 3584, "num_attention_heads": 16, "num_key_value_heads": 8,
      "head_dim": 256, "num_hidden_layers": 42, "intermediate_size": 14336, "vocab_size": 256000,
      "max_position_embeddings": 8192}, "gemma-2-9b"),
])
def test_other_model_types(tmp_path, config, builtin):
    assert read_hf_config(_write(tmp_path, config)).params_total() == find_model(builtin).params_total()


def test_unsupported_model_type_lists_the_supported_ones():
    with pytest.raises(InputError) as error:
        architecture_from_config({"model_type": "mamba"})
    for model_type in ("llama", "mistral", "mixtral", "qwen2", "gpt2", "gpt_neox", "falcon", "bert"):
        assert model_type in str(error.value) and model_type in supported_model_types()
    assert error.value.field == "model.model_type"
    with pytest.raises(InputError):
        architecture_from_config({})


def test_missing_or_malformed_key_is_named():
    config = json.loads((CONFIGS / "Llama-2-7b-hf" / "config.json").read_text())
    del config["hidden_size"]
    with pytest.raises(InputError) as error:
        architecture_from_config(config)
    assert error.value.field == "model.hidden_size"
    for bad in ("4096", 4096.5, True, -1, 10**12):
        config["hidden_size"] = bad
        with pytest.raises(InputError) as error:
            architecture_from_config(config)
        assert error.value.field == "model.hidden_size"


@pytest.mark.parametrize("change, field", [
    (dict(num_key_value_heads=64), "model.num_key_value_heads"),  # more KV heads than the 32 heads
    (dict(num_key_value_heads=5), "model.num_key_value_heads"),  # 32 heads in groups of 5
    (dict(num_attention_heads=30, num_key_value_heads=30), "model.num_attention_heads"),  # 4096 / 30 heads
    # top-k above the experts: since the MoE work the architecture refuses it itself, naming experts_per_token
    (dict(model_type="mixtral", num_local_experts=2, num_experts_per_tok=4), "experts_per_token"),
    (dict(num_hidden_layers=10**7), "model.num_hidden_layers"),  # a 70-byte request must not build 1e7 blocks
    (dict(hidden_size=10**6, intermediate_size=10**6, num_attention_heads=1, num_key_value_heads=1),
     "model.hidden_size"),  # 1e14 parameters
])
def test_contradicting_or_oversized_configs_are_refused_naming_the_field(change, field):
    # issue 15 item 7: fields that contradict each other are refused, not silently made consistent
    config = json.loads((CONFIGS / "Llama-2-7b-hf" / "config.json").read_text())
    with pytest.raises(InputError) as error:
        architecture_from_config({**config, **change})
    assert error.value.field == field


@pytest.mark.parametrize("text", ["{", "[1, 2]", "null", '{"model_type": NaN}', "\xff\xfe",
                                  "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
                                  '{"a": ' * 100_000 + "1" + "}" * 100_000])
def test_bad_files_are_input_errors(tmp_path, text):
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape") if text != "\xff\xfe" else b"\xff\xfe{}")
    with pytest.raises(InputError):
        read_hf_config(path)


def test_size_limit_and_missing_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "pad": "' + "x" * MAX_CONFIG_BYTES + '"}')
    with pytest.raises(InputError):
        read_hf_config(path)
    with pytest.raises(InputError):
        read_hf_config(tmp_path / "none.json")
    with pytest.raises(InputError):
        read_hf_config(tmp_path)  # a folder


def test_the_core_opens_a_config_only_where_the_edge_named_a_file():
    # issue 18 item 3: a model reference is decided where input enters (the CLI), not guessed by the core from
    # a suffix: a string is a name, so a body over HTTP can never make the server read a file
    path = str(CONFIGS / "Llama-2-7b-hf" / "config.json")
    with pytest.raises(InputError, match="model: .*a built-in model name"):
        resolve_model(path)
    assert model_source(path) == FileRef(path) and model_source("llama-2-7b") == "llama-2-7b"
    assert resolve_model(model_source(path)).params_total() == find_model("llama-2-7b").params_total()


def test_a_config_with_every_field_at_1e8_is_refused_at_once(tmp_path):
    # issue 18: a config.json with every field at 1e8 hung the CLI (10^8 blocks built one by one)
    import time

    fields = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
              "vocab_size", "max_position_embeddings")
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", **{key: 10**8 for key in fields}}))
    started = time.process_time()  # CPU seconds: a loaded machine stretches wall-clock time, not these
    with pytest.raises(InputError, match="at most 1,000 transformer blocks"):
        read_hf_config(path)
    assert time.process_time() - started < 1
