"""CPU offload of layers (``--gpu-layers``, llama.cpp -ngl; issue 16): offloaded layers stream from host
memory and compute on the host CPU, device memory holds only the device's layers, the bound is checked
at the boundary, and Apple's unified memory has nothing to offload to."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.errors import InputError
from sizer.hardware.catalog import load_catalog
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import estimate_inference
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference

SEVENTY = dict(model="llama-2-70b", device="RTX 4090", weights="q4_k_m", prompt_len=512, output_len=128)


def _run(**fields):
    return estimate_inference(InferenceRequest(**{**SEVENTY, **fields}))


def _bandwidth(name: str) -> float:
    return float(load_catalog().find(name).memory_bandwidth.quantity("b", "[information]/[time]").to("B/s").magnitude)


@pytest.mark.parametrize("gpu_layers", [0, 20, 40, 60])
def test_offloaded_layers_stream_from_host_memory(gpu_layers):
    r = _run(gpu_layers=gpu_layers)
    whole = _run(gpu_layers=80)
    share = gpu_layers / 80
    # device memory holds only its share of the weights
    assert r.weights_memory.value == pytest.approx(whole.weights_memory.value * share, rel=1e-9)
    # every token reads the host's layers from host memory: never faster than its datasheet bandwidth allows
    host_bytes = whole.weights_memory.value * 1e9 * (1 - share)
    assert r.decode_tokens_per_s.expected <= _bandwidth("Ryzen 9 7950X") / host_bytes
    # and never faster than the device alone (the host's part adds to each token)
    assert r.decode_tokens_per_s.expected < whole.decode_tokens_per_s.expected
    assert any(a.name == "CPU offload" and "7950X" in a.value and "83.2 GB/s" in a.value for a in r.assumptions)


def test_more_layers_on_the_gpu_is_faster_and_a_faster_host_helps():
    speeds = [_run(gpu_layers=n).decode_tokens_per_s.expected for n in (0, 20, 40, 60)]
    assert speeds == sorted(speeds)
    server = _run(gpu_layers=40, host_cpu="EPYC 9654")  # 12 channels of DDR5 against the desktop's 2
    assert server.decode_tokens_per_s.expected > speeds[2]
    assert "EPYC 9654" in next(a.value for a in server.assumptions if a.name == "CPU offload")


def test_all_layers_on_the_gpu_is_the_plain_answer():
    assert _run(gpu_layers=80).decode_tokens_per_s.expected == _run().decode_tokens_per_s.expected


@pytest.mark.parametrize("fields", [dict(gpu_layers=81), dict(gpu_layers=40, device="M2 Ultra"),
                                    dict(gpu_layers=40, device="EPYC 9654"), dict(gpu_layers=40, rate=1.0)])
def test_bad_offload_is_refused_naming_gpu_layers(fields):
    with pytest.raises(InputError) as caught:
        _run(**fields)
    assert caught.value.field == "gpu_layers"


def test_unified_memory_says_offload_does_not_apply():
    with pytest.raises(InputError) as caught:
        _run(gpu_layers=40, device="M2 Ultra")
    assert "unified memory" in caught.value.message and "no separate host memory" in caught.value.message


def test_host_cpu_must_be_a_cpu():
    with pytest.raises(InputError) as caught:
        _run(gpu_layers=40, host_cpu="H100 SXM")
    assert caught.value.field == "host_cpu"


@pytest.mark.parametrize("args", [("--gpu-layers", "-1"), ("--gpu-layers", "200"), ("--gpu-layers", "10", "--host-cpu", "nonesuch")])
def test_cli_bad_gpu_layers_exit_2(cli, args):
    result = cli("inference", "--model", "llama-2-70b", "--device", "RTX 4090", "--weights", "q4_k_m", *args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert ("host_cpu" if "--host-cpu" in args else "gpu_layers") in result.output or "--gpu-layers" in result.output


def test_http_gpu_layers():
    body = {"model": "llama-2-70b", "device": "RTX 4090", "weights": "q4_k_m"}
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        ok = client.post("/v1/inference", json={**body, "gpu_layers": 40})
        for value in (-1, 81):
            bad = client.post("/v1/inference", json={**body, "gpu_layers": value})
            assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][:2] == ["body", "gpu_layers"], bad.text
    assert ok.status_code == 200 and ok.json()["fits"]


def test_recommend_with_offload_rejects_unified_memory_and_counts_only_gpu_layers():
    r = recommend_inference(InferenceRecommendRequest(model="llama-2-70b", weights="q4_k_m", gpu_layers=40, max_devices=1,
                                                      kinds=["gpu"], consumer=True))  # a desk's cards: asked for
    assert any("4090" in x.name for x in r.ranked)
    assert all("unified memory" in x.reason for x in r.rejected if "Apple" in x.name)
    assert any(a.name == "CPU offload" for a in r.assumptions)
