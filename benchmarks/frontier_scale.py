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

Part 3 says where the no-layout misses above 1,000 GPUs come from: per run the error with the published
layout, with the searched one, the searched step over the published one (both predicted) and the same with
the published run's recomputation policy imposed; and Korthikanti et al.'s paired runs (the same model and
devices with full recomputation and without sequence parallelism, then selective recomputation with it),
whose measured speed-up is the saving the search banks on when it drops full recomputation.
Results: ``benchmarks/results/frontier_scale.{json,md}``.
"""
from __future__ import annotations

import csv
import json
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import llm_training  # noqa: E402
from machine import quantile  # noqa: E402

from sizer.datafile import write_text  # noqa: E402
from sizer.facade import TimeRequest, estimate_time, recompute_index, unit_factor  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.training.time_answer import estimate_training  # noqa: E402

FRONTIER_RUNS = HERE / "frontier_runs.csv"
GROUPS = {"above 1,000 GPUs": lambda m: m.request.count > 1000,
          "above 4,096 GPUs": lambda m: m.request.count > 4096,
          "MoE above 1,000 GPUs": lambda m: m.family == "moe" and m.request.count > 1000}


def held_out_without_layout() -> tuple[dict, list[dict], list[dict]]:
    """Per group: n, median and p90 of |time error| with no layout given, and with the published layout;
    then the per-run attribution of the runs above 1,000 GPUs (:func:`attribution`) and Korthikanti et
    al.'s recomputation pairs (:func:`recompute_pairs`)."""
    with tempfile.TemporaryDirectory(prefix="sizer-frontier-") as configs:
        mapped = llm_training.load_committed(load_catalog(), Path(configs), held_out_only=True)
        big = [r for r in mapped if r[0].request.count > 1000]
        given = llm_training.predict(big, None)
        searched = llm_training.predict_without_layout(big, None, given)
        runs = attribution(big, given, searched)
        pairs = recompute_pairs(mapped)
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
                     "worst_searched_over_published_step": max((r["searched_over_published_step"] for r in rows
                                                                 if r["searched_over_published_step"] is not None),
                                                                default=None)}
    return out, runs, pairs


def attribution(big, given: list[dict], searched: list[dict]) -> list[dict]:
    """Per run: the error with the published layout and with the searched one, and the searched step
    over the published step (both predicted), also with the published recomputation policy imposed on
    the search: a miss with the published layout on target is the search choosing a faster layout than
    the one that was run; a miss with both off is the engine's."""
    out = []
    by_run = {r["run"]: r for r in given}  # runs whose source states no layout have no entry
    for (m, job, device), found in zip(big, searched, strict=True):
        r = m.request
        pub = by_run.get(m.label)
        same_over_published = None
        if pub is not None:
            published_step = job.batch_size * job.tokens_per_sample / pub["predicted_tokens_per_gpu"] / r.count
            same = estimate_training(replace(job, micro_batch=None), device, r.count,
                                     recompute=recompute_index(r.recompute))
            same_over_published = same.step_time.expected / published_step
        out.append({"run": m.label, "count": r.count, "published_layout": found.get("published_layout"),
                    "searched_layout": found.get("layout"),
                    "error_published_layout": None if pub is None else pub["time_error"],
                    "error_searched": found.get("time_error"), "published_fits": pub is not None and pub["fits_memory"],
                    "searched_over_published_step": found.get("searched_over_published_step"),
                    "same_recompute_over_published_step": same_over_published})
    return out


def recompute_pairs(mapped) -> list[dict]:
    """Korthikanti et al. 2022 Table 4's pairs: one model on the same devices and split, full recomputation
    without sequence parallelism, then selective recomputation with it; measured and predicted speed-ups."""
    rows = {(m.label.split(" | ")[1], m.request.count, str(m.request.recompute)): (m, job, device)
            for m, job, device in mapped if m.source.startswith("Korthikanti") and "microbatch" not in m.label}
    pairs = []
    for (model, count, policy), full in sorted(rows.items()):
        selective = rows.get((model, count, policy.replace("full", "selective")))
        if "full" not in policy or selective is None:
            continue
        predicted = [llm_training.predict([x], None)[0]["predicted_tokens_per_gpu"] for x in (full, selective)]
        pairs.append({"model": model, "count": count, "measured_speedup": selective[0].measured / full[0].measured,
                      "predicted_speedup": predicted[1] / predicted[0]})
    return pairs


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


def _published_error(run: dict) -> str:
    if run["error_published_layout"] is None:
        return "layout not stated"
    return f"{run['error_published_layout']:+.1%}" + ("" if run["published_fits"] else " (does not fit)")


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def markdown(held: dict, frontier: list[dict], runs: list[dict], pairs: list[dict]) -> str:
    pct = lambda v: "-" if v is None else f"{v:.1%}"  # noqa: E731
    lines = ["| held-out runs, no layout given | n | median | p90 | with the published layout: median | refused |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {name} | {g['n']} | {pct(g['median'])} | {pct(g['p90'])} | {pct(g['median_with_layout'])} | {g['refused']} |"
              for name, g in held.items()]
    lines += ["", "| published frontier figure (recalled: verified false) | asked | predicted / published | layout searched |",
              "|---|---|---|---|"]
    lines += [f"| {r['label']} ({r['metric']} {r['published']:.3g}) | {r['asked']} | {r['ratio']:.2f} | {r['layout']} |"
              for r in frontier]
    lines += ["", "| held-out run above 1,000 GPUs | error, published layout | error, no layout | searched / published "
              "step | the same, published recomputation | searched layout |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['run']} | {_published_error(r)} | {r['error_searched']:+.1%} | {_ratio(r['searched_over_published_step'])} | "
              f"{_ratio(r['same_recompute_over_published_step'])} | {r['searched_layout']} |" for r in runs]
    lines += ["", "| Korthikanti et al. 2022 pair: full recompute -> selective + sequence parallel | measured speed-up | "
              "predicted |", "|---|---|---|"]
    lines += [f"| {p['model']} x{p['count']} | {p['measured_speedup']:.3f} | {p['predicted_speedup']:.3f} |" for p in pairs]
    return "\n".join(lines) + "\n"


def main() -> None:
    (held, runs, pairs), frontier = held_out_without_layout(), frontier_rows()
    results = HERE / "results"
    write_text(results / "frontier_scale.json", json.dumps({"held_out": held, "frontier": frontier,
                                                            "attribution": runs, "recompute_pairs": pairs}, indent=2))
    text = markdown(held, frontier, runs, pairs)
    write_text(results / "frontier_scale.md", text)
    print(text)


if __name__ == "__main__":
    main()
