"""The runtime registry: one home for what a runtime is, asked by name."""
import pytest

from sizer.errors import InputError
from sizer.runtimes import Purpose, Runtime, registry, runtime, runtimes_for


def test_an_unknown_runtime_is_refused_naming_the_field():
    with pytest.raises(InputError) as refused:
        runtime("no-such-runtime", field="runtime")
    assert refused.value.field == "runtime"


def test_every_spelling_leads_to_one_runtime_of_its_purpose():
    for spelling, entry in registry().items():
        assert runtime(spelling) is entry
        assert entry in runtimes_for(entry.purpose)


def test_a_refusal_names_what_the_runtime_cannot_run():
    entry = Runtime(name="toy", purpose=Purpose.LOCAL, summary="a test runtime", sources=("test",),
                    weight_formats=frozenset({"q4_k_m"}), device_kinds=frozenset({"gpu"}))
    assert entry.refusal(weights="q4_k_m", device_kind="gpu") is None
    assert "fp16" in entry.refusal(weights="fp16")
    assert "cpu" in entry.refusal(device_kind="cpu")
