"""sizer/runtimes/formats.py: bits per stored weight of each serving format, from its specification."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.runtimes.formats import (
    _ALIASES,
    KV_CACHE_BYTES,
    WEIGHT_FORMATS,
    group_quantised_bits,
    kv_cache_bytes_per_value,
    weight_format,
)


@pytest.mark.parametrize("name, bits", [
    # ggml-common.h: block_q4_0 = fp16 d + 16 bytes of nibbles for 32 weights = 18 B / 32 = 4.5 bits;
    # block_q8_0 = fp16 d + 32 int8 = 34 B / 32 = 8.5 bits
    ("q4_0", 18 * 8 / 32), ("q8_0", 34 * 8 / 32),
    # GPTQ / AWQ packing: 4-bit weights, fp16 scale and 4-bit zero per group of g
    ("gptq-int4-g128", 4 + 20 / 128), ("gptq-int4-g32", 4 + 20 / 32), ("awq-int4-g64", 4 + 20 / 64),
    # OCP MX v1.0: MXFP4 = 32 E2M1 values and one E8M0 scale; NVFP4 = 16 E2M1 values and one E4M3 scale
    ("mxfp4", 4 + 8 / 32), ("nvfp4", 4 + 8 / 16),
    ("fp32", 32), ("bf16", 16), ("fp16", 16), ("fp8", 8), ("w8a8", 8), ("int8", 8), ("int4", 4),
])
def test_bits_per_weight_from_each_formats_layout(name, bits):
    assert weight_format(name).bits == bits
    assert weight_format(name).bytes_per_weight == bits / 8


def test_q4_k_m_runs_its_matrices_as_q4_k_blocks():
    # ggml-common.h block_q4_K: 256 weights in 144 bytes (4-bit values, 6-bit scales and mins, two fp16
    # super-block scales) = 4.5 bits. The whole file, with its wider tensors, is GGUF-as-stored's
    # (tests/sizer/runtimes/test_gguf.py: published file sizes within 2 %)
    assert weight_format("q4_k_m").bits == 144 * 8 / 256
    assert weight_format("q4_k_m").gguf_mix == "Q4_K_M"


@pytest.mark.parametrize("spelling, name", [("GPTQ-int4-g128", "gptq-int4-g128"), ("gptq", "gptq-int4-g128"),
                                            ("gptq-g64", "gptq-int4-g64"), ("AWQ", "awq-int4-g128"), ("Q4_K_M", "q4_k_m"),
                                            ("q4-k-m", "q4_k_m"), (" Q4_0 ", "q4_0"), ("bfloat16", "bf16"),
                                            ("half", "fp16"), ("SmoothQuant", "w8a8"), ("fp8-e4m3", "fp8")])
def test_common_spellings_name_the_same_format(spelling, name):
    assert weight_format(spelling) is WEIGHT_FORMATS[name]


def test_every_alias_names_a_format():
    for alias, name in _ALIASES.items():
        assert name in WEIGHT_FORMATS, alias


@pytest.mark.parametrize("name", ["q3_k", "int2", "", "x" * 41, None, 4])
def test_an_unknown_format_is_refused_naming_the_field(name):
    with pytest.raises(InputError, match="^draft_weights: ") as error:
        weight_format(name, "draft_weights")
    assert "q4_k_m" in error.value.expected


def test_only_weight_and_activation_formats_compute_below_16_bits():
    for fmt in WEIGHT_FORMATS.values():
        if fmt.activations:
            assert fmt.compute in ("fp8", "int8"), fmt.name
        elif fmt.bits < 16:
            # weight-only: dequantised to 16 bits for the matrix products (W4A16/W8A16), except NVFP4, which
            # runs at the FP4 rate where the device has one and at 16 bits elsewhere (test below)
            assert fmt.compute == "mixed" or fmt.name == "nvfp4" and fmt.compute == "fp4", fmt.name


def test_quantised_files_keep_their_edges_at_16_bits():
    # GPTQ, AWQ and GGUF files keep token embeddings and the output head in 16 bits
    for name in ("q4_0", "q8_0", "q4_k_m", "gptq-int4-g128", "awq-int4-g128", "mxfp4"):
        assert weight_format(name).edges_16bit, name
    assert not weight_format("fp8").edges_16bit and weight_format("mxfp4").experts_only


def test_nvfp4_says_where_it_runs_at_the_fp4_peak(catalog):
    assert any("fp4" in device.peaks for device in catalog)
    fmt = weight_format("nvfp4")
    assert fmt.compute == "fp4" and "FP4 peak" in fmt.source and "precision_support" in fmt.source


@pytest.mark.parametrize("name, size", [("fp32", 4), ("BF16", 2), ("fp16", 2), ("fp8", 1), (" int8 ", 1)])
def test_kv_cache_bytes_per_value(name, size):
    assert kv_cache_bytes_per_value(name) == size


def test_an_unknown_kv_cache_format_names_the_field():
    with pytest.raises(InputError, match="^kv_cache: "):
        kv_cache_bytes_per_value("int4")
    assert set(KV_CACHE_BYTES) == {"fp32", "bf16", "fp16", "fp8", "int8", "q8_0", "q4_0"}


@given(st.integers(2, 8), st.integers(1, 512), st.integers(1, 512), st.sampled_from([8, 16, 32]), st.sampled_from([0, 4, 8]))
def test_larger_groups_never_cost_more_bits(bits, g1, g2, scale, zero):
    small, large = sorted((g1, g2))
    assert bits <= group_quantised_bits(bits, large, scale, zero) <= group_quantised_bits(bits, small, scale, zero)


def test_nvfp4_serves_at_the_fp4_rate_on_blackwell_and_weight_only_on_hopper(catalog):
    # B200's FP4 peak is twice its FP8 (NVIDIA DGX B200 datasheet, dense): NVFP4 GEMMs run above the FP8 rate, by
    # the FP4 peak over the fitted quantisation overhead, attention at the FP8 rate; an H100 has no FP4 tensor
    # cores, so its NVFP4 weights are dequantised to 16 bits (vLLM's FP4 Marlin)
    from sizer.engine.constants import SERVING_FP4_OVERHEAD
    from sizer.passes.arithmetic import serving_table

    b200, h100 = catalog.find("B200"), catalog.find("H100 SXM")
    table = serving_table((b200, h100), weight_format("nvfp4"))
    fp8 = serving_table((b200, h100), weight_format("fp8"))
    bf16 = serving_table((b200, h100), weight_format("bf16"))
    assert table.precisions == ("fp4", "bf16")
    assert table.rates[0, 0] == pytest.approx(2 * fp8.rates[0, 0] / (1 + SERVING_FP4_OVERHEAD))
    assert table.rates[0, 0] > fp8.rates[0, 0] and table.rates[0, 3] == pytest.approx(fp8.rates[0, 3])
    assert table.rates[1, 0] == pytest.approx(bf16.rates[1, 0])


def test_one_deployment_below_8_bits_carries_the_quality_note_its_ranked_rows_do():
    # recommend --inference rows below 8 bits carry a quality note; one deployment asked for with those weights
    # says the same, except in the model's own published format (gpt-oss ships MXFP4: nothing was lost)
    from sizer.facade import InferenceRequest, estimate_inference

    def quality(**asked):
        answer = estimate_inference(InferenceRequest(device="H100 SXM", **asked))
        return [a.value for a in answer.assumptions if a.name == "quality"]

    assert "accuracy" in quality(model="llama-3-8b", weights="awq-int4-g128", rate=5)[0]
    assert quality(model="llama-3-8b", weights="q4_k_m")
    assert quality(model="llama-3-8b", weights="fp8") == [] and quality(model="llama-3-8b") == []
    assert quality(model="gpt-oss-120b", weights="mxfp4") == []
