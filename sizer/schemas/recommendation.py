"""Which device, how many, how long, what cost (``sizer recommend``): the request (its answer,
:func:`sizer.plan.recommend.recommend`'s, is :mod:`sizer.schemas.recommendation_result`)."""
# No `from __future__ import annotations`: pydantic would evaluate each field's annotation from its text (compiled and
# eval'd, ~0.3 ms for these fields, imported in every `sizer recommend`); as objects they are read as they are.

from pydantic import Field

from sizer.choices import CATALOG_KINDS, CatalogKindName, Objective, StorageClass
from sizer.formulas.tco import Pricing
from sizer.hardware.schema import OfferTerm, OfferTermIn
from sizer.results import PriceBasis
from sizer.schemas.base import WorkloadRequest
from sizer.schemas.calibration_file import Calibration
from sizer.schemas.measurement import Measured
from sizer.units import Duration, Memory, Money

DEFAULT_MAX_DEVICES = 64
HTTP_TOP = 5  # /v1/recommend's rows of ranked (and of unpriced) by default: a compact answer; "top" asks more
AUTO_SUGGEST = 3  # rejected devices that get suggestions, unasked, when no device serves the question


def _on_demand() -> list[OfferTerm]:
    return ["on-demand"]


def _every_kind() -> list[CatalogKindName]:
    return list(CATALOG_KINDS)


class RecommendRequest(WorkloadRequest):
    """A workload plus the constraints of the choice."""

    deadline: Duration | None = Field(None, description="longest acceptable training time, e.g. '14 d'")
    have: list[str] | None = Field(None, max_length=8, description="hardware you already have, e.g. ['8x A100 80GB SXM']: "
                                                                 "the answer is for these only (sizer.plan.owned)")
    budget: Money | None = Field(None, description="most money to spend, e.g. '50000 USD'")
    host_memory: Memory | None = Field(None, description="with have: RAM of one host, e.g. '128 GB', checked against "
                                                             "what ZeRO-Offload would put there")
    max_devices: int = Field(DEFAULT_MAX_DEVICES, ge=1, le=65536)
    purchase: PriceBasis = Field("rent", description="older name of pricing (rent or buy); pricing wins where given")
    pricing: Pricing | None = Field(None, description="rent (default: cloud prices; devices without one are listed "
                                    "apart, in 'unpriced'), buy (amortised purchase plus energy) or any (rent, else "
                                    "the amortised purchase; each cost says its price_basis)")
    cloud: str | None = Field(None, max_length=50, description="cloud provider whose on-demand prices to use (AWS, GCP, "
                                                               "Lambda, RunPod, Vast.ai, ...)")
    terms: list[OfferTermIn] = Field(default_factory=_on_demand, min_length=1, max_length=5,
                                   description="offer terms a rent may have: on-demand (default), spot, reserved, "
                                   "reserved 1 year, reserved 3 years")
    objective: Objective = Objective.TIME
    kinds: list[CatalogKindName] = Field(default_factory=_every_kind)
    headroom: bool = Field(False, description="reserve seed 003's 25-30 % extra memory")
    features: float | str | None = Field(None, description="input features per sample, for the K1 verdict")
    storage: StorageClass = "nvme"
    calibration: Calibration | None = Field(None, description="per-device efficiencies from sizer calibrate")
    top: int | None = Field(None, ge=1, le=100000, description="rows of ranked (and of unpriced) to return, the best "
                            f"first; all when not given (over HTTP the default is {HTTP_TOP}); ranked_total and "
                            "unpriced_total say how many there are")
    suggest: int | None = Field(None, ge=0, le=16, description="rejected devices (the nearest to working first) that get "
                                "the changes that would make them work (each the engine run again); 0: none; not given: "
                                f"{AUTO_SUGGEST} where no device serves the question, else none")
    interruptions: bool | None = Field(None, description="also give each device's training time with interruptions "
                                                         "(failures, checkpoints, restarts); not given: where a run "
                                                         "expects at least one failure")
    mfu: float | None = Field(None, gt=0, le=1, description="a what-if MFU (0-1] in place of the fitted efficiencies: "
                                                         "every device's time is C / (n R_peak MFU)")
    measured: Measured | None = Field(None, description="your measurement ('2900 tokens/s', '1.2 s/step') on the device "
                                                       "measured_on: its factor carries over to every device (reference mode)")
    measured_on: str | None = Field(None, max_length=100, description="the device (or 'N x DEVICE') the measurement "
                                                                     "was taken on")
