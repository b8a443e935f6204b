"""Accuracy of sizer's serving estimates against published LLM inference measurements.

    python benchmarks/inference_accuracy.py [--fit] [--write-spread] [--by-source]

``--by-source`` (the headline, issue 38): leave one source out over the 7 sources of the timing rows, the three
serving constants chosen on the other 6 from a grid (:func:`by_source`); ``benchmarks/results/inference_by_source.*``.

Data: ``benchmarks/inference_benchmarks.csv`` (a copy of ``shared/data/inference-benchmarks.csv``:
TensorRT-LLM performance tables, FasterTransformer batch-1 figures, memory facts; every row with
its source). Timing rows are predicted by :mod:`sizer.serving`; memory facts are checked in
``tests/sizer/serving/test_inference.py``.

Split (fixed, by source document): the efficiencies are fitted on the rows of TensorRT-LLM's
``docs/source/performance.md`` (v0.6.1 tables) and of FasterTransformer (kipply's figures), and
scored on all the others (the H100-vs-A100 and H200 blogs, the v0.17 and v1.0 performance
overviews), which the fit never sees. ``--fit`` searches the three serving efficiencies (decode
bandwidth fraction, matrix-peak fraction, per-pass overhead) minimising the squared log error on
the fitting rows and prints them for ``sizer/engine/constants.py``; ``--write-spread`` writes the
range factors (10th-90th percentile of measured/predicted speed on the held-out rows) to
``sizer/serving/error_spread.yaml``. Results go to ``benchmarks/results/inference_accuracy.{json,md}``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from sizer.engine.constants import MAX_LOAD_BATCH, SERVING_MATRIX_EFFICIENCY, SERVING_MEMORY_EFFICIENCY, SERVING_STEP_OVERHEAD  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.passes.arithmetic import ServingCase, evaluate_serving, replace_efficiencies, serving_table, total_tokens_per_second  # noqa: E402
from sizer.runtimes.formats import kv_cache_bytes_per_value, weight_format  # noqa: E402
from sizer.workloads.architecture import Architecture  # noqa: E402
from sizer.workloads.registry import find_model  # noqa: E402

DATA = HERE / "inference_benchmarks.csv"
RESULTS = HERE / "results"
SPREAD_FILE = HERE.parent / "sizer" / "serving" / "error_spread.yaml"
FIT_SOURCES = ("docs/source/performance.md@", "examples/fastertransformer/")
ASSUMED_OUTPUT = 128  # where a single-stream row states no output length
SPREAD_QUANTILES = (0.1, 0.9)
# No kernel streams HBM faster than about 90 % of the datasheet rate (STREAM-like copies reach
# 85-93 % on A100/H100); the fit is kept below it rather than let the per-pass overhead absorb it.
MAX_MEMORY_FRACTION = 0.9

# GPT-J is not among the built-in models: its config (EleutherAI/gpt-j-6b config.json: n_layer 28,
# n_embd 4096, n_head 16, n_inner 4 x 4096, gelu_new, vocab 50400, parallel attention and MLP
# from one LayerNorm, MLP and head biases, untied head).
GPT_J = Architecture(name="gpt-j-6b", family="decoder", layers=28, hidden=4096, heads=16, kv_heads=16,
                     ffn_hidden=16384, ffn_type="gelu", vocab=50400, max_context=2048, tied_embeddings=False,
                     norm="layernorm", position="rotary", mlp_bias=True, parallel_attention=True,
                     source="EleutherAI/gpt-j-6b config.json")
MODELS = {"GPT-J-6B": GPT_J, "Llama-2-7B": "llama-2-7b", "Llama-2-70B": "llama-2-70b", "Llama-3.1-8B": "llama-3.1-8b",
          "Llama-3.1-70B": "llama-3.1-70b", "Llama-3.3-70B": "llama-3.1-70b",  # 3.3 70B: the 3.1 70B shape
          "13B dense decoder": "gpt3-13b"}  # kipply's test-13b: a GPT-3-style 13B (40 layers of 5120)
DEVICES = {"NVIDIA H100 SXM5 80GB": "h100-sxm5-80gb", "NVIDIA A100 SXM4 80GB": "a100-80gb-sxm4",
           "NVIDIA L40S": "l40s", "NVIDIA H200 SXM 141GB": "h200-sxm-141gb", "NVIDIA B200 SXM 180GB": "b200",
           "NVIDIA A100 40GB": "a100-40gb-sxm4"}  # form factor not stated: taken as SXM4
QUANT = {"FP8": ("fp8", "fp16"), "FP8 (FP8 KV cache)": ("fp8", "fp8"), "FP16": ("fp16", "fp16"),
         "NVFP4": ("nvfp4", "fp8")}


@dataclass(frozen=True)
class Row:
    number: int
    split: str  # "fit" or "held-out"
    category: str  # "decode" (single stream), "throughput" (batched total) or "ttft"
    model: str
    device: str
    count: int
    weights: str
    kv_cache: str
    batch: float | None  # None: max load
    prompt: int
    output: int
    measured: float  # tokens/s, or seconds for a time
    is_time: bool
    per_device: bool
    source: str
    source_key: str = ""  # the unit of the leave-one-source-out split: repository, document and commit


def _model(text: str):
    for key, model in MODELS.items():
        if text.startswith(key):
            return model if isinstance(model, Architecture) else find_model(model)
    return None


def _device(text: str) -> str | None:
    return next((v for k, v in DEVICES.items() if text.startswith(k)), None)


def read_rows() -> tuple[list[Row], list[tuple[int, str]]]:
    """The timing rows as cases, and (row number, reason) for every row left out."""
    rows, left_out = [], []
    for number, r in enumerate(csv.DictReader(DATA.open(encoding="utf-8")), start=2):
        metric, unit = r["metric"], r["unit"]
        if unit in ("GB", "KB/token", "GPUs", "GPUs (80 GB each)"):
            left_out.append((number, f"memory fact ({metric}): checked in tests/sizer/serving/test_inference.py"))
            continue
        model, device = _model(r["model"]), _device(r["hardware"])
        if device is None:
            left_out.append((number, f"device not in the catalog: {r['hardware']}"))
            continue
        weights, kv = QUANT.get(r["quant"], (None, None))
        if "kipply" in r["source_repo_or_url"]:
            weights, kv = "fp16", "fp16"
        if model is None or weights is None:
            left_out.append((number, f"model or format not modelled: {r['model']}, {r['quant']}"))
            continue
        if "time to first token" in metric or "prefill latency" in metric:
            category, is_time = "ttft", True
        elif "decode" in metric:
            category, is_time = "decode", "latency" in metric
        else:
            category, is_time = "throughput", False
        scale = 1e-3 if unit.startswith("ms") else 1.0
        batch = None if "max load" in r["batch_or_concurrency"] else float(r["batch_or_concurrency"])
        output = int(r["output_len"]) if r["output_len"].strip().isdigit() else ASSUMED_OUTPUT
        rows.append(Row(number=number, split="fit" if any(s in r["source_path_or_table"] for s in FIT_SOURCES) else "held-out",
                        category=category, model=r["model"], device=device, count=int(r["n_devices"]), weights=weights,
                        kv_cache=kv, batch=batch, prompt=int(r["input_len"]), output=max(output, 1),
                        measured=float(r["value"]) * scale, is_time=is_time, per_device="per GPU" in metric,
                        source=f"{r['source_repo_or_url']}, {r['source_path_or_table']}",
                        source_key=f"{r['source_repo_or_url'].split(' ')[0]}@{r['source_path_or_table'].split(' ')[0].rstrip(',')}"))
    return rows, left_out


def timings(row: Row, catalog, efficiencies: tuple[float, float, float] | None = None) -> tuple[float, float, float]:
    """Time to first token and one decode step [s] of the row's case, and the batch it runs at."""
    device = catalog.find(row.device)
    fmt = weight_format(row.weights)
    effs = replace_efficiencies((device,), *efficiencies) if efficiencies else None
    table = serving_table((device,), fmt, effs)
    case = ServingCase(_model(row.model), fmt, kv_cache_bytes_per_value(row.kv_cache), row.prompt, row.output)
    batch = row.batch
    if batch is None:  # max load: the largest batch that fits, up to the runtime's limit; in-flight
        # batching keeps sequences at staggered positions, a KV cache of prompt + output / 2 each on average
        staggered = replace(case, output_len=max(1, row.output // 2))
        batch = float(min(evaluate_serving(staggered, table, 0, row.count, 1.0).max_batch[0], MAX_LOAD_BATCH))
    a = evaluate_serving(case, table, 0, row.count, batch)
    return float(a.prefill_seconds[0]), float(a.decode_seconds[0]), batch


def value(row: Row, prefill: float, decode: float, batch: float) -> float:
    """The predicted figure in the row's unit from the case's times [s]."""
    if row.category == "ttft":
        return prefill
    if row.category == "decode":
        return decode if row.is_time else 1.0 / decode
    total = float(total_tokens_per_second(np.asarray([batch]), row.output, np.asarray([prefill]), np.asarray([decode]))[0])
    return total / row.count if row.per_device else total


def predict(row: Row, catalog, efficiencies: tuple[float, float, float] | None = None) -> tuple[float, float]:
    """The predicted value in the row's unit, and the batch it was predicted at."""
    prefill, decode, batch = timings(row, catalog, efficiencies)
    return value(row, prefill, decode, batch), batch


def speed_ratio(row: Row, predicted: float) -> float:
    """Measured over predicted speed (tokens/s, or 1/time)."""
    return predicted / row.measured if row.is_time else row.measured / predicted


def score(rows: list[Row], catalog, efficiencies=None) -> list[dict]:
    out = []
    for row in rows:
        predicted, batch = predict(row, catalog, efficiencies)
        out.append({"row": row.number, "split": row.split, "category": row.category, "model": row.model,
                    "device": row.device, "count": row.count, "weights": row.weights, "batch": batch,
                    "prompt": row.prompt, "output": row.output, "measured": row.measured, "predicted": predicted,
                    "unit": "s" if row.is_time else "tokens/s" + ("/GPU" if row.per_device else ""),
                    "error": predicted / row.measured - 1.0, "speed_ratio": speed_ratio(row, predicted),
                    "source": row.source})
    return out


def summary(results: list[dict]) -> dict:
    table = {}
    for split in ("fit", "held-out"):
        for category in ("decode", "throughput", "ttft", "all"):
            errors = [abs(r["error"]) for r in results if r["split"] == split and category in (r["category"], "all")]
            if errors:
                table[f"{split}/{category}"] = {"n": len(errors), "median_abs_error": statistics.median(errors),
                                                "max_abs_error": max(errors)}
    return table


def fit(rows: list[Row], catalog) -> tuple[float, float, float]:
    """Pattern search on (memory, matrix, overhead) for the least squared log speed ratio on the fitting rows."""
    fitting = [r for r in rows if r.split == "fit"]

    def loss(p):
        memory, matrix, overhead = p
        if not (0.05 <= memory <= MAX_MEMORY_FRACTION and 0.05 <= matrix <= 1 and 0 <= overhead <= 0.02):
            return math.inf
        return sum(math.log(speed_ratio(r, predict(r, catalog, p)[0])) ** 2 for r in fitting)

    point = [SERVING_MEMORY_EFFICIENCY, SERVING_MATRIX_EFFICIENCY, SERVING_STEP_OVERHEAD]
    steps = [0.1, 0.1, 1e-3]
    best = loss(point)
    while max(s / scale for s, scale in zip(steps, (0.1, 0.1, 1e-3), strict=True)) > 0.02:
        improved = False
        for i in range(3):
            for sign in (1, -1):
                trial = list(point)
                trial[i] += sign * steps[i]
                value = loss(trial)
                if value < best:
                    best, point, improved = value, trial, True
        if not improved:
            steps = [s / 2 for s in steps]
    return round(point[0], 3), round(point[1], 3), round(point[2], 5)


# The leave-one-source-out grid (--by-source): every row is timed once per (memory, matrix) pair with no per-pass
# overhead; the overhead adds to the time to first token and to each decode step one for one (checked: the
# engine adds it once per forward pass), so every value of it is free.
LOSO_MEMORY = (0.7, 0.75, 0.8, 0.85, 0.9)
LOSO_MATRIX = tuple(round(0.4 + 0.025 * i, 3) for i in range(17))  # 0.40-0.80
LOSO_OVERHEAD = tuple(round(0.25e-3 * i, 5) for i in range(25))  # 0-6 ms


def timing_cache(rows: list[Row], catalog) -> dict[tuple[float, float], list[tuple[float, float, float]]]:
    """Per (memory, matrix) of the grid, every row's (prefill s, decode s, batch) with no per-pass overhead.

    Row by row, the whole grid at once: a row's layer graphs do not depend on the constants, and the serving
    graphs' cache (:func:`sizer.passes.arithmetic._graphs`) keeps them across the row's grid whatever its bound
    (grid first, under a bound of 16 the rows' cases evicted each other and every one of the 85 points rebuilt
    them: 8 x the time, the same numbers)."""
    grid = [(m, x) for m in LOSO_MEMORY for x in LOSO_MATRIX]
    by_row = [[timings(r, catalog, (m, x, 0.0)) for m, x in grid] for r in rows]
    return {p: [times[j] for times in by_row] for j, p in enumerate(grid)}


def by_source(rows: list[Row], catalog, cache=None) -> dict:
    """Leave one source out: per source, the three serving constants chosen on every other source's rows
    (benchmarks/serving_loso.py: sources weighed alike, mean absolute log error), the source scored at them."""
    import serving_loso as loso

    cache = cache if cache is not None else timing_cache(rows, catalog)
    grid = [(m, x, o) for m in LOSO_MEMORY for x in LOSO_MATRIX for o in LOSO_OVERHEAD]
    sources = sorted({r.source_key for r in rows})
    index = {s: [i for i, r in enumerate(rows) if r.source_key == s] for s in sources}

    def predicted(i: int, p) -> float:
        prefill, decode, batch = cache[p[0], p[1]][i]
        return value(rows[i], prefill + p[2], decode + p[2], batch)

    memo: dict = {}

    def loss(p, source: str) -> float:
        if (p, source) not in memo:
            memo[p, source] = statistics.fmean(abs(math.log(speed_ratio(rows[i], predicted(i, p)))) for i in index[source])
        return memo[p, source]

    records, chosen = [], {}
    for held in sources:
        p = loso.choose(grid, [s for s in sources if s != held], loss)
        chosen[held] = p
        for i in index[held]:
            r, pred = rows[i], predicted(i, p)
            records.append({"row": r.number, "source": held, "category": r.category, "model": r.model, "device": r.device,
                            "count": r.count, "measured": r.measured, "predicted": pred, "error": pred / r.measured - 1.0,
                            "speed_error": 1.0 / speed_ratio(r, pred) - 1.0, "fitted": p})
    everything = loso.choose(grid, sources, loss)
    # a time's error is taken on the speed (1 / time), as the range and the fit take it
    out = {"figures": {c: loso.figures([x["speed_error"] for x in records if c in (x["category"], "all")])
                       for c in ("decode", "throughput", "ttft", "all")},
           "per_source": {s: loso.figures([x["speed_error"] for x in records if x["source"] == s]) for s in sources},
           "chosen": {s: dict(zip(("memory", "matrix", "step_overhead_s"), p, strict=True)) for s, p in chosen.items()},
           "all_sources_fit": dict(zip(("memory", "matrix", "step_overhead_s"), everything, strict=True)),
           "shipped": {"memory": SERVING_MEMORY_EFFICIENCY, "matrix": SERVING_MATRIX_EFFICIENCY,
                       "step_overhead_s": SERVING_STEP_OVERHEAD},
           "loss_shipped_vs_all_sources_fit": [statistics.fmean(loss(p, s) for s in sources) for p in (
               _on_grid((SERVING_MEMORY_EFFICIENCY, SERVING_MATRIX_EFFICIENCY, SERVING_STEP_OVERHEAD)), everything)],
           "records": records}
    return out


def _on_grid(p: tuple[float, float, float]) -> tuple[float, float, float]:
    """The grid point nearest ``p``."""
    return (min(LOSO_MEMORY, key=lambda m: abs(m - p[0])), min(LOSO_MATRIX, key=lambda x: abs(x - p[1])),
            min(LOSO_OVERHEAD, key=lambda o: abs(o - p[2])))


def write_by_source(result: dict) -> None:
    """benchmarks/results/inference_by_source.{json,md}."""
    import serving_loso as loso

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "inference_by_source.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    lines = ["# Serving, single requests and static batches, by source (`benchmarks/inference_accuracy.py --by-source`)", "",
             "Leave one source out: the decode bandwidth fraction, the matrix fraction and the per-pass time are chosen "
             "on every other source (each weighed alike, mean absolute log error) and the held-out source is scored at "
             "them. Error of a time: on the speed (1 / time).", "",
             "| rows | n | median \\|error\\| | p90 | signed median |", "| --- | ---: | ---: | ---: | ---: |"]
    for key, f in result["figures"].items():
        lines.append(f"| {key} | {f['n']} | {f['median_abs_error']:.1%} | {f['p90_abs_error']:.1%} | {f['signed_median']:+.1%} |")
    chosen = {s: f"memory {c['memory']:g}, matrix {c['matrix']:g}, {c['step_overhead_s'] * 1e3:g} ms"
              for s, c in result["chosen"].items()}
    lines += ["", *loso.table(result["per_source"], chosen), "",
              f"All sources: memory {result['all_sources_fit']['memory']:g}, matrix {result['all_sources_fit']['matrix']:g}, "
              f"{result['all_sources_fit']['step_overhead_s'] * 1e3:g} ms per pass (shipped: {result['shipped']['memory']:g}, "
              f"{result['shipped']['matrix']:g}, {result['shipped']['step_overhead_s'] * 1e3:g} ms); mean source loss "
              f"shipped {result['loss_shipped_vs_all_sources_fit'][0]:.4f}, all-source fit "
              f"{result['loss_shipped_vs_all_sources_fit'][1]:.4f}.", "",
             "| row | held-out source | category | model | device x n | measured | predicted | error |",
             "| --- | --- | --- | --- | --- | ---: | ---: | ---: |"]
    lines += [f"| {x['row']} | {loso.short_source(x['source'])} | {x['category']} | {x['model'].split(' (')[0]} | "
              f"{x['device']} x {x['count']} | {x['measured']:.4g} | {x['predicted']:.4g} | {x['error']:+.1%} |"
              for x in result["records"]]
    (RESULTS / "inference_by_source.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_spread(results: list[dict]) -> dict:
    ratios = sorted(r["speed_ratio"] for r in results if r["split"] == "held-out")
    low, high = (float(np.quantile(ratios, q)) for q in SPREAD_QUANTILES)
    spread = {"low": round(min(low, 1.0), 3), "high": round(max(high, 1.0), 3),
              "source": f"{SPREAD_QUANTILES[0]:.0%}-{SPREAD_QUANTILES[1]:.0%} percentile of measured/predicted speed "
                        f"on the held-out rows, n = {len(ratios)} (benchmarks/inference_accuracy.py)"}
    text = ("# Factors of the expected serving speed that bound a range (times: the inverse).\n"
            "# Written by benchmarks/inference_accuracy.py --write-spread; do not edit by hand.\n")
    import yaml

    text += yaml.safe_dump({"speed": spread}, sort_keys=False)
    tmp = SPREAD_FILE.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(SPREAD_FILE)
    return spread


def write_results(results: list[dict], left_out, table: dict, efficiencies) -> None:
    RESULTS.mkdir(exist_ok=True)
    payload = {"efficiencies": dict(zip(("memory", "matrix", "step_overhead_s"), efficiencies, strict=True)),
               "split": "fit: TensorRT-LLM docs/source/performance.md (v0.6.1) and FasterTransformer rows; "
                        "held out: every other timing row", "summary": table, "rows": results,
               "left_out": [{"row": n, "reason": why} for n, why in left_out]}
    for name, text in (("inference_accuracy.json", json.dumps(payload, indent=2) + "\n"), ("inference_accuracy.md", markdown(payload))):
        tmp = RESULTS / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(RESULTS / name)


def markdown(payload: dict) -> str:
    lines = ["# Serving accuracy (`benchmarks/inference_accuracy.py`)", "",
             f"Efficiencies: {payload['efficiencies']}. Split: {payload['split']}.", "",
             "| split / category | n | median abs error | max abs error |", "| --- | --- | --- | --- |"]
    for key, s in payload["summary"].items():
        lines.append(f"| {key} | {s['n']} | {s['median_abs_error']:.1%} | {s['max_abs_error']:.1%} |")
    lines += ["", "| row | split | category | model | device x n | weights | batch | in/out | measured | predicted | error |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in payload["rows"]:
        lines.append(f"| {r['row']} | {r['split']} | {r['category']} | {r['model'].split(' (')[0]} | {r['device']} x {r['count']} | "
                     f"{r['weights']} | {r['batch']:g} | {r['prompt']}/{r['output']} | {r['measured']:.4g} {r['unit']} | "
                     f"{r['predicted']:.4g} | {r['error']:+.0%} |")
    lines += ["", "Left out:", ""] + [f"- row {x['row']}: {x['reason']}" for x in payload["left_out"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="refit the three serving efficiencies on the fitting rows")
    parser.add_argument("--write-spread", action="store_true", help="write the range factors from the held-out rows")
    parser.add_argument("--by-source", action="store_true", help="leave one source out: refit on the other sources, "
                                                                 "score the held-out one (the headline)")
    args = parser.parse_args()
    catalog = load_catalog()
    rows, left_out = read_rows()
    if args.by_source:
        result = by_source(rows, catalog)
        for key, f in result["figures"].items():
            print(f"{key:11s} n={f['n']:2d}  median |error| {f['median_abs_error']:.1%}  p90 {f['p90_abs_error']:.1%}  "
                  f"signed {f['signed_median']:+.1%}")
        print("all sources:", result["all_sources_fit"], "shipped:", result["shipped"])
        write_by_source(result)
        return
    efficiencies = (SERVING_MEMORY_EFFICIENCY, SERVING_MATRIX_EFFICIENCY, SERVING_STEP_OVERHEAD)
    if args.fit:
        efficiencies = fit(rows, catalog)
        print(f"fitted: memory {efficiencies[0]}, matrix {efficiencies[1]}, step overhead {efficiencies[2]} s")
    results = score(rows, catalog, efficiencies)
    table = summary(results)
    for key, s in table.items():
        print(f"{key:22s} n={s['n']:2d}  median |error| {s['median_abs_error']:.1%}  max {s['max_abs_error']:.1%}")
    if args.write_spread:
        print("spread:", write_spread(results))
    write_results(results, left_out, table, efficiencies)


if __name__ == "__main__":
    main()
