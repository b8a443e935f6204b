"""The GPU suite's report: ``report.json``, ``runs.csv`` and ``summary.md``, in the shape of the CPU suite's
(:mod:`validation.report`: generated, sizer version, mode, wall time, device, settings, runs, failures,
summary; each run with its configuration, what was measured, what sizer predicted and the error)."""
from __future__ import annotations

import csv
import datetime
import io
import json
import statistics
from importlib import metadata
from pathlib import Path

from sizer.datafile import write_text

from .detect import DetectedDevice
from .gpu_predict import time_error

JSON_NAME, CSV_NAME, MARKDOWN_NAME = "report.json", "runs.csv", "summary.md"
CSV_COLUMNS = ("id", "workload", "task", "batch_size", "precision", "seq_len", "channels_last", "lora_rank",
               "measured_step_time_s", "predicted_step_time_s", "measured_tokens_per_s", "predicted_tokens_per_s",
               "time_error", "within_range", "measured_peak_allocated_GB", "measured_peak_reserved_GB",
               "predicted_active_GB", "predicted_total_GB", "peak_memory_error", "out_of_memory", "predicted_fits",
               "fits_agrees", "predicted_largest_micro_batch")


def _scores(values: list[float]) -> dict:
    if not values:
        return {"n": 0, "median_abs_error": None, "p90_abs_error": None, "median_signed_error": None}
    absolute = sorted(abs(v) for v in values)
    return {"n": len(values), "median_abs_error": statistics.median(absolute),
            "p90_abs_error": absolute[min(len(absolute) - 1, round(0.9 * (len(absolute) - 1)))],
            "median_signed_error": statistics.median(values)}


def largest_that_ran(runs: list[dict]) -> dict:
    """Per ladder: the largest batch that ran, the first that did not, and sizer's largest micro-batch."""
    out: dict[str, dict] = {}
    for run in runs:
        ladder = run["config"].get("ladder")
        if not ladder:
            continue
        entry = out.setdefault(ladder, {"largest_ran": None, "first_out_of_memory": None,
                                        "predicted_largest": (run["predicted"] or {}).get("largest_micro_batch")})
        batch = run["config"]["batch_size"]
        if run["measured"].get("out_of_memory"):
            first = entry["first_out_of_memory"]
            entry["first_out_of_memory"] = batch if first is None else min(first, batch)
        else:
            entry["largest_ran"] = max(entry["largest_ran"] or 0, batch)
    return out


def summarise(runs: list[dict], failures: list[dict]) -> dict:
    timed = [r for r in runs if time_error(r["error"]) is not None]
    memory = [r["error"]["peak_memory"] for r in runs if r["error"].get("peak_memory") is not None]
    verdicts = [r["error"]["fits_agrees"] for r in runs if "fits_agrees" in r["error"]]
    reserve = [r["measured"]["peak_reserved_GB"] / r["measured"]["peak_allocated_GB"] for r in runs
               if r["measured"].get("peak_allocated_GB")]
    return {
        "n_runs": len(runs), "n_failed": len(failures),
        "time": _scores([time_error(r["error"]) for r in timed]) | {
            "within_range": sum(bool(r["error"].get("within_range")) for r in timed),
            "definition": "predicted / measured time (a training step; a token of prefill or decode) - 1"},
        "training_step_time": _scores([r["error"]["step_time"] for r in runs if "step_time" in r["error"]]),
        "inference_tokens_per_s": _scores([r["error"]["tokens_per_s"] for r in runs if "tokens_per_s" in r["error"]]),
        "peak_memory": _scores(memory) | {"compared": "sizer's active memory (total less the framework allowance) "
                                                      "against torch.cuda.max_memory_allocated"},
        "fits_agrees": {"n": len(verdicts), "agree": sum(verdicts)},
        "reserved_over_allocated": {"median": statistics.median(reserve) if reserve else None,
                                    "max": max(reserve) if reserve else None},
        "ladders": largest_that_ran(runs),
    }


def build_gpu_report(runs: list[dict], failures: list[dict], detected: DetectedDevice, settings: dict,
                     wall_seconds: float) -> dict:
    try:
        version = metadata.version("sizer")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return {"generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "sizer_version": version, "mode": "gpu", "suite": "gpu", "wall_time": {"value": wall_seconds, "unit": "s"},
            "device": detected.as_dict(), "settings": settings, "runs": runs, "failures": failures,
            "summary": summarise(runs, failures)}


