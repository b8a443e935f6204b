"""A named framework's recipe filled into a request (sizer.frameworks.apply)."""
from __future__ import annotations

from sizer.choices import Method, Optimizer, Precision, Recompute
from sizer.facade import MemoryRequest
from sizer.frameworks.apply import filled
from sizer.frameworks.framework_name import Framework

FIELDS = {"state_precision", "optimizer", "optimizer_in_backward", "offload_params", "offload_activations", "loss",
          "recompute", "zero"}


def test_knobs_become_the_members_the_request_holds():
    knobs = filled(Framework.TORCHTUNE, Method.FULL, 1, {}, FIELDS)
    assert knobs["optimizer"] is Optimizer.PAGED_ADAMW_8BIT and knobs["state_precision"] is Precision.BF16
    assert knobs["recompute"] is Recompute.FULL and knobs["optimizer_in_backward"] is True


def test_a_field_given_is_kept_but_a_sent_default_layout_is_not_a_choice():
    knobs = filled(Framework.TORCHTUNE, Method.FULL, 1, {"optimizer": "adamw", "recompute": Recompute.NONE}, FIELDS)
    assert "optimizer" not in knobs and knobs["recompute"] is Recompute.FULL  # the CLI sends memory's "none" always


def test_offload_drops_the_step_in_backward_and_paged_states():
    # sizer.engine.recipe refuses both beside offload: the step runs on the CPU
    knobs = filled(Framework.TORCHTUNE, Method.FULL, 1, {"offload_params": True}, FIELDS)
    assert "optimizer_in_backward" not in knobs and "optimizer" not in knobs


def test_fields_the_request_type_lacks_are_left_out():
    assert "zero" not in filled(Framework.TORCHTUNE, Method.FULL, 8, {}, FIELDS - {"zero"})


def test_the_request_keeps_the_filled_fields_unset_so_a_copy_takes_its_own_recipe():
    given = MemoryRequest(model="llama-3.1-8b", framework="torchtune", optimizer="adamw")
    assert given.optimizer is Optimizer.ADAMW and given.optimizer_in_backward is True
    assert "optimizer" in given.model_fields_set and "optimizer_in_backward" not in given.model_fields_set
    lora = given.model_copy(update={"method": "lora"})
    assert lora.optimizer_in_backward is False and lora.recompute is Recompute.FULL
    several = MemoryRequest(model="llama-3.1-8b", framework="torchtune", count=8)
    assert several.zero == 3 and several.optimizer is Optimizer.ADAMW and not several.optimizer_in_backward
