"""The notes every serving engine's command carries (the engine's refusals are checked before the emitter runs,
by :mod:`sizer.plan.launch_answer`, which asks :mod:`sizer.runtimes`)."""
from __future__ import annotations

from sizer.launch.setups import ServingSetup


def notes_for(setup: ServingSetup, tool_words: str) -> list[str]:
    """The notes every serving command carries: the model's id, a setup that does not fit, an MoE's layout.

    Parameters
    ----------
    setup : ServingSetup
        The answer's setup.
    tool_words : str
        The engine in words (``vLLM``).

    Returns
    -------
    list of str
        The notes.
    """
    notes = []
    if not setup.model_known:
        notes.append(f"{setup.model!r} is sizer's name for the model: put the checkpoint's Hugging Face id or local "
                     "path in its place")
    if not setup.fits:
        notes.append("the answer found this setup does NOT fit the device memory: the engine will refuse to start "
                     "or run out of KV cache")
    if setup.experts > 1 and not setup.expert_parallel:
        notes.append(f"a mixture of experts: the answer splits the experts tensor-parallel like the rest; {tool_words}'s "
                     "expert parallelism is another layout (sizer's --expert-parallel, --dp-attention), so it is left off")
    elif setup.experts > 1:
        notes.append("a mixture of experts with its experts split whole over the devices"
                     + (" and data-parallel attention" if setup.dp_attention else "") + ", as the answer estimated it")
    if setup.lengths_vary:
        notes.append(f"lengths came from a set or a trace: the context is the model's own {setup.max_model_len:,} "
                     "tokens, so that its longest request fits")
    return notes
