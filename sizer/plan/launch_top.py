"""``sizer recommend --inference --emit TOOL``: the launch command of the deployment the ranking puts first.

The ranking chooses a setup (device, count, formats) as ``sizer inference`` answers it for one; the command is
the one ``sizer inference`` writes for that setup (:func:`sizer.plan.launch_answer.with_launch`), so a ranked row
and the command run from it are one answer. Replicas are said in a note: each runs the same command.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from sizer.errors import InputError
from sizer.launch.tools import tool_named

if TYPE_CHECKING:
    from sizer.hardware.catalog import Catalog
    from sizer.launch.answer import Launch
    from sizer.schemas.serving import InferenceRecommendResult
    from sizer.schemas.serving_requests import InferenceRecommendRequest


def recommend_inference(request: InferenceRecommendRequest, catalog: Catalog | None = None) -> InferenceRecommendResult:
    """The serving ranking (:func:`sizer.serving.recommend_devices.recommend_inference`), with the top row's launch
    command where ``emit`` names a tool.

    Parameters
    ----------
    request : InferenceRecommendRequest
        The model, its targets and, in ``emit``, the tool to launch the first row with.
    catalog : Catalog or None
        The devices to rank (default: the built-in catalog).

    Returns
    -------
    InferenceRecommendResult
        The ranking; with ``emit``, its ``launch`` field is the first row's command in that tool.

    Raises
    ------
    InputError
        Naming ``emit``: a tool that launches no serving setup, or a ranking with no row to launch.
    """
    from sizer.hardware.catalog import load_catalog
    from sizer.serving.recommend_devices import recommend_inference as ranked

    if request.emit is not None:
        tool_named(request.emit)  # an unknown tool is refused before the ranking is computed
    catalog = catalog if catalog is not None else load_catalog()
    result = ranked(request, catalog)
    if request.emit is None:
        return result
    if not result.ranked:
        raise InputError("emit", request.emit, "a ranking with a first row to launch: none serves at these targets")
    top = result.ranked[0]
    # offline rows carry their batch (the concurrent sequences the command must admit); rows under load leave it to
    # the runtime's scheduler, as the load search assumed
    launch = _launch_of_row(request, top.device, top.count, top.weights, top.kv_cache, getattr(top, "batch", None),
                            catalog)
    notes = list(launch.notes)
    if top.replicas > 1:
        notes.insert(0, f"the first row runs {top.replicas} replicas: start this command on each replica's "
                        f"{top.count} device(s) behind a load balancer")
    return result.model_copy(update={"launch": launch.model_copy(update={"notes": notes})})


def _launch_of_row(request: InferenceRecommendRequest, device: str, count: int, weights: str, kv_cache: str,
                   batch: int | None, catalog: Catalog) -> Launch:
    """The command ``sizer inference`` writes for one ranked row's setup."""
    from sizer.asked import on_catalog
    from sizer.plan.launch_answer import with_launch
    from sizer.schemas.serving_requests import InferenceRequest
    from sizer.serving.estimate import serve

    fields = {"model": request.model, "params": request.params, "device": device, "count": count,
              "weights": weights, "kv_cache": kv_cache, "prompt_len": request.prompt_len,
              "output_len": request.output_len, "runtime": request.runtime, "batch": batch, "emit": request.emit}
    served = InferenceRequest(**{k: v for k, v in fields.items() if v is not None})
    asked = on_catalog(served, catalog)  # a ranked row's setup, asked as its own question (the row's device name)
    answer = with_launch(asked, serve(asked))
    assert answer.launch is not None  # with_launch writes one wherever emit is given, or refuses
    return answer.launch
