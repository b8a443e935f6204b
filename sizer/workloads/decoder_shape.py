"""A decoder shape from a bare parameter count: the Llama-style decoder a count alone stands for
(:func:`decoder_for_params`), so that ``--params`` runs on a generated layer graph as a named model does.

Apart from :mod:`sizer.workloads.registry` (models by name), which a question naming no model never reads:
building its models and reading ``catalog/models.yaml`` is no part of a bare count's answer.

>>> arch, why = decoder_for_params(13e9)
>>> arch.layers, arch.heads, arch.kv_heads
(40, 40, 40)
"""
from __future__ import annotations

import math
from dataclasses import replace

from sizer.errors import InputError
from sizer.memo import registered_cache
from sizer.workloads.architecture import MAX_BLOCKS, Architecture

GENERATED_VOCAB = 32000  # Llama 1/2's SentencePiece vocabulary (Touvron et al. 2023)
GENERATED_HEAD_DIM = 128
MIN_GENERATED_PARAMS = 1e6
FFN_MULTIPLE = 256  # Llama's ``multiple_of`` (meta-llama/llama model.py FeedForward)
# Published models the depth rule is fitted to: Llama 1, Llama 2 and Llama 3.1 405B (the style generated).
DEPTH_FIT_MODELS = ("llama-7b", "llama-13b", "llama-33b", "llama-65b", "llama-2-7b", "llama-2-13b", "llama-2-70b",
                    "llama-3.1-405b")
# Least-squares fit of ln L = ln DEPTH_COEFFICIENT + DEPTH_EXPONENT ln P over DEPTH_FIT_MODELS
# (reproduced by tests/sizer/workloads/test_decoder_shape.py::test_depth_rule_is_the_fit_to_llama).
DEPTH_COEFFICIENT = 0.01111
DEPTH_EXPONENT = 0.3530


def generated_layers(params: float) -> int:
    """Depth of a generated decoder: ``L = round(c · P^e)``, at least 1, with c and e fitted to
    the Llama family (:data:`DEPTH_FIT_MODELS`).

    Parameters
    ----------
    params : float
        Parameters P [1].

    Returns
    -------
    int
        Blocks L [1], at least 1.

    >>> generated_layers(7e9), generated_layers(70e9)  # Llama 2: 32 and 80
    (33, 75)
    """
    depth: float = DEPTH_COEFFICIENT * params ** DEPTH_EXPONENT
    return max(1, round(depth))


def generated_width(params: float, layers: int, vocab: int = GENERATED_VOCAB) -> float:
    """Width ``d`` (continuous) from ``P = 12·L·d² + 2·V·d``: four d×d attention matrices and a
    SwiGLU FFN of 8d/3 (3 × 8d²/3 = 8d²) per block, untied input and output embeddings
    (docs/references.md [kaplan], eq. 2.1 plus the embeddings).

    Parameters
    ----------
    params : float
        Parameters P [1].
    layers : int
        Blocks L [1].
    vocab : int, default 32000
        Vocabulary V [1].

    Returns
    -------
    float
        Width d [1], not yet rounded to whole heads.
    """
    a, b = 12.0 * layers, 2.0 * vocab
    return (-b + math.sqrt(b * b + 4.0 * a * params)) / (2.0 * a)


MAX_GENERATED_PARAMS = 1e13  # above every published dense model (~1e12) by 10x: a larger count is refused up front
GQA_FROM_PARAMS = 3e10  # grouped-query attention with 8 KV heads from here up (Llama 2 34B/70B, Llama 3 8B+)
GQA_KV_HEADS = 8
HEADS_MULTIPLE = 8  # heads a multiple of 8, so tensor parallelism up to 8 (an NVLink node) divides them
LAYERS_MULTIPLE = 4  # layers a multiple of 4, so pipelines of 2 and 4 stages divide them
FFN_RATIO = (2.0, 4.0)  # SwiGLU FFN width over model width: Llama 2.7-3.5, kept within this band
# The FFN ratio aimed at: Llama 2 7B/13B's 11008/4096 ~ 8/3 with multi-head attention, Llama 2 70B's and
# Llama 3 70B's 28672/8192 = 3.5 with grouped-query attention (Touvron et al. 2023, Table 1; Llama 3 config.json)
FFN_RATIO_MHA, FFN_RATIO_GQA = 8 / 3, 3.5


