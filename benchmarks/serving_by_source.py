"""Serving under load judged by source (issue 38, item 1): every askable point of ``shared/data/serving-tails.csv``.

    python benchmarks/serving_by_source.py [--per-source N] [--max-points N] [--requests N] [--no-fit] [--write-fit]

Each measured point (one server configuration under one Poisson rate, concurrency cap, burst or serial run) that
sizer can ask -- a model, device, count and serving runtime it knows -- is simulated by
:func:`sizer.simulator.simulate.simulate` under the load the benchmark applied, and its output tokens/s, p50/p99
TTFT and p99 TPOT (ITL where no TPOT is given) are scored against the measurement.

The deployment as the source ran it: the runtime's version names its engine generation
(sizer/runtimes/serving_mechanisms.yaml: vLLM V0 before 0.8, V1, SGLang, TensorRT-LLM), applied as sizer applies a
stated version (:func:`sizer.simulator.simulate.runtime_replica`), and the flags of the row's command are honoured
(``--gpu-memory-utilization``, ``--max-num-seqs``, ``--max-num-batched-tokens``, ``max_model_len``; SGLang's
``--mem-fraction-static``, ``--chunked-prefill-size``).

Split, leave-one-source-out (issue 38, item 1): candidate mechanisms (item 2) are small grids of values per engine
generation or device class; every point is simulated once per grid value, and each source is scored with the value
chosen on all the *other* sources (:func:`loso_fit`). The kept candidate's values chosen on all sources are what
serving_mechanisms.yaml ships (``--write-fit``); the other constants the simulator uses come from other files
(benchmarks/serving_accuracy.py, benchmarks/inference_accuracy.py). Figures are reported per metric, per runtime,
generation, device class and load, with the sources.

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

Range: the serving speed range sizer states (``sizer/serving/error_spread.yaml``: 0.792-1.328 x speed,
times the inverse) is applied to every figure, and the share of measured points inside it is reported.

Data: ``benchmarks/serving_tails.csv``, the rows and columns read, extracted from the shared file by ``--extract``.
Results: ``benchmarks/results/serving_by_source.{json,md}``.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
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

from sizer.engine.constants import SERVING_STEP_OVERHEAD, serving_efficiencies  # noqa: E402
from sizer.errors import InputError  # noqa: E402
from sizer.hardware.catalog import Catalog, load_catalog  # noqa: E402
from sizer.passes.arithmetic import serving_table  # noqa: E402
from sizer.runtimes import runtime, serving_mechanisms  # noqa: E402
from sizer.runtimes.formats import kv_cache_bytes_per_value, weight_format  # noqa: E402
from sizer.serving.estimate import speed_spread  # noqa: E402
from sizer.serving.under_load import runtime_refusal  # noqa: E402
from sizer.simulator import benchmark_lengths as bl  # noqa: E402
from sizer.simulator import simulate as sim  # noqa: E402
from sizer.simulator.invariants import SimulationInvariantError  # noqa: E402
from sizer.simulator.simulate import simulate  # noqa: E402
from sizer.simulator.traffic import Distribution, Lengths, Load, LogNormal  # noqa: E402
from sizer.workloads.registry import checkpoint_weights, resolve_model  # noqa: E402

# ../shared/data beside the checkout, else where the developers and CI keep it (as tests/conftest.py looks)
SHARED = next((d for d in (HERE.parent.parent / "shared" / "data", Path("/work/shared/data")) if d.is_dir()),
              HERE.parent.parent / "shared" / "data") / "serving-tails.csv"
# The columns and metrics this scorer reads, extracted from SHARED (10.8 MB with its snippets) by --extract: every
# row keeps its source_id and source_ref
DATA = HERE / "serving_tails.csv"
COLUMNS = ("source_id", "source_ref", "runtime", "framework_version", "server_config", "model", "weights_dtype", "gpu", "tp", "scenario", "dataset", "input_len",
           "output_len", "length_distribution", "num_prompts", "request_rate_per_s", "concurrency", "setup_id",
           "metric", "value", "unit")
KEPT_METRICS = ("output_tokens_per_s", "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "itl_p99", "successful_requests",
                "total_input_tokens", "total_output_tokens", "benchmark_duration_median_of_runs")
RESULTS = HERE / "results"
SERVER_CONFIG_CHARS = 300  # of the command kept: the flags the scorer reads (versions, max_model_len, speculative)
# AccelMark sharegpt_standard_v1 (in the file's dataset column): input tokens p50 280, p75 580 -> log-normal
# sigma = ln(580/280) / z(0.75) = 1.08; used as the spread of every ShareGPT-type set with --lengths spread
SHAREGPT_SIGMA = math.log(580 / 280) / 0.6745
Z90, Z99 = 1.2816, 2.3263
# AccelMark does not state its output lengths (outputs stop at EOS or max_tokens): assumed the mean ShareGPT reply
# the vLLM benchmark rows of this file measure (mean output 194-202 tokens, derived from their block totals)
SHAREGPT_OUTPUT = 200.0
# What AccelMark's serial runs say instead (issue 38, the harness): a serial run of N prompts lasts N x (TTFT + (out - 1)
# x TPOT), so each source's serial run gives its set's mean output, out = (duration / N - TTFT p50) / TPOT p50 + 1
# (p50 for the means: approximate); the 13-17 sources of each set agree within 5 % (sharegpt_standard_v1 about 352
# tokens of its max_tokens 512, sharegpt_edge_v1 211 of 256), so a point takes the median over the *other* sources'
# serial runs of its set (leave-one-source-out: its own run never sets its length)

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
           "ttft_p99": ("ttft_p99", "time"), "tpot_p99": ("tpot_p99", "time"),
           # AccelMark's run of N prompts, first sent to last answered (a capacity check where no tokens/s is given)
           "run_seconds": ("benchmark_duration_median_of_runs", "time")}


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
    version: str = ""  # the runtime's version as the row states it
    settings: dict[str, float] = field(default_factory=dict)  # the engine flags the row's command sets (see _settings)
    dataset: str = ""  # the row's dataset column

    @property
    def device_class(self) -> str:
        return CLASSES.get(self.device, "data-centre NVIDIA")

    @property
    def generation(self) -> str:
        """The engine generation its runtime and version name (sizer/runtimes/serving_mechanisms.yaml)."""
        return serving_mechanisms.generation_name(self.runtime, self.version)

    @property
    def device_memory_gb(self) -> float:
        return _memory_gb(self.device)


@functools.cache
def _memory_gb(device: str) -> float:
    return float(load_catalog().find(device).memory.value.split()[0])


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


# flags of the row's command (or AccelMark's suite note) the scorer honours: the deployment as the source ran it
_FLAGS = {"max_model_len": r"(?:--max-model-len[ =]|max_model_len )([0-9]+)",
          "max_num_batched_tokens": r"--max-num-batched-tokens[ =]([0-9]+)",
          "max_num_seqs": r"--max-num-seqs[ =]([0-9]+)",
          "gpu_memory_utilization": r"gpu-memory-utilization[ =]([0-9.]+)",
          "chunked_prefill_size": r"--chunked-prefill-size[ =]([0-9]+)",
          "mem_fraction_static": r"--mem-fraction-static[ =]([0-9.]+)"}


def _settings(server_config: str) -> dict[str, float]:
    """The engine flags a row's command states (numbers), and ``speculative`` 1.0 where it decodes speculatively."""
    out = {k: float(m.group(1)) for k, rx in _FLAGS.items() if (m := re.search(rx, server_config))}
    if "--speculative" in server_config:
        out["speculative"] = 1.0
    return out


