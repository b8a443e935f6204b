"""GGUF, llama.cpp's file format, as llama-quantize writes it: the type of every tensor of a quantisation mix, and its bytes.

A GGUF "mix" (Q4_K_M, Q3_K_S, Q4_0 ...) is not one type: llama-quantize keeps 1-D tensors (norms,
biases) in F32, gives the output head Q6_K, and raises chosen tensors of chosen layers (``attn_v``,
``ffn_down``) to a wider type, by the rules of ``llama_tensor_get_type_impl``. A tensor whose row
length is not a multiple of its type's block falls back to a legacy type. Each type stores blocks of
weights with their scales; its bits per weight include them (Q4_K: 144 bytes per 256 weights, 4.5
bits). Summing every tensor reproduces published file sizes within 2 %
(``tests/sizer/serving/test_gguf.py``).

Sources: block sizes from llama.cpp ``ggml/src/ggml-common.h`` @ 01243c58; the mix rules from
``src/llama-quant.cpp`` @ 007dbbf3 (both transcribed in ``../shared/data/gguf-quant-types.csv`` and
``gguf-mix-rules.csv``). The rules are those of a recent llama.cpp; older releases differ slightly.

>>> from sizer.workloads.registry import find_model
>>> round(gguf_bytes(find_model("llama-3-8b"), "Q4_K_M") / 1e9, 2)  # published: 4,920,733,984 bytes
4.92
"""
from __future__ import annotations

from dataclasses import dataclass

from sizer.errors import InputError
from sizer.memo import registered_cache
from sizer.workloads.architecture import GATED_FFN, Architecture

GGML_SOURCE = "llama.cpp ggml/src/ggml-common.h @ 01243c58 (block layouts); src/llama-quant.cpp @ 007dbbf3 (mix rules)"

# ggml type -> (weights per block, bytes per block), ggml-common.h static_asserts
GGML_BLOCKS: dict[str, tuple[int, int]] = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2),
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210),
    "IQ4_NL": (32, 18), "IQ4_XS": (256, 136), "IQ3_S": (256, 110), "IQ3_XXS": (256, 98), "MXFP4": (32, 17),
}

# mix -> the type most of its matrices get (llama_ftype_get_default_type)
MIX_DEFAULT: dict[str, str] = {
    "Q4_0": "Q4_0", "Q4_1": "Q4_1", "Q5_0": "Q5_0", "Q5_1": "Q5_1", "Q8_0": "Q8_0", "F16": "F16", "BF16": "BF16",
    "F32": "F32", "Q2_K": "Q2_K", "Q3_K_S": "Q3_K", "Q3_K_M": "Q3_K", "Q3_K_L": "Q3_K", "Q4_K_S": "Q4_K",
    "Q4_K_M": "Q4_K", "Q5_K_S": "Q5_K", "Q5_K_M": "Q5_K", "Q6_K": "Q6_K", "IQ4_NL": "IQ4_NL", "IQ4_XS": "IQ4_XS",
}

GGUF_MIXES = ("Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q5_1", "Q5_0", "Q4_K_M", "Q4_K_S", "Q4_1", "Q4_0", "IQ4_XS",
              "IQ4_NL", "Q3_K_L", "Q3_K_M", "Q3_K_S", "Q2_K")  # the mixes sizer models, widest first
# The mixes a data-centre engine loads from a GGUF file as sizer describes it: vLLM's experimental GGUF support (vLLM
# docs 'GGUF'; recalled, not in a data file), kept to the three mixes its examples use; its launch emitter reads this too
VLLM_MIXES = frozenset(mix.lower() for mix in ("Q4_0", "Q4_K_M", "Q8_0"))

# tensor_type_fallback(): the type a tensor gets when its rows are not a whole number of blocks
_FALLBACK = {"Q2_K": "Q4_0", "Q3_K": "Q4_0", "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0",
             "IQ4_XS": "IQ4_NL", "IQ3_S": "IQ4_NL", "IQ3_XXS": "IQ4_NL"}

_UNQUANTISED = ("F32", "F16", "BF16")


def bits_per_weight(ggml_type: str) -> float:
    """Bits per weight of a ggml type, block scales included: ``8 x bytes per block / weights per block``.

    Parameters
    ----------
    ggml_type : str
        A ggml type of :data:`GGML_BLOCKS` (``"Q4_K"``, ``"Q8_0"``, ``"F16"`` ...).

    Returns
    -------
    float
        Stored bits per weight [bit].

    >>> bits_per_weight("Q4_K"), bits_per_weight("Q6_K")
    (4.5, 6.5625)
    """
    weights, size = GGML_BLOCKS[ggml_type]
    return 8.0 * size / weights


