"""Host memory holds the offloaded layers (``--gpu-layers``): a host too small does not fit.

The adversarial pass found Llama 3.1 405B "fitting" one RTX 4090 with one layer on the GPU: some
800 GB of bf16 weights (200 GB at 4 bits) were put on a 64 GB desktop whose RAM was never checked,
and ``--host-memory`` was ignored by ``recommend --inference``.
"""
from __future__ import annotations

import pytest

from sizer.hardware.catalog import load_catalog
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import estimate_inference
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference
from sizer.workloads.registry import find_model

HUGE = dict(model="llama-3.1-405b", device="RTX 4090", weights="q4_k_m", gpu_layers=1, batch=1)


def _host_ram(name: str = "Ryzen 9 7950X") -> float:
    return float(load_catalog().find(name).memory.quantity("m", "[information]").to("B").magnitude)


def test_405b_with_one_gpu_layer_does_not_fit_a_64_gb_host():
    r = estimate_inference(InferenceRequest(**HUGE))
    arch = find_model("llama-3.1-405b")
    # at least 4 bits for each of the 125 offloaded layers' parameters (q4_k_m stores about 4.8:
    # llama.cpp's quantize table), against the 64 GB the catalog assumes for the default host
    at_least = arch.params_total() * 0.5 * (arch.layers - 1) / arch.layers
    assert at_least > _host_ram()
    assert r.fits is False
    note = next(a for a in r.assumptions if a.name == "host memory does not fit")
    assert "--host-memory" in note.value and "64 GB" in note.value
    assert float(note.value.split(" GB")[0]) * 1e9 >= at_least * 0.999


@pytest.mark.parametrize("weights", [[], ["--weights", "q4_k_m"]], ids=["bf16 (805 GB)", "q4_k_m"])
def test_the_cli_says_it_does_not_fit(cli, weights):
    import json

    # the command as typed, and the contract check's
    result = cli("inference", "-m", "llama-3.1-405b", "-d", "rtx-4090", *weights, "--gpu-layers", "1", "--json")
    assert result.exit_code == 0, result.output[-500:]
    answer = json.loads(result.stdout)
    assert answer["fits"] is False
    assert any(a["name"] == "host memory does not fit" for a in answer["assumptions"])
    table = cli("inference", "-m", "llama-3.1-405b", "-d", "rtx-4090", *weights, "--gpu-layers", "1")
    assert "does NOT fit" in table.stdout


def test_a_host_given_large_enough_fits_and_bounds_the_batch():
    small = estimate_inference(InferenceRequest(**HUGE, host_memory="300 GB"))
    large = estimate_inference(InferenceRequest(**HUGE, host_memory="1 TB"))
    assert small.fits and large.fits
    # the host keeps the offloaded layers' KV cache too: more RAM, more sequences
    assert 0 < small.max_batch < large.max_batch
    assert any(a.name == "host memory" and "300 GB" in a.value for a in small.assumptions)
    assert any(a.name == "CPU offload" and "(given)" in a.value for a in small.assumptions)
    # a batch beyond the host's share does not fit
    assert not estimate_inference(InferenceRequest(**{**HUGE, "batch": small.max_batch + 1}, host_memory="300 GB")).fits


def test_a_model_that_fits_the_host_is_unchanged():
    # Llama 2 70B at 4 bits, all layers on the host: about 40 GB of 64 GB
    r = estimate_inference(InferenceRequest(model="llama-2-70b", device="RTX 4090", weights="q4_k_m", gpu_layers=0,
                                            prompt_len=512, output_len=128))
    assert r.fits
    assert any(a.name == "host memory" for a in r.assumptions)


def test_recommend_inference_honours_host_memory():
    asked = dict(model="llama-3.1-405b", weights="q4_k_m", gpu_layers=10, kinds=["gpu"], max_devices=1)
    without = recommend_inference(InferenceRecommendRequest(**asked))
    assert not without.ranked
    assert any(r.reason.startswith("does not fit in host memory") and "--host-memory" in r.reason
               for r in without.rejected)
    given = recommend_inference(InferenceRecommendRequest(**asked, host_memory="512 GB"))
    assert given.ranked
    assert all(r.count == 1 for r in given.ranked)


def test_recommend_inference_cli_passes_host_memory(cli):
    import json

    argv = ["recommend", "--inference", "--model", "llama-3.1-405b", "--weights", "q4_k_m", "--gpu-layers", "10",
            "--kind", "gpu", "--max-devices", "1", "--json"]
    assert not json.loads(cli(*argv).stdout)["ranked"]
    assert json.loads(cli(*argv, "--host-memory", "512 GB").stdout)["ranked"]


@pytest.mark.parametrize("fields", [dict(host_memory="512 GB"), dict(host_memory="512 GB", gpu_layers=126)])
def test_host_memory_without_offloaded_layers_is_refused(fields):
    from sizer.errors import InputError

    with pytest.raises(InputError, match="host_memory"):
        estimate_inference(InferenceRequest(model="llama-3.1-405b", device="H100 SXM", count=8, weights="fp8", **fields))
