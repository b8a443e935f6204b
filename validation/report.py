"""The suite's report: ``report.json``, ``runs.csv``, ``summary.md`` and the PNG plots.

The error of a run is ``predicted expected step time / measured step time − 1``; the summary
gives the median and 90th percentile of its absolute value over all runs.
"""
from __future__ import annotations

import csv
import datetime
import io
import json
import math
import statistics
from importlib import metadata
from pathlib import Path

import numpy as np

from sizer.datafile import write_text

from .contention import MIN_SAMPLES, QUIET_PERCENT, headline_exclusions
from .detect import DetectedDevice

MS_PER_S = 1000.0


def megabytes(quantity: dict) -> float:
    """A ``{"value", "unit"}`` amount of memory in MB."""
    from sizer.units import Quantity

    return float(Quantity(quantity["value"], quantity["unit"]).to("MB").magnitude)
CSV_NAME, JSON_NAME, MARKDOWN_NAME = "runs.csv", "report.json", "summary.md"


def _abs_stats(values: list[float]) -> dict:
    if not values:
        return {"n": 0, "median_abs_error": None, "p90_abs_error": None}
    absolute = np.abs(np.asarray(values, dtype=float))
    return {"n": len(values), "median_abs_error": float(np.median(absolute)),
            "p90_abs_error": float(np.percentile(absolute, 90)), "median_signed_error": float(np.median(values))}


def summarise(runs: list[dict], layers: dict[str, dict], failures: list[dict]) -> dict:
    step_errors = [r["error"]["step_time"] for r in runs]
    stats = _abs_stats(step_errors)
    reasons = headline_exclusions(runs)
    excluded = [{"id": run_id, "reason": reason} for run_id, reason in reasons.items()]
    left_out = set(reasons)
    quiet = [r for r in runs if r["id"] not in left_out]
    quiet_stats = _abs_stats([r["error"]["step_time"] for r in quiet])
    fractions = [entry["accounted_fraction"] for entry in layers.values()]
    cnn_fractions = [layers[r["id"]]["accounted_fraction"] for r in runs if r["family"] == "cnn" and r["id"] in layers]
    flop_gaps = {family: [r["flops"]["relative_difference"] for r in runs if r["family"] == family]
                 for family in ("mlp", "cnn", "transformer")}
    return {
        "n_runs": len(runs), "n_failed": len(failures),
        "median_abs_error": stats["median_abs_error"], "p90_abs_error": stats["p90_abs_error"],
        "median_signed_error": stats.get("median_signed_error"),
        "error_metric": "step time: predicted expected / measured - 1 (uncalibrated core defaults)",
        "within_predicted_range": sum(bool(r["error"]["step_time_within_range"]) for r in runs),
        "uncontended": {"threshold_other_cpu_percent": QUIET_PERCENT, "n_runs": len(quiet),
                        "median_abs_error": quiet_stats["median_abs_error"], "p90_abs_error": quiet_stats["p90_abs_error"],
                        "within_predicted_range": sum(bool(r["error"]["step_time_within_range"]) for r in quiet),
                        "rule": f"foreign CPU before and during the run at most {QUIET_PERCENT:.0f} %, "
                                f"judged from at least {MIN_SAMPLES} samples or a look before the run"},
        "excluded_from_headline": excluded,
        "remeasured": [{"id": r["id"], **r["remeasured"]} for r in runs if r.get("remeasured")],
        "peak_memory_error": _abs_stats([r["error"]["peak_memory"] for r in runs if "peak_memory" in r["error"]]),
        "layers_accounted_fraction": {
            "min": min(fractions) if fractions else None, "median": statistics.median(fractions) if fractions else None,
            "max": max(fractions) if fractions else None,
            "cnn_median": statistics.median(cnn_fractions) if cnn_fractions else None,
            "seed_002_unaccounted": "38-54 %"},
        "flops_relative_difference": {family: {"min": min(v), "max": max(v)} for family, v in flop_gaps.items() if v},
        "other_processes_cpu_percent_max_mean": max(
            (r["measured"]["loads"].get("other_processes_cpu_percent", {}).get("mean", 0.0) for r in runs), default=None),
    }


