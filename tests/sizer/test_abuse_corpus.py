"""Options that were accepted and answered wrongly, now refused: the adversarial pass's examples.

Each case used to answer with exit 0 (or HTTP 200) and a plausible but wrong figure: 32 attention
heads split over 3 tensor ranks, 0.8 blocks per virtual pipeline stage, a batch of 1e13 tokens for
a run of 1e9 (one step, "37 years"), host RAM given where nothing lives on the host. Each must now
be one clear message naming the field, on the command line (exit 2) and over HTTP (422).
"""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# (label, field named in the answer, CLI argv, HTTP path, HTTP body)
CASES = [
    # a tensor split pinned over a count that splits a head (left to sizer, the count serves as replicas of one
    # that does not: sizer.serving.replicas, in ANSWERED below)
    ("32 heads over 3 tensor ranks", "count",
     ["inference", "--model", "llama-2-7b", "--device", "H100 SXM", "-n", "3", "--split", "tensor"],
     "/v1/inference", {"model": "llama-2-7b", "device": "H100 SXM", "count": 3, "split": "tensor"}),
    ("8 query heads over 3 ranks, GQA model", "count",
     ["inference", "--model", "llama-3.1-8b", "--device", "H100 SXM", "-n", "12", "--split", "tensor"],
     "/v1/inference", {"model": "llama-3.1-8b", "device": "H100 SXM", "count": 12, "split": "tensor"}),
    ("interleave 5 on 32 blocks over 8 stages (0.8 blocks per chunk)", "interleave",
     ["time", "--model", "llama-2-7b", "--tokens", "1e10", "--device", "H100 SXM", "-n", "64", "--pp", "8",
      "--interleave", "5"],
     "/v1/time", {"model": "llama-2-7b", "tokens": 1e10, "device": "H100 SXM", "count": 64, "pp": 8, "interleave": 5}),
    ("the same pinned in plan", "interleave",
     ["plan", "--model", "llama-2-7b", "--tokens", "1e10", "--device", "H100 SXM", "-n", "64", "--pp", "8",
      "--interleave", "5"],
     "/v1/plan", {"model": "llama-2-7b", "tokens": 1e10, "device": "H100 SXM", "count": 64, "pp": 8, "interleave": 5}),
    ("interleave deeper than any pipeline of 32 blocks", "interleave",
     ["time", "--model", "llama-2-7b", "--tokens", "1e10", "--device", "H100 SXM", "-n", "64", "--interleave", "17"],
     "/v1/time", {"model": "llama-2-7b", "tokens": 1e10, "device": "H100 SXM", "count": 64, "interleave": 17}),
    ("a batch of 1e13 tokens for a run of 1e9 (was 37 years, one step)", "batch_size",
     ["time", "--params", "7B", "--tokens", "1e9", "--batch-size", "1e13", "--device", "H100 SXM", "-n", "8"],
     "/v1/time", {"params": "7B", "tokens": 1e9, "batch_size": 1e13, "device": "H100 SXM", "count": 8}),
    ("the same in plan", "batch_size",
     ["plan", "--params", "7B", "--tokens", "1e9", "--batch-size", "1e13", "--device", "H100 SXM", "-n", "8"],
     "/v1/plan", {"params": "7B", "tokens": 1e9, "batch_size": 1e13, "device": "H100 SXM", "count": 8}),
    ("the same in recommend", "batch_size",
     ["recommend", "--params", "7B", "--tokens", "1e9", "--batch-size", "1e13"],
     "/v1/recommend", {"params": "7B", "tokens": 1e9, "batch_size": 1e13}),
    ("a batch of 256 images from 100", "batch_size",
     ["time", "--workload", "resnet50", "--samples", "100", "--batch-size", "256", "--device", "H100 SXM"],
     "/v1/time", {"workload": "resnet50", "samples": 100, "batch_size": 256, "device": "H100 SXM"}),
    ("host memory without offloaded layers", "host_memory",
     ["inference", "--model", "llama-2-7b", "--device", "RTX 4090", "--host-memory", "512 GB"],
     "/v1/inference", {"model": "llama-2-7b", "device": "RTX 4090", "host_memory": "512 GB"}),
    ("host memory without offloaded layers, recommend --inference (was ignored)", "host_memory",
     ["recommend", "--inference", "--model", "llama-2-7b", "--host-memory", "512 GB"],
     "/v1/recommend", {"task": "inference", "model": "llama-2-7b", "host_memory": "512 GB"}),
    ("host memory that is not an amount", "host_memory",
     ["inference", "--model", "llama-2-7b", "--device", "RTX 4090", "--gpu-layers", "16", "--host-memory", "5 s"],
     "/v1/inference", {"model": "llama-2-7b", "device": "RTX 4090", "gpu_layers": 16, "host_memory": "5 s"}),
    ("host memory of nothing", "host_memory",
     ["inference", "--model", "llama-2-7b", "--device", "RTX 4090", "--gpu-layers", "16", "--host-memory", "0 GB"],
     "/v1/inference", {"model": "llama-2-7b", "device": "RTX 4090", "gpu_layers": 16, "host_memory": "0 GB"}),
]


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(), raise_server_exceptions=False)


