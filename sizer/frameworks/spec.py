"""What a framework is: its layouts and its recipes, each a frozen description read from ``frameworks.yaml``.

A framework is no second memory or time model: each recipe is a set of the request's existing knobs (the
training-state recipe of :mod:`sizer.engine.recipe`, the recomputation and the ZeRO stage) and its layouts a
restriction of the layout search (:mod:`sizer.engine.search`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sizer.choices import Method

# the request fields a recipe may set (sizer.schemas.base.WorkloadRequest and the layout fields)
KNOBS = ("state_precision", "optimizer", "optimizer_in_backward", "offload_params", "offload_activations", "loss",
         "recompute", "zero")
DEVICES = ("single", "multi", "any")


@dataclass(frozen=True)
class Layouts:
    """The layouts a framework runs (the default: every layout but ZeRO-3 with pipeline stages, which no
    framework runs: DeepSpeed refuses ZeRO-2/3 with its pipeline engine, Megatron's distributed optimizer is
    ZeRO-1, torchtitan's FSDP keeps the weights gathered under a pipeline)."""

    tp: bool = True
    pp: bool = True
    cp: bool = True
    ep: bool = True
    zero: tuple[int, ...] = (0, 1, 2, 3)  # stages run with more than one data-parallel rank
    zero_with_pp: int | None = 2  # the highest stage run together with pipeline stages; None: no pipeline
    source: str = "no framework runs ZeRO-3 with pipeline parallelism (DeepSpeed pipeline tutorial; Megatron-LM " \
                  "distrib_optimizer.md; torchtitan docs/fsdp.md)"

    def refusal(self, tp: int | None, pp: int | None, cp: int | None, ep: int | None, zero: int | None) -> str | None:
        """Why a given layout is not one the framework runs, or None where it is.

        Parameters
        ----------
        tp, pp, cp, ep, zero : int or None
            The layout fields given [1]; None where not given.

        Returns
        -------
        str or None
            The first dimension it does not run, in words.
        """
        for name, size in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep)):
            if size is not None and size > 1 and not getattr(self, name):
                return f"{name} 1: it runs no {WORDS[name]}"
        if zero is not None and zero > 0 and zero not in self.zero:
            return f"a ZeRO stage it runs ({', '.join(map(str, self.zero))})"
        if pp is not None and pp > 1 and zero is not None and self.zero_with_pp is not None and zero > self.zero_with_pp:
            return f"ZeRO {self.zero_with_pp} or less with pipeline stages"
        return None


WORDS = {"tp": "tensor parallelism", "pp": "pipeline parallelism", "cp": "context parallelism",
         "ep": "expert parallelism"}


@dataclass(frozen=True)
class FrameworkRecipe:
    """One documented configuration of a framework: the knobs it sets and where they were read."""

    name: str
    methods: frozenset[Method]
    devices: str  # single, multi or any
    knobs: dict[str, Any] = field(hash=False)
    source: str

    def applies(self, method: Method, count: int) -> bool:
        """Whether this recipe is the framework's for ``method`` on ``count`` devices.

        Parameters
        ----------
        method : Method
            The fine-tuning method.
        count : int
            Devices [1]: one takes a single-device recipe, more a distributed one.

        Returns
        -------
        bool
            True where the recipe documents the method for that many devices.
        """
        wanted = "single" if count <= 1 else "multi"
        return method in self.methods and self.devices in (wanted, "any")


@dataclass(frozen=True)
class FrameworkSpec:
    """A framework: its name, one line, its layouts and its recipes, and whether the figures were re-read."""

    name: str
    summary: str
    source: str
    verified: bool
    layouts: Layouts
    recipes: tuple[FrameworkRecipe, ...]

    def recipe(self, method: Method, count: int) -> FrameworkRecipe | None:
        """The framework's recipe for ``method`` on ``count`` devices.

        Parameters
        ----------
        method : Method
            The fine-tuning method.
        count : int
            Devices [1].

        Returns
        -------
        FrameworkRecipe or None
            The first recipe that applies; None where the framework documents none.
        """
        return next((r for r in self.recipes if r.applies(method, count)), None)
