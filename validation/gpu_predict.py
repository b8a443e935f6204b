"""sizer's answer for a run of the GPU suite, asked as a user asks it (the facade's requests), and the error
of each figure against the measurement. No torch here: the test suite checks every request on a CPU."""
from __future__ import annotations

from typing import Any

from .gpu_plan import GpuRun


def _range(value) -> dict:
    return {"low": value.low, "expected": value.expected, "high": value.high, "unit": value.unit}


def _gb(quantity) -> float:
    from sizer.units import Quantity

    return float(Quantity(quantity.value, quantity.unit).to("GB").magnitude)


def predict_run(run: GpuRun, device: str) -> dict[str, Any]:
    """Step time (or tokens/s) and memory sizer predicts for ``run`` on the catalog ``device``.

    Training: ``estimate_time`` and ``estimate_memory`` with the run's workload or model, batch in one
    pass, precision and optimizer; the memory compared with the allocator's peak is sizer's *active*
    memory (its total less the framework allowance, which the allocator does not hold). Inference:
    ``estimate_inference``; prefill and decode tokens/s per sequence, and the memory less its reserve.
    """
    from sizer.facade import (
        InferenceRequest,
        MemoryRequest,
        TimeRequest,
        estimate_inference,
        estimate_memory,
        estimate_time,
    )

    if run.task == "train":
        timing = estimate_time(TimeRequest(device=device, **run.sizer), suggest=False)
        memory = estimate_memory(MemoryRequest(device=device, **run.sizer), suggest=False)
        return {"device": timing.device, "request": run.sizer, "step_time": _range(timing.step_time),
                "throughput": {"expected": run.batch / timing.step_time.expected, "unit": "sample / s"},
                "bound": timing.bound, "memory_active_GB": _gb(memory.active), "memory_total_GB": _gb(memory.total),
                "fits": memory.fits, "largest_micro_batch": memory.largest_micro_batch,
                "memory_breakdown_GB": {part: _gb(getattr(memory, part)) for part in
                                        ("weights", "gradients", "optimizer_states", "master_weights", "activations",
                                         "logits", "framework_overhead")}}
    answer = estimate_inference(InferenceRequest(device=device, **run.sizer), suggest=False)
    figure = answer.prefill_tokens_per_s if run.task == "prefill" else answer.decode_tokens_per_s
    return {"device": answer.device, "request": run.sizer, "tokens_per_s": _range(figure),
            "memory_active_GB": _gb(answer.memory_per_device) - _gb(answer.reserve_memory),
            "memory_total_GB": _gb(answer.memory_per_device), "fits": answer.fits,
            "time_to_first_token": _range(answer.time_to_first_token)}


def run_errors(run: GpuRun, measured: dict, predicted: dict) -> dict[str, Any]:
    """``predicted / measured − 1`` of the step time (of tokens/s for inference, and of the time per token as
    ``time``) and of the peak memory, whether the measurement lies in sizer's range, and the verdict "fits"
    against what ran (or ran out of memory)."""
    out: dict[str, Any] = {"definition": "predicted expected / measured - 1"}
    if measured.get("out_of_memory"):
        out["fits_agrees"] = predicted["fits"] is False
        return out
    out["fits_agrees"] = predicted["fits"] is True
    if run.task == "train":
        step, seconds = predicted["step_time"], measured["step_time_s"]
        out["step_time"] = out["time"] = step["expected"] / seconds - 1
        out["within_range"] = step["low"] <= seconds <= step["high"]
    else:
        speed, rate = predicted["tokens_per_s"], measured["tokens_per_s"]
        out["tokens_per_s"] = speed["expected"] / rate - 1
        out["time"] = rate / speed["expected"] - 1  # time per token, the sign of a step time's error
        out["within_range"] = speed["low"] <= rate <= speed["high"]
    if measured.get("peak_allocated_GB"):  # a CPU has no allocator peak to compare
        out["peak_memory"] = predicted["memory_active_GB"] / measured["peak_allocated_GB"] - 1
    return out


def time_error(errors: dict) -> float | None:
    """The run's time error, ``predicted / measured time − 1`` (a step, or a token of inference): + is too slow."""
    return errors.get("time")


def repredict_report(report: dict, device: str | None = None) -> list[dict]:
    """Each run of a kept GPU-suite report (``report.json``) predicted again with today's core: the run is
    found by its id in the plan of the report's size, asked for the device it was predicted for (or
    ``device``), and scored against what the report measured. Runs the plan no longer holds are left out."""
    from .gpu_plan import gpu_plan

    plan = {run.run_id: run for run in gpu_plan(report["settings"]["size"])}
    target = device or report["settings"]["predicted_for"]
    records = []
    for kept in report["runs"]:
        run = plan.get(kept["id"])
        if run is None or target is None:
            continue
        predicted = predict_run(run, target)
        records.append({"id": run.run_id, "task": run.task, "workload": run.model, "predicted": predicted,
                        "error": run_errors(run, kept["measured"], predicted)})
    return records
