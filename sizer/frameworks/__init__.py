"""Training frameworks as named parts of the model (``--framework``), like runtimes for serving.

The one registry: :func:`framework` reads ``frameworks.yaml`` (every recipe with the URL of the configuration it
comes from), :func:`recipe_fields` turns a framework's recipe into the request fields it sets (only those the
user left at their default), :func:`running` names the framework that runs a layout chosen without one.
**Invariant**: no ``if framework == ...`` outside this folder; a framework is knobs the engine already has.

>>> spec = framework(Framework.TORCHTUNE)
>>> spec.recipe(Method.FULL, 1).name
'full_finetune_single_device'
>>> sorted(spec.recipe(Method.FULL, 1).knobs.items())[:3]
[('loss', 'chunked'), ('optimizer', 'paged-adamw-8bit'), ('optimizer_in_backward', True)]
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from sizer.choices import Method, parse_choice
from sizer.datafile import load_yaml
from sizer.errors import CatalogError
from sizer.frameworks.framework_name import Framework
from sizer.frameworks.spec import DEVICES, KNOBS, FrameworkRecipe, FrameworkSpec, Layouts
from sizer.memo import registered_cache
from sizer.results import Assumption

CATALOG = Path(__file__).with_name("frameworks.yaml")
DEFAULT_LAYOUTS = Layouts()

__all__ = ["Framework", "FrameworkRecipe", "FrameworkSpec", "Layouts", "framework", "recipe_fields", "running",
           "DEFAULT_LAYOUTS", "assumption"]


def _layouts(entry: dict[str, Any]) -> Layouts:
    return Layouts(tp=bool(entry["tp"]), pp=bool(entry["pp"]), cp=bool(entry["cp"]), ep=bool(entry["ep"]),
                   zero=tuple(int(z) for z in entry["zero"]),
                   zero_with_pp=None if entry.get("zero_with_pp") is None else int(entry["zero_with_pp"]),
                   source=str(entry["source"]))


def _recipe(name: str, entry: dict[str, Any]) -> FrameworkRecipe:
    unknown = set(entry["knobs"]) - set(KNOBS)
    if unknown or entry["devices"] not in DEVICES:
        raise CatalogError(f"{CATALOG.name}: {name} recipe {entry['name']!r}: knobs {sorted(unknown)} or devices "
                           f"{entry['devices']!r} unknown (knobs: {', '.join(KNOBS)}; devices: {', '.join(DEVICES)})")
    return FrameworkRecipe(name=str(entry["name"]), methods=frozenset(Method(m) for m in entry["methods"]),
                           devices=str(entry["devices"]), knobs=dict(entry["knobs"]), source=str(entry["source"]))


@registered_cache()
def _catalog() -> dict[Framework, FrameworkSpec]:
    data: dict[str, Any] = load_yaml(CATALOG, "frameworks")
    specs = {}
    for name, entry in data.items():
        key = Framework(name)
        specs[key] = FrameworkSpec(name=name, summary=str(entry["summary"]), source=str(entry["source"]),
                                   verified=bool(entry.get("verified", False)), layouts=_layouts(entry["layouts"]),
                                   recipes=tuple(_recipe(name, r) for r in entry["recipes"]))
    missing = set(Framework) - set(specs)
    if missing:
        raise CatalogError(f"{CATALOG.name}: no entry for {', '.join(sorted(missing))}")
    return specs


def framework(name: Framework | str) -> FrameworkSpec:
    """The framework named (any case, ``-`` or ``_``), or InputError on ``framework`` listing the names.

    Parameters
    ----------
    name : Framework or str
        The framework.

    Returns
    -------
    FrameworkSpec
        Its layouts and recipes.
    """
    return _catalog()[parse_choice(Framework, name, "framework")]


def recipe_fields(name: Framework, method: Method, count: int, chosen: set[str], present: set[str]) -> dict[str, Any]:
    """The request fields a framework's recipe sets: its knobs, less those the user chose and those the request
    type does not have (a recommendation has no ZeRO field).

    Parameters
    ----------
    name : Framework
        The framework.
    method : Method
        The fine-tuning method (full, lora, qlora): frameworks document one recipe per method.
    count : int
        Devices [1]: single-device and distributed recipes differ (torchtune's optimizer step in backward).
    chosen : set of str
        The fields the user gave.
    present : set of str
        The fields of the request type.

    Returns
    -------
    dict
        Field name -> value as the request takes it (``"paged-adamw-8bit"``, ``True``, ``3`` ...).
    """
    recipe = framework(name).recipe(method, count)
    if recipe is None:
        return {}
    return {k: v for k, v in recipe.knobs.items() if k not in chosen and k in present}


def assumption(name: Framework, method: Method, count: int) -> Assumption:
    """The framework and its recipe, said in the answer with the configuration it was read from.

    Parameters
    ----------
    name : Framework
        The framework.
    method : Method
        The fine-tuning method.
    count : int
        Devices [1].

    Returns
    -------
    Assumption
        ``framework``: its recipe's name and knobs, with the recipe's URL.
    """
    spec = framework(name)
    recipe = spec.recipe(method, count)
    if recipe is None:
        return Assumption(name="framework", value=f"{spec.name}: no documented {method.value} recipe; the request's "
                          "own recipe", source=spec.source, verified=spec.verified)
    knobs = ", ".join(f"{k.replace('_', ' ')} {v}" if not isinstance(v, bool) else k.replace("_", " ")
                      for k, v in recipe.knobs.items() if v is not False)
    return Assumption(name="framework", value=f"{spec.name} {recipe.name}: {knobs} (where not given)",
                      source=recipe.source, verified=spec.verified)


def running(tp: int, pp: int, cp: int, ep: int, zero: int) -> Framework | None:
    """A framework that runs a layout chosen with none named: the first of PyTorch FSDP (replicas or ZeRO 2-3
    alone), Megatron-LM (tensor, pipeline, context and expert parallelism with ZeRO 0-1), DeepSpeed and torchtitan
    (pipelines with ZeRO-2, FSDP with tensor or context parallelism) that runs it.

    Parameters
    ----------
    tp, pp, cp, ep, zero : int
        The layout [1].

    Returns
    -------
    Framework or None
        The first framework whose layouts hold it; None where none does (ZeRO-3 with pipeline stages).
    """
    order = (Framework.FSDP, Framework.MEGATRON, Framework.DEEPSPEED, Framework.TORCHTITAN)
    for name in order:
        if framework(name).layouts.refusal(tp, pp, cp, ep, zero if zero > 0 else None) is None:
            return name
    return None
