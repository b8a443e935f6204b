"""Every fixed list of names a question chooses from, read from the one module that defines each.

The page (``api/static``) and ``GET /v1/choices`` list the device kinds, price bases, objectives, splits, weight
formats, KV-cache types, runtimes, length sets and launch tools from here, so that none of them is written out a
second time (``tests/test_vocabularies.py`` fails where one is). Nothing is defined here: each list is the defining
module's, in its order (the first is the request's default where the request has one).

>>> [c.value for c in choices().price_bases]
['rent', 'buy']
"""
from __future__ import annotations

from sizer.choices import CATALOG_KINDS, PRICE_BASES, PRICINGS, KvCache, Objective, ServingObjective, Split
from sizer.results import Model


class ChoiceOut(Model):
    """One name a field takes, and how it is listed to users."""

    value: str
    label: str


class Choices(Model):
    """The names each fixed list holds, in its defining module's order."""

    device_kinds: list[ChoiceOut]  # sizer.choices.CATALOG_KINDS: what a catalog entry is
    precisions: list[ChoiceOut]  # sizer.hardware.schema.PRECISIONS: the precisions a catalog states peaks for
    price_bases: list[ChoiceOut]  # sizer.choices.PRICE_BASES: rent or buy (a training request's purchase)
    pricings: list[ChoiceOut]  # sizer.choices.PRICINGS: rent, buy or any
    objectives: list[ChoiceOut]  # sizer.choices.Objective: what a training recommendation ranks by
    serving_objectives: list[ChoiceOut]  # sizer.choices.ServingObjective: what a serving one ranks by
    splits: list[ChoiceOut]  # sizer.choices.Split
    weights: list[ChoiceOut]  # sizer.runtimes.formats.WEIGHT_FORMATS (GGUF mixes from sizer.runtimes.gguf)
    kv_caches: list[ChoiceOut]  # sizer.choices.KvCache
    runtimes: list[ChoiceOut]  # sizer.runtimes' registry, one entry per runtime (aliases left out)
    lengths: list[ChoiceOut]  # sizer.simulator.traffic.LENGTH_DISTRIBUTIONS, labelled with their means
    emit: list[ChoiceOut]  # sizer.launch.tools: the tools that launch a serving or local answer


def _named(values: object) -> list[ChoiceOut]:
    return [ChoiceOut(value=str(v), label=str(v)) for v in values]  # type: ignore[attr-defined]


def choices() -> Choices:
    """Every fixed list of names, from the modules that define them.

    Returns
    -------
    Choices
        Each list's names (``value``) with the words a page lists them by (``label``: the name, or for a
        length set its source and means).
    """
    from sizer.hardware.schema import PRECISIONS
    from sizer.launch.tool import Question
    from sizer.launch.tools import tools_for
    from sizer.runtimes import registry
    from sizer.runtimes.formats import WEIGHT_FORMATS
    from sizer.simulator.traffic import LENGTH_DISTRIBUTIONS

    runtimes = list(dict.fromkeys(entry.name for entry in registry().values()))
    return Choices(
        device_kinds=_named(CATALOG_KINDS), precisions=_named(PRECISIONS), price_bases=_named(PRICE_BASES),
        pricings=_named(PRICINGS), objectives=_named(Objective), serving_objectives=_named(ServingObjective),
        splits=_named(Split), weights=_named(WEIGHT_FORMATS), kv_caches=_named(KvCache), runtimes=_named(runtimes),
        lengths=[ChoiceOut(value=name, label=d.label) for name, d in LENGTH_DISTRIBUTIONS.items()],
        emit=_named(tools_for(frozenset({Question.SERVING, Question.LOCAL}))))
