"""K1, the redundancy of the network memory (spec §3.7; seed 003 eq. 4).

>>> k1_ratio(5000, 10, 100)
5.0
"""
from __future__ import annotations

import math
from typing import Literal

from sizer.errors import InputError
from sizer.results import Assumption, Model
from sizer.units import parse_count

DEFAULT_TOLERANCE = 0.01
Verdict = Literal["redundant", "exact", "insufficient"]
MEANING = {
    "redundant": "network memory is larger than the training sample (K1 > 1)",
    "exact": "the network can remember the whole training sample (K1 = 1)",
    "insufficient": "the network cannot remember the training sample exactly (K1 < 1)",
}


def k1_ratio(weights: float, samples: float, features: float) -> float:
    r"""K1, the redundancy of the network memory.

    .. math::

        K_1 = \frac{N_w}{S N}, \qquad N_w > 1,\ S > 0,\ N > 0

    Parameters
    ----------
    weights : float
        Weights and thresholds N_w [1].
    samples : float
        Training specimens S [1].
    features : float
        Features per specimen N [1].

    Returns
    -------
    float
        K1 [1]: above 1 the network memory is redundant, at 1 it can remember the whole
        training sample, below 1 it cannot remember it exactly.

    Raises
    ------
    InputError
        Outside the domain N_w > 1, S > 0, N > 0, or a ratio that is not a finite number.

    References
    ----------
    [seed-003-eq4], [spec-3.7]
    """
    if not weights > 1:
        raise InputError("weights", weights, "more than 1 weight (K1 is defined for N_w > 1)")
    if not samples > 0:
        raise InputError("samples", samples, "more than 0 samples (K1 is defined for S > 0)")
    if not features > 0:
        raise InputError("features", features, "more than 0 features (K1 is defined for N > 0)")
    denominator = samples * features  # tiny counts underflow to 0, huge ratios overflow to inf
    k1 = weights / denominator if denominator > 0 else math.inf
    if not math.isfinite(k1):
        raise InputError("samples", samples, f"samples x features large enough that K1 = {weights:g} / (S N) "
                                             "stays a finite number")
    return k1


def k1_verdict(k1: float, tolerance: float = DEFAULT_TOLERANCE) -> Verdict:
    """The meaning of a K1 value, with K1 = 1 judged within a relative tolerance.

    Parameters
    ----------
    k1 : float
        The ratio K1 [1].
    tolerance : float, default 0.01
        Largest relative distance from 1 that still counts as K1 = 1 [1].

    Returns
    -------
    str
        ``"exact"`` within the tolerance of 1, else ``"redundant"`` (K1 > 1) or
        ``"insufficient"`` (K1 < 1).

    References
    ----------
    [seed-003-eq4], [spec-3.7]
    """
    if abs(k1 - 1) <= tolerance:
        return "exact"
    return "redundant" if k1 > 1 else "insufficient"


class K1Result(Model):
    k1: float
    verdict: Verdict
    meaning: str
    tolerance: float
    assumptions: list[Assumption]


def estimate_k1(weights: float | str, samples: float | str, features: float | str,
                tolerance: float = DEFAULT_TOLERANCE) -> K1Result:
    """K1 with every input checked, its verdict and what the verdict means.

    Parameters
    ----------
    weights : count
        Weights and thresholds N_w [1].
    samples : count
        Training specimens S [1].
    features : count
        Features per specimen N [1].
    tolerance : float, default 0.01
        Relative tolerance for K1 = 1 [1], from 0 to below 1.

    Returns
    -------
    K1Result
        K1 [1], its verdict and meaning, the tolerance and the assumptions.

    Raises
    ------
    InputError
        A count that is not a number, outside the domain of K1, or a tolerance outside [0, 1).

    References
    ----------
    [seed-003-eq4], [spec-3.7]
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < 1:
        raise InputError("tolerance", tolerance, "a relative tolerance from 0 to below 1")
    k1 = k1_ratio(parse_count("weights", weights), parse_count("samples", samples), parse_count("features", features))
    verdict = k1_verdict(k1, tolerance)
    return K1Result(k1=k1, verdict=verdict, meaning=MEANING[verdict], tolerance=tolerance,
                    assumptions=[Assumption(name="K1", value="N_w / (S N)", source="seed 003 eq. 4"),
                                 Assumption(name="tolerance", value=f"|K1 - 1| <= {tolerance:g} counts as K1 = 1", source="default")])
