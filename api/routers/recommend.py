"""`POST /v1/recommend`: which device, how many, how long, what cost; or, with
``"task": "inference"``, the cheapest devices that serve a model at a target."""
from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Response
from pydantic import ConfigDict, RootModel

from sizer.facade import (
    HTTP_TOP,
    InferenceRecommendRequest,
    InferenceRecommendResult,
    InputError,
    OwnedResult,
    RecommendRequest,
    RecommendResult,
    every_bad_field,
    keep_search,
    pending_search,
    quick_question,
    ranking_seconds,
    recommend_json,
    recommend_model,
    recommend_serving_iterations,
    registered_cache,
    search_share,
)
from sizer.facade import recommend as answer

from ..deps import ERROR_RESPONSES, CatalogDep, finite, price, priced, run_estimate, search_once, served_from_builtins

router = APIRouter(prefix="/v1", tags=["recommendation"], responses=ERROR_RESPONSES)


class RecommendBody(RootModel[dict[str, Any]]):
    """A RecommendRequest (training), or an InferenceRecommendRequest when ``"task": "inference"``.

    The body is validated against the one model its ``task`` chooses, so that a bad field is
    reported against that model alone, as ``["body", field]`` (a plain union would report it
    against both)."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        *RecommendRequest.model_json_schema().get("examples", []),
        *InferenceRecommendRequest.model_json_schema().get("examples", [])]})


@router.post("/recommend", response_model=RecommendResult | InferenceRecommendResult | OwnedResult,
             summary="Rank every catalog device for a workload (training) or a served model (\"task\": \"inference\")")
async def recommend(body: RecommendBody, catalog: CatalogDep) -> RecommendResult | InferenceRecommendResult | OwnedResult:
    fields = cli_spellings(body.root)
    if not fields.get("have") and fields.get("task") != "inference":
        text = _canonical(fields)
        answered = _ranked_bytes.peek(text, fields, catalog)
        if answered is None:
            request, question, quick = _checked(fields, catalog)
            if not quick and question is not None and await _searched(request, question, catalog):
                request, question, quick = _checked(fields, catalog)  # its shape searched: most likely quick now
            if quick:  # about a millisecond: answered here, no hand-over to a worker thread and back
                answered = _ranked_bytes(text, fields, catalog, (request, question))
        if answered is not None:
            return Response(content=answered, media_type="application/json")
    return await run_estimate(_recommend, fields, catalog, work=_price(fields, catalog))


_TASKS = {"inference": "inference", "serve": "inference", "serving": "inference",
          "training": None, "train": None, "pretrain": None, "pre-train": None, "finetune": None, "fine-tune": None}


def cli_spellings(fields: dict[str, Any]) -> dict[str, Any]:
    """A body as the command line spells it, read as the API's own: ``"inference": true`` (the CLI's ``--inference``)
    for ``"task": "inference"``, a task named as people name it ("serve", "Inference", "training"), and option names
    with hyphens (``"max-devices"``) for the fields' (``max_devices``). A name given both ways, or a task and
    ``inference`` that disagree, is refused naming the field (422)."""
    named: dict[str, Any] = {}
    for key, value in fields.items():
        field = key.replace("-", "_") if isinstance(key, str) else key
        if field in named:
            raise InputError(field, value, f"one value: '{field}' is given twice (also as '{key}')")
        named[field] = value
    if "inference" in named:
        inference = named.pop("inference")
        if not isinstance(inference, bool):
            raise InputError("inference", inference, "true (the serving question, as --inference) or false")
        task = named.get("task")
        if task is not None and (_TASKS.get(str(task).lower()) == "inference") != inference:
            raise InputError("inference", inference, f"the same question as 'task' ({task!r}), or leave one out")
        if inference:
            named["task"] = "inference"
    task = named.get("task")
    if isinstance(task, str) and task.lower() in _TASKS:
        if _TASKS[task.lower()] is None:
            named.pop("task")
        else:
            named["task"] = _TASKS[task.lower()]
    return named


def _price(fields: dict, catalog) -> float:
    """CPU-seconds [s] the question costs (:mod:`sizer.work_price`): a ranking, by the catalog devices it ranks and
    the layouts up to ``max_devices``, or the ``have`` list's entries; a serving load refused over the service's
    budget of simulated iterations. Every bad field is refused at once (422) before the price is worked out."""
    serving = fields.get("task") == "inference"
    request = every_bad_field(recommend_model(inference=serving, have=bool(fields.get("have"))), _asked(fields))
    if fields.get("have"):
        return price(request)
    devices = sum(1 for d in catalog if d.kind in request.kinds)
    iterations = priced(request, recommend_serving_iterations(request, devices)) if serving else 0.0
    return ranking_seconds(request, devices, serving, iterations)


def _asked(fields: dict) -> dict:
    """A body's fields as its request model takes them: the serving request on each hardware set has no ``task``."""
    return {k: v for k, v in fields.items() if k != "task"} if fields.get("have") else fields


def _checked(fields: dict, catalog) -> tuple[RecommendRequest, Any, bool]:
    """A training question checked, its question, and whether it is quick: its layouts kept (or it is refused at
    once), so that it runs where it arrives. Handed to a thread, the engine's numpy passes release the GIL to the
    event loop and take it back some hundred times an answer, which costs more than the answer
    (benchmarks/README.md, threads and the GIL)."""
    request = every_bad_field(RecommendRequest, {"top": HTTP_TOP, **fields})  # bad fields: 422 at once, here, every one
    served_from_builtins(request)  # before anything is resolved: over HTTP no file on the server is read
    quick, question = quick_question(request, catalog)
    return request, question, quick


async def _searched(request: RecommendRequest, question: Any, catalog) -> bool:
    """Whether the new shape ``question`` waits for was searched (once for every question that waits for it, in
    shares over the worker processes) and kept; False where nothing was searched."""
    search = pending_search(question, catalog)
    if search is None:
        return False
    return await search_once(search.key, search_share, (search, catalog),
                             lambda shares: keep_search(search, catalog, shares))


def _recommend(fields: dict, catalog) -> RecommendResult | InferenceRecommendResult | OwnedResult | Response:
    serving, have = fields.get("task") == "inference", bool(fields.get("have"))
    if not serving and not have:  # the training ranking: rendered once per body, kept as bytes
        return Response(content=_ranked_bytes(_canonical(fields), fields, catalog), media_type="application/json")
    request = every_bad_field(recommend_model(inference=serving, have=have), _asked(fields))
    served_from_builtins(request)
    return finite(answer(request, catalog))  # the facade's one recommend: the request's type chooses the question


def _canonical(fields: dict) -> str:
    """A body's canonical text: the key its rendered answer is kept under."""
    return json.dumps(fields, sort_keys=True, default=str)


@registered_cache(key=lambda body, fields, catalog, checked=None: (body, catalog.key))
def _ranked_bytes(body: str, fields: dict, catalog, checked: tuple | None = None) -> bytes:
    """The answer to a training body (``fields``; ``body`` is their canonical text, the key), as JSON
    bytes: rendered once per body (a page or client asking again gets the same bytes; an error is
    never kept). Compact unless the body asks for more rows (``top``). ``checked``: the request and
    question :func:`_checked` made of the body."""
    request, question = checked or (every_bad_field(RecommendRequest, {"top": HTTP_TOP, **fields}), None)
    served_from_builtins(request)
    return recommend_json(request, catalog, question=question)
