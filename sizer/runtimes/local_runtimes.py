"""Desktop runtimes (llama.cpp, MLX): one :class:`~sizer.runtimes.Runtime` each; ExLlamaV2 and MLC-LLM are named as
not modelled, with the reason.

Each runtime's profile (:class:`LocalProfile`) holds its kernel efficiencies per device family and
quantisation type: the fraction of the matrix peak its prompt kernels reach (a quantised llama.cpp
prompt runs through dequantising matrix kernels, at a fraction of the tensor peak that differs per type)
and the fraction of memory bandwidth its generation kernels reach; a fixed time per token; flash
attention, batch and micro-batch defaults and its offload rule. The efficiencies are fitted by
``benchmarks/local_inference_accuracy.py`` on one half of ``../shared/data/local-inference-measurements.csv``
and written to ``local_fit.yaml`` beside this module with the rows they were fitted on; the other half
scores them (benchmarks/ACCURACY.md, "Local inference").

>>> from sizer.runtimes import runtime
>>> runtime("llama.cpp").profile.ubatch
512
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sizer.choices import GGML_KV_CACHES, DeviceKind, KvCache
from sizer.datafile import load_yaml
from sizer.engine.constants import Efficiencies, serving_efficiencies
from sizer.hardware.schema import Device
from sizer.runtimes.formats import WeightFormat
from sizer.runtimes.gguf import GGUF_MIXES, MIX_DEFAULT
from sizer.runtimes.runtime import Purpose, Runtime

FIT_FILE = Path(__file__).with_name("local_fit.yaml")
ANY = "*"
# held-out runs a device family needs for a range of its own (fewer: the runtime's range over all families)
MIN_SPREAD_ROWS = 8
BANDWIDTH_REFERENCE = 400e9  # B/s: the bandwidth the fitted generation efficiencies are stated at
# Threads at which a desktop's memory bandwidth saturates in CPU-only generation: the i9-13900K's llama.cpp
# tg128 rises from 12.65 tokens/s on 4 threads to 18.27 on 8 and no further (15.7-16.7 on 16-32); read as
# min(1, t / t_sat) that is t_sat = 4 x 18.27 / 12.65 = 5.8 (../shared/data/local-inference-measurements.csv
# lines 503-512; those rows state no quantisation, so no held-out figure scores it)
THREADS_SATURATING_BANDWIDTH = 4 * 18.27 / 12.65
THREADS_SOURCE = ("i9-13900K llama.cpp tg128 on 4 to 32 threads (../shared/data/local-inference-measurements.csv "
                  "lines 503-512): bandwidth saturates near 5.8 threads; one CPU, not scored on held-out rows")

# macOS lets the GPU wire about 3/4 of unified memory above 36 GB and 2/3 below (the Metal device's
# recommendedMaxWorkingSetSize; llama.cpp prints it at start and raises it only with sysctl iogpu.wired_limit_mb)
APPLE_GPU_SHARE_LARGE = 0.75
APPLE_GPU_SHARE_SMALL = 2.0 / 3.0
APPLE_GPU_SHARE_SOURCE = ("macOS Metal recommendedMaxWorkingSetSize as llama.cpp reports it (ggml-metal); the 2/3 and "
                          "3/4 shares are recalled, not read from Apple documentation: unverified")


@dataclass(frozen=True)
class KernelEfficiency:
    """What a runtime's kernels reach on one device family for one quantisation type."""

    prompt: float  # of the matrix peak (tensor cores; FP32 SIMD where the device has no 16-bit peak) [1]
    generation: float  # of the memory bandwidth, reading weights and KV cache [1]
    rows: int = 0  # measured rows the figures were fitted on (0: a fallback)


