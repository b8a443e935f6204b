"""Every constant of the time and memory engine, once, with its source.

Efficiencies are fractions of datasheet rates; times are seconds, sizes bytes (plain floats:
the engine runs on arrays, units are converted where figures enter).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from sizer.choices import DeviceKind, Optimizer
from sizer.errors import InputError

# the node model (links, networks between nodes) lives with the hardware; re-exported (``as``: explicitly, for mypy)
from sizer.hardware.nodes import DATACENTRE_NETWORK as DATACENTRE_NETWORK  # noqa: PLC0414
from sizer.hardware.nodes import FALLBACK_LINK as FALLBACK_LINK  # noqa: PLC0414
from sizer.hardware.nodes import OFFICE_NETWORK as OFFICE_NETWORK  # noqa: PLC0414
from sizer.hardware.nodes import LinkSpeed as LinkSpeed  # noqa: PLC0414 (the engine's re-export)
from sizer.hardware.schema import Device

if TYPE_CHECKING:  # the one-device fit is read only for a profiled network on a GPU (stack_efficiencies)
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

    from sizer.engine.stacks import StackFit

# A scalar or an array of per-configuration values: the formulas below work on either, elementwise.
FloatOrArray = TypeVar("FloatOrArray", float, "npt.NDArray[np.float64]")

# The backward pass reads the stored activations and output gradients and writes input gradients.
BACKWARD_BYTE_FACTOR = 3.0
BACKWARD_KERNEL_FACTOR = 3.0
# Optimizer moments are FP32 copies of the weights (spec §3.8; ZeRO §3's K).
OPTIMIZER_STATE_BYTES = 4.0
# bitsandbytes' 8-bit optimizers keep each moment in 8 bits, block-wise quantised with one FP32
# absolute maximum per block of 2048 values (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
# Quantization", §2: 75 % less optimizer memory than 32-bit Adam). Paged optimizers (Dettmers et al.
# 2023, QLoRA §2) keep the states in CUDA unified memory that is paged to the host under memory
# spikes: the steady-state bytes are those of the optimizer they page.
EIGHT_BIT_STATE_BYTES = 1.0 + OPTIMIZER_STATE_BYTES / 2048
EIGHT_BIT_SOURCE = ("bitsandbytes 8-bit optimizers: 1 byte per state value plus one FP32 absmax per 2048-value block "
                    "(Dettmers et al. 2022 §2; docs/references.md [8bit-optimizers])")
PAGED_SOURCE = ("paged optimizers keep their states in CUDA unified memory, paged to host memory under pressure "
                "(Dettmers et al. 2023, QLoRA §2; docs/references.md [qlora]): outside PyTorch's allocator, so they "
                "never cause an out-of-memory error and are counted apart, as paged (host) memory, not in the device total")
# Copies of the weights each optimizer keeps (spec §3.8), and the bytes of one stored state value.
OPTIMIZER_STATES: dict[Optimizer, int] = {Optimizer.SGD: 0, Optimizer.MOMENTUM: 1, Optimizer.ADAM: 2, Optimizer.ADAMW: 2,
                                          Optimizer.ADAGRAD: 1, Optimizer.RMSPROP: 1, Optimizer.ADAM_8BIT: 2,
                                          Optimizer.ADAMW_8BIT: 2, Optimizer.PAGED_ADAMW: 2, Optimizer.PAGED_ADAMW_8BIT: 2,
                                          Optimizer.ADAFACTOR: 0, Optimizer.LION: 1}
# Adafactor (Shazeer & Stern 2018, §3, Algorithm 4; Hugging Face's default beta1=None) keeps no first moment
# and factors the second moment of an n x m matrix into n + m row and column sums: (n + m)/(n m) values per
# parameter, 2/h for a square h x h matrix. Counted at h = 2048, the narrowest model it is used on here, as
# a fraction of a state copy, so it is an upper bound for wider models.
ADAFACTOR_FACTORED_COPIES = 2.0 / 2048
ADAFACTOR_SOURCE = ("Adafactor: factored second moment, n + m values per n x m matrix, no first moment "
                    "(Shazeer & Stern 2018 §3; counted as 2/2048 of an FP32 copy)")
LION_SOURCE = "Lion: one momentum state per parameter (Chen et al. 2023, Algorithm 2)"
STATE_VALUE_BYTES: dict[Optimizer, float] = {Optimizer.ADAM_8BIT: EIGHT_BIT_STATE_BYTES,
                                             Optimizer.ADAMW_8BIT: EIGHT_BIT_STATE_BYTES,
                                             Optimizer.PAGED_ADAMW_8BIT: EIGHT_BIT_STATE_BYTES}


def optimizer_state_bytes(optimizer: Optimizer) -> float:
    r"""Bytes of optimizer state per trained parameter.

    .. math:: K = n_{states} \, b_{state}

    with ``b_state`` 4 bytes (FP32), or 1 + 4/2048 for the 8-bit block-wise optimizers.

    Parameters
    ----------
    optimizer : Optimizer
        An optimizer of :data:`OPTIMIZER_STATES`.

    Returns
    -------
    float
        State bytes per parameter [B].

    References
    ----------
    [zero], [8bit-optimizers], [qlora]

    >>> optimizer_state_bytes(Optimizer.ADAMW), round(optimizer_state_bytes(Optimizer.ADAMW_8BIT), 4)
    (8.0, 2.0039)
    """
    if optimizer is Optimizer.ADAFACTOR:
        return ADAFACTOR_FACTORED_COPIES * OPTIMIZER_STATE_BYTES
    return OPTIMIZER_STATES[optimizer] * STATE_VALUE_BYTES.get(optimizer, OPTIMIZER_STATE_BYTES)
FP32_STORAGE_BYTES = 4.0  # profiles and layer graphs count activations at FP32 storage
# CUDA context, cuBLAS/cuDNN workspaces and allocator caching: about 0.5-1 GiB per GPU in
# PyTorch; the larger figure, so that "fits" errs on the safe side.
FRAMEWORK_OVERHEAD_BYTES = 2.0 ** 30
FRAMEWORK_OVERHEAD_SOURCE = "assumed 1 GiB per GPU: CUDA context, library workspaces, allocator cache (PyTorch)"
# Seed 003: keep 25-30 % extra memory when reference weight values must be kept.
HEADROOM_LOW, HEADROOM_HIGH = 0.25, 0.30
HEADROOM_SOURCE = "seed 003 (memory recommendations): reserve 25-30 % extra memory"
# ZeRO-3 moves the parameters twice (all-gather in forward and backward) and reduce-scatters the
# gradients: 3 x parameter bytes per step against 2 x for an all-reduce (Rajbhandari et al. 2020 §7).
FULL_SHARDING_TRAFFIC = 1.5
# ZeRO-2 shards the gradients as they are produced: each micro-batch's backward pass reduce-scatters them to their
# owners (DeepSpeed stage 2, FSDP SHARD_GRAD_OP), then the updated parameters are all-gathered once; with m
# micro-batches per step that is (m + 1) / 2 all-reduces' worth of traffic, against one for ZeRO-0/1 (one
# reduce-scatter of the accumulated gradients: Megatron-LM's distributed optimizer, ZeRO-1). Rajbhandari et al.
# 2020 §5.2 and §7; the reason large pipelined runs use ZeRO-1 (Llama 3, DeepSeek-V3).
def zero2_traffic_rounds(accumulation: FloatOrArray) -> FloatOrArray:
    """All-reduces' worth of gradient traffic per step of ZeRO-2 with ``m`` micro-batches: ``(m + 1) / 2`` [1].

    Parameters
    ----------
    accumulation : float or numpy.ndarray
        Micro-batches per optimizer step :math:`m` [1].

    Returns
    -------
    float or numpy.ndarray
        1 for one micro-batch, :math:`(m + 1)/2` in general [1].

    References
    ----------
    [zero]
    """
    return (accumulation + 1.0) / 2.0
# Megatron-LM tensor parallelism with sequence parallelism: per transformer block and pass, two
# all-gathers and two reduce-scatters of the block's s·b·h activations (Korthikanti et al. 2022 §4.2.2;
# without sequence parallelism, two all-reduces of the same volume).
TP_COLLECTIVES_PER_BLOCK_PASS = 4
# Serving runs tensor parallelism without sequence parallelism: two all-reduces per block and pass (after
# attention and after the MLP; Shoeybi et al. 2019), of the same volume as the four collectives above. Their
# small messages inside a node are one-shot all-reduces (vLLM's custom_all_reduce, TensorRT-LLM's ONESHOT
# strategy, NCCL NVLS on NVSwitch): each rank writes its part to every peer and reads theirs after a
# barrier, so the latency is about two link latencies whatever the group size; across nodes a ring pays
# 2 (t - 1) latencies. Recalled from the runtimes' sources, not read in a data file (verified: false).
SERVING_ALLREDUCES_PER_BLOCK = 2
ONE_SHOT_ALLREDUCE_LATENCIES = 2.0
ONE_SHOT_ALLREDUCE_VERIFIED = False
# ZeRO-Offload (Ren et al. 2021): optimizer states and FP32 master weights live in host memory and the
# optimizer step runs on the CPU; gradients go down and updated 16-bit weights come back over PCIe each step.
# Host memory streams at about half the peak of an 8-channel DDR4-3200 socket (204.8 GB/s).
HOST_OPTIMIZER_BANDWIDTH = 100e9
HOST_OPTIMIZER_SOURCE = ("ZeRO-Offload (Ren et al. 2021): CPU Adam on states in host memory; host bandwidth assumed "
                         "100 GB/s, gradients and weights over PCIe 4.0 x16 (docs/references.md [zero-offload])")
# DeepSpeed's communication buckets under ZeRO (its configuration documentation): ``reduce_bucket_size`` and
# ``allgather_bucket_size`` default to 5e8 elements (stages 1-2); stage 3 prefetches parameters in buckets of
# ``stage3_prefetch_bucket_size``, 5e8 elements. Recalled, not read in a source here: shown unverified.
ZERO_REDUCE_BUCKET = 5e8
ZERO_GATHER_BUCKET = 5e8
ZERO_BUCKETS_SOURCE = ("DeepSpeed ZeRO configuration defaults: reduce/allgather (stage 3: prefetch) buckets of 5e8 "
                       "elements each, at most the parameters a device holds (recalled, not re-read)")
# An all-reduce overlapped with the backward pass hides behind it, about 2/3 of the kernels.
OVERLAP_SHARE = 2.0 / 3.0


# FP8 training (Transformer Engine's recipes, DeepSeek-V3's fine-grained FP8): the GEMMs run at the FP8
# tensor peak, but every FP8 GEMM first casts its 16-bit inputs (and, backward, its output gradients) to
# FP8 with a per-tensor (delayed scaling), per-block (MXFP8) or per-tile (DeepSeek-V3) scale and keeps the
# amax history: work in proportion to the GEMMs. Stated as time added per FP8 GEMM second; fitted on the
# NVIDIA/NeMo performance summary's FP8 runs only (benchmarks/llm_training.py --fit-fp8: 0.10 of the grid
# 0-0.5 on its 7 runs, median |log error| 0.057; 0.05 before attention was kept at the 16-bit rate below and
# its 2 context-parallel runs were mapped), scored on the other sources (benchmarks/ACCURACY.md).
FP8_SCALING_OVERHEAD = 0.10
FP8_SCALING_SOURCE = ("fitted on the 7 FP8 runs of NVIDIA's NeMo performance summary (H100, GPT-3/Llama 2/3), scored on "
                      "Megatron-Bridge's and MosaicML's FP8 runs (benchmarks/ACCURACY.md)")
# Attention under FP8 training: Transformer Engine casts the inputs of its Linear (GEMM) layers to FP8;
# its DotProductAttention (flash/cuDNN fused attention) stays in BF16/FP16 unless FP8 attention is asked
# for (the recipe's ``fp8_dpa``, default False; NVTE_FP8_DPA). So the attention score and context matmuls
# run at the 16-bit tensor peak, without the FP8 scaling overhead. Not fitted.
FP8_ATTENTION_SOURCE = ("Transformer Engine FP8 recipes: fp8_dpa (FP8 dot-product attention) off by default, so "
                        "attention runs in 16 bits (docs/references.md [te-fp8])")
# NVFP4 training (--precision fp4, on devices whose catalog entry has an FP4 peak): the GEMMs at the FP4
# peak with the FP8 scaling overhead above, which is not fitted for FP4 (no mapped FP4 run: the published
# NVFP4 runs are on GB300/B300, which the catalog lacks); weights and states as under FP8.
FP4_TRAINING_NOTE = (" (fitted on FP8 runs, taken for FP4 unfitted: NVFP4's 16-value block scales, Hadamard "
                     "transforms and stochastic rounding likely cost more; every GEMM assumed at the FP4 peak)")
# Weights and optimizer states under FP8 training: 16-bit weight and gradient copies (the FP8 weight cast
# is transient), FP32 master weights and FP32 Adam moments (Transformer Engine FP8 primer; DeepSeek-V3
# report §3.3.1-3.3.3 keeps BF16/FP32 masters and BF16 moments, a smaller variant not modelled).
FP8_STATES_SOURCE = ("Transformer Engine 'Using FP8 with Transformer Engine' (16-bit copies, FP32 master weights); "
                     "DeepSeek-AI 2024, DeepSeek-V3 report §3.3 (docs/references.md [te-fp8], [deepseek-v3])")
# Expert parallelism (mixture of experts). Per MoE block and micro-batch, one all-to-all dispatches the
# routed tokens to the experts' ranks and one combines them back, in the forward pass and again (as
# their gradients) in the backward pass (Lepikhin et al. 2021 GShard §2.2; Megatron-Core MoE token
# dispatcher): 2 per pass.
EP_ALL_TO_ALLS_PER_BLOCK_PASS = 2
# Around the all-to-alls, Megatron-Core's all-to-all token dispatcher sorts the tokens a rank receives by
# local expert (sort_chunks_by_idxs) and sorts them back before the combine: per MoE block and pass, each
# sort reads and writes the rank's k·s·h routed token values in device memory, 4 passes over them in all
# (the permutation by expert before the dispatch and the unpermutation after the combine are in the
# router's layer row). Counted where ep > 1; a rank that holds one expert skips the sort (not modelled).
EP_TOKEN_SORT_PASSES = 4
EP_TOKEN_SORT_SOURCE = ("Megatron-Core MoEAlltoAllTokenDispatcher: sort_chunks_by_idxs after the dispatch all-to-all "
                        "and before the combine (docs/references.md [megatron-core-moe])")
# The busiest expert-parallel rank's share of routed tokens over the mean: the step waits for it.
# Auxiliary-loss balancing keeps the max/mean expert load near 1.1-1.2 per batch (Fedus et al. 2022,
# Switch Transformer §2.2 [switch], capacity factors 1.0-1.25 drop few tokens); 1.1 is a stated assumption,
# not fitted (no per-rank load figures in /work/shared/data).
EP_LOAD_IMBALANCE = 1.1
EP_LOAD_IMBALANCE_SOURCE = ("stated assumption: the busiest expert-parallel rank gets 1.1 x the mean routed tokens "
                            "(Fedus et al. 2022 Switch Transformer §2.2: capacity factors 1.0-1.25 suffice with "
                            "load balancing); not fitted")


@dataclass(frozen=True)
class Efficiencies:
    """Fractions of the datasheet rates that training kernels reach, and fixed costs.

    Matrix layers (matmul, conv, attention) reach a different fraction of peak on each kind of
    unit: ``matrix`` of the 16- and 8-bit tensor-core peak, ``tf32`` of the TF32 tensor-core
    peak, ``fp32_matrix`` of the FP32 vector peak (SGEMM on CUDA cores or CPU SIMD).
    ``vector``: of the FP32 vector peak, for every other layer; ``memory``: of the memory
    bandwidth; ``launch``: seconds per kernel (a GPU runs no faster than its launches);
    ``step_overhead``: seconds per optimizer step outside the kernels.

    ``matrix_half`` [FLOP]: how the 16/8-bit tensor-core efficiency falls with the size of each
    matrix kernel. A kernel of ``x`` FLOP per device reaches ``matrix · x / (x + matrix_half)`` of
    the peak (:func:`sizer.engine.roofline.matrix_size_factor`): small GEMMs (small models, small
    micro-batches, wide tensor parallelism) fill fewer waves of the GPU's multiprocessors and
    spend a larger share in their prologue and epilogue. 0 turns the size dependence off.
    """

    matrix: float
    tf32: float
    fp32_matrix: float
    vector: float
    memory: float
    launch: float
    step_overhead: float
    source: str
    matrix_half: float = 0.0
    # time added per FP8 GEMM second by casting and scaling [1]; None: training's FP8_SCALING_OVERHEAD
    fp8_scaling: float | None = None
    # the size dependence on every matrix unit (TF32, FP32 SGEMM/convolutions), not only 16-bit tensor cores:
    # one device's eager training of profiled networks (sizer/engine/stacks.py), where a batch-12 convolution
    # is a small GEMM on whatever unit runs it
    half_every_unit: bool = False

    RATES = ("matrix", "tf32", "fp32_matrix", "vector", "memory")

    def __post_init__(self) -> None:
        for name in self.RATES:
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise InputError(f"efficiency.{name}", value, "a fraction of peak above 0 and at most 1")
        for name in ("launch", "step_overhead"):
            if not getattr(self, name) >= 0:
                raise InputError(f"efficiency.{name}", getattr(self, name), "a non-negative time in seconds")
        if not self.matrix_half >= 0:
            raise InputError("efficiency.matrix_half", self.matrix_half, "a non-negative FLOP count per kernel")
        if self.fp8_scaling is not None and not self.fp8_scaling >= 0:
            raise InputError("efficiency.fp8_scaling", self.fp8_scaling, "a non-negative share of FP8 GEMM time")

    def scaled(self, factor: float, source: str) -> "Efficiencies":
        """Every rate efficiency divided by a factor (above 1: slower), capped at 1; launch time times it.

        Parameters
        ----------
        factor : float
            How many times slower the device runs than these efficiencies say [1].
        source : str
            Where the factor comes from.

        Returns
        -------
        Efficiencies
            The scaled efficiencies with the new source.

        References
        ----------
        [spec-3.11]
        """
        rates = {name: min(1.0, getattr(self, name) / factor) for name in self.RATES}
        return replace(self, **rates, launch=self.launch * factor, source=source)

    def as_dict(self) -> dict[str, float]:
        """The efficiencies as plain numbers, for an answer's ``efficiencies`` field.

        Returns
        -------
        dict of str to float
            Rate fractions [1], ``launch_s`` and ``step_overhead_s`` [s], ``matrix_half_flop`` [FLOP].
        """
        return {**{name: getattr(self, name) for name in self.RATES},
                "launch_s": self.launch, "step_overhead_s": self.step_overhead, "matrix_half_flop": self.matrix_half}


# GPU defaults fitted once, by `benchmarks/accuracy.py --fit`, to the published measurements in
# benchmarks/published_measurements.csv (ResNet-50 and BERT on 11 NVIDIA GPUs; NVIDIA
# DeepLearningExamples and Lambda); see benchmarks/ACCURACY.md for the out-of-sample check.
GPU_EFFICIENCIES = Efficiencies(matrix=0.4, tf32=0.4, fp32_matrix=0.85, vector=0.6, memory=0.7, launch=2e-5,
                                step_overhead=1e-3,
                                source="defaults fitted to published GPU training measurements (benchmarks/ACCURACY.md)")
# Transformers generated from their architecture (sizer.workloads.layer_graph: fused kernels, flash
# attention, as Megatron-LM, llm-foundry and NeMo run them): the tensor-core ceiling and its GEMM-size
# half-point fitted by `benchmarks/llm_training.py --fit` on the MosaicML llm-foundry runs only
# (216 runs, MPT 125M-70B on A100 40/80GB and H100, 8-512 GPUs); every other source is held out
# (benchmarks/ACCURACY.md, "Language-model training"). The profiled ResNet/BERT rows keep the
# defaults above: fitted jointly with these, their datasheet median rose from 11.6 % to 13.4 %.
TRANSFORMER_GPU_EFFICIENCIES = replace(
    GPU_EFFICIENCIES, matrix=0.6, matrix_half=16e9,
    source="transformer defaults: tensor ceiling 0.6, half at 16 GFLOP per kernel, fitted on MosaicML llm-foundry "
           "runs and judged on Megatron-LM/NeMo/Narayanan/Korthikanti runs (benchmarks/ACCURACY.md)")
# CPU defaults from `sizer calibrate` on 24 quick-mode validation runs measured without competing
# load on a 2-core AMD EPYC (AVX2) VM, 2026-11-22: kernels at 0.70-0.71 of the time that
# 0.5/0.6 efficiencies give, 1.8-2.6 ms per step outside the kernels.
CPU_EFFICIENCIES = Efficiencies(matrix=0.7, tf32=0.7, fp32_matrix=0.7, vector=0.7, memory=0.85, launch=2e-6,
                                step_overhead=2e-3,
                                source="generic CPU defaults, calibrated once on one 2-core AMD EPYC VM (2026-11-22, "
                                       "validation/reports/cpu-quick-2026-11-22.md), not measured on other processors")


# A CPU training a network at scale reaches far less of its peak than the small MLPs CPU_EFFICIENCIES was calibrated
# on: the one measured CPU training run of a large network in ../shared/data/single-device-training.csv, TensorFlow's
# 2017 performance table, trained InceptionV3 on 2x Xeon E5-2686 v4 at 20.8 images/s where these defaults predict
# 47.8 (sizer time --workload inception-v3 --device xeon-e5-2686-v4-x2 --precision fp32): 0.436 of it. Transformers
# on CPUs take every compute efficiency times that (issue 39: 512 Xeon 8480+ "trained Llama-2-7B in 32.5 days" at 56 %
# MFU). One run, doubted in its row (its heading and command disagree): unverified.
CPU_AT_SCALE = 20.8 / 47.8
CPU_TRANSFORMER_EFFICIENCIES = replace(
    CPU_EFFICIENCIES, matrix=CPU_EFFICIENCIES.matrix * CPU_AT_SCALE, tf32=CPU_EFFICIENCIES.tf32 * CPU_AT_SCALE,
    fp32_matrix=CPU_EFFICIENCIES.fp32_matrix * CPU_AT_SCALE, vector=CPU_EFFICIENCIES.vector * CPU_AT_SCALE,
    source=f"{CPU_EFFICIENCIES.source}; compute efficiencies x {CPU_AT_SCALE:.3g} for a large network on a CPU "
           "(2x Xeon E5-2686 v4, InceptionV3, TensorFlow performance docs 2017, "
           "../shared/data/single-device-training.csv; one run, unverified)")


def default_efficiencies(kind: DeviceKind, transformer: bool = False) -> Efficiencies:
    """The default efficiencies of a device kind.

    Parameters
    ----------
    kind : DeviceKind
        The device's kind (a CPU, or a GPU or accelerator alike).
    transformer : bool, default False
        For a layer graph generated from an architecture (fused kernels, flash attention) rather
        than a profiled workload.

    Returns
    -------
    Efficiencies
        Fractions of peak per unit [1], launch and per-step overhead [s], with their source
        (fitted on published measurements; see the comments above each constant).

    References
    ----------
    [spec-3.3], [flash-attention], [seed-001]
    """
    if kind is DeviceKind.CPU:
        return CPU_TRANSFORMER_EFFICIENCIES if transformer else CPU_EFFICIENCIES
    return TRANSFORMER_GPU_EFFICIENCIES if transformer else GPU_EFFICIENCIES


# Software stacks other than NVIDIA's reach a different share of their peak on the same transformer training:
# a factor on the tensor efficiency per vendor, fitted by `benchmarks/vendor_efficiency.py` on the vendor's own
# MLPerf Training results against NVIDIA's in the same round (the median of measured / predicted per-device speed
# ratios of the fit rows; the split is fixed in the script). Applied only where the fit has at least
# STACK_FIT_MIN_ROWS rows: Intel's one Gaudi 2 row (0.80, llama2_70b_lora v4.0) is not enough, so Gaudi keeps
# the default, said unverified. Held-out errors (benchmarks/ACCURACY.md): AMD MI325X 28 %, Google v5e/Trillium 36 %.
STACK_FIT_MIN_ROWS = 3
SOFTWARE_STACK_FACTORS = {
    "AMD": (0.551, 6, "ROCm: fitted on 6 MI300X llama2_70b_lora results of MLPerf Training v5.0 (AMD, Dell, "
                      "MangoBoost, Oracle) against H200 (benchmarks/vendor_efficiency.py)"),
    "Google": (0.907, 7, "XLA on TPU: fitted on 7 TPU v5p gpt3 results of MLPerf Training v4.0/v4.1 against H100 "
                         "(benchmarks/vendor_efficiency.py)"),
    "Intel": (0.798, 1, "SynapseAI on Gaudi: one llama2_70b_lora result of MLPerf Training v4.0 against H100 "
                        "(benchmarks/vendor_efficiency.py): too few to apply"),
}


# A newer generation of a vendor whose own results show its stack past the vendor's factor: AMD's CDNA4 parts
# (MI350X, MI355X) on ROCm 7 trained Llama 3.1 8B in MLPerf Training v5.1 about 1.3x faster than the MI300X-fitted
# factor gives (benchmarks/modern_runs.py: median over 5 submitters of the best-layout step over the measured one,
# 1.33 at 0.551; refitted so that it is about 1). Keyed by sizer.engine.achieved.family_of_name.
GENERATION_STACK_FACTORS = {
    "amd-cdna4": (0.80, 5, "ROCm 7 on CDNA4: fitted on the MI350X/MI355X llama31_8b results of MLPerf Training v5.1 "
                           "of 5 submitters (AMD, Cisco, Dell, GigaComputing, Supermicro...; "
                           "../shared/data/modern-training-runs.csv, benchmarks/modern_runs.py)"),
}


def stack_factors_said() -> str:
    """:data:`SOFTWARE_STACK_FACTORS` in words, for a ranking across vendors: why an AMD or Google part runs below
    its datasheet's share of NVIDIA's speed, and which vendor's factor is too thin to apply.

    Returns
    -------
    str
        One clause per vendor.
    """
    said = [f"{vendor} x {factor:g} ({rows} results)" if rows >= STACK_FIT_MIN_ROWS
            else f"{vendor} x 1, NVIDIA's assumed ({rows} result, too few; unverified)"
            for vendor, (factor, rows, _) in SOFTWARE_STACK_FACTORS.items()]
    return ("tensor efficiency of each vendor's software stack against NVIDIA's, on which the defaults are fitted: "
            + "; ".join(said))


def stack_factor(device: Device) -> tuple[float, str, bool]:
    """The factor on a device's tensor efficiency for its vendor's software stack (:data:`SOFTWARE_STACK_FACTORS`).

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    tuple of (float, str, bool)
        The factor [1] (1 for NVIDIA, whose runs the defaults are fitted on, and where the fit is too thin),
        its source, and whether it rests on the vendor's own runs.
    """
    from sizer.engine.achieved import family_of_name

    found = GENERATION_STACK_FACTORS.get(family_of_name(f"{device.id} {device.name}")) or \
        SOFTWARE_STACK_FACTORS.get(device.vendor)
    if found is None:
        return 1.0, "", True
    factor, rows, source = found
    if rows < STACK_FIT_MIN_ROWS:
        return 1.0, f"{device.vendor}: NVIDIA's efficiencies assumed, unverified ({source})", False
    return factor, source, True


def device_efficiencies(device: Device, transformer: bool = False) -> Efficiencies:
    """The efficiencies of one device: those measured on it where its catalog entry has them, else its kind's defaults.

    A CPU's measured figures (``efficiency`` in its catalog entry, from a ``sizer validate`` report on
    that processor) stand for it; without them every CPU gets :data:`CPU_EFFICIENCIES`, fitted on one
    VM, and a prediction for another processor carries that VM's behaviour (issue 18: 40 % off on a
    second VM).

    Parameters
    ----------
    device : Device
        A catalog device (or one described by ``validation.detect`` with its catalog entry's figures).
    transformer : bool, default False
        For a layer graph generated from an architecture rather than a profiled workload.

    Returns
    -------
    Efficiencies
        Fractions of peak per unit [1], launch and per-step overhead [s], with their source.

    References
    ----------
    [spec-3.3], [spec-3.11]
    """
    measured = device.efficiency
    base = default_efficiencies(device.kind, transformer)
    if measured is None and not transformer and device.kind is DeviceKind.GPU:
        # a profiled network, eager through the vendor's kernel library: the mechanisms fitted across sources
        return stack_efficiencies(device, base)
    if measured is None:
        factor, source, _ = stack_factor(device) if transformer and device.kind is not DeviceKind.CPU else (1.0, "", True)
        if factor == 1.0 and not source:
            return base
        return replace(base, matrix=base.matrix * factor, source=f"{base.source}; tensor efficiency x {factor:g} for "
                       f"{source}")
    return replace(base, matrix=measured.fp32_matrix, tf32=measured.fp32_matrix, fp32_matrix=measured.fp32_matrix,
                   vector=measured.vector, memory=measured.memory, step_overhead=measured.step_overhead_s,
                   source=f"measured on {device.id}: {measured.source}")


# --- Serving (inference) -----------------------------------------------------------------------
# Fitted by `benchmarks/inference_accuracy.py --fit` on the fitting half of
# /work/shared/data/inference-benchmarks.csv (benchmarks/ACCURACY.md, "Inference"): the achieved
# fraction of memory bandwidth in decode, the fraction of the 16/8-bit matrix peak in prefill and
# large batches, and a fixed time per forward pass (scheduling, sampling, launches in a CUDA graph).
SERVING_MEMORY_EFFICIENCY = 0.9  # at the fit's bound: no kernel streams HBM faster
SERVING_MATRIX_EFFICIENCY = 0.606
SERVING_STEP_OVERHEAD = 0.00325  # s per forward pass
SERVING_SOURCE = ("fitted to TensorRT-LLM v0.6.1 and FasterTransformer measurements "
                  "(benchmarks/inference_accuracy.py; held-out accuracy in benchmarks/ACCURACY.md)")
# An engine built and tuned per system, as NVIDIA's MLPerf Inference harness builds TensorRT-LLM (engines per GPU,
# batch and token limits searched): batched iterations reach a higher share of the matrix peak than a default
# trtllm-bench or trtllm-serve engine. Chosen leave-one-source-out on the MLPerf v4.0 and v4.1 NVIDIA rows of
# serving-under-load.csv (each round's fold chooses 0.9 on the other: benchmarks/serving_accuracy.py --by-source),
# at the top of the searched grid and resting on MLPerf's recalled 628-token prompt mean: not verified.
SERVING_TUNED_MATRIX_EFFICIENCY = 0.9
SERVING_TUNED_SOURCE = ("NVIDIA MLPerf Inference v4.0/v4.1 TensorRT-LLM rows (serving-under-load.csv), chosen "
                        "leave-one-source-out by benchmarks/serving_accuracy.py --by-source; prompt mean recalled")
# FP8 serving quantises with static scales: TensorRT-LLM/ModelOpt and vLLM FP8 checkpoints carry one scale
# per weight tensor and per activation tensor, calibrated offline; the activation cast is fused into the
# kernel before the GEMM and the scales into its epilogue. None of training's per-step casts, amax
# histories and backward casts (FP8_SCALING_OVERHEAD, Transformer Engine delayed scaling) happens
# (docs/references.md [modelopt-fp8], [te-fp8]).
SERVING_FP8_SCALING = 0.0
SERVING_FP8_SOURCE = ("serving quantises with static per-tensor scales calibrated offline (TensorRT Model Optimizer, "
                      "vLLM FP8 W8A8), its casts fused into the neighbouring kernels (docs/references.md [modelopt-fp8])")
# NVFP4 serving on devices with FP4 tensor cores (Blackwell; sizer/runtimes/precision_support.py says which engine
# runs it there): the GEMMs at the FP4 peak, each with the work FP8's static scales do not have: every linear layer's
# input quantised at run time to E2M1 with one E4M3 scale per 16 values (a pass over the activations, in TensorRT-LLM's
# PyTorch backend a kernel of its own), the block scales loaded and applied in the GEMM's main loop, smaller tiles.
# Counted as a share of the GEMM time at the FP4 peak, fitted (benchmarks/low_precision_accuracy.py) on the rows the
# FP4 rate moves: TensorRT-LLM's perf-overview NVFP4 rows with outputs of at most 500 tokens (12 rows, B200 and GB200,
# Llama 3.3 70B and 3.1 405B), where the FP8 rate left them 14 % under; the only FP4 source in the data, so in sample.
# Attention stays at the FP8 rate (TensorRT-LLM's FMHA reads the FP8 KV cache in FP8; no FP4 attention kernel).
SERVING_FP4_OVERHEAD = 0.6
SERVING_FP4_SOURCE = ("NVFP4 GEMMs at the FP4 peak with a block-scale and activation-quantisation overhead of 60 % of "
                      "their time (fitted on TensorRT-LLM v1.0 perf-overview NVFP4 rows whose outputs are at most 500 "
                      "tokens: benchmarks/low_precision_accuracy.py), attention at the FP8 rate")
# Runtimes prefill at most this many tokens at once (TensorRT-LLM's max_num_tokens default, 8192;
# vLLM's chunked prefill uses 2048-8192): the activations held at once.
PREFILL_CHUNK_TOKENS = 8192
# "max load" in a throughput table: the largest batch that fits, at most TensorRT-LLM's default
# max_batch_size of 2048 (trtllm-build).
MAX_LOAD_BATCH = 2048


def serving_efficiencies(kind: DeviceKind, memory: float = SERVING_MEMORY_EFFICIENCY, matrix: float = SERVING_MATRIX_EFFICIENCY,
                         step_overhead: float = SERVING_STEP_OVERHEAD) -> Efficiencies:
    """Efficiencies of a serving runtime.

    GPUs and accelerators at the fitted serving figures, launches folded into the per-pass
    overhead (runtimes replay CUDA graphs); CPUs at their training calibration (llama.cpp-style
    runtimes) with the same per-pass overhead.

    Parameters
    ----------
    kind : DeviceKind
        The device's kind (a CPU, or a GPU or accelerator alike).
    memory : float, default 0.9
        Achieved fraction of memory bandwidth in decode [1].
    matrix : float, default 0.606
        Achieved fraction of the matrix peak in prefill and large batches [1].
    step_overhead : float, default 0.00325
        Fixed time per forward pass [s].

    Returns
    -------
    Efficiencies
        The serving efficiencies with their source.
    """
    if kind is DeviceKind.CPU:
        return replace(CPU_EFFICIENCIES, launch=0.0, step_overhead=step_overhead,
                       source="CPU defaults (sizer/engine/constants.py) with the serving per-pass overhead")
    return replace(GPU_EFFICIENCIES, matrix=matrix, memory=memory, launch=0.0, step_overhead=step_overhead,
                   fp8_scaling=SERVING_FP8_SCALING, source=SERVING_SOURCE)


def stack_efficiencies(device: Device, base: Efficiencies, fit: StackFit | None = None) -> Efficiencies:
    """A GPU's efficiencies for a profiled workload: the fitted unit shares times its library's factor.

    Parameters
    ----------
    device : Device
        A catalog GPU (CPUs and other accelerators keep ``base``).
    base : Efficiencies
        The defaults of its kind; vector efficiency and per-step overhead are kept.
    fit : StackFit, optional
        Figures to use instead of the committed fit (the leave-one-source-out scorer's refits).

    Returns
    -------
    Efficiencies
        ``matrix``, ``tf32``, ``fp32_matrix`` and ``vector`` times the library factor (at most 1),
        ``memory`` and ``launch`` as fitted.
    """
    from sizer.engine.stacks import kernel_library, stack_fit

    library = kernel_library(device)
    if device.kind is not DeviceKind.GPU or library is None:
        return base
    fit = fit or stack_fit()
    factor, fitted = fit.factor(library)
    said = f"{library} x {factor:g}" if fitted else f"{library}: cuDNN's assumed (no fitted runs; unverified)"

    def share(x: float) -> float:
        return min(1.0, x * factor)

    return replace(base, matrix=share(fit.matrix), tf32=share(fit.tf32), fp32_matrix=share(fit.fp32_matrix),
                   vector=share(base.vector), memory=fit.memory, launch=fit.launch, matrix_half=fit.matrix_half,
                   half_every_unit=True, source=f"one-device training mechanisms ({said}): {fit.source}")


# A batch given in tokens that is no whole number of sequences ("2M tokens" of 2,048: 976.6) is a rounded, published
# figure: every batch within this share of it stands for it, and the fastest layout among them is taken (the answer
# says which batch ran); a batch of whole sequences is kept where any layout splits it
BATCH_ROUNDING = 0.02
