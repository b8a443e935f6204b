"""What a tool ``--emit`` writes for is: its name, the setups it launches, the version and page its option
names are read from, and its emitter (one :class:`Tool` per module of :mod:`sizer.launch`; the registry is
:mod:`sizer.launch.tools`)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Question(StrEnum):
    """What kind of setup a tool launches."""

    SERVING = "serving"  # a data-centre serving engine (sizer inference)
    LOCAL = "local"  # a desktop runtime (sizer inference with GGUF weights or --runtime llama.cpp)
    TRAINING = "training"  # a pre-training layout (sizer time, sizer plan)
    FINETUNE = "finetune"  # a fine-tune (sizer memory; time or plan of one)


@dataclass(frozen=True)
class Tool:
    """One tool ``--emit`` writes for.

    Parameters
    ----------
    name : str
        The name ``--emit`` takes (lower case).
    questions : frozenset of Question
        The setups it launches.
    version : str
        The tool and version whose documentation names the options (``vLLM 0.11``).
    documentation : str
        The page naming the options.
    options : frozenset of str
        Every option name the emitter may write, as that page names them.
    emit : callable
        ``emit(setup) -> Launch``: the setup's command or configuration.
    aliases : tuple of str
        Other spellings.
    runtime : str or None
        The runtime of :mod:`sizer.runtimes` the tool launches (``vllm``, ``sglang``, ``tensorrt-llm``, whose
        refusals and memory shares apply; ``llama.cpp`` for local answers); None for the training tools.
    """

    name: str
    questions: frozenset[Question]
    version: str
    documentation: str
    options: frozenset[str]
    emit: Callable[[Any], Any]
    aliases: tuple[str, ...] = field(default=())
    runtime: str | None = None
