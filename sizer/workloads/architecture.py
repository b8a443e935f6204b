"""A neural-network architecture described by its published configuration.

One :class:`Architecture` holds what FLOPs, memory and time depend on: layers, hidden size,
heads, key/value heads (grouped-query attention), FFN size and kind, vocabulary, tied
embeddings and experts (mixture of experts). Built-in ones come from published configs
(:mod:`sizer.workloads.registry`), others from a Hugging Face ``config.json``
(:mod:`sizer.workloads.hf_config`) or from a bare parameter count
(:func:`sizer.workloads.decoder_shape.decoder_for_params`).

Parameter counts follow the module structure of the reference implementations (Hugging Face
``transformers``): every weight matrix, bias and norm is counted once.

>>> llama = Architecture(name="demo", family="decoder", layers=32, hidden=4096, heads=32, kv_heads=32,
...                      ffn_hidden=11008, ffn_type="swiglu", vocab=32000, max_context=4096,
...                      tied_embeddings=False, norm="rmsnorm", position="rotary", source="example")
>>> round(llama.params_total() / 1e9, 3)  # Llama 2 7B: 6,738,415,616 (Touvron et al. 2023)
6.738
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Family = Literal["decoder", "encoder", "encoder-decoder"]
FfnType = Literal["gelu", "relu", "swiglu", "geglu"]
Norm = Literal["layernorm", "rmsnorm"]
Position = Literal["learned", "rotary", "alibi", "relative"]
GATED_FFN = ("swiglu", "geglu")  # three matrices (gate, up, down) instead of two

# Work bounds of a layer graph, checked by :func:`check_work_bound` before any graph is built: the
# graph (and the layer table folded from it) grows with the blocks, so a config.json or a parameter
# count can otherwise ask for millions of layers. The deepest published transformers have ~100-200
# blocks (PaLM 540B 118, Llama 3.1 405B 126; DeepNet's 1,000 layers are 500 + 500); 1,000 leaves room.
MAX_BLOCKS = 1_000
MAX_EXPERTS = 4_096  # experts per layer: twice the largest published (Switch-C, 2,048; Fedus et al. 2022)


@dataclass(frozen=True)
class Architecture:
    """A transformer's shape. For an encoder-decoder, ``layers`` counts decoder layers and
    ``encoder_layers`` the encoder's; for encoder-only and decoder-only models ``encoder_layers``
    is 0 and ``layers`` counts the blocks."""

    name: str
    family: Family
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    ffn_type: FfnType
    vocab: int
    max_context: int
    tied_embeddings: bool
    norm: Norm
    position: Position
    source: str
    head_dim: int | None = None  # defaults to hidden / heads
    experts: int = 1  # FFN experts per layer (mixture of experts)
    experts_per_token: int = 1
    attention_bias: bool = False
    mlp_bias: bool = False
    parallel_attention: bool = False  # attention and MLP read the same normed input (GPT-J, Falcon)
    encoder_layers: int = 0
    type_vocab: int = 0  # BERT's token-type (segment) embeddings
    pooler: bool = False  # BERT's pooler dense layer
    verified: bool = True  # False where a figure is recalled rather than read in the cited source
    block_norms: int | None = None  # norms per block; default 2, or 1 with parallel attention (Falcon-7B)
    norm_bias: bool = True  # a LayerNorm with a bias (MPT's have none); RMSNorm never has one
    attention_out_bias: bool | None = None  # bias on the output projection; default: attention_bias (Qwen2: none)
    position_offset: int = 0  # extra learned position rows (OPT and RoBERTa keep 2 beyond max_context)
    embedding_norm: bool = False  # a norm right after the token embedding (BLOOM)
    relative_buckets: int = 0  # T5's relative-position buckets, one bias table per stack (first block)
    mlm_head: bool = False  # BERT/RoBERTa masked-LM head: dense h x h + norm + output bias (decoder tied)
    dropout: bool = False  # trained with dropout (GPT-2/3, BERT, T5, OPT): its masks are kept for the backward pass
    # mixture of experts (Fedus et al. 2022; DeepSeek-AI 2024): routed experts of their own width, shared
    # experts every token passes through, the first blocks (or all but every n-th) with a dense FFN
    moe_ffn_hidden: int | None = None  # width of one routed expert; default ffn_hidden
    shared_experts: int = 0  # experts every token passes through (DeepSeek, Qwen2-MoE, Llama 4)
    shared_ffn_hidden: int | None = None  # width of one shared expert; default moe_ffn_hidden
    shared_expert_gate: bool = False  # Qwen2-MoE: a sigmoid gate (hidden -> 1) on the shared expert
    dense_layers: int = 0  # the first blocks keep a dense FFN of ffn_hidden (DeepSeek first_k_dense_replace)
    moe_every: int = 1  # every n-th block is a mixture (Llama 4 Maverick interleave_moe_layer_step = 2)
    router_bias: bool = False  # a bias on the router (gpt-oss)
    capacity_factor: float | None = None  # expert capacity / fair share; None: dropless (no padding)
    # multi-head latent attention (DeepSeek-V2 §2.1): keys and values from one compressed latent
    q_lora_rank: int = 0  # 0: queries projected directly from the hidden state
    kv_lora_rank: int = 0  # > 0: MLA, the KV cache holds this latent plus the rotary key
    rope_head_dim: int = 0  # decoupled rotary part of each query/key head (qk_rope_head_dim)
    v_head_dim: int | None = None  # value head size; default head_size (qk_nope_head_dim under MLA)
    # sliding-window attention (Beltagy et al. 2020; Gemma 2; gpt-oss): a block attends over the last
    # ``sliding_window`` tokens only, except every ``global_every``-th block, which attends over all (0: none does)
    sliding_window: int = 0  # 0: every block attends over the whole context
    global_every: int = 0

    def __post_init__(self) -> None:
        from sizer.errors import InputError

        if self.experts < 1:
            raise InputError("experts", self.experts, f"at least one expert ({self.name})")
        if not 1 <= self.experts_per_token <= self.experts:
            raise InputError("experts_per_token", self.experts_per_token,
                             f"from 1 to the {self.experts} experts of {self.name} (top-k routing picks k of them)")
        for field in ("sliding_window", "global_every"):
            if getattr(self, field) < 0:
                raise InputError(field, getattr(self, field), f"0 or more ({self.name}; 0: no sliding window, or none global)")
        if self.dense_layers > self.layers:
            raise InputError("dense_layers", self.dense_layers, f"at most the {self.layers} blocks of {self.name}")
        check_work_bound(self)

    @property
    def head_size(self) -> int:
        """Width of one attention head [1]: ``head_dim`` where the config states it, else ``hidden // heads``.
        """
        return self.head_dim or self.hidden // self.heads

    @property
    def moe(self) -> bool:
        """Whether the model is a mixture of experts (more than one expert per mixture block).
        """
        return self.experts > 1

    @property
    def mla(self) -> bool:
        """Whether attention is multi-head latent attention (DeepSeek-V2/V3: a ``kv_lora_rank`` latent is cached).
        """
        return self.kv_lora_rank > 0

    @property
    def expert_width(self) -> int:
        """Hidden width of one routed expert's FFN [1]: ``moe_ffn_hidden``, else ``ffn_hidden``.
        """
        return self.moe_ffn_hidden or self.ffn_hidden

    @property
    def shared_width(self) -> int:
        """Hidden width of one shared expert's FFN [1]: ``shared_ffn_hidden``, else the routed experts' width.
        """
        return self.shared_ffn_hidden or self.expert_width

    @property
    def value_size(self) -> int:
        """Value width per head [1]: ``v_head_dim`` (MLA gives values their own width), else the head size.
        """
        return self.v_head_dim or self.head_size

    @property
    def query_size(self) -> int:
        """Query/key width per head: the head size plus MLA's decoupled rotary part."""
        return self.head_size + self.rope_head_dim

    @property
    def score_size(self) -> int:
        """The head size :math:`d` for which :math:`4 s^2 a d` counts QK^T (query width) and A·V
        (value width): their mean (the head size without MLA)."""
        return (self.query_size + self.value_size) // 2

    def is_moe_block(self, index: int) -> bool:
        """Whether decoder block ``index`` (from 0) routes its FFN to experts.

        The first ``dense_layers`` blocks are dense; after them every ``moe_every``-th block is a mixture.

        Parameters
        ----------
        index : int
            Decoder block, counted from 0 [1].

        Returns
        -------
        bool
            True for a mixture block; always False for a dense model.
        """
        return self.moe and index >= self.dense_layers and (index - self.dense_layers + 1) % self.moe_every == 0

    def window(self, index: int) -> int | None:
        """Tokens decoder block ``index`` (from 0) attends over at most; None: the whole context.

        gpt-oss: every other block from block 0 over 128 tokens, docs/references.md [openai2025gptoss].

        Parameters
        ----------
        index : int
            Decoder block, counted from 0 [1].

        Returns
        -------
        int or None
            The sliding window [token]; None for a block with global attention.
        """
        if not self.sliding_window or (self.global_every and (index + 1) % self.global_every == 0):
            return None
        return self.sliding_window

    @property
    def sliding_blocks(self) -> int:
        """Decoder blocks with a sliding window."""
        if not self.sliding_window:
            return 0
        return self.layers - (self.layers // self.global_every if self.global_every else 0)

    def kv_blocks(self, context: float) -> float:
        r"""Blocks' worth of KV cache per token of a sequence of ``context`` tokens.

        A full block keeps every token, a sliding block only its last :math:`w` (vLLM's hybrid KV-cache
        manager and TensorRT-LLM's cyclic cache free the rest), so
        :math:`L_{full} + L_{sliding} \min(1, w / c)`.

        Parameters
        ----------
        context : float
            Tokens in the sequence c [token].

        Returns
        -------
        float
            Equivalent full blocks [1]; ``layers`` where no block slides or the context fits the window.

        Examples
        --------
        >>> Architecture(name="x", family="decoder", layers=24, hidden=64, heads=4, kv_heads=4, ffn_hidden=64,
        ...              ffn_type="swiglu", vocab=10, max_context=4096, tied_embeddings=True, norm="rmsnorm",
        ...              position="rotary", source="example", sliding_window=128, global_every=2).kv_blocks(1024)
        13.5
        """
        sliding = self.sliding_blocks
        if not sliding or context <= self.sliding_window:
            return float(self.layers)
        return self.layers - sliding + sliding * self.sliding_window / context

    @property
    def moe_blocks(self) -> int:
        """Decoder blocks that are mixtures of experts [1] (0 for a dense model).
        """
        if not self.moe:  # a dense model (asked for per parameter count: no walk over its blocks)
            return 0
        return sum(self.is_moe_block(i) for i in range(self.layers))

    def kv_values_per_token(self, tensor_parallel: int = 1) -> int:
        r"""Values one token keeps in the KV cache of one block on one of ``tensor_parallel`` ranks.

        :math:`2 \lceil kv / t \rceil d_{head}` (keys and values of the key/value heads, grouped-query
        attention), or under MLA the compressed latent plus the rotary key, :math:`d_c + d_h^R`, which
        every rank keeps whole (DeepSeek-V2 §2.1.2, Table 1).

        Parameters
        ----------
        tensor_parallel : int, default 1
            Tensor-parallel ranks t the key/value heads are split over [1].

        Returns
        -------
        int
            Cached values per token and block on one rank [1] (multiply by bytes per value for memory).
        """
        if self.mla:
            return self.kv_lora_rank + self.rope_head_dim
        return 2 * -(-self.kv_heads // tensor_parallel) * self.head_size

    @property
    def norms_per_block(self) -> int:
        """Norm layers in one block [1]: ``block_norms`` where stated, else 1 with parallel attention and FFN, else 2.
        """
        if self.block_norms is not None:
            return self.block_norms
        return 1 if self.parallel_attention else 2

    def attention_params(self) -> int:
        """Q, K, V and output projections of one attention block (with biases if the model has them).

        Returns
        -------
        int
            Parameters of one attention block [1]; :meth:`mla_params` under multi-head latent attention.
        """
        if self.mla:
            return self.mla_params()
        q_width = self.heads * self.head_size
        kv_width = self.kv_heads * self.head_size
        weights = self.hidden * (q_width + 2 * kv_width) + q_width * self.hidden
        out_bias = self.attention_bias if self.attention_out_bias is None else self.attention_out_bias
        biases = (q_width + 2 * kv_width if self.attention_bias else 0) + (self.hidden if out_bias else 0)
        return weights + biases

    def mla_params(self) -> int:
        """Multi-head latent attention (DeepSeek-V2 §2.1).

        Queries through an optional low-rank ``q_lora_rank`` latent (with its norm), keys and values from
        one ``kv_lora_rank`` latent (with its norm) plus a shared rotary key, and the output projection.

        Returns
        -------
        int
            Parameters of one MLA attention block [1].
        """
        heads, h = self.heads, self.hidden
        query_out = heads * self.query_size
        query = (h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * query_out) if self.q_lora_rank \
            else h * query_out
        latent = h * (self.kv_lora_rank + self.rope_head_dim) + self.kv_lora_rank
        keys_values = self.kv_lora_rank * heads * (self.head_size + self.value_size)
        return query + latent + keys_values + heads * self.value_size * h

    def expert_params(self, width: int | None = None) -> int:
        """One FFN of ``width``: two matrices (three in a gated FFN), with biases if the model has them.

        Parameters
        ----------
        width : int, optional
            The FFN's hidden width [1]; ``ffn_hidden`` where None or 0 (one expert of a mixture: its width).

        Returns
        -------
        int
            Parameters of the FFN [1].
        """
        width = width or self.ffn_hidden
        matrices = 3 if self.ffn_type in GATED_FFN else 2
        biases = (width * (matrices - 1) + self.hidden) if self.mlp_bias else 0
        return matrices * self.hidden * width + biases

    def moe_ffn_params(self, *, active: bool = False) -> int:
        """The FFN of one mixture block.

        Routed experts (``experts_per_token`` of them when ``active``), shared experts, the router (and
        its bias) and Qwen2-MoE's shared-expert gate.

        Parameters
        ----------
        active : bool, default False
            Count only the experts one token is routed to.

        Returns
        -------
        int
            Parameters of the mixture FFN [1].
        """
        routed = self.experts_per_token if active else self.experts
        router = self.hidden * self.experts + (self.experts if self.router_bias else 0)
        return (routed * self.expert_params(self.expert_width) + self.shared_experts * self.expert_params(self.shared_width)
                + router + (self.hidden if self.shared_expert_gate else 0))

    def norm_params(self) -> int:
        """Parameters of one norm layer.

        Returns
        -------
        int
            ``hidden`` scales, doubled for a LayerNorm with a bias [1].
        """
        return self.hidden * (2 if self.norm == "layernorm" and self.norm_bias else 1)

    def block_params(self, *, active: bool = False, cross_attention: bool = False, moe: bool | None = None) -> int:
        """One transformer block: attention, FFN and norms.

        Parameters
        ----------
        active : bool, default False
            Count only the experts a token is routed to.
        cross_attention : bool, default False
            A decoder block of an encoder-decoder: a second attention and its norm.
        moe : bool, optional
            A mixture block (True) or a dense one (False); default: whether the model has experts.

        Returns
        -------
        int
            Parameters of the block [1].
        """
        moe = self.moe if moe is None else moe
        ffn = self.moe_ffn_params(active=active) if moe else self.expert_params()
        norms = self.norms_per_block
        attention = self.attention_params() * (2 if cross_attention else 1)
        return attention + ffn + (norms + cross_attention) * self.norm_params()

    def embedding_params(self) -> int:
        """Token (and learned position / token-type) embeddings, plus an untied output head.

        Returns
        -------
        int
            Embedding and head parameters [1], with an embedding norm where the model has one.
        """
        positions = (self.max_context + self.position_offset) * self.hidden if self.position == "learned" else 0
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        norm = self.norm_params() if self.embedding_norm else 0
        return (self.vocab + self.type_vocab) * self.hidden + positions + head + norm

    def relative_bias_params(self) -> int:
        """T5's relative-position bias tables: one (buckets x heads) table per stack.

        Returns
        -------
        int
            Parameters of the tables [1]; 0 without relative positions.
        """
        stacks = 2 if self.family == "encoder-decoder" else 1
        return stacks * self.relative_buckets * self.heads if self.position == "relative" else 0

    def head_extra_params(self) -> int:
        """Parameters of an output head beyond the (tied or untied) vocabulary matrix.

        BERT's MLM transform (dense, norm) and output bias, and the pooler.

        Returns
        -------
        int
            Those parameters [1]; 0 for a plain language-model head.
        """
        mlm = self.hidden * self.hidden + self.hidden + self.norm_params() + self.vocab if self.mlm_head else 0
        pooler = self.hidden * self.hidden + self.hidden if self.pooler else 0
        return mlm + pooler

    def params_total(self) -> int:
        """Every parameter of the model: blocks, embeddings, final norms, bias tables and heads.

        Returns
        -------
        int
            Total parameters [1], every expert counted.
        """
        return self._params(active=False)

    def params_active(self) -> int:
        """Parameters one token passes through (equal to the total for a dense model).

        Returns
        -------
        int
            Active parameters [1]: only ``experts_per_token`` routed experts per mixture block.
        """
        return self._params(active=True)

    def _params(self, *, active: bool) -> int:
        decoder_cross = self.family == "encoder-decoder"
        mixtures = self.moe_blocks
        blocks = (mixtures * self.block_params(active=active, cross_attention=decoder_cross, moe=True)
                  + (self.layers - mixtures) * self.block_params(active=active, cross_attention=decoder_cross, moe=False))
        blocks += self.encoder_layers * self.block_params(active=active)
        # BERT-style post-norm encoders end in a block norm; they have no extra final norm.
        final_norms = 0 if self.family == "encoder" else (2 if decoder_cross else 1) * self.norm_params()
        return (blocks + self.embedding_params() + final_norms + self.relative_bias_params()
                + self.head_extra_params())


def check_work_bound(arch: Architecture, field: str = "model") -> None:
    """Refuse an architecture whose layer graph would exceed :data:`MAX_BLOCKS` blocks (encoder
    and decoder together) or :data:`MAX_EXPERTS` experts, before anything is built from it.

    Parameters
    ----------
    arch : Architecture
        The shape to check.
    field : str
        The request field named in the refusal.

    Raises
    ------
    sizer.errors.InputError
        When a bound is broken, naming it.
    """
    from sizer.errors import InputError

    blocks = arch.layers + arch.encoder_layers
    if blocks > MAX_BLOCKS:
        raise InputError(f"{field}.layers", blocks, f"at most {MAX_BLOCKS:,} transformer blocks "
                                                    f"(encoder and decoder together) in {arch.name!r}")
    if arch.experts > MAX_EXPERTS:
        raise InputError(f"{field}.experts", arch.experts, f"at most {MAX_EXPERTS:,} experts per layer in {arch.name!r}")
