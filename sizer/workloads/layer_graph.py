"""The layer graph of a transformer, generated from its architecture: the per-layer description
(a :class:`~sizer.workloads.profile.Profile`) that the time engine consumes, in the same form as the
torch-profiled workloads of ``catalog/workloads/``.

One sample is one sequence of ``seq_len`` tokens (``Profile.sample == "sequence"``); every figure
is per sequence, forward pass, at the FP32-storage convention of the profiles (4 bytes per value;
the engine scales by the training precision).

Layers, in execution order (names are stable: the engine splits tensor and pipeline parallelism
by their prefixes):

``embed``, then per block ``block{i}.norm1``, ``block{i}.attn.qkv``, ``block{i}.attn.scores``,
``block{i}.attn.out``, ``block{i}.attn.residual``, ``block{i}.norm2``, ``block{i}.router`` (MoE),
``block{i}.mlp.up`` (up and gate), ``block{i}.mlp.act``, ``block{i}.mlp.down``,
``block{i}.mlp.residual``; then ``norm_f``, ``head`` (the LM head; BERT's MLM head) and ``loss``
(softmax cross-entropy). Parallel-attention blocks (Falcon, GPT-NeoX) have one
``block{i}.residual`` instead of the two; post-norm encoders (BERT) put ``norm1`` after the
attention residual and ``norm2`` after the MLP's. An encoder-decoder (T5) runs ``enc{i}.*`` and
``enc.norm_f`` first, and its decoder blocks add ``block{i}.xattn.norm``, ``.qkv`` (queries
from the decoder, keys and values from the encoder output), ``.scores``, ``.out`` and
``.residual``; the decoder's length is taken equal to the encoder's.

FLOPs (forward, per sequence of s tokens):

- matrix products: :math:`2 m n k` (:func:`matmul_flops`); a mixture of experts counts its routed
  FFN at ``experts_per_token`` experts (times the capacity factor where one pads the experts'
  tokens; the parameters of all experts are listed and the rows marked ``expert``), its shared
  experts as one dense FFN, and the router; DeepSeek's first ``dense_layers`` blocks (and Llama
  4 Maverick's every other block) keep a dense FFN. Multi-head latent attention (DeepSeek-V2)
  counts its latent projections and scores over ``head + rope`` query widths and ``v_head_dim``
  value widths.
- attention scores: :math:`2 \\cdot 2 s^2 a d_{head}` for :math:`QK^T` and :math:`A V`
  (:func:`attention_flops`), the full :math:`s^2`, not halved for causal masks: the convention of
  Megatron-LM's and MosaicML's MFU figures (Narayanan et al. 2021, eq. 3); a block with a sliding
  window of :math:`w` tokens counts twice its causal band, :math:`2 s w - w^2` for :math:`s^2`
  (:func:`windowed_attention_flops`).
- vector work, per element: LayerNorm 5 (mean, variance, normalise, scale, shift), RMSNorm 4,
  residual add 1 (2 with dropout), GELU 8 (tanh form), SiLU-and-multiply 5, ReLU 1, softmax
  cross-entropy 5 per logit (:data:`VECTOR_FLOPS`). The softmax inside attention and rotary
  embeddings are not counted as FLOPs (their memory traffic is in ``bytes``).

Activation memory kept for the backward pass follows Korthikanti et al. 2022 (§4.1, Table 2):
per block :math:`s b h (34 + 5 a s / h)` bytes at 16-bit storage, twice that here. With flash
attention the :math:`5 a s / h` terms (softmax output, its dropout mask and output) are not
kept, only the softmax statistics (one value per row and head). Models trained without dropout
(Llama, Mistral, Falcon, ...) keep no dropout masks: of the 34, the attention-output and
MLP-output masks (1 + 1), and of the 5, the softmax dropout mask and dropout output (1 + 2).
The widths generalise Korthikanti's to grouped-query attention and FFN widths other than 4h.

>>> from sizer.workloads.registry import find_model
>>> graph = layer_graph(find_model("gpt2"), 1024)
>>> graph.params == find_model("gpt2").params_total(), graph.layers[1].name
(True, 'block0.norm1')
"""
from __future__ import annotations