@dataclass(frozen=True)
class LocalProfile:
    """A desktop runtime's fitted kernels and its defaults.

    ``kernels`` maps (device family, quantisation key) to efficiencies; a missing pair falls back to the
    family's overall figure, then to the runtime's. ``step_overhead`` [s] is paid per forward pass
    (kernel launches, sampling). ``batch`` and ``ubatch`` [tokens] are the logical and physical prompt
    batch (llama.cpp ``-b 2048 -ub 512``); ``flash_attention`` whether it computes attention fused.
    """

    kernels: dict[tuple[str, str], KernelEfficiency]  # (device family, quantisation key) -> efficiencies
    step_overhead: dict[str, float]  # device family -> s per forward pass
    bandwidth_exponent: dict[str, float]  # device family -> x: generation efficiency scales as (bandwidth / 400 GB/s)^x
    flash_attention: bool
    batch: int
    ubatch: int
    offload: str
    fitted_on: tuple[str, ...]
    source: str
    switches: frozenset[str] = frozenset()  # run settings a user may change: flash_attention, ubatch, threads
    threads: int | None = None  # CPU threads of a CPU-only run (None: the CPU's physical cores)
    # device family -> "prompt" / "generation" -> low, high (10th-90th percentile of measured / predicted speed on
    # the held-out half) and n: the answer's range (benchmarks/local_inference_accuracy.py writes it)
    speed_spread: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def kernel(self, family: str, quant: str) -> KernelEfficiency:
        """The efficiencies for a device family and quantisation key, with the fallbacks above.

        Parameters
        ----------
        family : str
            Device family (:func:`device_family`).
        quant : str
            Quantisation key (:func:`quant_key`).

        Returns
        -------
        KernelEfficiency
            Prompt efficiency (of the matrix peak) [1], generation efficiency (of memory bandwidth) [1], rows fitted on.

        Raises
        ------
        KeyError
            A profile without even the ``*/*`` fallback.
        """
        for key in ((family, quant), (family, ANY), (ANY, quant), (ANY, ANY)):
            if key in self.kernels:
                return self.kernels[key]
        raise KeyError(f"no fitted kernels for {family}/{quant}")

    def spread(self, family: str, test: str) -> dict[str, float] | None:
        """The range factors of a speed on a device family: the family's own where its held-out runs number
        :data:`MIN_SPREAD_ROWS` or more, else the runtime's over every family, else None (no held-out runs).

        Parameters
        ----------
        family : str
            Device family (:func:`device_family`).
        test : str
            "prompt" or "generation".

        Returns
        -------
        dict or None
            ``low`` (at most 1) and ``high`` (at least 1) [1]: the expected speed times these bound the range;
            ``n`` [runs].
        """
        for key in (family, ANY):
            entry = self.speed_spread.get(key, {}).get(test)
            if entry and entry["n"] >= MIN_SPREAD_ROWS:  # the expected speed stays inside its range, even where biased
                return {"low": min(float(entry["low"]), 1.0), "high": max(float(entry["high"]), 1.0), "n": entry["n"]}
        return None

    def overhead(self, family: str) -> float:
        """Time a forward pass costs beyond its kernels on a device family (launches, sampling).

        Parameters
        ----------
        family : str
            Device family (:func:`device_family`).

        Returns
        -------
        float
            Seconds per forward pass [s]: the family's fitted figure, else the runtime's, else 0.
        """
        return self.step_overhead.get(family, self.step_overhead.get(ANY, 0.0))

    def generation(self, family: str, quant: str, bandwidth: float) -> float:
        r"""Fraction of ``bandwidth`` [B/s] the generation kernels reach: the fitted figure at 400 GB/s times
        :math:`(B / 400\,GB/s)^x` (a GPU's reach grows slower than its memory channels: Apple's Max and Ultra
        chips stream a smaller share than the base and Pro chips), at most 1.

        Parameters
        ----------
        family : str
            Device family (:func:`device_family`).
        quant : str
            Quantisation key (:func:`quant_key`).
        bandwidth : float
            The device's memory bandwidth B [B/s].

        Returns
        -------
        float
            Share of the bandwidth generation reaches [1], at most 1.
        """
        x = self.bandwidth_exponent.get(family, self.bandwidth_exponent.get(ANY, 0.0))
        scale: float = (bandwidth / BANDWIDTH_REFERENCE) ** x
        return min(self.kernel(family, quant).generation * scale, 1.0)


