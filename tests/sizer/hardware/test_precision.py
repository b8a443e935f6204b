"""sizer/hardware/precision.py: bytes per stored value and the precision check."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizer.choices import Precision
from sizer.errors import InputError
from sizer.hardware import schema
from sizer.hardware.precision import (
    MASTER_WEIGHT_BYTES,
    MIXED_PRECISIONS,
    PRECISION_BYTES,
    SCALED_PRECISIONS,
    check_precision,
    storage_scale,
    weight_bytes,
)


@pytest.mark.parametrize("precision, bits", [
    ("fp64", 64), ("fp32", 32), ("fp16", 16),  # IEEE 754-2008 binary64 / binary32 / binary16
    ("bf16", 16),  # bfloat16: 1 sign, 8 exponent, 7 mantissa bits (Google; Kalamkar et al. 2019)
    ("tf32", 32),  # TF32 computes with a 10-bit mantissa but is stored as FP32 (NVIDIA A100 whitepaper)
    ("fp8", 8),  # E4M3 / E5M2 (Micikevicius et al. 2022, "FP8 formats for deep learning")
    ("fp4", 4),  # NVFP4 values are E2M1, 4 bits (its FP8 scale per 16 values is counted elsewhere)
])
def test_bytes_per_value_are_the_formats_bit_widths(precision, bits):
    assert PRECISION_BYTES[Precision(precision)] == bits / 8


def test_every_stored_precision_has_a_size_and_mixed_does_not():
    # mixed is resolved per device to one of the others, so it has no size of its own
    assert set(PRECISION_BYTES) == set(Precision) - {Precision.MIXED}


def test_the_catalogs_precision_names_are_the_one_vocabulary():
    # catalog peaks are keyed by the same names the requests use (sizer.choices.Precision)
    assert set(schema.PRECISIONS) == set(PRECISION_BYTES)
    assert schema.Precision is Precision  # one vocabulary: the catalog's peak names are the requests' members


@pytest.mark.parametrize("spelling", ["bf16", "BF16", " Bf16 ", "bF16"])
def test_check_precision_takes_any_case(spelling):
    assert check_precision(spelling) is Precision.BF16


def test_mixed_is_refused_where_a_stored_precision_is_needed_naming_the_field():
    with pytest.raises(InputError, match="kv_precision") as error:
        check_precision("mixed", "kv_precision")
    assert "fp32" in error.value.expected and "mixed" not in error.value.expected


def test_an_unknown_precision_lists_the_vocabulary():
    with pytest.raises(InputError, match="precision") as error:
        check_precision("fp12")
    assert "bf16" in error.value.expected


def test_low_precision_training_keeps_16_bit_weights_and_fp32_masters():
    # FP8 (Transformer Engine FP8 primer) and NVFP4 (NVIDIA 2025) keep BF16 weights and gradients;
    # mixed precision keeps FP32 master weights (Micikevicius et al. 2018)
    assert weight_bytes("fp8") == 2 and weight_bytes("fp4") == 2
    assert weight_bytes("fp32") == 4 and weight_bytes("fp64") == 8
    assert MASTER_WEIGHT_BYTES == 4
    assert set(SCALED_PRECISIONS) <= set(MIXED_PRECISIONS)


@pytest.mark.parametrize("precision, scale", [("fp32", 1.0), ("tf32", 1.0), ("bf16", 0.5), ("fp16", 0.5), ("fp8", 0.5),
                                              ("fp64", 2.0)])
def test_activation_storage_relative_to_fp32(precision, scale):
    # profiles count activations at FP32 (4 B); FP8 training stores 16-bit activations like BF16
    assert storage_scale(precision) == scale


@given(st.sampled_from([p.value for p in PRECISION_BYTES]))
def test_stored_weights_never_take_fewer_bytes_than_the_format(precision):
    # a training copy is the format itself or a wider one, never narrower
    assert weight_bytes(precision) >= PRECISION_BYTES[precision]
