"""One user's model on their own machine: a local runtime's prompt and generation speed.

The times are the one engine's (:func:`sizer.passes.arithmetic.evaluate_serving`) at one sequence, with
the efficiencies of the runtime's fitted kernels for the device family and quantisation type
(:func:`sizer.runtimes.local_runtimes.local_efficiencies`) in place of the data-centre serving ones.
llama-bench's two tests map onto it: ``pp N`` is a prefill of N tokens, ``tg N`` N generated tokens
after a one-token prompt, both after ``depth`` tokens already in the KV cache (``-d``), whose
attention FLOP and KV reads the engine adds.

>>> from sizer.hardware.catalog import load_catalog
>>> from sizer.runtimes.formats import weight_format
>>> from sizer.runtimes import runtime
>>> from sizer.workloads.registry import find_model
>>> t = local_times(find_model("llama-3-8b"), load_catalog().find("RTX 4090"), weight_format("q4_k_m"),
...                 runtime("llama.cpp").profile, prompt_len=512, output_len=128)
>>> 80 < 1 / t.decode_seconds < 250  # tokens/s of tg128 (llama.cpp issue threads: ~130-150)
True
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from sizer.choices import DeviceKind, Split
from sizer.engine.devices import DeviceTable
from sizer.errors import InputError
from sizer.hardware.schema import Device, Sourced
from sizer.passes.arithmetic import ServingCase, evaluate_serving, serving_table, unfused_attention_seconds
from sizer.results import Assumption, unit_factor
from sizer.runtimes import Purpose, Runtime, runtime
from sizer.runtimes.device_class import UNMEASURED_CLASSES, device_class
from sizer.runtimes.formats import WeightFormat
from sizer.runtimes.local_runtimes import (
    THREADS_SOURCE,
    LocalProfile,
    default_local_runtime,
    device_family,
    gpu_share,
    local_efficiencies,
    quant_key,
    thread_shares,
)
from sizer.workloads.architecture import Architecture

# Without flash attention ggml materialises each layer's attention scores in F32 (4 B): the KQ product is
# written, read and written again by the softmax, and read by the KQV product: 4 passes of 4 B per score
UNFUSED_SOURCE = "ggml-org/llama.cpp llama-graph build_attn_mha: without -fa, kq = mul_mat(k, q) in F32, soft_max_ext, mul_mat(v, kq)"


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
    decode = evaluate_serving(ServingCase(arch, fmt, kv_bytes, prompt_len, output_len, split=Split.LAYER, depth=depth),
                              table, *one)
    step = float(decode.decode_seconds[0])
    if not profile.flash_attention:
        step += unfused_attention_seconds(arch, table, 1, depth + prompt_len + output_len // 2)
    return LocalTimes(prefill_seconds(arch, fmt, table, ubatch or profile.ubatch, prompt_len, depth, kv_bytes,
                                      flash_attention=profile.flash_attention), step)


def prefill_seconds(arch: Architecture, fmt: WeightFormat, table: DeviceTable, ubatch: int, prompt_len: int,
                    depth: int, kv_bytes: float = 2.0, *, flash_attention: bool = True) -> float:
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
    flash_attention : bool
        Attention fused; off, each pass also moves its scores (:func:`unfused_attention_seconds`).

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
        case = ServingCase(arch, fmt, kv_bytes, ubatch, 1, split=Split.LAYER, depth=mid)
        seconds += full * float(evaluate_serving(case, table, *one).prefill_seconds[0])
        if not flash_attention:
            seconds += full * unfused_attention_seconds(arch, table, ubatch, mid + ubatch)
    if rest:
        case = ServingCase(arch, fmt, kv_bytes, rest, 1, split=Split.LAYER, depth=depth + full * ubatch)
        seconds += float(evaluate_serving(case, table, *one).prefill_seconds[0])
        if not flash_attention:
            seconds += unfused_attention_seconds(arch, table, rest, depth + full * ubatch + rest)
    return seconds


_SWITCH_WORDS = {"flash_attention": "flash attention on or off (llama.cpp -fa)",
                 "ubatch": "a prompt micro-batch (llama.cpp -ub, mlx-lm --prefill-step-size)",
                 "threads": "a CPU thread count (llama.cpp -t)"}


def run_settings(local: Runtime | None, device: Device, *, flash_attention: bool | None = None,
                 ubatch: int | None = None, threads: int | None = None,
                 host: Device | None = None) -> tuple[Runtime | None, list[Assumption]]:
    """The local runtime with the user's flash attention, micro-batch and thread count in its profile, each
    stated with its default where not given; InputError naming the field the runtime has no switch for.

    Parameters
    ----------
    local : Runtime or None
        The local runtime (:func:`local_runtime`; None: a serving engine or the data-centre model).
    device : Device
        The catalog device (threads: a CPU only).
    flash_attention : bool, optional
        Attention fused (default: the runtime's).
    ubatch : int, optional
        Prompt tokens per pass [tokens], 1 to the runtime's logical batch (default: the runtime's).
    threads : int, optional
        CPU threads of a CPU-only run, or of the host CPU running offloaded layers [1] (default: the CPU's
        physical cores).
    host : Device, optional
        The host CPU that runs the layers kept off the devices (``gpu_layers``); None: none offloaded.

    Returns
    -------
    tuple of (Runtime or None, list of Assumption)
        The runtime with the settings in its profile, and the assumptions stating them.
    """
    given: dict[str, object] = {"flash_attention": flash_attention, "ubatch": ubatch, "threads": threads}
    for field, value in given.items():
        if value is not None and (local is None or field not in local.profile.switches):
            who = "a serving engine or the data-centre model" if local is None else local.name
            raise InputError(field, value, f"no {field}: {who} has no switch for {_SWITCH_WORDS[field]}; "
                                           "leave it out, or give a local runtime that has it (--runtime llama.cpp)")
    if local is None:
        return None, []
    profile: LocalProfile = local.profile
    cpu = device if device.kind is DeviceKind.CPU else host  # the CPU the threads compute on, if any
    if threads is not None and cpu is None:
        raise InputError("threads", threads, f"a CPU device, or layers on the host CPU (gpu_layers): {device.name} "
                                             "computes on its GPU, where llama.cpp's threads only feed it (leave "
                                             "threads out)")
    if ubatch is not None and ubatch > profile.batch:
        raise InputError("ubatch", ubatch, f"at most the logical batch of {profile.batch} tokens ({local.name} "
                                           "runs no micro-batch larger than its batch)")
    profile = replace(profile, flash_attention=profile.flash_attention if flash_attention is None else flash_attention,
                      ubatch=ubatch or profile.ubatch, threads=threads)
    return replace(local, profile=profile), _settings_notes(local.name, profile, cpu or device, given)


def _settings_notes(name: str, profile: LocalProfile, device: Device, given: dict[str, object]) -> list[Assumption]:
    """The run settings a local answer used, each said as given or as the runtime's default (``device``: the CPU
    whose threads are stated, where one computes)."""
    how = {f: "given" if given[f] is not None else f"{name}'s default" for f in given}
    notes = []
    if "flash_attention" in profile.switches:
        fa = "on" if profile.flash_attention else ("off: every pass also writes and reads its attention scores in F32 "
                                                   "(16 B per score per layer), their memory buffer not counted")
        notes.append(Assumption(name="flash attention", value=f"{fa} ({how['flash_attention']})",
                                source=UNFUSED_SOURCE if not profile.flash_attention else profile.source))
    notes.append(Assumption(name="micro-batch", value=f"the prompt in passes of {profile.ubatch} tokens "
                            f"({how['ubatch']}; logical batch {profile.batch})", source=profile.source))
    if device.kind is DeviceKind.CPU and "threads" in profile.switches and device.cores is not None:
        threads = profile.threads or int(device.cores.value)
        compute, bandwidth = thread_shares(device, threads)
        default = "given" if given["threads"] is not None else f"not given: the {device.cores.value} physical cores"
        notes.append(Assumption(name="threads", value=f"{threads} ({default}): prompt at {compute:.3g} of the cores' "
                                f"compute, generation at {bandwidth:.3g} of the saturated bandwidth",
                                source=THREADS_SOURCE, verified=False))
    return notes


def local_runtime(asked: Runtime | None, device: Device, fmt: WeightFormat,
                  field: str = "runtime") -> tuple[Runtime | None, list[Assumption]]:
    """The local runtime a question runs under (None: a serving runtime or the data-centre model), and the
    assumption saying which and why; InputError naming ``runtime`` where it cannot run the combination.

    Parameters
    ----------
    asked : Runtime or None
        The runtime asked (the request's entry; None: by device and format).
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
    if asked is None:
        chosen, why = default_local_runtime(device, fmt)
        # no data-centre engine runs on a Mac or a CPU (formats quantising activations are refused by their peak)
        if chosen is None and device.runtime_kind in (DeviceKind.APPLE, DeviceKind.CPU) and not fmt.activations:
            mlx = ", or an MLX format (mlx-q4, mlx-q8)" if device.runtime_kind is DeviceKind.APPLE else ""
            raise InputError("weights", fmt.name, f"a format a local runtime runs on {device.name}: {fmt.name} is a "
                                                  "data-centre format that llama.cpp and mlx do not load; give a GGUF "
                                                  f"mix (q8_0 for 8 bits, q4_k_m for 4){mlx}")
        if chosen is None:  # the data-centre model answers: said, with the desk runtime where one runs this
            return None, [data_centre_note(device, fmt, why)]
        # the format picked the runtime; where that runtime cannot run on the device, the format cannot either
        refusal = chosen.refusal(device_kind=device.runtime_kind)
        if refusal is not None:
            raise InputError("weights", fmt.name, f"a format {device.name} runs: {why}, and {refusal}")
        return chosen, [Assumption(name="runtime", value=f"{chosen.name}, not given: {why}; give --runtime for another",
                                   source=chosen.sources[0])]
    chosen = asked
    if chosen.purpose is not Purpose.LOCAL:
        return None, [Assumption(name="runtime", value=f"{chosen.name} (given): the data-centre serving model with its "
                                 "memory shares", source=chosen.sources[0])]
    refusal = chosen.refusal(weights=fmt.name, device_kind=device.runtime_kind)
    if refusal is not None:
        raise InputError(field, chosen.name, f"a runtime that can run this: {refusal}")
    return chosen, [Assumption(name="runtime", value=f"{chosen.name} (given)", source=chosen.sources[0])]


def data_centre_note(device: Device, fmt: WeightFormat, why: str) -> Assumption:
    """The runtime assumption of a question no local runtime takes by default (bf16 on an RTX 4090): the data-centre
    serving model under the default serving engine's memory shares, and llama.cpp where it would run the question.

    Parameters
    ----------
    device : Device
        The catalog device.
    fmt : WeightFormat
        The weight format.
    why : str
        Why no local runtime was chosen (:func:`sizer.runtimes.local_runtimes.default_local_runtime`).

    Returns
    -------
    Assumption
        Named ``runtime``, its value starting with the serving engine's name.
    """
    from sizer.runtimes.serving_runtimes import DEFAULT_SERVING_RUNTIME

    desk = runtime("llama.cpp")
    hint = "; give --runtime llama.cpp for llama.cpp's kernels" if desk.refusal(
        weights=fmt.name, device_kind=device.runtime_kind) is None else ""
    engine = runtime(DEFAULT_SERVING_RUNTIME)
    return Assumption(name="runtime", value=f"{engine.name}, not given: {why} ({engine.name}'s memory shares){hint}",
                      source=engine.sources[0])


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
            "upper estimate of the prompt speed)" if device.kind is DeviceKind.CPU and device.matrix_tiles else ""
    # a device class the runtime's fit holds no run of (benchmarks/ACCURACY.md, "Local inference by source"): its
    # family's kernels are applied unscored, and said so
    cls = device_class(device)
    unscored = f"; no {cls} run among the fitted runs: the {family} family's kernels, not scored on this class" \
        if cls in UNMEASURED_CLASSES else ""
    return Assumption(name="runtime kernels", value=f"{family} / {quant}: prompt at {k.prompt:.3g} of the matrix peak "
                      f"in micro-batches of {profile.ubatch} tokens, generation at {generation:.3g} of the memory "
                      f"bandwidth, {profile.overhead(family) * unit_factor('s', 'ms'):.3g} ms per pass; {fitted}{tiles}"
                      f"{unscored}", source=profile.source, verified=not tiles and not unscored)
