"""One user's model on their own machine: a local runtime's prompt and generation speed.

The times are the one engine's (:func:`sizer.inference.serving.evaluate_serving`) at one sequence, with
the efficiencies of the runtime's fitted kernels for the device family and quantisation type
(:func:`sizer.runtimes.local_runtimes.local_efficiencies`) in place of the data-centre serving ones.
llama-bench's two tests map onto it: ``pp N`` is a prefill of N tokens, ``tg N`` N generated tokens
after a one-token prompt, both after ``depth`` tokens already in the KV cache (``-d``), whose
attention FLOP and KV reads the engine adds.

>>> from sizer.hardware.catalog import load_catalog
>>> from sizer.inference.formats import weight_format
>>> from sizer.runtimes import runtime
>>> from sizer.workloads.registry import find_model
>>> t = local_times(find_model("llama-3-8b"), load_catalog().find("RTX 4090"), weight_format("q4_k_m"),
...                 runtime("llama.cpp").profile, prompt_len=512, output_len=128)
>>> 80 < 1 / t.decode_seconds < 250  # tokens/s of tg128 (llama.cpp issue threads: ~130-150)
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sizer.engine.devices import DeviceTable
from sizer.errors import InputError
from sizer.hardware.schema import Device, Sourced
from sizer.inference.formats import WeightFormat
from sizer.inference.serving import ServingCase, evaluate_serving, serving_table
from sizer.results import Assumption, unit_factor
from sizer.runtimes import Purpose, Runtime, runtime
from sizer.runtimes.local_runtimes import (
    LocalProfile,
    default_local_runtime,
    device_family,
    device_kind,
    gpu_share,
    local_efficiencies,
    quant_key,
)
from sizer.workloads.architecture import Architecture


@dataclass(frozen=True)
class LocalTimes:
    """Seconds of one prompt of ``prompt_len`` tokens and of one generated token (at the mean depth)."""

    prefill_seconds: float
    decode_seconds: float


def local_table(device: Device, fmt: WeightFormat, profile: LocalProfile) -> DeviceTable:
    """The engine's device table for ``device`` under a local runtime's fitted kernels.

    Parameters
    ----------
    device : Device
        The catalog device.
    fmt : WeightFormat
        The weight format (its quantisation type picks the fitted kernel).
    profile : LocalProfile
        The runtime's fitted kernels per device family and quantisation type.

    Returns
    -------
    DeviceTable
        One row: the device's rates at the kernels' fitted shares of its peaks.
    """
    return serving_table((device,), fmt, (local_efficiencies(profile, device, fmt),))


def local_times(arch: Architecture, device: Device, fmt: WeightFormat, profile: LocalProfile, *, prompt_len: int,
                output_len: int, depth: int = 0, kv_bytes: float = 2.0, ubatch: int | None = None) -> LocalTimes:
    """Prompt and generation time of one sequence on one device under a local runtime.

    Parameters
    ----------
    arch, device, fmt : the model, the device and the weight format.
    profile : LocalProfile
        The runtime's fitted kernels.
    prompt_len, output_len : int
        Tokens of the prompt and of the generation [tokens].
    depth : int
        Tokens already in the KV cache before the prompt [tokens].
    kv_bytes : float
        Bytes per KV-cache value [B] (llama.cpp's default F16: 2).
    ubatch : int, optional
        Prompt tokens per pass [tokens] (default: the runtime's).

    Returns
    -------
    LocalTimes
        Seconds of the prompt and of one generated token [s].
    """
    table = local_table(device, fmt, profile)
    one = (np.zeros(1, dtype=np.int64), np.ones(1), np.ones(1))
    decode = evaluate_serving(ServingCase(arch, fmt, kv_bytes, prompt_len, output_len, split="layer", depth=depth),
                              table, *one)
    return LocalTimes(prefill_seconds(arch, fmt, table, ubatch or profile.ubatch, prompt_len, depth, kv_bytes),
                      float(decode.decode_seconds[0]))


def prefill_seconds(arch: Architecture, fmt: WeightFormat, table: DeviceTable, ubatch: int, prompt_len: int,
                    depth: int, kv_bytes: float = 2.0) -> float:
    r"""A prompt processed in micro-batches of ``ubatch`` tokens, as llama.cpp does (``-ub``): every
    micro-batch reads all weights once and attends over the tokens before it.

    .. math:: t = \lfloor p / u \rfloor \, t_{pass}(u, \bar d) + t_{pass}(p \bmod u, \bar d')

    each pass at the mean depth of its micro-batches (``d`` cached tokens before the prompt).

    Parameters
    ----------
    arch : Architecture
        The model.
    fmt : WeightFormat
        The weight format.
    table : DeviceTable
        One device's rates under the runtime (:func:`local_table`).
    ubatch : int
        Prompt tokens per pass, :math:`u` [tokens].
    prompt_len : int
        Prompt tokens, :math:`p` [tokens].
    depth : int
        Tokens already in the KV cache [tokens].
    kv_bytes : float
        Bytes per KV-cache value [B].

    Returns
    -------
    float
        Seconds of the whole prompt [s].
    """
    one = (np.zeros(1, dtype=np.int64), np.ones(1), np.ones(1))
    full, rest = divmod(prompt_len, ubatch)
    seconds = 0.0
    if full:
        mid = depth + (full - 1) * ubatch // 2
        case = ServingCase(arch, fmt, kv_bytes, ubatch, 1, split="layer", depth=mid)
        seconds += full * float(evaluate_serving(case, table, *one).prefill_seconds[0])
    if rest:
        case = ServingCase(arch, fmt, kv_bytes, rest, 1, split="layer", depth=depth + full * ubatch)
        seconds += float(evaluate_serving(case, table, *one).prefill_seconds[0])
    return seconds


def local_runtime(name: str | None, device: Device, fmt: WeightFormat,
                  field: str = "runtime") -> tuple[Runtime | None, list[Assumption]]:
    """The local runtime a question runs under (None: a serving runtime or the data-centre model), and the
    assumption saying which and why; InputError naming ``runtime`` where it cannot run the combination.

    Parameters
    ----------
    name : str or None
        The runtime asked (None: by device and format).
    device : Device
        The catalog device.
    fmt : WeightFormat
        The weight format.
    field : str
        The request field named in an error.

    Returns
    -------
    tuple of (Runtime or None, list of Assumption)
        The local runtime (None where a serving runtime or the data-centre model answers) and the
        assumption naming it.
    """
    if name is None:
        chosen, why = default_local_runtime(device, fmt)
        if chosen is None:
            return None, []
        return chosen, [Assumption(name="runtime", value=f"{chosen.name}, not given: {why}; give --runtime for another",
                                   source=chosen.sources[0])]
    chosen = runtime(name, field)
    if chosen.purpose is not Purpose.LOCAL:
        return None, []
    refusal = chosen.refusal(weights=fmt.name, device_kind=device_kind(device))
    if refusal is not None:
        raise InputError(field, name, f"a runtime that can run this: {refusal}")
    return chosen, [Assumption(name="runtime", value=f"{chosen.name} (given)", source=chosen.sources[0])]


def wired_device(device: Device) -> tuple[Device, list[Assumption]]:
    """``device`` with only the memory its GPU may wire (unified memory), and the assumption saying so.

    Parameters
    ----------
    device : Device
        The catalog device.

    Returns
    -------
    tuple of (Device, list of Assumption)
        The device with its memory cut to the wired share where it has unified memory (else itself), and
        the assumption saying so (none for a device without unified memory).
    """
    share = gpu_share(device)
    if share is None or share[0] >= 1.0:
        return device, ([] if share is None else [Assumption(name="unified memory", value=share[1], source="catalog")])
    total = device.memory.si("memory", "[information]")
    wired = Sourced(value=f"{total * share[0] * unit_factor('B', 'GB'):.4g} GB", source=share[1], verified=False,
                    note=f"{share[0]:.3g} of {device.memory.value}")
    note = Assumption(name="unified memory", value=f"the GPU may wire {share[0]:.3g} of {device.memory.value}: "
                      f"{wired.value} for weights, KV cache and buffers (raise it with sysctl iogpu.wired_limit_mb)",
                      source=share[1], verified=False)
    return device.model_copy(update={"memory": wired}), [note]


def kernel_assumption(profile: LocalProfile, device: Device, fmt: WeightFormat) -> Assumption:
    """The fitted kernels a local answer used, as an assumption.

    Parameters
    ----------
    profile : LocalProfile
        The runtime's fitted kernels.
    device : Device
        The catalog device (its family).
    fmt : WeightFormat
        The weight format (its quantisation type).

    Returns
    -------
    Assumption
        The prompt's share of the matrix peak, the generation's share of the bandwidth, the overhead per
        pass [ms] and how many runs they were fitted on.
    """
    family, quant = device_family(device), quant_key(fmt)
    k = profile.kernel(family, quant)
    generation = profile.generation(family, quant, device.memory_bandwidth.si("memory_bandwidth", "[information]/[time]"))
    fitted = f"fitted on {k.rows} measured runs" if k.rows else "the family's overall figure (no runs of this type)"
    # no CPU with AMX tiles among the fitted runs: their prompt share applied to the tile peak is an upper estimate
    tiles = f"; the matrix peak is the {device.matrix_tiles.isa} tiles' (no such CPU among the fitted runs: an " \
            "upper estimate of the prompt speed)" if device.kind == "cpu" and device.matrix_tiles else ""
    return Assumption(name="runtime kernels", value=f"{family} / {quant}: prompt at {k.prompt:.3g} of the matrix peak "
                      f"in micro-batches of {profile.ubatch} tokens, generation at {generation:.3g} of the memory "
                      f"bandwidth, {profile.overhead(family) * unit_factor('s', 'ms'):.3g} ms per pass; {fitted}{tiles}",
                      source=profile.source, verified=not tiles)
