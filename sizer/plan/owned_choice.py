"""With ``--have`` and no method or precision given: the best of the candidates on that hardware
(issue 19, item 2: "the best method, precision, layout and batch on it").

Candidates: full, LoRA and QLoRA for a fine-tune (a named model trained on fewer tokens than a
compute-optimal pre-training run reads, :data:`FINE_TUNE_TOKENS_PER_PARAM`, or on none: the memory
question); full only for pre-training or a model without an architecture. Precisions: mixed
(bf16, else fp16) and fp8 where the device has an fp8 peak. Each is evaluated by the one engine
(:func:`sizer.plan.owned.evaluate_training`, whose layout search picks layout and micro-batch);
of those that fit (and meet the deadline) the fastest wins, or the cheapest with the cost
objective; for the memory question (no time) the method training the most weights. A method or
precision the user gave is kept. The choice and the alternatives are said in an assumption.
"""
from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from sizer.errors import SizerError
from sizer.formulas.peaks import supported_precisions
from sizer.hardware.catalog import Catalog
from sizer.plan.owned import Outcome, Owned, evaluate_training
from sizer.results import Assumption, unit_factor
from sizer.units import parse_count

# A compute-optimal pre-training run reads about 20 tokens per parameter (Hoffmann et al. 2022,
# docs/references.md [hoffmann]); a named model trained on fewer is read as adapting its weights.
FINE_TUNE_TOKENS_PER_PARAM = 20
METHODS = ("full", "lora", "qlora")  # most weights trained first: the memory question's preference
PRECISIONS = ("mixed", "fp8")
METHOD_WORD = {"full": "full", "lora": "LoRA", "qlora": "QLoRA"}
SHORT_UNIT = {"minute": "min", "hour": "h", "day": "days", "year": "years"}


def reads_as_fine_tune(fields: dict[str, Any], outcome: Outcome) -> bool:
    """Whether the job reads as a fine-tune of a named model's weights (module docstring); ``outcome``
    is the engine's answer for the full method, which counts the parameters."""
    if fields.get("model") is None or fields.get("samples") is not None:
        return False
    if fields.get("tokens") is None:
        return True  # the memory question: any method may be the answer
    params = getattr(outcome.result, "trainable_params", None)
    tokens = parse_count("tokens", fields["tokens"])
    return bool(params) and tokens < FINE_TUNE_TOKENS_PER_PARAM * params


def candidates(fields: dict[str, Any], owned: Owned, base: Outcome) -> list[tuple[str, str]]:
    """(method, precision) pairs worth evaluating on ``owned``; the given ones kept."""
    methods = [str(fields["method"]).lower()] if "method" in fields else \
        list(METHODS) if reads_as_fine_tune(fields, base) else ["full"]
    if "precision" in fields:
        precisions = [str(fields["precision"]).lower()]
    else:
        precisions = [p for p in PRECISIONS if p == "mixed" or p in supported_precisions(owned.device)]
    return [(m, p) for m in methods for p in precisions]


def _seconds(outcome: Outcome) -> float:
    t = outcome.training_time
    return t.expected * unit_factor(t.unit, "s") if t is not None else math.inf


def choose(fields: dict[str, Any], owned: Owned, catalog: Catalog, *, cloud: str | None = None,
           deadline_s: float | None = None, objective: str | None = None) -> tuple[dict[str, Any], Outcome, Assumption | None]:
    """The request fields to answer with on ``owned``, their outcome and the assumption that says the
    choice (None where nothing was left to choose)."""
    base = evaluate_training(fields, owned.device, owned.count, catalog, cloud)
    pairs = candidates(fields, owned, base)
    if len(pairs) <= 1:
        return fields, base, None
    memory_only = fields.get("samples") is None and fields.get("tokens") is None
    tried: list[tuple[tuple[str, str], dict, Outcome | None]] = []
    for method, precision in pairs:
        edited = {**fields, "method": method, "precision": precision}
        try:
            outcome = base if (method, precision) == (base.result.method, _asked(fields)) else \
                evaluate_training(edited, owned.device, owned.count, catalog, cloud)
        except (SizerError, ValidationError):  # a pair this job cannot take (QLoRA in fp8 ...)
            outcome = None
        tried.append(((method, precision), edited, outcome))
    working = [t for t in tried if t[2] is not None and t[2].fits and t[2].meets(deadline_s) is not False]
    if not working:
        return fields, base, _said(owned, None, tried, memory_only, objective)
    if memory_only:
        best = working[0]  # METHODS and PRECISIONS are in order of preference
    elif objective == "cost":
        best = min(working, key=lambda t: (t[2].cost.expected if t[2].cost is not None else math.inf, _seconds(t[2])))
    else:
        best = min(working, key=lambda t: _seconds(t[2]))
    return best[1], best[2], _said(owned, best[0], tried, memory_only, objective)


def _asked(fields: dict[str, Any]) -> str:
    return str(fields.get("precision", "mixed")).lower()


def _said(owned: Owned, chosen: tuple[str, str] | None, tried, memory_only: bool, objective: str | None) -> Assumption:
    def label(pair: tuple[str, str]) -> str:
        return f"{METHOD_WORD.get(pair[0], pair[0])} {pair[1]}"

    def result(outcome: Outcome) -> str:
        if not outcome.fits:
            return f"does not fit ({outcome.memory_per_device.value:.3g} {outcome.memory_per_device.unit})"
        if outcome.training_time is not None:
            t = outcome.training_time
            return f"{t.expected:.3g} {SHORT_UNIT.get(t.unit, t.unit)}"
        return f"fits ({outcome.memory_per_device.value:.3g} {outcome.memory_per_device.unit})"

    others = "; ".join(f"{label(pair)}: {result(outcome)}" for pair, _, outcome in tried if outcome is not None)
    rule = "the one training the most weights that fits" if memory_only else \
        "the cheapest that fits" if objective == "cost" else "the fastest that fits"
    if chosen is None:
        value = f"{owned.label}: none of the candidates fits ({others}); answered as asked, with the changes that would work"
    else:
        value = f"{owned.label}: {label(chosen)}, {rule} of {others}"
        if chosen[1] == "fp8":
            value += " (fp8 with Transformer Engine-style scaling: check convergence)"
    return Assumption(name="method and precision", value=value,
                      source="sizer's choice on the hardware given (method: full, LoRA and QLoRA for a fine-tune, fewer "
                             f"tokens than {FINE_TUNE_TOKENS_PER_PARAM} per parameter [hoffmann]; precision: mixed, fp8 "
                             "where the device has it); give --method / --precision to keep one")
