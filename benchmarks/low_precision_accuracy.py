"""Low precision at its real rate (issue 38, item 4): the FP4 and FP8 rows of the serving files, by source.

    python benchmarks/low_precision_accuracy.py [--requests N] [--per-source N] [--fit]

Three sets, each scored by its own source (nothing here is fitted but ``SERVING_FP4_OVERHEAD``, on the first):

* TensorRT-LLM's perf overview (``serving_under_load.csv``, trtllm-bench offline throughput, v1.0): its 40 NVFP4
  rows on B200/GB200 and its 60 FP8 rows on H100/H200, simulated as ``benchmarks/serving_accuracy.py`` does;
* ``inference-benchmarks.csv``'s NVFP4 rows (the same perf overview's B200 and RTX PRO 6000 tables, the static
  max-load model of ``benchmarks/inference_accuracy.py``);
* ``serving-tails.csv``'s FP8 and W8A8 points (vLLM and SGLang on A100, RTX A6000, RTX 4090, RTX 6000 Ada, H100,
  H200; TensorRT-LLM on H200), simulated as ``benchmarks/serving_by_source.py`` does: output tokens/s, p99 TTFT
  and p99 TPOT, and how many points sizer refuses and why.

``--fit`` searches ``SERVING_FP4_OVERHEAD`` (sizer/engine/constants.py) on the perf overview's NVFP4 rows whose
outputs are at most 500 tokens, the rows the FP4 rate moves (their time is mostly prefill), and prints the loss on
all 40 NVFP4 rows beside it: the long-output rows are over-predicted at the FP8 rate already (B200 decode, not FP4),
and a fit on them would send the FP4 rate back to the FP8 one.

Results: ``benchmarks/results/low_precision.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import inference_accuracy as ia  # noqa: E402
import serving_accuracy as sa  # noqa: E402
import serving_by_source as sbs  # noqa: E402

from sizer.engine import constants  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.memo import clear_all  # noqa: E402
from sizer.simulator import simulate as sim  # noqa: E402

RESULTS = HERE / "results"
# the perf overview's RTX PRO 6000 table: the Server Edition, in the catalog since its FP4 peak was derived
ia.DEVICES.setdefault("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server")


def _stats(errors: list[float]) -> dict[str, Any]:
    if not errors:
        return {"n": 0}
    a = sorted(abs(e) for e in errors)
    return {"n": len(errors), "median_abs_pct": round(100 * statistics.median(a), 1),
            "p90_abs_pct": round(100 * a[min(len(a) - 1, int(0.9 * len(a) + 0.999) - 1)], 1),
            "signed_median_pct": round(100 * statistics.median(errors), 1)}


def perf_overview(requests: int) -> dict[str, Any]:
    """TensorRT-LLM perf-overview rows by weight format: all, and the prefill-heavy ones (output <= 500 tokens)."""
    sa.REQUESTS = requests
    catalog = load_catalog()
    cases = [c for c in sa.cases() if c.source == "TensorRT-LLM perf overview" and c.weights in ("nvfp4", "fp8")]
    rows = sa.score(cases, catalog, sim.SCHEDULER_OVERHEAD, sim.BATCHING_MATRIX_EFFICIENCY)
    out: dict[str, Any] = {}
    for w in ("nvfp4", "fp8"):
        mine = [(c, r) for c, r in zip(cases, rows, strict=True) if c.weights == w]
        out[w] = _stats([r["error"] for _, r in mine])
        out[w + " prefill-heavy"] = _stats([r["error"] for c, r in mine if c.output <= 500])
        out[w + " decode-heavy"] = _stats([r["error"] for c, r in mine if c.output > 500])
    out["rows"] = [{"case": r["case"], "measured": r["measured"], "predicted": r["predicted"],
                    "error_pct": round(100 * r["error"], 1)} for r in rows]
    return out


def fit_fp4_overhead(grid: list[float], requests: int) -> float:
    """The FP4 overhead of ``grid`` with the least mean squared log error on the prefill-heavy NVFP4 rows."""
    sa.REQUESTS = requests
    catalog = load_catalog()
    cases = [c for c in sa.cases() if c.source == "TensorRT-LLM perf overview" and c.weights == "nvfp4"]
    losses = {}
    for overhead in grid:
        constants.SERVING_FP4_OVERHEAD = overhead
        clear_all()  # the device tables are cached with the old overhead
        rows = sa.score(cases, catalog, sim.SCHEDULER_OVERHEAD, sim.BATCHING_MATRIX_EFFICIENCY)
        prefill = [r for c, r in zip(cases, rows, strict=True) if c.output <= 500]
        losses[overhead] = sa._msle(prefill)
        print(f"overhead {overhead:g}: prefill-heavy msle {losses[overhead]:.4f} (signed median "
              f"{statistics.median(r['error'] for r in prefill):+.3f}); all 40 rows msle {sa._msle(rows):.4f} "
              f"(signed median {statistics.median(r['error'] for r in rows):+.3f})", flush=True)
    return min(losses, key=lambda k: losses[k])


def inference_rows() -> dict[str, Any]:
    """``inference-benchmarks.csv``'s NVFP4 rows under the static max-load model."""
    rows, _ = ia.read_rows()
    fp4 = [r for r in rows if r.weights == "nvfp4"]
    scored = ia.score(fp4, load_catalog())
    return {"rows": [{"device": s["device"], "prompt": s["prompt"], "output": s["output"], "measured": s["measured"],
                      "predicted": round(s["predicted"], 1), "error_pct": round(100 * s["error"], 1)} for s in scored],
            **_stats([s["error"] for s in scored])}