def extract() -> int:
    """Write :data:`DATA` from :data:`SHARED`: the rows of the metrics scored or used for lengths, the columns read.

    Returns
    -------
    int
        Rows written [1].
    """
    rows = [{k: r[k][:SERVER_CONFIG_CHARS] if k == "server_config" else r[k] for k in COLUMNS}
            for r in csv.DictReader(open(SHARED, encoding="utf-8")) if r["metric"] in KEPT_METRICS]
    with open(DATA, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def points(others_output: bool = True) -> tuple[list[Point], dict[str, int]]:
    """Every askable point of the file, and the count of points left out by reason; ``others_output``: AccelMark
    sets' mean output from the other sources' serial runs (:func:`serial_outputs`), else :data:`SHAREGPT_OUTPUT`."""
    groups: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for r in csv.DictReader(open(DATA, encoding="utf-8")):
        key = (r["source_id"], r["setup_id"], r["framework_version"], r["server_config"], r["model"], r["weights_dtype"], r["scenario"], r["dataset"],
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
                         (accelmark_lengths(r["dataset"]) or (0, 0, None))[2], metrics, "|".join(key),
                         r["framework_version"], _settings(r["server_config"]), r["dataset"]))
    if others_output:
        estimates = serial_outputs()
        out = [_with_others_output(p, estimates) for p in out]
    return out, dict(skipped)