def thread_shares(device: Device, threads: int | None) -> tuple[float, float]:
    r"""The shares of a CPU's matrix peak and of its generation bandwidth that ``threads`` threads reach.

    Compute scales with the threads up to the physical cores; streaming the weights saturates the memory
    channels from :math:`t_{sat}` threads (:data:`THREADS_SATURATING_BANDWIDTH`):

    .. math:: s_{compute} = \min(t, n) / n, \qquad s_{bandwidth} = \min(1, t / t_{sat})

    Fitted efficiencies hold at all cores and at saturated bandwidth; a GPU gives (1, 1).

    Parameters
    ----------
    device : Device
        A catalog device (its ``cores``, :math:`n`, where it is a CPU).
    threads : int or None
        Threads of the run, :math:`t` [1] (None: all physical cores).

    Returns
    -------
    tuple of (float, float)
        Share of the matrix peak [1] and share of the bandwidth efficiency [1], each in (0, 1].
    """
    if device.kind is not DeviceKind.CPU or device.cores is None:
        return 1.0, 1.0
    cores = float(device.cores.value)
    t = cores if threads is None else float(threads)
    return min(t, cores) / cores, min(1.0, t / THREADS_SATURATING_BANDWIDTH)


def device_family(device: Device) -> str:
    """The family a runtime's kernels are fitted per: ``nvidia``, ``apple``, ``amd``, ``intel`` GPUs, or ``cpu``.

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    str
        ``cpu``, ``nvidia``, ``apple``, ``amd``, ``intel``, or ``other`` for another vendor's GPU.
    """
    if device.kind is DeviceKind.CPU:
        return "cpu"
    vendor = device.vendor.lower()
    return next((v for v in ("nvidia", "apple", "amd", "intel") if v in vendor), "other")


def quant_key(fmt: WeightFormat) -> str:
    """The quantisation key kernels are fitted per: a GGUF mix's main ggml type (``Q4_K``, ``Q8_0`` ...),
    ``F16`` for 16-bit weights, else the format's name.

    Parameters
    ----------
    fmt : WeightFormat
        A serving weight format (:mod:`sizer.runtimes.formats`).

    Returns
    -------
    str
        The key, e.g. ``"Q4_K"``, ``"F16"``, ``"int4"``.
    """
    if fmt.gguf_mix is not None:
        key = MIX_DEFAULT[fmt.gguf_mix]
        return "F16" if key in ("F16", "BF16", "F32") else key
    return "F16" if fmt.name in ("fp16", "bf16") else fmt.name


def _kernels(raw: dict[str, dict[str, Any]]) -> dict[tuple[str, str], KernelEfficiency]:
    kernels = {}
    for key, value in raw.items():
        family, quant = key.split("/", 1)  # "nvidia/Q4_K", "*/*"
        kernels[family, quant] = KernelEfficiency(**value)
    return kernels


def fitted() -> dict[str, Any]:
    """The fitted profiles of local_fit.yaml (written by benchmarks/local_inference_accuracy.py).

    Returns
    -------
    dict of str to Any
        Per runtime name: ``kernels``, ``step_overhead`` [s], ``bandwidth_exponent`` [1] and ``fitted_on``.
    """
    profiles: dict[str, Any] = load_yaml(FIT_FILE, "local_fit")
    return profiles


def _profile(name: str, *, flash_attention: bool, batch: int, ubatch: int, offload: str, source: str,
             switches: frozenset[str]) -> LocalProfile:
    raw = fitted().get(name, {})
    return LocalProfile(kernels=_kernels(raw.get("kernels", {})), step_overhead=dict(raw.get("step_overhead", {})),
                        bandwidth_exponent=dict(raw.get("bandwidth_exponent", {})),
                        speed_spread=dict(raw.get("speed_spread", {})), flash_attention=flash_attention, batch=batch,
                        ubatch=ubatch, offload=offload, fitted_on=tuple(raw.get("fitted_on", ())), source=source,
                        switches=switches)