def use_more_bits(layer: int, layers: int) -> bool:
    """llama-quantize's choice of layers that get more bits: the first and last eighth, and every third between.

    Parameters
    ----------
    layer : int
        The block, counted from 0 [1].
    layers : int
        Blocks in the model [1].

    Returns
    -------
    bool
        True where the mix stores this block's chosen tensors at the wider type.
    """
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


@dataclass(frozen=True)
class Tensor:
    """One stored tensor: its role, shape (row length ``columns`` x ``rows``) and ggml type."""

    role: str
    columns: int
    rows: int
    ggml_type: str

    @property
    def weights(self) -> int:
        """Weights in the tensor [1]: columns times rows (experts folded into the rows).
        """
        return self.columns * self.rows

    @property
    def bytes(self) -> float:
        """Stored bytes [B]: whole blocks of the type."""
        per_block, size = GGML_BLOCKS[self.ggml_type]
        return self.weights / per_block * size


def _fits_blocks(ggml_type: str, columns: int) -> str:
    per_block = GGML_BLOCKS[ggml_type][0]
    return ggml_type if columns % per_block == 0 else _FALLBACK.get(ggml_type, "F16")


def _output_type(mix: str) -> str:
    return mix if mix in _UNQUANTISED else ("Q8_0" if mix == "Q8_0" else "Q6_K")


def _attn_v_type(mix: str, default: str, layer: int, arch: Architecture) -> str:
    gqa = arch.heads // max(arch.kv_heads, 1)
    t = default
    if mix == "Q2_K":
        t = "Q4_K" if gqa >= 4 else "Q3_K"
    elif mix == "Q3_K_M":
        t = "Q5_K" if layer < 2 else "Q4_K"
    elif mix == "Q3_K_L":
        t = "Q5_K"
    elif mix in ("IQ4_NL", "IQ4_XS") and gqa >= 4:
        t = "Q5_K"
    elif mix in ("Q4_K_M", "Q5_K_M") and use_more_bits(layer, arch.layers):
        t = "Q6_K"
    elif mix == "Q4_K_S" and layer < 4:
        t = "Q5_K"
    if arch.layers == 80 and t in ("Q3_K", "Q4_K"):  # llama.cpp's 70B type: attn_v is 8x smaller than attn_q
        t = "Q5_K"
    if arch.experts == 8:
        t = "Q8_0"
    return t


def _ffn_down_type(mix: str, default: str, layer: int, layers: int, imatrix: bool) -> str:
    if mix == "Q2_K":
        return "Q3_K"
    if mix == "Q3_K_M":
        return "Q5_K" if layer < layers // 16 else "Q4_K"
    if mix == "Q3_K_L":
        return "Q5_K"
    if mix in ("Q4_K_M", "Q5_K_M") and use_more_bits(layer, layers):
        return "Q6_K"
    if mix == "Q4_K_S" and layer < layers // 8:
        return "Q5_K"
    if mix in ("IQ4_NL", "IQ4_XS") and layer < layers // 8 and not imatrix:
        return "Q5_K"
    return default


