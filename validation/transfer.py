"""Do the CPU and GPU defaults carry over to machines they were not fitted on?

A validation report (``report.json`` of ``sizer validate``) keeps, for every run, what the core
needs to predict it again without torch: the run's configuration, the FLOP and activation bytes
torch counted, its layer profile, the device as it was described, and the measured step time.
:func:`repredict` predicts those runs again with today's core, so that a report taken on another
processor (the Intel Xeon in ``shared/data/validation-runs``, the H100 in
``validation/reports``) scores the current defaults out of sample: nothing was fitted on them.

Only the runs a report kept in its headline count (runs beside other work measure the
neighbours too; :mod:`validation.contention`).
"""
from __future__ import annotations

import statistics
from pathlib import Path

from sizer.datafile import load_json
from sizer.hardware.schema import Device

from .contention import headline_exclusions
from .count import ModelCounts
from .predict import errors, predict
from .workloads import WorkloadSpec


def _spec(run: dict) -> WorkloadSpec:
    config = dict(run["config"])
    batch, optimizer = config.pop("batch_size"), config.pop("optimizer")
    learning_rate, samples = config.pop("learning_rate"), config.pop("train_samples")
    processes = config.pop("processes", 1)
    for derived in ("params", "activation_bytes_per_sample"):
        config.pop(derived, None)
    return WorkloadSpec(run_id=run["id"], workload=run["workload"], config=config, batch_size=batch,
                        optimizer=optimizer, learning_rate=learning_rate, train_samples=samples, processes=processes)


def _counts(run: dict, spec: WorkloadSpec) -> ModelCounts:
    flops = run["flops"]
    forward = flops["counted"]["value"]
    training = flops.get("counted_training", {}).get("value", 3 * forward)
    # the report keeps O_f P with and without the biases: their difference is 2 x biases x tokens
    biases = round((flops["analytic"]["value"] - flops["analytic_weights_only"]["value"]) / (2 * spec.tokens_per_sample))
    return ModelCounts(params=run["config"]["params"], bias_params=biases,
                       forward_flops_per_sample=forward, training_flops_per_sample=training,
                       activation_bytes_per_sample=run["config"]["activation_bytes_per_sample"],
                       tokens_per_sample=spec.tokens_per_sample)


def repredict(report: dict) -> list[dict]:
    """Each single-process headline run of ``report`` predicted again by today's core.

    Returns one record per run: ``id``, ``family``, ``measured`` and ``predicted`` step time [s],
    ``error`` (predicted / measured − 1), whether the measurement lies in the predicted range, and
    ``peak_memory_error`` (predicted / measured peak memory − 1; None where none was measured).
    """
    device = Device.model_validate(report["device"]["model"])
    records, excluded = [], headline_exclusions(report["runs"])
    # a CPU run's peak is all the process holds: the prediction starts from the process with torch loaded
    kept = report.get("settings", {}).get("process_baseline_rss") if device.kind == "cpu" else None
    baseline = float(kept["value"]) if kept else 0.0
    for run in report["runs"]:
        if run["config"].get("processes", 1) > 1 or run["id"] in excluded:
            continue
        spec = _spec(run)
        predicted = predict(spec, _counts(run, spec), device, profile=run.get("profile"), process_baseline=baseline)
        error = errors(predicted, run["measured"])
        records.append({"id": run["id"], "family": run["family"],
                        "measured": run["measured"]["step_time"]["value"],
                        "predicted": predicted["step_time"]["expected"], "error": error["step_time"],
                        "within_range": error["step_time_within_range"],
                        "peak_memory_error": error.get("peak_memory")})
    return records


def scores(records: list[dict]) -> dict:
    """Median and 90th-percentile |error|, median signed error and range coverage of ``records``."""
    absolute = sorted(abs(r["error"]) for r in records)
    if not absolute:
        return {"n": 0}
    p90 = absolute[min(len(absolute) - 1, round(0.9 * (len(absolute) - 1)))]
    return {"n": len(records), "median_abs_error": statistics.median(absolute), "p90_abs_error": p90,
            "median_signed_error": statistics.median(r["error"] for r in records),
            "within_range": sum(bool(r["within_range"]) for r in records)}


def score_report(path: Path) -> dict:
    """:func:`scores` of a report file, overall and per family of model."""
    records = repredict(load_json(Path(path), "report"))
    families = sorted({r["family"] for r in records})
    return {"all": scores(records), **{family: scores([r for r in records if r["family"] == family])
                                       for family in families}, "runs": records}