from typing import NamedTuple

from sizer.deadline import check_deadline
from sizer.workloads.architecture import GATED_FFN, Architecture, check_work_bound
from sizer.workloads.profile import Layer, Profile

BYTES_PER_VALUE = 4  # the profiles' FP32-storage convention
# Bytes per value that Korthikanti et al. count at 16-bit storage: 2, and 1 for a dropout mask.
HALF, MASK = 2, 1
FP32_SCALE = BYTES_PER_VALUE / HALF  # Korthikanti's 16-bit bytes to the FP32 convention
TOKEN_ID_VALUES = 1  # one integer per token kept by the embedding's backward

VECTOR_FLOPS = {  # FLOP per element of the vector (non-matrix) work, stated above
    "layernorm": 5, "rmsnorm": 4, "residual": 1, "dropout": 1,
    "gelu": 8, "geglu": 9, "swiglu": 5, "relu": 1, "cross_entropy": 5,
}
MATMUL_KERNELS = 1
ROTARY_KERNELS = 2  # rotary embedding applied to queries and keys
# Standard (not flash) attention as Megatron-LM runs it: QK^T with the scale folded in (baddbmm), one fused
# scale-mask-softmax kernel (FusedScaleMaskSoftmax, in Megatron-LM since 2020), A·V
UNFUSED_ATTENTION_KERNELS = 3
# s x s traffic of standard attention, in values per score: QK^T writes the scores (1), the fused softmax reads
# them and writes the probabilities (2), A·V reads them (1); dropout reads and writes them and stores a one-byte
# mask, half a 16-bit value (2.5)
SCORE_PASSES = 4
DROPOUT_PASSES = 2.5
FLASH_ATTENTION_KERNELS = 1
ROUTER_KERNELS = 4  # gate matmul, softmax, top-k, token permutation
LOSS_KERNELS = 3  # log-softmax, gather, mean


def matmul_flops(m: float, n: float, k: float) -> float:
    """FLOP of one (m × k) · (k × n) product: :math:`2 m n k` (a multiply and an add per term).

    Parameters
    ----------
    m : float
        Rows of the left operand (tokens) [1].
    n : float
        Columns of the right operand (output features) [1].
    k : float
        The shared dimension (input features) [1].

    Returns
    -------
    float
        FLOP of the product [FLOP].

    >>> matmul_flops(1024, 2304, 768)  # GPT-2 small's QKV projection over 1024 tokens
    3623878656.0
    """
    return 2.0 * m * n * k


def attention_flops(seq_len: float, heads: int, head_dim: int) -> float:
    """FLOP of :math:`QK^T` and :math:`A V` for one sequence: :math:`2 \\cdot 2 s^2 a d_{head}`,
    the full square (Narayanan et al. 2021, eq. 3; no halving for a causal mask).

    Parameters
    ----------
    seq_len : float
        Tokens in the sequence s [token].
    heads : int
        Attention heads a [1].
    head_dim : int
        Width of one head d_head [1].

    Returns
    -------
    float
        FLOP of the two products, one sequence [FLOP].

    >>> attention_flops(1024, 12, 64)
    3221225472.0
    """
    return 2.0 * 2.0 * seq_len * seq_len * heads * head_dim


