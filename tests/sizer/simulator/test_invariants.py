"""sizer/simulator/invariants.py: a broken invariant is a user-facing refusal, never a traceback or a figure."""
from __future__ import annotations

import pytest

from sizer.errors import SizerError
from sizer.simulator.invariants import SimulationInvariantError, broken


def test_a_broken_invariant_is_a_refusal_that_names_it():
    with pytest.raises(SimulationInvariantError, match=r"invariant \(request 7 finished twice\)") as caught:
        broken("request 7 finished twice")
    # a SizerError (a ValueError): the CLI prints one line with exit 2, the HTTP layer answers 422
    assert isinstance(caught.value, SizerError) and isinstance(caught.value, ValueError)
    assert "no answer is given" in caught.value.message


def test_the_refusal_is_the_one_simulate_exports():
    from sizer.simulator import simulate

    assert simulate.SimulationInvariantError is SimulationInvariantError
