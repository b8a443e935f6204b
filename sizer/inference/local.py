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

from sizer.hardware.schema import Device
from sizer.inference.formats import WeightFormat
from sizer.inference.serving import ServingCase, evaluate_serving, serving_table
from sizer.runtimes.local_runtimes import LocalProfile, local_efficiencies
from sizer.workloads.architecture import Architecture


@dataclass(frozen=True)
class LocalTimes:
    """Seconds of one prompt of ``prompt_len`` tokens and of one generated token (at the mean depth)."""

    prefill_seconds: float
    decode_seconds: float


def local_table(device: Device, fmt: WeightFormat, profile: LocalProfile):
    """The engine's device table for ``device`` under a local runtime's fitted kernels."""
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
    """
    table = local_table(device, fmt, profile)
    one = (np.zeros(1, dtype=np.int64), np.ones(1), np.ones(1))
    decode = evaluate_serving(ServingCase(arch, fmt, kv_bytes, prompt_len, output_len, split="layer", depth=depth),
                              table, *one)
    return LocalTimes(prefill_seconds(arch, fmt, table, ubatch or profile.ubatch, prompt_len, depth, kv_bytes),
                      float(decode.decode_seconds[0]))


def prefill_seconds(arch: Architecture, fmt: WeightFormat, table, ubatch: int, prompt_len: int, depth: int,
                    kv_bytes: float = 2.0) -> float:
    """A prompt processed in micro-batches of ``ubatch`` tokens, as llama.cpp does (``-ub``): every
    micro-batch reads all weights once and attends over the tokens before it.

    .. math:: t = \lfloor p / u \rfloor \, t_{pass}(u, \bar d) + t_{pass}(p \bmod u, \bar d')

    each pass at the mean depth of its micro-batches (``d`` cached tokens before the prompt)."""
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
