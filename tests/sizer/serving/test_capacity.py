"""sizer/serving/capacity.py: the largest load a replica serves within its SLOs, and the replicas a load needs.

test_simulate.py checks that the capacity found meets its SLO and that 2.5 x that load needs 3
replicas; here: the SLO test itself, the capacity without SLOs, the laws of the search (a looser limit
never serves less), and fixed replica counts.
"""
import math

import numpy as np
import pytest

from sizer.runtimes.formats import weight_format
from sizer.serving.capacity import Slo, max_rate, saturated, serve_load
from sizer.simulator.simulate import Replica, SimulationResult, batching_table
from sizer.simulator.traffic import Lengths, Load
from sizer.workloads.registry import find_model

FIXED = Lengths(512, 128)
REQUESTS = 200


def _result(ttft, tpot, e2e, complete=True):
    return SimulationResult(ttft=np.asarray(ttft, float), tpot=np.asarray(tpot, float), e2e=np.asarray(e2e, float),
                            output_tokens_per_s=1.0, total_tokens_per_s=1.0, request_rate=1.0, preemptions=0, busy=0.5,
                            complete=complete, iterations=1, simulated_seconds=1.0, kv_capacity=1)


def test_an_slo_holds_at_its_percentile():
    # 100 requests, TTFT 0.01 .. 1.00 s: the 99th percentile is 0.9901 s (numpy's linear interpolation),
    # the 50th 0.505 s
    ttft = np.arange(1, 101) / 100
    run = _result(ttft, np.full(100, 0.02), ttft + 1)
    assert Slo(ttft=1.0).met(run) and not Slo(ttft=0.98).met(run)
    assert Slo(ttft=0.51, percentile=50).met(run) and not Slo(ttft=0.5, percentile=50).met(run)
    assert Slo(ttft=1.0, tpot=0.02, e2e=2.0).met(run) and not Slo(ttft=1.0, tpot=0.019).met(run)


def test_an_unfinished_run_meets_no_slo():
    run = _result([0.1], [0.01], [0.2], complete=False)
    assert not Slo(ttft=100.0).met(run) and not Slo().met(run)


def test_without_limits_an_slo_asks_nothing():
    assert not Slo().any and Slo(e2e=3.0).any
    assert Slo().met(_result([5.0], [1.0], [50.0]))


@pytest.fixture(scope="module")
def replica(catalog):
    # Llama 2 7B in FP16 on one H100 SXM, as the serving estimates build a replica
    fmt = weight_format("fp16")
    return Replica(find_model("llama-2-7b"), fmt, 2.0, batching_table((catalog.find("H100 SXM"),), fmt), 0, 1)


@pytest.fixture(scope="module")
def full(replica):
    return saturated(replica, FIXED, REQUESTS)


def test_without_slos_the_capacity_is_the_saturated_throughput(replica, full):
    rate, run = max_rate(replica, FIXED, Slo(), REQUESTS, full=full)
    assert rate == full.steady_request_rate > 0 and run is full
    # and a saturated replica is busy all the time (a closed loop with more users than batch slots)
    assert full.busy > 0.99


def test_a_looser_limit_never_serves_less(replica, full):
    rates = [max_rate(replica, FIXED, Slo(tpot=limit), REQUESTS, full=full, steps=6)[0] for limit in (0.012, 0.02, 0.05)]
    assert rates == sorted(rates)
    assert rates[-1] <= full.steady_request_rate * 1.05


def test_a_limit_no_request_can_meet_gives_zero(replica, full):
    # a decode step streams 13.5 GB of FP16 weights at 3.35 TB/s (H100 datasheet): at least 4 ms per token
    rate, _ = max_rate(replica, FIXED, Slo(tpot=1e-4), REQUESTS, full=full)
    assert rate == 0.0


def test_a_fixed_number_of_replicas_shares_the_load(replica, full):
    slo = Slo(ttft=5.0, tpot=0.2)
    cap, _ = max_rate(replica, FIXED, slo, REQUESTS, full=full, steps=6)
    load = Load(rate=cap * 1.5)
    answer = serve_load(replica, load, FIXED, slo, REQUESTS, full=full, replicas=3, steps=6)
    assert answer.replicas == 3 and answer.max_request_rate == pytest.approx(cap)
    assert answer.utilisation == pytest.approx(1.5 / 3)
    # half the capacity per replica: the SLOs hold, and the verdict is the one replica's run's
    assert answer.slo_met == slo.met(answer.run) and answer.slo_met


def test_the_replicas_cover_the_load_and_no_fewer_would(replica, full):
    slo = Slo(ttft=5.0, tpot=0.2)
    answer = serve_load(replica, Load(rate=12.0), FIXED, slo, REQUESTS, full=full, steps=6)
    assert answer.replicas == math.ceil(12.0 / answer.max_request_rate - 1e-9)
    assert answer.replicas * answer.max_request_rate >= 12.0 > (answer.replicas - 1) * answer.max_request_rate
    assert answer.utilisation <= 1.0


def test_a_utilisation_cap_keeps_each_replica_within_its_share(replica, full):
    # the headroom (sizer/serving/production.py): the load at most 70 % of the replicas' capacity
    slo = Slo(ttft=5.0, tpot=0.2)
    cap, _ = max_rate(replica, FIXED, slo, REQUESTS, full=full, steps=6)
    answer = serve_load(replica, Load(rate=2.5 * cap), FIXED, slo, REQUESTS, full=full, steps=6, max_utilisation=0.7)
    assert answer.replicas == 4  # 2.5 / 0.7 = 3.6 replicas' worth; without the cap 3 (the test above)
    assert answer.utilisation == pytest.approx(2.5 / 4) and answer.slo_met
    users = serve_load(replica, Load(users=40), FIXED, slo, REQUESTS, full=full, steps=6, max_utilisation=0.5)
    assert users.utilisation <= 0.5 and users.replicas is not None
