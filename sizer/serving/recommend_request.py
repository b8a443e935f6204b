"""The request of `sizer recommend --inference` (``"task": "inference"`` on /v1/recommend): the model,
the targets it must meet, and what the search may try. Its own module so that the search under load
(:mod:`sizer.serving.load_search`) and the offline search (:mod:`sizer.serving.recommend_devices`) both
read it without importing each other."""
from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from sizer.choices import CATALOG_KINDS, CatalogKindName, KvCache, KvCacheName, ServingObjective
from sizer.formulas.tco import Pricing
from sizer.launch.emit_field import EmitName
from sizer.runtimes.formats import WeightsName, ggml_kv_refusal
from sizer.serving.estimate import ServedModel
from sizer.units import Duration


class InferenceRecommendRequest(ServedModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"task": "inference", "model": "llama-2-70b", "weights": "fp8", "tokens_per_s_per_user": 30,
         "total_tokens_per_s": 2000, "time_to_first_token": "2 s"}]})

    task: Literal["inference"] = Field("inference", description="'inference' selects this body on /v1/recommend")
    weights: WeightsName | None = Field(None, description="pin the weight format (default: searched over bf16, "
                                                                  "fp8 or w8a8 where the device has the peak, awq-int4-g128)")
    kv_cache: KvCacheName | None = Field(None, description="pin the KV-cache format (default: searched over fp16 "
                                                                  "and fp8)")
    batch: int | None = Field(None, ge=1, le=1_000_000, description="concurrent sequences (default: the largest that serves)")
    tokens_per_s_per_user: float | None = Field(None, gt=0, le=1e7, description="decode tokens/s each sequence needs")
    total_tokens_per_s: float | None = Field(None, gt=0, le=1e12, description="output tokens/s over all sequences")
    time_to_first_token: Duration | None = Field(None, description="longest acceptable, e.g. '500 ms'")
    context_length: int | None = Field(None, ge=2, le=10_000_000, description="tokens a sequence must hold; the prompt is "
                                                                               "this less the output")
    max_devices: int = Field(8, ge=1, le=1024, description="largest tensor-parallel group (or layer split)")
    max_replicas: int = Field(64, ge=1, le=100_000, description="most replicas of one deployment (under load)")
    disaggregated: bool = Field(False, description="under a rate: also size disaggregated prefill and decode pools "
                                                   "(DistServe/Splitwise) for the leading rows, as rows of their own")
    objective: ServingObjective = Field(ServingObjective.COST, description="rank by cost per million output "
                                                                "tokens, latency, or throughput per device")
    kinds: list[CatalogKindName] = Field(default_factory=lambda: list(CATALOG_KINDS))  # every kind, in this order
    consumer: bool = Field(False, description="also rank consumer and workstation devices (GeForce, Radeon, Apple, "
                                              "RTX A6000 ...); default: data-centre devices only")
    emit: EmitName | None = Field(None, max_length=40, description="a tool to write the first row's launch command for "
                                                                  "(sizer.launch: vllm, sglang, trtllm, llama.cpp)")
    pricing: Pricing = Field("rent", description="rent (cloud offers that run one replica; devices without one come "
                             "last), buy (amortised purchase plus energy) or any (rent, else buy; a ranking by cost "
                             "puts rents first); each row says its price_basis")

    @field_validator("kv_cache")
    @classmethod
    def _data_centre_kv(cls, value: KvCache | None) -> KvCache | None:
        """The devices recommend ranks run data-centre engines, which store none of llama.cpp's ggml blocks."""
        if value is None:
            return value
        expected = ggml_kv_refusal(KvCache(value))
        if expected is not None:
            raise PydanticCustomError("choice", "got {given}; expected {expected}",
                                      {"given": KvCache(value).value, "expected": expected})
        return value
