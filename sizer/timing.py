"""Training time (spec §3.3; seed 004 eq. 4 as the first-order term).

Per step and per device: the compute-bound time (FLOP at the sustained peak) against the
memory-bound time (bytes moved at the sustained bandwidth), the larger of the two; plus a
per-step overhead; plus, for several devices, the gradient ring all-reduce. The low end of
every range is never below the physical limit ``C_train / (n · R_peak)``.

>>> from sizer.units import Quantity
>>> first_order_training_time(Quantity(3.15e23, "FLOP"), Quantity(312e12, "FLOP/s"), 1024).to("day")
<Quantity(11.41148..., 'day')>
"""
from __future__ import annotations

from dataclasses import dataclass

import pint

from sizer.catalog_schema import Device
from sizer.compute import training_compute_from_forward
from sizer.deadline import check_deadline
from sizer.errors import InputError
from sizer.memory import OPTIMIZER_STATE_BYTES, device_micro_batch
from sizer.precision import MASTER_WEIGHT_BYTES, MIXED_PRECISIONS, weight_bytes
from sizer.results import Assumption, Estimate, Model, QuantityOut, RangeOut
from sizer.throughput import DEFAULT_DERATING, Derating, device_peak, sustained_flops
from sizer.units import Quantity
from sizer.workload import OPTIMIZER_STATES, Workload


@dataclass(frozen=True)
class StepOverhead:
    """Fixed time per optimizer step outside the kernels: framework, launches, input pipeline.

    Derived from seed 001: the 0.6-0.8 M-parameter MLP took 346.66 s for 400 epochs of
    80,909 samples at batch 512 (63,600 steps, 5.45 ms each) and 3426 s at batch 64
    (506,000 steps, 6.77 ms each) on an RTX 3060, where its FLOP need well under 0.1 ms.
    The low end allows for a compiled, prefetching pipeline.
    """

    low: pint.Quantity = Quantity(0.5, "ms")
    expected: pint.Quantity = Quantity(5.5, "ms")
    high: pint.Quantity = Quantity(7.0, "ms")
    source: str = "seed 001 tables 4.2-4.3: 5.4-6.8 ms per step of an MLP on an RTX 3060"

    def estimate(self) -> Estimate:
        return Estimate(self.low, self.expected, self.high)


DEFAULT_STEP_OVERHEAD = StepOverhead()
FALLBACK_LINK = ("PCIe 4.0 x16 (assumed: no interconnect in the catalog entry)", Quantity(31.5, "GB/s"))
FULL_SHARDING_TRAFFIC = 1.5  # ZeRO-3 moves 3x the parameters per step against 2x for all-reduce (ZeRO §7)


def first_order_training_time(training_compute: pint.Quantity, peak: pint.Quantity, count: int = 1) -> pint.Quantity:
    """``T_train = C_train / (n · R)`` (seed 004 eq. 4), the physical limit at ``R`` = peak."""
    return (training_compute / (count * peak)).to("s")


def ring_allreduce_time(gradient_bytes: pint.Quantity, count: int, link_bandwidth: pint.Quantity) -> pint.Quantity:
    """``2 (n − 1) / n · gradient bytes / link bandwidth`` (spec §3.3; Patarasuk & Yuan 2009).

    >>> ring_allreduce_time(Quantity(14, "GB"), 8, Quantity(450, "GB/s")).to("ms")
    <Quantity(54.4444444, 'millisecond')>
    """
    if count <= 1:
        return Quantity(0, "s")
    return (2 * (count - 1) / count * gradient_bytes / link_bandwidth).to("s")


def step_memory_traffic(workload: Workload, params_per_device: float, micro_batch: float,
                        accumulation_steps: float) -> pint.Quantity:
    """Bytes one device moves per optimizer step.

    Weights are read in the forward and backward pass and gradients written, once per
    micro-batch; the optimizer reads and writes master weights, states and weights once per
    step; activations are written in the forward pass and read back in the backward pass.
    """
    copy = weight_bytes(workload.precision)
    master = MASTER_WEIGHT_BYTES if workload.precision in MIXED_PRECISIONS else 0
    states = OPTIMIZER_STATES[workload.optimizer] * OPTIMIZER_STATE_BYTES
    per_micro_batch = params_per_device * 3 * copy
    optimizer = params_per_device * (copy + 2 * master + 2 * states + copy)
    activations = (workload.activation_memory_per_sample or Quantity(0, "B")).to("B").magnitude * micro_batch * 2
    return Quantity(accumulation_steps * (per_micro_batch + activations) + optimizer, "B")


def link_of(device: Device) -> tuple[str, pint.Quantity]:
    if device.interconnect is None:
        return FALLBACK_LINK
    return device.interconnect.name, device.interconnect.bandwidth.quantity("interconnect.bandwidth", "[information]/[time]")


class TimeResult(Model):
    device: str
    count: int
    precision: str
    steps: float
    training_compute: QuantityOut
    peak: QuantityOut
    step_time: RangeOut
    compute_time_per_step: RangeOut
    memory_time_per_step: RangeOut
    allreduce_time_per_step: QuantityOut
    overhead_per_step: RangeOut
    bound: str
    throughput: RangeOut
    training_time: RangeOut
    first_order_time: QuantityOut
    physical_limit: QuantityOut
    assumptions: list[Assumption]