def _set_name(dataset: str) -> str | None:
    m = re.match(r"AccelMark (\S+)", dataset)
    return m.group(1) if m else None


def serial_outputs() -> dict[str, dict[str, float]]:
    """Each AccelMark set's mean output per source, from that source's serial run (see :data:`SHAREGPT_OUTPUT`):
    set -> source -> tokens. Every source with a serial run counts, askable or not."""
    runs: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for r in csv.DictReader(open(DATA, encoding="utf-8")):
        name = _set_name(r["dataset"])
        if name and r["scenario"].startswith("serial") and _num(r["value"]) is not None:
            runs[(name, r["source_id"], r["num_prompts"])][r["metric"]] = float(r["value"])
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (name, source, prompts), m in runs.items():
        n = _num(prompts)
        if n and all(k in m for k in ("benchmark_duration_median_of_runs", "ttft_p50", "tpot_p50")) and m["tpot_p50"] > 0:
            out[name][source] = (m["benchmark_duration_median_of_runs"] * 1e3 / n - m["ttft_p50"]) / m["tpot_p50"] + 1
    return dict(out)


def _with_others_output(p: Point, estimates: dict[str, dict[str, float]]) -> Point:
    """``p`` with its AccelMark set's mean output from the other sources' serial runs (capped at max_tokens)."""
    name = _set_name(p.dataset)
    others = [v for src, v in estimates.get(name or "", {}).items() if src != p.source]
    if not others:
        return p
    cap = re.search(r"max_tokens ([0-9]+)", p.dataset)
    median = statistics.median(others)
    return dataclasses.replace(p, output_mean=min(median, float(cap.group(1))) if cap else median)


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
    (:mod:`sizer.simulator.benchmark_lengths`): vLLM's ShareGPT sample spread and filtered around the point's own means;
    vLLM's random dataset uniform within its range ratio; anything else at its means. AccelMark's sets stay at their
    means: drawing its stated prompt quantiles (p99 2,100 tokens) made serial p99 TTFT 48 % pessimistic (-32 % at the
    means), and spreading its replies (not stated; assumed 200 tokens) traded p99 for p50 and TPOT (ACCURACY.md, "Load
    as benchmarks apply it")."""
    dataset = p.dataset
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


def predict(p: Point, catalog: Catalog, requests: int, spread: bool | str = "benchmark", warmup: float = 0.0,
            overrides: dict[str, Any] | None = None) -> dict[str, float] | str:
    """Simulated figures of ``p``: output tokens/s and TTFT/TPOT percentiles [ms], or the refusal in words.
    ``overrides`` (a mechanism's trial values): replica fields to set instead of the generation's fitted ones
    (sizer/runtimes/serving_mechanisms.yaml), ``memory`` a fraction of bandwidth."""
    shipped = overrides is None  # the generation's fitted settings, as sizer applies them for a stated version
    overrides = dict(overrides or {})
    try:
        device = catalog.find(p.device)
        fmt = weight_format(p.weights)
        refusal = runtime_refusal(runtime(p.runtime), fmt, device)
        if refusal:  # what `sizer inference` answers for it (FP8 on Ampere: vLLM's weight-only FP8 is not modelled)
            return f"refused: {refusal[:90]}"
        memory = overrides.pop("memory", None)
        table = (sim.batching_table((device,), fmt) if memory is None else
                 serving_table((device,), fmt, (serving_efficiencies(device.kind, memory=memory),)))
        if not table.supported[0]:  # what `sizer inference` refuses (estimate.refused_format)
            return f"refused: the catalog has no {fmt.compute} peak for {p.device} ({p.weights} weights)"
        replica = sim.runtime_replica(runtime(p.runtime), resolve_model(p.model), fmt, kv_cache_bytes_per_value("fp16"),
                                      table, 0, p.count, version=p.version if shipped else None,
                                      max_model_len=p.settings.get("max_model_len"))
        replica = dataclasses.replace(replica, **{**overrides, **engine_settings(p)})  # the command wins
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
            "tpot_p99": run.percentile("tpot", 99) * 1e3 if len(run.tpot) else math.nan,
            "run_seconds": run.simulated_seconds}