def build_report(runs: list[dict], failures: list[dict], detected: DetectedDevice, settings: dict, mode: str,
                 wall_seconds: float) -> dict:
    layers = {r["id"]: r["_layers"] for r in runs if r.get("_layers")}
    clean = [{k: v for k, v in r.items() if k != "_layers"} for r in runs]
    try:
        version = metadata.version("sizer")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "sizer_version": version, "mode": mode, "wall_time": {"value": wall_seconds, "unit": "s"},
        "device": detected.as_dict(), "settings": settings,
        "runs": clean, "layers": layers, "failures": failures,
        "summary": summarise(clean, layers, failures),
    }


CSV_COLUMNS = ("id", "workload", "sweep_parameter", "sweep_value", "batch_size", "optimizer", "params", "processes",
               "measured_step_time_s", "predicted_step_time_low_s", "predicted_step_time_expected_s",
               "predicted_step_time_high_s", "step_time_error", "within_range", "bound",
               "measured_throughput", "predicted_throughput", "throughput_unit",
               "measured_peak_memory_MB", "predicted_peak_memory_MB", "peak_memory_error",
               "counted_forward_flops_per_sample", "analytic_forward_flops_per_sample", "flops_relative_difference",
               "counted_backward_factor", "layers_accounted_fraction", "cpu_percent_mean", "ram_percent_mean",
               "gpu_percent_mean", "gpu_memory_percent_mean")


def csv_row(run: dict, layers: dict) -> dict:
    m, p, e, f = run["measured"], run["predicted"], run["error"], run["flops"]
    loads = m.get("loads", {})
    sweep = run.get("sweep") or {}
    return {
        "id": run["id"], "workload": run["workload"], "sweep_parameter": sweep.get("parameter", ""),
        "sweep_value": sweep.get("value", ""), "batch_size": run["config"]["batch_size"],
        "optimizer": run["config"]["optimizer"], "params": run["config"]["params"],
        "processes": run["config"]["processes"],
        "measured_step_time_s": m["step_time"]["value"], "predicted_step_time_low_s": p["step_time"]["low"],
        "predicted_step_time_expected_s": p["step_time"]["expected"], "predicted_step_time_high_s": p["step_time"]["high"],
        "step_time_error": e["step_time"], "within_range": e["step_time_within_range"], "bound": p["bound"],
        "measured_throughput": m["throughput"]["value"], "predicted_throughput": p["throughput"]["expected"],
        "throughput_unit": p["throughput"]["unit"],
        "measured_peak_memory_MB": megabytes(m["peak_memory"]), "predicted_peak_memory_MB": megabytes(p["peak_memory"]),
        "peak_memory_error": e.get("peak_memory", ""),
        "counted_forward_flops_per_sample": f["counted"]["value"], "analytic_forward_flops_per_sample": f["analytic"]["value"],
        "flops_relative_difference": f["relative_difference"], "counted_backward_factor": f["counted_backward_factor"],
        "layers_accounted_fraction": layers.get(run["id"], {}).get("accounted_fraction", ""),
        **{f"{name}_mean": loads.get(name, {}).get("mean", "") for name in
           ("cpu_percent", "ram_percent", "gpu_percent", "gpu_memory_percent")},
    }


def write_csv(report: dict, path: Path) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    for run in report["runs"]:
        writer.writerow(csv_row(run, report["layers"]))
    write_text(path, text.getvalue(), "out")


def _pct(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:+.0f} %"


def _ms(seconds: float) -> str:
    return f"{seconds * MS_PER_S:.3g}"


def _baseline(settings: dict) -> str:
    """The RSS the process held with torch loaded, before any run (predicted CPU memory starts from it)."""
    baseline = settings.get("process_baseline_rss")
    return f"{megabytes(baseline):.0f} MB RSS with torch loaded" if baseline else "not measured"


def _excluded_lines(summary: dict) -> list[str]:
    """The runs kept out of the headline and those measured again, each with its reason."""
    lines = []
    if summary.get("remeasured"):
        lines.append("- measured again after waiting for quiet: " + "; ".join(
            f"{entry['id']} (first beside {entry['first_percent']:.0f} % foreign CPU)" for entry in summary["remeasured"]))
    if summary.get("excluded_from_headline"):
        lines.append(f"- kept out of the headline ({len(summary['excluded_from_headline'])}): " + "; ".join(
            f"{entry['id']}: {entry['reason']}" for entry in summary["excluded_from_headline"]))
    return lines


