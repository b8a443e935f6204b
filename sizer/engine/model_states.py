"""Training memory per device, for many configurations at once (spec §3.8).

Model states follow the ZeRO paper (Rajbhandari et al. 2020, §5, Figure 1): with ``Ψ``
parameters, ``N`` data-parallel devices and ``K`` bytes of optimizer state per parameter
(12 for mixed-precision Adam: FP32 master weights, momentum and variance), stage 0 keeps
``(2 + 2 + K) Ψ`` bytes per device, stage 1 ``(2 + 2) Ψ + K Ψ / N``, stage 2
``2 Ψ + (2 + K) Ψ / N`` and stage 3 ``(2 + 2 + K) Ψ / N``. Activations are the workload's bytes
per sample at the training precision times the micro-batch; a framework reserve is added.

>>> import numpy as np
>>> parts = model_state_bytes(7.5e9, np.array([2.0]), np.array([4.0]), 8.0, np.array([64.0]), np.array([1, 2, 3]))
>>> [round(float(b) / 1e9, 3) for b in parts.total]  # ZeRO paper Figure 1: 31.4, 16.6, 1.9 GB
[31.406, 16.641, 1.875]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np



@dataclass(frozen=True)
class StateParts:
    """Bytes per device of each model-state component."""

    weights: np.ndarray
    gradients: np.ndarray
    master_weights: np.ndarray
    optimizer_states: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.weights + self.gradients + self.master_weights + self.optimizer_states


def model_state_bytes(params: float, weight_bytes: np.ndarray, master_bytes: np.ndarray, state_bytes: float,
                      count: np.ndarray, zero: np.ndarray, frozen_bytes: np.ndarray | float = 0.0) -> StateParts:
    """Weights, gradients, master weights and optimizer states per device under ZeRO stage ``zero``.

    ``params`` Ψ [count] (the trained ones); ``weight_bytes`` [B] per 16- or 32-bit copy;
    ``master_bytes`` [B] per FP32 master weight (0 without mixed precision); ``state_bytes`` [B] of
    optimizer state per parameter (Adam: 8; 8-bit Adam: about 2, :func:`~sizer.engine.constants.optimizer_state_bytes`); ``count`` N data-parallel devices; ``zero`` stage 0-3;
    ``frozen_bytes`` [B]: weights that are stored but not trained (a LoRA/QLoRA base), held once
    and sharded only at stage 3, with no gradients or optimizer states.
    """
    count = np.asarray(count, dtype=float)
    zero = np.asarray(zero)
    shard = lambda from_stage: np.where(zero >= from_stage, count, 1.0)  # noqa: E731
    return StateParts(weights=(params * weight_bytes + frozen_bytes) / shard(3), gradients=params * weight_bytes / shard(2),
                      master_weights=params * master_bytes / shard(1),
                      optimizer_states=params * state_bytes / shard(1))


def largest_micro_batch(free_bytes: np.ndarray, activation_bytes_per_sample: np.ndarray) -> np.ndarray:
    """Whole samples of activations that fit in ``free_bytes`` (0 where none fit; inf without activations)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = np.floor(np.maximum(free_bytes, 0.0) / activation_bytes_per_sample)
    return np.where(activation_bytes_per_sample > 0, room, np.where(free_bytes >= 0, np.inf, 0.0))