def windowed_attention_flops(seq_len: float, heads: int, head_dim: int, window: int | None) -> float:
    """:func:`attention_flops` of a block that attends over the last ``window`` tokens only, in the
    same full-square convention: twice the causal band, :math:`4 a d_{head} (2 s w - w^2)` for
    :math:`s > w` (the causal square :math:`s^2 / 2` becomes the band :math:`s w - w^2 / 2`); the
    full square where the sequence fits the window (``None``: no window).

    Parameters
    ----------
    seq_len : float
        Tokens in the sequence s [token].
    heads : int
        Attention heads a [1].
    head_dim : int
        Width of one head d_head [1].
    window : int or None
        Tokens each query attends over at most w [token]; None: the whole sequence.

    Returns
    -------
    float
        FLOP of the two products, one sequence [FLOP].

    >>> windowed_attention_flops(1024, 12, 64, 128) / attention_flops(1024, 12, 64)
    0.234375
    """
    if window is None or seq_len <= window:
        return attention_flops(seq_len, heads, head_dim)
    return 2.0 * 2.0 * (2.0 * seq_len * window - window * window) * heads * head_dim


def korthikanti_block_bytes(seq_len: int, hidden: int, heads: int, *, flash_attention: bool = False) -> float:
    """Activation bytes of one GPT-3-style block at 16-bit storage, per sequence:
    :math:`s h (34 + 5 a s / h)` (Korthikanti et al. 2022, §4.1, eq. 1 with b = 1); flash
    attention drops the :math:`5 a s / h` term.

    Parameters
    ----------
    seq_len : int
        Tokens in the sequence s [token].
    hidden : int
        Model width h [1].
    heads : int
        Attention heads a [1].
    flash_attention : bool, default False
        Whether attention is fused (no stored score matrices).

    Returns
    -------
    float
        Activation bytes kept for the backward pass, one block and one sequence [B].

    >>> korthikanti_block_bytes(2048, 12288, 96) / 2**30  # GPT-3 175B, one block, one sequence [GiB]
    2.671875
    """
    scores = 0.0 if flash_attention else 5.0 * heads * seq_len / hidden
    return seq_len * hidden * (34.0 + scores)


class _Dims(NamedTuple):  # a record, not a dataclass: a third of the start-up cost of one (Python 3.11)
    s: int
    h: int
    heads: int
    kv: int
    hd: int
    f: int
    active: int  # experts a token passes through

    @property
    def q(self) -> int:
        return self.heads * self.hd

    @property
    def kv_width(self) -> int:
        return self.kv * self.hd


def layer_graph(arch: Architecture, seq_len: int, *, flash_attention: bool = True, windows: bool = False) -> Profile:
    """The forward layer graph of ``arch`` for one sequence of ``seq_len`` tokens (see the module
    docstring for the names, FLOP counts and activation memory). ``windows``: sliding-window blocks
    compute only their band, as serving kernels do (vLLM, TensorRT-LLM); training graphs count the
    whole square in every block (the training estimate says why).

    Parameters
    ----------
    arch : Architecture
        The model.
    seq_len : int
        Tokens per sequence [token], from 1 to 10,000,000.
    flash_attention : bool, default True
        Whether attention is fused: no score matrices stored, less traffic.
    windows : bool, default False
        Whether sliding-window blocks compute only their band.

    Returns
    -------
    Profile
        One row per layer (embedding, each block's layers, final norm, head, loss) with forward FLOP
        [FLOP], traffic [B], parameters [1] and kept activations [B], per sequence.

    Raises
    ------
    InputError
        A sequence length that is not a whole number in range, or a model beyond the block limit.
    """
    from sizer.errors import InputError

    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or not 1 <= seq_len <= 10_000_000:
        raise InputError("seq_len", seq_len, "a whole number of tokens from 1 to 10,000,000")
    check_work_bound(arch)  # an Architecture checks itself when made; this holds for any duck-typed one too
    dims = _Dims(s=seq_len, h=arch.hidden, heads=arch.heads, kv=arch.kv_heads, hd=arch.head_size,
                 f=arch.ffn_hidden, active=arch.experts_per_token if arch.moe else 1)
    layers: list[Layer] = [_embed(arch, dims)]
    if arch.family == "encoder-decoder":
        for i in range(arch.encoder_layers):
            check_deadline()
            layers += _block(arch, dims, f"enc{i}", first=i == 0, flash=flash_attention, cross=False)
        layers.append(_norm(arch, dims, "enc.norm_f", count=1))
    for i in range(arch.layers):
        check_deadline()  # a request's deadline holds inside the build, not only after it
        layers += _block(arch, dims, f"block{i}", first=i == 0, flash=flash_attention,
                         cross=arch.family == "encoder-decoder", moe=arch.is_moe_block(i),
                         window=arch.window(i) if windows else None)
    if arch.family != "encoder":
        layers.append(_norm(arch, dims, "norm_f", count=1))
    layers += [_head(arch, dims), _loss(arch, dims)]
    flash = "flash attention" if flash_attention else "unfused attention"
    return Profile(
        name=arch.name, sample="sequence", seq_len=seq_len, input_shape=[seq_len],
        description=f"{arch.name}: {arch.family} transformer, {arch.layers} blocks of {arch.hidden}, {flash}",
        generated_by=f"sizer.workloads.layer_graph from the architecture {arch.name} (source: {arch.source})",
        layers=layers)


