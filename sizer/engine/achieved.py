"""Achieved, not only possible: what a competent team's run reaches against the best layout sizer finds.

With no layout given, the search answers what the fastest layout it can find would do: the best it knows
of, an upper bound (no recomputation where memory allows, deep interleaving, every micro-batch tried).
Published runs reach less: their teams pick a safe layout, run the framework's defaults, evaluate, log and
wait on stragglers. The headline of a no-layout answer is the bound's throughput times the factor that
published runs of the same device family achieved against their own bound:

.. math::

    X_{achieved} = a_g \\, X_{bound}, \\qquad
    a_g = \\operatorname{median}_{runs \\in g} \\frac{T_{bound}}{T_{measured}}

fitted per device family ``g`` (a generation of one vendor: the software of an era goes with its devices)
on the runs of ``../shared/data/modern-training-runs.csv`` (MLPerf Training v5.0/v5.1, Google's tpu-recipes)
and ``benchmarks/llm_training_runs.csv`` (Megatron-LM, NeMo, MosaicML) by ``benchmarks/modern_runs.py``,
which scores it leave-one-source-out (:func:`fit`: each source counts once; a family with few sources leans on
the pooled factor of all of them).
"""
from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

# Device families: a vendor's generation, matched on the catalog id or name (lower case), first match wins
FAMILY_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("nvidia-blackwell", ("b200", "b300", "gb200", "gb300", "blackwell", "rtx 50", "rtx pro")),
    ("nvidia-hopper", ("h100", "h200", "h800", "h20", "gh200", "hopper")),
    ("nvidia-ampere", ("a100", "a800", "a40", "a30", "a10", "a6000", "rtx 30", "ampere")),
    ("nvidia-older", ("v100", "p100", "t4", "k80", "titan", "volta")),
    ("amd-cdna3", ("mi300", "mi325")),
    ("amd-cdna4", ("mi350", "mi355")),
    ("google-tpu", ("tpu",)),
    ("cpu", ("xeon", "epyc", "cpu", "graviton", "grace cpu")),
)
FAMILIES = (*(name for name, _ in FAMILY_PATTERNS), "other")
PRIOR_SOURCES = 2  # pseudo-sources of the pooled factor each family's own sources are averaged with

# Fitted by benchmarks/modern_runs.py on all sources (T_bound / T_measured, median per family); the runs behind each
# factor and their sources are in benchmarks/results/modern_runs.md. Families without runs take POOLED.
FACTORS: dict[str, tuple[float, int]] = {
    "nvidia-blackwell": (0.979, 16), "nvidia-hopper": (0.956, 14), "nvidia-ampere": (0.989, 3),
    "amd-cdna4": (1.028, 5), "google-tpu": (1.033, 1),
}
POOLED: tuple[float, int] = (0.998, 31)  # the median over all 31 sources
SOURCE = ("median of the best-layout step over the measured step of published runs of the same device family: "
          "MLPerf Training v5.0/v5.1, Google tpu-recipes (../shared/data/modern-training-runs.csv), Megatron-LM, "
          "NeMo, MosaicML (benchmarks/llm_training_runs.csv); fitted and scored leave-one-source-out by "
          "benchmarks/modern_runs.py")


def family_of_name(name: str) -> str:
    """The device family of a catalog id or name.

    Parameters
    ----------
    name : str
        A catalog device id or display name.

    Returns
    -------
    str
        One of :data:`FAMILIES`.

    Examples
    --------
    >>> family_of_name("NVIDIA GB200 (per Blackwell GPU)")
    'nvidia-blackwell'
    >>> family_of_name("mi355x")
    'amd-cdna4'
    """
    low = name.lower()
    for family, patterns in FAMILY_PATTERNS:
        for pattern in patterns:  # a plain loop: half the time of any() over a generator (~200 names per catalog)
            if pattern in low:
                return family
    return "other"


