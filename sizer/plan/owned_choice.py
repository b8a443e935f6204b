"""With ``--have`` and no method or precision given: the best of the candidates on that hardware
(the best method, precision, layout and batch on it).

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
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from sizer.asked import Asked
from sizer.choices import Method, Objective, Precision
from sizer.errors import SizerError
from sizer.formulas.peaks import supported_precisions
from sizer.plan.owned import Outcome, Owned, evaluate_training
from sizer.request_edits import edited, given, given_names
from sizer.results import Assumption, unit_factor
from sizer.schemas.base import WorkloadRequest

if TYPE_CHECKING:
    from sizer.schemas.time_and_memory import TimeRequest

# A compute-optimal pre-training run reads about 20 tokens per parameter (Hoffmann et al. 2022,
# docs/references.md [hoffmann]); a named model trained on fewer is read as adapting its weights.
FINE_TUNE_TOKENS_PER_PARAM = 20
METHODS = (Method.FULL, Method.LORA, Method.QLORA)  # most weights trained first: the memory question's preference
PRECISIONS = (Precision.MIXED, Precision.FP8)
METHOD_WORD = {Method.FULL: "full", Method.LORA: "LoRA", Method.QLORA: "QLoRA"}
SHORT_UNIT = {"minute": "min", "hour": "h", "day": "days", "year": "years"}


def reads_as_fine_tune(request: WorkloadRequest, outcome: Outcome) -> bool:
    """Whether the job reads as a fine-tune of a named model's weights (module docstring); ``outcome``
    is the engine's answer for the full method, which counts the parameters.

    Parameters
    ----------
    request : WorkloadRequest
        The training request (``model``, ``samples``, ``tokens`` [token] as given).
    outcome : Outcome
        The request evaluated with the full method (its ``trainable_params`` [1]).

    Returns
    -------
    bool
        True for a named model with no length (the memory question) or trained on fewer than
        :data:`FINE_TUNE_TOKENS_PER_PARAM` tokens per parameter; False for samples, no model, or
        a pre-training length.
    """
    if request.model is None or request.samples is not None:
        return False
    tokens = request.tokens
    if tokens is None:
        return True  # the memory question: any method may be the answer
    params = getattr(outcome.result, "trainable_params", None)
    if not params:  # no parameter count to compare with (None or 0)
        return False
    return bool(tokens < FINE_TUNE_TOKENS_PER_PARAM * params)


def candidates(request: WorkloadRequest, owned: Owned, base: Outcome) -> list[dict[str, Any]]:
    """The edits worth evaluating on ``owned`` (method, precision and, for the memory question on several
    devices, ZeRO-3 sharding, which the time engine's layout search tries by itself); the given ones kept.

    Parameters
    ----------
    request : WorkloadRequest
        The training request; a ``method`` or ``precision`` given is the only one tried.
    owned : Owned
        The hardware: its device (whether it has an fp8 peak) and count [1].
    base : Outcome
        The request evaluated as given (whether it reads as a fine-tune).

    Returns
    -------
    list of dict
        Edits of the request (``method``, ``precision``, a recipe, maybe ``zero``), in order of
        preference: methods training the most weights first, then each method's recipes.
    """
    chosen = given_names(request)
    methods = [request.method] if "method" in chosen else \
        list(METHODS) if reads_as_fine_tune(request, base) else [Method.FULL]
    if "precision" in chosen:
        precisions = [request.precision]
    else:
        precisions = [p for p in PRECISIONS if p is Precision.MIXED or p in supported_precisions(owned.device)]
    memory_only = request.samples is None and request.tokens is None
    layouts: list[dict[str, Any]] = [{}]
    if memory_only and owned.count > 1 and "zero" not in chosen and "sharding" not in chosen:
        layouts.append({"zero": 3})  # replicas first: they need no gathering of the weights
    edits = []
    for m in methods:
        for recipe in recipes(request, m, memory_only):
            edits += [{"method": m, "precision": p, **recipe, **layout} for p in precisions for layout in layouts]
    return edits


# Training-state recipes tried on the hardware given, most usual first, each a step down in memory
# (sizer.engine.recipe): checkpointing; pure bf16 states; 8-bit AdamW; torchtune's low-memory single-device
# recipe (pure bf16, paged 8-bit AdamW, the step in the backward pass). Adapters: checkpointing, then torchtune's
# chunked cross-entropy (long sequences' logits).
# The last rungs are frameworks' documented recipes (sizer/frameworks/frameworks.yaml): torchtune's (single device:
# pure bf16, paged 8-bit AdamW, step in backward, checkpointing, chunked loss; several: FSDP2), and for adapters
# FSDP + QLoRA (Answer.AI's fsdp_qlora), then with the parameters offloaded to the host (its 70B on two 24 GB cards).
FULL_RECIPES: tuple[dict[str, Any], ...] = (
    {}, {"recompute": "full"}, {"state_precision": "bf16", "recompute": "full"},
    {"state_precision": "bf16", "optimizer": "adamw-8bit", "recompute": "full"}, {"framework": "torchtune"})
ADAPTER_RECIPES: tuple[dict[str, Any], ...] = ({}, {"recompute": "full"}, {"recompute": "full", "loss": "chunked"},
                                               {"framework": "torchtune"}, {"framework": "fsdp"},
                                               {"framework": "fsdp", "offload_params": True})


def recipes(request: WorkloadRequest, method: Method, memory_only: bool) -> list[dict[str, Any]]:
    """The recipe edits worth trying for ``method``: none of a field the user gave; no ``recompute`` where the
    time engine's layout search chooses it itself; each distinct once.

    Parameters
    ----------
    request : WorkloadRequest
        The training request (a field given is never changed).
    method : Method
        The fine-tuning method the recipes are for: full (the full ladder) or an adapter method.
    memory_only : bool
        Whether the request has no length (the memory question, where no layout search picks the
        recomputation).

    Returns
    -------
    list of dict
        The recipe edits, least intrusive first (the first is ``{}``, the request as it is).
    """
    ladder = FULL_RECIPES if method is Method.FULL else ADAPTER_RECIPES
    if given(request, "offload") or given(request, "offload_params"):
        ladder = ({}, {"recompute": "full"})  # paged states and a step in backward do not combine with offload
    elif given(request, "framework") is not None:
        ladder = ({}, {"offload_params": True})  # the framework's own recipe, then with its parameters offloaded
    chosen = given_names(request)
    out: list[dict[str, Any]] = []
    for recipe in ladder:
        edit = {k: v for k, v in recipe.items() if k not in chosen and (memory_only or k != "recompute")}
        if edit not in out:
            out.append(edit)
    return out


def _seconds(outcome: Outcome) -> float:
    t = outcome.training_time
    return t.expected * unit_factor(t.unit, "s") if t is not None else math.inf


def choose(request: TimeRequest, owned: Owned, question: Asked[Any], *, cloud: str | None = None,
           deadline_s: float | None = None, objective: Objective | None = None) -> tuple[TimeRequest, Outcome, Assumption | None]:
    """The request to answer with on ``owned``, its outcome and the assumption that says the
    choice (None where nothing was left to choose).

    Parameters
    ----------
    request : TimeRequest
        The training request (:func:`sizer.plan.owned.training_request`).
    owned : Owned
        The hardware the user has.
    question : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): the devices and their prices, and the
        entries its request names besides its hardware.
    cloud : str, optional
        A provider whose prices cost each candidate.
    deadline_s : float, optional
        The deadline [s]; a candidate that misses it does not win.
    objective : {"time", "cost", "pareto"}, optional
        ``cost`` for the cheapest that fits; otherwise the fastest.

    Returns
    -------
    tuple of (TimeRequest, Outcome, Assumption or None)
        The request to answer with (``request`` with the winning edit), its outcome, and the assumption that
        says what was chosen from what (None where there was one candidate only).
    """
    base = evaluate_training(request, owned.device, owned.count, question, cloud)
    edits = candidates(request, owned, base)
    if len(edits) <= 1:
        return request, base, None
    memory_only = request.samples is None and request.tokens is None
    as_given = {"method": Method(base.trained.method),  # the engine's own word for the method it ran
                "precision": given(request, "precision", Precision.MIXED)}
    tried: list[tuple[dict[str, Any], TimeRequest | None, Outcome | None]] = []
    settled: set[tuple[Any, ...]] = set()  # (method, precision, zero) already answered by its least intrusive recipe that fits
    for edit in edits:
        group = (edit["method"], edit["precision"], edit.get("zero"))
        if group in settled:
            continue  # a recipe saves memory at some cost: the first in the ladder that fits is the one for its group
        changed: TimeRequest | None = None
        try:
            changed = edited(request, edit)
            outcome = base if edit == as_given else evaluate_training(changed, owned.device, owned.count, question, cloud)
        except (SizerError, ValidationError):  # an edit this job cannot take (QLoRA in fp8 ...)
            outcome = None
        tried.append((edit, changed, outcome))
        if outcome is not None and outcome.fits and outcome.meets(deadline_s) is not False:
            settled.add(group)
        if memory_only and outcome is not None and outcome.fits:
            break  # in order of preference: the first that fits is the answer
    working = [(edit, changed, outcome) for edit, changed, outcome in tried
               if changed is not None and outcome is not None and outcome.fits and outcome.meets(deadline_s) is not False]
    if not working:
        return request, base, _said(owned, None, tried, memory_only, objective)
    if memory_only:
        best = working[0]  # candidates come in order of preference
    elif objective == Objective.COST:
        best = min(working, key=lambda t: (t[2].cost.expected if t[2].cost is not None else math.inf, _seconds(t[2])))
    else:
        best = min(working, key=lambda t: _seconds(t[2]))
    answered, outcome = best[1], best[2]
    assert answered is not None and outcome is not None  # kept in working only so
    return answered, outcome, _said(owned, best[0], tried, memory_only, objective)


def _said(owned: Owned, chosen: dict[str, Any] | None, tried: list[tuple[dict[str, Any], TimeRequest | None, Outcome | None]],
          memory_only: bool, objective: Objective | None) -> Assumption:
    def label(edit: dict[str, Any]) -> str:
        zero = f" ZeRO {edit['zero']}" if "zero" in edit else ""
        recipe = [f"{k.replace('_', ' ')} {v}" if not isinstance(v, bool) else k.replace("_", " ")
                  for k, v in edit.items() if k not in ("method", "precision", "zero")]
        return f"{METHOD_WORD.get(edit['method'], edit['method'])} {edit['precision']}{zero}" + \
            (f" ({', '.join(recipe)})" if recipe else "")

    def result(outcome: Outcome) -> str:
        if not outcome.fits:
            return f"does not fit ({outcome.memory_per_device.value:.3g} {outcome.memory_per_device.unit})"
        if outcome.training_time is not None:
            t = outcome.training_time
            return f"{t.expected:.3g} {SHORT_UNIT.get(t.unit, t.unit)}"
        return f"fits ({outcome.memory_per_device.value:.3g} {outcome.memory_per_device.unit})"

    others = "; ".join(f"{label(edit)}: {result(outcome)}" for edit, _, outcome in tried if outcome is not None)
    rule = "the one training the most weights that fits" if memory_only else \
        "the cheapest that fits" if objective == Objective.COST else "the fastest that fits"
    if chosen is None:
        value = f"{owned.label}: none of the candidates fits ({others}); answered as asked, with the changes that would work"
    else:
        value = f"{owned.label}: {label(chosen)}, {rule} of {others}"
        if chosen["precision"] is Precision.FP8:
            value += " (fp8 with Transformer Engine-style scaling: check convergence)"
    return Assumption(name="method and precision", value=value,
                      source="sizer's choice on the hardware given (method: full, LoRA and QLoRA for a fine-tune, fewer "
                             f"tokens than {FINE_TUNE_TOKENS_PER_PARAM} per parameter [hoffmann]; precision: mixed, fp8 "
                             "where the device has it); give --method / --precision to keep one")
