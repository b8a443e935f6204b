"""What `sizer recommend --inference` answers: a ranked deployment, offline or under load, the
devices that cannot serve and why. Shared by the offline ranking (:mod:`sizer.serving.recommend`)
and the search under load (:mod:`sizer.serving.load_search`), so neither imports the other back."""
from __future__ import annotations

from typing import Literal

from sizer.formulas.tco import PriceUsed
from sizer.launch.answer import Launch
from sizer.results import Assumption, Model, PriceBasis, QuantityOut, RangeOut
from sizer.runtimes.formats import WeightFormat
from sizer.serving.production import DeviceSegmentsOut
from sizer.serving.serving_ranges import RangedQuantityOut
from sizer.serving.under_load import LatencyOut, LoadOut, ServingCostOut


class InferenceOption(Model):
    rank: int
    device: str
    name: str
    kind: str
    count: int
    batch: int
    precision: str
    decode_tokens_per_s: RangeOut
    total_tokens_per_s: RangeOut
    time_to_first_token: RangeOut
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    rent_per_hour: QuantityOut | None  # per replica: devices x the price per device-hour, of price_basis
    cost_per_million_tokens: ServingCostOut | None
    price_basis: PriceBasis | None = None  # "rent" or "buy" (an amortised purchase), as pricing asked
    price: PriceUsed | None = None  # the price behind the cost: term or purchase basis, offer, date, source
    decode_bound: str
    tp: int = 1
    replicas: int = 1
    weights: str = "bf16"  # the weight format of this row
    kv_cache: str = "fp16"
    quality: str | None = None  # a word on accuracy where the weights are stored below 8 bits


class LoadOption(Model):
    """One device's best deployment under load: ``replicas`` replicas of ``count`` devices."""

    rank: int
    device: str
    name: str
    kind: str
    count: int  # devices per replica
    tp: int
    pp: int
    split: str
    replicas: int
    devices_total: int
    weights: str  # the weight format of this deployment
    kv_cache: str  # its KV-cache format
    max_request_rate: RangedQuantityOut  # per replica, within the SLOs, with its range
    capacity_searched: bool  # True: bisected; False: the share of the load it was shown to meet (a lower bound)
    utilisation: float  # the load each replica carries over its capacity (max_request_rate) [1]
    headroom: float = 0.0  # 1 - utilisation: the share of the capacity left for peaks [1]
    latency: LatencyOut
    output_tokens_per_s: RangedQuantityOut  # all replicas, with its range
    prompt_and_output_tokens_per_s: RangedQuantityOut  # all replicas, prompt and output tokens
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    price_per_hour: QuantityOut | None  # per device, of price_basis
    price_basis: PriceBasis | None = None  # "rent" or "buy" (an amortised purchase), as pricing asked
    price: PriceUsed | None = None  # the price behind the cost: term or purchase basis, offer, date, source
    cost_per_million_tokens: ServingCostOut | None
    # "colocated": every replica prefills and decodes; "disaggregated": prefill_replicas run prompts, decode_replicas
    # the answers (replicas = both), the prompt's KV cache sent between them in kv_transfer
    deployment: str = "colocated"
    prefill_replicas: int | None = None
    decode_replicas: int | None = None
    kv_transfer: QuantityOut | None = None
    quality: str | None = None  # a word on accuracy where the weights are stored below 8 bits
    layout: str = "tensor parallel"  # a mixture's expert and attention split (sizer.passes.moe_decode)


class RejectedOption(Model):
    device: str
    name: str
    reason: str


class InferenceRecommendResult(Model):
    task: Literal["inference"]
    model: str
    weights: str
    prompt_len: int
    output_len: int
    ranked: list[InferenceOption | LoadOption]
    rejected: list[RejectedOption]
    assumptions: list[Assumption]
    objective: str = "cost"
    scenario: str = "offline"
    load: LoadOut | None = None
    launch: Launch | None = None  # with emit: the first row's launch command in that tool (sizer.plan.launch_top)
    devices_searched: DeviceSegmentsOut | None = None  # the segments ranked and those left out, and why
    max_utilisation: float | None = None  # under load: the most share of capacity a row's load may use [1]


def unsupported_reason(fmt: WeightFormat) -> str:
    """Why a device cannot serve ``fmt``: no peak for a format that quantises activations, else no usable precision.

    Parameters
    ----------
    fmt : WeightFormat
        The weight format tried.

    Returns
    -------
    str
        The reason, for a rejected device.
    """
    return (f"no {fmt.compute} peak in the catalog ({fmt.name} quantises activations too)" if fmt.activations
            else "no usable precision in the catalog")


def node_reason(per_node: int) -> str:
    """Why a device that fits only on more devices than one node holds cannot serve (tensor parallelism stays
    inside a node).

    Parameters
    ----------
    per_node : int
        Devices in one node of this device [1].

    Returns
    -------
    str
        The reason, for a rejected device.
    """
    return (f"does not fit within one node of {per_node} in any format searched (tensor parallelism stays inside a "
            "node; runtimes span nodes with pipeline parallelism, not searched here)")
