"""Runtimes as named parts of the model: what runs a model, and what that changes in an answer.

A runtime (llama.cpp, MLX on a desk; vLLM, SGLang, TensorRT-LLM in a data centre) is one
frozen :class:`Runtime` each, kept in one registry, as fsspec keeps its protocols: everything else
asks the registry by name (:func:`runtime`) or for the ones that can run a question
(:func:`runtimes_for`), and a runtime that cannot run a combination says why
(:meth:`Runtime.refusal`) instead of an ``if runtime == ...`` branch elsewhere.

The descriptions live in one module per family: :mod:`sizer.runtimes.local_runtimes` (desktop runtimes) and
:mod:`sizer.runtimes.serving_runtimes` (data-centre serving engines). Each module's ``RUNTIMES`` tuple is
read here once; a runtime's ``profile`` is that family's own frozen type (kernel efficiencies per
quantisation type, scheduler defaults ...), with the rows it was fitted on.
"""
from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from sizer.choices import entry_named
from sizer.errors import InputError
from sizer.runtimes.runtime import Purpose, Runtime

__all__ = ["Purpose", "Runtime", "registry", "runtime", "runtimes_for"]


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _registry() -> dict[str, Runtime]:
    from sizer.runtimes import local_runtimes, serving_runtimes

    known: dict[str, Runtime] = {}
    for entry in (*local_runtimes.RUNTIMES, *serving_runtimes.RUNTIMES):
        for spelling in (entry.name, *entry.aliases):
            if _key(spelling) in known:
                raise ValueError(f"two runtimes are named {spelling!r}")
            known[_key(spelling)] = entry
    return known


def registry() -> dict[str, Runtime]:
    """Every runtime by each of its spellings (built per call: 3 us, not worth a cache; docs/caching.md).

    Returns
    -------
    dict of str to Runtime
        Each runtime under its name and its aliases, in a normalised spelling.
    """
    return _registry()


def runtime(name: "str | Runtime", field: str = "runtime") -> Runtime:
    """The runtime named ``name``, or InputError naming the field and the close matches.

    Parameters
    ----------
    name : str or Runtime
        A runtime's name or alias as a user typed it (``"llama.cpp"``, ``"trtllm"``); a Runtime is returned as it is.
    field : str, default ``"runtime"``
        The input field, named in an error.

    Returns
    -------
    Runtime
        The runtime's description.

    Raises
    ------
    InputError
        An unknown name; the message lists the runtimes and close spellings.
    """
    if isinstance(name, Runtime):
        return name
    known = registry()
    if isinstance(name, str) and _key(name) in known:
        return known[_key(name)]
    names = sorted({entry.name for entry in known.values()})
    from sizer.runtimes.local_runtimes import NOT_MODELLED
    if isinstance(name, str) and _key(name) in NOT_MODELLED:
        raise InputError(field, name, f"one of {', '.join(names)}: {NOT_MODELLED[_key(name)]}")
    close = difflib.get_close_matches(_key(str(name)), list(known), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise InputError(field, name, f"one of {', '.join(names) or 'no runtime yet'}{hint}")


def runtimes_for(purpose: Purpose) -> tuple[Runtime, ...]:
    """The runtimes of one purpose, each once, in the order their module lists them.

    Parameters
    ----------
    purpose : Purpose
        Local or serving.

    Returns
    -------
    tuple of Runtime
        The runtimes of that purpose.
    """
    seen: dict[str, Runtime] = {}
    for entry in registry().values():
        if entry.purpose is purpose:
            seen.setdefault(entry.name, entry)
    return tuple(seen.values())


# A request's runtime: any name or alias of the registry, found where the request is built; the field holds the
# Runtime (written as its canonical name).
if TYPE_CHECKING:
    RuntimeName = Runtime
else:
    RuntimeName = entry_named(Runtime, runtime)
