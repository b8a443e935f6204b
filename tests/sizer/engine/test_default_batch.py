"""A default batch that no layout splits is raised to the nearest batch some layout runs, the same rule for
time, plan, sweep and recommend (one search: sizer/engine/evaluate.py, sizer/engine/search.py), and said;
a given batch is refused."""
import pytest

from sizer import facade
from sizer.errors import InputError

QUESTION = dict(params=175e9, samples=300e9, device="A100 80GB SXM", count=1024, precision="bf16")
# 1.25e8 parameters: the default batch is 0.5M tokens, 256 sequences of 2,048; 131,072 H100s outnumber it
# even with the widest tensor x pipeline split the shape allows
SMALL = dict(params=1.25e8, tokens=1e9, device="H100 SXM", count=131072)


def test_a_default_batch_smaller_than_the_count_is_raised_and_said():
    result = facade.estimate_time(facade.TimeRequest(**QUESTION), suggest=False)
    assert any("default batch raised" in w and "1,024 run" in w for w in result.warnings)
    assert any(a.name == "batch size changed" for a in result.assumptions)


def test_a_given_batch_no_layout_splits_is_refused_naming_the_most_devices():
    with pytest.raises(InputError, match="at most 512 devices can run it"):
        facade.estimate_time(facade.TimeRequest(**QUESTION, batch_size=512), suggest=False)


def test_time_and_plan_raise_a_default_batch_alike_and_say_so():
    timed = facade.estimate_time(facade.TimeRequest(**SMALL), suggest=False)
    planned = facade.plan(facade.PlanRequest(**SMALL))
    first = planned.layouts[0]
    asked = 2 ** 19 / 2048
    assert timed.batch_size == first.batch_size > asked  # raised, and to the same batch
    assert (timed.layout.tp, timed.layout.pp, timed.layout.dp, timed.layout.zero, timed.layout.micro_batch) == \
        (first.tp, first.pp, first.dp, first.zero, first.micro_batch)
    # the nearest batch some layout runs: one sequence per replica of the fewest replicas
    assert first.batch_size == min(layout.batch_size for layout in planned.layouts)
    for warnings in (timed.warnings, planned.warnings):
        assert any(w.startswith("default batch raised: 256 sequences") for w in warnings)
    assert any(a.name == "batch size changed" and "256" in a.value for a in timed.assumptions)
    with pytest.raises(InputError, match="batch_size"):  # given, the same batch is refused by both
        facade.plan(facade.PlanRequest(**SMALL, batch_size=2 ** 19))
    with pytest.raises(InputError, match="batch_size"):
        facade.estimate_time(facade.TimeRequest(**SMALL, batch_size=2 ** 19), suggest=False)


def test_a_default_batch_a_count_changes_is_never_said_to_be_asked():
    # Llama 3.1 405B's own batch, 2,048 sequences of 8,192 (Llama 3 report §3.4.1); 16,000 devices run 2,000:
    # the warning says the default changed, not a batch the user asked for
    result = facade.estimate_time(facade.TimeRequest(model="llama-3.1-405b", tokens=1.56e13, device="H100 SXM", count=16000))
    assert result.batch_size == 2000
    assert any(w.startswith("default batch changed: 2,048 sequences per step by default") for w in result.warnings)
    assert not any("asked" in w for w in result.warnings)
