"""An answer with its ``launch`` field (``--emit``): its setup read (:mod:`sizer.plan.launch_readers`), checked
against the tool and written by it (:mod:`sizer.launch`).

Lives in ``sizer.plan``, beside the answers it reads, because :mod:`sizer.launch` is imported by the request and
result modules (the ``emit`` and ``launch`` fields) and so imports none of them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from sizer.choices import Method
from sizer.errors import InputError
from sizer.launch.answer import Launch
from sizer.launch.dispatch import check_emit
from sizer.launch.setups import ServingSetup
from sizer.launch.tool import Question, Tool
from sizer.launch.tools import tools_for
from sizer.runtimes import Runtime, runtime
from sizer.runtimes.serving_runtimes import format_refusal

if TYPE_CHECKING:
    from sizer.asked import Asked

Answer = TypeVar("Answer")


def with_launch(asked: Asked[Any], result: Answer) -> Answer:
    """``result`` with its ``launch`` field: the command of its setup in the tool the request names.

    Parameters
    ----------
    asked : Asked of InferenceRequest, TimeRequest, PlanRequest or MemoryRequest
        The question on the catalog the answer was computed with (its ``emit`` names the tool; None leaves the
        result as it is), its device found there (:func:`sizer.asked.on_catalog`).
    result : InferenceResult, TimeResult, PlanResult or MemoryResult
        Its answer.

    Returns
    -------
    same type as ``result``
        The answer with ``launch`` set.

    Raises
    ------
    InputError
        Naming ``emit``: a tool that does not launch this answer's setup (llama.cpp for a non-GGUF answer, vLLM
        for a llama.cpp one), or cannot run it (the reason said).
    """
    request = asked.request
    tool = check_emit(request)
    if tool is None:
        return result
    kind = type(request).__name__
    launch: Launch
    if kind == "InferenceRequest":
        launch = _serving(tool, asked, result)
    elif kind == "MemoryRequest":
        from sizer.plan.launch_readers import memory_setup

        launch = tool.emit(memory_setup(request, result, asked))  # type: ignore[arg-type]
    else:
        launch = _training(tool, asked, result)
    return result.model_copy(update={"launch": launch})  # type: ignore[attr-defined,no-any-return]


def _serving(tool: Tool, asked: Asked[Any], result: Any) -> Launch:
    """A serving answer's command: llama.cpp's where a local runtime answered, else a serving engine's."""
    request = asked.request
    from sizer.plan.launch_readers import local_runtime_of, local_setup, serving_setup

    # under load the serving engine ran the replicas, whatever local runtime the static answer would take
    local = local_runtime_of(request, asked) if result.scenario != "load" else None
    question = Question.LOCAL if local is not None else Question.SERVING
    words = (f"a local answer under {local.name}" if local is not None else "a data-centre serving answer")
    if local is not None:
        hint = " (give runtime vllm, or non-GGUF weights, for a serving engine)"
    elif result.scenario == "load":
        hint = " (under load a serving engine runs the replicas; ask without rate or users for llama.cpp)"
    else:
        hint = " (give runtime llama.cpp, or GGUF weights such as q4_k_m, for llama.cpp)"
    if question not in tool.questions:
        raise InputError("emit", request.emit, f"a tool that launches {words}: "
                                               f"{', '.join(tools_for(frozenset({question})))}{hint}")
    if local is not None:
        if tool.runtime is None or runtime(tool.runtime) != local:  # the tool launches another local runtime
            raise InputError("emit", request.emit, f"no tool yet for {local.name}: --emit writes llama.cpp's "
                                                    "llama-server for local answers")
        return tool.emit(local_setup(request, result, asked, local))  # type: ignore[no-any-return]
    assert tool.runtime is not None  # every serving tool is a runtime of sizer.runtimes
    engine = runtime(tool.runtime)
    setup = serving_setup(request, result, asked, engine)
    _check_engine(tool.name, engine, setup)
    return tool.emit(setup)  # type: ignore[no-any-return]


def _check_engine(name: str, engine: Runtime, setup: ServingSetup) -> None:
    """Refuse, naming ``emit``, a setup the engine cannot run (a device vendor, a weight format, a KV type: the
    engine's own refusal in :mod:`sizer.runtimes`) or an answer sized for another engine."""
    if setup.engine is not None and setup.engine != engine.name:
        raise InputError("emit", name, f"{setup.engine} (the runtime this answer was sized for, with its memory shares "
                                       f"and scheduler), or ask again with --runtime {name}")
    why = (engine.refusal(device_kind=setup.device.runtime_kind, vendor=setup.device.vendor, kv_cache=setup.kv_cache)
           or format_refusal(engine, setup.weights, setup.device.architecture))
    if why is not None:
        raise InputError("emit", name, f"a tool that runs this setup: {why}")


def _training(tool: Tool, asked: Asked[Any], result: Any) -> Launch:
    """A training layout's command (``time``: its layout; ``plan``: its fastest layout)."""
    request = asked.request
    from sizer.plan.launch_readers import plan_setup, time_setup

    if type(request).__name__ == "PlanRequest":
        if not result.layouts:
            raise InputError("emit", request.emit, "an answer with a layout: none was found to run")
        setup = plan_setup(request, result.layouts[0], result.precision, asked)
    else:
        setup = time_setup(request, result, asked)
    question = Question.TRAINING if setup.method is Method.FULL else Question.FINETUNE
    if question not in tool.questions:
        words = "a training layout" if question is Question.TRAINING else f"a {setup.method.value} fine-tune"
        raise InputError("emit", request.emit, f"a tool that launches {words}: {', '.join(tools_for(frozenset({question})))}")
    return tool.emit(setup)  # type: ignore[no-any-return]