def _values(*counts: float) -> float:
    """Bytes of activation values at the FP32 convention."""
    return BYTES_PER_VALUE * sum(counts)


def _kept(half_bytes: float) -> float:
    """Korthikanti's 16-bit activation bytes at the FP32 convention."""
    return FP32_SCALE * half_bytes


def _embed(arch: Architecture, d: _Dims) -> Layer:
    positions = (arch.max_context + arch.position_offset) * arch.hidden if arch.position == "learned" else 0
    norm = arch.norm_params() if arch.embedding_norm else 0
    params = (arch.vocab + arch.type_vocab) * arch.hidden + positions + norm
    sh = d.s * d.h
    adds = (arch.position == "learned") + (arch.type_vocab > 0)
    flops = sh * adds + (VECTOR_FLOPS[arch.norm] * sh if arch.embedding_norm else 0)
    lookups = 2 if arch.family == "encoder-decoder" else 1  # T5's decoder reads the shared table too
    kept = _values(TOKEN_ID_VALUES * d.s) * lookups + (_kept(MASK * sh) if arch.dropout else 0)
    if arch.embedding_norm:
        kept += _kept(HALF * sh)  # the norm's input
    return Layer(name="embed", kind="embedding", forward_flops=float(flops),
                 bytes=_values(d.s, sh * (1 + adds + arch.embedding_norm)) * lookups, params=float(params),
                 activation_bytes=kept, kernels=lookups + adds + arch.embedding_norm + arch.dropout)


def _norm(arch: Architecture, d: _Dims, name: str, count: int) -> Layer:
    """``count`` norms over the hidden state (Gemma 2 has a pre and a post norm per sub-block)."""
    sh = d.s * d.h
    return Layer(name=name, kind="norm", forward_flops=float(count * VECTOR_FLOPS[arch.norm] * sh),
                 bytes=_values(2 * count * sh), params=float(count * arch.norm_params()),
                 activation_bytes=_kept(count * HALF * sh), kernels=count)


def _residual(arch: Architecture, d: _Dims, name: str, sources: int = 1) -> Layer:
    """Residual add of ``sources`` branches (with their dropout where the model has it)."""
    sh = d.s * d.h
    per_element = VECTOR_FLOPS["residual"] + (VECTOR_FLOPS["dropout"] if arch.dropout else 0)
    masks = _kept(MASK * sh) * sources if arch.dropout else 0.0  # Korthikanti: "dropout mask sbh"
    return Layer(name=name, kind="elementwise", forward_flops=float(sources * per_element * sh),
                 bytes=_values((sources + 2) * sh), activation_bytes=masks, kernels=sources * (1 + arch.dropout))


