"""The closed forms' questions (``sizer peak``, ``cells``, ``k1``, ``complexity``, ``tco``): their requests, and their
answers re-exported from :mod:`sizer.formulas`, where each closed form builds its own (so that a formula needs no
request to be called)."""
from __future__ import annotations

from pydantic import ConfigDict, Field

from sizer.choices import Precision, PrecisionName, Sharding, ShardingName
from sizer.formulas.cells import CellsResult
from sizer.formulas.complexity import ComplexityResult
from sizer.formulas.compute import ComputeResult
from sizer.formulas.peaks import PeakResult
from sizer.formulas.redundancy import DEFAULT_TOLERANCE, K1Result
from sizer.formulas.tco import COST_DEFAULTS, BuyCost, CostRange, PriceUsed, Pricing, TcoResult
from sizer.hardware.schema import OfferTerm, OfferTermIn
from sizer.schemas.base import RequestModel, WorkloadRequest
from sizer.units import (
    Count,
    CountOrZero,
    Duration,
    Frequency,
    Memory,
    Money,
    MoneyOrZero,
    MoneyPerEnergy,
    MoneyPerTime,
    WholeCount,
)

__all__ = ["BuyCost", "CellsRequest", "CellsResult", "ComplexityRequest", "ComplexityResult", "ComputeResult",
           "CostRange", "K1Request", "K1Result", "PeakRequest", "PeakResult", "PriceUsed", "TcoRequest",
           "TcoResult"]


class PeakRequest(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"device": "Tesla P40"}, {"cores": 3840, "clock": "1.531 GHz"}, {"device": "H100 SXM", "precision": "bf16"}]})

    device: str | None = Field(None, description="device id or name; or give cores and clock")
    precision: PrecisionName = Precision.FP32
    cores: WholeCount | None = None
    clock: Frequency | None = None
    derating: float | None = Field(None, ge=0, lt=1)


class CellsRequest(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"samples": 101136, "features": 75, "outputs": 10, "weights": 700000}]})

    samples: Count
    features: Count
    outputs: CountOrZero = 1
    weights: Count
    variables: CountOrZero = 0
    eta_b: CountOrZero = 1
    eta_w: CountOrZero = 1
    eta_v: CountOrZero = 1
    cell_size: Memory = Field("4 B", validate_default=True)


class K1Request(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"weights": 5000, "samples": 10, "features": 100}]})

    weights: Count
    samples: Count
    features: Count
    tolerance: float = Field(DEFAULT_TOLERANCE, ge=0, lt=1)


class ComplexityRequest(RequestModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"layers": [75, 512, 512, 512, 10]}]})

    layers: list[WholeCount] = Field(..., max_length=10_000, description="input width, then each layer's width")
    operation_time: Duration = Field("1 ns", validate_default=True)
    inputs: WholeCount | None = Field(None, description="fan-in of the first layer; then layers are all neuron layers")


def _on_demand() -> list[OfferTerm]:
    return ["on-demand"]


class TcoRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"device": "H100 SXM", "count": 8, "training_time": "14 d"},
        {"device": "A100 80GB SXM", "params": 7e9, "tokens": 2e10, "precision": "bf16", "count": 8}]})

    device: str
    count: int = Field(1, ge=1, le=1_000_000)
    training_time: Duration | None = Field(None, description="the run's length; else estimated from the workload")
    rent_price: MoneyPerTime | None = Field(None, description="per device, e.g. '2.5 USD/hour'")
    cloud: str | None = Field(None, max_length=50, description="cloud provider whose on-demand price to use (AWS, GCP, "
                                                               "Lambda, ...); the cheapest of any provider if left out")
    purchase_price: Money | None = Field(None, description="per device, e.g. '30000 USD'")
    pricing: Pricing = Field("rent", description="rent: cloud prices only; buy: the buy side only; any: where a "
                                                 "device has no rent price, its amortised purchase cost stands in")
    terms: list[OfferTermIn] = Field(default_factory=_on_demand, min_length=1, max_length=5,
                                   description="offer terms a rent may have: on-demand, spot, reserved ...")
    lifetime: Duration | None = Field(None, description=f"amortisation period; default {COST_DEFAULTS.lifetime:~P}")
    pue: float | None = Field(None, ge=1, le=5, description=f"power usage effectiveness; default {COST_DEFAULTS.pue:g}")
    electricity_price: MoneyPerEnergy | None = Field(None, description=f"default {COST_DEFAULTS.electricity_price:~P}")
    utilisation: float | None = Field(None, gt=0, le=1, description=f"average power as a fraction of TDP; default "
                                                                  f"{COST_DEFAULTS.utilisation:g}")
    host_share: MoneyOrZero | None = Field(None, description="capital for hosts, network, racks; default none")
    zero: int | None = Field(None, ge=0, le=3, description="ZeRO stage 0-3 (FSDP FULL_SHARD is 3)")
    sharding: ShardingName = Sharding.NONE
