"""The layouts of one device and count, fastest first (``sizer plan``): the request and its answer
(:func:`sizer.plan.planner.plan`)."""
from __future__ import annotations

from pydantic import ConfigDict, Field

from sizer.choices import RecomputeName
from sizer.launch.answer import Launch
from sizer.launch.emit_field import EmitName
from sizer.results import Assumption, Model, QuantityOut, RangeOut
from sizer.schemas.base import WorkloadRequest

DEFAULT_SHOWN = 10


class PlanRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"model": "llama-2-70b", "device": "H100 SXM", "count": 256, "tokens": 2e12}]})

    emit: EmitName | None = Field(None, max_length=40, description="a tool to write the fastest layout's launch command "
                                                                 "or configuration for (sizer.launch: megatron, nemo, torchtitan, deepspeed; a fine-tune: torchtune, axolotl, unsloth)")
    device: str | None = Field(None, description="the device (or give have)")
    count: int = Field(1, ge=1, le=1_000_000)
    have: list[str] | None = Field(None, max_length=8, description="hardware you already have, e.g. ['8x A100 80GB SXM']: "
                                                                 "the answer is for these only")
    shown: int = Field(DEFAULT_SHOWN, ge=1, le=100, description="layouts to show, fastest first")
    headroom: bool = False
    overlap_allreduce: bool = False
    overlap_all_to_all: bool = Field(False, description="expert parallelism's all-to-alls overlap another micro-batch's "
                                                        "computation (DeepSeek-V3's DualPipe, Megatron-Core's overlapped "
                                                        "dispatch)")
    tp: int | None = Field(None, ge=1, le=1024, description="pin the tensor-parallel size; the rest is searched")
    pp: int | None = Field(None, ge=1, le=1024, description="pin the pipeline stages")
    cp: int | None = Field(None, ge=1, le=1024, description="pin the context-parallel size")
    ep: int | None = Field(None, ge=1, le=1024, description="pin the expert-parallel size (a mixture of experts)")
    zero: int | None = Field(None, ge=0, le=3, description="pin the ZeRO stage")
    recompute: RecomputeName | None = Field(None, description="pin the recomputation: none, selective or full")
    interleave: int | None = Field(None, ge=1, le=64, description="pin the virtual stages per device")
    interruptions: bool | None = Field(None, description="also give the training time with interruptions (failures, "
                                                         "checkpoints, restarts); not given: where the run expects at "
                                                         "least one failure")
    mfu: float | None = Field(None, gt=0, le=1, description="a what-if MFU (0-1] in place of the fitted efficiencies: "
                                                         "every layout's time is C / (n R_peak MFU)")


class LayoutOption(Model):
    tp: int
    pp: int
    cp: int
    ep: int
    dp: int
    zero: int
    recompute: str
    interleave: int
    micro_batch: int
    accumulation: int
    batch_size: float
    step_time: RangeOut
    training_time: RangeOut | None
    # with failures, checkpoints and restarts (sizer.engine.goodput); None where not asked and under one failure
    training_time_with_interruptions: RangeOut | None = None
    memory_per_device: QuantityOut
    fits: bool
    mfu: float
    hfu: float
    why: str


class PlanResult(Model):
    workload: str
    device: str
    count: int
    precision: str
    searched: int
    fitting: int
    layouts: list[LayoutOption]
    sample: str = "sample"  # what a batch counts: sequence, image, sample
    warnings: list[str]
    assumptions: list[Assumption]
    launch: Launch | None = None  # with emit: the fastest layout's launch command in that tool (sizer.launch)
