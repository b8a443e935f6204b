"""sizer/plan/owned_choice.py: with ``--have`` and no method or precision, the candidates tried on the
hardware and the rule that picks one (the fastest that fits, the cheapest with the cost objective, the
method training the most weights for the memory question).

The rule is tested with the engine replaced by a table of hand-made outcomes, so each test states
which candidate must win and why; tests/sizer/plan/test_owned.py checks the same choice end to end
against the engine.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import pytest

from sizer.asked import on_catalog
from sizer.choices import Method
from sizer.engine.job import resolve_job
from sizer.errors import InputError
from sizer.plan import owned_choice
from sizer.plan.owned import Outcome, Owned
from sizer.plan.owned_choice import (
    ADAPTER_RECIPES,
    FINE_TUNE_TOKENS_PER_PARAM,
    FULL_RECIPES,
    candidates,
    choose,
    reads_as_fine_tune,
    recipes,
)
from sizer.results import CostOut, QuantityOut, RangeOut
from sizer.schemas.base import WorkloadRequest
from sizer.schemas.time_and_memory import MemoryResult, TimeRequest
from sizer.training.memory_answer import training_memory

GB = QuantityOut(value=10.0, unit="GB")


def asked(**fields: Any) -> TimeRequest:
    """A training question as --have takes it (sizer.plan.owned.training_request): typed, with no hardware."""
    return TimeRequest(**fields)


@lru_cache(maxsize=1)
def _memory_answer() -> MemoryResult:
    """A real engine answer to carry the parameter count and method the choice reads."""
    return training_memory(resolve_job(WorkloadRequest(params=8e9), need_samples=False))


def outcome(fits: bool = True, hours: float | None = 1.0, usd: float | None = None, params: float = 8e9,
            method: str = "full") -> Outcome:
    """An engine answer as :func:`sizer.plan.owned.evaluate_training` shapes it."""
    time = None if hours is None else RangeOut(low=hours, expected=hours, high=hours, unit="hour")
    cost = None if usd is None else CostOut(low=usd, expected=usd, high=usd, unit="USD", price_basis="rent",
                                            price="a test price")
    return Outcome(fits=fits, memory_per_device=GB, device_memory=QuantityOut(value=80.0, unit="GB"),
                   training_time=time, cost=cost,
                   result=_memory_answer().model_copy(update={"trainable_params": params, "method": method}))


@pytest.fixture()
def h100(catalog):
    return Owned(count=1, device=catalog.find("H100 SXM"))


@pytest.fixture()
def a100(catalog):
    return Owned(count=1, device=catalog.find("A100 80GB SXM"))


# ---- what reads as a fine-tune (Hoffmann et al. 2022: ~20 tokens per parameter is compute-optimal) ----

@pytest.mark.parametrize("fields, expected", [
    ({"model": "llama-3-8b", "tokens": 1e8}, True),  # 1e8 < 20 x 8e9: adapting the weights
    ({"model": "llama-3-8b", "tokens": 2e12}, False),  # 2e12 > 20 x 8e9 = 1.6e11: pre-training
    ({"model": "llama-3-8b"}, True),  # no length: the memory question, any method may answer it
    ({"params": 8e9, "tokens": 1e8}, False),  # no named model: no architecture to put adapters on
    ({"model": "llama-3-8b", "samples": 1e4}, False),  # samples: a workload profile, full only
])
def test_a_named_model_on_fewer_than_20_tokens_per_parameter_reads_as_a_fine_tune(fields, expected):
    assert reads_as_fine_tune(asked(**fields), outcome(params=8e9)) is expected


def test_the_fine_tune_threshold_is_20_tokens_per_parameter():
    # just under and just over 20 x 1e9 tokens for 1e9 parameters
    assert FINE_TUNE_TOKENS_PER_PARAM == 20
    assert reads_as_fine_tune(asked(model="m", tokens=1.99e10), outcome(params=1e9))
    assert not reads_as_fine_tune(asked(model="m", tokens=2.01e10), outcome(params=1e9))


def test_no_parameter_count_reads_as_no_fine_tune():
    assert not reads_as_fine_tune(asked(model="m", tokens=1e3), outcome(params=0))


# ---- the candidates ----

def test_a_fine_tune_tries_every_method_and_fp8_only_where_the_device_has_it(h100, a100):
    fields = asked(model="llama-3-8b", tokens=1e8)
    on_h100 = candidates(fields, h100, outcome())
    assert {(e["method"], e["precision"]) for e in on_h100} == {(m, p) for m in ("full", "lora", "qlora")
                                                                for p in ("mixed", "fp8")}
    on_a100 = candidates(fields, a100, outcome())  # an A100 has no fp8 peak (NVIDIA A100 datasheet)
    assert {e["precision"] for e in on_a100} == {"mixed"}


def test_a_method_or_precision_given_is_the_only_one_tried(h100):
    edits = candidates(asked(model="llama-3-8b", tokens=1e8, method="LoRA", precision="BF16"), h100, outcome())
    assert {(e["method"], e["precision"]) for e in edits} == {("lora", "bf16")}


def test_pre_training_tries_the_full_method_only(h100):
    edits = candidates(asked(model="llama-3-8b", tokens=2e12), h100, outcome())
    assert {e["method"] for e in edits} == {"full"}


def test_the_memory_question_on_several_devices_also_tries_zero_3_after_replicas(catalog):
    eight = Owned(count=8, device=catalog.find("H100 SXM"))
    edits = candidates(asked(model="llama-3-8b"), eight, outcome())
    first_sharded = next(i for i, e in enumerate(edits) if e.get("zero") == 3)
    assert first_sharded > 0 and "zero" not in edits[0]  # replicas first: no gathering of the weights
    one = Owned(count=1, device=catalog.find("H100 SXM"))
    assert all("zero" not in e for e in candidates(asked(model="llama-3-8b"), one, outcome()))


def test_recipes_step_down_in_memory_and_never_override_a_field_given():
    timed = recipes(asked(), Method.FULL, memory_only=False)
    assert timed[0] == {}  # the request as it is, first
    assert all("recompute" not in r for r in timed)  # the time engine's search chooses recomputation itself
    assert len(timed) == len({tuple(sorted(r.items())) for r in timed})  # each distinct once
    held = recipes(asked(), Method.FULL, memory_only=True)
    assert held == [dict(r) for r in FULL_RECIPES]
    assert recipes(asked(), Method.LORA, memory_only=True) == [dict(r) for r in ADAPTER_RECIPES]
    given = recipes(asked(optimizer="sgd", state_precision="mixed"), Method.FULL, memory_only=True)
    assert all("optimizer" not in r and "state_precision" not in r for r in given)


def test_with_offload_only_checkpointing_is_tried():
    # paged optimizer states and the step in the backward pass do not combine with ZeRO-Offload
    assert recipes(asked(offload=True), Method.FULL, memory_only=True) == [{}, {"recompute": "full"}]


# ---- the choice, with the engine replaced by a table of outcomes ----

def engine(table: dict[tuple[str, str], Outcome], calls: list[TimeRequest] | None = None):
    """evaluate_training answering by (method, precision) from ``table``; a missing pair is refused."""
    def evaluate(request, device, count, catalog, cloud=None):
        if calls is not None:
            calls.append(request)
        key = (str(request.method), str(request.precision))
        if key not in table:
            raise InputError("method", key[0], "a method this test's engine knows")
        return table[key]
    return evaluate


FINE_TUNE = {"model": "llama-3-8b", "tokens": 1e8}  # a question's fields, given to asked()


def test_the_fastest_candidate_that_fits_wins_and_the_others_are_said(monkeypatch, h100, catalog):
    table = {("full", "mixed"): outcome(fits=False), ("full", "fp8"): outcome(fits=False),
             ("lora", "mixed"): outcome(hours=3.0), ("lora", "fp8"): outcome(hours=2.0),
             ("qlora", "mixed"): outcome(hours=5.0)}  # qlora in fp8 is refused: a candidate the job cannot take
    monkeypatch.setattr(owned_choice, "evaluate_training", engine(table))
    fields, chosen, said = choose(asked(**FINE_TUNE), h100, on_catalog(TimeRequest(), catalog))
    assert (fields.method, fields.precision) == ("lora", "fp8") and chosen is table[("lora", "fp8")]
    assert said is not None and "the fastest that fits" in said.value and "does not fit" in said.value
    assert "check convergence" in said.value  # fp8 chosen: the caveat is stated


def test_the_cost_objective_picks_the_cheapest_that_fits(monkeypatch, h100, catalog):
    table = {("full", "mixed"): outcome(hours=1.0, usd=900.0), ("lora", "mixed"): outcome(hours=2.0, usd=300.0),
             ("qlora", "mixed"): outcome(hours=4.0, usd=500.0)}
    monkeypatch.setattr(owned_choice, "evaluate_training", engine(table))
    fields, _, said = choose(asked(**FINE_TUNE, precision="mixed"), h100, on_catalog(TimeRequest(), catalog), objective="cost")
    assert fields.method == "lora" and "the cheapest that fits" in said.value
    fields, _, _ = choose(asked(**FINE_TUNE, precision="mixed"), h100, on_catalog(TimeRequest(), catalog))
    assert fields.method == "full"  # by time, the fastest


def test_a_candidate_that_misses_the_deadline_does_not_win(monkeypatch, h100, catalog):
    table = {("full", "mixed"): outcome(hours=10.0), ("lora", "mixed"): outcome(hours=30.0),
             ("qlora", "mixed"): outcome(hours=40.0)}
    monkeypatch.setattr(owned_choice, "evaluate_training", engine(table))
    # 20 hours [s]: only full meets it, though the cost objective would prefer a cheaper one
    fields, _, _ = choose(asked(**FINE_TUNE, precision="mixed"), h100, on_catalog(TimeRequest(), catalog), deadline_s=20 * 3600.0, objective="cost")
    assert fields.method == "full"


def test_nothing_fits_answers_as_asked_and_says_so(monkeypatch, h100, catalog):
    table = {(m, "mixed"): outcome(fits=False) for m in ("full", "lora", "qlora")}
    monkeypatch.setattr(owned_choice, "evaluate_training", engine(table))
    question = asked(**FINE_TUNE, precision="mixed")
    fields, chosen, said = choose(question, h100, on_catalog(TimeRequest(), catalog))
    assert fields == question and chosen is table[("full", "mixed")]
    assert "none of the candidates fits" in said.value


def test_the_memory_question_takes_the_first_that_fits_in_order_of_preference(monkeypatch, h100, catalog):
    calls: list[TimeRequest] = []
    table = {("full", "mixed"): outcome(fits=False, hours=None), ("lora", "mixed"): outcome(hours=None),
             ("qlora", "mixed"): outcome(hours=None)}
    monkeypatch.setattr(owned_choice, "evaluate_training", engine(table, calls))
    fields, _, said = choose(asked(model="llama-3-8b", precision="mixed"), h100, on_catalog(TimeRequest(), catalog))
    assert fields.method == "lora" and "the one training the most weights that fits" in said.value
    assert not any(c.method == "qlora" for c in calls)  # stopped at the first that fits


def test_one_candidate_leaves_nothing_to_choose(monkeypatch, h100, catalog):
    table = {("full", "bf16"): outcome()}
    monkeypatch.setattr(owned_choice, "evaluate_training", engine(table))
    # method and precision given, and offload: no lighter recipe combines with it (recipes' ladder)
    question = asked(model="llama-3-8b", tokens=2e12, method="full", precision="bf16", offload=True)
    assert choose(question, h100, on_catalog(TimeRequest(), catalog)) == (question, table[("full", "bf16")], None)


def test_a_recipe_is_tried_only_until_one_of_its_group_fits(monkeypatch, h100, catalog):
    calls: list[TimeRequest] = []
    table = {("full", "bf16"): outcome()}
    monkeypatch.setattr(owned_choice, "evaluate_training", engine(table, calls))
    question = asked(model="llama-3-8b", tokens=2e12, method="full", precision="bf16")
    fields, _, said = choose(question, h100, on_catalog(TimeRequest(), catalog))
    # the request as it is fits: the lighter recipes of the same method and precision are not evaluated
    assert fields == question and len(calls) == 1 and said is not None
