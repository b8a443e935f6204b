"""The tools ``--emit`` writes for, as one registry (as :mod:`sizer.runtimes` keeps runtimes): a name users
type, the questions it answers, the version and page its option names are read from, and its emitter.

>>> tool_named("vLLM").name, tool_named("trt-llm").name, tool_named("llamacpp").name
('vllm', 'trtllm', 'llama.cpp')
"""
from __future__ import annotations

import difflib

from sizer.errors import InputError
from sizer.launch.tool import Question, Tool


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def registry() -> dict[str, Tool]:
    """Every tool under its name and aliases (a normalised spelling), in the order of :data:`ORDER`.

    Returns
    -------
    dict of str to Tool
        The tools.
    """
    from sizer.launch import axolotl, deepspeed, llama_cpp, megatron, nemo, sglang, torchtitan, torchtune, trtllm, unsloth, vllm

    known: dict[str, Tool] = {}
    for module in (vllm, sglang, trtllm, llama_cpp, megatron, nemo, torchtitan, deepspeed, torchtune, axolotl, unsloth):
        tool: Tool = module.TOOL
        for spelling in (tool.name, *tool.aliases):
            known[_key(spelling)] = tool
    return known


def tools() -> tuple[Tool, ...]:
    """Every tool once.

    Returns
    -------
    tuple of Tool
        The tools, serving first, then local, training and fine-tuning.
    """
    return tuple({t.name: t for t in registry().values()}.values())


def tool_named(name: object, field: str = "emit") -> Tool:
    """The tool named ``name``, or InputError naming the field with every tool and close spellings.

    Parameters
    ----------
    name : object
        What the user typed (``"vllm"``, ``"llama.cpp"``, ``"TensorRT-LLM"`` ...).
    field : str
        The request field, named in an error.

    Returns
    -------
    Tool
        The tool.
    """
    known = registry()
    if isinstance(name, str) and _key(name) in known:
        return known[_key(name)]
    close = difflib.get_close_matches(_key(str(name)), list(known), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise InputError(field, name, f"one of {', '.join(t.name for t in tools())}{hint}")


def tools_for(questions: frozenset[Question]) -> list[str]:
    """The names of the tools that launch any of ``questions``, in registry order.

    Parameters
    ----------
    questions : frozenset of Question
        The setups an answer has.

    Returns
    -------
    list of str
        The tools' names.
    """
    return [t.name for t in tools() if t.questions & questions]


def check_fits(name: object, questions: frozenset[Question], what: str) -> Tool:
    """The tool named ``name`` where it launches one of ``questions``; else InputError naming ``emit`` with the
    tools that do.

    Parameters
    ----------
    name : object
        The tool's name as given.
    questions : frozenset of Question
        The setups the answer has.
    what : str
        The answer, in words (``a training layout (sizer time)``), said in the error.

    Returns
    -------
    Tool
        The tool.
    """
    tool = tool_named(name)
    if not tool.questions & questions:
        raise InputError("emit", name, f"a tool that launches {what}: {', '.join(tools_for(questions))} "
                                       f"({tool.name} launches {' or '.join(q.value for q in sorted(tool.questions))} setups)")
    return tool