def local_efficiencies(profile: LocalProfile, device: Device, fmt: WeightFormat) -> Efficiencies:
    """The engine's efficiencies for ``device`` under a local runtime: its fitted prompt and generation
    kernels for the format's quantisation type and its per-pass time (no size dependence: batch 1).

    Parameters
    ----------
    profile : LocalProfile
        The runtime's fitted profile.
    device : Device
        A catalog device.
    fmt : WeightFormat
        The weight format served.

    Returns
    -------
    Efficiencies
        The serving efficiencies of the device's kind with the matrix shares [1], memory share [1] and
        per-pass overhead [s] of the profile.
    """
    family = device_family(device)
    k = profile.kernel(family, quant_key(fmt))
    memory = profile.generation(family, quant_key(fmt), device.memory_bandwidth.si("memory_bandwidth",
                                                                                   "[information]/[time]"))
    compute_share, bandwidth_share = thread_shares(device, profile.threads)
    prompt, memory = k.prompt * compute_share, memory * bandwidth_share
    base = serving_efficiencies(device.kind)
    return replace(base, matrix=prompt, tf32=prompt, fp32_matrix=prompt, memory=memory, matrix_half=0.0,
                   step_overhead=profile.overhead(family), source=profile.source)


def gpu_share(device: Device) -> tuple[float, str] | None:
    """The share of a unified memory the GPU may wire, with its source (None: dedicated device memory).

    Parameters
    ----------
    device : Device
        A catalog device.

    Returns
    -------
    tuple of (float, str) or None
        The share of the memory the GPU may use [1] and its source; None for dedicated device memory.
    """
    if not device.unified_memory:
        return None
    if device.vendor.lower() != "apple":
        return 1.0, "the GPU may use all of the unified memory (Linux; no wired limit known)"
    total = device.memory.si("memory", "[information]")
    share = APPLE_GPU_SHARE_LARGE if total > 36e9 else APPLE_GPU_SHARE_SMALL
    return share, APPLE_GPU_SHARE_SOURCE


_GGUF = frozenset(mix.lower() for mix in GGUF_MIXES)  # the weight formats' names (sizer.runtimes.formats)
_MLX = frozenset(f"mlx-q{b}" + ("" if g == 64 else f"-g{g}") for b in (4, 5, 6, 8) for g in (64, 32))
_PLAIN = frozenset({"fp16", "bf16", "fp32"})
# gpt-oss's published MXFP4 checkpoint: ggml has the MXFP4 block type (ggml-common.h @ 01243c58, in GGML_BLOCKS) and
# llama.cpp runs gpt-oss-20b-MXFP4.gguf (../shared/data/local-inference-measurements.csv lines 592, 705: llmfit via llamacpp)
_MXFP4 = frozenset({"mxfp4"})
_LLAMA_CPP_SOURCE = ("ggml-org/llama.cpp (llama-bench defaults: -b 2048 -ub 512, -fa auto, -ngl all); efficiencies "
                     "fitted by benchmarks/local_inference_accuracy.py on half of "
                     "../shared/data/local-inference-measurements.csv")

