"""sizer/formulas/complexity.py: T1 and T2 of seed 003 eq. 2-3 (spec §3.6).

The seed-001 MLP example ([75, 512, 10]) and the bare sums are in
tests/sizer/formulas/test_network_size.py; here: ``inputs``, units, the limits and the laws.
"""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.formulas.complexity import MAX_NEURONS, estimate_complexity, parallel_complexity, sequential_complexity

layer = st.lists(st.floats(min_value=0, max_value=1e3, allow_nan=False), min_size=1, max_size=20)
network = st.lists(layer, min_size=1, max_size=10)


def test_seed_001_mlp_with_the_input_width_given_apart():
    # seed 001 §3.3: input 75, three 512-wide layers, output 10. Fan-in x 1 ns per neuron (seed 003 eq. 2-3):
    # T1 = (512*75 + 512*512 + 512*512 + 10*512) ns, T2 = (75 + 512 + 512 + 512) ns; exact arithmetic
    result = estimate_complexity([512, 512, 512, 10], "1 ns", inputs=75)
    t1 = (512 * 75 + 2 * 512 * 512 + 10 * 512) * 1e-9
    t2 = (75 + 3 * 512) * 1e-9
    assert result.layers == 4 and result.neurons == 3 * 512 + 10
    assert result.sequential.value == pytest.approx(t1, rel=1e-12)
    assert result.parallel.value == pytest.approx(t2, rel=1e-12)
    # the same network with the input width first in the list gives the same answer
    same = estimate_complexity([75, 512, 512, 512, 10], "1 ns")
    assert same.sequential.value == pytest.approx(t1, rel=1e-12)


def test_operation_time_in_any_unit_of_time():
    # 1 us = 1000 ns: the times scale, the speed-up does not
    ns = estimate_complexity([75, 512, 10], "1 ns")
    us = estimate_complexity([75, 512, 10], "1 us")
    assert us.sequential.value == pytest.approx(1000 * ns.sequential.value, rel=1e-12)
    assert us.speedup == pytest.approx(ns.speedup, rel=1e-12)


def test_too_many_neurons_are_refused_naming_layers():
    with pytest.raises(InputError, match="layers"):
        estimate_complexity([10, MAX_NEURONS])


@pytest.mark.parametrize("layers", ["512,10", [10, 0], [10, -5], [10, 2.5]])
def test_widths_that_are_not_positive_integers_are_refused(layers):
    with pytest.raises(InputError, match="layers"):
        estimate_complexity(layers)


@given(network)
def test_parallel_never_exceeds_sequential(times):
    # max_i T <= sum_i T for non-negative times, layer by layer (seed 003 eq. 2 vs eq. 3)
    assert parallel_complexity(times) <= sequential_complexity(times) * (1 + 1e-12)


@given(network)
def test_one_neuron_per_layer_gives_no_speedup(times):
    single = [[max(layer)] for layer in times]
    assert parallel_complexity(single) == pytest.approx(sequential_complexity(single))


@given(st.lists(st.integers(1, 300), min_size=2, max_size=6), st.integers(1, 300))
def test_a_wider_layer_never_takes_less_time(widths, extra):
    # more neurons (and so more fan-in for the next layer) never make either complexity smaller
    base = estimate_complexity(widths)
    wider = estimate_complexity(widths[:-1] + [widths[-1] + extra])
    assert wider.sequential.value >= base.sequential.value
    assert wider.parallel.value >= base.parallel.value
    assert base.speedup >= 1
