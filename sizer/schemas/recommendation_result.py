"""The answer of ``sizer recommend`` (training), :func:`sizer.plan.recommend.recommend`'s: the devices ranked,
listed apart and rejected. Apart from the request (:mod:`sizer.schemas.recommendation`): the command line's
``--json`` and the HTTP service write the answer's fields straight from the core
(:func:`sizer.plan.recommend.recommend_json`), so a question answered that way never builds these models."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from sizer.choices import Objective
from sizer.formulas.host import HostResult
from sizer.formulas.redundancy import K1Result
from sizer.formulas.tco import CostRange, PriceUsed, Pricing
from sizer.results import Assumption, Model, PriceBasis, QuantityOut, RangeOut, Suggestion


class CostSummary(Model):
    """Both sides, each with its basis, and which one ranks the device (``price_basis``)."""

    rent: CostRange | None  # cloud on-demand rent only
    buy: CostRange | None  # amortised purchase plus energy
    price_basis: PriceBasis | None  # the side the ranking and the budget use; None: neither is known


class RankedDevice(Model):
    rank: int
    device: str
    name: str
    kind: str
    count: int
    sharding: str
    zero: int
    tp: int
    pp: int
    ep: int = 1  # expert-parallel ranks (a mixture of experts)
    recompute: str
    precision: str
    micro_batch: float
    training_time: RangeOut
    # with failures, checkpoints and restarts (sizer.engine.goodput); None where not asked and under one failure
    training_time_with_interruptions: RangeOut | None = None
    cost: CostSummary
    price_basis: PriceBasis | None  # as cost.price_basis, beside the cost
    price: PriceUsed | None = Field(None, description="the price behind the ranked cost: basis, term or purchase basis, "
                                    "what the offer buys, date and source")
    energy: RangeOut | None
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    fits: bool
    bound: str
    mfu: float
    pareto: bool


class RejectedDevice(Model):
    device: str
    name: str
    reason: str
    cause: Literal["precision", "batch", "memory", "deadline", "budget", "price"] = "memory"
    shortfall: float | None = Field(None, description="memory needed over the device's, or time over the deadline, at "
                                                      "the nearest option (above 1)")
    suggestions: list[Suggestion] = Field(default_factory=list, description="for the first few that do not fit or miss "
                                          "the deadline: the changes that would make them work, each evaluated again")


class RecommendResult(Model):
    workload: str
    objective: Objective
    purchase: PriceBasis
    pricing: Pricing = "rent"
    ranked: list[RankedDevice]
    unpriced: list[RankedDevice] = Field(default_factory=list,
                                         description="devices that serve but have no price of the asked basis, by time")
    ranked_total: int = Field(0, description="devices that serve within the constraints (ranked is the first top of them)")
    unpriced_total: int = Field(0, description="devices that serve but have no price of the asked basis")
    rejected: list[RejectedDevice]
    k1: K1Result | None
    host: HostResult | None
    assumptions: list[Assumption]
    deadline: QuantityOut | None = Field(None, description="the deadline asked, in the unit of training_time (a chart draws it)")
    budget: QuantityOut | None = Field(None, description="the budget asked [USD] (a chart draws it)")
    limited_by: str | None = Field(None, description="where no device is ranked: the limit that hid an answer "
                                                     "(max_devices, the price basis, the budget) and what to change")
