"""One engine behind every answer (issue 9): the same question through `time`, `recommend`, `sweep`, HTTP
and the CLI gives the same number; a bare parameter count and the model it stands for give the same FLOPs."""
import json

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.facade import RecommendRequest, TimeRequest, WorkloadRequest, estimate_compute, estimate_time, recommend, sweep
from sizer.units import Quantity
from sizer.workloads.registry import find_model

QUESTION = dict(model="llama-2-7b", tokens=2e10, precision="bf16", optimizer="adamw")


def _seconds(range_out):
    return Quantity(range_out.expected, range_out.unit).to("s").magnitude


def test_recommend_ranks_each_device_at_the_time_that_time_gives(catalog):
    result = recommend(RecommendRequest(**QUESTION, max_devices=16), catalog)
    for entry in result.ranked[:5]:
        same = estimate_time(TimeRequest(**QUESTION, device=entry.device, count=entry.count, zero=entry.zero, tp=entry.tp,
                                         pp=entry.pp, recompute=entry.recompute), catalog)
        # floating point only: both are the same engine call on the same configuration
        assert _seconds(entry.training_time) == pytest.approx(_seconds(same.training_time), rel=1e-9), entry.name


def test_time_without_a_layout_equals_the_sweep_row_that_chose_the_same(catalog):
    time = estimate_time(TimeRequest(**QUESTION, device="H100 SXM", count=8), catalog)
    row = sweep([QUESTION], devices=["H100 SXM"], counts=[8], catalog=catalog).iloc[0]
    assert (row.tp, row.pp, row.zero, row.recompute) == (time.layout.tp, time.layout.pp, time.layout.zero,
                                                          time.layout.recompute)
    assert row.training_time_s_expected == pytest.approx(_seconds(time.training_time), rel=1e-9)


def test_http_and_cli_answer_what_the_core_answers(catalog, cli):
    core = estimate_time(TimeRequest(**QUESTION, device="H100 SXM", count=8), catalog)
    with TestClient(create_app()) as client:
        http = client.post("/v1/time", json={**QUESTION, "device": "H100 SXM", "count": 8}).json()
    assert http["training_time"]["expected"] == pytest.approx(core.training_time.expected, rel=1e-12)
    printed = cli("time", "--model", "llama-2-7b", "--tokens", "2e10", "--precision", "bf16", "--optimizer", "adamw",
                  "--device", "H100 SXM", "--count", "8", "--json")
    assert json.loads(printed.stdout)["training_time"]["expected"] == pytest.approx(core.training_time.expected, rel=1e-12)


@pytest.mark.parametrize("name", ["llama-2-7b", "llama-2-13b", "llama-2-70b", "gpt3-175b"])
def test_a_bare_count_and_the_model_it_stands_for_have_the_same_flops(name):
    # --params P generates a decoder of P parameters; its FLOP per token are 2P plus attention scores and the
    # head, as the named model's are. Shapes differ a little (depth, FFN rounding, vocabulary: GPT-3's 50k
    # against the generated 32k), so "the same" is within 3 %.
    arch = find_model(name)
    named = estimate_compute(WorkloadRequest(model=name, tokens=1e9, seq_len=2048)).training_compute.value
    bare = estimate_compute(WorkloadRequest(params=arch.params_total(), tokens=1e9, seq_len=2048)).training_compute.value
    assert bare == pytest.approx(named, rel=0.03)


def test_plan_searches_fine_tuning_layouts_too(cli):
    # --method reaches sizer plan: a QLoRA 70B fits 8 H100s in layouts full training cannot use (its 16 bytes per
    # parameter need every device's share of the model states)
    qlora = json.loads(cli("plan", "--model", "llama-2-70b", "--device", "H100 SXM", "--count", "8", "--tokens", "1e9",
                           "--method", "qlora", "--json").stdout)
    full = json.loads(cli("plan", "--model", "llama-2-70b", "--device", "H100 SXM", "--count", "8", "--tokens", "1e9",
                          "--json").stdout)
    assert "qlora" in qlora["workload"] and qlora["fitting"] > full["fitting"]
