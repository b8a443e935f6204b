"""Read a Hugging Face ``config.json`` into an :class:`~sizer.workloads.architecture.Architecture`, offline.

Each supported ``model_type`` maps the config's key names (``num_hidden_layers`` or ``n_layer``,
``intermediate_size`` or ``n_inner`` …) and the defaults its ``transformers`` configuration
class applies when a key is absent (``configuration_<type>.py``) onto the Architecture fields.
The file is read with a size limit and a nesting-depth guard (:func:`load_json`); an unsupported
``model_type`` or a missing key is an :class:`~sizer.errors.InputError` that names it.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "config.json")
>>> _ = open(path, "w").write(json.dumps({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
...     "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096}))
>>> read_hf_config(path).params_total()
6738415616
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from sizer import datafile
from sizer.errors import InputError
from sizer.workloads.architecture import MAX_BLOCKS, Architecture

MAX_CONFIG_BYTES = 1_000_000  # real configs are 1-5 kB
FIELD = "model"


def load_json(path: str | Path) -> dict[str, Any]:
    """A JSON object from ``path``, read by the project's one guarded loader (size, depth, no NaN).

    Parameters
    ----------
    path : str or Path
        A ``config.json`` file.

    Returns
    -------
    dict of str to Any
        The parsed object.

    Raises
    ------
    InputError
        A file too large, too deep, not JSON, or not an object.
    """
    data = datafile.load_json(path, FIELD, MAX_CONFIG_BYTES)
    if not isinstance(data, dict):
        raise InputError(FIELD, str(path), "a JSON object with a 'model_type'")
    return data


class _Config:
    """Typed access to a config dict; a missing or malformed key is an InputError naming it."""

    def __init__(self, data: dict[str, Any], where: str):
        self.data, self.where = data, where

    def int(self, *keys: str, default: int | None = None, minimum: int = 1) -> int:
        for key in keys:
            value = self.data.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= 10**8:
                raise InputError(f"{FIELD}.{key}", value, f"a whole number from {minimum} to 1e8 ({self.where})")
            return value
        if default is None:
            raise InputError(f"{FIELD}.{keys[0]}", None, f"the key {keys[0]!r} in {self.where}")
        return default

    def bool(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InputError(f"{FIELD}.{key}", value, f"true or false ({self.where})")
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


def _sliding(c: _Config, *, alternate: bool = False) -> dict[str, int]:
    """Sliding-window attention as transformers reads it: ``sliding_window`` tokens (none where it is
    null or ``use_sliding_window`` is false, as Qwen2 ships it); the blocks that attend over everything
    from ``layer_types`` ("full_attention") where the config lists them, else none, or every other
    block from block 1 (Gemma 2, ``alternate``)."""
    if c.get("sliding_window") is None or c.get("use_sliding_window") is False:
        return {}
    window = c.int("sliding_window")
    layers = c.int("num_hidden_layers")
    types = c.get("layer_types")
    if not isinstance(types, list) or len(types) != layers:
        return dict(sliding_window=window, global_every=2 if alternate else 0)
    full = [i for i, kind in enumerate(types) if kind == "full_attention"]
    if len(full) == layers:
        return {}
    every = full[0] + 1 if full else 0
    if full and full != list(range(every - 1, layers, every)):
        raise InputError(f"{FIELD}.layer_types", "irregular", f"full_attention on every n-th block from block n-1 "
                                                             f"(the patterns sizer models; {c.where})")
    return dict(sliding_window=window, global_every=every)


def _llama_like(c: _Config, name: str, source: str, *, alternate: bool = False, **extra: Any) -> Architecture:
    """Llama, Mistral, Mixtral, Qwen2, Phi-3, Gemma 2: SwiGLU/GeGLU, RMSNorm, rotary (sliding windows
    where the config sets them)."""
    heads = c.int("num_attention_heads")
    fields: dict[str, Any] = dict(
        name=name, family="decoder", layers=c.int("num_hidden_layers"), hidden=c.int("hidden_size"), heads=heads,
        kv_heads=c.int("num_key_value_heads", default=heads), ffn_hidden=c.int("intermediate_size"),
        ffn_type="swiglu", vocab=c.int("vocab_size"), max_context=c.int("max_position_embeddings", default=4096),
        tied_embeddings=c.bool("tie_word_embeddings", False), norm="rmsnorm", position="rotary", source=source,
        head_dim=c.int("head_dim", default=0, minimum=0) or None, attention_bias=c.bool("attention_bias", False),
        mlp_bias=c.bool("mlp_bias", False), dropout=_any_dropout(c, "attention_dropout", default=0.0))
    fields.update(_sliding(c, alternate=alternate))
    fields.update(extra)
    return Architecture(**fields)


def _llama(c: _Config, name: str, source: str) -> Architecture:
    return _llama_like(c, name, source)


def _mixtral(c: _Config, name: str, source: str) -> Architecture:
    return _llama_like(c, name, source, experts=c.int("num_local_experts", default=8),
                       experts_per_token=c.int("num_experts_per_tok", default=2))


def _qwen2_moe(c: _Config, name: str, source: str) -> Architecture:
    # Qwen2MoeSparseMoeBlock: routed experts of moe_intermediate_size, one shared expert of
    # shared_expert_intermediate_size with a sigmoid gate (transformers modeling_qwen2_moe.py)
    shared = c.int("shared_expert_intermediate_size", default=0, minimum=0)
    return _llama_like(c, name, source, attention_bias=True, attention_out_bias=False,
                       experts=c.int("num_experts"), experts_per_token=c.int("num_experts_per_tok"),
                       moe_ffn_hidden=c.int("moe_intermediate_size"), shared_experts=1 if shared else 0,
                       shared_ffn_hidden=shared or None, shared_expert_gate=bool(shared))


def _qwen3_moe(c: _Config, name: str, source: str) -> Architecture:
    # Qwen3MoeSparseMoeBlock: routed experts only, no attention biases (modeling_qwen3_moe.py)
    return _llama_like(c, name, source, experts=c.int("num_experts"), experts_per_token=c.int("num_experts_per_tok"),
                       moe_ffn_hidden=c.int("moe_intermediate_size"))


def _olmoe(c: _Config, name: str, source: str) -> Architecture:
    # OlmoeSparseMoeBlock: num_experts of intermediate_size each (modeling_olmoe.py)
    return _llama_like(c, name, source, experts=c.int("num_experts"), experts_per_token=c.int("num_experts_per_tok"))


def _gpt_oss(c: _Config, name: str, source: str) -> Architecture:
    # GptOssMLP: experts with biases and a router with a bias; attention with biases (modeling_gpt_oss.py)
    return _llama_like(c, name, source, experts=c.int("num_local_experts"),
                       experts_per_token=c.int("num_experts_per_tok", "experts_per_token"), attention_bias=True,
                       mlp_bias=True, router_bias=True)


def _deepseek(c: _Config, name: str, source: str) -> Architecture:
    """DeepSeek-V2/V3: multi-head latent attention, dense first blocks, routed and shared experts
    (modeling_deepseek_v2.py / _v3.py)."""
    heads = c.int("num_attention_heads")
    routed = c.int("n_routed_experts", default=0, minimum=0)
    fields: dict[str, Any] = dict(
        name=name, family="decoder", layers=c.int("num_hidden_layers"), hidden=c.int("hidden_size"), heads=heads,
        kv_heads=heads, head_dim=c.int("qk_nope_head_dim"), ffn_hidden=c.int("intermediate_size"), ffn_type="swiglu",
        vocab=c.int("vocab_size"), max_context=c.int("max_position_embeddings", default=4096),
        tied_embeddings=c.bool("tie_word_embeddings", False), norm="rmsnorm", position="rotary", source=source,
        q_lora_rank=c.int("q_lora_rank", default=0, minimum=0), kv_lora_rank=c.int("kv_lora_rank"),
        rope_head_dim=c.int("qk_rope_head_dim"), v_head_dim=c.int("v_head_dim"))
    if routed:
        fields.update(experts=routed, experts_per_token=c.int("num_experts_per_tok"),
                      moe_ffn_hidden=c.int("moe_intermediate_size"),
                      shared_experts=c.int("n_shared_experts", default=0, minimum=0),
                      dense_layers=c.int("first_k_dense_replace", default=0, minimum=0),
                      moe_every=c.int("moe_layer_freq", default=1))
    return Architecture(**fields)


def _qwen2(c: _Config, name: str, source: str) -> Architecture:
    # Qwen2Attention: bias on q, k and v, none on o_proj (transformers modeling_qwen2.py)
    return _llama_like(c, name, source, attention_bias=True, attention_out_bias=False)


def _phi3(c: _Config, name: str, source: str) -> Architecture:
    return _llama_like(c, name, source)


def _gemma2(c: _Config, name: str, source: str) -> Architecture:
    # Gemma2DecoderLayer: four RMSNorms; GeGLU; embeddings tied (Gemma2Config default)
    return _llama_like(c, name, source, ffn_type="geglu", tied_embeddings=c.bool("tie_word_embeddings", True),
                       block_norms=4, head_dim=c.int("head_dim", default=256), alternate=True)


def _gpt2(c: _Config, name: str, source: str) -> Architecture:
    hidden = c.int("n_embd", "hidden_size")
    heads = c.int("n_head", "num_attention_heads")
    return Architecture(name=name, family="decoder", layers=c.int("n_layer", "num_hidden_layers"), hidden=hidden,
                        heads=heads, kv_heads=heads, ffn_hidden=c.int("n_inner", default=4 * hidden), ffn_type="gelu",
                        vocab=c.int("vocab_size"), max_context=c.int("n_positions", "n_ctx", default=1024),
                        tied_embeddings=c.bool("tie_word_embeddings", True), norm="layernorm", position="learned",
                        source=source, attention_bias=True, mlp_bias=True,
                        dropout=_any_dropout(c, "resid_pdrop", "attn_pdrop", "embd_pdrop", default=0.1))


def _any_dropout(c: _Config, *keys: str, default: float) -> bool:
    """Whether any of the dropout probabilities (``default`` where absent) is above zero."""
    values = [c.get(key, default) for key in keys]
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values)


def _gpt_neox(c: _Config, name: str, source: str) -> Architecture:
    heads = c.int("num_attention_heads")
    parallel = c.bool("use_parallel_residual", True)
    return Architecture(name=name, family="decoder", layers=c.int("num_hidden_layers"), hidden=c.int("hidden_size"),
                        heads=heads, kv_heads=heads, ffn_hidden=c.int("intermediate_size"), ffn_type="gelu",
                        vocab=c.int("vocab_size"), max_context=c.int("max_position_embeddings", default=2048),
                        tied_embeddings=c.bool("tie_word_embeddings", False), norm="layernorm", position="rotary",
                        source=source, attention_bias=c.bool("attention_bias", True), mlp_bias=True,
                        parallel_attention=parallel, block_norms=2)


def _falcon(c: _Config, name: str, source: str) -> Architecture:
    hidden = c.int("hidden_size")
    heads = c.int("num_attention_heads", "n_head")
    new_architecture = c.bool("new_decoder_architecture", False)
    if new_architecture:
        kv_heads = c.int("num_kv_heads", "n_head_kv", default=heads)
    else:
        kv_heads = 1 if c.bool("multi_query", True) else heads
    parallel = c.bool("parallel_attn", True)
    return Architecture(name=name, family="decoder", layers=c.int("num_hidden_layers", "n_layer"), hidden=hidden,
                        heads=heads, kv_heads=kv_heads, ffn_hidden=c.int("ffn_hidden_size", default=4 * hidden),
                        ffn_type="gelu", vocab=c.int("vocab_size"),
                        max_context=c.int("max_position_embeddings", default=2048),
                        tied_embeddings=c.bool("tie_word_embeddings", True), norm="layernorm",
                        position="alibi" if c.bool("alibi", False) else "rotary", source=source,
                        attention_bias=c.bool("bias", False), mlp_bias=c.bool("bias", False),
                        parallel_attention=parallel, block_norms=2 if new_architecture or not parallel else 1)


def _bert(c: _Config, name: str, source: str, *, roberta: bool = False) -> Architecture:
    heads = c.int("num_attention_heads")
    max_positions = c.int("max_position_embeddings", default=512)
    offset = 2 if roberta and max_positions > 2 else 0  # RoBERTa: padding_idx + 1 rows before position 0
    return Architecture(name=name, family="encoder", layers=c.int("num_hidden_layers"), hidden=c.int("hidden_size"),
                        heads=heads, kv_heads=heads, ffn_hidden=c.int("intermediate_size"), ffn_type="gelu",
                        vocab=c.int("vocab_size"), max_context=max_positions - offset, position_offset=offset,
                        tied_embeddings=True, norm="layernorm", position="learned", source=source,
                        attention_bias=True, mlp_bias=True, type_vocab=c.int("type_vocab_size", default=2),
                        pooler=not roberta, embedding_norm=True, mlm_head=True,
                        dropout=_any_dropout(c, "hidden_dropout_prob", "attention_probs_dropout_prob", default=0.1))


def _roberta(c: _Config, name: str, source: str) -> Architecture:
    return _bert(c, name, source, roberta=True)


def _t5(c: _Config, name: str, source: str) -> Architecture:
    heads = c.int("num_heads")
    gated = str(c.get("feed_forward_proj", "relu")).startswith("gated")
    return Architecture(name=name, family="encoder-decoder", layers=c.int("num_decoder_layers", "num_layers"),
                        encoder_layers=c.int("num_layers"), hidden=c.int("d_model"), heads=heads, kv_heads=heads,
                        head_dim=c.int("d_kv", default=64), ffn_hidden=c.int("d_ff"),
                        ffn_type="geglu" if gated else "relu", vocab=c.int("vocab_size"), max_context=512,
                        tied_embeddings=c.bool("tie_word_embeddings", True), norm="rmsnorm", position="relative",
                        relative_buckets=c.int("relative_attention_num_buckets", default=32), source=source,
                        dropout=_any_dropout(c, "dropout_rate", default=0.1))


def _opt(c: _Config, name: str, source: str) -> Architecture:
    heads = c.int("num_attention_heads")
    hidden = c.int("hidden_size")
    if c.int("word_embed_proj_dim", default=hidden) != hidden:
        raise InputError(f"{FIELD}.word_embed_proj_dim", c.get("word_embed_proj_dim"),
                         f"equal to hidden_size (OPT-350m's projected embeddings are not supported; {c.where})")
    return Architecture(name=name, family="decoder", layers=c.int("num_hidden_layers"), hidden=hidden, heads=heads,
                        kv_heads=heads, ffn_hidden=c.int("ffn_dim"), ffn_type="relu", vocab=c.int("vocab_size"),
                        max_context=c.int("max_position_embeddings", default=2048), position_offset=2,
                        tied_embeddings=c.bool("tie_word_embeddings", True), norm="layernorm", position="learned",
                        source=source, attention_bias=c.bool("enable_bias", True), mlp_bias=c.bool("enable_bias", True),
                        dropout=_any_dropout(c, "dropout", "attention_dropout", default=0.1))


READERS: dict[str, Callable[[_Config, str, str], Architecture]] = {
    "llama": _llama, "mistral": _llama, "mixtral": _mixtral, "qwen2": _qwen2, "gpt2": _gpt2, "gpt_neox": _gpt_neox,
    "falcon": _falcon, "bert": _bert, "roberta": _roberta, "t5": _t5, "opt": _opt, "phi3": _phi3, "gemma2": _gemma2,
    "qwen2_moe": _qwen2_moe, "qwen3_moe": _qwen3_moe, "olmoe": _olmoe, "gpt_oss": _gpt_oss,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek,
}


def supported_model_types() -> list[str]:
    """The ``model_type`` values a config may name (one reader each).

    Returns
    -------
    list of str
        Sorted model types, e.g. ``"llama"``, ``"mixtral"``.
    """
    return sorted(READERS)


def architecture_from_config(data: dict[str, Any], *, name: str = "config.json",
                             source: str = "a Hugging Face config.json") -> Architecture:
    """An Architecture from a parsed ``config.json`` mapping.

    Parameters
    ----------
    data : dict of str to Any
        A parsed ``config.json``; its ``model_type`` picks the reader.
    name : str, default ``"config.json"``
        The architecture's name.
    source : str, default ``"a Hugging Face config.json"``
        Where the config came from, named in errors and in the architecture's source.

    Returns
    -------
    Architecture
        The checked architecture.

    Raises
    ------
    InputError
        An unsupported ``model_type``, a config deeper than the block limit, or inconsistent fields.
    """
    model_type = data.get("model_type")
    reader = READERS.get(model_type) if isinstance(model_type, str) else None
    if reader is None:
        raise InputError(f"{FIELD}.model_type", model_type,
                         f"one of the supported model types {', '.join(supported_model_types())} ({source})")
    _check_depth(data, source)
    return check_consistent(reader(_Config(data, source), name, source), source)


MAX_LAYERS = MAX_BLOCKS  # blocks of a config, as for every architecture: the layer graph stays small
_DEPTH_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")


def _check_depth(data: dict[str, object], source: str) -> None:
    """Refuse a config deeper than :data:`MAX_LAYERS` by the key it gives, before anything is built."""
    for key in _DEPTH_KEYS:
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > MAX_LAYERS:
            raise InputError(f"{FIELD}.{key}", value, f"at most {MAX_LAYERS:,} transformer blocks ({source})")
MAX_PARAMS = 1e13  # as sizer.workloads.registry.MAX_GENERATED_PARAMS


def check_consistent(arch: Architecture, source: str) -> Architecture:
    """``arch`` if its fields agree with each other and stay within the work bounds, else an InputError
    naming the field: more KV heads than heads (or not a divisor of them), a width the heads do not
    divide (without a fixed head_dim), more experts per token than experts, too many layers or
    parameters for the layer graph.

    Parameters
    ----------
    arch : Architecture
        The architecture a reader built.
    source : str
        Where it came from, for the message.

    Returns
    -------
    Architecture
        ``arch``, unchanged.
    """
    if arch.kv_heads > arch.heads or arch.heads % arch.kv_heads:
        raise InputError(f"{FIELD}.num_key_value_heads", arch.kv_heads,
                         f"a divisor of the {arch.heads} attention heads ({source})")
    if arch.head_dim is None and arch.hidden % arch.heads:
        raise InputError(f"{FIELD}.num_attention_heads", arch.heads,
                         f"a divisor of the width {arch.hidden}, or a head_dim ({source})")
    if arch.experts_per_token > arch.experts:
        raise InputError(f"{FIELD}.num_experts_per_tok", arch.experts_per_token,
                         f"at most the {arch.experts} experts ({source})")
    if arch.layers + arch.encoder_layers > MAX_LAYERS:
        raise InputError(f"{FIELD}.num_hidden_layers", arch.layers, f"at most {MAX_LAYERS:,} layers ({source})")
    if arch.params_total() > MAX_PARAMS:
        raise InputError(f"{FIELD}.hidden_size", arch.hidden,
                         f"a model of at most {MAX_PARAMS:.0e} parameters (this one has {arch.params_total():.3g}; {source})")
    return arch


def read_hf_config(path: str | Path) -> Architecture:
    """Read a Hugging Face ``config.json`` (offline) into an Architecture named after the file's
    ``_name_or_path`` or its folder.

    Parameters
    ----------
    path : str or Path
        A ``config.json`` file.

    Returns
    -------
    Architecture
        The checked architecture.
    """
    path = Path(path)
    data = load_json(path)
    declared = data.get("_name_or_path")
    name = declared if isinstance(declared, str) and 0 < len(declared) <= 200 else (path.parent.name or path.name)
    return architecture_from_config(data, name=name, source=f"Hugging Face config {path}")
