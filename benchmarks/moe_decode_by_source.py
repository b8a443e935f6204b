"""Mixtures of experts and latent attention served as runtimes run them, judged by source (issue 38, item 5).

    python benchmarks/moe_decode_by_source.py [--fit]

Points scored:

- every askable MoE point of ``shared/data/serving-tails.csv`` (DeepSeek-R1, Qwen3-235B-A22B, Qwen3-30B-A3B,
  gpt-oss, Mixtral), simulated under the benchmark's own load as ``benchmarks/serving_by_source.py`` asks it
  (its points, lengths and loads), with the layout the server command names: ``--enable-expert-parallel`` /
  ``--ep-size`` / ``--ep_size`` -> expert parallelism over the replica; data-parallel attention where ``--dp N``
  (N > 1) goes with ``--enable-dp-attention`` (GPUStack's SGLang rows pass the flag with dp 1, which the file's
  ``dp`` column states: attention stays tensor parallel). Speculative decoding (EAGLE) is not modelled: refused;
- the DeepSeek-V3 figures of sgl-project/sglang#2643 (``benchmarks/moe_decode_points.csv``: SGLang v0.4.1,
  8 x H200, batch 1/8/32, as issue 38 quotes them), asked as ``sizer inference --batch B`` (decode tokens/s per
  sequence x B).

Split: the one fitted figure, the fused-MoE path's fixed time per routed expert and MoE layer
(:data:`sizer.passes.moe_decode.MOE_EXPERT_SECONDS`, per routed expert), is fitted (``--fit``: a grid; the source-balanced median
|log(predicted / measured)| of output tokens/s; the smallest value within 0.01 of the best) on serving-tails.csv's MoE
points and vLLM's gpt-oss-20b blog rows of ``benchmarks/serving_accuracy.py``; sglang#2643 is never fitted on.
Leave-one-source-out: each fitting source is scored with the value the same rule picks on the others.

Results: ``benchmarks/results/moe_decode_by_source.{json,md}``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import serving_by_source as sbs  # noqa: E402

from sizer.errors import InputError  # noqa: E402
from sizer.hardware.catalog import Catalog, load_catalog  # noqa: E402
from sizer.memo import clear_all  # noqa: E402
from sizer.runtimes import runtime  # noqa: E402
from sizer.runtimes.formats import kv_cache_bytes_per_value, weight_format  # noqa: E402
from sizer.schemas.serving_requests import InferenceRequest  # noqa: E402
from sizer.serving.estimate import estimate_inference  # noqa: E402
from sizer.serving.under_load import runtime_refusal  # noqa: E402
from sizer.simulator import simulate as sim  # noqa: E402
from sizer.simulator.invariants import SimulationInvariantError  # noqa: E402
from sizer.simulator.simulate import simulate  # noqa: E402
from sizer.simulator.traffic import Lengths, Load  # noqa: E402
from sizer.workloads.registry import resolve_model  # noqa: E402

try:  # absent before issue 38's MoE layouts (the "before" run of this script on the older tree)
    from sizer.passes import moe_decode
    from sizer.passes.moe_decode import MoeLayout
except ImportError:  # pragma: no cover
    moe_decode = None  # type: ignore[assignment]

STATIC = HERE / "moe_decode_points.csv"
RESULTS = HERE / "results"
MOE_MODELS = ("DeepSeek", "A22B", "A3B", "gpt-oss", "Mixtral")
SCORED = ("output_tokens_per_s",)  # the fit reads throughput; p99 TPOT and TTFT carry burst stalls (mech, tails), reported
FLAT = 0.01  # objective values this close to the best are not told apart: the smallest fixed time among them is taken
GRID_US = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)  # per routed expert and MoE layer


def _configs() -> dict[str, dict[str, str]]:
    """setup_id -> the server command and the stated dp/ep columns, from the shared file."""
    out: dict[str, dict[str, str]] = {}
    for r in csv.DictReader(open(sbs.SHARED, encoding="utf-8")):
        if any(m in r["model"] for m in MOE_MODELS):
            out.setdefault(r["setup_id"], {"config": r["server_config"], "dp": r["dp"], "ep": r["ep"]})
    return out


def layout_of(config: dict[str, str], count: int) -> Any:
    """The MoE layout a server command runs, or a string: why it is not askable."""
    cmd = config["config"]
    if "speculative" in cmd:
        return "speculative decoding (EAGLE) is not modelled"
    expert = bool(re.search(r"--enable-expert-parallel|--ep[-_]size\s+([2-9]|\d\d)", cmd))
    dp = re.search(r"--dp(?:-size)?\s+(\d+)", cmd)
    dp_attention = "--enable-dp-attention" in cmd and dp is not None and int(dp.group(1)) > 1
    if moe_decode is None:
        return None
    return MoeLayout(expert=expert or dp_attention, dp_attention=dp_attention)


def moe_points() -> list[tuple[sbs.Point, Any]]:
    """The askable MoE points of serving-tails.csv with their layouts (or why they are not asked)."""
    configs = _configs()
    out = []
    for p in sbs.points()[0]:
        if not any(m.lower() in p.model.lower() for m in MOE_MODELS):
            continue
        setup = p.key.split("|")[1]
        out.append((p, layout_of(configs.get(setup, {"config": "", "dp": "", "ep": ""}), p.count)))
    return out


def predict(p: sbs.Point, layout: Any, catalog: Catalog, requests: int) -> dict[str, float] | str:
    """Simulated figures of ``p`` in ``layout`` (serving_by_source's load and lengths), or why not."""
    if isinstance(layout, str):
        return f"refused: {layout}"
    try:
        device = catalog.find(p.device)
        fmt = weight_format(p.weights)
        refusal = runtime_refusal(runtime(p.runtime), fmt, device)
        if refusal:
            return f"refused: {refusal[:90]}"
        table = sim.batching_table((device,), fmt)
        if not table.supported[0]:
            return f"refused: the catalog has no {fmt.compute} peak for {p.device}"
        extra = {} if layout is None else {"moe": layout}
        replica = sim.runtime_replica(runtime(p.runtime), resolve_model(p.model), fmt, kv_cache_bytes_per_value("fp16"),
                                      table, 0, p.count, **extra)
    except (InputError, ValueError, KeyError) as e:
        return f"refused: {str(e)[:80]}"
    n = min(p.prompts, requests)
    load = Load(rate=p.rate) if p.scenario == "rate" else Load(users=min(p.users or 1, n), burst=p.scenario == "burst")
    try:
        run = simulate(replica, load, Lengths(max(1, round(p.prompt_mean)), max(1, round(p.output_mean))), n, warmup=0.0)
    except (ValueError, SimulationInvariantError) as e:
        return f"simulator failed: {str(e)[:70]}"
    if len(run.ttft) == 0:
        return "nothing measured"
    return {"output_tokens_per_s": run.output_tokens_per_s, "ttft_p50": run.percentile("ttft", 50) * 1e3,
            "ttft_p99": run.percentile("ttft", 99) * 1e3,
            "tpot_p99": run.percentile("tpot", 99) * 1e3 if len(run.tpot) else math.nan}


def static_rows() -> list[dict[str, Any]]:
    """sglang#2643's points: decode tokens/s per sequence x batch, as ``sizer inference --batch`` answers."""
    rows = []
    for r in csv.DictReader(open(STATIC, encoding="utf-8")):
        b = int(r["batch"])
        got = estimate_inference(InferenceRequest(model=r["model"], device=r["device"], count=int(r["count"]),
                                                  runtime=r["runtime"], batch=b))
        pred = got.decode_tokens_per_s.expected * b
        rows.append({"source": r["source"], "runtime": r["runtime"], "model": r["model"], "layout": "tensor parallel",
                     "scenario": f"batch {b}", "metric": r["metric"], "measured": float(r["value"]),
                     "predicted": round(pred, 2), "error": round(pred / float(r["value"]) - 1, 4),
                     "low": got.decode_tokens_per_s.low * b, "high": got.decode_tokens_per_s.high * b})
    return rows


def score(points: list[tuple[sbs.Point, Any]], catalog: Catalog, requests: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    rows, refused = [], defaultdict(int)
    for p, layout in points:
        got = predict(p, layout, catalog, requests)
        if isinstance(got, str):
            refused[got] += 1
            continue
        label = layout.label(p.count) if moe_decode is not None and not isinstance(layout, str) else "tensor parallel"
        for name in ("output_tokens_per_s", "ttft_p50", "ttft_p99", "tpot_p99"):
            measured, pred = p.measured.get(name), got[name]
            if measured is None or measured <= 0 or not math.isfinite(pred):
                continue
            rows.append({"source": p.source, "runtime": p.runtime, "model": p.model, "layout": label,
                         "scenario": f"{p.scenario} {p.users or p.rate}", "metric": name, "measured": measured,
                         "predicted": round(pred, 3), "error": round(pred / measured - 1, 4)})
    return rows, dict(refused)


def stats(errs: list[float]) -> dict[str, Any]:
    if not errs:
        return {"n": 0}
    a = sorted(abs(e) for e in errs)
    return {"n": len(errs), "median_abs_pct": round(100 * statistics.median(a), 1),
            "p90_abs_pct": round(100 * a[min(len(a) - 1, math.ceil(0.9 * len(a)) - 1)], 1),
            "signed_median_pct": round(100 * statistics.median(errs), 1)}


def objective(rows: list[dict[str, Any]]) -> float:
    """Source-balanced median |log(predicted / measured)| of output tokens/s: the median over sources of each source's
    median (a source with many points weighs as one)."""
    per: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["metric"] in SCORED and r["error"] > -1:
            per[r["source"]].append(abs(math.log1p(r["error"])))
    return statistics.median(statistics.median(v) for v in per.values()) if per else math.inf


def blog_rows(catalog: Catalog) -> list[dict[str, Any]]:
    """The MoE rows of benchmarks/serving_accuracy.py (vLLM's gpt-oss-20b fixed-concurrency blog rows, throughput) as
    one more fitting source."""
    import serving_accuracy as accuracy

    cases = [c for c in accuracy.cases() if any(m.lower() in c.model.lower() for m in MOE_MODELS)]
    rows = accuracy.score(cases, catalog, sim.SCHEDULER_OVERHEAD, sim.BATCHING_MATRIX_EFFICIENCY)
    return [{"source": "vLLM blog gpt-oss (serving_accuracy.py)", "runtime": "vllm", "model": "gpt-oss-20b",
             "layout": "tensor parallel", "scenario": "fixed concurrency", "metric": "output_tokens_per_s",
             "measured": r["measured"], "predicted": r["predicted"], "error": r["error"]}
            for r in rows if r["kind"] == "throughput"]


def at(seconds: float, points: list[tuple[sbs.Point, Any]], catalog: Catalog, requests: int) -> list[dict[str, Any]]:
    """Every fitting point scored with the fixed time per routed expert and MoE layer at ``seconds``."""
    if moe_decode is not None:
        moe_decode.MOE_EXPERT_SECONDS = seconds
    clear_all()
    return score(points, catalog, requests)[0] + blog_rows(catalog)


def fit(points: list[tuple[sbs.Point, Any]], catalog: Catalog, requests: int) -> dict[str, Any]:
    """The grid's objective over every fitting source (serving-tails' MoE points and vLLM's gpt-oss blog rows; never
    sglang#2643), the value chosen (the smallest within :data:`FLAT` of the best: the objective's flat range), and
    leave-one-source-out: each source scored at the value the same rule picks on the others."""
    by_value = {us: at(us * 1e-6, points, catalog, requests) for us in GRID_US}
    sources = sorted({r["source"] for rows in by_value.values() for r in rows})

    def pick(values: dict[float, float]) -> float:
        best = min(values.values())
        return min(us for us, v in values.items() if v <= best + FLAT)

    whole = {us: objective(rows) for us, rows in by_value.items()}
    loso = {}
    for src in sources:
        others = {us: objective([r for r in rows if r["source"] != src]) for us, rows in by_value.items()}
        chosen = pick(others)
        held = [r for r in by_value[chosen] if r["source"] == src]
        loso[src] = {"fitted_us": chosen, **{m: stats([r["error"] for r in held if r["metric"] == m])
                                             for m in ("output_tokens_per_s", "tpot_p99", "ttft_p99")}}
    return {"objective_by_us": whole, "best_us": min(whole, key=lambda us: (whole[us], us)), "chosen_us": pick(whole),
            "loso": loso}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for metric in ("output_tokens_per_s", "ttft_p50", "ttft_p99", "tpot_p99"):
        mine = [r for r in rows if r["metric"] == metric]
        entry = {"all": stats([r["error"] for r in mine])}
        for src in sorted({r["source"] for r in mine}):
            entry[src] = stats([r["error"] for r in mine if r["source"] == src])
        out[metric] = entry
    return out


def _md(result: dict[str, Any]) -> str:
    lines = ["# MoE and MLA serving by source (issue 38, item 5)", "",
             f"Fixed time per routed expert and MoE layer: {result['moe_expert_us']} us. "
             "Signed error = predicted / measured - 1.", "",
             "## sgl-project/sglang#2643 (held out: never fitted)", "",
             "| point | measured | predicted | error |", "|---|---:|---:|---:|"]
    lines += [f"| {r['scenario']} | {r['measured']} | {r['predicted']} | {100 * r['error']:+.1f} % |"
              for r in result["static"]]
    for metric, groups in result["summary"].items():
        lines += ["", f"## serving-tails.csv MoE points: {metric}", "",
                  "| source | n | median abs % | p90 abs % | signed median % |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {g} | {s['n']} | {s['median_abs_pct']} | {s['p90_abs_pct']} | {s['signed_median_pct']} |"
                  for g, s in groups.items() if s.get("n")]
    if result.get("fit"):
        lines += ["", "## Fit (serving-tails and vLLM's gpt-oss blog rows; never sglang#2643) and leave-one-source-out", "",
                  f"chosen: {result['fit']['chosen_us']} us (best {result['fit']['best_us']}); "
                  "objective (source-balanced median |log error| of output tokens/s) by us per routed expert: "
                  + ", ".join(f"{k}: {v:.3f}" for k, v in result["fit"]["objective_by_us"].items()), "",
                  "| held-out source | fitted on the others [us] | output tok/s median / signed | p99 TPOT median / signed |",
                  "|---|---:|---:|---:|"]
        for src, v in result["fit"]["loso"].items():
            o, t = v["output_tokens_per_s"], v["tpot_p99"]
            lines.append(f"| {src} | {v['fitted_us']} | {o.get('median_abs_pct', '-')} / {o.get('signed_median_pct', '-')} | "
                         f"{t.get('median_abs_pct', '-')} / {t.get('signed_median_pct', '-')} |")
    lines += ["", "## Points", "", "| source | runtime | model | layout | load | metric | measured | predicted | error |",
              "|---|---|---|---|---|---|---:|---:|---:|"]
    lines += [f"| {r['source']} | {r['runtime']} | {r['model']} | {r['layout']} | {r['scenario']} | {r['metric']} | "
              f"{r['measured']} | {r['predicted']} | {100 * r['error']:+.1f} % |" for r in result["rows"]]
    lines += ["", "## Not asked", ""] + [f"- {k}: {v}" for k, v in sorted(result["refused"].items())]
    return "\n".join(lines) + "\n"


def run(requests: int = 1000, do_fit: bool = False) -> dict[str, Any]:
    catalog = load_catalog()
    points = moe_points()
    shipped = moe_decode.MOE_EXPERT_SECONDS if moe_decode is not None else 0.0
    fitted = fit(points, catalog, requests) if do_fit else None
    if moe_decode is not None:
        moe_decode.MOE_EXPERT_SECONDS = shipped
    clear_all()
    rows, refused = score(points, catalog, requests)
    return {"moe_expert_us": round(shipped * 1e6, 3), "static": static_rows(), "rows": rows, "refused": refused,
            "summary": summary(rows), "fit": fitted}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="search the fixed time per MoE layer on serving-tails.csv")
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--out", default="moe_decode_by_source")
    args = ap.parse_args()
    result = run(args.requests, args.fit)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (RESULTS / f"{args.out}.md").write_text(_md(result))
    print(_md(result)[:6000])


if __name__ == "__main__":
    main()