RUNTIMES: tuple[Runtime, ...] = (
    Runtime(name="llama.cpp", purpose=Purpose.LOCAL, aliases=("llamacpp", "llama-cpp", "ollama", "lm-studio"),
            summary="llama.cpp (GGUF, one sequence; prompt through dequantising matrix kernels, generation reading "
                    "every weight per token; layers split over devices, the rest on the CPU)",
            sources=("https://github.com/ggml-org/llama.cpp", "../shared/data/local-inference-measurements.csv"),
            weight_formats=_GGUF | _PLAIN | _MXFP4, device_kinds=frozenset({DeviceKind.GPU, DeviceKind.CPU, DeviceKind.APPLE}),
            # --cache-type-k/-v (llama.cpp common/arg.cpp): the float types and ggml's q8_0 and q4_0 blocks
            kv_caches=frozenset({KvCache.FP32, KvCache.FP16, KvCache.BF16}) | GGML_KV_CACHES,
            profile=_profile("llama.cpp", flash_attention=True, batch=2048, ubatch=512,
                             offload="layers beyond --n-gpu-layers on the host CPU, their KV cache with them",
                             source=_LLAMA_CPP_SOURCE,
                             switches=frozenset({"flash_attention", "ubatch", "threads"}))),  # -fa, -ub, -t
    Runtime(name="mlx", purpose=Purpose.LOCAL, aliases=("mlx-lm",),
            summary="MLX / mlx-lm on Apple silicon (affine-quantised weights, prompt in steps of 2048 tokens)",
            sources=("https://github.com/ml-explore/mlx-lm", "../shared/data/local-inference-measurements.csv"),
            weight_formats=_MLX | _PLAIN, device_kinds=frozenset({DeviceKind.APPLE}),
            kv_caches=frozenset({KvCache.FP32, KvCache.FP16, KvCache.BF16}),  # the model's dtype (mlx-lm's KV quantisation not modelled)
            profile=_profile("mlx", flash_attention=True, batch=2048, ubatch=2048, offload="none (unified memory)",
                             source="ml-explore/mlx-lm (prefill_step_size 2048); efficiencies fitted by "
                                    "benchmarks/local_inference_accuracy.py on half of its mlx-lm and Rapid-MLX rows",
                             switches=frozenset({"ubatch"}))),  # --prefill-step-size; attention always fused
)


# Runtimes users ask for that sizer does not model, and why: the registry's message for their names. Issue 40 asked
# for ExLlamaV2 and MLC-LLM where the data supports them; ../shared/data/local-inference-measurements.csv (1173
# rows) holds 2 ExLlama v1 runs (one RTX 3060: a GPTQ prompt and generation), no ExLlamaV2 and no MLC-LLM run, so
# neither can be fitted, and a by-source score (benchmarks/local_inference_by_source.py) needs two sources.
_EXLLAMA = ("ExLlamaV2 is not modelled: ../shared/data/local-inference-measurements.csv holds 2 ExLlama (v1) runs "
            "from one source (one RTX 3060) and none of v2, too few to fit its kernels or score them by source; it "
            "runs on CUDA and ROCm GPUs only (its README, recalled), not on Apple silicon or CPUs; llama.cpp runs the same models in GGUF")
_MLC = ("MLC-LLM is not modelled: ../shared/data/local-inference-measurements.csv holds no MLC-LLM run, so its "
        "kernels cannot be fitted; llama.cpp (GGUF) and mlx (Apple silicon) are the local runtimes modelled")
NOT_MODELLED: dict[str, str] = {
    **{spelling: _EXLLAMA for spelling in ("exllamav2", "exllama-v2", "exllama", "exl2")},
    **{spelling: _MLC for spelling in ("mlc-llm", "mlc", "mlcllm")}}


def default_local_runtime(device: Device, fmt: WeightFormat) -> tuple[Runtime | None, str]:
    """The local runtime a question gets when it names none, and why (None: the data-centre serving model).

    GGUF weights run under llama.cpp, MLX-quantised weights under mlx; so does anything on a CPU, Apple silicon or another unified-memory
    device, where llama.cpp is the common runtime.

    Parameters
    ----------
    device : Device
        A catalog device.
    fmt : WeightFormat
        The weight format served.

    Returns
    -------
    tuple of (Runtime or None, str)
        The runtime (None: the data-centre serving model) and the sentence that says why.
    """
    if fmt.name in _GGUF:
        return RUNTIMES[0], f"{fmt.name} is a GGUF mix, which llama.cpp runs"
    if fmt.name in _MLX:
        return RUNTIMES[1], f"{fmt.name} is MLX's quantisation, which mlx-lm runs"
    if (device.kind is DeviceKind.CPU or device.unified_memory) and fmt.name in _PLAIN | _MXFP4:
        return RUNTIMES[0], f"{device.name} is a desk machine; llama.cpp is its usual runtime"
    return None, f"{fmt.name} is not a GGUF or MLX format: the data-centre serving model"