def _attention(arch: Architecture, d: _Dims, prefix: str, *, first: bool, flash: bool, cross: bool,
               window: int | None = None) -> list[Layer]:
    """Q/K/V projection, scores (QK^T and A·V; over the last ``window`` tokens where the block has a
    sliding window) and output projection of one attention."""
    s, h = d.s, d.h
    q, kv = d.q, d.kv_width
    bias = arch.attention_bias
    out_bias = arch.attention_bias if arch.attention_out_bias is None else arch.attention_out_bias
    rotary = arch.position == "rotary" and not cross
    qkv = Layer(name=f"{prefix}.qkv", kind="matmul", forward_flops=matmul_flops(s, q + 2 * kv, h),
                bytes=_values(s * h * (2 if cross else 1), s * (q + 2 * kv)) + (_values(2 * s * (q + kv)) if rotary else 0),
                params=float(h * (q + 2 * kv) + (q + 2 * kv if bias else 0)),
                activation_bytes=_kept(HALF * s * h * (2 if cross else 1)),  # the normed input (and encoder output)
                kernels=MATMUL_KERNELS + (ROTARY_KERNELS if rotary else 0))
    # Korthikanti: Q and K for QK^T (4sbh), V for A·V (2sbh); then 2as² softmax output, as² its
    # dropout mask, 2as² dropout output — or, with flash attention, the softmax statistics only.
    kept = HALF * s * (q + 2 * kv)
    traffic = _values(s * (2 * q + 2 * kv))  # read Q, K, V, write the context
    kernels = FLASH_ATTENTION_KERNELS
    square = d.heads * s * (s if window is None else min(s, window))
    if flash:
        kept_fp32 = _values(d.heads * s)  # one log-sum-exp per row and head, kept in FP32
    else:
        kept += HALF * square + ((MASK + HALF) * square if arch.dropout else 0)
        traffic += _values(SCORE_PASSES * square + (DROPOUT_PASSES * square if arch.dropout else 0))
        kernels = UNFUSED_ATTENTION_KERNELS + arch.dropout
        kept_fp32 = 0.0
    relative = arch.relative_buckets * arch.heads if (arch.position == "relative" and first and not cross) else 0
    scores = Layer(name=f"{prefix}.scores", kind="attention", forward_flops=windowed_attention_flops(s, d.heads, d.hd, window),
                   bytes=traffic, params=float(relative), activation_bytes=_kept(kept) + kept_fp32, kernels=kernels)
    out = Layer(name=f"{prefix}.out", kind="matmul", forward_flops=matmul_flops(s, h, q), bytes=_values(s * q, s * h),
                params=float(q * h + (h if out_bias else 0)), activation_bytes=_kept(HALF * s * q),
                kernels=MATMUL_KERNELS)
    return [qkv, scores, out]


def _ffn(arch: Architecture, d: _Dims, prefix: str, *, width: int, tokens: float, copies: int, expert: bool,
         kernels: int) -> list[Layer]:
    """Up (and gate), activation and down of ``copies`` FFNs of ``width`` over ``tokens`` token
    passes in all (``s`` for a dense FFN, ``k s`` times the capacity factor for routed experts)."""
    h, f = d.h, width
    gated = arch.ffn_type in GATED_FFN
    up_width = (2 if gated else 1) * f  # up (and gate) output
    bias = arch.mlp_bias
    # Korthikanti: the activation's input 8sbh (4h wide); a gated FFN keeps gate and up (2f wide)
    return [
        Layer(name=f"{prefix}.up", kind="matmul", forward_flops=matmul_flops(tokens, up_width, h),
              bytes=_values(tokens * h, tokens * up_width), params=float(copies * (h * up_width + (up_width if bias else 0))),
              activation_bytes=_kept(HALF * tokens * h), kernels=kernels, expert=expert),
        Layer(name=f"{prefix}.act", kind="elementwise", forward_flops=float(VECTOR_FLOPS[arch.ffn_type] * tokens * f),
              bytes=_values(tokens * up_width, tokens * f), activation_bytes=_kept(HALF * tokens * up_width),
              kernels=kernels, expert=expert),
        Layer(name=f"{prefix}.down", kind="matmul", forward_flops=matmul_flops(tokens, h, f),
              bytes=_values(tokens * f, tokens * h), params=float(copies * (f * h + (h if bias else 0))),
              activation_bytes=_kept(HALF * tokens * f), kernels=kernels, expert=expert)]


