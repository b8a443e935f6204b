"""What a job takes of the framework its request names: the layouts the search keeps to, the recipe's name for
the answer's recipe line and the assumption that cites it; a given layout the framework does not run is refused
naming the field.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from sizer.errors import InputError
from sizer.frameworks import DEFAULT_LAYOUTS, Layouts, assumption, framework
from sizer.results import Assumption

LAYOUT = ("tp", "pp", "cp", "ep", "zero")  # the layout fields a framework may not run


class Named(NamedTuple):  # a record: a NamedTuple costs a fifth of a frozen dataclass's start-up (Python 3.11)
    """A request's framework as the job reads it."""

    layouts: Layouts = DEFAULT_LAYOUTS
    recipe_name: str = ""  # "torchtune full_finetune_single_device"; empty with no framework or no recipe
    assumptions: tuple[Assumption, ...] = ()


def framework_of(request: Any) -> Named:
    """The framework a training request names, checked against the layout fields it gives.

    Parameters
    ----------
    request : WorkloadRequest
        A training request (``framework``, ``method`` and, where its type has them, ``count``, ``tp``, ``pp``,
        ``cp``, ``ep``, ``zero``).

    Returns
    -------
    Named
        Its layouts, its recipe's name and the assumption citing the recipe; the defaults with no framework.

    Raises
    ------
    InputError
        On the first layout field the framework does not run (``--framework unsloth --tp 2``).
    """
    name = getattr(request, "framework", None)
    if name is None:
        return Named()
    spec = framework(name)
    given = {field: getattr(request, field, None) for field in LAYOUT}
    for field in LAYOUT:  # the first field it does not run, alone (the ZeRO stage beside the given pipeline)
        alone = {**dict.fromkeys(LAYOUT), field: given[field], **({"pp": given["pp"]} if field == "zero" else {})}
        why = None if given[field] is None else spec.layouts.refusal(**alone)
        if why is not None:
            raise InputError(field, given[field], f"{why} (--framework {spec.name}: {spec.layouts.source})")
    count = getattr(request, "count", 1)
    recipe = spec.recipe(request.method, count if isinstance(count, int) else 1)
    return Named(layouts=spec.layouts, recipe_name=f"{spec.name} {recipe.name}" if recipe else spec.name,
                 assumptions=(assumption(name, request.method, count if isinstance(count, int) else 1),))


def runs_it(tp: int, pp: int, cp: int, ep: int, zero: int) -> Assumption:
    """With no framework named: the framework that runs the layout chosen, said in the answer.

    Parameters
    ----------
    tp, pp, cp, ep, zero : int
        The layout chosen [1].

    Returns
    -------
    Assumption
        ``framework``: the one that runs it (or that none does, for a layout given so), with its layouts' source.
    """
    from sizer.frameworks import running

    name = running(tp, pp, cp, ep, zero)
    if name is None:
        return Assumption(name="framework", value=f"none named; no framework runs ZeRO {zero} with {pp} pipeline "
                          "stages (given so)", source=DEFAULT_LAYOUTS.source, verified=False)
    spec = framework(name)
    return Assumption(name="framework", value=f"none named; {spec.name} runs this layout ({spec.summary}); give "
                      "--framework for another's recipe and layouts", source=spec.layouts.source, verified=spec.verified)