def engine_settings(p: Point) -> dict[str, Any]:
    """Replica fields the point's own command sets: the memory share (vLLM ``--gpu-memory-utilization``, SGLang
    ``--mem-fraction-static``), the running requests (``--max-num-seqs``) and the token budget
    (``--max-num-batched-tokens``, ``--chunked-prefill-size``)."""
    s, out = p.settings, {}
    share = s.get("gpu_memory_utilization") or s.get("mem_fraction_static")
    if share:
        out["memory_share"] = share
    if s.get("max_num_seqs"):
        out["max_batch"] = int(s["max_num_seqs"])
    budget = s.get("max_num_batched_tokens") or s.get("chunked_prefill_size")
    if budget:
        out["token_budget"] = int(budget)
    return out


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


# --- Mechanisms fitted leave-one-source-out (issue 38, item 2) -------------------------------------------------------
# Each candidate mechanism is a small grid of values per group (an engine generation, or a device class); every point
# is simulated once per grid value (the per-point predictions are cached), then for each source held out the value
# with the least loss on all *other* sources' points of its group is chosen and the held-out source is scored with
# it. The request latency is added to TTFT after the run (exactly what the replica's ``request_latency`` does), so it
# needs no pass of its own. Loss: the sum over points of |ln(predicted / measured)| over the three target metrics
# (output tokens/s, p99 TTFT, p99 TPOT): the squared loss the brief suggests let the few points 10-800x off (SGLang
# gpt-oss p99 TPOT 46 s measured) choose every value.
FIT_METRICS = ("output_tokens_per_s", "ttft_p99", "tpot_p99", "run_seconds")
LATENCIES = (0.0, 0.005, 0.01, 0.02, 0.04)  # s of request latency tried (API server, tokenising, streaming)
SEQUENCE_OVERHEADS = (0.0, 30e-6, 60e-6, 90e-6, 200e-6, 400e-6)  # s of CPU per running request and iteration tried
CLASS_MEMORY = (0.6, 0.75, 0.9)  # achieved fraction of memory bandwidth tried per device class
PER_PASS = (1.0e-3, 2.0e-3, 4.5e-3)  # s of fixed time per forward pass tried per generation (the default: 3.25 ms)


def _trial_overrides(p: Point, trial: tuple[Any, ...]) -> dict[str, Any]:
    """Replica fields of one grid trial for point ``p``: (sequence overhead or None, engine policy on, fraction of
    memory bandwidth or None[, fixed seconds per pass])."""
    seq, policy, memory, *rest = trial
    out: dict[str, Any] = {}
    if rest:  # the engine's fixed time per pass instead of the serving default (the grid adds the difference)
        out["iteration_overhead"] = rest[0] - SERVING_STEP_OVERHEAD
    if seq is not None:
        out["sequence_overhead"] = seq
    if policy:
        out.update(serving_mechanisms.policy_settings(p.generation, memory_gb=p.device_memory_gb, device=p.device,
                                                      max_model_len=p.settings.get("max_model_len")))
    if memory is not None:
        out["memory"] = memory
    return out


def simulate_trials(picked: list[Point], catalog: Catalog, requests: int, trials: list[tuple[Any, ...]]
                    ) -> dict[tuple[Any, ...], dict[str, dict[str, float]]]:
    """Every point's figures under every trial (key -> metric -> value); refused points are left out."""
    out: dict[tuple[Any, ...], dict[str, dict[str, float]]] = {}
    for trial in trials:
        got = {p.key: predict(p, catalog, requests, overrides=_trial_overrides(p, trial)) for p in picked}
        out[trial] = {k: v for k, v in got.items() if not isinstance(v, str)}
    return out


def _log_errors(p: Point, figures: dict[str, float], latency: float) -> dict[str, float]:
    out = {}
    for name, (measured_name, _) in METRICS.items():
        measured, pred = p.measured.get(measured_name), figures[name]
        if name.startswith("ttft"):
            pred += latency * 1e3
        if measured and measured > 0 and math.isfinite(pred) and pred > 0:
            out[name] = math.log(pred / measured)
    return out


