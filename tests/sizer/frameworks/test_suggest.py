"""Framework recipes as changes to try (sizer.frameworks.suggest), and where the suggestions put them."""
from __future__ import annotations

from sizer.facade import MemoryRequest, estimate_memory
from sizer.frameworks.suggest import framework_changes
from sizer.schemas.base import WorkloadRequest
from sizer.training.estimates import TimeRequest


def test_full_fine_tune_on_one_device_tries_torchtunes_single_device_recipe():
    changes = framework_changes(WorkloadRequest(method="full"), 1)
    assert changes[0][1] == {"framework": "torchtune"} and "full_finetune_single_device" in changes[0][0]


def test_adapters_on_several_devices_try_fsdp_qlora_then_with_offload():
    edits = [edit for _, edit in framework_changes(WorkloadRequest(method="qlora"), 2)]
    assert {"framework": "fsdp"} in edits and {"framework": "fsdp", "offload_params": True} in edits
    assert {"framework": "unsloth"} not in edits  # one device only


def test_nothing_where_a_framework_is_named_or_states_are_offloaded():
    assert framework_changes(WorkloadRequest(framework="axolotl"), 1) == []
    assert framework_changes(TimeRequest(offload=True), 1) == []  # ZeRO-Offload: a time question's field


def test_suggestions_offer_the_frameworks_recipe_first():
    # issue 39: "with torchtune's single-device recipe it fits"
    result = estimate_memory(MemoryRequest(model="llama-3.1-8b", method="full", device="RTX 4090", seq_len=2048))
    assert result.suggestions and result.suggestions[0].apply == {"framework": "torchtune"}
    assert "torchtune's full_finetune_single_device recipe" in result.suggestions[0].change
