"""sizer/simulator/simulate.py keeps its own invariants: KV tokens conserved (admitted = held + freed), never
negative, never above the cache; every request finished once; time moving forward. The simulator asserts
them itself and refuses (SimulationInvariantError, a SizerError) rather than answer wrong; these laws are
stated over rates, lengths, scheduler settings and prefix-cache hit rates."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizer.errors import SizerError
from sizer.runtimes.formats import weight_format
from sizer.simulator import simulate as sim
from sizer.simulator.simulate import Replica, SimulationInvariantError, batching_table, simulate
from sizer.simulator.traffic import LENGTH_DISTRIBUTIONS, Lengths, Load
from sizer.workloads.registry import find_model

# small caches (a 24 GB and a 12 GB card) so that admission, preemption and the cache's edge are exercised
DEVICES = ("RTX 4090", "RTX 3060", "H100 SXM")


def _replica(catalog, device, fmt_name, max_batch, budget, hit, reserve):
    fmt = weight_format(fmt_name)
    return Replica(find_model("llama-2-7b"), fmt, 2.0, batching_table((catalog.find(device),), fmt), 0, 1,
                   max_batch=max_batch, token_budget=budget, prefix_hit=hit, reserve_kv=reserve)


def _lengths(draw_named, prompt, output):
    return Lengths(distribution=LENGTH_DISTRIBUTIONS[draw_named]) if draw_named else Lengths(prompt, output)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(device=st.sampled_from(DEVICES), fmt=st.sampled_from(("fp16", "awq-int4-g128")),
       rate=st.one_of(st.floats(0.05, 2000.0), st.none()), users=st.integers(1, 600),
       named=st.one_of(st.none(), st.sampled_from(sorted(LENGTH_DISTRIBUTIONS))),
       prompt=st.integers(1, 6000), output=st.integers(1, 1500), max_batch=st.integers(1, 4096),
       budget=st.integers(64, 8192), hit=st.floats(0.0, 0.95), reserve=st.booleans(), seed=st.integers(0, 3))
def test_a_run_keeps_its_invariants_or_refuses(catalog, device, fmt, rate, users, named, prompt, output, max_batch,
                                               budget, hit, reserve, seed):
    replica = _replica(catalog, device, fmt, max_batch, budget, hit, reserve)
    load = Load(rate=rate) if rate is not None else Load(users=users)
    run = simulate(replica, load, _lengths(named, prompt, output), requests=120, seed=seed)  # raises if broken
    assert np.all(run.ttft >= 0) and np.all(run.e2e >= run.ttft - 1e-12)  # time moves forward for each request
    assert np.all(run.tpot >= 0)
    assert run.simulated_seconds >= 0 and 0 <= run.busy <= 1
    if run.complete:  # every measured request finished once: one latency each
        assert len(run.ttft) == len(run.e2e) == 120 - int(120 * sim.WARMUP_SHARE)


def test_the_120_byte_body_that_ended_in_an_index_error_answers():
    from fastapi.testclient import TestClient

    from api.app import create_app

    # the adversarial pass's body: 7B on a 12 GB card, 1000 requests/s, 4096 running, Azure code lengths, 95 % prefix hits
    body = {"model": "llama-2-7b", "device": "rtx-3060", "rate": 1000, "max_running": 4096, "lengths": "azure-code",
            "prefix_cache_hit": 0.95}
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        response = client.post("/v1/inference", json=body)
    assert response.status_code in (200, 422), response.text


def test_the_120_byte_body_on_a_card_where_it_fits_conserves_kv(catalog):
    # the same scheduler settings where the cache holds something: int4 weights leave ~7 GB of a 12 GB card
    replica = _replica(catalog, "RTX 3060", "awq-int4-g128", 4096, sim.DEFAULT_TOKEN_BUDGET, 0.95, True)
    run = simulate(replica, Load(rate=1000), Lengths(distribution=LENGTH_DISTRIBUTIONS["azure-code"]), requests=600)
    assert run.kv_capacity > 0 and len(run.ttft) > 0


def test_a_broken_iteration_time_is_a_refusal_not_an_answer(catalog, monkeypatch):
    replica = _replica(catalog, "H100 SXM", "fp16", 256, 2048, 0.0, True)
    grid = sim.iteration_grid(replica, 300.0)
    backwards = dataclasses.replace(grid, seconds=-grid.seconds)  # an engine whose iterations run back in time
    monkeypatch.setattr(sim, "iteration_grid", lambda *_: backwards)
    with pytest.raises(SimulationInvariantError, match="invariant") as caught:
        simulate(replica, Load(rate=5.0), Lengths(200, 100), requests=50)
    assert isinstance(caught.value, SizerError)  # a user-facing refusal (CLI exit 2, HTTP 422), not a traceback


def test_the_cache_edge_preempts_within_the_cache(catalog):
    # vLLM's policy on a 24 GB card: 16 GB of weights leave ~13,000 tokens, far fewer than 256 answers of 700 need,
    # so the youngest are preempted; the simulator's own check keeps the held total within the cache
    replica = _replica(catalog, "RTX 4090", "fp16", 256, 2048, 0.0, False)
    run = simulate(replica, Load(rate=50.0), Lengths(400, 300), requests=200)
    assert run.complete and run.preemptions > 0