def _one_clear_message(text: str) -> str:
    """The CLI's one error message: one "Error: ..." line, no traceback."""
    errors = [line for line in text.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in text, text
    return " ".join(line.strip() for line in text.splitlines()).replace("Error:", "", 1).strip()


@pytest.mark.parametrize("label, field, argv, path, body", CASES, ids=[c[0] for c in CASES])
def test_cli_refuses_naming_the_field(cli, label, field, argv, path, body):
    result = cli(*argv, "--json")
    assert result.exit_code == 2, (label, result.output[-600:])
    assert field in _one_clear_message(result.stderr).replace("-", "_")


@pytest.mark.parametrize("label, field, argv, path, body", CASES, ids=[c[0] for c in CASES])
def test_http_refuses_with_422_naming_the_field(client, label, field, argv, path, body):
    response = client.post(path, json=body)
    assert response.status_code == 422, (label, response.status_code, response.text[:300])
    assert field in [str(part) for part in response.json()["detail"][0]["loc"]], response.json()


# The neighbours of each refusal still answer: the check is the limit, not a new ban.
ANSWERED = [
    ["inference", "--model", "llama-2-7b", "--device", "H100 SXM", "-n", "4"],
    ["inference", "--model", "llama-2-7b", "--device", "H100 SXM", "-n", "3", "--split", "layer"],
    ["inference", "--model", "llama-2-7b", "--device", "H100 SXM", "-n", "3"],  # 3 replicas of one device
    ["time", "--model", "llama-2-7b", "--tokens", "1e10", "--device", "H100 SXM", "-n", "64", "--pp", "8",
     "--interleave", "4"],
    ["time", "--params", "7B", "--tokens", "1e9", "--batch-size", "1e9", "--device", "H100 SXM", "-n", "8"],
    # a default batch (4M tokens for 7B) longer than a short run is the default's business, not the user's
    ["time", "--params", "7B", "--tokens", "1e6", "--device", "H100 SXM", "-n", "8"],
]


@pytest.mark.parametrize("argv", ANSWERED, ids=[" ".join(a[:1] + a[-2:]) for a in ANSWERED])
def test_the_neighbours_still_answer(cli, argv):
    result = cli(*argv, "--json")
    assert result.exit_code == 0, result.output[-600:]


def test_owned_devices_that_cannot_split_the_heads_serve_as_replicas_of_a_count_that_can(cli):
    # 3 devices you have do not split 32 heads: the answer serves on all 3 as 3 replicas of one device, and
    # no longer claims tensor parallelism over 3
    import json

    result = cli("inference", "--model", "llama-2-7b", "--have", "3x H100 SXM", "--json")
    assert result.exit_code == 0, result.output[-500:]
    option = json.loads(result.stdout)["options"][0]
    assert option["count"] == 3 and option["layout"]["tp"] == 1 and option["layout"]["replicas"] == 3
    assert "idle_devices" not in option["layout"]
    eight = json.loads(cli("inference", "--model", "llama-2-7b", "--have", "8x H100 SXM", "--json").stdout)["options"][0]
    assert eight["layout"]["tp"] == 8 and "idle_devices" not in eight["layout"]


def test_host_memory_given_without_offload_is_said_not_silently_unused():
    # issue: `time --host-memory` without --offload was silently unused when the answer fits
    from sizer.facade import TimeRequest, estimate_time

    answer = estimate_time(TimeRequest(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e10,
                                       host_memory="128 GB"), suggest=False)
    note = next(a for a in answer.assumptions if a.name == "host memory")
    assert "128 GB" in note.value and "nothing is offloaded" in note.value
