"""Read a Hugging Face ``config.json`` into an :class:`~sizer.workloads.architecture.Architecture`, offline.

Each supported ``model_type`` maps the config's key names (``num_hidden_layers`` or ``n_layer``,
``intermediate_size`` or ``n_inner`` …) and the defaults its ``transformers`` configuration
class applies when a key is absent (``configuration_<type>.py``) onto the Architecture fields.
The file is read with a size limit and a nesting-depth guard (:func:`load_json`); an unsupported
``model_type`` or a missing key is an :class:`~sizer.errors.InputError` that names it.

A vision-language config (``text_config`` and ``vision_config``) is read as its language model; the
vision tower is not counted, and the architecture's ``source`` says so. A model whose blocks hold a
mechanism the engine does not cost (Mamba or linear-attention layers in a hybrid stack, per-block
shapes, cross-attention over image tokens, compressed attention ...; :data:`UNSUPPORTED`) is refused
naming the config key that holds it, never read as a plain decoder. An approximation that is read
(DeepSeek Sparse Attention as dense MLA, Llama 4's chunked attention as a sliding window) is stated
in the architecture's ``source``, which the answers show.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "config.json")
>>> _ = open(path, "w").write(json.dumps({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
...     "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096}))
>>> read_hf_config(path).params_total()
6738415616
"""
from __future__ import annotations

import builtins
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, NoReturn

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
    data = parse_config(datafile.read_text(path, FIELD, MAX_CONFIG_BYTES), str(path))
    if not isinstance(data, dict):
        raise InputError(FIELD, str(path), "a JSON object with a 'model_type'")
    return data


def parse_config(text: str, where: str) -> Any:
    """``config.json`` text as plain data, by the project's JSON rules (:func:`sizer.datafile.parse_json`:
    valid JSON, nesting depth) except that a non-finite number (``Infinity``, ``NaN``, which
    transformers writes for values such as Mamba's ``time_step_limit``) becomes the string that spells
    it: a key sizer reads as a number is then refused naming that key, and the rest is never used.

    Parameters
    ----------
    text : str
        The file's text.
    where : str
        What the text is (its file), for messages.

    Returns
    -------
    Any
        The parsed document.
    """
    return datafile.parse_json(text, FIELD, where, spell_nonfinite=True)