def _head_dim(width: float) -> int:
    """128 (Llama, GPT-3 XL and up) from a width of 2048; 64 (GPT-2, GPT-3 Small-Large) from 512;
    below, the power of two that leaves 8 heads."""
    if width >= 2048:
        return GENERATED_HEAD_DIM
    if width >= 512:
        return 64
    return int(max(2, 2 ** math.floor(math.log2(max(width, 16.0) / HEADS_MULTIPLE))))


def _ffn_multiple(ffn: float) -> int:
    """Llama's 256 (``multiple_of``) for FFNs of 2048 and more; 32 below, so small models keep their count."""
    return FFN_MULTIPLE if ffn >= 2048 else 32


def _shape(params: float, layers: int, heads: int, head_dim: int, kv_heads: int) -> tuple[int, float]:
    """(FFN width, parameters) of the decoder of this depth and width whose SwiGLU FFN takes up the rest of ``params``."""
    hidden = heads * head_dim
    rest = params - _shape_params(layers, heads, head_dim, kv_heads, 1) + 3 * hidden * layers  # all but the FFN matrices
    ffn = max(1.0, rest / (3 * hidden * layers))
    step = _ffn_multiple(ffn)
    ffn = max(step, int(round(ffn / step) * step))
    return ffn, _shape_params(layers, heads, head_dim, kv_heads, ffn)


# A shape's parameter count, kept: nearby counts try the same few shapes (a new question costs no
# Architecture built per candidate); at most a few hundred floats.
@registered_cache()
def _shape_params(layers: int, heads: int, head_dim: int, kv_heads: int, ffn: int) -> float:
    return _probe(layers, heads * head_dim, heads, head_dim, kv_heads, ffn).params_total()


def _probe(layers: int, hidden: int, heads: int, head_dim: int, kv_heads: int, ffn: int) -> Architecture:
    """The generated decoder of this shape before it is named (a candidate's count needs no name)."""
    return Architecture(
        name="decoder", family="decoder", layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
        ffn_hidden=ffn, ffn_type="swiglu", vocab=GENERATED_VOCAB, max_context=4096, tied_embeddings=False,
        norm="rmsnorm", position="rotary", head_dim=head_dim,
        source="generated by sizer.workloads.decoder_shape.decoder_for_params (shaped like Llama 1/2/3)", verified=False)


@registered_cache()
def _decoder(layers: int, hidden: int, heads: int, head_dim: int, kv_heads: int, ffn: int) -> Architecture:
    """The generated decoder of this shape, named by its own parameter count: equal shapes are equal
    architectures (one layer graph and one layout search for every count that gives them)."""
    probe = _probe(layers, hidden, heads, head_dim, kv_heads, ffn)
    return replace(probe, name=f"decoder-{probe.params_total():.4g}")


