"""The recommender's parts on small hand-made grids: the budget (:func:`_within_budget`) and the ranking
(:func:`_rank`) by each objective. The numbers are made up so that each order can be worked by hand."""
from __future__ import annotations

import numpy as np
import pytest

from sizer.hardware.catalog import Catalog
from sizer.plan.recommend import _Options, _rank, _within_budget
from sizer.units import Quantity

NAN = np.nan


def options(seconds: list[float], rent: list[float], buy: list[float], basis: list[str]) -> _Options:
    """Four options, one device each: the cost ranked by is the rent or the purchase, as ``basis`` says."""
    n = len(seconds)
    rent_a, buy_a = np.asarray(rent, dtype=float), np.asarray(buy, dtype=float)
    use_buy = np.asarray(basis) == "buy"
    return _Options(device_row=np.arange(n), column=np.zeros(n, dtype=int), device_count=np.full(n, 2),
                    run_seconds=np.asarray(seconds, dtype=float), rent=rent_a, buy=buy_a, energy_kwh=np.ones(n),
                    order_cost=np.where(use_buy, buy_a, rent_a), basis_of=np.asarray(basis),
                    spent=np.where(use_buy, buy_a * 10, rent_a))


@pytest.fixture()
def four() -> _Options:
    # time [s], rent [USD], buy [USD]: option 3 has no price of its basis
    return options([10.0, 20.0, 5.0, 1.0], [300.0, 100.0, NAN, NAN], [50.0, 60.0, 400.0, NAN],
                   ["rent", "rent", "buy", "rent"])


def test_by_time_the_priced_fastest_first_and_the_unpriced_apart(four: _Options) -> None:
    order, apart, flags = _rank(four, np.ones(4, dtype=bool), "time")
    assert order.tolist() == [2, 0, 1] and apart.tolist() == [3]
    # each basis its own front: both rents are on theirs (faster or cheaper), the one purchase on its own
    assert flags.tolist() == [True, True, True, False]


def test_by_cost_rents_first_then_purchases_each_cheapest_first(four: _Options) -> None:
    order, _, _ = _rank(four, np.ones(4, dtype=bool), "cost")
    assert order.tolist() == [1, 0, 2]


def test_by_pareto_the_front_first_by_time() -> None:
    dominated = options([10.0, 20.0, 30.0], [100.0, 50.0, 200.0], [NAN] * 3, ["rent"] * 3)
    order, _, flags = _rank(dominated, np.ones(3, dtype=bool), "pareto")
    assert flags.tolist() == [True, True, False] and order.tolist() == [0, 1, 2]


def test_options_not_kept_are_neither_ranked_nor_apart(four: _Options) -> None:
    order, apart, _ = _rank(four, np.asarray([True, False, True, False]), "time")
    assert order.tolist() == [2, 0] and apart.tolist() == []


def test_no_budget_keeps_everything(catalog: Catalog, four: _Options) -> None:
    keep, rejected = _within_budget(four, tuple(catalog)[:4], None, "rent")
    assert keep.all() and rejected == []


def test_over_budget_and_unpriced_options_are_rejected_with_their_cause(catalog: Catalog, four: _Options) -> None:
    devices = tuple(catalog)[:4]
    keep, rejected = _within_budget(four, devices, Quantity(250.0, "USD"), "any")
    # spent: rent 300 (over), rent 100 (within), capital 4000 (over), nothing (no price)
    assert keep.tolist() == [False, True, False, False]
    assert [r["cause"] for r in rejected] == ["budget", "budget", "price"]
    assert [r["device"] for r in rejected] == [devices[0].id, devices[2].id, devices[3].id]
    assert rejected[0]["reason"] == "over budget: rent 300 USD for 2 device(s) against 250 USD"
    assert rejected[1]["reason"].startswith("over budget: capital 4,000 USD")
    assert "rent or purchase price" in rejected[2]["reason"]


def test_default_fields_are_the_default_workloads() -> None:
    """The recommendation validates the default workload with its own request model (no second validator built
    at start-up): the fields must be those of :func:`default_workload`, value for value."""
    from sizer.plan.recommend import _default_fields
    from sizer.schemas.base import default_workload

    assert _default_fields() == default_workload().model_dump(exclude_unset=True)
    assert set(_default_fields()) == {"params", "tokens", "precision", "optimizer"}


def test_the_default_workloads_fields_validate_to_themselves() -> None:
    """Whether a question is the default one is checked against the fields as given (no validation per question):
    each validates to the value it is given, and a question that asks the default is told so."""
    from sizer.plan.recommend import _default_fields, _is_default
    from sizer.schemas.base import DEFAULT_WORKLOAD_FIELDS
    from sizer.schemas.recommendation import RecommendRequest

    assert _default_fields() == DEFAULT_WORKLOAD_FIELDS
    assert _is_default(RecommendRequest(**DEFAULT_WORKLOAD_FIELDS))
    assert _is_default(RecommendRequest(**{**DEFAULT_WORKLOAD_FIELDS, "precision": "mixed"}))
    assert not _is_default(RecommendRequest(**{**DEFAULT_WORKLOAD_FIELDS, "params": 7e9}))
    assert not _is_default(RecommendRequest(**{**DEFAULT_WORKLOAD_FIELDS, "seq_len": 4096}))