def tails(requests: int, per_source: int) -> dict[str, Any]:
    """serving-tails.csv's FP8 and W8A8 points: errors by source and metric, and the refusals."""
    catalog = load_catalog()
    points = [p for p in sbs.points()[0] if p.weights in ("fp8", "w8a8")]
    picked = sbs.sample(points, per_source, 10_000)
    errors: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    refused: dict[str, int] = defaultdict(int)
    for p in picked:
        got = sbs.predict(p, catalog, requests)
        label = f"{p.source} ({p.runtime}, {p.device}, {p.weights})"
        if isinstance(got, str):
            refused[f"{label}: {got[:110]}"] += 1
            continue
        for metric, (name, kind) in sbs.METRICS.items():
            if name in p.measured and got.get(metric) == got.get(metric):
                m, q = p.measured[name], got[metric]
                errors[label][metric].append(q / m - 1 if kind == "rate" else q / m - 1)
    by_source = {label: {m: _stats(e) for m, e in metrics.items()} for label, metrics in sorted(errors.items())}
    every = defaultdict(list)
    for metrics in errors.values():
        for m, e in metrics.items():
            every[m] += e
    return {"points": len(points), "sampled": len(picked), "refused": dict(refused), "by_source": by_source,
            "all": {m: _stats(e) for m, e in every.items()}}


def _md(result: dict[str, Any]) -> str:
    lines = ["# Low precision at its real rate (issue 38 item 4)", "",
             "Signed error = predicted / measured - 1 (positive: sizer says faster / longer).", "",
             "## TensorRT-LLM perf overview (trtllm-bench, v1.0)", "", "| rows | n | median abs | p90 abs | signed |",
             "| --- | --- | --- | --- | --- |"]
    for k, v in result["perf_overview"].items():
        if k != "rows" and v.get("n"):
            lines.append(f"| {k} | {v['n']} | {v['median_abs_pct']} % | {v['p90_abs_pct']} % | {v['signed_median_pct']} % |")
    lines += ["", "## inference-benchmarks.csv NVFP4 rows (static max load)", ""]
    lines += [f"- {r['device']} {r['prompt']}/{r['output']}: measured {r['measured']:g}, predicted {r['predicted']:g} "
              f"({r['error_pct']:+} %)" for r in result["inference"]["rows"]]
    t = result["tails"]
    lines += ["", f"## serving-tails.csv FP8/W8A8 points ({t['sampled']} of {t['points']} askable points sampled)", "",
              "| source | metric | n | median abs | signed |", "| --- | --- | --- | --- | --- |"]
    for label, metrics in t["by_source"].items():
        for m, v in metrics.items():
            lines.append(f"| {label} | {m} | {v['n']} | {v['median_abs_pct']} % | {v['signed_median_pct']} % |")
    for m, v in t["all"].items():
        lines.append(f"| all | {m} | {v['n']} | {v['median_abs_pct']} % | {v['signed_median_pct']} % |")
    lines += ["", "Refused:", ""] + [f"- {k}: {v}" for k, v in sorted(t["refused"].items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--per-source", type=int, default=12)
    ap.add_argument("--out", default="low_precision")
    ap.add_argument("--fit", action="store_true", help="search SERVING_FP4_OVERHEAD and stop")
    ap.add_argument("--grid", type=float, nargs="*", default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0])
    args = ap.parse_args()
    if args.fit:
        print(f"best SERVING_FP4_OVERHEAD = {fit_fp4_overhead(args.grid, args.requests):g} (sizer/engine/constants.py)")
        return
    t0 = time.time()
    result = {"perf_overview": perf_overview(args.requests), "inference": inference_rows(),
              "tails": tails(args.requests, args.per_source)}
    result["seconds"] = round(time.time() - t0, 1)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (RESULTS / f"{args.out}.md").write_text(_md(result), encoding="utf-8")
    print(_md(result))


if __name__ == "__main__":
    main()
