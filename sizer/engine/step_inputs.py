"""What a step-time evaluation takes besides the layers and the devices: the kind of pass over the layers, the
model's shape, and the names its results are coded by. Apart from :mod:`sizer.engine.roofline` so that a
workload (:class:`sizer.engine.job.Job`) is built without the roofline's machinery."""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sizer.choices import Recompute
from sizer.engine.constants import BACKWARD_BYTE_FACTOR, BACKWARD_KERNEL_FACTOR
from sizer.formulas.compute import BACKWARD_FACTOR

if TYPE_CHECKING:
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

BOUNDS = ("compute", "memory", "overhead", "communication")
RECOMPUTE = tuple(policy.value for policy in Recompute)  # by engine code 0, 1, 2 (docs/references.md [korthikanti])


class Pass(NamedTuple):  # a record: a NamedTuple costs a fifth of a frozen dataclass's start-up (Python 3.11)
    """What one pass over the layers does, as multiples of the forward pass.

    ``flops``, ``activation_bytes`` and ``kernels``: of the forward pass's FLOP, activation bytes
    and launches; ``weight_reads``: stored weight bytes moved per pass (training: read in the
    forward and the backward pass, gradient written); ``backward``: whether a backward pass (and
    so recomputation and the backward collectives) exists; ``updates``: whether an optimizer step
    and a gradient synchronisation follow.
    """

    name: str
    flops: float | npt.NDArray[np.float64]  # per layer row where a table has a frozen part (:func:`layer_pass`)
    activation_bytes: float | npt.NDArray[np.float64]
    kernels: float | npt.NDArray[np.float64]
    weight_reads: float | npt.NDArray[np.float64]
    backward: bool
    updates: bool
    trained: "Pass | None" = None  # the pass of the trained rows of a table with a frozen part (LoRA adapters)


def training_passes(backward_factor: float = BACKWARD_FACTOR) -> tuple[Pass, Pass]:
    r"""The training pass and the frozen-weight pass for a forward+backward multiplier ``O_b``.

    The backward pass computes gradients with respect to inputs and to weights, each about one
    forward pass of FLOP (``O_b = 3``). Frozen weights (the base of LoRA/QLoRA) have no weight
    gradients: the input-gradient half of the backward pass only.

    .. math::

        O_\text{frozen} = 1 + (O_b - 1) / 2

    Parameters
    ----------
    backward_factor : float
        ``O_b``, forward plus backward FLOP as a multiple of the forward pass's [1].

    Returns
    -------
    training, frozen : Pass
        The pass of a fully trained table, and that of a table whose trained rows are adapters.

    References
    ----------
    [seed-004]
    """
    training = Pass("training", backward_factor, BACKWARD_BYTE_FACTOR, BACKWARD_KERNEL_FACTOR, 3.0, True, True)
    frozen = Pass("frozen weights", 1.0 + (backward_factor - 1.0) / 2.0, 2.0, 2.0, 2.0, True, True, trained=training)
    return training, frozen


# Forward + backward = 3 x forward (seed 004 eq. 3, O_b).
TRAINING, FROZEN = training_passes()
INFERENCE = Pass("inference", 1.0, 1.0, 1.0, 1.0, False, False)


class Shape(NamedTuple):
    """What tensor and pipeline parallelism need of the architecture (None for a profiled workload)."""

    blocks: int  # transformer blocks
    hidden: int
    tokens_per_sample: float
    kv_width: int = 0  # key/value width per token (kv heads x head size) that ring attention passes; 0: hidden
    attention_blocks: int = 0  # blocks with self-attention whose K/V go round the CP ring; 0: every block
    moe_blocks: int = 0  # blocks that route their FFN to experts
    routed_per_token: float = 0.0  # expert slots per token: top-k times the capacity factor where one is set


