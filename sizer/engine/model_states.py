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
import numpy.typing as npt


@dataclass(frozen=True)
class StateParts:
    """Bytes per device of each model-state component."""

    weights: npt.NDArray[np.float64]
    gradients: npt.NDArray[np.float64]
    master_weights: npt.NDArray[np.float64]
    optimizer_states: npt.NDArray[np.float64]

    @property
    def total(self) -> npt.NDArray[np.float64]:
        """All model states per device.

        Returns
        -------
        numpy.ndarray
            Weights + gradients + master weights + optimizer states [B].
        """
        return self.weights + self.gradients + self.master_weights + self.optimizer_states

    def __add__(self, other: "StateParts") -> "StateParts":
        return StateParts(self.weights + other.weights, self.gradients + other.gradients,
                          self.master_weights + other.master_weights, self.optimizer_states + other.optimizer_states)


def model_state_bytes(params: npt.NDArray[np.float64] | float, weight_bytes: npt.NDArray[np.float64], master_bytes: npt.NDArray[np.float64],
                      state_bytes: float, count: npt.NDArray[np.float64], zero: npt.NDArray[np.int64],
                      frozen_bytes: npt.NDArray[np.float64] | float = 0.0) -> StateParts:
    r"""Weights, gradients, master weights and optimizer states per device under a ZeRO stage.

    With Ψ trained parameters, N data-parallel devices, b_w bytes per weight copy, b_m per
    master weight and K bytes of optimizer state per parameter:

    .. math::

        W = \frac{\Psi b_w + F}{N_3}, \quad G = \frac{\Psi b_w}{N_2}, \quad
        M = \frac{\Psi b_m}{N_1}, \quad O = \frac{K \Psi}{N_1}, \qquad
        N_s = N \text{ if stage} \ge s \text{ else } 1

    Parameters
    ----------
    params : float or numpy.ndarray
        Trained parameters Ψ (per configuration, where the split differs) [1].
    weight_bytes : numpy.ndarray
        Bytes per 16- or 32-bit weight and gradient copy b_w [B].
    master_bytes : numpy.ndarray
        Bytes per FP32 master weight b_m [B] (0 without mixed precision).
    state_bytes : float
        Optimizer state per parameter K [B] (Adam: 2 FP32 states, 8; bitsandbytes' 8-bit Adam about 2:
        :func:`~sizer.engine.constants.optimizer_state_bytes`).
    count : numpy.ndarray
        Data-parallel devices N [1].
    zero : numpy.ndarray
        ZeRO stage 0-3 [1].
    frozen_bytes : numpy.ndarray or float, default 0
        Weights stored but not trained F [B] (a LoRA/QLoRA base): held once, sharded only at
        stage 3, with no gradients or optimizer states.

    Returns
    -------
    StateParts
        Bytes per device of each component [B].

    References
    ----------
    [zero], [micikevicius], [spec-3.8], [8bit-optimizers]

    Examples
    --------
    ZeRO paper Figure 1, 7.5B parameters on 64 devices: 31.4 / 16.6 / 1.9 GB at stages 1-3
    (see the module's doctest).
    """
    count = np.asarray(count, dtype=float)
    zero = np.asarray(zero)

    def shard(from_stage: int) -> npt.NDArray[np.float64]:
        """Devices a state is split over: N from ``from_stage`` on, else 1 [1]."""
        return np.where(zero >= from_stage, count, 1.0)

    return StateParts(weights=(params * weight_bytes + frozen_bytes) / shard(3), gradients=params * weight_bytes / shard(2),
                      master_weights=params * master_bytes / shard(1),
                      optimizer_states=params * state_bytes / shard(1))


def largest_micro_batch(free_bytes: npt.NDArray[np.float64],
                        activation_bytes_per_sample: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    r"""Whole samples of activations that fit in the free memory.

    .. math::

        m = \left\lfloor \frac{\max(M_{free}, 0)}{A} \right\rfloor

    Parameters
    ----------
    free_bytes : numpy.ndarray
        Memory left after states and reserves M_free [B].
    activation_bytes_per_sample : numpy.ndarray
        Activation bytes one sample keeps A [B].

    Returns
    -------
    numpy.ndarray
        Samples [sample]; 0 where none fit, inf without activations.

    References
    ----------
    [spec-3.8]
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = np.floor(np.maximum(free_bytes, 0.0) / activation_bytes_per_sample)
    return np.where(activation_bytes_per_sample > 0, room, np.where(free_bytes >= 0, np.inf, 0.0))
