"""Accuracy of sizer's serving estimates against published LLM inference measurements.

    python benchmarks/inference_accuracy.py [--fit] [--write-spread]

Data: ``benchmarks/inference_benchmarks.csv`` (a copy of ``shared/data/inference-benchmarks.csv``:
TensorRT-LLM performance tables, FasterTransformer batch-1 figures, memory facts; every row with
its source). Timing rows are predicted by :mod:`sizer.inference`; memory facts are checked in
``tests/sizer/inference/test_inference.py``.

Split (fixed, by source document): the efficiencies are fitted on the rows of TensorRT-LLM's
``docs/source/performance.md`` (v0.6.1 tables) and of FasterTransformer (kipply's figures), and
scored on all the others (the H100-vs-A100 and H200 blogs, the v0.17 and v1.0 performance
overviews), which the fit never sees. ``--fit`` searches the three serving efficiencies (decode
bandwidth fraction, matrix-peak fraction, per-pass overhead) minimising the squared log error on
the fitting rows and prints them for ``sizer/engine/constants.py``; ``--write-spread`` writes the
range factors (10th-90th percentile of measured/predicted speed on the held-out rows) to
``sizer/inference/error_spread.yaml``. Results go to ``benchmarks/results/inference_accuracy.{json,md}``.
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
from sizer.inference.formats import kv_cache_bytes_per_value, weight_format  # noqa: E402
from sizer.inference.serving import ServingCase, evaluate_serving, replace_efficiencies, serving_table, total_tokens_per_second  # noqa: E402
from sizer.workloads.architecture import Architecture  # noqa: E402
from sizer.workloads.registry import find_model  # noqa: E402

DATA = HERE / "inference_benchmarks.csv"
RESULTS = HERE / "results"
SPREAD_FILE = HERE.parent / "sizer" / "inference" / "error_spread.yaml"
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
            left_out.append((number, f"memory fact ({metric}): checked in tests/sizer/inference/test_inference.py"))
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
                        source=f"{r['source_repo_or_url']}, {r['source_path_or_table']}"))
    return rows, left_out


def predict(row: Row, catalog, efficiencies: tuple[float, float, float] | None = None) -> tuple[float, float]:
    """The predicted value in the row's unit, and the batch it was predicted at."""
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
    if row.category == "ttft":
        return float(a.prefill_seconds[0]), batch
    if row.category == "decode":
        return (float(a.decode_seconds[0]) if row.is_time else 1.0 / float(a.decode_seconds[0])), batch
    total = float(total_tokens_per_second(np.asarray([batch]), row.output, a.prefill_seconds, a.decode_seconds)[0])
    return (total / row.count if row.per_device else total), batch


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
    args = parser.parse_args()
    catalog = load_catalog()
    rows, left_out = read_rows()
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
