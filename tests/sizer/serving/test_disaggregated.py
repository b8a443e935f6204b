"""Disaggregated prefill and decode pools (DistServe/Splitwise) as one more deployment kind under a rate:
each pool runs its phase only, the KV cache crosses between them, the combined percentiles meet the SLOs."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.errors import InputError
from sizer.passes.arithmetic import kv_cache_bytes_per_token
from sizer.runtimes.formats import weight_format
from sizer.serving.capacity import Slo
from sizer.serving.disaggregated import kv_transfer_seconds, serve_disaggregated
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference
from sizer.simulator.simulate import Replica, batching_table, simulate
from sizer.simulator.traffic import Lengths, Load
from sizer.workloads.registry import find_model

FIXED = Lengths(1024, 256)
SLO = Slo(ttft=1.0, tpot=0.05)
LOAD = dict(model="llama-3.1-70b", rate=10, prompt_len=1024, output_len=256, slo_ttft="1 s", slo_tpot="50 ms",
            max_devices=4, kinds=["gpu"])


@pytest.fixture(scope="module")
def replica(catalog):
    fmt = weight_format("fp8")
    return Replica(find_model("llama-3.1-70b"), fmt, 1.0, batching_table((catalog.find("H100 SXM"),), fmt), 0, 2)


def test_a_prefill_replica_ends_each_request_with_its_first_token(replica):
    both = simulate(replica, Load(rate=1.0), FIXED, requests=100)
    prefill = simulate(dataclasses.replace(replica, phase="prefill"), Load(rate=1.0), FIXED, requests=100)
    assert prefill.complete and len(prefill.tpot) == 0  # one-token answers
    assert np.allclose(prefill.e2e, prefill.ttft)
    assert np.median(prefill.ttft) == pytest.approx(np.median(both.ttft), rel=0.2)  # the same prompts


def test_a_decode_replica_never_prefills_the_prompt(replica):
    both = simulate(replica, Load(rate=1.0), FIXED, requests=100)
    decode = simulate(dataclasses.replace(replica, phase="decode"), Load(rate=1.0), FIXED, requests=100)
    # its first token is one decode-sized step, far below a 1024-token prefill
    assert np.median(decode.ttft) < np.median(both.ttft) / 3
    assert np.median(decode.tpot) == pytest.approx(np.median(both.tpot), rel=0.25)


def test_kv_transfer_is_the_prompts_cache_over_the_node_link(replica):
    table = replica.table
    per_device = 1024 * kv_cache_bytes_per_token(replica.arch, 1.0, 2, 1024)
    assert 2 * 2 <= table.devices_per_node[0]  # two 2-GPU replicas share a node: NVLink
    assert kv_transfer_seconds(replica, 1024) == pytest.approx(per_device / table.link[0] + table.link_latency[0])
    wide = dataclasses.replace(replica, count=8)  # two 8-GPU replicas do not: the network between nodes
    wide_share = 1024 * kv_cache_bytes_per_token(replica.arch, 1.0, 8, 1024)
    assert kv_transfer_seconds(wide, 1024) == pytest.approx(wide_share / table.network[0] + table.network_latency[0])
    assert table.network[0] < table.link[0]


def test_pools_meet_the_combined_slos(replica):
    split = serve_disaggregated(replica, Load(rate=10.0), FIXED, SLO, requests=200)
    assert split is not None and split.slo_met
    assert split.percentile("ttft", 99) <= 1.0 and split.percentile("tpot", 99) <= 0.05
    # each pool covers the rate at its own capacity
    assert split.prefill_replicas * split.prefill_rate >= 10.0 * 0.999
    assert split.decode_replicas * split.decode_rate >= 10.0 * 0.999
    # the TTFT a request sees includes the transfer
    assert np.min(split.ttft) >= split.transfer


def test_a_transfer_past_the_ttft_limit_is_no_deployment(replica):
    assert serve_disaggregated(replica, Load(rate=1.0), FIXED, Slo(ttft=1e-6, tpot=0.05), requests=100) is None


def test_recommend_adds_disaggregated_rows_that_meet_the_slos():
    plain = recommend_inference(InferenceRecommendRequest(**LOAD))
    result = recommend_inference(InferenceRecommendRequest(**LOAD, disaggregated=True))
    split = [r for r in result.ranked if r.deployment == "disaggregated"]
    assert split and all(r.deployment == "colocated" for r in plain.ranked)
    for r in split:
        assert r.replicas == r.prefill_replicas + r.decode_replicas and r.devices_total == r.replicas * r.count
        assert r.latency.ttft.p99 <= 1000 and r.latency.tpot.p99 <= 50 and r.kv_transfer.unit == "ms"
        assert r.output_tokens_per_s.value == pytest.approx(10 * 256)  # the rate, delivered whole
    costs = [r.cost_per_million_tokens.value for r in result.ranked if r.cost_per_million_tokens is not None]
    assert costs == sorted(costs)
    assert any(a.name == "disaggregated" for a in result.assumptions)


def test_disaggregated_needs_a_rate():
    with pytest.raises(InputError) as error:
        recommend_inference(InferenceRecommendRequest(**{**LOAD, "rate": None, "users": 8}, disaggregated=True))
    assert error.value.field == "disaggregated"
    with pytest.raises(InputError):
        recommend_inference(InferenceRecommendRequest(model="llama-2-7b", tokens_per_s_per_user=20, disaggregated=True))


def test_cli_and_http(cli):
    result = cli("recommend", "--inference", "--model", "llama-3.1-70b", "--rate", "10", "--slo-ttft", "1 s",
                 "--slo-tpot", "50 ms", "--max-devices", "4", "--kind", "gpu", "--disaggregated", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["ranked"]
    assert any(r["deployment"] == "disaggregated" and r["prefill_replicas"] >= 1 for r in rows)
    refused = cli("recommend", "--disaggregated")
    assert refused.exit_code == 2 and "disaggregated" in refused.output and "Traceback" not in refused.output
    client = TestClient(create_app())
    body = {"task": "inference", **LOAD, "disaggregated": True}
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    assert any(r["deployment"] == "disaggregated" for r in response.json()["ranked"])
