"""sizer/simulator/iteration_cost.py: an iteration's seconds, and a decode-only stretch run at once equals its
iterations run one by one (an arithmetic series within a cell of the grid)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sizer.simulator.invariants import SimulationInvariantError
from sizer.simulator.iteration_cost import (
    batch_seconds,
    decode_stretch,
    iteration_seconds,
    iterations_until,
    steps_within_cell,
)


def _linear(base: float, per_token: float, per_kv: float):
    return lambda n, k: base + per_token * n + per_kv * k


def test_an_iteration_adds_the_runtimes_cpu_per_running_request():
    interp = _linear(0.01, 1e-5, 1e-8)
    assert iteration_seconds(interp, 100, 10_000, 40, 2e-5) == pytest.approx(0.01 + 1e-3 + 1e-4 + 8e-4, rel=1e-12)


@pytest.mark.parametrize("seconds", [0.0, -1e-3, math.inf, math.nan])
def test_time_that_does_not_move_forward_is_refused(seconds):
    with pytest.raises(SimulationInvariantError, match="an iteration of 5 tokens over 7 KV tokens"):
        iteration_seconds(lambda n, k: seconds, 5, 7, 1, 0.0)


def test_the_steps_within_a_cell_never_cross_its_edge():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        cell = float(rng.uniform(16, 5000))
        kv, decoding = int(rng.integers(0, 100_000)), int(rng.integers(1, 300))
        steps = steps_within_cell(kv, decoding, cell)
        edge = (int(kv / cell) + 1) * cell
        assert steps >= 0 and kv + steps * decoding <= edge
        assert kv + (steps + 1) * decoding > math.floor(edge)  # and no further step would fit


def test_the_root_covers_the_gap():
    rng = np.random.default_rng(4)
    for _ in range(500):
        first, growth, gap = rng.uniform(1e-3, 0.1), rng.uniform(0, 1e-3), rng.uniform(0.01, 100)
        k = iterations_until(first, growth, gap)
        assert k * first + growth * k * (k - 1) / 2 == pytest.approx(gap, rel=1e-9)
    assert iterations_until(0.02, 0.0, 1.0) == pytest.approx(50.0)  # no growth: gap / t0


def test_a_stretch_is_its_iterations_one_by_one():
    interp, per_sequence, decoding, kv = _linear(0.01, 2e-5, 3e-9), 1e-5, 64, 40_000
    steps, span = decode_stretch(interp, decoding, kv, per_sequence, 25, math.inf)
    one_by_one = sum(interp(decoding, kv + i * decoding) + per_sequence * decoding for i in range(25))
    assert steps == 25 and span == pytest.approx(one_by_one, rel=1e-12)


def test_a_stretch_stops_at_the_first_iteration_that_reaches_the_next_arrival():
    interp, decoding, kv = _linear(0.01, 2e-5, 3e-9), 64, 40_000
    _, whole = decode_stretch(interp, decoding, kv, 0.0, 1000, math.inf)
    gap = whole / 3
    steps, span = decode_stretch(interp, decoding, kv, 0.0, 1000, gap)
    _, before = decode_stretch(interp, decoding, kv, 0.0, steps - 1, math.inf)
    assert before < gap <= span and steps < 1000
    assert decode_stretch(interp, decoding, kv, 0.0, 1000, 1e-9)[0] == 1  # at least one iteration


def test_unmixed_batches_run_prefill_then_decode_and_give_first_tokens_after_the_prefill():
    # vLLM V0 without chunked prefill (and SGLang without mixed chunks): the prompts run in an iteration of their
    # own, each pass paying the fixed time, and the answers wait for it; mixed: one pass of both
    interp = _linear(0.01, 1e-5, 1e-8)
    mixed, first_mixed = batch_seconds(interp, 500, 40, 10_000, 42, 2e-5, True)
    apart, first_apart = batch_seconds(interp, 500, 40, 10_000, 42, 2e-5, False)
    assert mixed == first_mixed == pytest.approx(iteration_seconds(interp, 540, 10_000, 42, 2e-5), rel=1e-12)
    assert first_apart == pytest.approx(iteration_seconds(interp, 500, 0, 2, 2e-5), rel=1e-12)
    assert apart == pytest.approx(first_apart + iteration_seconds(interp, 40, 10_000, 40, 2e-5), rel=1e-12)
    assert apart > mixed and first_apart < mixed
    # nothing to keep apart: the same step either way
    assert batch_seconds(interp, 0, 40, 10_000, 40, 0.0, False) == batch_seconds(interp, 0, 40, 10_000, 40, 0.0, True)
