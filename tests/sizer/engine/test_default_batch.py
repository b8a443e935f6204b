"""sizer/engine/training.py: a default batch that no layout can split is raised and said; a given one is refused."""
import pytest

from sizer import facade
from sizer.errors import InputError

QUESTION = dict(params=175e9, samples=300e9, device="A100 80GB SXM", count=1024, precision="bf16")


def test_a_default_batch_smaller_than_the_count_is_raised_and_said():
    result = facade.estimate_time(facade.TimeRequest(**QUESTION), suggest=False)
    assert any("default batch raised" in w and "1,024 run" in w for w in result.warnings)
    assert any(a.name == "batch size changed" for a in result.assumptions)


def test_a_given_batch_no_layout_splits_is_refused_naming_the_most_devices():
    with pytest.raises(InputError, match="at most 512 devices can run it"):
        facade.estimate_time(facade.TimeRequest(**QUESTION, batch_size=512), suggest=False)
