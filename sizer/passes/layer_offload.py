"""CPU offload of a local runtime's layers (llama.cpp ``--n-gpu-layers``, issue 16).

With ``gpu_layers`` N of a model's L layers on the devices, the other L - N run on the host CPU:
their weights (and their KV cache) stay in host memory and are read at the host's memory
bandwidth, their FLOP run on its cores. Every pass crosses both in turn, so its time is the
devices' share plus the host's (:func:`sizer.passes.arithmetic.evaluate_serving`), and device
memory holds only the N layers. The host is a catalog CPU (its ``memory_bandwidth`` and peaks,
each with its source); by default a desktop DDR5 host, the usual llama.cpp machine. Apple's
unified memory has no separate host memory, so offload does not apply there. The host's RAM holds
the offloaded layers' weights and KV cache (:func:`sizer.passes.arithmetic.host_share`): a host too
small does not fit, as a device too small does not. Its size is the one given (``host_memory``),
else the catalog CPU's (an assumed desktop configuration, said so).

>>> from sizer.hardware.catalog import load_catalog
>>> from sizer.runtimes.formats import weight_format
>>> from sizer.workloads.registry import find_model
>>> c = load_catalog()
>>> table, notes = offload_host(40, None, c.find("RTX 4090"), find_model("llama-2-70b"), weight_format("q4_k_m"),
...                             lambda default: c.find(default))
>>> table.devices[0].name, notes[0].name
('AMD Ryzen 9 7950X', 'CPU offload')
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pint

from sizer.choices import DeviceKind
from sizer.engine.devices import DeviceTable
from sizer.errors import InputError
from sizer.hardware.schema import Device
from sizer.passes.arithmetic import serving_table
from sizer.results import Assumption, unit_factor
from sizer.runtimes.formats import WeightFormat
from sizer.workloads.architecture import Architecture

DEFAULT_HOST = "ryzen-9-7950x"  # two channels of DDR5-5200, 83.2 GB/s: a typical llama.cpp desktop


def check_gpu_layers(gpu_layers: int | None, arch: Architecture) -> None:
    """0 <= N <= the model's layers, or InputError naming ``gpu_layers``.

    Parameters
    ----------
    gpu_layers : int or None
        Layers on the devices, N [1] (None: all).
    arch : Architecture
        The model (its layers).
    """
    if gpu_layers is not None and not 0 <= gpu_layers <= arch.layers:
        raise InputError("gpu_layers", gpu_layers, f"0 to {arch.layers} (the layers of {arch.name})")


def offload_refusal(device: Device, arch: Architecture) -> str | None:
    """Why layers cannot be offloaded from ``device`` (None where they can).

    Parameters
    ----------
    device : Device
        The device the layers would leave.
    arch : Architecture
        The model (its layers, named in the reason).

    Returns
    -------
    str or None
        The reason for a CPU or a unified-memory device; None where offload applies.
    """
    if device.kind is DeviceKind.CPU:
        return f"no offload on a CPU ({device.name} runs every layer already)"
    if device.unified_memory:
        return (f"offload does not apply to {device.name}: its unified memory is shared by CPU and GPU (there is no "
                f"separate host memory); all {arch.layers} layers stay on it")
    return None


def given_host_memory(host_memory: pint.Quantity[float] | None) -> float | None:
    """RAM of the host as given (``'128 GB'``, read where the request was built) [B], None where not given.

    Parameters
    ----------
    host_memory : pint.Quantity or None
        The amount [B]; None: not given.

    Returns
    -------
    float or None
        Bytes [B], positive; None where not given.
    """
    if host_memory is None:
        return None
    return float(host_memory.to("B").magnitude)  # above zero: the request's field refuses zero


def host_table(gpu_layers: int, host_cpu: str | None, host: Device, arch: Architecture, weights: WeightFormat,
               host_memory: pint.Quantity[float] | None = None) -> tuple[DeviceTable, Assumption]:
    """The host CPU's serving table for the offloaded layers (its memory the RAM given, else the
    catalog CPU's), and the note saying which host and why.

    Parameters
    ----------
    gpu_layers : int
        Layers on the devices [1].
    host_cpu : str or None
        The catalog CPU running the rest as the user named it (None: :data:`DEFAULT_HOST`).
    host : Device
        Its catalog entry (found where the request met its catalog, :func:`sizer.asked.on_catalog`), or the
        default's; refused unless a CPU.
    arch : Architecture
        The model.
    weights : WeightFormat
        The weight format (the host needs a peak for its compute precision).
    host_memory : object
        The host's RAM as given, e.g. '128 GB' [B]; None: the catalog CPU's.

    Returns
    -------
    tuple of (DeviceTable, Assumption)
        The host's one-row table (memory [B] the RAM) and the note describing the offload.
    """
    if host.kind is not DeviceKind.CPU:
        raise InputError("host_cpu", host_cpu, f"a CPU of the catalog ({host.name} is a {host.kind})")
    table = serving_table((host,), weights)
    ram = given_host_memory(host_memory)
    if ram is not None:
        table = dataclasses.replace(table, memory=np.asarray([ram]))
    ram_note = (f"{ram * unit_factor('B', 'GB'):.4g} GB of RAM (given)" if ram is not None else
                f"{host.memory.value} of RAM, the catalog's figure for {host.name}; give host_memory / --host-memory")
    if not table.supported[0]:
        raise InputError("gpu_layers", gpu_layers, f"{arch.layers}: {host.name} has no {weights.compute} peak for the "
                                                   f"offloaded layers in {weights.name}")
    note = Assumption(
        name="CPU offload",
        value=f"{gpu_layers} of {arch.layers} layers on the devices, {arch.layers - gpu_layers} on {host.name}"
              + (" (default host; give host_cpu / --host-cpu)" if host_cpu is None else "")
              + f": their weights and KV cache in host memory ({ram_note}), read at its {host.memory_bandwidth.value} "
              f"({host.memory_type}) x the CPU serving efficiency, their FLOP on its cores; a pass takes the devices' "
              "share of the layers plus the host's (embeddings and head split alike; the activations' hop over PCIe "
              "neglected; llama.cpp may stream large prompt batches to the GPU instead, then prefill is faster)",
        source=f"llama.cpp --n-gpu-layers; host memory bandwidth: {host.memory_bandwidth.source}")
    return table, note


def check_no_host(host_cpu: str | None, host_memory: object) -> None:
    """Without offloaded layers, no host to describe: InputError naming the field given for one.

    Parameters
    ----------
    host_cpu : str or None
        The host CPU given, if any.
    host_memory : object
        The host's RAM as given, e.g. '128 GB' [B], if any.
    """
    if host_cpu is not None:
        raise InputError("host_cpu", host_cpu, "gpu_layers below the model's layers as well (a host runs offloaded layers)")
    if host_memory is not None:
        raise InputError("host_memory", host_memory, "gpu_layers below the model's layers as well (host memory holds "
                                                     "offloaded layers; served layers live in device memory)")


def offload_host(gpu_layers: int | None, host_cpu: str | None, device: Device, arch: Architecture, weights: WeightFormat,
                 find_host: Callable[[str], Device],
                 host_memory: pint.Quantity[float] | None = None) -> tuple[DeviceTable | None, list[Assumption]]:
    """The host CPU's serving table where some layers are offloaded (None where none are), and the notes saying so.

    Parameters
    ----------
    gpu_layers : int or None
        Layers on the devices [1] (None: all).
    host_cpu : str or None
        The catalog CPU running offloaded layers (None: the default desktop).
    device : Device
        The device the layers leave (refused for a CPU or unified memory).
    arch : Architecture
        The model.
    weights : WeightFormat
        The weight format.
    find_host : callable
        The host's catalog entry, given the default's id (:data:`DEFAULT_HOST`): ``host_cpu``'s entry where given
        (:meth:`sizer.asked.Asked.host`); called only where layers are offloaded.
    host_memory : object
        The host's RAM as given, e.g. '128 GB' [B]; None: the catalog CPU's.

    Returns
    -------
    tuple of (DeviceTable or None, list of Assumption)
        The host's table and the offload note; None and no note where every layer is on the devices.
    """
    check_gpu_layers(gpu_layers, arch)
    if gpu_layers is None or gpu_layers == arch.layers:
        check_no_host(host_cpu, host_memory)
        return None, []
    refusal = offload_refusal(device, arch)
    if refusal is not None:
        raise InputError("gpu_layers", gpu_layers, f"{arch.layers} or none: {refusal}")
    table, note = host_table(gpu_layers, host_cpu, find_host(DEFAULT_HOST), arch, weights, host_memory)
    return table, [note]


def host_memory_note(needed: float, table: DeviceTable) -> Assumption:
    """What the host keeps [B] against its RAM, as an assumption (``does not fit`` where it is short).

    Parameters
    ----------
    needed : float
        Offloaded weights and KV cache the host keeps [B].
    table : DeviceTable
        The host's table (its memory [B]).

    Returns
    -------
    Assumption
        Named ``host memory``, or ``host memory does not fit`` with what to change.
    """
    gb = unit_factor("B", "GB")
    short = needed > float(table.memory[0])
    return Assumption(name="host memory does not fit" if short else "host memory",
                      value=f"{needed * gb:.3g} GB of offloaded weights and their KV cache in host memory, of "
                            f"{float(table.memory[0]) * gb:.3g} GB ({table.devices[0].name})"
                            + ("; offload fewer layers (a larger gpu_layers), a smaller format, or give host_memory "
                               "(--host-memory) if the host has more" if short else ""),
                      source="llama.cpp keeps offloaded layers and their KV cache on the CPU")
