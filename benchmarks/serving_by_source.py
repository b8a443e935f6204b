"""Serving under load judged by source (issue 38, item 1): every askable point of ``shared/data/serving-tails.csv``.

    python benchmarks/serving_by_source.py [--per-source N] [--max-points N] [--requests N]

Each measured point (one server configuration under one Poisson rate, concurrency cap, burst or serial run) that
sizer can ask -- a model, device, count and serving runtime it knows -- is simulated by
:func:`sizer.inference.simulate.simulate` under the load the benchmark applied, and its output tokens/s, p50/p99
TTFT and p99 TPOT (ITL where no TPOT is given) are scored against the measurement.

Split: **nothing in sizer is fitted on this file**, so every figure is out of sample by construction; the
leave-one-source-out split of the issue holds trivially (no source's rows ever reach a fit). The fitted
constants the simulator does use come from other files (benchmarks/serving_accuracy.py,
benchmarks/inference_accuracy.py). Figures are reported per metric, per runtime and per device class, with
the sources.

Sampling (the simulator is slow on 2 shared cores): points are sorted by (source, setup, load) and at most
``--per-source`` points of each source are taken, evenly spaced over its sorted points, up to ``--max-points``
in all; the selection is deterministic (no random draw). Requests per point: the benchmark's own number of
prompts, capped at ``--requests``.

Load as the benchmark applied it: a Poisson (or constant) rate as an open stream of that many prompts; a
concurrency cap as that many users in a closed loop without think time; a burst (rate inf, no cap) as every
prompt in flight at t = 0 (as many users as prompts, each sending one); a serial run as one user. Lengths:
the point's own mean lengths (total tokens / successful requests) where the row gives them, else the means
stated in ``length_distribution``, else ``input_len``/``output_len``. ``--lengths spread`` draws ShareGPT-type
sets' lengths from a log-normal around those means with the spread AccelMark states for its ShareGPT prompt
set (p50/p75 = 280/580 tokens: sigma 1.08); ``--lengths means`` (the default, what sizer asks today for a named
ShareGPT sample) puts every request at the means.

Range: the serving speed range sizer states (``sizer/inference/error_spread.yaml``: 0.792-1.328 x speed,
times the inverse) is applied to every figure, and the share of measured points inside it is reported.

Data: ``benchmarks/serving_tails.csv``, the rows and columns read, extracted from the shared file by ``--extract``.
Results: ``benchmarks/results/serving_by_source.{json,md}``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from sizer.errors import InputError  # noqa: E402
from sizer.hardware.catalog import Catalog, load_catalog  # noqa: E402
from sizer.inference import benchmark_lengths as bl  # noqa: E402
from sizer.inference import simulate as sim  # noqa: E402
from sizer.inference.estimate import speed_spread  # noqa: E402
from sizer.inference.formats import kv_cache_bytes_per_value, weight_format  # noqa: E402
from sizer.inference.sim_invariants import SimulationInvariantError  # noqa: E402
from sizer.inference.simulate import simulate  # noqa: E402
from sizer.inference.traffic import Distribution, Lengths, Load, LogNormal  # noqa: E402
from sizer.inference.under_load import runtime_refusal  # noqa: E402
from sizer.runtimes import runtime  # noqa: E402
from sizer.workloads.registry import checkpoint_weights, resolve_model  # noqa: E402

SHARED = HERE.parent.parent / "shared" / "data" / "serving-tails.csv"
# The columns and metrics this scorer reads, extracted from SHARED (10.8 MB with its snippets) by --extract: every
# row keeps its source_id and source_ref
DATA = HERE / "serving_tails.csv"
COLUMNS = ("source_id", "source_ref", "runtime", "model", "weights_dtype", "gpu", "tp", "scenario", "dataset", "input_len",
           "output_len", "length_distribution", "num_prompts", "request_rate_per_s", "concurrency", "setup_id",
           "metric", "value", "unit")
KEPT_METRICS = ("output_tokens_per_s", "ttft_p50", "ttft_p99", "tpot_p99", "itl_p99", "successful_requests",
                "total_input_tokens", "total_output_tokens")
RESULTS = HERE / "results"
# AccelMark sharegpt_standard_v1 (in the file's dataset column): input tokens p50 280, p75 580 -> log-normal
# sigma = ln(580/280) / z(0.75) = 1.08; used as the spread of every ShareGPT-type set with --lengths spread
SHAREGPT_SIGMA = math.log(580 / 280) / 0.6745
Z90, Z99 = 1.2816, 2.3263
# AccelMark does not state its output lengths (outputs stop at EOS or max_tokens): assumed the mean ShareGPT reply
# the vLLM benchmark rows of this file measure (mean output 194-202 tokens, derived from their block totals)
SHAREGPT_OUTPUT = 200.0

# The file's runtime -> sizer's serving runtime (vLLM-ROCm is vLLM's ROCm build); MindIE, vLLM-Ascend,
# vLLM-MUSA and 1Cat-vLLM have no profile in sizer
RUNTIMES = {"vLLM": "vllm", "vLLM-ROCm": "vllm", "SGLang": "sglang", "TensorRT-LLM": "tensorrt-llm"}
# The file's normalised gpu -> catalog query; not askable: A100 (memory not stated), H20-3e (141 GB; the
# catalog has the 96 GB H20 only), Ascend, MTT S4000 (no catalog entry)
DEVICES = {"NVIDIA A100-80GB": "a100-80gb-sxm4", "NVIDIA A100-40GB": "a100-40gb-sxm4", "NVIDIA H100": "h100-sxm5-80gb",
           "NVIDIA H200": "h200-sxm-141gb", "NVIDIA RTX 3090": "rtx-3090", "NVIDIA RTX 4090": "rtx-4090",
           "NVIDIA RTX 4090D": "rtx-4090d", "NVIDIA RTX 5090": "rtx-5090", "NVIDIA RTX A6000": "rtx-a6000",
           "NVIDIA RTX 6000 Ada": "rtx-6000-ada", "NVIDIA RTX 4000 Ada": "rtx-4000-ada", "NVIDIA L4": "l4",
           "NVIDIA V100S-PCIe-32GB": "tesla-v100s-pcie-32gb", "NVIDIA V100-PCIe-32GB": "NVIDIA Tesla V100 PCIe 32GB",
           "NVIDIA A800-80GB": "a800-sxm4-80gb", "AMD MI100": "mi100", "AMD MI300X": "mi300x"}
CLASSES = {"rtx-3090": "consumer", "rtx-4090": "consumer", "rtx-4090d": "consumer", "rtx-5090": "consumer",
           "rtx-a6000": "workstation", "rtx-6000-ada": "workstation", "rtx-4000-ada": "workstation",
           "mi100": "AMD", "mi300x": "AMD"}  # everything else: data-centre NVIDIA
# first match wins; Qwen3-Coder, Qwen3.5/3.6/3.8 (linear attention, refused), GLM and Qwen2-72B are not asked
MODELS = (("Llama-3.1-8B", "llama-3.1-8b"), ("Meta-Llama-3-8B", "llama-3-8b"), ("Meta-Llama-3-70B", "llama-3-70b"),
          ("Qwen2-7B", "qwen2-7b"), ("Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B-Instruct"), ("Qwen2.5-32B", "Qwen/Qwen2.5-32B"),
          ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B"), ("Qwen/Qwen3-14B", "Qwen/Qwen3-14B"), ("Qwen/Qwen3-32B", "Qwen/Qwen3-32B"),
          ("Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B"), ("Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B"),
          ("gpt-oss-20b", "gpt-oss-20b"), ("gpt-oss-120b", "openai/gpt-oss-120b"),
          ("DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528"), ("Mixtral-8x7B", "mistralai/Mixtral-8x7B-Instruct-v0.1"))
# metric scored -> (the file's metric, kind): rates are higher-better, times lower-better
METRICS = {"output_tokens_per_s": ("output_tokens_per_s", "rate"), "ttft_p50": ("ttft_p50", "time"),
           "ttft_p99": ("ttft_p99", "time"), "tpot_p99": ("tpot_p99", "time")}


@dataclass
class Point:
    """One measured point: a configuration under one load, with its measured metrics."""

    source: str
    runtime: str
    device: str
    model: str
    weights: str
    count: int
    scenario: str  # rate | users | burst | serial
    rate: float | None
    users: int | None
    prompts: int
    prompt_mean: float
    output_mean: float
    sharegpt: bool
    prompt_sigma: float | None = None  # a stated prompt spread (log-normal sigma), where the set states one
    measured: dict[str, float] = field(default_factory=dict)
    key: str = ""

    @property
    def device_class(self) -> str:
        return CLASSES.get(self.device, "data-centre NVIDIA")


def _num(text: str) -> float | None:
    m = re.match(r"\s*([0-9.]+)", text or "")
    return float(m.group(1)) if m else None


def _model(name: str) -> str | None:
    if "Coder" in name or "Qwen3.5" in name or "Qwen3.6" in name or "Qwen3.8" in name:
        return None
    return next((v for k, v in MODELS if k in name), None)


def _weights(text: str, model: str) -> str | None:
    t = text.lower()
    if t.startswith("mxfp4"):
        return checkpoint_weights(model) or "mxfp4"
    if "int4" in t or "w4a16" in t:
        return "gptq-int4-g128" if "gptq" in t or "w4a16" in t else "awq-int4-g128"
    if "w8a8" in t or t.startswith("int8 (w8a8"):
        return "w8a8"
    if "int8" in t or "w8a16" in t:
        return "int8"
    if t.startswith("fp8"):
        return "fp8"
    if t.startswith("bf16") or t.startswith("fp16"):
        return "bf16"
    return None


def accelmark_lengths(dataset: str) -> tuple[float, float, float] | None:
    """Mean prompt and output tokens and the prompt's log-normal sigma of an AccelMark set, from the quantiles its
    dataset column states (p50 with p75, else p99); the output mean is not stated: :data:`SHAREGPT_OUTPUT` capped at
    the set's max_tokens (assumed, not verified)."""
    if not dataset.startswith("AccelMark"):
        return None
    quant = re.search(r"p25/p50/p75/p99 = ([0-9]+)/([0-9]+)/([0-9]+)/([0-9]+)", dataset)
    cap = re.search(r"max_tokens ([0-9]+)", dataset)
    if quant:
        median, sigma = float(quant.group(2)), math.log(float(quant.group(3)) / float(quant.group(2))) / 0.6745
    elif (m := re.search(r"p25/p50/p99 = ([0-9]+)/([0-9]+)/([0-9]+)", dataset)):
        median, sigma = float(m.group(2)), math.log(float(m.group(3)) / float(m.group(2))) / Z99
    elif (m := re.search(r"p50 ([0-9]+), p99 ([0-9]+)", dataset)):
        median, sigma = float(m.group(1)), math.log(float(m.group(2)) / float(m.group(1))) / Z99
    else:
        return None
    output = min(SHAREGPT_OUTPUT, float(cap.group(1))) if cap else SHAREGPT_OUTPUT
    return median * math.exp(sigma ** 2 / 2), output, sigma


