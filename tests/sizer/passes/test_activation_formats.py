"""Weight-and-activation formats (W8A8: SmoothQuant int8, FP8 E4M3) against weight-only ones (issue 16):
prefill at the int8/fp8 peak where the catalog has one, refused naming the field where it has none;
weight-only formats keep the 16-bit rate and GPTQ/AWQ files keep embeddings and head at 16 bits."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from sizer.errors import InputError
from sizer.hardware.catalog import load_catalog
from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import estimate_inference

# a compute-bound prefill: 8 prompts of 4096 tokens of a 7B model
PREFILL = dict(model="llama-2-7b", batch=8, prompt_len=4096, output_len=64)


def _ttft(device: str, weights: str) -> float:
    return estimate_inference(InferenceRequest(device=device, weights=weights, **PREFILL)).time_to_first_token.expected


@pytest.mark.parametrize("device, w8a8, peak_16", [("H100 SXM", "w8a8", "bf16"), ("H100 SXM", "fp8", "bf16"),
                                                    ("A100 80GB SXM", "w8a8", "bf16"), ("MI300X", "fp8", "bf16")])
def test_w8a8_prefill_runs_at_the_8_bit_peak(device, w8a8, peak_16):
    d = load_catalog().find(device)
    peak8 = d.int8_peak if w8a8 == "w8a8" else d.peaks["fp8"]
    ratio = float(d.peaks[peak_16].quantity("p", "[computation]/[time]").magnitude) / float(
        peak8.quantity("p", "[computation]/[time]").magnitude)
    # the weight-only int8 file reads the same bytes but computes in 16 bits: the difference is the peak
    measured = _ttft(device, w8a8) / _ttft(device, "int8")
    assert ratio < 0.6 and measured == pytest.approx(ratio, rel=0.25)


# GGUF mixes (q4_k_m) run under llama.cpp by default, with its own fitted kernels (tests/sizer/local/test_machine.py)
@pytest.mark.parametrize("weights", ["int8", "int4", "gptq-int4-g128", "awq-int4-g128"])
def test_weight_only_formats_prefill_at_the_16_bit_rate(weights):
    r = estimate_inference(InferenceRequest(device="H100 SXM", weights=weights, **PREFILL))
    note = next(a for a in r.assumptions if a.name == "weights").value
    assert "matrix products at bf16" in note
    assert r.time_to_first_token.expected == pytest.approx(_ttft("H100 SXM", "bf16"), rel=0.1)


@pytest.mark.parametrize("weights, published_gb", [("gptq-int4-g128", 3.90), ("awq-int4-g128", 3.89)])
def test_gptq_and_awq_keep_embeddings_and_head_at_16_bits(weights, published_gb):
    # TheBloke/Llama-2-7B-GPTQ gptq_model-4bit-128g.safetensors 3.90 GB and TheBloke/Llama-2-7B-AWQ
    # model.safetensors 3.89 GB (Hugging Face file listings); all weights at 4.16 bits would be 3.50 GB
    r = estimate_inference(InferenceRequest(model="llama-2-7b", device="RTX 4090", weights=weights))
    assert r.weights_memory.value == pytest.approx(published_gb, rel=0.03)


# FP8 on Ampere (A100, RTX 3090) is no longer refused: vLLM runs it weight-only (FP8 Marlin), tested in
# tests/sizer/runtimes/test_precision_support.py; a Volta has neither the peak nor an engine's weight-only kernel
@pytest.mark.parametrize("device, weights", [("V100 SXM2 32GB", "fp8"), ("M2 Ultra", "w8a8"), ("Gaudi 2", "w8a8")])
def test_a_device_without_the_peak_is_refused_naming_weights(device, weights):
    with pytest.raises(InputError) as caught:
        estimate_inference(InferenceRequest(model="llama-2-7b", device=device, weights=weights))
    assert caught.value.field == "weights" and "peak" in caught.value.message


def test_cli_and_http_refuse_w8a8_without_the_peak(cli):
    result = cli("inference", "--model", "llama-2-7b", "--device", "V100 SXM2 32GB", "--weights", "fp8")
    assert result.exit_code == 2 and "weights" in result.output and "Traceback" not in result.output
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        bad = client.post("/v1/inference", json={"model": "llama-2-7b", "device": "V100 SXM2 32GB", "weights": "w8a8-fp8"})
        ok = client.post("/v1/inference", json={"model": "llama-2-7b", "device": "A100 80GB SXM", "weights": "w8a8"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "weights"]
    assert ok.status_code == 200 and ok.json()["weights"] == "w8a8"