def loso_fit(picked: list[Point], preds: dict[tuple[Any, ...], dict[str, dict[str, float]]], group: str,
             latencies: tuple[float, ...] = (0.0,)) -> dict[str, Any]:
    """Leave-one-source-out choice among the trials (and request latencies) per ``group`` (``generation`` or
    ``device_class``): the rows scored with the value chosen on the other sources, the values chosen per held-out
    source, and the value chosen on all sources (the one shipped)."""
    choices = [(t, lat) for t in preds for lat in latencies]
    errs: dict[tuple[str, tuple[Any, ...]], dict[str, float]] = {}
    loss: dict[tuple[str, str, tuple[Any, ...]], float] = defaultdict(float)
    for p in picked:
        g = getattr(p, group)
        for trial, lat in choices:
            figures = preds[trial].get(p.key)
            if figures is None:
                continue
            e = _log_errors(p, figures, lat)
            errs[(p.key, (trial, lat))] = e
            loss[(g, p.source, (trial, lat))] += sum(abs(v) for m, v in e.items() if m in FIT_METRICS)
    total: dict[tuple[str, tuple[Any, ...]], float] = defaultdict(float)
    for (g, _, ch), v in loss.items():
        total[(g, ch)] += v
    groups = sorted({getattr(p, group) for p in picked})
    shipped = {g: min(choices, key=lambda ch: (total[(g, ch)], str(ch))) for g in groups}
    rows, chosen = [], defaultdict(list)
    for src in sorted({p.source for p in picked}):
        for g in groups:
            mine = [p for p in picked if p.source == src and getattr(p, group) == g]
            if not mine:
                continue
            best = min(choices, key=lambda ch: (total[(g, ch)] - loss.get((g, src, ch), 0.0), str(ch)))
            chosen[g].append(best)
            for p in mine:
                for metric, e in errs.get((p.key, best), {}).items():
                    rows.append({"source": p.source, "runtime": p.runtime, "generation": p.generation,
                                 "class": p.device_class, "scenario": p.scenario, "metric": metric,
                                 "error": round(math.exp(e) - 1, 4), "inside": False})
    return {"rows": rows, "chosen": {g: [list(map(_plain, c)) for c in v] for g, v in chosen.items()},
            "shipped": {g: list(map(_plain, c)) for g, c in shipped.items()}}


def _plain(x: Any) -> Any:
    return list(x) if isinstance(x, tuple) else x


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median |error| etc. per metric, and per generation and class for the target metrics."""
    out: dict[str, Any] = {}
    for metric in METRICS:
        mine = [r for r in rows if r["metric"] == metric]
        entry = {"all": _stats([r["error"] for r in mine], [r["inside"] for r in mine])}
        for dim in ("generation", "class", "scenario"):
            for val in sorted({r[dim] for r in mine}):
                sel = [r for r in mine if r[dim] == val]
                entry[f"{dim}={val}"] = _stats([r["error"] for r in sel], [r["inside"] for r in sel])
        out[metric] = entry
    return out


def _spread(chosen: dict[str, list[Any]]) -> dict[str, dict[str, int]]:
    """How often each value was chosen, per group, over the held-out sources."""
    return {g: {json.dumps(v): sum(1 for x in vs if x == v) for v in {json.dumps(x): x for x in vs}.values()}
            for g, vs in chosen.items()}


# The candidate kept (its values written to sizer/runtimes/serving_mechanisms.yaml by --write-fit): the only one that
# lowers the held-out p99 TPOT without raising p99 TTFT by more than a point, chosen on every held-out source
KEPT = "(d) scheduling policy per generation"


def write_fit(shipped: dict[str, Any], path: Path = serving_mechanisms.MECHANISMS_FILE) -> None:
    """Write the kept candidate's values chosen on all sources into the ``fitted`` block of each generation."""
    text = path.read_text(encoding="utf-8")
    for name, (trial, latency) in shipped.items():
        gen = serving_mechanisms.generation(name)
        if gen is None:
            continue
        seq, policy, _ = trial
        block = (f"fitted: {{sequence_overhead_s: {gen.sequence_overhead if seq is None else seq:.2e}, "
                 f"request_latency_s: {latency}, policy: {str(bool(policy)).lower()}, fitted_on: \"{KEPT}, chosen "
                 f"leave-one-source-out on serving-tails.csv (benchmarks/serving_by_source.py)\"}}")
        text = re.sub(rf"(\n  {re.escape(name)}:\n(?:    .*\n)*?    )fitted: \{{.*\}}", lambda m, block=block: m.group(1) + block, text)
    path.write_text(text, encoding="utf-8")


