"""sizer/recommend.py: ranking, constraints, Pareto front, a reason for every rejection."""
import pytest

from sizer.recommend import RecommendRequest, _pareto, recommend
from sizer.units import Quantity


def _days(r):
    return Quantity(r.training_time.expected, r.training_time.unit).to("day").magnitude


def test_default_workload_is_named_and_ranked():
    result = recommend()
    assert result.workload.startswith("default:")
    assert result.ranked and all(r.reason for r in result.rejected)
    times = [_days(r) for r in result.ranked]
    assert times == sorted(times)  # ranked by time by default
    assert all(r.fits for r in result.ranked)


def test_7b_needs_several_80gb_devices_and_says_why_small_ones_fail():
    result = recommend(RecommendRequest(params=7e9, tokens=2e10, precision="bf16", optimizer="adamw", max_devices=8))
    h100 = next(r for r in result.ranked if r.device.startswith("h100-sxm"))
    assert h100.count >= 2 and h100.sharding == "full"
    reasons = {r.device: r.reason for r in result.rejected}
    assert any("does not fit" in reason for reason in reasons.values())
    assert "no bf16 support" in reasons["tesla-p40"]


def test_deadline_and_budget_reject_with_reasons():
    base = RecommendRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw", max_devices=8)
    free = recommend(base)
    fastest = _days(free.ranked[0])
    tight = recommend(base.model_copy(update={"deadline": f"{fastest * 2} d"}))
    assert any("misses deadline" in r.reason for r in tight.rejected)
    assert all(_days(r) <= fastest * 2 * (1 + 1e-9) for r in tight.ranked)
    poor = recommend(base.model_copy(update={"budget": "10 USD"}))
    assert not poor.ranked and any("over budget" in r.reason or "price" in r.reason for r in poor.rejected)


def test_cost_objective_orders_by_cost():
    result = recommend(RecommendRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw", objective="cost"))
    costs = [r.cost.rent.expected for r in result.ranked if r.cost.rent]
    assert costs == sorted(costs)
    assert all(r.cost.rent is None for r in result.ranked[len(costs):])


def test_pareto_objective_puts_the_front_first():
    result = recommend(RecommendRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw", objective="pareto"))
    flags = [r.pareto for r in result.ranked]
    assert any(flags) and flags == sorted(flags, reverse=True)


def test_pareto_helper():
    assert _pareto([(1, 10), (2, 5), (3, 6), (4, None)]) == [True, True, False, False]


def test_kind_filter_and_k1_and_host():
    result = recommend(RecommendRequest(params=6.9e5, samples=80909, epochs=400, batch_size=512, kinds=["cpu"],
                                        features=75, sample_size="300 B"))
    assert result.ranked and all(r.kind == "cpu" for r in result.ranked)
    assert result.k1 is not None and result.k1.verdict in ("redundant", "exact", "insufficient")
    assert result.host is not None and result.host.dataset_memory.value == pytest.approx(80909 * 300 / 1e9)
