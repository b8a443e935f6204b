"""Serving a model (``sizer inference``, ``sizer recommend --inference``): the answers and their parts.

:class:`InferenceResult` is :func:`sizer.facade.estimate_inference`'s answer (offline, under load, a split over
unequal devices), :class:`InferenceRecommendResult` the serving ranking's. Their requests are in
:mod:`sizer.schemas.serving_requests`.
"""
from __future__ import annotations

from typing import Literal

from sizer.formulas.tco import PriceUsed
from sizer.launch.answer import Launch
from sizer.results import Assumption, Model, PriceBasis, QuantityOut, RangeOut, Suggestion
from sizer.schemas.rescaled import Rescaled


class PercentileBounds(Model):
    """The low (or high) end of each percentile's range, in the percentiles' unit."""

    p50: float
    p90: float
    p99: float


class RangedQuantityOut(QuantityOut):
    """A serving figure under load with its range: ``value`` and ``low``/``high`` in ``unit`` (None: no range)."""

    low: float | None = None
    high: float | None = None


class Percentiles(Model):
    p50: float
    p90: float
    p99: float
    unit: str
    low: PercentileBounds | None = None  # the range from the cross-source spread (sizer.serving.serving_ranges)
    high: PercentileBounds | None = None


class LatencyOut(Model):
    ttft: Percentiles
    tpot: Percentiles | None  # None: every answer is one token
    e2e: Percentiles
    requests_measured: int


class LengthOut(Model):
    mean: float
    unit: str
    distribution: str


class LoadOut(Model):
    request_rate: QuantityOut | None
    users: int | None
    think_time: QuantityOut | None
    prompt_len: LengthOut
    output_len: LengthOut


class CapacityOut(Model):
    max_request_rate: RangedQuantityOut  # per replica, with its range
    max_users: int | None  # per replica (closed loop)
    replicas: int | None  # None: no number of replicas meets the SLOs
    slo_met: bool
    utilisation: float
    percentile: float
    slo: dict[str, QuantityOut]


class ServingCostOut(RangeOut):
    """A cost per million output tokens: the range, its expected ``value`` and whether the hourly
    price is a rent or an amortised purchase."""

    value: float
    price_basis: PriceBasis


class DeviceShare(Model):
    """One device's part of a layer split: its layers and what it holds."""

    device: str
    layers: int
    weights_memory: QuantityOut
    kv_cache_memory: QuantityOut
    memory: QuantityOut  # weights, KV cache, compute buffers and the runtime's reserve
    device_memory: QuantityOut
    fits: bool


class LeftOut(Model):
    """Devices of one segment a production ranking did not search, and why."""

    segment: str
    devices: int
    reason: str


class DeviceSegmentsOut(Model):
    """The segments a ranking searched, and those it left out (with ``consumer`` none are)."""

    searched: list[str]
    left_out: list[LeftOut]


class InferenceResult(Model):
    model: str
    device: str
    count: int
    weights: str
    kv_cache: str
    batch: int
    prompt_len: int
    output_len: int
    decode_tokens_per_s: RangeOut  # per sequence
    decode_latency: RangeOut  # per token
    total_tokens_per_s: RangeOut  # output tokens over all sequences, prefill included
    prefill_tokens_per_s: RangeOut
    time_to_first_token: RangeOut
    memory_per_device: QuantityOut
    weights_memory: QuantityOut
    kv_cache_memory: QuantityOut
    activations_memory: QuantityOut
    reserve_memory: QuantityOut
    device_memory: QuantityOut
    fits: bool
    max_batch: int
    decode_bound: str  # "memory" or "compute" at this batch
    compute_bound_batch: int | None
    cost_per_million_tokens: ServingCostOut | None  # offline: at the static batch; under load: at that load
    energy_per_token: RangeOut | None  # None: the catalog has no power figure for the device
    assumptions: list[Assumption]
    scenario: str = "offline"  # "offline": a static batch; "load": a rate or users under continuous batching
    split: str = "tensor"
    load: LoadOut | None = None
    latency: LatencyOut | None = None
    capacity: CapacityOut | None = None
    output_tokens_per_s: RangedQuantityOut | None = None  # under load, over all replicas, with its range
    prompt_and_output_tokens_per_s: RangedQuantityOut | None = None  # under load, all replicas: prompt + output tokens
    # a split over unequal devices, or the devices and the host CPU of an offload (gpu_layers): each one's layers and memory
    per_device: list[DeviceShare] | None = None
    suggestions: list[Suggestion] = []  # where it does not fit: the changes that would (sizer.plan.suggestions)
    rescaled: Rescaled | None = None  # rescaled by the user's measurement or efficiency (sizer.measured); None: sizer's own
    launch: Launch | None = None  # with emit: the setup's launch command in that tool (sizer.launch)


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