def mechanisms(picked: list[Point], catalog: Catalog, requests: int) -> dict[str, Any]:
    """Every candidate mechanism scored leave-one-source-out, one by one against the profiles as they were, then
    the ones kept together: per candidate the held-out figures, the values chosen per held-out source and the
    value chosen on all sources."""
    base: tuple[Any, ...] = (None, False, None)
    seqs = [(s, False, None) for s in SEQUENCE_OVERHEADS]
    seqs_policy = [(s, True, None) for s in SEQUENCE_OVERHEADS]
    memory = [(None, False, m) for m in CLASS_MEMORY if m != 0.9]
    per_pass = [(None, True, None, x) for x in PER_PASS]
    preds = simulate_trials(picked, catalog, requests, [base, (None, True, None), *seqs, *seqs_policy, *memory,
                                                        *per_pass])

    def sub(trials: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], dict[str, dict[str, float]]]:
        return {t: preds[t] for t in trials}
    candidates = {
        "none (the profiles as they were)": loso_fit(picked, sub([base]), "generation"),
        "(e) request latency per generation": loso_fit(picked, sub([base]), "generation", LATENCIES),
        "(a) CPU per running request per generation": loso_fit(picked, sub(seqs), "generation"),
        KEPT: loso_fit(picked, sub([base, (None, True, None)]), "generation"),
        "(b) memory-bandwidth fraction per device class": loso_fit(
            picked, sub([base, *memory]), "device_class"),
        "(f) fixed time per pass, 1-4.5 ms, with (d) (generation)": loso_fit(
            picked, sub([(None, True, None), *per_pass]), "generation"),
        "kept together: (a) + (d) + (e) per generation": loso_fit(picked, sub(seqs + seqs_policy), "generation",
                                                                  LATENCIES),
    }
    return {name: {"summary": _summary(c["rows"]), "chosen": _spread(c["chosen"]), "shipped": c["shipped"]}
            for name, c in candidates.items()}


def _md(result: dict[str, Any]) -> str:
    lines = ["# Serving under load by source (serving-tails.csv)", "",
             f"Points scored: {result['points_scored']} of {result['points_sampled']} sampled, "
             f"{result['points_askable']} askable "
             f"({result['points_total']} measured points in the file); sources: {len(result['sources'])}; "
             f"lengths: {result['lengths']}; requests per point capped at {result['requests_cap']}; share of "
             f"requests not measured (warm-up): {result['warmup_share']}.",
             "Fitted on this file: only which engine generations' scheduling policy is on (serving_mechanisms.yaml), "
             "chosen leave-one-source-out (below, 'Mechanisms tried'); the tables first score the shipped choice, "
             "the same on every held-out source. Signed error = predicted / measured - 1.", ""]
    for metric, groups in result["summary"].items():
        lines += [f"## {metric}", "", "| group | n | median abs % | p90 abs % | signed median % | inside 0.79-1.33 x (the one-request range) % |",
                  "|---|---:|---:|---:|---:|---:|"]
        for g, s in groups.items():
            if s.get("n"):
                lines.append(f"| {g} | {s['n']} | {s['median_abs_pct']} | {s['p90_abs_pct']} | "
                             f"{s['signed_median_pct']} | {s['inside_range_pct']} |")
        lines.append("")
    if result.get("mechanisms"):
        lines += ["## Mechanisms tried, leave-one-source-out (issue 38, item 2)", "",
                  "Each candidate's value is chosen per group on every source but the one scored (least sum of "
                  "|ln(predicted / measured)| over output tokens/s, p99 TTFT, p99 TPOT and the run's duration); median "
                  "|error| / p90 / "
                  "signed median, %. Values: (CPU s per running request and iteration or null = the profile's, policy "
                  "on, memory fraction or null), request latency s.", "",
                  "| candidate | output tokens/s | p50 TTFT | p99 TTFT | p99 TPOT | chosen on all sources | chosen per "
                  "held-out source |", "|---|---|---|---|---|---|---|"]
        for name, c in result["mechanisms"].items():
            cells = []
            for metric in METRICS:
                a = c["summary"][metric]["all"]
                cells.append(f"{a['median_abs_pct']} / {a['p90_abs_pct']} / {a['signed_median_pct']:+}")
            shipped = "; ".join(f"{g}: {json.dumps(v)}" for g, v in c["shipped"].items())
            spread = "; ".join(f"{g}: " + ", ".join(f"{k} x{n}" for k, n in v.items()) for g, v in c["chosen"].items())
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {shipped} | {spread} |")
        kept = result["mechanisms"][KEPT]["summary"]
        lines += ["", f"Kept: {KEPT}. By generation, scenario and class (held out), median |error| / signed median, %:", "",
                  "| group | output tokens/s | p99 TTFT | p99 TPOT |", "|---|---|---|---|"]
        for g in kept["ttft_p99"]:
            cells = [f"{kept[m][g]['median_abs_pct']} / {kept[m][g]['signed_median_pct']:+} (n {kept[m][g]['n']})"
                     if kept[m].get(g, {}).get("n") else "" for m in ("output_tokens_per_s", "ttft_p99", "tpot_p99")]
            lines.append(f"| {g} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["The ranges sizer states on these figures come from this cross-source spread, by load kind and "
              "utilisation: benchmarks/serving_ranges.py (results/serving_ranges.md).", ""]
    lines += ["## Sources scored", ""] + [f"- {s}" for s in result["sources"]]
    lines += ["", "## Points not askable", ""] + [f"- {k}: {v}" for k, v in sorted(result["skipped"].items())]
    lines += [f"- {k}: {v}" for k, v in sorted(result["refused"].items())]
    return "\n".join(lines) + "\n"


