"""The core's prediction for one measured run, and its error against the measurement.

The workload handed to the core is the run itself: parameters, training samples, batch size,
optimizer, FP32, and the forward FLOP per sample counted from the real model (spec §3.2,
``C_train = O_b · F_fwd · S · E``), activation memory per sample as autograd saved it. The
core's defaults stand for everything else (derating, per-step overhead, O_b = 3): the
predictions are uncalibrated (spec §3.11 is a later step).
"""
from __future__ import annotations

from sizer.choices import Optimizer, Precision
from sizer.engine.job import job_from_profile, resolve_job
from sizer.hardware.schema import Device
from sizer.schemas.base import WorkloadRequest
from sizer.training.memory_answer import training_memory
from sizer.training.time_answer import estimate_training
from sizer.units import Quantity
from sizer.workloads.profile import Profile

from .count import ModelCounts
from .workloads import CORE_OPTIMIZER, WorkloadSpec


def workload_request(spec: WorkloadSpec, counts: ModelCounts) -> WorkloadRequest:
    return WorkloadRequest(params=counts.params, samples=spec.train_samples, epochs=1, batch_size=spec.batch_size,
                           precision="fp32", optimizer=CORE_OPTIMIZER[spec.optimizer],
                           forward_flops_per_sample=counts.forward_flops_per_sample,
                           activation_memory_per_sample={"value": counts.activation_bytes_per_sample, "unit": "B"})


def predict(spec: WorkloadSpec, counts: ModelCounts, device: Device, count: int = 1, profile: dict | None = None,
            process_baseline: float = 0.0) -> dict:
    """Step time, throughput and memory ranges the one engine predicts for this run (datasheet mode).

    With the run's layer profile the engine runs its layers; without one, the dense network of
    the counted forward FLOP (one layer carrying every parameter). Each device runs its whole
    share of the batch at once, as the measured run did.
    """
    dense = resolve_job(workload_request(spec, counts))
    optimizer = CORE_OPTIMIZER[spec.optimizer]
    if profile is not None:
        job = job_from_profile(Profile.model_validate(profile), spec.batch_size, Precision.FP32, Optimizer(optimizer),
                               samples=spec.train_samples, micro_batch=spec.batch_size / count)
    else:
        from dataclasses import replace

        job = replace(dense, micro_batch=spec.batch_size / count)
    timing = estimate_training(job, device, count)
    memory = training_memory(dense, device, count)
    # The allocator peak (CUDA) or RSS growth (CPU) has no CUDA context in it: compare it with
    # the core's total less its framework allowance.
    # On a CPU the measurement is all the process holds: its baseline with torch loaded
    # (``process_baseline`` [B], measured once at the start) stands in for the framework allowance.
    comparable = memory.total.value - memory.framework_overhead.value
    if process_baseline:
        comparable += Quantity(process_baseline, "B").to(memory.total.unit).magnitude
    return {
        "device": timing.device, "count": count,
        "model": "one engine: per-layer roofline over the " + ("run's layer profile" if profile else "dense layer of the counted FLOP"),
        "step_time": timing.step_time.model_dump(), "throughput": timing.throughput.model_dump(),
        "layer_groups": [g.model_dump() for g in timing.layer_groups],
        "kernels_time": timing.kernels_per_step.model_dump(),
        "optimizer_time": timing.optimizer_time_per_step.model_dump(),
        "overhead": timing.overhead_per_step.model_dump(),
        "allreduce_time": timing.communication_per_step.model_dump(),
        "bound": timing.bound, "peak": timing.peak.model_dump(),
        "peak_memory": {"value": comparable, "unit": memory.total.unit},
        "memory_total_with_framework": memory.total.model_dump(),
        "memory_breakdown": {k: getattr(memory, k).model_dump() for k in
                             ("weights", "gradients", "optimizer_states", "activations", "framework_overhead")},
        "assumptions": [a.model_dump() for a in timing.assumptions],
    }


def relative_error(predicted: float, measured: float) -> float:
    """``predicted / measured − 1``: +0.5 means the core predicts 50 % more than measured."""
    return predicted / measured - 1


def errors(predicted: dict, measured: dict) -> dict:
    step, throughput = predicted["step_time"], predicted["throughput"]
    measured_step = measured["step_time"]["value"]
    out = {"step_time": relative_error(step["expected"], measured_step),
           "step_time_within_range": step["low"] <= measured_step <= step["high"],
           "throughput": relative_error(throughput["expected"], measured["throughput"]["value"]),
           "definition": "predicted expected / measured - 1"}
    peak = measured.get("peak_memory")
    if peak and peak["value"] > 0:
        predicted_bytes = predicted["peak_memory"]["value"] * _bytes_per(predicted["peak_memory"]["unit"])
        out["peak_memory"] = relative_error(predicted_bytes, peak["value"] * _bytes_per(peak["unit"]))
    return out


def _bytes_per(unit: str) -> float:
    from sizer.units import Quantity

    return Quantity(1, unit).to("B").magnitude
