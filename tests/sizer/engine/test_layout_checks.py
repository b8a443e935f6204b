"""sizer/engine/layout_checks.py: a pinned layout Megatron-LM would refuse is refused, naming the field."""
import pytest

from sizer.engine.constants import BATCH_ROUNDING
from sizer.engine.job import resolve_job
from sizer.engine.layout_checks import check_layout, fixed_layout, rounded_batch
from sizer.errors import InputError
from sizer.schemas.base import WorkloadRequest


@pytest.fixture(scope="module")
def llama_7b():
    # Llama 2 7B: 32 heads, 32 blocks (catalog/models.yaml)
    return resolve_job(WorkloadRequest(model="llama-2-7b", tokens=1e9, precision="bf16"))


def test_sizes_that_divide_the_devices_and_the_heads_pass(llama_7b):
    check_layout(llama_7b, 16, 4, 2, None)  # 4 x 2 divides 16; 4 divides 32 heads


def test_a_tensor_size_not_dividing_the_device_count_is_refused(llama_7b):
    with pytest.raises(InputError) as refused:
        check_layout(llama_7b, 6, 4, None, None)
    assert refused.value.field == "tp"


def test_a_tensor_size_not_dividing_the_heads_is_refused(llama_7b):
    with pytest.raises(InputError) as refused:
        check_layout(llama_7b, 24, 3, None, None)  # 3 divides 24 devices but not 32 heads
    assert refused.value.field == "tp"


def test_only_the_pinned_fields_are_kept():
    assert fixed_layout(zero=1, tp=2) == {"zero": 1, "tp": 2}
    assert fixed_layout() == {}


def test_a_batch_within_the_rounding_counts_as_the_one_asked():
    assert rounded_batch(1000.0, 1000.0 * (1 + BATCH_ROUNDING / 2))
    assert not rounded_batch(1000.0, 1000.0 * (1 + 2 * BATCH_ROUNDING))
