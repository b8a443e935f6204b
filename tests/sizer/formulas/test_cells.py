"""sizer/formulas/cells.py: the memory-cell count N_na of seed 003 eq. 1 (spec §3.5).

The worked example with every coefficient is in tests/sizer/formulas/test_network_size.py; here:
the terms the result reports, the byte size, the checks on input, and the equation's laws.
"""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.formulas.cells import estimate_cells, memory_cell_count

counts = st.integers(min_value=1, max_value=10**9)


def test_the_three_terms_add_up_to_the_count():
    # seed 003 eq. 1 by hand: eta_b S (N + N_M) = 2 x 1000 x (75 + 10) = 170,000 (seed 001's 75 keypoint
    # features and 10 classes); eta_w N_w = 1 x 300,000; eta_v N_v = 4 x 50 = 200 -> 470,200 cells
    result = estimate_cells(1000, 75, 10, 300_000, variables=50, eta_b=2, eta_v=4)
    assert (result.training_data_cells, result.weight_cells, result.variable_cells) == (170_000, 300_000, 200)
    assert result.cells == 470_200


def test_memory_is_cells_times_the_cell_size():
    # 470,200 cells of 2 B (an FP16 value) = 940,400 B = 9.404e-4 GB; exact up to float rounding
    result = estimate_cells(1000, 75, 10, 300_000, variables=50, eta_b=2, eta_v=4, cell_size="2 B")
    assert result.memory.unit == "GB"
    assert result.memory.value == pytest.approx(940_400 / 1e9, rel=1e-12)
    # the default cell is one FP32 value, 4 B, and the assumptions say so
    default = estimate_cells(1000, 75, 10, 300_000)
    assert default.memory.value == pytest.approx(default.cells * 4 / 1e9, rel=1e-12)
    assert any(a.name == "cell size" and a.value.startswith("4") and a.value.endswith(" B") for a in default.assumptions)


def test_counts_given_as_strings_are_parsed():
    # a count string such as "1e6" is the number it reads as: 1e6 x (100 + 0) + 1e4 = 100,010,000
    assert estimate_cells("1e6", "100", 0, "1e4").cells == 100_010_000


@pytest.mark.parametrize("field, kwargs", [
    ("samples", dict(samples=-1)), ("features", dict(features=0)), ("weights", dict(weights="many")),
    ("outputs", dict(outputs=-3)), ("variables", dict(variables=-1)), ("eta_b", dict(eta_b=-1)),
])
def test_a_bad_count_is_refused_naming_its_field(field, kwargs):
    args = dict(samples=10, features=100, outputs=0, weights=1000) | kwargs
    with pytest.raises(InputError, match=field):
        estimate_cells(args.pop("samples"), args.pop("features"), args.pop("outputs"), args.pop("weights"), **args)


def test_a_cell_size_that_is_not_information_is_refused():
    with pytest.raises(InputError, match="cell_size"):
        estimate_cells(10, 100, 0, 1000, cell_size="4 s")


@given(counts, counts, st.integers(0, 10**6), counts, counts)
def test_more_of_any_input_never_needs_fewer_cells(samples, features, outputs, weights, extra):
    # every term of eq. 1 has a non-negative coefficient
    base = memory_cell_count(samples, features, outputs, weights)
    assert memory_cell_count(samples + extra, features, outputs, weights) >= base
    assert memory_cell_count(samples, features + extra, outputs, weights) >= base
    assert memory_cell_count(samples, features, outputs + extra, weights) >= base
    assert memory_cell_count(samples, features, outputs, weights + extra) >= base


@given(counts, counts, counts, st.integers(1, 8))
def test_cells_per_element_scale_the_data_term_linearly(samples, features, weights, eta):
    # eta_b multiplies S (N + N_M) and nothing else
    one = memory_cell_count(samples, features, 0, weights)
    more = memory_cell_count(samples, features, 0, weights, cells_per_data_element=eta)
    assert more - one == pytest.approx((eta - 1) * samples * features, rel=1e-9)
