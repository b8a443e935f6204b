"""A trace's arrival times are used only when asked, and said (issue 43: a trace's arrival_s column silently replaced
--rate in the capacity search, 37 replicas instead of 85 at 1,000 requests/s, while the answer said "Poisson
arrivals"). Asked (trace_arrivals), the trace's pattern is replayed with its gaps scaled to the rate, so the capacity
search and each replica's share keep their meaning."""
from __future__ import annotations

import numpy as np
import pytest

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.simulator.arrivals import open_arrival_times, replayed_arrivals
from sizer.simulator.traffic import Lengths, Load, trace_rate

# 300 requests at about 1 request/s with a 30 s lull every 50: a bursty pattern unlike Poisson at 100 requests/s
_RNG = np.random.default_rng(1)
_ROWS = [(int(_RNG.integers(100, 1500)), int(_RNG.integers(20, 400))) for _ in range(300)]
_TIMES = np.cumsum([30.0 if i % 50 == 0 else float(_RNG.exponential(1.0)) for i in range(300)])
WITH_ARRIVALS = "prompt_len,output_len,arrival_s\n" + "".join(f"{p},{o},{t:.3f}\n" for (p, o), t in zip(_ROWS, _TIMES, strict=True))
LENGTHS_ONLY = "prompt_len,output_len\n" + "".join(f"{p},{o}\n" for p, o in _ROWS)
ASK = {"model": "llama-3.1-8b", "device": "H100 SXM", "rate": 100, "slo_ttft": "150 ms", "slo_tpot": "20 ms"}


def _said(result, name: str) -> str:
    return next(a.value for a in result.assumptions if a.name == name)


def test_replayed_arrivals_keep_the_pattern_at_the_rate_asked():
    times = replayed_arrivals(_TIMES, 50.0, 1000)  # the trace more than three times over
    assert len(times) == 1000 and np.all(np.diff(times) >= 0)
    assert (len(times) - 1) / (times[-1] - times[0]) == pytest.approx(50.0, rel=0.02)
    gaps, own = np.diff(times[:300]), np.diff(_TIMES)
    assert np.allclose(gaps, own * trace_rate(_TIMES) / 50.0)  # every gap scaled alike: the bursts stay bursts


def test_without_asking_the_arrivals_are_poisson_at_the_rate():
    rng = np.random.default_rng(0)
    poisson = open_arrival_times(Load(rate=100.0), Lengths(prompt_len=10, output_len=10), 600, rng)
    assert (len(poisson) - 1) / (poisson[-1] - poisson[0]) == pytest.approx(100.0, rel=0.15)


def test_a_trace_s_arrival_column_changes_nothing_unless_asked_and_is_said(catalog):
    plain = estimate_inference(InferenceRequest(**ASK, trace=LENGTHS_ONLY), catalog)
    unasked = estimate_inference(InferenceRequest(**ASK, trace=WITH_ARRIVALS), catalog)
    assert unasked.capacity.replicas == plain.capacity.replicas
    assert unasked.capacity.max_request_rate.value == plain.capacity.max_request_rate.value
    assert "Poisson" in _said(unasked, "load") and "not used" in _said(unasked, "load")
    asked = estimate_inference(InferenceRequest(**ASK, trace=WITH_ARRIVALS, trace_arrivals=True), catalog)
    assert "arrival times" in _said(asked, "load") and "Poisson" not in _said(asked, "load")
    assert "Poisson" not in _said(asked, "capacity")
    # the bursts cost capacity: a lower rate per replica than Poisson arrivals at the same mean
    assert asked.capacity.max_request_rate.value < plain.capacity.max_request_rate.value


@pytest.mark.parametrize("fields", [
    {"trace": LENGTHS_ONLY, "trace_arrivals": True, "rate": 10},  # nothing to replay
    {"trace_arrivals": True, "rate": 10},  # no trace
    {"trace": WITH_ARRIVALS, "trace_arrivals": True, "users": 10},  # a closed loop sends its own
    {"trace_arrivals": True},  # no load at all
])
def test_asking_for_arrivals_there_are_none_of_is_refused_naming_the_field(catalog, fields):
    with pytest.raises(InputError) as refused:
        estimate_inference(InferenceRequest(model="llama-3.1-8b", device="H100 SXM", **fields), catalog)
    assert "trace_arrivals" in str(refused.value)
