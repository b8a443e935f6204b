"""Accuracy at frontier scale: runs above 1,000 and 4,096 GPUs and mixtures of experts above 1,000, asked as a
user would (no layout), and the published frontier runs of ``frontier_runs.csv``.

    python benchmarks/frontier_scale.py

Part 1 scores the held-out runs of ``llm_training_runs.csv`` (every source but MosaicML's, which the
efficiencies are fitted on) above 1,000 GPUs with no layout given (the search chooses), as the no-layout
headline of ``llm_training.py`` does. Part 2 predicts the frontier runs of ``frontier_runs.csv`` (figures
recalled from their reports, marked ``verified: false``): with the published batch given and without
(the default batch), with the run's all-to-all overlap where it states one (DeepSeek-V3's DualPipe) and
without, GPU-hours or MFU against the published figure, and the training time with
interruptions (:mod:`sizer.engine.goodput`) against a published wall-clock. Nothing here is fitted.
Results: ``benchmarks/results/frontier_scale.{json,md}``.
"""
from __future__ import annotations

import csv
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import llm_training  # noqa: E402
from machine import quantile  # noqa: E402

from sizer.datafile import write_text  # noqa: E402
from sizer.facade import TimeRequest, estimate_time, unit_factor  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402

FRONTIER_RUNS = HERE / "frontier_runs.csv"
GROUPS = {"above 1,000 GPUs": lambda m: m.request.count > 1000,
          "above 4,096 GPUs": lambda m: m.request.count > 4096,
          "MoE above 1,000 GPUs": lambda m: m.family == "moe" and m.request.count > 1000}


def held_out_without_layout() -> dict:
    """Per group: n, median and p90 of |time error| with no layout given, and with the published layout."""
    with tempfile.TemporaryDirectory(prefix="sizer-frontier-") as configs:
        mapped = llm_training.load_committed(load_catalog(), Path(configs), held_out_only=True)
        big = [r for r in mapped if r[0].request.count > 1000]
        given = llm_training.predict(big, None)
        searched = llm_training.predict_without_layout(big, None, given)
    by_label = {r[0].label: r[0] for r in big}
    out = {}
    for name, member in GROUPS.items():
        rows = [r for r in searched if not r["refused"] and member(by_label[r["run"]])]
        published = [r for r in given if member(by_label[r["run"]])]
        errors = [abs(r["time_error"]) for r in rows]
        out[name] = {"n": len(rows), "median": statistics.median(errors) if errors else None,
                     "p90": quantile(errors, 0.9) if errors else None,
                     "median_with_layout": statistics.median([abs(r["time_error"]) for r in published]) if published else None,
                     "refused": sum(1 for r in searched if r["refused"] and member(by_label[r["run"]])),
                     "worst_searched_over_published_step": max((r["searched_over_published_step"] for r in rows),
                                                                default=None)}
    return out


def frontier_rows() -> list[dict]:
    """Each published frontier figure predicted with its batch given and without (the default batch)."""
    out = []
    with FRONTIER_RUNS.open(newline="") as handle:
        for row in csv.DictReader(handle):
            base = dict(model=row["model"], device=row["device"], count=int(row["count"]), precision=row["precision"],
                        tokens=float(row["tokens"]), interruptions=True)
            batch = dict(batch_size=int(row["batch_sequences"]) * int(row["seq_len"]), seq_len=int(row["seq_len"]))
            overlap = row["overlap_all_to_all"] == "true"  # DeepSeek-V3's DualPipe: a property of the run, stated
            asks = [("batch given", {**base, **batch, "overlap_all_to_all": overlap}),
                    ("default batch", {**base, "overlap_all_to_all": overlap})]
            if overlap:
                asks.append(("batch given, all-to-all not overlapped", {**base, **batch}))
            for given, fields in asks:
                result = estimate_time(TimeRequest(**fields), suggest=False)
                predicted = _figure(row["metric"], result)
                layout = result.layout
                out.append({"label": row["label"], "asked": given, "metric": row["metric"], "published": float(row["value"]),
                            "predicted": predicted, "ratio": predicted / float(row["value"]),
                            "layout": f"tp {layout.tp} pp {layout.pp}x{layout.interleave} cp {layout.cp} dp {layout.dp} "
                                      f"ep {layout.ep} ZeRO {layout.zero} {layout.recompute}",
                            "batch": result.batch_size, "verified": row["verified"] == "true", "source": row["source"]})
    return out


def _figure(metric: str, result) -> float:
    """The predicted counterpart of a published figure."""
    if metric == "mfu":
        return result.mfu
    timed = result.with_interruptions.training_time if metric == "gpu_hours_with_interruptions" else result.training_time
    return timed.expected * unit_factor(timed.unit, "hour") * result.count


def markdown(held: dict, frontier: list[dict]) -> str:
    pct = lambda v: "-" if v is None else f"{v:.1%}"  # noqa: E731
    lines = ["| held-out runs, no layout given | n | median | p90 | with the published layout: median | refused |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {name} | {g['n']} | {pct(g['median'])} | {pct(g['p90'])} | {pct(g['median_with_layout'])} | {g['refused']} |"
              for name, g in held.items()]
    lines += ["", "| published frontier figure (recalled: verified false) | asked | predicted / published | layout searched |",
              "|---|---|---|---|"]
    lines += [f"| {r['label']} ({r['metric']} {r['published']:.3g}) | {r['asked']} | {r['ratio']:.2f} | {r['layout']} |"
              for r in frontier]
    return "\n".join(lines) + "\n"


def main() -> None:
    held, frontier = held_out_without_layout(), frontier_rows()
    results = HERE / "results"
    write_text(results / "frontier_scale.json", json.dumps({"held_out": held, "frontier": frontier}, indent=2))
    text = markdown(held, frontier)
    write_text(results / "frontier_scale.md", text)
    print(text)


if __name__ == "__main__":
    main()
