"""A named framework's recipe filled into a request: the fields the user left at their default take the recipe's
values (:func:`filled`), so that every command (time, memory, plan, recommend, ``--have``) and the HTTP service
read one request, and nothing downstream knows frameworks but through the knobs it already reads.
"""
from __future__ import annotations

from typing import Any

from sizer.choices import Loss, Method, Optimizer, Precision, Recompute, parse_choice
from sizer.frameworks.framework_name import Framework

CHOICES: dict[str, Any] = {"state_precision": Precision, "optimizer": Optimizer, "loss": Loss, "recompute": Recompute}
# a layout field a command sends at its own default is no choice (the CLI sends memory's recompute "none")
LAYOUT_DEFAULTS = {"recompute": (None, Recompute.NONE), "zero": (None, 0)}
PAGED = ("paged-adamw", "paged-adamw-8bit")


def filled(framework: Framework, method: Method, count: int, given: dict[str, Any], present: set[str]) -> dict[str, Any]:
    """The fields a framework's recipe sets on a request, parsed into the members the request holds.

    Parameters
    ----------
    framework : Framework
        The framework named.
    method : Method
        The request's method.
    count : int
        The request's device count [1] (1 where it has none: a recommendation searches counts).
    given : dict
        The fields the user set, by name, with their values.
    present : set of str
        The request type's fields.

    Returns
    -------
    dict
        Field name -> value (an enum member, a bool or an int), for fields the user did not choose.
    """
    from sizer.frameworks import recipe_fields

    chosen = {k for k, v in given.items() if not (k in LAYOUT_DEFAULTS and v in LAYOUT_DEFAULTS[k])}
    knobs = recipe_fields(framework, method, count, chosen, present)
    if given.get("offload") or given.get("offload_params"):
        # offload runs the step on the CPU: no step in the backward pass, no paged states (sizer.engine.recipe)
        knobs.pop("optimizer_in_backward", None)
        if knobs.get("optimizer") in PAGED:
            knobs.pop("optimizer")
    return {k: parse_choice(CHOICES[k], v, k) if k in CHOICES else v for k, v in knobs.items()}