def _lengths(rows: list[dict[str, str]], metrics: dict[str, float]) -> tuple[float, float] | None:
    """Mean prompt and output tokens of a point: its own totals, else the stated means, else the fixed lengths."""
    done = metrics.get("successful_requests")
    if done and metrics.get("total_input_tokens") and metrics.get("total_output_tokens"):
        return metrics["total_input_tokens"] / done, metrics["total_output_tokens"] / done
    stated = accelmark_lengths(rows[0]["dataset"])
    if stated is not None:
        return stated[0], stated[1]
    m = re.search(r"mean input ([0-9.]+), mean output ([0-9.]+)", rows[0]["length_distribution"])
    if m:
        return float(m.group(1)), float(m.group(2))
    p, o = rows[0]["input_len"], rows[0]["output_len"]
    if re.fullmatch(r"[0-9]+( \(derived\))?", p) and re.fullmatch(r"[0-9]+( \(derived\))?", o):
        return float(p.split()[0]), float(o.split()[0])
    return None


def extract() -> int:
    """Write :data:`DATA` from :data:`SHARED`: the rows of the metrics scored or used for lengths, the columns read.

    Returns
    -------
    int
        Rows written [1].
    """
    rows = [{k: r[k] for k in COLUMNS} for r in csv.DictReader(open(SHARED, encoding="utf-8"))
            if r["metric"] in KEPT_METRICS]
    with open(DATA, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def points() -> tuple[list[Point], dict[str, int]]:
    """Every askable point of the file, and the count of points left out by reason."""
    groups: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for r in csv.DictReader(open(DATA, encoding="utf-8")):
        key = (r["source_id"], r["setup_id"], r["model"], r["weights_dtype"], r["scenario"], r["dataset"],
               r["input_len"], r["output_len"], r["num_prompts"], r["request_rate_per_s"], r["concurrency"])
        groups[key].append(r)
    out, skipped = [], defaultdict(int)
    for key, rows in sorted(groups.items()):
        r = rows[0]
        metrics = {x["metric"]: float(x["value"]) for x in rows if _num(x["value"]) is not None}
        if not any(m in metrics for m, _ in METRICS.values()) and "itl_p99" not in metrics:
            skipped["no scored metric"] += 1
            continue
        rt, dev, model = RUNTIMES.get(r["runtime"]), DEVICES.get(r["gpu"]), _model(r["model"])
        weights = _weights(r["weights_dtype"], model or "") if model else None
        reason = ("runtime" if rt is None else "device" if dev is None else "model" if model is None
                  else "weights" if weights is None else "")
        lengths = _lengths(rows, metrics)
        if not reason and lengths is None:
            reason = "lengths not stated"
        if not reason and not r["tp"].isdigit():
            reason = "device count"
        if reason:
            skipped[reason] += 1
            continue
        assert lengths is not None and rt is not None and dev is not None and model is not None and weights
        scen, rate_text, conc = r["scenario"], r["request_rate_per_s"], r["concurrency"]
        prompts = int(_num(r["num_prompts"]) or 0) or 100
        rate = _num(rate_text) if not rate_text.startswith("inf") else None
        if scen.startswith("serial"):
            kind, users = "serial", 1
        elif scen.startswith("server") and rate:
            kind, users = "rate", None
        elif conc.isdigit():
            kind, users = "users", int(conc)
        elif scen.startswith("burst"):
            kind, users = "burst", prompts
        else:
            skipped["load not stated"] += 1
            continue
        if "tpot_p99" not in metrics and "itl_p99" in metrics:  # ITL where no TPOT is given (scored as TPOT)
            metrics["tpot_p99"] = metrics["itl_p99"]
        out.append(Point(r["source_id"], rt, dev, model, weights, int(r["tp"]), kind, rate if kind == "rate" else None,
                         users, prompts, *lengths, "sharegpt" in r["dataset"].lower(),
                         (accelmark_lengths(r["dataset"]) or (0, 0, None))[2], metrics, "|".join(key)))
    return out, dict(skipped)


def sample(all_points: list[Point], per_source: int, max_points: int) -> list[Point]:
    """At most ``per_source`` points of each source, evenly spaced over its sorted points (deterministic)."""
    by: dict[str, list[Point]] = defaultdict(list)
    for p in all_points:
        by[p.source].append(p)
    picked = []
    for src in sorted(by):
        ps = by[src]
        step = max(len(ps) / per_source, 1.0)
        picked += [ps[int(i * step)] for i in range(min(per_source, len(ps)))]
    return picked[:max_points]


def _lengths_of(p: Point, spread: bool) -> Lengths:
    if not (spread and p.sharegpt):
        return Lengths(max(1, round(p.prompt_mean)), max(1, round(p.output_mean)))

    def around(mean: float, sigma: float) -> LogNormal:  # the log-normal of that mean with that sigma
        median = mean / math.exp(sigma ** 2 / 2)
        return LogNormal(median, median * math.exp(Z90 * sigma))
    return Lengths(distribution=Distribution("sharegpt-spread", around(p.prompt_mean, p.prompt_sigma or SHAREGPT_SIGMA),
                                             around(p.output_mean, SHAREGPT_SIGMA),
                                             "AccelMark sharegpt_standard_v1 spread"))


def benchmark_lengths(p: Point) -> Lengths:
    """``--lengths benchmark`` (issue 38, item 3): the point's lengths drawn as its benchmark draws them
    (:mod:`sizer.inference.benchmark_lengths`): vLLM's ShareGPT sample spread and filtered around the point's own means;
    vLLM's random dataset uniform within its range ratio; anything else at its means. AccelMark's sets stay at their
    means: drawing its stated prompt quantiles (p99 2,100 tokens) made serial p99 TTFT 48 % pessimistic (-32 % at the
    means), and spreading its replies (not stated; assumed 200 tokens) traded p99 for p50 and TPOT (ACCURACY.md, "Load
    as benchmarks apply it")."""
    dataset = p.key.split("|")[5]  # the grouping key of points(): source, setup, model, weights, scenario, dataset, ...
    fixed = Lengths(max(1, round(p.prompt_mean)), max(1, round(p.output_mean)))
    if dataset.startswith("ShareGPT"):
        try:
            return Lengths(distribution=bl.sharegpt_as_sampled(round(p.prompt_mean, 1), round(p.output_mean, 1)))
        except ValueError:
            return fixed
    ratio = re.search(r"range ratio ([0-9.]+)", dataset)
    if dataset.startswith("random") and ratio:
        return Lengths(distribution=bl.random_dataset(round(p.prompt_mean), round(p.output_mean), float(ratio.group(1))))
    return fixed


def predict(p: Point, catalog: Catalog, requests: int, spread: bool | str = False,
            warmup: float = 0.0) -> dict[str, float] | str:
    """Simulated figures of ``p``: output tokens/s and TTFT/TPOT percentiles [ms], or the refusal in words."""
    try:
        device = catalog.find(p.device)
        fmt = weight_format(p.weights)
        refusal = runtime_refusal(runtime(p.runtime), fmt, device)
        if refusal:  # what `sizer inference` answers for it (FP8 on Ampere: vLLM's weight-only FP8 is not modelled)
            return f"refused: {refusal[:90]}"
        table = sim.batching_table((device,), fmt)
        if not table.supported[0]:  # what `sizer inference` refuses (estimate.refused_format)
            return f"refused: the catalog has no {fmt.compute} peak for {p.device} ({p.weights} weights)"
        replica = sim.runtime_replica(runtime(p.runtime), resolve_model(p.model), fmt, kv_cache_bytes_per_value("fp16"),
                                      table, 0, p.count)
    except (InputError, ValueError, KeyError) as e:
        return f"refused: {str(e)[:80]}"
    lengths = benchmark_lengths(p) if spread == "benchmark" else _lengths_of(p, bool(spread))
    n = min(p.prompts, requests)
    if p.scenario == "rate":
        load = Load(rate=p.rate)
    else:
        load = Load(users=min(p.users or 1, n), burst=p.scenario == "burst")
    try:
        run = simulate(replica, load, lengths, n, warmup=warmup)
    except (ValueError, SimulationInvariantError) as e:
        return f"simulator failed: {str(e)[:70]} ({p.weights} on {p.device})"
    if len(run.ttft) == 0:
        return "nothing measured (requests longer than the KV cache)"
    return {"output_tokens_per_s": run.output_tokens_per_s * 1.0,
            "ttft_p50": run.percentile("ttft", 50) * 1e3, "ttft_p99": run.percentile("ttft", 99) * 1e3,
            "tpot_p99": run.percentile("tpot", 99) * 1e3 if len(run.tpot) else math.nan}


def _stats(errs: list[float], inside: list[bool]) -> dict[str, Any]:
    if not errs:
        return {"n": 0}
    a = sorted(abs(e) for e in errs)
    return {"n": len(errs), "median_abs_pct": round(100 * statistics.median(a), 1),
            "p90_abs_pct": round(100 * a[min(len(a) - 1, int(math.ceil(0.9 * len(a))) - 1)], 1),
            "signed_median_pct": round(100 * statistics.median(errs), 1),
            "inside_range_pct": round(100 * sum(inside) / len(inside), 1)}


def score(picked: list[Point], catalog: Catalog, requests: int, spread: bool | str, warmup: float = 0.0) -> dict[str, Any]:
    """Errors of every sampled point; signed error = predicted / measured - 1 (positive: sizer says more
    tokens/s or a longer time than measured)."""
    spread_factors = speed_spread()
    low, high = float(spread_factors["low"]), float(spread_factors["high"])
    rows, refused = [], defaultdict(int)
    for p in picked:
        got = predict(p, catalog, requests, spread, warmup)
        if isinstance(got, str):
            refused[got] += 1
            continue
        for name, (measured_name, kind) in METRICS.items():
            measured = p.measured.get(measured_name)
            pred = got[name]
            if measured is None or measured <= 0 or not math.isfinite(pred):
                continue
            # the range sizer states around its speed; times are its inverse
            lo, hi = (pred * low, pred * high) if kind == "rate" else (pred / high, pred / low)
            rows.append({"source": p.source, "runtime": p.runtime, "device": p.device, "class": p.device_class,
                         "model": p.model, "scenario": p.scenario, "rate": p.rate, "users": p.users, "metric": name,
                         "measured": round(measured, 3), "predicted": round(pred, 3),
                         "error": round(pred / measured - 1, 4), "inside": lo <= measured <= hi})
    return {"rows": rows, "refused": dict(refused)}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for metric in METRICS:
        mine = [r for r in rows if r["metric"] == metric]
        entry = {"all": _stats([r["error"] for r in mine], [r["inside"] for r in mine])}
        for dim in ("runtime", "class", "scenario"):
            for val in sorted({r[dim] for r in mine}):
                sel = [r for r in mine if r[dim] == val]
                entry[f"{dim}={val}"] = _stats([r["error"] for r in sel], [r["inside"] for r in sel])
        out[metric] = entry
    return out


def loso_ranges(rows: list[dict[str, Any]], low_q: float = 0.05, high_q: float = 0.95) -> dict[str, Any]:
    """What a range from the cross-source spread would hold (issue 38, item 6; not yet in sizer's answers): for each
    source held out, the ``low_q``-``high_q`` quantiles of measured / predicted over the *other* sources' points
    bound its points; per metric, the share of held-out points inside and the median bounds [x predicted]."""
    out: dict[str, Any] = {}
    for metric in METRICS:
        mine = [r for r in rows if r["metric"] == metric]
        inside, lows, highs = [], [], []
        for src in sorted({r["source"] for r in mine}):
            others = sorted(r["measured"] / r["predicted"] for r in mine if r["source"] != src and r["predicted"] > 0)
            if len(others) < 10:
                continue
            lo, hi = others[int(low_q * (len(others) - 1))], others[int(math.ceil(high_q * (len(others) - 1)))]
            lows.append(lo)
            highs.append(hi)
            inside += [lo <= r["measured"] / r["predicted"] <= hi for r in mine if r["source"] == src and r["predicted"] > 0]
        if inside:
            out[metric] = {"n": len(inside), "inside_pct": round(100 * sum(inside) / len(inside), 1),
                           "median_low": round(statistics.median(lows), 3), "median_high": round(statistics.median(highs), 3)}
    return out


def _md(result: dict[str, Any]) -> str:
    lines = ["# Serving under load by source (serving-tails.csv)", "",
             f"Points scored: {result['points_scored']} of {result['points_sampled']} sampled, "
             f"{result['points_askable']} askable "
             f"({result['points_total']} measured points in the file); sources: {len(result['sources'])}; "
             f"lengths: {result['lengths']}; requests per point capped at {result['requests_cap']}; share of "
             f"requests not measured (warm-up): {result['warmup_share']}.",
             "Nothing in sizer is fitted on this file: every figure is out of sample (leave-one-source-out holds "
             "trivially). Signed error = predicted / measured - 1.", ""]
    for metric, groups in result["summary"].items():
        lines += [f"## {metric}", "", "| group | n | median abs % | p90 abs % | signed median % | inside range % |",
                  "|---|---:|---:|---:|---:|---:|"]
        for g, s in groups.items():
            if s.get("n"):
                lines.append(f"| {g} | {s['n']} | {s['median_abs_pct']} | {s['p90_abs_pct']} | "
                             f"{s['signed_median_pct']} | {s['inside_range_pct']} |")
        lines.append("")
    lines += ["## A range from the cross-source spread (leave-one-source-out; not yet in the answers)", "",
              "| metric | n | inside % | low x predicted | high x predicted |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {m} | {v['n']} | {v['inside_pct']} | {v['median_low']} | {v['median_high']} |"
              for m, v in result["loso_ranges"].items()]
    lines += ["", "## Sources scored", ""] + [f"- {s}" for s in result["sources"]]
    lines += ["", "## Points not askable", ""] + [f"- {k}: {v}" for k, v in sorted(result["skipped"].items())]
    lines += [f"- {k}: {v}" for k, v in sorted(result["refused"].items())]
    return "\n".join(lines) + "\n"


def run(per_source: int, max_points: int, requests: int, spread: bool | str, warmup: float = 0.0) -> dict[str, Any]:
    catalog = load_catalog()
    all_points, skipped = points()
    picked = sample(all_points, per_source, max_points)
    t0 = time.time()
    scored = score(picked, catalog, requests, spread, warmup)
    return {"points_total": len(all_points) + sum(skipped.values()), "points_askable": len(all_points),
            "points_sampled": len(picked), "points_scored": len(picked) - sum(scored["refused"].values()), "per_source": per_source, "requests_cap": requests,
            "lengths": ("drawn as each benchmark draws them" if spread == "benchmark" else
                        "log-normal spread for ShareGPT sets" if spread else "every request at the means"),
            "warmup_share": warmup,
            "seconds": round(time.time() - t0, 1), "skipped": skipped, "refused": scored["refused"],
            "sources": sorted({r["source"] for r in scored["rows"]}), "summary": summarise(scored["rows"]),
            "loso_ranges": loso_ranges(scored["rows"]),
            "rows": scored["rows"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-source", type=int, default=1000)
    ap.add_argument("--max-points", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--lengths", choices=("means", "spread", "benchmark"), default="means",
                    help="benchmark: drawn as each point's benchmark draws them (benchmark_lengths)")
    ap.add_argument("--warmup", type=float, default=0.0, help="share of the requests not measured (0: every prompt, "
                    "as the benchmarks measure them; 0.1: the steady-state simulation's warm-up before issue 38)")
    ap.add_argument("--out", default="serving_by_source")
    ap.add_argument("--extract", action="store_true", help=f"rewrite {DATA.name} from {SHARED} first")
    args = ap.parse_args()
    if args.extract:
        print(f"{extract()} rows -> {DATA}")
    spread: bool | str = "benchmark" if args.lengths == "benchmark" else args.lengths == "spread"
    result = run(args.per_source, args.max_points, args.requests, spread, args.warmup)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=1) + "\n")
    (RESULTS / f"{args.out}.md").write_text(_md(result))
    print(_md(result))


if __name__ == "__main__":
    main()
