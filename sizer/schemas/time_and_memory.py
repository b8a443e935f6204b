"""Training time and memory (``sizer time``, ``sizer memory``): the requests and their answers.

:func:`sizer.facade.estimate_time` answers a :class:`TimeRequest` with a :class:`TimeResult` (the engine's
:func:`sizer.training.time_answer.estimate_training`), :func:`sizer.facade.estimate_memory` a :class:`MemoryRequest` with
a :class:`MemoryResult` (:mod:`sizer.training.memory_answer`).
"""
from __future__ import annotations

from pydantic import ConfigDict, Field

from sizer.choices import Mode, Recompute, RecomputeName, Sharding, ShardingName
from sizer.launch.answer import Launch
from sizer.launch.emit_field import EmitName
from sizer.results import Assumption, Model, QuantityOut, RangeOut, Suggestion
from sizer.schemas.base import WorkloadRequest
from sizer.schemas.calibration_file import Calibration
from sizer.schemas.measurement import Measured
from sizer.schemas.rescaled import Rescaled
from sizer.units import Count, Duration, Memory


class TimeRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"model": "llama-2-7b", "tokens": 2e12, "device": "H100 SXM", "count": 256},
        {"params": 175e9, "tokens": 300e9, "device": "A100 80GB SXM", "count": 1024, "precision": "bf16"},
        {"workload": "resnet50", "batch_size": 256, "device": "H100 SXM", "precision": "fp16",
         "reference": "V100 SXM2 16GB=1200/s"}]})

    emit: EmitName | None = Field(None, max_length=40, description="a tool to write the chosen setup's launch command "
                                                                 "or configuration for (sizer.launch: megatron, nemo, torchtitan, deepspeed; a fine-tune: torchtune, axolotl, unsloth)")
    device: str | None = Field(None, description="the device (or give have)")
    count: int = Field(1, ge=1, le=1_000_000)
    have: list[str] | None = Field(None, max_length=8, description="hardware you already have, e.g. ['8x A100 80GB SXM']: "
                                                                 "the answer is for these only")
    zero: int | None = Field(None, ge=0, le=3, description="ZeRO stage 0-3 (FSDP FULL_SHARD is 3)")
    tp: int | None = Field(None, ge=1, le=1024, description="tensor-parallel size (Megatron style, with sequence "
                                                          "parallelism); no layout given: the search chooses")
    pp: int | None = Field(None, ge=1, le=1024, description="pipeline-parallel stages (1F1B)")
    ep: int | None = Field(None, ge=1, le=1024, description="expert-parallel size (a mixture of experts): divides the "
                                                          "experts and the data-parallel size; no layout given: the search chooses")
    interleave: int | None = Field(None, ge=1, le=64, description="virtual pipeline chunks per stage (interleaved "
                                                                 "1F1B); not given: the search chooses")
    cp: int | None = Field(None, ge=1, le=1024, description="context-parallel size (ring attention over the "
                                                          "sequence); not given: the search chooses")
    recompute: RecomputeName | None = Field(None, description="activation recomputation: none, selective or full")
    sharding: ShardingName = Sharding.NONE
    overlap_allreduce: bool = False
    overlap_all_to_all: bool = Field(False, description="expert parallelism's all-to-alls overlap another micro-batch's "
                                                        "computation (DeepSeek-V3's DualPipe, Megatron-Core's overlapped "
                                                        "dispatch)")
    headroom: bool = False
    offload: bool = Field(False, description="optimizer states and master weights in host memory (ZeRO-Offload)")
    host_memory: Memory | None = Field(None, description="RAM of one host (a machine), e.g. '128 GB': checked against "
                                                             "what offload puts there; default the node type's (system) "
                                                             "where the catalog has it, else assumed equal to its devices' memory")
    hybrid_shard: bool = Field(False, description="ZeRO-3 within a node, replicated across nodes (FSDP HYBRID_SHARD)")
    system: str | None = Field(None, max_length=100, description="a catalog node type (DGX H100, AWS p5, ...): devices "
                                                                "per node, the link inside and the network between nodes")
    reference: str | None = Field(None, max_length=200, description="one measurement to predict from: 'DEVICE=THROUGHPUT/s'")
    reference_batch_size: Count | None = Field(None, description="batch of the reference measurement (default: batch_size)")
    calibration: Calibration | None = Field(None, description="per-device efficiencies from sizer calibrate")
    interruptions: bool | None = Field(None, description="also give the training time with interruptions (failures, "
                                                         "checkpoints, restarts); not given: where the run expects at "
                                                         "least one failure")
    measured: Measured | None = Field(None, description="your measurement of this setup ('2900 tokens/s', '1.2 s/step'): "
                                                       "the answer is rescaled to it (sizer.measured)")
    measured_on: str | None = Field(None, max_length=100, description="the device the measurement was taken on ('RTX "
                                    "4090', '8x A100 80GB SXM'): carried over to the device asked (reference mode)")
    mfu: float | None = Field(None, gt=0, le=1, description="a what-if MFU (0-1] in place of the fitted efficiencies")
    checkpoint_interval: Duration | None = Field(
        None, description="training time between checkpoints, e.g. '3 hours', for the time with interruptions; not "
                          "given: Daly's optimal interval")


class MemoryRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"params": 7e9, "tokens": 2e10, "precision": "bf16", "optimizer": "adamw", "device": "H100 SXM", "count": 8,
         "sharding": "full"},
        {"params": 7.5e9, "count": 64, "zero": 2, "precision": "fp16", "optimizer": "adam"}]})

    emit: EmitName | None = Field(None, max_length=40, description="a tool to write the chosen setup's launch command "
                                                                 "or configuration for (sizer.launch: torchtune, axolotl, unsloth)")
    device: str | None = None
    count: int = Field(1, ge=1, le=1_000_000)
    have: list[str] | None = Field(None, max_length=8, description="hardware you already have, e.g. ['8x A100 80GB SXM']: "
                                                                 "the answer is for these only")
    zero: int | None = Field(None, ge=0, le=3, description="ZeRO stage 0-3 (FSDP FULL_SHARD is 3)")
    sharding: ShardingName = Sharding.NONE
    headroom: bool = False
    recompute: RecomputeName = Field(Recompute.NONE, description="activation recomputation: none, selective or full")
    ep: int = Field(1, ge=1, le=1024, description="expert-parallel size (a mixture of experts): routed experts split over "
                                                 "ep of the count data-parallel devices")
    offload: bool = Field(False, description="optimizer states and master weights in host memory (ZeRO-Offload)")
    measured: Measured | None = Field(None, description="your measured peak memory ('peak memory 18 GiB'): the answer "
                                                       "is rescaled to it (sizer.measured)")


class LayerGroupTime(Model):
    kind: str
    layers: int
    time_per_step: QuantityOut
    share: float
    bound: str


class Layout(Model):
    tp: int
    pp: int
    dp: int
    cp: int = 1  # context-parallel ranks (ring attention)
    ep: int = 1  # expert-parallel ranks, out of the dp ones (a mixture of experts)
    zero: int
    recompute: str
    interleave: int
    micro_batch: int
    accumulation: int


class BestLayout(Model):
    """The best layout sizer finds, as the upper bound of a no-layout answer whose headline is the achieved time."""

    step_time: RangeOut
    throughput: RangeOut
    training_time: RangeOut | None
    achieved_factor: float  # the headline's throughput over this one's [1]
    family: str  # the device family the factor was fitted on


class InterruptedTime(Model):
    """The second training-time line: the run's wall-clock with failures, checkpoints and restarts."""

    training_time: RangeOut  # each bound of the time without interruptions, with its interruptions
    interruptions: float  # expected failures over the run (the expected time's) [1]
    goodput: float  # share of the wall-clock that trains and is kept [1]
    checkpoint_interval: QuantityOut  # training between checkpoints (Daly)
    checkpoint_write: QuantityOut  # one checkpoint written
    restart: QuantityOut  # one restart, the checkpoint read included
    assumptions: list[Assumption]
    causes: dict[str, float] | None = None  # expected interruptions by cause (the lived model) [1]


