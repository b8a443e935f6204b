"""Training time of a profiled workload: per-layer roofline, calibration and cross-device reference.

Three modes, each with its own range (spec §3.11; issue "a time model that matches measurements"):

- ``datasheet``: the device's catalog figures and the default efficiencies;
- ``calibrated``: efficiencies and per-step overhead fitted to the user's own runs
  (``sizer calibrate``, :mod:`sizer.calibration`);
- ``reference``: one measured throughput on one device sets how well this workload uses
  hardware, and that carries over to the target device (Habitat's idea, ATC'21).

The low-high range is the expected value times factors set from the observed spread of errors
of each mode (``sizer/error_spread.yaml``, written by ``benchmarks/accuracy.py``), and it never
goes below the physical limit ``C / (n R_peak)``.
"""
from __future__ import annotations

import functools
import math
from collections import defaultdict
from pathlib import Path
from typing import Literal

import yaml

from sizer.catalog_schema import Device
from sizer.deadline import check_deadline
from sizer.errors import InputError
from sizer.layer_time import (BACKWARD_FLOP_FACTOR, Efficiencies, default_efficiencies, device_rates, layer_times,
                              optimizer_seconds)
from sizer.precision import weight_bytes
from sizer.profile import Profile
from sizer.results import Assumption, Estimate, Model, QuantityOut, RangeOut
from sizer.timing import FULL_SHARDING_TRAFFIC, link_of, ring_allreduce_time
from sizer.units import Quantity

Mode = Literal["datasheet", "calibrated", "reference"]
SPREAD_FILE = Path(__file__).with_name("error_spread.yaml")
# How much of a reference run's deviation from the datasheet model carries over to another
# device. Part of that deviation belongs to the workload (it carries over), part to the
# reference device itself (it does not); with the two about equal, the best linear combination
# weighs them by half. Out of sample (defaults fitted on ResNet rows, BERT predicted, and the
# reverse; benchmarks/accuracy.py) 0.5 beat carrying all of it over: median 14-16 % against
# 16 %, p90 33-39 % against 44-45 %.
REFERENCE_WEIGHT = 0.5


@functools.lru_cache(maxsize=1)
def error_spread() -> dict[str, dict]:
    """Per mode: the factors of the expected time that bound the range, and where they come from."""
    return yaml.safe_load(SPREAD_FILE.read_text(encoding="utf-8"))["modes"]


class LayerGroupTime(Model):
    kind: str
    layers: int
    time_per_step: QuantityOut
    share: float
    bound: str


class ProfileTimeResult(Model):
    workload: str
    device: str
    count: int
    precision: str
    batch_size: float
    mode: Mode
    step_time: RangeOut
    throughput: RangeOut
    training_time: RangeOut | None
    steps: float | None
    training_compute: QuantityOut | None
    physical_limit_per_step: QuantityOut
    layer_groups: list[LayerGroupTime]
    optimizer_time_per_step: QuantityOut
    overhead_per_step: QuantityOut
    allreduce_time_per_step: QuantityOut
    efficiencies: dict[str, float]
    assumptions: list[Assumption]


def expected_step_seconds(profile: Profile, device: Device, precision: str, batch_size: float, optimizer: str,
                          efficiency: Efficiencies, count: int = 1, sharding: str = "none",
                          overlap_allreduce: bool = False) -> tuple[float, list, float, float]:
    """Expected seconds per step on each of ``count`` devices, with the layer times behind it.

    Returns (step seconds, layer times, optimizer seconds, all-reduce seconds).
    """
    rates = device_rates(device, precision)
    per_device = batch_size / count
    layers = layer_times(profile, rates, efficiency, per_device)
    kernels = sum(layer.seconds for layer in layers)
    params = profile.params / count if sharding == "full" else profile.params
    update = optimizer_seconds(params, precision, optimizer, rates.bandwidth, efficiency)
    allreduce = 0.0
    if count > 1:
        _, link = link_of(device)
        gradient_bytes = profile.params * weight_bytes(precision) * (FULL_SHARDING_TRAFFIC if sharding == "full" else 1)
        allreduce = ring_allreduce_time(Quantity(gradient_bytes, "B"), count, link).to("s").magnitude
        if overlap_allreduce:
            allreduce = max(0.0, allreduce - kernels * 2 / 3)
    return kernels + update + efficiency.step_overhead + allreduce, layers, update, allreduce


def physical_limit_seconds(profile: Profile, device: Device, precision: str, batch_size: float, count: int) -> float:
    """``C_step / (n R_peak)``: no step can be faster, whatever the efficiencies."""
    rates = device_rates(device, precision)
    best = max(rates.matrix_peak, rates.conv_peak, rates.vector_peak)
    return BACKWARD_FLOP_FACTOR * profile.forward_flops * batch_size / (count * best)


def reference_efficiencies(profile: Profile, device: Device, precision: str, batch_size: float, optimizer: str,
                           measured_throughput: float, base: Efficiencies) -> tuple[Efficiencies, float]:
    """Efficiencies scaled so that the model reproduces one measured throughput (samples/s).

    The per-step overhead is kept; the kernel part is scaled by one factor, found by bisection
    on the monotone step-time function. Returns the efficiencies and the factor.
    """
    if not math.isfinite(measured_throughput) or measured_throughput <= 0:
        raise InputError("reference", measured_throughput, "a positive measured throughput")
    measured_step = batch_size / measured_throughput

    def step(factor: float) -> float:
        return expected_step_seconds(profile, device, precision, batch_size, optimizer, base.scaled(factor, ""))[0]

    low, high = 1e-3, 1e3
    if step(high) < measured_step or step(low) > measured_step:
        raise InputError("reference", measured_throughput,
                         f"a throughput the model can explain on {device.name} "
                         f"(between {batch_size / step(high):.4g} and {batch_size / step(low):.4g} per second)")
    for _ in range(60):
        check_deadline()
        middle = math.sqrt(low * high)
        if step(middle) < measured_step:
            low = middle
        else:
            high = middle
    factor = math.sqrt(low * high)
    return base.scaled(factor, f"scaled by {factor:.3g} to match the reference measurement"), factor


