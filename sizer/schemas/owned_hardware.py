"""The answer for the hardware one has (``--have``): one option per hardware set
(:mod:`sizer.plan.owned_answer`); the requests are the training and serving ones, with ``have``."""
from __future__ import annotations

from typing import Any, Literal

from sizer.results import Assumption, CostOut, Model, QuantityOut, RangeOut, Suggestion


class OwnedOption(Model):
    """The answer for one hardware set."""

    hardware: str
    device: str
    name: str
    count: int
    fits: bool
    meets_deadline: bool | None = None
    method: str
    precision: str
    layout: dict[str, Any]  # tp, pp, dp, ZeRO, recompute, micro-batch x accumulation (training); weights, KV, batch (serving)
    memory_per_device: QuantityOut
    device_memory: QuantityOut | None
    training_time: RangeOut | None = None
    decode_tokens_per_s: RangeOut | None = None
    cost: CostOut | None = None
    verdict: str
    suggestions: list[Suggestion]
    chosen: dict[str, Any] = {}  # the request fields sizer chose on this hardware (method, precision, recipe)
    recipe: str | None = None  # the training recipe as a line for a trainer's configuration


class OwnedResult(Model):
    """``have``: answers for the user's own hardware only, one per hardware set."""

    task: Literal["training", "memory", "inference"]
    workload: str
    options: list[OwnedOption]
    assumptions: list[Assumption]
