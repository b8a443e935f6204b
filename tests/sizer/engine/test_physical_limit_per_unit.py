"""The physical limit counts each unit's FLOP at that unit's own datasheet peak (issue 43): under fp32 a transformer's
matmuls run at the FP32 peak, not TF32's (which only cuDNN's convolutions take by default), and no range end of a
serving answer beats it either: the low end of time to first token was up to 9.4 % below the prompt's FLOP at the
peak on GPUs without tensor cores (Tesla P40 ...)."""
from __future__ import annotations

import pytest

from sizer.choices import Precision
from sizer.engine.devices import NO_MATRIX_UNITS, build_device_table
from sizer.engine.layers import CONV, MATRIX
from sizer.facade import InferenceRequest, TimeRequest, estimate_inference, estimate_time
from sizer.hardware.catalog import load_catalog
from sizer.passes.arithmetic import serving_table
from sizer.results import unit_factor
from sizer.runtimes.formats import weight_format
from sizer.workloads.registry import find_model

# GPUs without tensor cores (Kepler, Maxwell, Pascal), the issue's set
NO_TENSOR_CORES = sorted(d.id for d in load_catalog()
                         if d.kind == "gpu" and any(a in d.architecture for a in NO_MATRIX_UNITS))


def _seconds(r) -> tuple[float, float, float]:
    f = unit_factor(r.unit, "s")
    return r.low * f, r.expected * f, r.high * f


def test_the_issue_s_devices_are_there():
    assert len(NO_TENSOR_CORES) >= 12 and "tesla-p40" in NO_TENSOR_CORES


def test_fp32_matmuls_are_bounded_at_the_fp32_peak_convolutions_at_tf32(catalog):
    # A100 SXM4: FP32 19.5 TFLOP/s (2NC), TF32 156 TFLOP/s dense (NVIDIA A100 datasheet)
    table = build_device_table((catalog.find("A100 80GB SXM"),), Precision.FP32)
    assert table.unit_peaks[0, MATRIX] == pytest.approx(19.49e12, rel=0.01)
    assert table.unit_peaks[0, CONV] == pytest.approx(156e12, rel=0.01)
    fp32 = estimate_time(TimeRequest(params="1B", tokens=1e9, device="A100 80GB SXM", precision="fp32"), suggest=False)
    limit = fp32.physical_limit.value * unit_factor(fp32.physical_limit.unit, "s")
    # a transformer has no convolution: its model FLOP over the FP32 peak, not over TF32's (8x lower)
    assert limit == pytest.approx(fp32.training_compute.value / 19.49e12, rel=0.02)
    assert _seconds(fp32.training_time)[0] >= limit * (1 - 1e-9)


@pytest.mark.parametrize("device", NO_TENSOR_CORES)
def test_no_end_of_time_to_first_token_beats_the_prompt_s_flop_at_the_peak(device, catalog):
    request = InferenceRequest(model="llama-3.2-1b", device=device, prompt_len=2048, output_len=16)
    answer = estimate_inference(request, catalog)
    low, expected, high = _seconds(answer.time_to_first_token)
    assert low <= expected <= high
    # every non-embedding weight multiplies every prompt token once (2 FLOP): a floor below the engine's model FLOP
    # (attention adds to it), at the fastest datasheet peak of the device at the format's precision
    arch = find_model("llama-3.2-1b")
    flop = 2 * (arch.params_total() - arch.vocab * arch.hidden) * 2048
    peak = float(serving_table((catalog.find(device),), weight_format("bf16")).unit_peaks[0, 2])
    assert low >= flop / peak, f"{low:.4g} s below {flop / peak:.4g} s"
    assert answer.prefill_tokens_per_s.high <= 2048 / (flop / peak)  # the same bound as a speed
    # cost and energy per token are inverse to the total speed: their low ends stop where its high end does
    total = answer.total_tokens_per_s
    for per_token in (answer.cost_per_million_tokens, answer.energy_per_token):
        if per_token is not None:
            assert per_token.low * total.high == pytest.approx(per_token.expected * total.expected, rel=1e-9)