def markdown(report: dict) -> str:
    s, device = report["summary"], report["device"]
    lines = [
        "# sizer validation report", "",
        f"- mode: **{report['mode']}**, generated {report['generated']}, sizer {report['sizer_version']}, "
        f"torch {report['settings']['torch']} ({report['settings']['threads']} threads, {report['settings']['precision']})",
        f"- processor: **{device['name']}** ({device['kind']}); "
        f"process baseline {_baseline(report['settings'])}",
        f"- device: {device['description']} (catalog: {device['catalog_id'] or 'not in the catalog; described from the OS/driver'})",
        *(f"  - {note}" for note in device["notes"]),
        f"- wall time: {report['wall_time']['value']:.0f} s; runs: {s['n_runs']} measured, {s['n_failed']} failed",
        f"- step-time error (predicted expected / measured − 1, uncalibrated), runs without competing load "
        f"({s['uncontended']['rule']}): {s['uncontended']['n_runs']} of {s['n_runs']}, median |error| "
        f"{_pct(s['uncontended']['median_abs_error'])}, p90 {_pct(s['uncontended']['p90_abs_error'])}; "
        f"{s['uncontended']['within_predicted_range']} inside the predicted range",
        *_excluded_lines(s),
        f"- all runs, contended ones included: median |error| {_pct(s['median_abs_error'])}, "
        f"p90 {_pct(s['p90_abs_error'])}, median signed {_pct(s['median_signed_error'])}; "
        f"{s['within_predicted_range']} of {s['n_runs']} inside the predicted range",
        f"- CPU used by other processes during a run (mean, worst run): "
        f"{s['other_processes_cpu_percent_max_mean'] or 0:.0f} % (contention slows CPU runs; see each run's loads)",
        f"- peak-memory error: median |error| {_pct(s['peak_memory_error']['median_abs_error'])}, "
        f"p90 {_pct(s['peak_memory_error']['p90_abs_error'])}",
        f"- per-layer time accounts for {_pct(s['layers_accounted_fraction']['min'])[1:]}–"
        f"{_pct(s['layers_accounted_fraction']['max'])[1:]} of a profiled step (CNN median "
        f"{_pct(s['layers_accounted_fraction']['cnn_median'])[1:]}); seed 002 left 38–54 % unaccounted",
        "", "| run | batch | measured step ms | predicted ms (low–high) | error | bound | peak MB meas./pred. "
            "| fwd FLOP/sample counted / 2P | layers |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in report["runs"]:
        m, p, f = run["measured"], run["predicted"], run["flops"]
        layer = report["layers"].get(run["id"])
        lines.append(
            f"| {run['id']} | {run['config']['batch_size']} | {_ms(m['step_time']['value'])} | "
            f"{_ms(p['step_time']['expected'])} ({_ms(p['step_time']['low'])}–{_ms(p['step_time']['high'])}) | "
            f"{_pct(run['error']['step_time'])} | {p['bound']} | {megabytes(m['peak_memory']):.0f} / {megabytes(p['peak_memory']):.0f} | "
            f"{f['counted']['value']:.3g} / {f['analytic']['value']:.3g} ({_pct(f['relative_difference'])}) | "
            f"{_pct(layer['accounted_fraction'])[1:] if layer else '-'} |")
    notes = sorted({note for run in report["runs"] for note in run["notes"]})
    if notes:
        lines += ["", "Notes:", *(f"- {note}" for note in notes)]
    if report["failures"]:
        lines += ["", "Failed runs:", *(f"- {f['id']}: {f['error']}" for f in report["failures"])]
    lines += ["", "Plots: `predicted_vs_measured.png`, `layers_<run>.png` (CNNs), `sweep_<parameter>.png`.", ""]
    return "\n".join(lines)


def write_report(report: dict, out: Path) -> list[Path]:
    """Write JSON, CSV, Markdown and plots into ``out``; returns the files written."""
    from .plots import write_plots

    out.mkdir(parents=True, exist_ok=True)
    write_text(out / JSON_NAME, json.dumps(report, indent=2, default=str), "out")
    write_csv(report, out / CSV_NAME)
    write_text(out / MARKDOWN_NAME, markdown(report), "out")
    return [out / JSON_NAME, out / CSV_NAME, out / MARKDOWN_NAME, *write_plots(report, out)]