@registered_cache()  # asked twice per job: its batch default and its layers
def decoder_for_params(params: float) -> tuple[Architecture, str]:
    """A decoder shaped like the published Llama models whose parameter count is within 3 % of
    ``params``, and the sentence that states it.

    Depth about :func:`generated_layers` (a multiple of 4), width about :func:`generated_width`
    as heads x head dimension (128 from a width of 1024, heads a multiple of 8, so tensor
    parallelism of 2, 4 and 8 divides them), grouped-query attention with 8 KV heads from 3e10
    parameters up (Llama 2 70B, Llama 3), a SwiGLU FFN of 2-4 x the width (a multiple of 256)
    taking up the rest of ``P``; vocabulary 32000 untied, RMSNorm, rotary positions. Among the
    nearby depths and widths (heads of 64 too near a width of 2048, as GPT-3 Small-Large), the one
    closest to ``params`` is kept; below about 2e8 the vocabulary dominates and the FFN ratio departs.

    Parameters
    ----------
    params : float
        Parameters P [1], from :data:`MIN_GENERATED_PARAMS` to :data:`MAX_GENERATED_PARAMS`.

    Returns
    -------
    tuple of (Architecture, str)
        The decoder, and a sentence stating its shape and where the shape comes from.

    Raises
    ------
    InputError
        A count out of range.

    >>> arch, why = decoder_for_params(7e9)
    >>> arch.layers, arch.hidden, arch.heads, arch.ffn_hidden
    (32, 4096, 32, 11776)
    """
    if params < MIN_GENERATED_PARAMS:
        raise InputError("params", params, f"at least {MIN_GENERATED_PARAMS:.0e} parameters for a generated "
                                           f"transformer shape (its {GENERATED_VOCAB}-token embeddings alone "
                                           f"take {2 * GENERATED_VOCAB} per unit of width)")
    if params > MAX_GENERATED_PARAMS:
        raise InputError("params", params, f"at most {MAX_GENERATED_PARAMS:.0e} parameters for a generated transformer "
                                           f"(deeper than {MAX_BLOCKS:,} blocks otherwise); give a model or a "
                                           "config.json for larger shapes")
    depth = generated_layers(params)
    width = generated_width(params, depth)
    base = max(1, round(depth / LAYERS_MULTIPLE))
    depths = sorted({LAYERS_MULTIPLE * max(1, base + k) for k in (-1, 0, 1)})
    # heads of the width's head size, and of half of it near a boundary, where 8 heads of it are coarse
    head_dims = {_head_dim(width), _head_dim(max(width / 2, 512))}
    options = sorted({(HEADS_MULTIPLE * max(1, math.floor(width / (HEADS_MULTIPLE * hd)) + k), hd)
                      for hd in head_dims for k in (-1, 0, 1, 2)})
    best, best_key = None, None
    for layers in depths:
        for heads, head_dim in options:
            kv = GQA_KV_HEADS if params >= GQA_FROM_PARAMS else heads
            ffn, total = _shape(params, layers, heads, head_dim, kv)
            error = abs(total / params - 1)
            ratio = ffn / (heads * head_dim)
            off_band = max(0.0, FFN_RATIO[0] - ratio, ratio - FFN_RATIO[1])
            # within 1 % every candidate counts alike: then the proportions closest to Llama's decide
            aim = FFN_RATIO_GQA if kv != heads else FFN_RATIO_MHA
            key = (off_band > 0, max(error, 0.01), abs(math.log(ratio / aim)) + abs(math.log(layers / depth)))
            if best_key is None or key < best_key:
                best, best_key = (layers, heads * head_dim, heads, head_dim, kv, ffn), key
    assert best is not None  # depths and options are never empty, so some shape was kept
    arch = _decoder(*best)
    gqa = f", {arch.kv_heads} KV heads (grouped-query)" if arch.kv_heads != arch.heads else ""
    why = (f"a {params:.3g}-parameter Llama-style decoder: {arch.layers} layers, width {arch.hidden}, {arch.heads} heads "
           f"of {arch.head_size}{gqa}, SwiGLU FFN {arch.ffn_hidden}, vocabulary {GENERATED_VOCAB} untied "
           f"({arch.params_total():.4g} parameters); depth near L = {DEPTH_COEFFICIENT} P^{DEPTH_EXPONENT} fitted to "
           f"Llama 1/2/3.1 (a multiple of {LAYERS_MULTIPLE}), heads a multiple of {HEADS_MULTIPLE}, width from "
           f"P = 12 L d^2 + 2 V d")
    return arch, why