def estimate_training_time(workload: Workload, device: Device, count: int = 1, *,
                           derating: Derating = DEFAULT_DERATING,
                           overhead: StepOverhead = DEFAULT_STEP_OVERHEAD,
                           sharding: str = "none", overlap_allreduce: bool = False) -> TimeResult:
    """Time to train ``workload`` on ``count`` devices of one kind (spec §3.3).

    Returns step time, throughput and training time as low / expected / high ranges. The
    low end uses the smallest derating and overhead, the high end the largest.
    """
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1_000_000:
        raise InputError("count", count, "a whole number of devices from 1 to 1,000,000")
    check_deadline()
    peak, basis = device_peak(device, workload.precision)
    compute = training_compute_from_forward(workload.forward_flops_per_sample, workload.samples, workload.epochs,
                                            workload.backward_factor)
    steps = workload.steps
    flop_per_step_device = compute / steps / count
    sustained = sustained_flops(peak, derating)
    compute_time = Estimate(flop_per_step_device / sustained.high, flop_per_step_device / sustained.expected,
                            flop_per_step_device / sustained.low).to("s")

    bandwidth = device.memory_bandwidth.quantity("memory_bandwidth", "[information]/[time]")
    sustained_bandwidth = sustained_flops(bandwidth, derating)  # same derating: the seed names memory tiering
    micro_batch = device_micro_batch(workload, count)
    accumulation = max(1.0, workload.batch_size / count / micro_batch)
    params_per_device = workload.params / count if sharding == "full" else workload.params
    traffic = step_memory_traffic(workload, params_per_device, micro_batch, accumulation)
    memory_time = Estimate(traffic / sustained_bandwidth.high, traffic / sustained_bandwidth.expected,
                           traffic / sustained_bandwidth.low).to("s")

    link_name, link_bandwidth = link_of(device)
    gradient_bytes = Quantity(workload.params * weight_bytes(workload.precision), "B")
    if sharding == "full":
        gradient_bytes = gradient_bytes * FULL_SHARDING_TRAFFIC
    allreduce = ring_allreduce_time(gradient_bytes, count, link_bandwidth)

    def step(compute_s: pint.Quantity, memory_s: pint.Quantity, overhead_s: pint.Quantity) -> pint.Quantity:
        kernels = max(compute_s, memory_s)
        if overlap_allreduce:  # the all-reduce hides behind the backward pass, 2/3 of the kernels
            communication = max(Quantity(0, "s"), allreduce - kernels * 2 / 3)
        else:
            communication = allreduce
        return (kernels + communication + overhead_s).to("s")

    over = overhead.estimate()
    step_time = Estimate(step(compute_time.low, memory_time.low, over.low),
                         step(compute_time.expected, memory_time.expected, over.expected),
                         step(compute_time.high, memory_time.high, over.high))
    limit = first_order_training_time(compute, peak, count)
    training = step_time * steps
    training = Estimate(max(training.low, limit), max(training.expected, limit), max(training.high, limit))
    samples_per_step = Quantity(workload.batch_size, workload.sample_word)
    throughput = Estimate(samples_per_step / step_time.high, samples_per_step / step_time.expected,
                          samples_per_step / step_time.low)
    bound = "compute" if compute_time.expected >= memory_time.expected else "memory"
    if over.expected > max(compute_time.expected, memory_time.expected):
        bound = "overhead"
    if allreduce > max(compute_time.expected, memory_time.expected, over.expected) and not overlap_allreduce:
        bound = "communication"

    assumptions = [
        Assumption(name="peak", value=f"{peak.to('TFLOPS'):.4g~P} {workload.precision}", source=basis),
        Assumption(name="derating d", value=f"{derating.low:g}-{derating.high:g} (expected {derating.expected:g}) on FLOP/s and memory bandwidth",
                   source=derating.source),
        Assumption(name="per-step overhead", value=f"{overhead.low:~P}-{overhead.high:~P} (expected {overhead.expected:~P})",
                   source=overhead.source),
        Assumption(name="memory bandwidth", value=f"{bandwidth.to('GB/s'):.4g~P}", source=device.memory_bandwidth.source),
        *workload.assumptions,
    ]
    if count > 1:
        assumptions.append(Assumption(
            name="gradient all-reduce", value=f"ring over {link_name} at {link_bandwidth.to('GB/s'):.4g~P}, "
                                              f"{'overlapped with the backward pass' if overlap_allreduce else 'not overlapped (conservative)'}",
            source="spec §3.3: 2(n-1)/n x gradient bytes / link bandwidth"))
    unit = "hour" if training.expected >= Quantity(2, "hour") else "s"
    return TimeResult(
        device=device.name, count=count, precision=workload.precision, steps=steps,
        training_compute=QuantityOut.of(compute, "FLOP"), peak=QuantityOut.of(peak, "FLOP/s"),
        step_time=step_time.out("s"), compute_time_per_step=compute_time.out("s"),
        memory_time_per_step=memory_time.out("s"), allreduce_time_per_step=QuantityOut.of(allreduce, "s"),
        overhead_per_step=over.out("s"), bound=bound,
        throughput=throughput.out(f"{workload.sample_word} / s"),
        training_time=training.out(unit),
        first_order_time=QuantityOut.of((compute / (count * sustained.expected)).to("s"), unit),
        physical_limit=QuantityOut.of(limit, unit), assumptions=assumptions)
