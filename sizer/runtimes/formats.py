"""How weights and the KV cache are stored when serving: bits per value, with sources.

Quantised formats store blocks of low-bit integers with a scale (and sometimes a zero point)
per block; their effective bits per weight include those. A weight-only format (int8, int4,
GGUF, GPTQ, AWQ) is dequantised to 16 bits for the matrix products (W4A16/W8A16 kernels), so it
computes at the device's 16-bit rate. A weight-and-activation format (``activations``: fp8, W8A8 FP8
E4M3; w8a8, SmoothQuant int8) runs its matrix products at the device's fp8 or int8 peak, and only
where the catalog has that peak: elsewhere it is refused, naming the field (its kernels need the
units). GPTQ, AWQ and GGUF files keep the token embeddings and the output
head at 16 bits (``edges_16bit``): about 10 % of a 7B model's bytes at 4 bits. MXFP4 quantises only a
mixture's routed experts, as OpenAI ships gpt-oss (docs/references.md [ocp-mx], [openai2025gptoss]).

>>> weight_format("q4_0").bits, weight_format("GPTQ-int4-g128").bits
(4.5, 4.15625)
>>> kv_cache_bytes_per_value("fp8")
1.0
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sizer.choices import GGML_KV_CACHES, KvCache, Precision, entry_named, parse_choice
from sizer.errors import InputError, WrittenByName
from sizer.runtimes.gguf import GGML_SOURCE, GGUF_MIXES, MIX_DEFAULT, bits_per_weight
from sizer.workloads.checkpoint import GROUPED

BITS_PER_BYTE = 8


@dataclass(frozen=True)
class WeightFormat(WrittenByName):
    """A storage format of the weights: effective bits per weight, compute precision, source."""

    name: str
    bits: float
    compute: Precision | Literal["int8"]  # the precision the matrix products run at (int8: W8A8 serving only)
    source: str
    edges_16bit: bool = False  # embeddings and output head stored at 16 bits (GPTQ, AWQ, GGUF files)
    activations: bool = False  # activations quantised too (W8A8): needs the compute peak, no 16-bit fallback
    experts_only: bool = False  # a mixture keeps only its routed experts in the format, the rest at 16 bits (gpt-oss)
    gguf_mix: str | None = None  # a llama-quantize mix: each tensor's own type (sizer.runtimes.gguf), ``bits`` its default

    @property
    def bytes_per_weight(self) -> float:
        """Bytes per weight [B]: the effective bits over 8."""
        return self.bits / BITS_PER_BYTE


def group_quantised_bits(bits: int, group: int, scale_bits: int = 16, zero_bits: int = 0) -> float:
    """Effective bits per weight of a group-quantised format: ``b + (s + z) / g``.

    ``bits`` b per weight, one ``scale_bits`` s scale and one ``zero_bits`` z zero point per
    ``group`` g weights.

    Parameters
    ----------
    bits : int
        Bits of each quantised weight, b [bit].
    group : int
        Weights sharing one scale, g [1].
    scale_bits : int
        Bits of the group's scale, s [bit].
    zero_bits : int
        Bits of the group's zero point, z [bit] (0: symmetric).

    Returns
    -------
    float
        Effective bits per weight [bit].

    >>> group_quantised_bits(4, 32)  # GGUF Q4_0: 32 four-bit weights and one fp16 scale
    4.5
    """
    return bits + (scale_bits + zero_bits) / group


_GGML = "ggml/src/ggml-common.h (ggml-org/llama.cpp): "
def _gguf_format(mix: str) -> WeightFormat:
    """A llama-quantize mix as a weight format: stored tensor by tensor (:func:`sizer.runtimes.gguf.gguf_tensors`)."""
    default = MIX_DEFAULT[mix]
    return WeightFormat(mix.lower(), bits_per_weight(default), Precision.MIXED,
                        f"GGUF {mix}: most matrices {default} ({bits_per_weight(default):g} bits with block scales), "
                        f"the output head and chosen attn_v/ffn_down layers wider, norms F32 ({GGML_SOURCE})",
                        edges_16bit=True, gguf_mix=mix)
_GPTQ = ("AutoGPTQ/GPTQModel packing (Frantar et al. 2022, GPTQ): 4-bit weights, one fp16 scale and one "
         "4-bit zero point per group of {g}")
_MLX = ("MLX affine quantisation (ml-explore/mlx mlx.core.quantize): {b}-bit weights with an fp16 scale and an fp16 "
        "bias per group of {g}; mlx-lm quantises the embedding and output head alike")
MLX_FORMATS = {f"mlx-q{b}" + ("" if g == 64 else f"-g{g}"): (b, g) for b in (4, 5, 6, 8) for g in (64, 32)}
_AWQ = "AutoAWQ GEMM packing (Lin et al. 2023, AWQ): 4-bit weights, one fp16 scale and one 4-bit zero per group of {g}"
WEIGHT_FORMATS: dict[str, WeightFormat] = {f.name: f for f in (
    WeightFormat("fp32", 32.0, Precision.FP32, "IEEE 754 single precision"),
    WeightFormat("bf16", 16.0, Precision.BF16, "bfloat16: 16 bits"),
    WeightFormat("fp16", 16.0, Precision.FP16, "IEEE 754 half precision"),
    WeightFormat("fp8", 8.0, Precision.FP8, "W8A8 FP8: weights and activations in FP8 E4M3 with per-tensor scales "
                                    "(Micikevicius et al. 2022, 'FP8 formats for deep learning'); the scales are "
                                    "negligible; matrix products at the FP8 peak", activations=True),
    WeightFormat("w8a8", 8.0, "int8", "SmoothQuant W8A8 (Xiao et al. 2023, 'SmoothQuant'): int8 weights with a scale "
                                      "per output channel and int8 activations with a scale per token (negligible); "
                                      "matrix products at the int8 tensor peak", activations=True),
    WeightFormat("int8", 8.0, Precision.MIXED, "int8 weight-only, one scale per output channel (negligible); computed in 16 bits"),
    WeightFormat("int4", 4.0, Precision.MIXED, "int4 weight-only, scales neglected: 0.5 B per parameter as in Hugging Face's "
                                       "Llama 3.1 memory table (70B: 35 GB); computed in 16 bits"),
    *(_gguf_format(mix) for mix in GGUF_MIXES),
    *(WeightFormat(f"gptq-int4-g{g}", group_quantised_bits(4, g, 16, 4), Precision.MIXED, _GPTQ.format(g=g), True) for g in GROUPED["gptq"]),
    *(WeightFormat(f"awq-int4-g{g}", group_quantised_bits(4, g, 16, 4), Precision.MIXED, _AWQ.format(g=g), True) for g in GROUPED["awq"]),
    *(WeightFormat(name, group_quantised_bits(b, g, 16, 16), Precision.MIXED, _MLX.format(b=b, g=g))
      for name, (b, g) in MLX_FORMATS.items()),
    WeightFormat("int4-g32", group_quantised_bits(4, 32, 16), Precision.MIXED,
                 "compressed-tensors W4A16 'pack-quantized' (neuralmagic/compressed-tensors): symmetric 4-bit integers "
                 "with one bf16 scale per 32 = 4.5 bits; as Moonshot ships Kimi K2.5 (its quantization_config ignores "
                 "lm_head, self_attn, shared_experts and the dense MLPs), a mixture keeps only its routed experts in "
                 "the format (a dense model all but its embeddings and head); dequantised to 16 bits for the matrix "
                 "products", edges_16bit=True, experts_only=True),
    WeightFormat("mxfp4", group_quantised_bits(4, 32, 8), Precision.MIXED,
                 "OCP Microscaling (MX) Formats Specification v1.0 (2023): FP4 E2M1 values with one E8M0 scale per 32 "
                 "= 4.25 bits; as OpenAI ships gpt-oss (model card: the MoE weights in MXFP4, the rest in BF16), a "
                 "mixture keeps only its routed experts in MXFP4 (a dense model all but its embeddings and head); "
                 "dequantised to 16 bits for the matrix products", edges_16bit=True, experts_only=True),
    WeightFormat("nvfp4", group_quantised_bits(4, 16, 8), Precision.FP4,
                 "NVIDIA NVFP4: FP4 E2M1 values with an FP8 E4M3 scale per 16 = 4.5 bits (NVIDIA technical blog "
                 "'Introducing NVFP4', 2025); matrix products at the FP4 peak where the device has FP4 tensor cores "
                 "(Blackwell) and the engine runs NVFP4 GEMMs there, with the activations quantised at run time and "
                 "the block scales applied (sizer/engine/constants.py SERVING_FP4_OVERHEAD); elsewhere weight-only, "
                 "dequantised to 16 bits (vLLM's FP4 Marlin W4A16; which engine runs what where: "
                 "sizer/runtimes/precision_support.py)"),
)}
# Common spellings of the same formats.
_ALIASES = {"float32": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "gptq": "gptq-int4-g128",
            "awq": "awq-int4-g128", "gptq-int4": "gptq-int4-g128", "awq-int4": "awq-int4-g128", "q4-k-m": "q4_k_m",
            "q4km": "q4_k_m", "q4-0": "q4_0", "q8-0": "q8_0",
            "w8a8-fp8": "fp8", "fp8-w8a8": "fp8", "fp8-e4m3": "fp8", "w8a8-int8": "w8a8", "int8-w8a8": "w8a8",
            "smoothquant": "w8a8"}

# ggml's q8_0 and q4_0 blocks: 34 and 18 bytes per 32 values (../shared/data/gguf-quant-types.csv, ggml-common.h)
KV_CACHE_BYTES: dict[KvCache, float] = {KvCache.FP32: 4.0, KvCache.BF16: 2.0, KvCache.FP16: 2.0, KvCache.FP8: 1.0,
                                         KvCache.INT8: 1.0, KvCache.Q8_0: 34 / 32, KvCache.Q4_0: 18 / 32}


def weight_format(name: str, field: str = "weights") -> WeightFormat:
    """The weight format called ``name`` (any case; ``gptq-g128`` and ``GPTQ-int4-g128`` alike).

    Parameters
    ----------
    name : str
        The format's name or a common spelling (``half``, ``awq``, ``Q4_K_M``).
    field : str
        The request field named in an error.

    Returns
    -------
    WeightFormat
        The format; InputError listing the known ones for an unknown name.
    """
    key = name.strip().lower().replace(" ", "") if isinstance(name, str) and len(name) <= 40 else None
    if key is not None:
        key = _ALIASES.get(key, key)
        key = _ALIASES.get(key.replace("_", "-"), key)
        key = key.replace("gptq-g", "gptq-int4-g").replace("awq-g", "awq-int4-g")
        if key.replace("-", "_") in WEIGHT_FORMATS:  # GGUF mixes: q5-k-m, Q5_K_M
            key = key.replace("-", "_")
    if key not in WEIGHT_FORMATS:
        raise InputError(field, name, f"one of {', '.join(WEIGHT_FORMATS)}")
    return WEIGHT_FORMATS[key]


def kv_cache_bytes_per_value(name: str, field: str = "kv_cache") -> float:
    """Bytes per stored key or value element of the KV cache.

    Parameters
    ----------
    name : str
        The KV-cache format (fp32, bf16, fp16, fp8, int8, q8_0, q4_0; any case).
    field : str
        The request field named in an error.

    Returns
    -------
    float
        Bytes per value [B]; InputError listing the formats for an unknown name.
    """
    return KV_CACHE_BYTES[parse_choice(KvCache, name, field)]  # every member has its bytes


def ggml_kv_refusal(kv: KvCache) -> str | None:
    """What a data-centre engine stores instead of llama.cpp's ggml KV blocks, as a refusal's expected text (None for
    any other type).

    Parameters
    ----------
    kv : KvCache
        The KV-cache type asked.

    Returns
    -------
    str or None
        The types the data-centre engines store and why ``kv`` is not one; None where it is.
    """
    if kv not in GGML_KV_CACHES:
        return None
    others = [k.value for k in KvCache if k not in GGML_KV_CACHES]
    return (f"{', '.join(others[:-1])} or {others[-1]}: {' and '.join(sorted(k.value for k in GGML_KV_CACHES))} are "
            "llama.cpp's KV-cache blocks, for one machine's llama.cpp (GGUF weights such as q4_k_m, or runtime "
            "llama.cpp, in sizer inference)")


# A request's weight format: any spelling weight_format reads, found where the request is built; the field holds the
# WeightFormat (written as its canonical name).
if TYPE_CHECKING:
    WeightsName = WeightFormat
else:
    WeightsName = entry_named(WeightFormat, weight_format)


def quality_note(fmt: WeightFormat) -> str | None:
    """A word on accuracy for weights stored below 8 bits (None at 8 bits and above).

    Parameters
    ----------
    fmt : WeightFormat
        The weight format of a ranked row; its ``bits`` per weight [bit].

    Returns
    -------
    str or None
    """
    if fmt.bits >= 8:
        return None
    return (f"{fmt.name} stores weights at {fmt.bits:.3g} bits: 4-bit weight-only quantisation (AWQ, GPTQ) "
            "typically costs a point or a few of benchmark accuracy, more on small models and hard reasoning or "
            "code tasks; check on your own evaluations before serving (Lin et al. 2023, AWQ; Frantar et al. 2022)")