def csv_row(run: dict) -> dict:
    m, p, e, c = run["measured"], run["predicted"] or {}, run["error"], run["config"]
    step, speed = p.get("step_time") or {}, p.get("tokens_per_s") or {}
    return {"id": run["id"], "workload": run["workload"], "task": run["task"], "batch_size": c["batch_size"],
            "precision": c["precision"], "seq_len": c["seq_len"] or "", "channels_last": c["channels_last"],
            "lora_rank": c["lora_rank"] or "", "measured_step_time_s": m.get("step_time_s", ""),
            "predicted_step_time_s": step.get("expected", ""),
            "measured_tokens_per_s": m.get("tokens_per_s", "") if run["task"] != "train" else "",
            "predicted_tokens_per_s": speed.get("expected", ""), "time_error": e.get("time", ""),
            "within_range": e.get("within_range", ""), "measured_peak_allocated_GB": m.get("peak_allocated_GB", ""),
            "measured_peak_reserved_GB": m.get("peak_reserved_GB", ""), "predicted_active_GB": p.get("memory_active_GB", ""),
            "predicted_total_GB": p.get("memory_total_GB", ""), "peak_memory_error": e.get("peak_memory", ""),
            "out_of_memory": bool(m.get("out_of_memory")), "predicted_fits": p.get("fits", ""),
            "fits_agrees": e.get("fits_agrees", ""), "predicted_largest_micro_batch": p.get("largest_micro_batch", "")}


def _pct(value) -> str:
    return "-" if value is None or value == "" else f"{100 * value:+.0f} %"


def _num(value, digits: int = 3) -> str:
    return "-" if value is None or value == "" else f"{value:.{digits}g}"


def markdown(report: dict) -> str:
    s, device = report["summary"], report["device"]
    lines = ["# sizer GPU validation report", "",
             f"- generated {report['generated']}, sizer {report['sizer_version']}, torch {report['settings']['torch']}, "
             f"suite size {report['settings']['size']}",
             f"- device: **{device['name']}** ({device['kind']}; catalog: {device['catalog_id'] or 'not in the catalog'}); "
             f"predicted for: {report['settings']['predicted_for'] or 'nothing (not in the catalog)'}",
             f"- wall time {report['wall_time']['value']:.0f} s; runs: {s['n_runs']} measured, {s['n_failed']} failed or skipped",
             f"- time (predicted / measured − 1): median |error| {_pct(s['time']['median_abs_error'])}, p90 "
             f"{_pct(s['time']['p90_abs_error'])}, signed {_pct(s['time']['median_signed_error'])}; "
             f"{s['time']['within_range']} of {s['time']['n']} inside sizer's range",
             f"- peak memory (sizer's active against max_memory_allocated): median |error| "
             f"{_pct(s['peak_memory']['median_abs_error'])}, p90 {_pct(s['peak_memory']['p90_abs_error'])}, signed "
             f"{_pct(s['peak_memory']['median_signed_error'])}; reserved / allocated median "
             f"{_num(s['reserved_over_allocated']['median'])}",
             f"- \"fits\" agrees with what ran: {s['fits_agrees']['agree']} of {s['fits_agrees']['n']}",
             *(f"- ladder {name}: largest batch that ran {entry['largest_ran']}, first out of memory "
               f"{entry['first_out_of_memory'] or 'none'}, sizer's largest micro-batch {entry['predicted_largest']}"
               for name, entry in s["ladders"].items()),
             "", "| run | batch | precision | measured s/step or tok/s | predicted (low–high) | error | "
                 "peak alloc. / reserved GB | sizer active GB | error | fits |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for run in report["runs"]:
        m, p, e, c = run["measured"], run["predicted"] or {}, run["error"], run["config"]
        figure = p.get("step_time") or p.get("tokens_per_s") or {}
        value = m.get("step_time_s") if run["task"] == "train" else m.get("tokens_per_s")
        if m.get("out_of_memory"):
            value_text, memory = "out of memory", "-"
        else:
            value_text = _num(value)
            memory = f"{_num(m.get('peak_allocated_GB'))} / {_num(m.get('peak_reserved_GB'))}"
        predicted = (f"{_num(figure.get('expected'))} ({_num(figure.get('low'))}–{_num(figure.get('high'))})"
                     if figure else p.get("error", "-"))
        lines.append(f"| {run['id']} | {c['batch_size']} | {c['precision']}{' NHWC' if c['channels_last'] else ''} | "
                     f"{value_text} | {predicted} | {_pct(e.get('time'))} | {memory} | {_num(p.get('memory_active_GB'))} | "
                     f"{_pct(e.get('peak_memory'))} | {'agrees' if e.get('fits_agrees') else ('-' if 'fits_agrees' not in e else 'DISAGREES')} |")
    notes = sorted({note for run in report["runs"] for note in run["notes"]})
    if notes:
        lines += ["", "Notes:", *(f"- {note}" for note in notes)]
    if report["failures"]:
        lines += ["", "Failed or skipped runs:", *(f"- {f['id']}: {f['error']}" for f in report["failures"])]
    return "\n".join(lines) + "\n"


def write_gpu_report(report: dict, out: Path) -> list[Path]:
    """Write ``report.json``, ``runs.csv`` and ``summary.md`` into ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / JSON_NAME, json.dumps(report, indent=2, default=str), "out")
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    for run in report["runs"]:
        writer.writerow(csv_row(run))
    write_text(out / CSV_NAME, text.getvalue(), "out")
    write_text(out / MARKDOWN_NAME, markdown(report), "out")
    return [out / JSON_NAME, out / CSV_NAME, out / MARKDOWN_NAME]
