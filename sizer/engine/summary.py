"""The one summary of an evaluation: the step-time range, floored at the physical limit, and the
utilisation (MFU/HFU) at the expected step. ``time``, ``plan``, ``sweep`` and ``recommend`` all
take their ranges and MFU from here, so the four answers cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from sizer.engine.evaluate import Evaluation


@dataclass(frozen=True)
class Summary:
    """Per evaluated row: seconds per step (low, expected, high), training seconds, MFU and HFU."""

    step_low: npt.NDArray[np.float64]
    step_expected: npt.NDArray[np.float64]
    step_high: npt.NDArray[np.float64]
    steps: npt.NDArray[np.float64]
    mfu: npt.NDArray[np.float64]
    hfu: npt.NDArray[np.float64]

    def training(self, which: Literal["low", "expected", "high"]) -> npt.NDArray[np.float64]:
        """Training seconds at one end of the range.

        Parameters
        ----------
        which : {"low", "expected", "high"}
            The end of the range.

        Returns
        -------
        numpy.ndarray
            Training seconds per row [s].
        """
        step: npt.NDArray[np.float64] = getattr(self, f"step_{which}")
        return step * self.steps


def summarise(ev: Evaluation, rows: npt.ArrayLike, low: npt.NDArray[np.float64] | float, high: npt.NDArray[np.float64] | float,
              peak: npt.NDArray[np.float64] | float) -> Summary:
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
    With :math:`T` the expected step and :math:`T_{min}` the physical limit (model FLOP, each unit's at
    that unit's own datasheet peak):

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