def carried_over(target_base: Efficiencies, factor: float, source: str) -> Efficiencies:
    """The target's efficiencies moved by the part of a reference factor that carries over."""
    return target_base.scaled(factor ** REFERENCE_WEIGHT, source)


def estimate_profile_time(profile: Profile, device: Device, *, batch_size: float, precision: str = "fp32",
                          optimizer: str = "adam", count: int = 1, samples: float | None = None, epochs: float = 1,
                          efficiency: Efficiencies | None = None, mode: Mode = "datasheet", sharding: str = "none",
                          overlap_allreduce: bool = False, extra_assumptions: tuple[Assumption, ...] = ()) -> ProfileTimeResult:
    """Step time, throughput and training time of a profiled workload on ``count`` devices."""
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1_000_000:
        raise InputError("count", count, "a whole number of devices from 1 to 1,000,000")
    if not math.isfinite(batch_size) or batch_size < count:
        raise InputError("batch_size", batch_size, f"at least one sample per device ({count})")
    efficiency = efficiency or default_efficiencies(device)
    seconds, layers, update, allreduce = expected_step_seconds(profile, device, precision, batch_size, optimizer,
                                                               efficiency, count, sharding, overlap_allreduce)
    spread = error_spread()[mode]
    limit = physical_limit_seconds(profile, device, precision, batch_size, count)
    step = Estimate(Quantity(max(limit, seconds * spread["low"]), "s"), Quantity(max(limit, seconds), "s"),
                    Quantity(max(limit, seconds * spread["high"]), "s"))
    unit = f"{profile.sample} / s"
    per_step = Quantity(batch_size, "sample")
    throughput = Estimate(per_step / step.high, per_step / step.expected, per_step / step.low)

    training = steps = compute = None
    if samples is not None:
        steps = math.ceil(samples * epochs / batch_size)
        total = step * steps
        unit_time = "hour" if total.expected >= Quantity(2, "hour") else "s"
        training = total.out(unit_time)
        compute = QuantityOut.of(Quantity(BACKWARD_FLOP_FACTOR * profile.forward_flops * samples * epochs, "FLOP"), "FLOP")

    groups: dict[str, list] = defaultdict(list)
    for layer in layers:
        groups[layer.kind].append(layer)
    kernel_total = sum(layer.seconds for layer in layers) or 1.0
    layer_groups = []
    for kind, members in sorted(groups.items(), key=lambda item: -sum(m.seconds for m in item[1])):
        group_seconds = sum(m.seconds for m in members)
        by_bound = defaultdict(float)
        for member in members:
            by_bound[member.bound] += member.seconds
        layer_groups.append(LayerGroupTime(kind=kind, layers=len(members),
                                           time_per_step=QuantityOut.of(Quantity(group_seconds, "s"), "s"),
                                           share=group_seconds / kernel_total, bound=max(by_bound, key=by_bound.get)))

    rates = device_rates(device, precision)
    assumptions = [
        Assumption(name="workload profile", value=f"{profile.name}: {len(profile.layers)} layers, "
                                                  f"{profile.forward_flops:.4g} forward FLOP per {profile.sample}",
                   source=profile.generated_by),
        Assumption(name="efficiencies", value=f"tensor {efficiency.matrix:.3g}, TF32 {efficiency.tf32:.3g}, "
                                              f"FP32 matrix {efficiency.fp32_matrix:.3g}, vector {efficiency.vector:.3g}, "
                                              f"memory {efficiency.memory:.3g}, {Quantity(efficiency.launch, 's').to('us'):.3g~P} per kernel, "
                                              f"{Quantity(efficiency.step_overhead, 's').to('ms'):.3g~P} per step", source=efficiency.source),
        Assumption(name="range", value=f"{spread['low']:.3g}-{spread['high']:.3g} x expected ({mode} mode)",
                   source=spread["source"]),
        *(Assumption(name="precision", value=note, source="PyTorch defaults") for note in rates.notes),
        *extra_assumptions,
    ]
    return ProfileTimeResult(
        workload=profile.name, device=device.name, count=count, precision=precision, batch_size=batch_size, mode=mode,
        step_time=step.out("s"), throughput=throughput.out(unit), training_time=training, steps=steps,
        training_compute=compute, physical_limit_per_step=QuantityOut.of(Quantity(limit, "s"), "s"),
        layer_groups=layer_groups, optimizer_time_per_step=QuantityOut.of(Quantity(update, "s"), "s"),
        overhead_per_step=QuantityOut.of(Quantity(efficiency.step_overhead, "s"), "s"),
        allreduce_time_per_step=QuantityOut.of(Quantity(allreduce, "s"), "s"),
        efficiencies={"matrix": efficiency.matrix, "tf32": efficiency.tf32, "fp32_matrix": efficiency.fp32_matrix,
                      "vector": efficiency.vector, "memory": efficiency.memory,
                      "launch_s": efficiency.launch, "step_overhead_s": efficiency.step_overhead},
        assumptions=assumptions)
