"""One measured run as the report keeps it, and its layer profile (shared by single-process and
data-parallel runs: :mod:`validation.runner` and :mod:`validation.distributed` both write these)."""
from __future__ import annotations

from .detect import DetectedDevice
from .predict import errors
from .workloads import WorkloadSpec


def run_profile(spec: WorkloadSpec, model, inputs) -> dict:
    """The run's model profiled layer by layer (what `sizer profile` writes), for the per-layer
    prediction and for `sizer calibrate`."""
    from .profiler import profile_model

    return profile_model(model, inputs[: min(len(inputs), 8)], name=spec.run_id, description=spec.workload,
                         generated_by=f"sizer validate ({spec.run_id})")


def run_record(spec: WorkloadSpec, detected: DetectedDevice, counts, measured: dict, predicted: dict,
               profile: dict | None = None) -> dict:
    config = {**spec.config, "batch_size": spec.batch_size, "optimizer": spec.optimizer,
              "learning_rate": spec.learning_rate, "train_samples": spec.train_samples, "params": counts.params,
              "processes": spec.processes, "activation_bytes_per_sample": counts.activation_bytes_per_sample}
    return {"id": spec.run_id, "workload": spec.workload, "family": spec.family,
            "sweep": {"parameter": spec.sweep[0], "value": spec.sweep[1]} if spec.sweep else None,
            "config": config, "notes": list(spec.notes), "device": predicted["device"],
            "measured": measured, "predicted": predicted, "error": errors(predicted, measured),
            "flops": counts.as_dict(), "profile": profile}