class _Config:
    """Typed access to a config dict; a missing or malformed key is an InputError naming it (with its
    path from the top of the file: ``model.text_config.hidden_size`` inside a multimodal config)."""

    def __init__(self, data: dict[str, Any], where: str, prefix: str = ""):
        self.data, self.where, self.prefix = data, where, prefix

    def field(self, key: str) -> str:
        """The error field of ``key``: its path in the file, under ``model.``."""
        return f"{FIELD}.{self.prefix}{key}"

    def int(self, *keys: str, default: int | None = None, minimum: int = 1) -> int:
        for key in keys:
            value = self.data.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= 10**8:
                raise InputError(self.field(key), value, f"a whole number from {minimum} to 1e8 ({self.where})")
            return value
        if default is None:
            raise InputError(self.field(keys[0]), None, f"the key {keys[0]!r} in {self.where}")
        return default

    def bool(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InputError(self.field(key), value, f"true or false ({self.where})")
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def ints(self, key: str) -> list[builtins.int] | None:
        """A list of whole numbers under ``key`` (layer indices, flags); None where absent or null."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise InputError(self.field(key), value, f"a list of whole numbers ({self.where})")
        return value

    def text(self) -> _Config:
        """The language model of a multimodal config: its ``text_config`` object."""
        sub = self.data.get("text_config")
        if not isinstance(sub, dict):
            raise InputError(self.field("text_config"), sub, f"an object with the language model's keys ({self.where})")
        _check_depth(sub, self.where, f"{self.prefix}text_config.")
        return _Config(sub, self.where, f"{self.prefix}text_config.")

    def refuse(self, key: str, feature: str) -> NoReturn:
        """Refuse a feature the engine does not cost, naming the key that holds it."""
        raise InputError(self.field(key), _shown(self.data.get(key)),
                         f"a model without {feature}, which sizer does not cost: sizer costs transformer blocks of "
                         f"softmax attention (full, sliding-window or multi-head latent) with a dense or "
                         f"mixture-of-experts FFN ({self.where})")


def _shown(value: Any) -> Any:
    """A config value short enough for a message: a long list by its distinct entries."""
    if isinstance(value, list) and len(value) > 8:
        distinct = sorted({str(v) for v in value})[:4]
        return f"{len(value)} entries of {', '.join(distinct)}"
    if isinstance(value, dict):
        return "{" + ", ".join(list(value)[:4]) + ", ...}"
    return value


SLIDING_TYPES = ("full_attention", "sliding_attention")  # the layer_types entries sizer costs


def _sliding(c: _Config, *, alternate: bool = False) -> dict[str, int]:
    """Sliding-window attention as transformers reads it: ``sliding_window`` tokens (none where it is
    null or ``use_sliding_window`` is false, as Qwen2 ships it); the blocks that attend over everything
    from ``layer_types`` ("full_attention") where the config lists them, else none, or every other
    block from block 1 (Gemma 2, ``alternate``). A layer type other than full or sliding attention
    (linear attention, chunked attention) is refused naming ``layer_types``."""
    types = c.get("layer_types")
    if isinstance(types, list) and any(kind not in SLIDING_TYPES for kind in types):
        c.refuse("layer_types", f"blocks of {' or '.join(sorted({str(k) for k in types} - set(SLIDING_TYPES)))}")
    if c.get("sliding_window") is None or c.get("use_sliding_window") is False:
        return {}
    window = c.int("sliding_window")
    layers = c.int("num_hidden_layers")
    if not isinstance(types, list) or len(types) != layers:
        return dict(sliding_window=window, global_every=2 if alternate else 0)
    return _windows(c, "layer_types", [kind == "full_attention" for kind in types], window)


def _windows(c: _Config, key: str, full: list[bool], window: int) -> dict[str, Any]:
    """``sliding_window`` and ``global_every`` from which blocks attend over everything (``full``, one
    flag per block): none slide, every block slides, or every n-th block from block n-1 is global (the
    patterns the Architecture holds); another pattern is refused naming ``key``."""
    layers = len(full)
    indices = [i for i, is_full in enumerate(full) if is_full]
    if len(indices) == layers:
        return {}
    every = indices[0] + 1 if indices else 0
    if indices and indices != list(range(every - 1, layers, every)):
        raise InputError(c.field(key), "irregular", f"full attention on every n-th block from block n-1 "
                                                    f"(the patterns sizer models; {c.where})")
    return dict(sliding_window=window, global_every=every)


def _llama_like(c: _Config, name: str, source: str, *, alternate: bool = False, head_dim: int = 0,
                context: int = 4096, **extra: Any) -> Architecture:
    """Llama, Mistral, Mixtral, Qwen2, Phi-3, Gemma 2: SwiGLU/GeGLU, RMSNorm, rotary (sliding windows
    where the config sets them). ``head_dim`` and ``context``: the configuration class's defaults of
    ``head_dim`` (0: hidden / heads) and ``max_position_embeddings``."""
    heads = c.int("num_attention_heads")
    fields: dict[str, Any] = dict(
        name=name, family="decoder", layers=c.int("num_hidden_layers"), hidden=c.int("hidden_size"), heads=heads,
        kv_heads=c.int("num_key_value_heads", default=heads), ffn_hidden=c.int("intermediate_size"),
        ffn_type="swiglu", vocab=c.int("vocab_size"), max_context=c.int("max_position_embeddings", default=context),
        tied_embeddings=c.bool("tie_word_embeddings", False), norm="rmsnorm", position="rotary", source=source,
        head_dim=c.int("head_dim", default=head_dim, minimum=0) or None, attention_bias=c.bool("attention_bias", False),
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
                       shared_ffn_hidden=shared or None, shared_expert_gate=bool(shared), **_sparse_layers(c))


def _sparse_layers(c: _Config) -> dict[str, Any]:
    """Which blocks are mixtures in Qwen2-MoE/Qwen3-MoE: every ``decoder_sparse_step``-th block except the
    ``mlp_only_layers`` (modeling_qwen2_moe.py: ``layer_idx not in mlp_only_layers and (layer_idx + 1) %
    decoder_sparse_step == 0``); dense blocks other than the first few are refused naming the key."""
    step = c.int("decoder_sparse_step", default=1)
    dense = sorted(set(c.ints("mlp_only_layers") or []))
    if dense and (dense != list(range(len(dense))) or step != 1):
        c.refuse("mlp_only_layers", "dense blocks other than the first n (with decoder_sparse_step 1)")
    return dict(dense_layers=len(dense), moe_every=step)


def _qwen3_moe(c: _Config, name: str, source: str) -> Architecture:
    # Qwen3MoeSparseMoeBlock: routed experts only, no attention biases (modeling_qwen3_moe.py)
    return _llama_like(c, name, _qk_norm_note(source), experts=c.int("num_experts"),
                       experts_per_token=c.int("num_experts_per_tok"), moe_ffn_hidden=c.int("moe_intermediate_size"),
                       **_sparse_layers(c))


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
    mtp = c.int("num_nextn_predict_layers", default=0, minimum=0)
    if mtp:  # released beside the model (DeepSeek-V3's 14B of 685B); transformers does not load them
        source = f"{source}; its {mtp} multi-token-prediction layer(s) are not counted"
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


def _qk_norm_note(source: str) -> str:
    return f"{source}; its per-head q/k RMSNorm weights (2 x head_dim per block, < 0.01 % of the model) are not counted"


def _qwen3(c: _Config, name: str, source: str) -> Architecture:
    # Qwen3Attention: no q/k/v biases (attention_bias default False), q_norm/k_norm over head_dim; head_dim
    # default 128 (configuration_qwen3.py, modeling_qwen3.py)
    return _llama_like(c, name, _qk_norm_note(source), head_dim=128, context=32768)


def _exaone4(c: _Config, name: str, source: str) -> Architecture:
    # Exaone4DecoderLayer: no input norm, a norm after attention and after the MLP (two per block); q/k
    # norms over head_dim; the global blocks from layer_types, else sliding_window_pattern: every n-th
    # block (configuration_exaone4.py __post_init__), or "G" in a pattern such as "LLLG" (EXAONE's hub code)
    if c.get("layer_types") is not None or c.get("sliding_window") is None:
        return _llama_like(c, name, _qk_norm_note(source), context=2048)
    layers, pattern = c.int("num_hidden_layers"), c.get("sliding_window_pattern", 4)
    if isinstance(pattern, str) and pattern and set(pattern) <= {"L", "G"}:
        full = [pattern[i % len(pattern)] == "G" for i in range(layers)]
    elif isinstance(pattern, int) and not isinstance(pattern, bool) and pattern >= 1:
        full = [(i + 1) % pattern == 0 for i in range(layers)]
    else:
        raise InputError(c.field("sliding_window_pattern"), pattern, f"a whole number n (every n-th block global) "
                                                                     f"or a pattern of L and G ({c.where})")
    return _llama_like(c, name, _qk_norm_note(source), context=2048,
                       **_windows(c, "sliding_window_pattern", full, c.int("sliding_window")))


def _olmo3(c: _Config, name: str, source: str) -> Architecture:
    # Olmo3DecoderLayer: a norm after attention and after the MLP; q_norm/k_norm over all heads' width
    # (modeling_olmo3.py); layer_types default: every fourth block full (configuration_olmo3.py)
    note = f"{source}; its q/k RMSNorm weights ((heads + kv_heads) x head_dim per block) are not counted"
    if c.get("layer_types") is None and c.get("sliding_window") is not None:
        layers = c.int("num_hidden_layers")
        return _llama_like(c, name, note, context=2048,
                           **_windows(c, "sliding_window", [(i + 1) % 4 == 0 for i in range(layers)],
                                      c.int("sliding_window")))
    return _llama_like(c, name, note, context=2048)


def _ministral3(c: _Config, name: str, source: str) -> Architecture:
    # Ministral3 (Mistral 3, Devstral 2): the Mistral decoder; head_dim default 128, 262,144 positions
    # (configuration_ministral3.py)
    return _llama_like(c, name, source, head_dim=128, context=262144)


def _mimo(c: _Config, name: str, source: str) -> Architecture:
    # MiMo (XiaomiMiMo remote code, configuration_mimo.py): MiMoConfig extends Qwen2Config with
    # num_nextn_predict_layers multi-token-prediction layers, which a Qwen2 model does not load
    mtp = c.int("num_nextn_predict_layers", default=0, minimum=0)
    note = f"{source}; its {mtp} multi-token-prediction layer(s) are not counted" if mtp else source
    return _qwen2(c, name, note)


def _phimoe(c: _Config, name: str, source: str) -> Architecture:
    # PhimoeDecoderLayer: LayerNorms with biases, num_local_experts of intermediate_size, top-k router
    # without bias, every block within sliding_window when set (modeling_phimoe.py)
    note = f"{source}; its LM-head bias (lm_head_bias: vocab_size values) is not counted" \
        if c.bool("lm_head_bias", False) else source
    return _llama_like(c, name, note, context=4096 * 32, norm="layernorm",
                       experts=c.int("num_local_experts", default=16),
                       experts_per_token=c.int("num_experts_per_tok", default=2))


def _minimax_m2(c: _Config, name: str, source: str) -> Architecture:
    # MiniMaxM2: num_local_experts of intermediate_size each, top-k sigmoid router with a score-correction
    # buffer (not a weight), q/k RMSNorm over all heads' width, no shared expert (modeling_minimax_m2.py).
    # attn_type_list (remote code): 1 is softmax attention, 0 MiniMax's lightning (linear) attention.
    kinds = c.get("attn_type_list")
    if isinstance(kinds, list) and any(kind != 1 for kind in kinds):
        c.refuse("attn_type_list", "blocks of lightning (linear) attention (attn_type 0)")
    if c.int("shared_intermediate_size", default=0, minimum=0):
        c.refuse("shared_intermediate_size", "a shared expert, which transformers' MiniMax-M2 has none of")
    mtp = c.int("num_mtp_modules", default=0, minimum=0) if c.get("use_mtp") else 0
    note = f"{source}; its q/k RMSNorm weights are not counted" + (
        f", nor its {mtp} multi-token-prediction modules" if mtp else "")
    return _llama_like(c, name, note, head_dim=128, context=196608, experts=c.int("num_local_experts", default=256),
                       experts_per_token=c.int("num_experts_per_tok", default=8))


def _llama4(c: _Config, name: str, source: str) -> Architecture:
    """Llama 4 text model (configuration_llama4.py / modeling_llama4.py): routed experts of
    ``intermediate_size`` plus one shared expert of the same width in the ``moe_layers`` (every
    ``interleave_moe_layer_step``-th block), a dense FFN of ``intermediate_size_mlp`` elsewhere; the
    rotary blocks (``no_rope_layers`` flag 1) attend within chunks of ``attention_chunk_size`` tokens,
    the others (NoPE) over everything. Chunked attention is costed as a sliding window of the chunk:
    the same bound on the KV cache, attention FLOPs at most twice the chunk's."""
    layers = c.int("num_hidden_layers")
    step = c.int("interleave_moe_layer_step", default=1)
    moe_layers = c.ints("moe_layers")
    if moe_layers is not None and moe_layers != list(range(step - 1, layers, step)):
        c.refuse("moe_layers", "mixture blocks other than every n-th block")
    chunk = c.int("attention_chunk_size", default=0, minimum=0) if "attention_chunk_size" in c.data else 8192
    kinds = c.get("layer_types")
    if isinstance(kinds, list):  # saved by transformers v5: "chunked_attention" or "full_attention" per block
        if len(kinds) != layers or any(kind not in ("chunked_attention", "full_attention") for kind in kinds):
            c.refuse("layer_types", "blocks other than chunked or full attention, one per block")
        full, key = [kind == "full_attention" for kind in kinds], "layer_types"
    else:  # no_rope_layers: 1 where the block uses rotary embeddings (and chunks), default all but every 4th
        rope = c.ints("no_rope_layers") or [int((i + 1) % c.int("no_rope_layer_interval", default=4) != 0)
                                            for i in range(layers)]
        if len(rope) != layers:
            raise InputError(c.field("no_rope_layers"), len(rope), f"one flag per block, {layers} ({c.where})")
        full, key = [not flag for flag in rope], "no_rope_layers"
    windows = _windows(c, key, full, chunk) if chunk else {}
    if windows:
        source = (f"{source}; chunked attention (attention_chunk_size {chunk}) costed as a sliding window of "
                  f"{chunk} tokens")
    experts = c.int("num_local_experts", default=16)
    expert_width = c.int("intermediate_size", default=8192)
    return Architecture(
        name=name, family="decoder", layers=layers, hidden=c.int("hidden_size"), heads=c.int("num_attention_heads"),
        kv_heads=c.int("num_key_value_heads", default=8), head_dim=c.int("head_dim", default=128),
        ffn_hidden=c.int("intermediate_size_mlp", default=16384), ffn_type="swiglu", vocab=c.int("vocab_size"),
        max_context=c.int("max_position_embeddings", default=4096 * 32),
        tied_embeddings=c.bool("tie_word_embeddings", False), norm="rmsnorm", position="rotary", source=source,
        attention_bias=c.bool("attention_bias", False), experts=experts,
        experts_per_token=c.int("num_experts_per_tok", default=1), moe_ffn_hidden=expert_width, shared_experts=1,
        shared_ffn_hidden=expert_width, moe_every=step, **windows)


def _deepseek_dsa(c: _Config, name: str, source: str) -> Architecture:
    """DeepSeek-V3.2 and GLM-5 (configuration_deepseek_v32.py, configuration_glm_moe_dsa.py): DeepSeek-V3's
    multi-head latent attention and experts, plus DeepSeek Sparse Attention's lightning indexer in every
    block (``index_n_heads`` heads of ``index_head_dim`` over the query latent; wq_b, wk, k_norm,
    weights_proj in modeling_*.py) that picks ``index_topk`` tokens for each query to attend over.

    Approximation, stated in the source: attention is costed as dense MLA over the whole context (an
    upper bound on its FLOPs and KV reads beyond ``index_topk`` tokens), and the indexer's weights and
    its key cache are not counted; its weights are computed here and said in the source (~0.1 % of the
    model for both releases)."""
    mlp_types = c.get("mlp_layer_types")
    first_dense = c.int("first_k_dense_replace", default=3, minimum=0)
    if isinstance(mlp_types, list) and mlp_types != ["dense"] * first_dense + ["sparse"] * (len(mlp_types) - first_dense):
        c.refuse("mlp_layer_types", "dense blocks other than the first first_k_dense_replace")
    kinds = c.get("layer_types")
    if isinstance(kinds, list) and any(kind != "indexed_attention" for kind in kinds):
        c.refuse("layer_types", "a mix of sparse (indexed) and other attention blocks")
    heads, width = c.int("index_n_heads"), c.int("index_head_dim")
    hidden, layers = c.int("hidden_size"), c.int("num_hidden_layers")
    indexer = layers * (c.int("q_lora_rank") * heads * width + hidden * width + 2 * width + hidden * heads)
    arch = _deepseek(c, name, source)
    share = indexer / arch.params_total()
    note = (f"{source}; DeepSeek Sparse Attention costed as dense multi-head latent attention over the whole context "
            f"(it attends over index_topk={c.int('index_topk')} tokens: an upper bound beyond them); its indexer "
            f"({indexer / 1e6:,.0f} M weights, {share:.2%} of the model) and indexer key cache are not counted")
    return replace(arch, source=note)


def _multimodal(reader: Callable[[_Config, str, str], Architecture], *, vision: str = "vision_config",
                flat: bool = False) -> Callable[[_Config, str, str], Architecture]:
    """A reader of a vision-language config: ``reader`` over its language model (``text_config``; the top
    level where there is none and ``flat``, as Qwen2.5-VL saved it), the word-embedding tie from either
    level (transformers v5 keeps it outside, earlier saves inside), the vision tower not counted."""

    def read(c: _Config, name: str, source: str) -> Architecture:
        text = c if flat and not isinstance(c.get("text_config"), dict) else c.text()
        arch = reader(text, name, f"{source}; the language model only: the vision tower ({vision}) is not counted")
        tied = c.bool("tie_word_embeddings", False) or text.bool("tie_word_embeddings", False)
        return replace(arch, tied_embeddings=tied) if tied != arch.tied_embeddings else arch

    return read


def _by_text_type(readers: dict[str, Callable[[_Config, str, str], Architecture]]) -> Callable[[_Config, str, str], Architecture]:
    """A reader that picks by the ``model_type`` of the config it is given (a text_config's)."""

    def read(c: _Config, name: str, source: str) -> Architecture:
        kind = c.get("model_type")
        reader = readers.get(kind) if isinstance(kind, str) else None
        if reader is None:
            raise InputError(c.field("model_type"), kind, f"one of {', '.join(sorted(readers))} ({c.where})")
        return reader(c, name, source)

    return read


READERS: dict[str, Callable[[_Config, str, str], Architecture]] = {
    "llama": _llama, "mistral": _llama, "mixtral": _mixtral, "qwen2": _qwen2, "gpt2": _gpt2, "gpt_neox": _gpt_neox,
    "falcon": _falcon, "bert": _bert, "roberta": _roberta, "t5": _t5, "opt": _opt, "phi3": _phi3, "gemma2": _gemma2,
    "qwen2_moe": _qwen2_moe, "qwen3_moe": _qwen3_moe, "olmoe": _olmoe, "gpt_oss": _gpt_oss,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "kimi_k2": _deepseek,  # Kimi K2: DeepseekV3Config (remote code)
    "deepseek_v32": _deepseek_dsa, "glm_moe_dsa": _deepseek_dsa,
    "qwen3": _qwen3, "exaone4": _exaone4, "olmo3": _olmo3, "ministral3": _ministral3, "mimo": _mimo,
    "phimoe": _phimoe, "minimax_m2": _minimax_m2, "llama4_text": _llama4,
    # vision-language models: their language model (text_config)
    "qwen2_5_vl": _multimodal(_qwen2, flat=True), "qwen3_vl": _multimodal(_qwen3), "llama4": _multimodal(_llama4),
    "mistral3": _multimodal(_by_text_type({"ministral3": _ministral3, "mistral": _llama})),
    "kimi_k25": _multimodal(_by_text_type({"kimi_k2": _deepseek, "deepseek_v3": _deepseek})),
}


def _linear_attention(c: _Config, default_key: str, what: str) -> NoReturn:
    """Refuse a hybrid of softmax and linear attention, naming ``layer_types`` where the config lists the
    blocks, else ``default_key`` (the key whose value places them)."""
    c.refuse("layer_types" if c.get("layer_types") is not None else default_key, what)


_GATED_DELTANET = "Gated DeltaNet (linear attention) blocks beside the softmax-attention ones"
# model_types whose architecture has a mechanism the engine does not cost: each is refused naming the
# config key that holds it (never read as a plain decoder)
UNSUPPORTED: dict[str, Callable[[_Config], NoReturn]] = {
    # NemotronHConfig: "M" (Mamba-2), "*" (attention), "-" (MLP), "E" (MoE) blocks (configuration_nemotron_h.py)
    "nemotron_h": lambda c: c.refuse(
        "layers_block_type" if c.get("layers_block_type") is not None else "hybrid_override_pattern",
        "Mamba-2 (state-space) blocks in a hybrid stack (mamba_num_heads, ssm_state_size)"),
    # Qwen3NextConfig: layer_types default from full_attention_interval, the rest linear_attention
    "qwen3_next": lambda c: _linear_attention(c, "full_attention_interval", _GATED_DELTANET),
    "qwen3_5": lambda c: _linear_attention(c.text(), "full_attention_interval", _GATED_DELTANET),
    "qwen3_5_moe": lambda c: _linear_attention(c.text(), "full_attention_interval", _GATED_DELTANET),
    "kimi_linear": lambda c: c.refuse("linear_attn_config", "Kimi Delta Attention (linear) blocks (kda_layers)"),
    "kimi_k3": lambda c: c.text().refuse("linear_attn_config", "Kimi Delta Attention (linear) blocks (kda_layers)"),
    # DeepseekV4Config: per-block KV compression (compress_ratios), hyper-connections (hc_mult), grouped
    # low-rank output projections (o_lora_rank), hash-routed first blocks (num_hash_layers)
    "deepseek_v4": lambda c: c.refuse(
        "compress_ratios", "compressed sparse attention (KV compressed per block), with hyper-connections (hc_mult) "
                           "and grouped low-rank output projections (o_lora_rank)"),
    # MiniMax-M3 (remote code, no transformers configuration class): block-sparse attention with index heads
    "minimax_m3": lambda c: c.refuse("sparse_attention_config", "block-sparse attention with index heads"),
    # MiMoV2FlashConfig: sliding blocks with their own KV heads (swa_*) and values narrower than keys
    "mimo_v2_flash": lambda c: c.refuse(
        "hybrid_layer_pattern", "sliding-window blocks with their own KV heads (swa_num_key_value_heads) beside "
                                "full-attention ones, and value heads narrower than key heads (v_head_dim)"),
    # Gemma4TextConfig: full-attention blocks of global_head_dim (default 512) and num_global_key_value_heads
    "gemma4": lambda c: c.text().refuse(
        "global_head_dim", "full-attention blocks with their own head size and KV heads (num_global_key_value_heads) "
                           "beside the sliding ones"),
    "gemma4_text": lambda c: c.refuse("global_head_dim", "full-attention blocks with their own head size and KV heads"),
    # DeciLM (Llama-Nemotron NAS): each block its own FFN width, some without attention or FFN
    "nemotron-nas": lambda c: c.refuse("block_configs", "blocks of different shapes (per-block ffn_mult, "
                                                        "attention no_op or replace_with_linear)"),
    # MllamaTextConfig: cross_attention_layers attend over the image tokens
    "mllama": lambda c: c.text().refuse("cross_attention_layers", "cross-attention blocks over the image tokens"),
    # CLIPConfig: a text and a vision encoder trained contrastively, no language-model head
    "clip": lambda c: c.refuse("vision_config", "a contrastive pair of encoders (text_config and vision_config) "
                                                "without a language-model head"),
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
    refusal = UNSUPPORTED.get(model_type) if isinstance(model_type, str) else None
    _check_depth(data, source)
    if refusal is not None:
        refusal(_Config(data, source))
    if reader is None:
        raise InputError(f"{FIELD}.model_type", model_type,
                         f"one of the supported model types {', '.join(supported_model_types())} ({source})")
    return check_consistent(reader(_Config(data, source), name, source), source)


MAX_LAYERS = MAX_BLOCKS  # blocks of a config, as for every architecture: the layer graph stays small
_DEPTH_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")


def _check_depth(data: dict[str, object], source: str, prefix: str = "") -> None:
    """Refuse a config deeper than :data:`MAX_LAYERS` by the key it gives, before anything is built
    (``prefix``: the path of a nested language-model config, ``text_config.``)."""
    for key in _DEPTH_KEYS:
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > MAX_LAYERS:
            raise InputError(f"{FIELD}.{prefix}{key}", value, f"at most {MAX_LAYERS:,} transformer blocks ({source})")
MAX_PARAMS = 1e13  # as sizer.workloads.decoder_shape.MAX_GENERATED_PARAMS


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
    return architecture_from_config(data, name=config_name(data, path), source=f"Hugging Face config {path}")


HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


def config_name(data: dict[str, Any], path: Path) -> str:
    """The name of the model a ``config.json`` at ``path`` describes: its ``_name_or_path`` where that is a
    hub id (``org/name``), else the file's stem where it is one spelled ``org--name`` (how copies of hub
    configs are saved), else the folder holding the file. A local path in ``_name_or_path``
    (``/opt/ckpts/...``) or a bare name is not a hub id.

    Parameters
    ----------
    data : dict of str to Any
        The parsed config.
    path : Path
        Where it was read from.

    Returns
    -------
    str
        The name, e.g. ``"Qwen/Qwen3-32B"``.

    >>> config_name({"_name_or_path": "/opt/ckpts/Llama-3.1-70B/"}, Path("nvidia--Llama-3.1-70B-FP8.json"))
    'nvidia/Llama-3.1-70B-FP8'
    """
    declared = data.get("_name_or_path")
    if isinstance(declared, str) and HUB_ID.fullmatch(declared):
        return declared
    org, dashes, model = path.stem.partition("--")
    if dashes and HUB_ID.fullmatch(f"{org}/{model}"):
        return f"{org}/{model}"
    return path.parent.name or path.name
