"""A production serving ranking (issue 38, item 7; sizer/serving/production.py): data-centre devices by default,
consumer and workstation ones only when asked, and every deployment sized within a stated utilisation headroom."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.hardware.catalog import load_catalog
from sizer.schemas.serving import LoadOption
from sizer.schemas.serving_requests import InferenceRecommendRequest
from sizer.serving.load_search import FULL_SEARCH_ROWS
from sizer.serving.production import (
    DEFAULT_MAX_UTILISATION,
    production_devices,
    replicas_for,
)
from sizer.serving.recommend_devices import recommend_inference
from sizer.serving.segment import segment

# The issue's example: a production 70B at a realistic load (MLPerf's Llama-2-70B server TTFT limit, 2 s at p99:
# docs/references.md [mlperf-inference])
PRODUCTION_70B = dict(model="llama-3.3-70b", rate=10, prompt_len=1000, output_len=200, slo_ttft="2 s")


@pytest.fixture(scope="module")
def production_70b():
    return recommend_inference(InferenceRecommendRequest(**PRODUCTION_70B))


def test_replicas_for_keeps_each_replica_within_the_share():
    assert replicas_for(10.0, 7.0, 0.7) == 3  # 2 replicas would carry 10/14 = 71 % each
    assert replicas_for(10.0, 7.0, 1.0) == 2
    assert replicas_for(7.0, 10.0, 0.7) == 1  # exactly 70 %: one is enough
    assert replicas_for(0.001, 10.0, 0.7) == 1


def test_production_devices_leave_out_consumer_and_workstation_ones_and_say_how_many():
    catalog = load_catalog()
    devices = tuple(catalog)
    kept, out = production_devices(devices, consumer=False)
    assert kept and all(segment(d) == "data-centre" for d in kept)
    assert out.searched == ["data-centre"]
    assert {x.segment for x in out.left_out} == {"workstation", "consumer"}
    assert sum(x.devices for x in out.left_out) + len(kept) == len(devices)
    every, out = production_devices(devices, consumer=True)
    assert every == devices and not out.left_out


def test_production_devices_refuse_naming_consumer_where_no_data_centre_device_is_left():
    desk = tuple(d for d in load_catalog() if segment(d) == "consumer")
    with pytest.raises(InputError) as error:
        production_devices(desk, consumer=False)
    assert error.value.field == "consumer"


def test_the_issues_example_ranks_no_geforce_rtx_3090_by_default(production_70b):
    ranked = [r.device for r in production_70b.ranked]
    assert ranked and "rtx-3090" not in ranked
    assert all(segment(load_catalog().find(d)) == "data-centre" for d in ranked)
    assert "rtx-3090" not in [r.device for r in production_70b.rejected]  # left out, not tried and refused
    said = production_70b.devices_searched
    assert said is not None and said.searched == ["data-centre"] and said.left_out
    devices = next(a for a in production_70b.assumptions if a.name == "devices")
    assert "consumer" in devices.value and "--consumer" in devices.value


def test_no_default_row_is_loaded_beyond_the_headroom_and_every_row_says_it(production_70b):
    assert production_70b.max_utilisation == DEFAULT_MAX_UTILISATION
    assert all(row.capacity_searched for row in production_70b.ranked[:FULL_SEARCH_ROWS])
    for row in production_70b.ranked:
        assert isinstance(row, LoadOption)
        assert 0 < row.utilisation <= DEFAULT_MAX_UTILISATION + 1e-9, (row.name, row.utilisation)
        assert row.headroom == pytest.approx(1 - row.utilisation)
        # the utilisation is the load each replica carries over its capacity (bisected, or the rate it was shown to
        # serve within the SLOs: a lower bound of the capacity, so the utilisation is an upper bound)
        assert row.utilisation == pytest.approx(PRODUCTION_70B["rate"] / (row.replicas * row.max_request_rate.value),
                                                rel=1e-6)
    assert any(a.name == "headroom" and "70%" in a.value for a in production_70b.assumptions)


def test_with_consumer_the_consumer_cards_are_searched_and_a_looser_headroom_needs_no_more_replicas(production_70b):
    loose = recommend_inference(InferenceRecommendRequest(**PRODUCTION_70B, consumer=True, max_utilisation=0.9))
    tried = {r.device for r in loose.ranked} | {r.device for r in loose.rejected}
    assert "rtx-3090" in tried  # the issue's example: with --consumer they may appear
    assert loose.devices_searched is not None and not loose.devices_searched.left_out
    assert all(r.utilisation <= 0.9 + 1e-9 for r in loose.ranked)
    strict = {(r.device, r.count, r.weights, r.kv_cache): r.replicas for r in production_70b.ranked}
    for r in loose.ranked:  # the same deployment at 90 % needs no more replicas than at 70 %
        if (r.device, r.count, r.weights, r.kv_cache) in strict:
            assert r.replicas <= strict[(r.device, r.count, r.weights, r.kv_cache)]


def test_the_offline_ranking_is_data_centre_too():
    answer = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", weights="fp8", tokens_per_s_per_user=20))
    assert answer.ranked and all(segment(load_catalog().find(r.device)) == "data-centre" for r in answer.ranked)
    assert answer.devices_searched is not None and answer.devices_searched.left_out


def test_max_utilisation_is_a_load_field():
    with pytest.raises(InputError) as error:  # without a load it would be ignored
        recommend_inference(InferenceRecommendRequest(model="llama-2-7b", max_utilisation=0.5))
    assert error.value.field == "rate"
