"""Training-state recipes: what a trainer keeps per parameter and where, one frozen description.

A recipe is the part of a fine-tuning (or training) configuration that sets memory beside the
model and the layout: the precision of the training state, the optimizer, whether the optimizer
step runs inside the backward pass, what is offloaded to host memory and how the loss over the
vocabulary is computed. Each choice names its source:

- **state precision** ``mixed``: 16-bit weights and gradients, FP32 master weights and FP32
  optimizer states (Micikevicius et al. 2018; ZeRO's ``K = 12`` for Adam). ``bf16``: weights,
  gradients and optimizer states all in bf16, no master copy (torchtune's recipes with
  ``dtype: bf16``; the torchao optimizer README's "full BF16" fine-tune). FP8 compute with FP32
  master weights is ``--precision fp8`` with the ``mixed`` state.
- **optimizer** states per parameter: :func:`sizer.engine.constants.optimizer_state_bytes`
  (AdamW 2 copies, bitsandbytes 8-bit 2 x ~1 byte, Lion 1, Adafactor factored, SGD 0, momentum 1).
  A paged optimizer's states live in CUDA unified memory outside PyTorch's allocator (QLoRA §2):
  they never cause an out-of-memory error and are counted as paged host memory.
- **optimizer step in backward** (torchtune ``optimizer_in_bwd``; Lv et al. 2023, LOMO): each
  parameter is updated as soon as its gradient exists, so no full gradient buffer is held, only
  the largest tensor's; no gradient accumulation is possible.
- **offload**: optimizer states and master weights (ZeRO-Offload, Ren et al. 2021); parameters and
  gradients too (FSDP ``CPUOffload(offload_params=True)``, ZeRO-Infinity ``offload_param``),
  leaving the gathered block in flight on the device; activations (torchtune
  ``enable_activation_offloading``), leaving two blocks' worth on the device.
- **loss**: ``standard`` keeps the bf16 logits, their FP32 upcast and its softmax gradient, ``chunked`` 16-bit logits
  and one FP32 chunk (torchtune ``CEWithChunkedOutputLoss``, 8 chunks), ``fused`` never
  materialises them (Liger Kernel's fused linear cross-entropy, Wijmans et al. 2024 "Cut Your
  Losses").

>>> recipe = Recipe(state_precision=Precision.BF16, optimizer=Optimizer.ADAMW)
>>> recipe.bytes_per_param(2.0, 4.0)  # pure bf16 AdamW: 2 + 2 + 0 + 2 x 2
{'weights': 2.0, 'gradients': 2.0, 'master_weights': 0.0, 'optimizer_states': 4.0}
>>> Recipe(state_precision=Precision.MIXED, optimizer=Optimizer.ADAMW).bytes_per_param(2.0, 4.0)  # ZeRO's 16
{'weights': 2.0, 'gradients': 2.0, 'master_weights': 4.0, 'optimizer_states': 8.0}
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from sizer.choices import Loss, Optimizer, Precision
from sizer.engine.constants import STATE_VALUE_BYTES, optimizer_state_bytes
from sizer.errors import InputError
from sizer.results import Assumption

if TYPE_CHECKING:  # sizer.workloads.finetune is not needed to run a recipe, only to describe one
    from sizer.workloads.finetune import FineTune

STATE_PRECISIONS = (Precision.MIXED, Precision.BF16)
BF16_BYTES = 2.0
FP32_BYTES = 4.0
PAGED = (Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT)
# Bytes each logit costs per loss computation. Standard (Hugging Face's causal-LM loss): the LM head's bf16
# logits, their FP32 upcast (Korthikanti et al. 2022 §4.1's 4sbv) and its softmax gradient, 2 + 4 + 4; measured
# on an H100 with transformers' Llama at 8,192 tokens (benchmarks/hf_finetune_memory_h100.jsonl: about 10 bytes
# per logit above the rest). Chunked: the bf16 logits kept and one of torchtune's 8 chunks upcast with its gradient.
FP32_LOGIT_BYTES = 2 * FP32_BYTES
STANDARD_LOGIT_BYTES = BF16_BYTES + FP32_LOGIT_BYTES
CHUNKS = 8
CHUNKED_LOGIT_BYTES = BF16_BYTES + FP32_LOGIT_BYTES / CHUNKS
# Activation offload keeps the block being computed and the one in transfer on the device.
BLOCKS_IN_FLIGHT_OFFLOADED = 2
SOURCES = {
    "mixed": "Micikevicius et al. 2018: 16-bit weights and gradients, FP32 master weights and optimizer states",
    "bf16": "torchtune recipes with dtype bf16 (weights, gradients and optimizer states in bf16, no master copy); "
            "pytorch/ao torchao/optim README (full-BF16 Llama2-7B fine-tune)",
    "optimizer_in_backward": "torchtune optimizer_in_bwd; Lv et al. 2023 (LOMO): the step fused into the backward pass, "
                             "one tensor's gradient at a time, no gradient accumulation",
    "offload_params": "FSDP CPUOffload(offload_params=True), DeepSpeed ZeRO-Infinity offload_param: parameters, gradients "
                      "and optimizer states in host memory, the block being computed (and the next) gathered on the device",
    "offload_activations": "torchtune enable_activation_offloading: saved activations moved to host memory on a side "
                           "stream, two blocks' worth kept on the device",
    "standard": "bf16 logits, their FP32 upcast and its softmax gradient, 10 bytes per logit (Korthikanti et al. 2022 "
                "§4.1: 4sbv for the FP32 logits; about 10 measured with Hugging Face's Llama on an H100, "
                "benchmarks/hf_finetune_memory_h100.jsonl)",
    "chunked": "torchtune CEWithChunkedOutputLoss: 16-bit logits kept, one of 8 chunks upcast to FP32 with its gradient",
    "fused": "Liger Kernel fused linear cross-entropy / Cut Cross-Entropy (Wijmans et al. 2024): logits never "
             "materialised; a chunk of tokens x hidden's worth at a time",
}


class Recipe(NamedTuple):  # a record: a NamedTuple costs a fifth of a frozen dataclass's start-up (Python 3.11)
    """A training-state recipe (module docstring); the defaults are today's mixed-precision run."""

    state_precision: Precision = Precision.MIXED
    optimizer: Optimizer = Optimizer.ADAM
    optimizer_in_backward: bool = False
    offload_params: bool = False
    offload_activations: bool = False
    loss: Loss = Loss.STANDARD
    framework: str = ""  # the named framework's recipe these knobs came from (sizer.frameworks), said first in line()

    @property
    def pure(self) -> bool:
        """Every state in bf16, no FP32 master weights."""
        return self.state_precision is Precision.BF16

    @property
    def paged(self) -> bool:
        """Optimizer states in CUDA unified memory, outside the allocator."""
        return self.optimizer in PAGED

    def state_bytes(self) -> float:
        """Optimizer state per trained parameter: the optimizer's, in bf16 where the states are (8-bit
        states stay 8-bit).

        Returns
        -------
        float
            Bytes per trained parameter [B].
        """
        per_param = optimizer_state_bytes(self.optimizer)
        if self.pure and self.optimizer not in STATE_VALUE_BYTES:
            return per_param * BF16_BYTES / FP32_BYTES
        return per_param

    def bytes_per_param(self, weight_bytes: float, master_bytes: float) -> dict[str, float]:
        """Bytes per trained parameter of each state, on one device with no sharding or offload.

        Parameters
        ----------
        weight_bytes : float
            Bytes per weight and gradient copy at the compute precision [B].
        master_bytes : float
            Bytes per FP32 master weight the precision keeps [B] (0 for FP32 training).

        Returns
        -------
        dict
            ``weights``, ``gradients``, ``master_weights``, ``optimizer_states`` [B].
        """
        return {"weights": weight_bytes, "gradients": weight_bytes, "master_weights": 0.0 if self.pure else master_bytes,
                "optimizer_states": self.state_bytes()}

    def logit_bytes(self, hidden: float, vocab: float) -> float:
        """Bytes per logit (token x vocabulary entry) the loss keeps (module docstring).

        Parameters
        ----------
        hidden : float
            Hidden size h [1].
        vocab : float
            Vocabulary size V [1].

        Returns
        -------
        float
            Bytes per logit [B]: 10 standard, 3 chunked, 8 h / V fused.
        """
        if self.loss is Loss.STANDARD:
            return STANDARD_LOGIT_BYTES
        if self.loss is Loss.CHUNKED:
            return CHUNKED_LOGIT_BYTES
        return FP32_LOGIT_BYTES * min(1.0, hidden / max(vocab, 1.0))  # Liger's chunk: tokens x V/h at a time

    def line(self, precision: Precision, recompute: str | None = None, finetune: FineTune | None = None) -> str:
        """The recipe as a short line a user can type into a trainer's configuration.

        Parameters
        ----------
        precision : Precision
            The compute precision the device resolved (``bf16`` ...).
        recompute : str, optional
            The recomputation policy (``none``, ``selective``, ``full``).
        finetune : FineTune, optional
            The LoRA/QLoRA spec (rank and target matrices).

        Returns
        -------
        str
            Such as ``"bf16, adamw 8-bit, checkpointing on, LoRA r 16 on q,k,v,o"``.
        """
        parts = [self.framework] if self.framework else []
        parts.append(precision if self.state_precision is Precision.MIXED else "pure bf16 (no FP32 master)")
        parts.append(self.optimizer.value.replace("-", " ").replace("8bit", "8-bit"))
        if self.optimizer_in_backward:
            parts.append("optimizer step in backward")
        if recompute is not None:
            parts.append("checkpointing " + ("off" if recompute == "none" else "on" if recompute == "full" else recompute))
        if self.offload_params:
            parts.append("CPU offload of parameters and optimizer states")
        if self.offload_activations:
            parts.append("activation offload")
        if self.loss is not Loss.STANDARD:
            parts.append(f"{self.loss.value} cross-entropy")
        if finetune is not None:
            matrices = ",".join(finetune.targets)
            parts.append(f"{'QLoRA (NF4 base)' if finetune.method.value == 'qlora' else 'LoRA'} r {finetune.rank} on {matrices}")
        return ", ".join(parts)

    def assumptions(self) -> list[Assumption]:
        """What the recipe rests on: its state precision, each flag that is on, and its loss.

        Returns
        -------
        list of Assumption
            One per choice, with its source.
        """
        said = [Assumption(name="state precision", value=self.state_precision.value, source=SOURCES[self.state_precision.value])]
        for flag in ("optimizer_in_backward", "offload_params", "offload_activations"):
            if getattr(self, flag):
                said.append(Assumption(name=flag.replace("_", " "), value="on", source=SOURCES[flag]))
        said.append(Assumption(name="loss", value=self.loss.value, source=SOURCES[self.loss.value]))
        return said