def _mla(arch: Architecture, d: _Dims, prefix: str, *, flash: bool) -> list[Layer]:
    """Multi-head latent attention (DeepSeek-V2 §2.1) in training: the query path (through its
    latent where ``q_lora_rank`` is set), the key/value latent and its up-projection to every head,
    scores over query/key heads of ``head + rope`` and value heads of ``v_head_dim``, the output.
    Kept for the backward pass: the normed input, both latents, Q, K and V (as Korthikanti's
    attention keeps Q, K, V), and the context."""
    s, h, heads = d.s, d.h, arch.heads
    qk, v = arch.query_size, arch.value_size
    latent, rope, q_rank = arch.kv_lora_rank, arch.rope_head_dim, arch.q_lora_rank
    q_out, kv_out = heads * qk, heads * (arch.head_size + v)
    projections = (h * q_rank + q_rank * q_out if q_rank else h * q_out) + h * (latent + rope) + latent * kv_out
    qkv = Layer(name=f"{prefix}.qkv", kind="matmul", forward_flops=2.0 * s * projections,
                bytes=_values(s * h, s * (q_rank + latent + rope), s * (q_out + kv_out), 2 * s * q_out),
                params=float(arch.mla_params() - heads * v * h),
                activation_bytes=_kept(HALF * s * (h + q_rank + latent + rope)),
                kernels=MATMUL_KERNELS * (3 + (q_rank > 0)) + ROTARY_KERNELS + 2)  # projections, rotary, latent norms
    kept = HALF * s * (2 * q_out + heads * v)
    square = heads * s * s
    traffic = _values(s * (2 * q_out + heads * v + heads * v))
    if flash:
        kept_fp32, kernels = _values(heads * s), FLASH_ATTENTION_KERNELS
    else:
        kept += HALF * square
        traffic += _values(SCORE_PASSES * square)
        kept_fp32, kernels = 0.0, UNFUSED_ATTENTION_KERNELS
    scores = Layer(name=f"{prefix}.scores", kind="attention", forward_flops=attention_flops(s, heads, arch.score_size),
                   bytes=traffic, activation_bytes=_kept(kept) + kept_fp32, kernels=kernels)
    out = Layer(name=f"{prefix}.out", kind="matmul", forward_flops=matmul_flops(s, h, heads * v),
                bytes=_values(s * heads * v, s * h), params=float(heads * v * h), activation_bytes=_kept(HALF * s * heads * v),
                kernels=MATMUL_KERNELS)
    return [qkv, scores, out]


def _mlp(arch: Architecture, d: _Dims, prefix: str, *, moe: bool = False) -> list[Layer]:
    """A dense FFN, or a mixture: the router (gate matmul, softmax, top-k, token permutation),
    ``k`` routed experts per token of their own width (their tokens padded to the capacity factor
    where one is set), and the shared experts every token passes through."""
    s, h = d.s, d.h
    if not moe:
        return _ffn(arch, d, f"{prefix}.mlp", width=arch.ffn_hidden, tokens=s, copies=1, expert=False,
                    kernels=MATMUL_KERNELS)
    experts, k = arch.experts, arch.experts_per_token
    routed = k * s * (arch.capacity_factor or 1.0)
    gate = arch.hidden if arch.shared_expert_gate else 0
    layers = [Layer(name=f"{prefix}.router", kind="matmul", forward_flops=matmul_flops(s, experts, h),
                    bytes=_values(s * h, s * experts, 2 * k * s * h),
                    params=float(h * experts + (experts if arch.router_bias else 0) + gate),
                    activation_bytes=_values(s * experts), kernels=ROUTER_KERNELS)]
    # one grouped GEMM per projection holds every local expert (kernels: one per expert's tile wave)
    layers += _ffn(arch, d, f"{prefix}.mlp", width=arch.expert_width, tokens=routed, copies=experts, expert=True,
                   kernels=experts)
    if arch.shared_experts:
        layers += _ffn(arch, d, f"{prefix}.shared", width=arch.shared_width * arch.shared_experts, tokens=s, copies=1,
                       expert=False, kernels=MATMUL_KERNELS)
    return layers


