"""FP8 and FP4 (NVFP4) training in the one engine: GEMMs at the low-precision peak with the recipe's
scaling overhead, attention at the 16-bit peak, and serving without the training recipe's costs
(sizer.engine.devices.build_device_table)."""
import pytest

from sizer.choices import DeviceKind
from sizer.engine import constants
from sizer.engine.constants import TRANSFORMER_GPU_EFFICIENCIES as EFF
from sizer.engine.constants import serving_efficiencies
from sizer.engine.devices import build_device_table
from sizer.engine.layers import ATTENTION, MATRIX, unit_of
from sizer.errors import InputError
from sizer.facade import TimeRequest, estimate_time


def test_attention_is_its_own_unit_at_the_matrix_rate_in_16_bits(catalog):
    assert unit_of("attention") == ATTENTION and unit_of("matmul") == MATRIX
    table = build_device_table((catalog.find("H100 SXM"),), "bf16", (EFF,))
    assert table.rates[0, ATTENTION] == table.rates[0, MATRIX] == pytest.approx(989.4e12 * EFF.matrix, rel=0.01)


@pytest.mark.parametrize("device, precision, low_peak, sixteen_bit_peak", [
    ("H100 SXM", "fp8", 1978.9e12, 989.4e12), ("B200", "fp8", 4500e12, 2250e12), ("B200", "fp4", 9000e12, 2250e12),
    ("GB200", "fp4", 10000e12, 2500e12)])
def test_training_gemms_at_the_low_peak_with_the_overhead_and_attention_at_16_bits(catalog, device, precision, low_peak,
                                                                                      sixteen_bit_peak):
    table = build_device_table((catalog.find(device),), precision, (EFF,))
    assert table.peak[0] == pytest.approx(low_peak, rel=0.01)
    assert table.rates[0, MATRIX] == pytest.approx(low_peak * EFF.matrix / (1 + constants.FP8_SCALING_OVERHEAD), rel=0.01)
    assert table.rates[0, ATTENTION] == pytest.approx(sixteen_bit_peak * EFF.matrix, rel=0.01)
    assert table.weight_bytes[0] == 2 and table.master_bytes[0] == 4  # 16-bit copies, FP32 masters


def test_serving_tables_carry_no_training_recipe_costs(catalog):
    # serving efficiencies name their own FP8 scaling (0: static scales): FP8 GEMMs and attention at the FP8 peak
    serving = serving_efficiencies(DeviceKind.GPU)
    table = build_device_table((catalog.find("H100 SXM"),), "fp8", (serving,))
    assert table.rates[0, MATRIX] == table.rates[0, ATTENTION] == pytest.approx(1978.9e12 * serving.matrix, rel=0.01)


def test_fp4_is_refused_naming_the_field_where_the_catalog_has_no_fp4_peak(catalog):
    with pytest.raises(InputError) as error:
        estimate_time(TimeRequest(model="llama-3-8b", tokens=1e9, device="H100 SXM", count=8, precision="fp4"), catalog)
    assert error.value.field == "precision"


def test_fp4_trains_faster_than_fp8_on_blackwell_and_says_how(catalog):
    common = dict(model="llama-3-8b", tokens=1e9, device="B200", count=8, tp=1, pp=1, zero=1, micro_batch=2)
    fp8 = estimate_time(TimeRequest(precision="fp8", **common), catalog)
    fp4 = estimate_time(TimeRequest(precision="fp4", **common), catalog)
    assert fp4.step_time.expected < fp8.step_time.expected
    said = " ".join(a.value for a in fp4.assumptions)
    assert "FP4 GEMMs at the FP4 peak" in said and "attention scores at the 16-bit peak" in said