def _attn_output_type(mix: str, default: str, arch: Architecture) -> str:
    if arch.experts == 8:
        return "Q5_K" if mix in ("Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ4_XS") else default
    return {"Q2_K": "Q3_K", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K"}.get(mix, default)


def check_mix(mix: str, field: str = "weights") -> str:
    """The mix's canonical name (upper case), or InputError listing those modelled.

    Parameters
    ----------
    mix : str
        A GGUF mix as a user typed it (``"q4_k_m"``, ``"Q4-K-M"``).
    field : str, default ``"weights"``
        The input field, named in an error.

    Returns
    -------
    str
        The canonical name, e.g. ``"Q4_K_M"``.

    Raises
    ------
    InputError
        A mix that is not modelled; the message lists those that are.
    """
    key = mix.strip().upper().replace("-", "_") if isinstance(mix, str) else ""
    if key not in MIX_DEFAULT:
        raise InputError(field, mix, f"a GGUF mix of {', '.join(MIX_DEFAULT)}")
    return key


# A model whose published checkpoint holds its experts in MXFP4 (gpt-oss) keeps them so in the GGUF files people
# download: unsloth/gpt-oss-20b-GGUF's Q2_K to Q5_K_M are all 11.5-11.7 GB ("MoE experts stay MXFP4"), while a Q8_0
# that re-quantised them is 22.3 GB (DevQuasar), ../shared/data/gguf-file-sizes.csv. llama-quantize alone would
# re-quantise them (no such rule in llama-quant.cpp): the published files' choice is modelled, Q8_0 excepted.
MXFP4_EXPERTS_REQUANTISED = frozenset({"Q8_0"})


def _experts_stay_mxfp4(arch: Architecture, mix: str) -> bool:
    """Whether ``arch``'s expert matrices keep their published MXFP4 in ``mix`` (:data:`MXFP4_EXPERTS_REQUANTISED`)."""
    if not arch.moe or mix in MXFP4_EXPERTS_REQUANTISED or mix in _UNQUANTISED:
        return False
    from sizer.workloads.registry import checkpoint_weights  # the registry's model entries; imported where needed

    try:
        return checkpoint_weights(arch.name) == "mxfp4"
    except (InputError, LookupError):  # a model from a config file or a parameter count: no published checkpoint
        return False


def gguf_tensors(arch: Architecture, mix: str, imatrix: bool = False) -> list[Tensor]:
    """Every tensor llama-quantize writes for a dense or mixture decoder in ``mix``, with its type.

    Parameters
    ----------
    arch : Architecture
        The model (layers, widths, heads, vocabulary, tied embeddings, experts).
    mix : str
        The llama-quantize mix (``Q4_K_M``, ``Q8_0`` ...).
    imatrix : bool
        Quantised with an importance matrix (changes IQ4 mixes' first ffn_down layers only).

    Returns
    -------
    list of Tensor
        Token embedding, per-layer attention and feed-forward matrices, norms and biases (F32), output head.
    """
    mix = check_mix(mix)
    default = MIX_DEFAULT[mix]
    h, d = arch.hidden, arch.head_size
    q_width, kv_width = arch.heads * d, arch.kv_heads * d
    out = [Tensor("token_embd", h, arch.vocab, _fits_blocks(default if arch.tied_embeddings is False else
                                                              _output_type(mix), h))]
    if not arch.tied_embeddings:
        out.append(Tensor("output", h, arch.vocab, _fits_blocks(_output_type(mix), h)))
    out.append(Tensor("output_norm", h, 1, "F32"))
    ffn = arch.expert_width if arch.moe else arch.ffn_hidden
    gated = arch.ffn_type in GATED_FFN  # gelu/relu FFNs have no gate matrix
    mxfp4_experts = _experts_stay_mxfp4(arch, mix)
    for layer in range(arch.layers):
        v_type = _attn_v_type(mix, default, layer, arch)
        k_type = "Q8_0" if arch.experts == 8 and mix not in _UNQUANTISED else default
        down = _ffn_down_type(mix, default, layer, arch.layers, imatrix)
        experts = arch.experts if arch.moe and arch.is_moe_block(layer) else 1
        width = ffn if experts > 1 else arch.ffn_hidden
        up = down_type = None
        if experts > 1 and mxfp4_experts:
            up = down_type = "MXFP4"
        out += [Tensor("attn_q", h, q_width, _fits_blocks(default, h)),
                Tensor("attn_k", h, kv_width, _fits_blocks(k_type, h)),
                Tensor("attn_v", h, kv_width, _fits_blocks(v_type, h)),
                Tensor("attn_output", q_width, h, _fits_blocks(_attn_output_type(mix, default, arch), q_width)),
                Tensor("ffn_up", h, width * experts, up or _fits_blocks(default, h)),
                Tensor("ffn_down", width, h * experts, down_type or _fits_blocks(down, width)),
                Tensor("norms", h, arch.norms_per_block, "F32")]
        if gated:
            out.append(Tensor("ffn_gate", h, width * experts, up or _fits_blocks(default, h)))
        if experts > 1:
            out.append(Tensor("ffn_gate_inp", h, arch.experts, "F32"))
        if arch.attention_bias:
            out.append(Tensor("attn_qkv_bias", q_width + 2 * kv_width, 1, "F32"))
    return out


@registered_cache()
def gguf_bytes(arch: Architecture, mix: str, imatrix: bool = False) -> float:
    """Bytes of the tensors of a GGUF file of ``arch`` in ``mix`` [B] (the file adds its metadata:
    the tokenizer, a few MB).

    .. math:: S = \\sum_t n_t \\, b_t / w_t

    ``n_t`` weights of tensor t, ``b_t`` bytes per block of its type, ``w_t`` weights per block.

    Parameters
    ----------
    arch : Architecture
        The model.
    mix : str
        A canonical GGUF mix (:func:`check_mix`).
    imatrix : bool, default False
        Whether the file was quantised with an importance matrix (changes some low-bit choices).

    Returns
    -------
    float
        Bytes of the file's tensors [B].
    """
    return float(sum(t.bytes for t in gguf_tensors(arch, mix, imatrix)))
