"""Whether ``--emit`` names a tool that launches the command's kind of setup, checked before the answer is
computed (:func:`check_emit`); :mod:`sizer.plan.launch_answer` writes the command after it."""
from __future__ import annotations

from typing import Any

from sizer.errors import InputError
from sizer.launch.tool import Question, Tool
from sizer.launch.tools import check_fits

# The setups each command's answers may have, and the answer in words (an error says it).
_COMMAND_QUESTIONS = {
    "InferenceRequest": (frozenset({Question.SERVING, Question.LOCAL}), "a serving setup (sizer inference)"),
    "InferenceRecommendRequest": (frozenset({Question.SERVING, Question.LOCAL}), "a serving setup (sizer recommend --inference)"),
    "TimeRequest": (frozenset({Question.TRAINING, Question.FINETUNE}), "a training layout (sizer time)"),
    "PlanRequest": (frozenset({Question.TRAINING, Question.FINETUNE}), "a training layout (sizer plan)"),
    "MemoryRequest": (frozenset({Question.FINETUNE}), "a fine-tune (sizer memory)"),
}


def check_emit(request: Any) -> Tool | None:
    """The tool a request's ``emit`` names, where it launches the command's kind of setup (before the answer).

    Parameters
    ----------
    request : InferenceRequest, TimeRequest, PlanRequest or MemoryRequest
        The question.

    Returns
    -------
    Tool or None
        The tool; None where no ``emit`` was asked.

    Raises
    ------
    InputError
        Naming ``emit`` and the tools that launch the command's setups (``--emit vllm`` on ``sizer time``), or
        ``have`` (an answer per owned hardware set chooses no one setup).
    """
    name = getattr(request, "emit", None)
    if name is None:
        return None
    if getattr(request, "have", None):
        raise InputError("emit", name, "no emit with have (an answer per hardware set launches none): ask for one "
                                       "set with device and count")
    questions, what = _COMMAND_QUESTIONS[type(request).__name__]
    return check_fits(name, questions, what)