def run(per_source: int, max_points: int, requests: int, spread: bool | str, warmup: float = 0.0,
        fit: bool = False, others_output: bool = True) -> dict[str, Any]:
    catalog = load_catalog()
    all_points, skipped = points(others_output)
    picked = sample(all_points, per_source, max_points)
    t0 = time.time()
    scored = score(picked, catalog, requests, spread, warmup)
    tried = mechanisms(picked, catalog, requests) if fit else {}
    return {"mechanisms": tried, "points_total": len(all_points) + sum(skipped.values()), "points_askable": len(all_points),
            "points_sampled": len(picked), "points_scored": len(picked) - sum(scored["refused"].values()), "per_source": per_source, "requests_cap": requests,
            "lengths": ("drawn as each benchmark draws them" if spread == "benchmark" else
                        "log-normal spread for ShareGPT sets" if spread else "every request at the means")
            + ("; AccelMark sets' output from the other sources' serial runs" if others_output else
               f"; AccelMark sets' output assumed {SHAREGPT_OUTPUT:g} tokens"),
            "warmup_share": warmup,
            "seconds": round(time.time() - t0, 1), "skipped": skipped, "refused": scored["refused"],
            "sources": sorted({r["source"] for r in scored["rows"]}), "summary": summarise(scored["rows"]),
            "rows": scored["rows"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-source", type=int, default=1000)
    ap.add_argument("--max-points", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--lengths", choices=("means", "spread", "benchmark"), default="benchmark",
                    help="benchmark: drawn as each point's benchmark draws them (benchmark_lengths)")
    ap.add_argument("--warmup", type=float, default=0.0, help="share of the requests not measured (0: every prompt, "
                    "as the benchmarks measure them; 0.1: the steady-state simulation's warm-up before issue 38)")
    ap.add_argument("--out", default="serving_by_source")
    ap.add_argument("--assumed-output", action="store_true", help=f"AccelMark sets' output at {SHAREGPT_OUTPUT:g} "
                    "tokens (capped at max_tokens), as before issue 38's mechanisms, instead of the other sources' "
                    "serial runs")
    ap.add_argument("--no-fit", action="store_true", help="score the shipped mechanisms only (no leave-one-source-out "
                    "search over the candidates, ~1.5 min)")
    ap.add_argument("--write-fit", action="store_true", help="write the kept candidate's values chosen on all sources "
                    "to sizer/runtimes/serving_mechanisms.yaml")
    ap.add_argument("--extract", action="store_true", help=f"rewrite {DATA.name} from {SHARED} first")
    args = ap.parse_args()
    if args.extract:
        print(f"{extract()} rows -> {DATA}")
    spread: bool | str = "benchmark" if args.lengths == "benchmark" else args.lengths == "spread"
    result = run(args.per_source, args.max_points, args.requests, spread, args.warmup,
                 fit=not args.no_fit, others_output=not args.assumed_output)
    if args.write_fit and result["mechanisms"]:
        write_fit({g: tuple(v) for g, v in result["mechanisms"][KEPT]["shipped"].items()})
        print(f"wrote {serving_mechanisms.MECHANISMS_FILE}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=1) + "\n")
    (RESULTS / f"{args.out}.md").write_text(_md(result))
    print(_md(result))


if __name__ == "__main__":
    main()