class TimeResult(Model):
    workload: str
    device: str
    count: int
    precision: str
    method: str
    trainable_params: float
    mode: Mode
    layout: Layout
    batch_size: float
    sample: str
    steps: float | None
    training_compute: QuantityOut | None
    peak: QuantityOut
    step_time: RangeOut
    throughput: RangeOut
    training_time: RangeOut | None
    first_order_time: QuantityOut | None
    physical_limit: QuantityOut
    kernels_per_step: QuantityOut
    optimizer_time_per_step: QuantityOut
    overhead_per_step: QuantityOut
    communication_per_step: QuantityOut
    tensor_parallel_per_step: QuantityOut
    pipeline_per_step: QuantityOut
    context_parallel_per_step: QuantityOut
    data_parallel_per_step: QuantityOut
    expert_parallel_per_step: QuantityOut
    bubble_per_step: QuantityOut
    bound: str
    mfu: float
    hfu: float
    layer_groups: list[LayerGroupTime]
    memory_per_device: QuantityOut
    device_memory: QuantityOut
    host_memory_per_host: QuantityOut | None = None  # with offload: what a host holds for its devices
    fits: bool
    largest_micro_batch: float | None
    warnings: list[str]
    efficiencies: dict[str, float]
    assumptions: list[Assumption]
    suggestions: list[Suggestion] = []  # where it does not fit: the changes that would (sizer.plan.suggestions)
    # the second line: training time with failures, checkpoints and restarts (sizer.engine.goodput); None: not shown
    with_interruptions: InterruptedTime | None = None
    # no layout given: the best layout's own figures, the upper bound beside the achieved headline (engine.achieved)
    best_layout: BestLayout | None = None
    recipe: str | None = None  # the training recipe as a line for a trainer's configuration (sizer.engine.recipe)
    rescaled: Rescaled | None = None  # rescaled by the user's measurement or MFU (sizer.measured); None: sizer's own
    launch: Launch | None = None  # with emit: the layout's launch command in that tool (sizer.launch)


class SearchedLayout(Model):
    """The layout the time estimate's search chooses for a memory question asked without one."""

    layout: str  # "tp 1 x pp 2 x dp 4, ZeRO 2, recompute selective, micro-batch 1"
    tp: int
    pp: int
    dp: int
    zero: int
    recompute: str
    micro_batch: int
    memory_per_device: QuantityOut
    fits: bool


class MemoryResult(Model):
    device: str | None
    count: int
    zero: int
    sharding: str
    precision: str
    method: str
    trainable_params: float
    recompute: str
    micro_batch: float
    weights: QuantityOut
    gradients: QuantityOut
    optimizer_states: QuantityOut
    master_weights: QuantityOut
    model_states: QuantityOut
    activations: QuantityOut
    framework_overhead: QuantityOut
    buffers: QuantityOut  # ZeRO's communication buckets
    logits: QuantityOut  # the loss's FP32 logits and their gradient for the micro-batch (never divided by blocks)
    dequant_buffer: QuantityOut  # QLoRA: the bf16 copy of the largest 4-bit matrix
    total: QuantityOut  # reserved: active plus the framework overhead (what must fit)
    active: QuantityOut  # what PyTorch's allocator holds at the peak (torch.cuda.max_memory_allocated)
    host_memory: QuantityOut  # offloaded and paged states in host memory (not in total)
    recipe: str  # the recipe as a line to type into a trainer's configuration
    required_with_headroom: QuantityOut | None
    device_memory: QuantityOut | None
    fits: bool | None
    largest_micro_batch: int | None
    assumptions: list[Assumption]
    searched: SearchedLayout | None = None  # no layout asked: what the layout search of `sizer time` chooses
    suggestions: list[Suggestion] = []  # where it does not fit: the changes that would (sizer.plan.suggestions)
    rescaled: Rescaled | None = None  # rescaled to the user's measured peak memory (sizer.measured); None: sizer's own
    launch: Launch | None = None  # with emit: the fine-tune's launch command in that tool (sizer.launch)