def _block(arch: Architecture, d: _Dims, prefix: str, *, first: bool, flash: bool, cross: bool,
           moe: bool = False, window: int | None = None) -> list[Layer]:
    norms = arch.norms_per_block
    per_norm = max(1, norms // 2) if norms >= 2 else 1  # Gemma 2: a pre and a post norm on each sub-block
    attention = (_mla(arch, d, f"{prefix}.attn", flash=flash) if arch.mla else
                 _attention(arch, d, f"{prefix}.attn", first=first, flash=flash, cross=False, window=window))
    mlp = _mlp(arch, d, prefix, moe=moe)
    if arch.parallel_attention:
        layers = [_norm(arch, d, f"{prefix}.norm1", count=1)]
        if norms >= 2:
            layers.append(_norm(arch, d, f"{prefix}.norm2", count=norms - 1))
        return layers + attention + mlp + [_residual(arch, d, f"{prefix}.residual", sources=2)]
    if arch.family == "encoder":  # post-norm (BERT): x = norm(x + sublayer(x))
        return (attention + [_residual(arch, d, f"{prefix}.attn.residual"), _norm(arch, d, f"{prefix}.norm1", 1)]
                + mlp + [_residual(arch, d, f"{prefix}.mlp.residual"), _norm(arch, d, f"{prefix}.norm2", 1)])
    layers = [_norm(arch, d, f"{prefix}.norm1", count=per_norm), *attention,
              _residual(arch, d, f"{prefix}.attn.residual")]
    if cross:
        layers += [_norm(arch, d, f"{prefix}.xattn.norm", count=1),
                   *_attention(arch, d, f"{prefix}.xattn", first=False, flash=flash, cross=True),
                   _residual(arch, d, f"{prefix}.xattn.residual")]
    layers += [_norm(arch, d, f"{prefix}.norm2", count=norms - per_norm), *mlp,
               _residual(arch, d, f"{prefix}.mlp.residual")]
    return layers


def _head(arch: Architecture, d: _Dims) -> Layer:
    """The LM head (vocabulary projection); BERT's MLM head adds a dense transform and a norm."""
    s, h, v = d.s, d.h, arch.vocab
    flops = matmul_flops(s, v, h)
    traffic = _values(s * h, s * v)
    kept = _kept(HALF * s * h)
    kernels = MATMUL_KERNELS
    if arch.mlm_head:
        flops += matmul_flops(s, h, h) + (VECTOR_FLOPS["gelu"] + VECTOR_FLOPS[arch.norm]) * s * h
        traffic += _values(4 * s * h)
        kept += _kept(3 * HALF * s * h)  # transform input, activation input, norm input
        kernels += 3
    params = (0 if arch.tied_embeddings else v * h) + arch.head_extra_params()
    if arch.pooler:
        flops += matmul_flops(1, h, h)
    return Layer(name="head", kind="matmul", forward_flops=float(flops), bytes=traffic, params=float(params),
                 activation_bytes=kept, kernels=kernels)


def _loss(arch: Architecture, d: _Dims) -> Layer:
    """Softmax cross-entropy over the vocabulary; keeps the FP32 logits (Korthikanti: 4sbv)."""
    logits = d.s * arch.vocab
    return Layer(name="loss", kind="loss", forward_flops=float(VECTOR_FLOPS["cross_entropy"] * logits),
                 bytes=_values(2 * logits), activation_bytes=_values(logits), kernels=LOSS_KERNELS)
