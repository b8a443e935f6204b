"""The one summary of an evaluation: the step-time range, floored at the physical limit, and the
utilisation (MFU/HFU) at the expected step. ``time``, ``plan``, ``sweep`` and ``recommend`` all
take their ranges and MFU from here, so the four answers cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sizer.engine.evaluate import Evaluation


@dataclass(frozen=True)
class Summary:
    """Per evaluated row: seconds per step (low, expected, high), training seconds, MFU and HFU."""

    step_low: np.ndarray
    step_expected: np.ndarray
    step_high: np.ndarray
    steps: np.ndarray
    mfu: np.ndarray
    hfu: np.ndarray

    def training(self, which: str) -> np.ndarray:
        """Training seconds at one end of the range.

        Parameters
        ----------
        which : str
            ``low``, ``expected`` or ``high``.

        Returns
        -------
        numpy.ndarray
            Training seconds per row [s].
        """
        return getattr(self, f"step_{which}") * self.steps


def summarise(ev: Evaluation, rows, low, high, peak) -> Summary:
    r"""The range and utilisation of rows ``rows`` of ``ev``.

    Parameters
    ----------
    ev : Evaluation
        The engine's evaluation.
    rows : numpy.ndarray
        Which configurations [index].
    low, high : float or numpy.ndarray
        Factors of the expected step time that bound the range (per row or one) [1].
    peak : float or numpy.ndarray
        Dense peak of each row's device at the run's precision [FLOP/s].

    Returns
    -------
    Summary
        The range, never below the physical limit, and MFU/HFU at the floored expected step.

    Notes
    -----
    With :math:`T` the expected step and :math:`T_{min}` the physical limit (model FLOP at the
    fastest unit's peak):

    .. math::

        (T_{lo}, T_{exp}, T_{hi}) = \max(T_{min}, (f_{lo} T, T, f_{hi} T)), \quad
        \mathrm{MFU} = \frac{F_{model}}{T_{exp} R_{peak}}

    References
    ----------
    [megatron], [seed-004-eq4]
    """
    rows = np.asarray(rows, dtype=np.int64)
    step = ev.parts.step[rows]
    limit = ev.parts.physical_limit[rows]
    expected = np.maximum(limit, step)
    with np.errstate(divide="ignore", invalid="ignore"):
        mfu = ev.parts.model_flops[rows] / (expected * peak)
        hfu = ev.parts.hardware_flops[rows] / (expected * peak)
    return Summary(step_low=np.maximum(limit, step * low), step_expected=expected,
                   step_high=np.maximum(limit, step * high), steps=np.asarray(ev.steps)[rows], mfu=mfu, hfu=hfu)
