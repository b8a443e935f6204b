"""sizer/formulas/redundancy.py: K1 = N_w / (S N) of seed 003 eq. 4 (spec §3.7).

The three verdicts at S = 10, N = 100 and the domain checks are in
tests/sizer/formulas/test_network_size.py; here: the tolerance, the meanings, overflow and the laws.
"""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.formulas.redundancy import MEANING, estimate_k1, k1_ratio, k1_verdict

positive = st.floats(min_value=1e-3, max_value=1e12, allow_nan=False, allow_infinity=False)


def test_seed_001_mlp_memory_is_redundant():
    # seed 001 §3.2-3.3: 75 features; 80 % of 101,136 frames train (80,909 specimens); the MLP
    # 75-512-512-512-10 has 75*512+512 + 2*(512*512+512) + 512*10+10 = 569,866 weights and biases.
    # K1 = 569,866 / (80,909 x 75) = 0.0939: far too small to remember the sample (seed 003 eq. 4)
    weights = 75 * 512 + 512 + 2 * (512 * 512 + 512) + 512 * 10 + 10
    result = estimate_k1(weights, 80_909, 75)
    assert result.k1 == pytest.approx(weights / (80_909 * 75), rel=1e-12)
    assert result.verdict == "insufficient"
    assert result.meaning == MEANING["insufficient"]


def test_the_tolerance_decides_what_counts_as_exact():
    # K1 = 1030 / 1000 = 1.03: exact within 5 %, redundant within the default 1 %
    assert estimate_k1(1030, 10, 100, tolerance=0.05).verdict == "exact"
    assert estimate_k1(1030, 10, 100).verdict == "redundant"
    assert k1_verdict(0.97, 0.05) == "exact" and k1_verdict(0.97) == "insufficient"


@pytest.mark.parametrize("tolerance", [-0.1, 1, 1.5, True, "0.1"])
def test_a_tolerance_outside_zero_to_one_is_refused(tolerance):
    with pytest.raises(InputError, match="tolerance"):
        estimate_k1(1000, 10, 100, tolerance=tolerance)


def test_a_ratio_that_overflows_is_refused_not_infinite():
    # 1e300 / (1e-200 x 1e-200) overflows a float: no quiet inf
    with pytest.raises(InputError, match="samples"):
        k1_ratio(1e300, 1e-200, 1e-200)


def test_every_verdict_has_a_meaning():
    assert set(MEANING) == {"redundant", "exact", "insufficient"}
    for verdict, meaning in MEANING.items():
        assert ("K1 > 1" in meaning) == (verdict == "redundant")


@given(st.floats(1.0001, 1e12), positive, positive, st.floats(1.01, 100))
def test_more_samples_or_features_never_raise_k1(weights, samples, features, factor):
    k1 = k1_ratio(weights, samples, features)
    assert k1_ratio(weights, samples * factor, features) <= k1
    assert k1_ratio(weights, samples, features * factor) <= k1
    assert math.isfinite(k1) and k1 > 0


@given(st.floats(1e-6, 1e6))
def test_verdict_is_monotone_in_k1(k1):
    # below 1 - tol insufficient, above 1 + tol redundant: the order of the verdicts follows K1
    order = {"insufficient": 0, "exact": 1, "redundant": 2}
    assert order[k1_verdict(k1)] <= order[k1_verdict(k1 * 1.5)]
