"""``--have``: the answer for the hardware one already has, with what would make it work where it
does not (:mod:`sizer.plan.suggestions`). The hardware is parsed and evaluated in
:mod:`sizer.plan.owned`; this module shapes the answer.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from sizer.asked import Asked
from sizer.choices import Split
from sizer.errors import InputError
from sizer.plan.owned import Outcome, Owned, evaluate_serving, training_request
from sizer.plan.owned_choice import choose
from sizer.plan.suggestions import serving_suggestions, training_suggestions
from sizer.request_edits import edited, given, given_names
from sizer.results import Assumption, Suggestion
from sizer.schemas.owned_hardware import OwnedOption, OwnedResult
from sizer.schemas.time_and_memory import MemoryResult

if TYPE_CHECKING:
    from sizer.hardware.schema import Device
    from sizer.schemas.plan import PlanRequest
    from sizer.schemas.recommendation import RecommendRequest
    from sizer.schemas.serving import InferenceResult
    from sizer.schemas.serving_requests import InferenceRequest
    from sizer.schemas.time_and_memory import MemoryRequest, TimeRequest, TimeResult

    TrainingRequest = TimeRequest | MemoryRequest | RecommendRequest | PlanRequest


def _deadline_seconds(request: TrainingRequest) -> float | None:
    deadline = getattr(request, "deadline", None)
    if deadline is None:
        return None
    return float(deadline.to("s").magnitude)


def answer_training(asked: Asked[TrainingRequest]) -> OwnedResult:
    """Train (or, without samples and tokens, hold) the request's workload on each hardware set of
    ``request.have`` only: its verdict, time and cost, the method and precision chosen where not given
    (:mod:`sizer.plan.owned_choice`), the layout the engine chose, and, where it does not fit or misses
    the deadline, the changes that would work.

    Parameters
    ----------
    asked : Asked of TimeRequest, MemoryRequest, RecommendRequest or PlanRequest
        The training (or memory) question, with ``have``: the hardware sets, ``"8x A100 80GB SXM"``, each
        found in the catalog (:func:`sizer.asked.on_catalog`); a recommendation's ``deadline`` [time], ``cloud``
        and ``objective`` are heeded.

    Returns
    -------
    OwnedResult
        One option per hardware set, in the given order: fits, time [the unit a person reads], cost [USD],
        the layout, a verdict and the suggestions; and the assumptions.
    """
    request = asked.request
    owned = _owned(asked)
    asked_first = training_request(request)
    cloud = getattr(request, "cloud", None)
    deadline_s = _deadline_seconds(request)
    options: list[OwnedOption] = []
    workload = ""
    objective = getattr(request, "objective", None)
    chosen_notes: list[Assumption] = []
    results: list[TimeResult | MemoryResult] = []
    for have in owned:
        answered, outcome, note = choose(asked_first, have, asked, cloud=cloud, deadline_s=deadline_s, objective=objective)
        chosen_notes += [note] if note is not None else []
        result = outcome.trained
        results.append(result)
        workload = getattr(result, "workload", "") or workload
        meets = outcome.meets(deadline_s)
        ok = outcome.fits and meets is not False
        suggestions = [] if ok else training_suggestions(answered, have, asked, outcome, deadline_s=deadline_s, cloud=cloud)
        options.append(OwnedOption(
            hardware=have.label, device=have.device.id, name=have.device.name, count=have.count, fits=outcome.fits,
            meets_deadline=meets, method=result.method, precision=result.precision, layout=_training_layout(result),
            memory_per_device=outcome.memory_per_device, device_memory=outcome.device_memory,
            training_time=outcome.training_time if outcome.fits else None, cost=outcome.cost if outcome.fits else None,
            verdict=_verdict(outcome, meets, suggestions),
            suggestions=suggestions, chosen=_chosen(asked_first, answered),
            recipe=getattr(result, "recipe", None)))
    task = "memory" if asked_first.samples is None and asked_first.tokens is None else "training"
    if not workload:
        workload = "training memory"
    return OwnedResult(task=task, workload=workload, options=options,
                       assumptions=_assumptions(owned, task) + _workload_notes(results, asked_first) + chosen_notes)


def _owned(asked: Asked[Any]) -> tuple[Owned, ...]:
    """The hardware sets of ``have``, found in the catalog where the request met it."""
    return tuple(Owned(count=count, device=device) for count, device in asked.have)


def _chosen(asked: TimeRequest, answered: TimeRequest) -> dict[str, Any]:
    """The fields sizer chose on a hardware set: those of the request answered that the user did not give so, in the
    request model's field order (a set's order would change the answer's bytes with the process's hash seed)."""
    chosen = given_names(answered)
    return {name: getattr(answered, name) for name in type(answered).model_fields
            if name in chosen and given(asked, name) != getattr(answered, name)}


# The workload's own defaults an answer on the user's hardware states, as a ranking does: the same
# sequence length and batch run on every hardware set.
WORKLOAD_NOTES = ("sequence length", "batch size")


def _workload_notes(results: list[TimeResult | MemoryResult], request: TimeRequest) -> list[Assumption]:
    """The sequence length and batch the estimates ran with (from the first that says them), and a
    sequence length given by the user, which no default states."""
    notes = next(([a for a in r.assumptions if a.name in WORKLOAD_NOTES] for r in results
                  if any(a.name in WORKLOAD_NOTES for a in getattr(r, "assumptions", ()))), [])
    seq_len = given(request, "seq_len")
    if seq_len is not None and not any(a.name == "sequence length" for a in notes):
        notes.insert(0, Assumption(name="sequence length", value=f"{seq_len} tokens", source="given (seq_len)"))
    return notes


def answer_inference(asked: Asked[InferenceRequest]) -> OwnedResult:
    """Serve the request's model on each hardware set of ``request.have`` only.

    Where a set's count does not split the model's heads, it serves as replicas of the largest tensor-parallel
    size that divides the count and splits them (every device used, said in the layout); where a weight format has no peak on the device, the set is
    shown as not serving, with the changes that would.

    Parameters
    ----------
    asked : Asked of InferenceRequest
        The serving question, with ``have``: the hardware sets, ``"2x RTX 4090"``, each found in the catalog
        (:func:`sizer.asked.on_catalog`).

    Returns
    -------
    OwnedResult
        One option per hardware set: fits, decode throughput [token/s], cost per million output tokens
        [USD], the layout, a verdict and the suggestions; and the assumptions.
    """
    request = asked.request
    owned = _owned(asked)
    options: list[OwnedOption] = []
    runtimes: list[Assumption] = []
    workload = ""
    for have in owned:
        refused: str | None = None
        try:
            # a count that does not split the heads serves as replicas of one that does, every device used
            outcome = evaluate_serving(request, have.device, have.count, asked, every_device=True)
        except InputError as error:
            if error.field != "weights":
                raise
            # a W8A8 format this device has no peak for: sized as the weight-only format of the same bytes,
            # shown as not serving, with the changes that would
            refused = error.message
            outcome = dataclasses.replace(evaluate_serving(edited(request, {"weights": "int8"}), have.device, have.count,
                                                           asked, every_device=True), fits=False)
        result = outcome.served
        workload = f"serving {result.model}, {result.prompt_len} in / {result.output_len} out"
        # the runtime each set runs under (llama.cpp for GGUF), said once per distinct choice
        runtimes += [n for n in result.assumptions if n.name == "runtime" and n not in runtimes]
        suggestions = [] if outcome.fits else serving_suggestions(request, have, asked, outcome)
        options.append(OwnedOption(
            hardware=have.label, device=have.device.id, name=have.device.name, count=have.count, fits=outcome.fits,
            method="inference", precision=result.weights,
            # llama.cpp's layer split passes each token through the devices in turn: not tensor parallel
            layout={**_parallel_layout(have.count, request, result, have.device), "weights": result.weights, "kv_cache": result.kv_cache,
                    "batch": result.batch, "largest_batch": result.max_batch},
            memory_per_device=outcome.memory_per_device, device_memory=outcome.device_memory,
            decode_tokens_per_s=outcome.decode_tokens_per_s if outcome.fits else None, cost=outcome.cost if outcome.fits else None,
            verdict=_verdict(outcome, None, suggestions, refused), suggestions=suggestions))
    return OwnedResult(task="inference", workload=workload, options=options,
                       assumptions=_assumptions(owned, "inference") + runtimes)


def _parallel_layout(count: int, request: InferenceRequest, result: InferenceResult, device: Device) -> dict[str, int]:
    """How ``count`` devices serve: a layer split, or tensor parallel (``tp``) with its ``replicas`` where the count
    does not split the heads (:func:`sizer.passes.arithmetic.tensor_replicas`, the rule the answer used)."""
    if result.split == Split.LAYER and count > 1:  # llama.cpp's layer split passes each token through the devices in turn
        return {"layer_split": count}
    if result.scenario == "load":  # under load the answer's count is one replica's, its replicas sized for the load
        return {"tp": result.count}
    from sizer.hardware.nodes import node_layout
    from sizer.passes.arithmetic import tensor_replicas
    from sizer.serving.estimate import served_architecture

    replicas, tp = tensor_replicas(count, served_architecture(request)[0], node_layout(device)[0])
    return {"tp": tp, **({"replicas": replicas} if replicas > 1 else {})}


def _training_layout(result: TimeResult | MemoryResult) -> dict[str, Any]:
    if isinstance(result, MemoryResult):  # the memory question: no layout search, its stage and micro-batch
        return {"zero": result.zero, "recompute": result.recompute, "micro_batch": result.micro_batch}
    return result.layout.model_dump()


def _verdict(outcome: Outcome, meets: bool | None, suggestions: list[Suggestion], refused: str | None = None) -> str:
    if outcome.fits and meets is not False:
        return "fits" + (" and meets the deadline" if meets else "")
    problem = ("misses the deadline" if outcome.fits else "does NOT fit" if refused is None else
               f"cannot run these weights ({refused})")
    if suggestions:
        return f"{problem}; {len(suggestions)} change(s) below would work"
    return f"{problem}; no single change sizer tries makes it work"


def _assumptions(owned: tuple[Owned, ...], task: str) -> list[Assumption]:
    notes = [Assumption(name="hardware", value="; ".join(o.label for o in owned) + ": answered for these only",
                        source="given (have)")]
    if task != "memory":
        notes.append(Assumption(name="cost", value="rent where a cloud rents the device (price_basis rent); else the purchase "
                                "amortised over 3 years plus energy (price_basis buy)", source="sizer/formulas/tco.py"))
    if task == "training":
        notes.append(Assumption(name="layout", value="the engine's layout search on the given count (ZeRO stage, tensor "
                                "parallel inside a node, recomputation, largest micro-batch that fits)",
                                source="sizer/engine/search.py"))
    return notes