def resolve_recipe(*, state_precision: Precision = Precision.MIXED, optimizer: Optimizer, precision: Precision,
                   optimizer_in_backward: bool = False, offload: bool = False, offload_params: bool = False,
                   offload_activations: bool = False, loss: Loss = Loss.STANDARD, framework: str = "") -> Recipe:
    """The recipe of a request, or InputError naming the field where its choices cannot combine.

    Parameters
    ----------
    state_precision : Precision
        ``mixed`` (default) or ``bf16``.
    optimizer : Optimizer
        The optimizer.
    precision : Precision
        The compute precision (pure bf16 states need bf16 or mixed).
    optimizer_in_backward, offload, offload_params, offload_activations : bool
        The recipe's flags (``offload``: optimizer states and master weights, ZeRO-Offload).
    loss : Loss
        ``standard`` (default), ``chunked`` or ``fused``.
    framework : str, optional
        The named framework's recipe (``torchtune full_finetune_single_device``), said in the recipe's line.

    Returns
    -------
    Recipe
        The checked recipe.

    >>> resolve_recipe(state_precision=Precision.BF16, optimizer=Optimizer.ADAMW, precision=Precision.FP32)
    Traceback (most recent call last):
    ...
    sizer.errors.InputError: state_precision: got 'bf16'; expected mixed with --precision fp32: pure bf16 states need bf16 compute (--precision bf16 or mixed)
    """
    state, chosen = state_precision, optimizer
    if state not in STATE_PRECISIONS:
        raise InputError("state_precision", state.value, "mixed (FP32 master weights and states) or bf16 (every "
                                                             "state in bf16); FP8 compute with FP32 master is --precision fp8")
    if state is Precision.BF16 and precision not in (Precision.BF16, Precision.MIXED):
        raise InputError("state_precision", state.value, f"mixed with --precision {precision.value}: pure bf16 "
                                                             "states need bf16 compute (--precision bf16 or mixed)")
    if chosen in PAGED and (offload or offload_params):
        raise InputError("optimizer", chosen.value, "a non-paged optimizer with offload: a paged optimizer pages its own "
                                                    "states to host memory, offload keeps them there for a CPU step "
                                                    "(DeepSpeed's CPU Adam); choose one")
    if optimizer_in_backward and (offload or offload_params):
        raise InputError("optimizer_in_backward", True, "no offload: the step fused into the backward pass runs on the "
                                                        "device, offload runs it on the CPU (ZeRO-Offload); choose one")
    return Recipe(state_precision=state, optimizer=chosen, optimizer_in_backward=bool(optimizer_in_backward),
                  offload_params=bool(offload_params), offload_activations=bool(offload_activations),
                  loss=loss, framework=framework)
