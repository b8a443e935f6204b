"""Accuracy of sizer's step-time predictions against published and local measurements.

    python benchmarks/accuracy.py [--fit] [--local REPORT.json] [--write-spread]

(b) Published measurements (benchmarks/published_measurements.csv): every predictable row is
predicted datasheet-only, and with one reference device of the same workload, sequence length
and precision (every other single-device row in turn). (a) Local runs, with ``--local`` and a
validation report: efficiencies fitted on half the runs (``sizer calibrate``), the other half
predicted. For each mode: median and p90 |error| of the step time, and how often the range
covers the measurement, the range factors taken from the errors on the *other* devices so
that coverage is not measured on the rows that set it.

``--fit`` searches the three global GPU efficiencies (matrix, memory, launch) that minimise the
median datasheet error, on ResNet rows only and on BERT rows only as a cross-check, then on
all rows; the defaults in sizer/engine/constants.py are the all-rows fit. ``--write-spread`` writes
the range factors to sizer/engine/error_spread.yaml. Results go to benchmarks/results/.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from machine import quantile  # noqa: E402

from sizer.choices import Optimizer, Precision  # noqa: E402
from sizer.datafile import load_json, load_yaml, write_text  # noqa: E402
from sizer.engine.constants import GPU_EFFICIENCIES, Efficiencies  # noqa: E402
from sizer.engine.job import job_from_profile  # noqa: E402
from sizer.engine.modes import carried_over, profile_step_seconds, reference_efficiencies  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.workloads.profile import load_profile  # noqa: E402

RESULTS = HERE / "results"
OPTIMIZER = {"resnet50": Optimizer.MOMENTUM, "bert-base": Optimizer.ADAM, "bert-large": Optimizer.ADAM}
COVERAGE_QUANTILES = (0.1, 0.9)


def load_rows() -> list[dict]:
    rows = []
    for row in csv.DictReader((HERE / "published_measurements.csv").open(encoding="utf-8")):
        if row["excluded"]:
            continue
        row["seq_len"] = int(row["seq_len"]) if row["seq_len"] else None
        row["n_devices"] = int(row["n_devices"])
        row["batch"] = float(row["batch_size_per_device"]) * row["n_devices"]
        row["measured_step"] = float(row["batch_size_per_device"]) / float(row["throughput_per_device"])
        rows.append(row)
    return rows


def _predict(row: dict, efficiency: Efficiencies, catalog, cache: dict) -> float:
    key = (row["workload"], row["seq_len"])
    if key not in cache:
        cache[key] = load_profile(row["workload"], row["seq_len"])
    return profile_step_seconds(cache[key], catalog.find(row["device"]), Precision(row["precision"]), row["batch"],
                                OPTIMIZER[row["workload"]], efficiency, row["n_devices"])


def datasheet_errors(rows, efficiency, catalog, cache) -> list[dict]:
    out = []
    for row in rows:
        predicted = _predict(row, efficiency, catalog, cache)
        out.append({"row": row, "predicted": predicted, "ratio": row["measured_step"] / predicted})
    return out


def reference_errors(rows, efficiency, catalog, cache) -> list[dict]:
    out = []
    singles = [r for r in rows if r["n_devices"] == 1]
    for target in rows:
        for reference in singles:
            if reference["device"] == target["device"] or (reference["workload"], reference["seq_len"], reference["precision"]) != \
                    (target["workload"], target["seq_len"], target["precision"]):
                continue
            key = (reference["workload"], reference["seq_len"])
            cache.setdefault(key, load_profile(*key))
            try:
                job = job_from_profile(cache[key], reference["batch"], Precision(reference["precision"]),
                                       OPTIMIZER[reference["workload"]], micro_batch=reference["batch"])
                _, factor = reference_efficiencies(job, catalog.find(reference["device"]),
                                                   float(reference["throughput_per_device"]), efficiency)
            except ValueError:
                continue
            scaled = carried_over(efficiency, factor, "reference")
            predicted = _predict(target, scaled, catalog, cache)
            out.append({"row": target, "reference": reference, "predicted": predicted,
                        "ratio": target["measured_step"] / predicted})
    return out


def reference_from_datasheet(errors: list[dict], weight: float) -> list[dict]:
    """Reference-mode errors when a reference's measured/predicted ratio carries over with
    ``weight`` (the step time scales close to 1 / efficiency), for choosing REFERENCE_WEIGHT."""
    out = []
    for target in errors:
        for reference in errors:
            t, q = target["row"], reference["row"]
            if q["n_devices"] == 1 and q["device"] != t["device"] and \
                    (q["workload"], q["seq_len"], q["precision"]) == (t["workload"], t["seq_len"], t["precision"]):
                out.append({"row": t, "ratio": target["ratio"] / reference["ratio"] ** weight})
    return out


def summarize(errors: list[dict]) -> dict:
    """Median and p90 |error| of the predicted step time, and out-of-device range coverage."""
    absolute = [abs(1 / e["ratio"] - 1) for e in errors]
    covered = 0
    for e in errors:
        others = [o["ratio"] for o in errors if o["row"]["device"] != e["row"]["device"]]
        low, high = (quantile(others, q) for q in COVERAGE_QUANTILES)
        covered += low <= e["ratio"] <= high
    ratios = [e["ratio"] for e in errors]
    return {"n": len(errors), "median_abs_error": statistics.median(absolute), "p90_abs_error": quantile(absolute, 0.9),
            "range_coverage": covered / len(errors),
            "range_factors": [quantile(ratios, q) for q in COVERAGE_QUANTILES],
            "median_ratio_measured_over_predicted": statistics.median(ratios)}


FIT_GRID = {"matrix": (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8),
            "tf32": (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8),
            "fp32_matrix": (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95),
            "memory": (0.4, 0.5, 0.6, 0.7, 0.8, 0.9), "launch": (2e-6, 4e-6, 6e-6, 1e-5, 2e-5)}


def fit(rows, catalog, cache) -> Efficiencies:
    """Coordinate descent over the global GPU efficiencies (one number per kind of unit, the
    memory efficiency and the launch time), minimising the median |log error| of the rows."""
    def score(candidate):
        return statistics.median(abs(math.log(e["ratio"])) for e in datasheet_errors(rows, candidate, catalog, cache))

    best = GPU_EFFICIENCIES
    best_score = score(best)
    for _ in range(3):
        for name, grid in FIT_GRID.items():
            for value in grid:
                candidate = replace(best, **{name: value})
                candidate_score = score(candidate)
                if candidate_score < best_score - 1e-9:
                    best, best_score = candidate, candidate_score
    return best


def local_calibrated(report_path: Path) -> dict:
    from sizer.engine.calibration import calibrate_runs, predict_run, runs_from_report

    runs = runs_from_report(load_json(report_path, "report", 50_000_000), str(report_path))
    train, test = runs[0::2], runs[1::2]  # alternate runs: each half spans every sweep
    calibration = calibrate_runs(train)
    errors = []
    for run in test:
        predicted = predict_run(run, calibration)
        errors.append({"row": {"device": run.run_id}, "predicted": predicted, "ratio": run.measured_step / predicted})
    return summarize(errors) | {"train_runs": len(train), "test_runs": len(test), "report": str(report_path),
                                "per_run": [{"id": r.run_id, "measured_step_s": r.measured_step, "predicted_step_s": e["predicted"]}
                                            for r, e in zip(test, errors, strict=True)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--local", type=Path)
    parser.add_argument("--write-spread", action="store_true")
    parser.add_argument("--skip-published", action="store_true", help="keep the published results of the last run")
    args = parser.parse_args()
    catalog, cache = load_catalog(), {}
    rows = load_rows()
    previous = RESULTS / "accuracy.json"
    results: dict = load_json(previous, "results") if args.skip_published and previous.exists() else {}
    results["rows"] = len(rows)
    if args.fit:
        fits = {}
        for name, subset in (("resnet", [r for r in rows if r["workload"] == "resnet50"]),
                             ("bert", [r for r in rows if r["workload"] != "resnet50"]), ("all", rows)):
            chosen = fit(subset, catalog, cache)
            fits[name] = {key: getattr(chosen, key) for key in FIT_GRID}
        results["fits"] = fits
        for trained, tested in (("resnet", "bert"), ("bert", "resnet")):
            chosen = replace(GPU_EFFICIENCIES, **fits[trained])
            subset = [r for r in rows if (r["workload"] == "resnet50") == (tested == "resnet")]
            errors = datasheet_errors(subset, chosen, catalog, cache)
            results[f"fit_on_{trained}_tested_on_{tested}"] = summarize(errors) | {
                "reference_by_weight": {str(w): summarize(reference_from_datasheet(errors, w)) for w in (0.0, 0.5, 1.0)}}
    if not args.skip_published:
        published(results, rows, catalog, cache)
    if args.local:
        results["local_calibrated"] = local_calibrated(args.local)
    write_results(results)
    if "fits" in results:
        print(json.dumps(results["fits"], indent=1))
        for key in ("fit_on_resnet_tested_on_bert", "fit_on_bert_tested_on_resnet"):
            print(key, {k: round(v, 3) if isinstance(v, float) else v for k, v in results[key].items()})
    if args.write_spread:
        write_spread(results)


def published(results: dict, rows, catalog, cache) -> None:
    datasheet = datasheet_errors(rows, GPU_EFFICIENCIES, catalog, cache)
    reference = reference_errors(rows, GPU_EFFICIENCIES, catalog, cache)
    results["datasheet"] = summarize(datasheet)
    results["reference"] = summarize(reference)
    results["per_row_datasheet"] = [{"device": e["row"]["device"], "workload": e["row"]["workload"],
                                     "seq_len": e["row"]["seq_len"], "precision": e["row"]["precision"],
                                     "n_devices": e["row"]["n_devices"], "batch": e["row"]["batch"],
                                     "measured_step_s": e["row"]["measured_step"], "predicted_step_s": e["predicted"],
                                     "error": 1 / e["ratio"] - 1} for e in datasheet]


def write_results(results: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    write_text(RESULTS / "accuracy.json", json.dumps(results, indent=2, default=str))
    lines = ["# Step-time accuracy", "", "| mode | n | median abs error | p90 abs error | range coverage |", "|---|---|---|---|---|"]
    for mode in ("datasheet", "reference", "local_calibrated"):
        if mode in results:
            r = results[mode]
            lines.append(f"| {mode} | {r['n']} | {r['median_abs_error']:.1%} | {r['p90_abs_error']:.1%} | {r['range_coverage']:.0%} |")
    write_text(RESULTS / "accuracy.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


def write_spread(results: dict) -> None:
    import yaml

    path = HERE.parent / "sizer" / "engine" / "error_spread.yaml"
    modes = load_yaml(path, "error_spread")["modes"]
    for mode in ("datasheet", "reference", "local_calibrated"):
        if mode in results:
            low, high = results[mode]["range_factors"]
            key = "calibrated" if mode == "local_calibrated" else mode
            modes[key] = {**modes.get(key, {}), "low": round(low, 3), "high": round(high, 3),
                          "source": f"10th-90th percentile of measured/predicted step time, {mode}, n = {results[mode]['n']} "
                                    "(benchmarks/accuracy.py)"}
    header = ("# Factors of the expected step time that bound a prediction's low-high range, per mode; `by_workload`:\n"
              "# per kind of workload and device. Written by benchmarks/accuracy.py and benchmarks/llm_training.py\n"
              "# from the observed errors; do not edit by hand.\n")
    write_text(path, header + yaml.safe_dump({"modes": modes}, sort_keys=False))


if __name__ == "__main__":
    main()
