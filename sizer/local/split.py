"""A local runtime's layer split over unequal devices (llama.cpp ``--split-mode layer``, e.g. RTX 3090 + RTX 4090).

llama.cpp gives each device a share of the layers in proportion to its memory (``--tensor-split`` by
default follows each device's free memory); every token passes the devices in turn, so a step takes the
sum of each device's time for its own layers, and each device holds its layers' weights and KV cache
beside its own compute buffers. Layers are whole: the shares are rounded by the largest remainder.

.. math:: L_i = \\mathrm{round}(L \\, M_i / \\textstyle\\sum_j M_j), \\quad t = \\sum_i (L_i / L) \\, t_i

``t_i``: the step with every layer on device ``i`` (the one engine under the runtime's kernels); the
embedding and head are split alike (a small error: llama.cpp keeps the head on the last device).

>>> layer_shares(80, [24e9, 24e9])
[40, 40]
>>> layer_shares(32, [24e9, 12e9])
[21, 11]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sizer.choices import DeviceKind
from sizer.engine.devices import DeviceTable
from sizer.errors import InputError
from sizer.hardware.schema import Device
from sizer.local.machine import local_table, prefill_seconds, wired_device
from sizer.passes.arithmetic import ServingCase, evaluate_serving, unfused_attention_seconds
from sizer.results import QuantityOut
from sizer.runtimes import Runtime
from sizer.runtimes.formats import WeightFormat
from sizer.runtimes.local_runtimes import LocalProfile
from sizer.schemas.serving import DeviceShare
from sizer.workloads.architecture import Architecture

# llama.cpp's row split (-sm row) cuts every matrix by rows over the devices and gathers each product on the main
# device: a synchronisation per matrix whose cost no run in the data measures
ROW_SPLIT_REFUSED = ("tensor or layer: llama.cpp's row split (-sm row) is not modelled: "
                     "../shared/data/local-inference-measurements.csv holds no row-split run (and one multi-GPU llama.cpp "
                     "run in all) to fit its per-matrix synchronisation; ask split layer (-sm layer, with tensor_split for "
                     "-ts ratios) or tensor")


def split_ratios(ratios: list[float] | None, devices: int) -> list[float] | None:
    """Check llama.cpp ``--tensor-split`` ratios (``-ts 3,1``) against the devices, InputError naming
    ``tensor_split`` where they do not fit.

    Parameters
    ----------
    ratios : list of float or None
        One non-negative weight per device, not all zero [1] (None: by memory).
    devices : int
        The devices of the split [1].

    Returns
    -------
    list of float or None
        The ratios, unchanged.
    """
    if ratios is None:
        return None
    if len(ratios) != devices:
        raise InputError("tensor_split", ratios, f"{devices} ratios, one per device in devices")
    if any(r < 0 for r in ratios) or not sum(ratios) > 0:
        raise InputError("tensor_split", ratios, "non-negative ratios, at least one above 0")
    if any(r == 0 for r in ratios):
        raise InputError("tensor_split", ratios, "every device at least one layer (a device with ratio 0 is not in the "
                                                 "split: leave it out of devices)")
    return ratios


def layer_shares(layers: int, memories: list[float]) -> list[int]:
    """Whole layers per device in proportion to its memory [B], largest remainder first, each at least one.

    Parameters
    ----------
    layers : int
        The model's layers, :math:`L` [1].
    memories : list of float
        Each device's memory, :math:`M_i` [B].

    Returns
    -------
    list of int
        Layers per device [1], summing to ``layers``; InputError naming ``devices`` where there are more
        devices than layers.
    """
    if len(memories) > layers:
        raise InputError("devices", len(memories), f"at most {layers} devices: each holds at least one layer")
    exact = [layers * m / sum(memories) for m in memories]
    shares = [max(int(x), 1) for x in exact]
    order = sorted(range(len(exact)), key=lambda i: exact[i] - int(exact[i]), reverse=True)
    i = 0
    while sum(shares) < layers:
        shares[order[i % len(order)]] += 1
        i += 1
    while sum(shares) > layers:  # the at-least-one floor overshot: take from the largest
        shares[shares.index(max(shares))] -= 1
    return shares


def check_unequal_devices(devices: list[Device], local: Runtime) -> None:
    """Refuse, naming ``devices``, a set of devices one machine's llama.cpp layer split cannot run: a device the
    runtime does not run on (MLX on an NVIDIA card), a CPU (the host runs offloaded layers: ``gpu_layers``), or
    Apple silicon (a Mac has one chip and takes no second GPU).

    Parameters
    ----------
    devices : list of Device
        The unequal devices, as the catalog found them.
    local : Runtime
        The local runtime the question runs under.
    """
    names = [d.id for d in devices]
    for device in devices:
        refusal = local.refusal(device_kind=device.runtime_kind)
        if refusal is not None:
            raise InputError("devices", names, f"devices {local.name} runs on: {refusal}")
        if device.kind is DeviceKind.CPU:
            raise InputError("devices", names, f"GPUs only: {device.name} is a CPU, which runs the layers left off the "
                                               "GPUs (give gpu_layers / --gpu-layers and host_cpu / --host-cpu)")
        if device.runtime_kind is DeviceKind.APPLE:
            raise InputError("devices", names, f"devices of one machine: {device.name} is a Mac's one chip, which "
                                               "shares its machine with no other GPU (ask for it as device alone)")


@dataclass(frozen=True)
class LayerSplit:
    """Times of the whole split and each device's share (a layer split over unequal devices; not
    :class:`sizer.serving.disaggregated.SplitAnswer`, the prefill and decode pools)."""

    prefill_seconds: float
    decode_seconds: float
    shares: list[DeviceShare]
    max_batch: int  # the most sequences every device holds the KV cache of

    @property
    def fits(self) -> bool:
        """Whether every device holds its layers, KV cache and buffers."""
        return all(s.fits for s in self.shares)


def split_layers(arch: Architecture, devices: list[Device], fmt: WeightFormat, profile: LocalProfile, case: ServingCase,
                 batch: int, ratios: list[float] | None = None) -> LayerSplit:
    """A layer split of ``arch`` over ``devices`` (each its own kind) under a local runtime's kernels.

    Parameters
    ----------
    arch : Architecture
        The model.
    devices : list of Device
        The unequal devices, in the order a token passes them.
    fmt : WeightFormat
        The weight format.
    profile : LocalProfile
        The local runtime's fitted kernels.
    case : ServingCase
        The formats and lengths served.
    batch : int
        Concurrent sequences [1].
    ratios : list of float, optional
        llama.cpp ``--tensor-split`` weights, one per device [1] (default: each device's memory).

    Returns
    -------
    LayerSplit
        Prefill and decode step seconds [s] summed over the devices' layer shares, each device's share
        and memory, and the largest batch every device holds [1].
    """
    wired = [wired_device(d)[0] for d in devices]
    memories = [d.memory.si("memory", "[information]") for d in wired]
    shares = layer_shares(arch.layers, ratios if ratios is not None else memories)
    prefill = decode = 0.0
    overhead = 0.0
    out: list[DeviceShare] = []
    max_batch: list[int] = []
    for device, layers, memory in zip(wired, shares, memories, strict=True):
        table = local_table(device, fmt, profile)
        a = evaluate_serving(case, table, np.zeros(1, dtype=np.int64), np.ones(1), np.full(1, float(batch)))
        share = layers / arch.layers
        step_overhead = float(table.step_overhead[0])
        overhead = max(overhead, step_overhead)
        decode += share * (float(a.decode_seconds[0]) - step_overhead)
        if not profile.flash_attention:  # each step also moves its attention scores
            decode += share * unfused_attention_seconds(arch, table, batch,
                                                        case.depth + case.prompt_len + case.output_len // 2)
        whole_prompt = batch * prefill_seconds(arch, fmt, table, profile.ubatch, case.prompt_len, case.depth, case.kv_bytes,
                                               flash_attention=profile.flash_attention)
        prefill += share * whole_prompt
        weights, kv = float(a.weights[0]) * share, float(a.kv_cache[0]) * share
        used = weights + kv + float(a.activations[0]) + float(a.reserve[0])
        max_batch.append(most_sequences(case, table, share, memory))
        out.append(DeviceShare(device=device.name, layers=layers, weights_memory=_gb(weights), kv_cache_memory=_gb(kv),
                               memory=_gb(used), device_memory=_gb(memory), fits=used <= memory))
    return LayerSplit(prefill_seconds=prefill, decode_seconds=decode + overhead, shares=out, max_batch=min(max_batch))


def most_sequences(case: ServingCase, table: DeviceTable, share: float, memory: float) -> int:
    """The most sequences one device of a layer split holds: its share of the weights and of each sequence's KV
    cache, with the compute buffers and reserve the engine gives that batch, within its memory.

    The bytes grow with the batch (the KV cache in proportion, the activations up to a full prefill chunk), so
    the largest batch that fits is found by bisection on the engine's own memory at each batch.

    Parameters
    ----------
    case : ServingCase
        The formats and lengths served.
    table : DeviceTable
        The device's rates and memory under the runtime (one row).
    share : float
        Its share of the layers [1].
    memory : float
        The memory it may use [B].

    Returns
    -------
    int
        Sequences [1]; 0 where not even one fits.
    """
    def used(batch: int) -> tuple[float, float]:  # bytes on the device [B], and of them one sequence's KV cache [B]
        a = evaluate_serving(case, table, np.zeros(1, dtype=np.int64), np.ones(1), np.full(1, float(batch)))
        kv = float(a.kv_cache[0]) * share
        return float(a.weights[0]) * share + kv + float(a.activations[0]) + float(a.reserve[0]), kv / batch

    one, kv_sequence = used(1)
    if one > memory:
        return 0
    # each further sequence adds at least its KV cache: no more than this many fit
    low, high = 1, 1 + int((memory - one) // kv_sequence) if kv_sequence > 0 else 1
    while low < high:  # the largest batch whose bytes fit: used() grows with the batch
        mid = (low + high + 1) // 2
        low, high = (mid, high) if used(mid)[0] <= memory else (low, mid - 1)
    return low


def _gb(value: float) -> QuantityOut:
    """Bytes [B] shown in GB."""
    return QuantityOut.convert(float(value), "B", "GB")