def fit(runs: Iterable[tuple[str, str, float, float]]) -> tuple[dict[str, tuple[float, int]], float]:
    """Per family the median over its sources of each source's median bound / measured step, shrunk toward the
    pooled median of all sources by :data:`PRIOR_SOURCES` pseudo-sources.

    A source is one team's runs (a submitter's MLPerf results, one paper, one benchmark table): their runs share a
    software stack and habits, so each source counts once, and a family with few sources leans on the pooled factor.

    Parameters
    ----------
    runs : iterable of (str, str, float, float)
        Family, source, measured step [s], the best layout's predicted step [s].

    Returns
    -------
    tuple of (dict, float)
        Per family of :data:`FAMILIES` its factor [1] and the sources behind it; the pooled factor [1].
    """
    by_source: dict[tuple[str, str], list[float]] = {}
    for family, source, measured, bound in runs:
        by_source.setdefault((family, source), []).append(bound / measured)
    medians = {key: statistics.median(ratios) for key, ratios in by_source.items()}
    pooled = statistics.median(medians.values()) if medians else 1.0
    per_family: dict[str, list[float]] = {}
    for (family, _), value in medians.items():
        per_family.setdefault(family, []).append(value)
    factors = {}
    for family in FAMILIES:
        values = per_family.get(family, [])
        own = statistics.median(values) if values else pooled
        factors[family] = ((own * len(values) + pooled * PRIOR_SOURCES) / (len(values) + PRIOR_SOURCES), len(values))
    return factors, pooled


def factor_of_family(family: str) -> float:
    """The shipped factor of a family (:data:`FACTORS`), else the pooled one.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.

    Returns
    -------
    float
        Achieved over bound throughput [1].
    """
    found = FACTORS.get(family)
    return found[0] if found is not None else POOLED[0]


def achieved_factor(device_name: str) -> tuple[float, str, int]:
    """The factor a no-layout answer's headline takes for a device, at most 1 (the bound is never beaten), its
    family and the sources behind it.

    Parameters
    ----------
    device_name : str
        The catalog id and name.

    Returns
    -------
    tuple of (float, str, int)
        Achieved over bound throughput [1], the family, its sources [1].
    """
    family = family_of_name(device_name)
    factor, sources = FACTORS.get(family, POOLED)
    return min(1.0, factor), family, sources


def transfers(job_is_transformer: bool, layout_given: bool) -> bool:
    """Whether an answer's headline is the achieved time: a transformer (the runs it is fitted on) asked with
    no layout (a given layout is the user's own run, predicted as such).

    Parameters
    ----------
    job_is_transformer : bool
        The job has a transformer shape.
    layout_given : bool
        Any layout dimension was given.

    Returns
    -------
    bool
    """
    return job_is_transformer and not layout_given


Steps = TypeVar("Steps")


def at_achieved_pace(steps: Steps, factor: npt.ArrayLike) -> Steps:
    """Step times of many layouts at the achieved pace: over ``factor``, MFU (and HFU, where kept) times it.

    Parameters
    ----------
    steps : dataclass
        Frozen arrays ``step_low``, ``step_expected``, ``step_high`` [s] and ``mfu`` [1], ``hfu`` too where it has one
        (a :class:`~sizer.engine.summary.Summary`, a recommendation's :class:`~sizer.plan.layout_basis.Basis`).
    factor : array_like
        Achieved over bound throughput [1], at most 1, broadcast against the arrays (one per row or per device).

    Returns
    -------
    dataclass
        The same type, every step slower by the factor (never faster: the factor is at most 1).
    """
    f = np.asarray(factor, dtype=np.float64)
    old: Any = steps
    changes = {name: getattr(old, name) / f for name in ("step_low", "step_expected", "step_high")}
    changes.update({name: getattr(old, name) * f for name in ("mfu", "hfu") if hasattr(old, name)})
    paced: Steps = dataclasses.replace(old, **changes)
    return paced
