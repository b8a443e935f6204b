"""Fine-tuning methods: full, LoRA and QLoRA, as a spec the engine reads from the job.

- **full**: every weight trained; what the training path does (no spec: ``Job.finetune`` is None).
- **lora** (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models", §4.1): the
  base weights are frozen at the training precision; each adapted matrix ``W`` (``d_in × d_out``)
  gets ``A`` (``d_in × r``) and ``B`` (``r × d_out``), so :math:`r (d_{in} + d_{out})` trained
  parameters per adapted matrix (:func:`lora_params`). Optimizer states, master weights and
  gradients exist for those only.
- **qlora** (Dettmers et al. 2023, "QLoRA: Efficient Finetuning of Quantized LLMs", §3): LoRA
  over a base whose linear layers are stored in 4-bit NormalFloat with double quantisation,
  :math:`4 + 8/64 + 32/(64 \\cdot 256) ≈ 4.127` bits per parameter (:func:`nf4_bits_per_param`),
  computed in bf16; embeddings, LM head and norms stay 16-bit. Adapters are kept in the compute
  dtype with no FP32 master copy (the reference ``qlora.py`` casts the LoRA modules to bf16) and
  32-bit (paged) Adam states.

The time engine runs the base as a frozen pass (gradients with respect to inputs only: 2 x
forward FLOP, :data:`sizer.engine.roofline.FROZEN`) and the adapters as their own small
training rows; QLoRA's base weights are read as 4-bit, dequantised to bf16 and read again by
the matmul in every pass (bitsandbytes ``MatMul4Bit``: ``dequantize_4bit`` then ``linear``).

>>> from sizer.workloads.registry import find_model
>>> gpt3 = find_model("gpt3-175b")
>>> round(lora_params(gpt3, 1, ("q", "v")) / 1e6, 2)  # LoRA paper Table 4: 4.7M (r_q = r_v = 1)
4.72
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, TypeVar

from sizer.choices import Method, Precision
from sizer.errors import InputError
from sizer.results import Assumption
from sizer.workloads.architecture import GATED_FFN, Architecture

MATRICES = ("q", "k", "v", "o", "gate", "up", "down")  # the linear layers of a block, by short name
ALIASES = {"all-linear": MATRICES, "attention": ("q", "k", "v", "o"), "attn": ("q", "k", "v", "o"),
           "mlp": ("gate", "up", "down")}
# Defaults: the LoRA paper adapts W_q and W_v (§7.1) at r = 8 in PEFT's LoraConfig; QLoRA adapts
# every linear layer of the blocks at r = 64 (Dettmers et al. 2023 §4, Appendix B.2).
DEFAULTS = {Method.LORA: (8, ("q", "v")), Method.QLORA: (64, MATRICES)}
MAX_RANK = 65536
FP32_VALUE_BYTES = 4  # the profiles' activation convention
ADAPTER_KERNELS_PER_MATRIX = 3  # x·A, (x·A)·B, scaled add to the base output
NF4_BITS = 4
NF4_BLOCK = 64  # weights per first-level absmax constant (Dettmers et al. 2023 §3)
NF4_SECOND_BLOCK = 256  # first-level constants per second-level constant
NF4_CONSTANT_BITS = 8  # first-level constants, quantised to FP8 by double quantisation
FP32_CONSTANT_BITS = 32
BITS_PER_BYTE = 8
COMPUTE_DTYPE_BYTES = 2  # QLoRA computes in bf16
QLORA_PRECISIONS = (Precision.MIXED, Precision.BF16, Precision.FP16)
# Activations that eager PyTorch fine-tuning keeps per sequence, relative to the Korthikanti et al. count the
# layer graph makes (fused Megatron kernels): fitted by benchmarks/finetune_accuracy.py (fit_activation_factors)
# as the median over the fit part of the published litgpt runs (bf16-true, A100 40GB and A10G). QLoRA keeps
# more: bitsandbytes' MatMul4Bit saves each quantised linear layer's input for its backward pass.
LORA_ACTIVATION_FACTOR = 1.35
QLORA_ACTIVATION_FACTOR = 2.19
# The share of the memory bandwidth bitsandbytes' 4-bit dequantisation kernels reach (read NF4, write bf16), fitted
# on the fit part of litgpt's timed QLoRA runs against their LoRA twins (benchmarks/finetune_accuracy.py,
# fit_dequant_share): the time QLoRA adds over LoRA.
DEQUANT_BANDWIDTH_SHARE = 0.3
ACTIVATION_FACTOR_SOURCE = ("fitted on the fit part of litgpt's published LoRA/QLoRA runs "
                            "(benchmarks/finetune_accuracy.py; benchmarks/ACCURACY.md, Fine-tuning)")


if TYPE_CHECKING:  # for the checker only: no numpy import where a request is read
    import numpy as np
    import numpy.typing as npt

    from sizer.workloads.profile import Profile  # built only for a fine-tune (adapter_profile)

    # bytes per weight: one figure, or one per option of a vectorised search (sizer.engine.evaluate)
    _Bytes = TypeVar("_Bytes", float, npt.NDArray[np.float64])


class FineTune(NamedTuple):  # a record: a NamedTuple costs a fifth of a frozen dataclass's start-up (Python 3.11)
    """A LoRA or QLoRA run: what is trained and how the frozen base is stored."""

    method: Method
    rank: int
    targets: tuple[str, ...]
    trainable_params: float  # the adapters' parameters
    base_params: float  # the frozen base's parameters
    quantised_params: float  # of the base, stored in NF4 (QLoRA); the rest at the training precision
    adapter_master_weights: bool  # an FP32 master copy of the adapters (mixed precision)
    assumptions: tuple[Assumption, ...]

    @property
    def activation_factor(self) -> float:
        """Activations an eager PyTorch adapter run keeps per sample relative to the layer graph's count [1]
        (:data:`LORA_ACTIVATION_FACTOR`, :data:`QLORA_ACTIVATION_FACTOR`)."""
        return QLORA_ACTIVATION_FACTOR if self.method is Method.QLORA else LORA_ACTIVATION_FACTOR

    def frozen_bytes(self, weight_bytes: _Bytes) -> _Bytes:
        """Bytes of the frozen base with its unquantised part at ``weight_bytes`` per parameter.

        Parameters
        ----------
        weight_bytes : float or numpy.ndarray
            Bytes per parameter of the base's unquantised part (all of it for LoRA) [B], one per option.

        Returns
        -------
        float or numpy.ndarray
            Bytes of the frozen base weights [B]; QLoRA's quantised part at :func:`nf4_bits_per_param`.
        """
        return self.quantised_params * nf4_bits_per_param() / BITS_PER_BYTE + \
            (self.base_params - self.quantised_params) * weight_bytes

    def weight_traffic_bytes(self, weight_bytes: _Bytes) -> _Bytes:
        """Bytes moved per base parameter per pass: the stored weights, and for QLoRA's 4-bit part the
        dequantised bf16 copy written and read again by the matmul.

        Parameters
        ----------
        weight_bytes : float or numpy.ndarray
            Bytes per parameter of the base's unquantised part [B], one per option.

        Returns
        -------
        float or numpy.ndarray
            Mean bytes moved per base parameter per pass [B].
        """
        quantised = nf4_bits_per_param() / BITS_PER_BYTE + 2 * COMPUTE_DTYPE_BYTES
        unquantised = self.base_params - self.quantised_params
        return (self.quantised_params * quantised + unquantised * weight_bytes) / max(self.base_params, 1.0)


def nf4_bits_per_param(block: int = NF4_BLOCK, second_block: int = NF4_SECOND_BLOCK) -> float:
    """Bits per parameter of 4-bit NormalFloat with double quantisation (Dettmers et al. 2023 §3):

    .. math:: 4 + \\frac{8}{64} + \\frac{32}{64 \\cdot 256} = 4.127

    ``block`` weights share one FP8 absmax constant; ``second_block`` of those share one FP32 constant.

    Parameters
    ----------
    block : int, default 64
        Weights per FP8 absmax constant [1].
    second_block : int, default 256
        FP8 constants per FP32 second-level constant [1].

    Returns
    -------
    float
        Stored bits per parameter [bit].

    >>> round(nf4_bits_per_param(), 3)
    4.127
    """
    return NF4_BITS + NF4_CONSTANT_BITS / block + FP32_CONSTANT_BITS / (block * second_block)


def ffn_groups(arch: Architecture) -> list[tuple[int, int, float]]:
    """The FFNs of the blocks as ``(width, copies in the model, share of tokens through each)``: dense
    FFNs (every token), a mixture's routed experts (``k / E`` of the tokens each) and its shared
    experts (every token).

    Parameters
    ----------
    arch : Architecture
        The model.

    Returns
    -------
    list of tuple of (int, int, float)
        Per group: FFN hidden width [1], copies in the model [1], share of tokens through each copy [1];
        groups with no copies are left out.
    """
    blocks = arch.layers + arch.encoder_layers
    if not arch.moe:
        return [(arch.ffn_hidden, blocks, 1.0)]
    mixtures = arch.moe_blocks
    groups = [(arch.ffn_hidden, blocks - mixtures, 1.0), (arch.expert_width, mixtures * arch.experts,
                                                           arch.experts_per_token / arch.experts)]
    if arch.shared_experts:
        groups.append((arch.shared_width, mixtures * arch.shared_experts, 1.0))
    return [g for g in groups if g[1] > 0]


def mlp_active_share(arch: Architecture) -> float:
    """The share of the FFN adapters' work a token passes through (LoRA's FLOP are linear in
    ``d_in + d_out`` per copy): 1 for a dense model, less for a mixture's routed experts.

    Parameters
    ----------
    arch : Architecture
        The model.

    Returns
    -------
    float
        Share of the FFN adapters' work one token passes through [1], in (0, 1].
    """
    h = arch.hidden
    groups = ffn_groups(arch)
    return sum(c * (h + w) * share for w, c, share in groups) / sum(c * (h + w) for w, c, _ in groups)


def block_matrices(arch: Architecture) -> dict[str, tuple[float, float, int]]:
    """Each linear layer of the blocks: ``name -> (d_in, d_out, copies in the model)``.

    Attention matrices appear once per block (twice in a decoder block of an encoder-decoder:
    self- and cross-attention); FFN matrices once per FFN (dense, each routed and shared expert), at
    their copy-weighted mean width, which keeps ``copies (d_in + d_out)`` (LoRA's parameters) and
    ``copies d_in d_out`` (the weights) exact; ``gate`` only in gated FFNs. Multi-head latent
    attention (DeepSeek-V2/V3) adapts q (``q_b_proj``, or the direct query projection), k
    (``kv_a_proj_with_mqa``: hidden to latent and rotary key), v (``kv_b_proj``: latent to keys and
    values) and o (``q_a_proj`` is not counted).

    Parameters
    ----------
    arch : Architecture
        The model.

    Returns
    -------
    dict of str to tuple of (float, float, int)
        ``q``, ``k``, ``v``, ``o``, ``up``, ``down`` (and ``gate``) -> input width [1], output width [1],
        copies in the model [1].
    """
    h = arch.hidden
    q, kv = arch.heads * arch.head_size, arch.kv_heads * arch.head_size
    blocks = arch.layers + arch.encoder_layers
    attention = blocks + (arch.layers if arch.family == "encoder-decoder" else 0)
    groups = ffn_groups(arch)
    mlp = sum(c for _, c, _ in groups)
    f = sum(w * c for w, c, _ in groups) / mlp
    matrices: dict[str, tuple[float, float, int]]
    if arch.mla:
        query_in = arch.q_lora_rank or h
        matrices = {"q": (query_in, arch.heads * arch.query_size, attention),
                    "k": (h, arch.kv_lora_rank + arch.rope_head_dim, attention),
                    "v": (arch.kv_lora_rank, arch.heads * (arch.head_size + arch.value_size), attention),
                    "o": (arch.heads * arch.value_size, h, attention)}
    else:
        matrices = {"q": (h, q, attention), "k": (h, kv, attention), "v": (h, kv, attention), "o": (q, h, attention)}
    matrices.update({"up": (h, f, mlp), "down": (f, h, mlp)})
    if arch.ffn_type in GATED_FFN:
        matrices["gate"] = (h, f, mlp)
    return matrices


def lora_params(arch: Architecture, rank: int, targets: tuple[str, ...]) -> float:
    """Trained parameters of LoRA: :math:`\\sum r (d_{in} + d_{out})` over the adapted matrices
    (Hu et al. 2021 §4.1: ``A`` is ``d_in × r``, ``B`` is ``r × d_out``).

    Parameters
    ----------
    arch : Architecture
        The model.
    rank : int
        LoRA rank r [1].
    targets : tuple of str
        Adapted matrices, names of :func:`block_matrices`.

    Returns
    -------
    float
        Trained parameters [1].
    """
    matrices = block_matrices(arch)
    return float(sum(rank * (d_in + d_out) * copies for name, (d_in, d_out, copies) in matrices.items()
                     if name in targets))


def parse_targets(value: str | list[str] | None, arch: Architecture, default: tuple[str, ...]) -> tuple[str, ...]:
    """Target matrices from ``"q,k,v,o"``, ``"all-linear"``, ``"attention"``, ``"mlp"`` or Hugging
    Face names (``q_proj``); a gated-FFN name given alone only where the model has one.

    Parameters
    ----------
    value : str or list of str or None
        The user's targets: comma-separated text or a list; None takes ``default``.
    arch : Architecture
        The model, which says which matrices exist (a gate only in gated FFNs).
    default : tuple of str
        The method's default targets.

    Returns
    -------
    tuple of str
        Target names of :func:`block_matrices`, in its order, each once.

    Raises
    ------
    InputError
        An unknown name, or a gate the model does not have (field ``lora_targets``).
    """
    present = block_matrices(arch)
    if value is None:
        return tuple(name for name in MATRICES if name in default and name in present)
    items = value if isinstance(value, list) else str(value).split(",")
    names: list[str] = []
    for item in items:
        key = str(item).strip().lower().replace("_", "-").removesuffix("-proj")
        if key in ALIASES:
            names += ALIASES[key]
        elif key in MATRICES:
            if key not in present:
                raise InputError("lora_targets", value, f"matrices {arch.name} has: its FFN ({arch.ffn_type}) has no gate")
            names.append(key)
        else:
            raise InputError("lora_targets", value, f"matrix names from {', '.join(MATRICES)} (or q_proj ...), "
                                                    f"or one of {', '.join(ALIASES)}")
    return tuple(name for name in MATRICES if name in names and name in present)


def adapter_profile(arch: Architecture, seq_len: int, rank: int, targets: tuple[str, ...]) -> Profile:
    """The adapters as one layer row per block, per sequence of ``seq_len`` tokens, forward pass,
    FP32-storage convention (as :mod:`sizer.workloads.layer_graph`).

    FLOP: :math:`2 s r (d_{in} + d_{out})` per adapted matrix (``x A`` then ``(x A) B``; MoE experts
    at the routed count); traffic: read ``x``, write and read ``x A``, read and write the output;
    kept for backward: ``x A`` (``x`` is the base layer's input, already kept: no LoRA dropout).

    Parameters
    ----------
    arch : Architecture
        The model.
    seq_len : int
        Tokens per sequence s [token].
    rank : int
        LoRA rank r [1].
    targets : tuple of str
        Adapted matrices (:func:`parse_targets`).

    Returns
    -------
    Profile
        One ``lora`` layer per block: forward FLOP [FLOP], traffic [B], kept activations [B] and
        trained parameters [1], each per block and sequence.
    """
    s = seq_len
    blocks = arch.layers + arch.encoder_layers
    active = mlp_active_share(arch)
    flops = traffic = kept = kernels = params = 0.0
    for name, (d_in, d_out, copies) in block_matrices(arch).items():
        if name not in targets:
            continue
        routed = active if name in ("gate", "up", "down") else 1.0
        flops += copies * routed * 2.0 * s * rank * (d_in + d_out)
        traffic += copies * routed * FP32_VALUE_BYTES * s * (d_in + 2 * rank + 2 * d_out)
        kept += copies * routed * FP32_VALUE_BYTES * s * rank
        kernels += copies * ADAPTER_KERNELS_PER_MATRIX
        params += copies * rank * (d_in + d_out)
    from sizer.workloads.profile import Layer, Profile

    layer = Layer(name="lora", kind="matmul", forward_flops=flops / blocks, bytes=traffic / blocks,
                  params=params / blocks, activation_bytes=kept / blocks, kernels=round(kernels / blocks))  # per block (a mixture: its experts over the blocks that have them)
    return Profile(name=f"{arch.name}-lora", description=f"LoRA adapters r={rank} on {','.join(targets)}",
                   sample="sequence", seq_len=seq_len, input_shape=[seq_len], layers=[layer] * blocks,
                   generated_by="sizer.workloads.finetune (Hu et al. 2021 §4.1)")


def resolve_finetune(chosen: Method, rank: int | None, targets: str | None, arch: Architecture | None,
                     precision: Precision, base_params: float) -> FineTune | None:
    """The fine-tuning spec of a request (None for full training), or InputError naming the field.

    Parameters
    ----------
    chosen : Method
        ``full``, ``lora`` or ``qlora``.
    rank : int or None
        LoRA rank [1]; None takes the method's default.
    targets : str or None
        Adapted matrices (:func:`parse_targets`); None takes the method's default.
    arch : Architecture or None
        The model; LoRA needs one (adapters sit on its matrices).
    precision : Precision
        Training precision; QLoRA computes in a 16-bit one.
    base_params : float
        Parameters of the base model [1].

    Returns
    -------
    FineTune or None
        Method, rank, targets, trained, frozen and quantised parameters; None for full training.

    Raises
    ------
    InputError
        LoRA options without LoRA, LoRA without a transformer, a rank out of range or above the
        smallest adapted width, or QLoRA at a precision that is not 16-bit.
    """
    if chosen is Method.FULL:
        if rank is not None or targets is not None:
            raise InputError("lora_rank" if rank is not None else "lora_targets", rank if rank is not None else targets,
                             "--method lora or qlora with LoRA options")
        return None
    if arch is None:
        raise InputError("method", chosen.value, "a transformer for LoRA (--model, or --params with --tokens): "
                                                 "adapters are placed on its attention and FFN matrices")
    if chosen is Method.QLORA and precision not in QLORA_PRECISIONS:
        raise InputError("precision", precision.value, f"16-bit compute for QLoRA: one of {', '.join(QLORA_PRECISIONS)}")
    default_rank, default_targets = DEFAULTS[chosen]
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= MAX_RANK):
        raise InputError("lora_rank", rank, f"a whole number from 1 to {MAX_RANK}")
    rank = default_rank if rank is None else rank
    names = parse_targets(targets, arch, default_targets)
    matrices = block_matrices(arch)
    smallest = min(min(matrices[n][0], matrices[n][1]) for n in names)
    if rank > smallest:
        raise InputError("lora_rank", rank, f"at most the smallest adapted dimension ({smallest}): a low rank")
    trained = lora_params(arch, rank, names)
    base = float(base_params)
    quantised = float(sum(d_in * d_out * copies for d_in, d_out, copies in matrices.values())) \
        if chosen is Method.QLORA else 0.0
    share = trained / base
    assumptions = [Assumption(name="fine-tuning", value=f"{chosen.value}: rank {rank} on {','.join(names)}, "
                              f"{trained:.4g} trained parameters ({share:.3%} of {base:.4g}); base frozen",
                              source="Hu et al. 2021 §4.1: r (d_in + d_out) per adapted matrix"
                              + ("" if targets is not None and rank is not None else
                                 f"; default {'PEFT r=8 on W_q, W_v (LoRA paper §7.1)' if chosen is Method.LORA else 'r=64 on every linear layer (Dettmers et al. 2023 §4)'}")),
                   Assumption(name="fine-tuning time", value="frozen base: forward plus input gradients (2 x forward "
                              "FLOP), no weight gradients; adapters trained (3 x their forward FLOP); optimizer and "
                              "gradient synchronisation for the adapters only", source="Hu et al. 2021 §4.2"),
                   Assumption(name="fine-tuning activations", value="the base's activations as in training "
                              "(Korthikanti et al.) times "
                              f"{QLORA_ACTIVATION_FACTOR if chosen is Method.QLORA else LORA_ACTIVATION_FACTOR:g} "
                              "for eager PyTorch; adapters keep x·A only (no LoRA dropout, PEFT's default)",
                              source=ACTIVATION_FACTOR_SOURCE)]
    if chosen is Method.QLORA:
        assumptions += [
            Assumption(name="QLoRA base", value=f"{quantised:.4g} linear-layer weights in 4-bit NF4 with double "
                       f"quantisation ({nf4_bits_per_param():.3f} bits each); embeddings, head and norms 16-bit; "
                       "bf16 compute; weights dequantised to bf16 in every pass",
                       source="Dettmers et al. 2023 §3 (0.127 bits of constants per parameter); bitsandbytes MatMul4Bit"),
            Assumption(name="QLoRA adapters", value="adapters in bf16 without an FP32 master copy; 32-bit Adam "
                       "states counted on the device (paged optimizers only move them out under memory spikes)",
                       source="Dettmers et al. 2023 §3 and the reference qlora.py")]
    return FineTune(method=chosen, rank=rank, targets=names, trainable_params=trained, base_params=base,
                    quantised_params=quantised, adapter_master_weights=chosen is Method.LORA,
                    assumptions=tuple(assumptions))
