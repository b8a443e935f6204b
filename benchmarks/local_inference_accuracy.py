"""Fit llama.cpp's kernel efficiencies on half of the measured local runs, score them on the other half.

Reads ``../shared/data/local-inference-measurements.csv`` (llama-bench pp/tg rows of mainline llama.cpp on
NVIDIA, Apple, AMD GPUs and CPUs), keeps the rows whose device, model and GGUF mix sizer knows, and splits
them by a hash of (hardware, model, quantisation): runs of one such group (a PR's master and PR builds, a
depth sweep) fall on the same side. On the fit half, per device family it chooses the per-pass overhead
and how finely to fit the efficiencies (one per family, per quantisation class, or per ggml type), each
by the fit half's median error, and fits prompt efficiency (of the matrix peak) and generation efficiency
(of memory bandwidth) as the median ratio of the engine's time at full efficiency to the measured time.
Writes ``sizer/runtimes/local_fit.yaml`` (the profile with the rows it was fitted on) and
``benchmarks/results/local_inference.json`` (held-out errors), and prints the ACCURACY.md table.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/local_inference_accuracy.py [--check]

``--check`` scores the committed profile on the committed runs (``benchmarks/local_inference_runs.csv``,
written by a full run) without rewriting anything.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "local-inference-measurements.csv"
FIT_OUT = ROOT / "sizer" / "runtimes" / "local_fit.yaml"
RESULT_OUT = ROOT / "benchmarks" / "results" / "local_inference.json"
RUNS_CSV = ROOT / "benchmarks" / "local_inference_runs.csv"  # the rows sizer can ask, mapped (committed)
RUN_FIELDS = ("key", "group", "device", "model", "mix", "test", "tokens", "depth", "measured", "ubatch", "origin",
              "runtime", "threads")

# hardware text (lower case) -> catalog id; first match wins. Rows on devices not listed are skipped.
HARDWARE = [
    (r"rtx 3090 ti", "rtx-3090-ti"), (r"rtx 3090", "rtx-3090"), (r"rtx 4090", "rtx-4090"), (r"rtx 5090", "rtx-5090"),
    (r"geforce rtx 5070 \(", "rtx-5070"), (r"geforce rtx 2080 \(", "rtx-2080"), (r"gtx 1050 ti", "gtx-1050-ti"),
    (r"gtx 1070", "gtx-1070"), (r"rtx 4080", "rtx-4080"), (r"rtx 3080 ti", "rtx-3080-ti"), (r"rtx 3080", "rtx-3080-10gb"),
    (r"rtx 3060 12gb$", "rtx-3060-12gb"), (r"nvidia gb10", "dgx-spark-gb10"), (r"tesla t4", "tesla-t4"),
    (r"rx 7900 xt \(", "radeon-rx-7900-xt"), (r"apple m4 pro \(", "apple-m4-pro-20c-gpu"),
    (r"apple m3 pro \(unified; 36", "apple-m3-pro-gpu"),
    (r"m2 max.*30-core gpu", "apple-m2-max-30c-gpu"), (r"m2 max.*38-core gpu", "apple-m2-max-gpu"),
    (r"m2 ultra", "apple-m2-ultra-gpu"), (r"m1 ultra", "apple-m1-ultra-gpu"), (r"m1 max", "apple-m1-max-gpu"),
    (r"m3 max", "apple-m3-max-gpu"), (r"m3 pro.*14-core gpu", "apple-m3-pro-14c-gpu"),
    (r"m3 ultra.*60-core", "apple-m3-ultra-60c-gpu"), (r"m4 max", "apple-m4-max-40c-gpu"),
    (r"mac mini m4", "apple-m4-10c-gpu"),
    (r"7950x.*cpu-only", "ryzen-9-7950x"), (r"13900k cpu", "core-i9-13900k"),
    (r"7900 xtx", "radeon-rx-7900-xtx"),
    (r"threadripper 3970x.* cpu", "threadripper-3970x"), (r"i5-1135g7 cpu", "core-i5-1135g7"),
    (r"i7-7820hq cpu", "core-i7-7820hq"), (r"intel n100 cpu", "intel-n100"),
]
MODELS = [
    (r"llama-v2-7b|llama 7b|llama-7b", "llama-2-7b"), (r"llama-v3-8b|llama 8b|llama 3\.1 8b|llama-3\.1-8b", "llama-3-8b"),
    (r"llama 13b", "llama-2-13b"), (r"mistral 7b|mistral-7b-instruct", "mistral-7b"), (r"mixtral-8x7b", "mixtral-8x7b"),
    (r"meta-llama-3\.1-8b|distill-llama-8b|hermes-3-llama-3\.1-8b|llama-3\.1-tulu-3-8b", "llama-3.1-8b"),
    (r"qwen2\.5-7b|qwen2\.5-coder-7b|distill-qwen-7b", "qwen2.5-7b"), (r"qwen3-30b-a3b|qwen3-coder-30b-a3b", "qwen3-30b-a3b"),
    (r"gemma-2-9b", "gemma-2-9b"), (r"gemma-2-27b", "gemma-2-27b"), (r"phi-3\.5-mini", "phi-3-mini"),
    (r"deepseek-coder-v2-lite", "deepseek-v2-lite"),
]
QUANT_WORDS = {"q4_k - medium": "Q4_K_M", "q5_k - medium": "Q5_K_M", "q5_k - small": "Q5_K_S", "q4_k - small": "Q4_K_S"}
CLASSES = {"Q4_0": "legacy", "Q4_1": "legacy", "Q5_0": "legacy", "Q5_1": "legacy", "Q8_0": "q8", "F16": "f16",
           "Q2_K": "k", "Q3_K": "k", "Q4_K": "k", "Q5_K": "k", "Q6_K": "k", "IQ4_NL": "iq4", "IQ4_XS": "iq4"}
OVERHEADS = (0.0, 0.5e-3, 1e-3, 2e-3, 3e-3, 5e-3)  # s per forward pass tried on the fit half
GRAINS = ("family", "class", "type")
CPUS = ("ryzen-9-7950x", "core-i9-13900k", "threadripper-3970x", "core-i5-1135g7", "core-i7-7820hq", "intel-n100")
EXPONENTS = (0.0, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6)  # generation efficiency ~ bandwidth^x, tried on the fit half
MIN_CPU_THREADS = 4  # below 4 threads no fit-half CPU run exists: the thread model is not scored there
# the share of a card's memory a whole-GPU run keeps free beside the weights: the KV cache at Ollama's default
# context, llama.cpp's compute buffers and the CUDA context (about 0.5-1 GB on an 8-12 GB card); not fitted
OFFLOAD_MARGIN = 0.10
MIN_DEVICES = 2  # devices a quantisation type or class needs on the fit half to get its own efficiency


@dataclass
class Run:
    key: str  # row id: source line number
    group: str  # split key
    device: str
    model: str
    mix: str
    test: str  # "pp" or "tg"
    tokens: int
    depth: int
    measured: float  # tokens/s
    ubatch: int = 512
    threads: int = 0  # CPU threads of a CPU-only run (-t); 0: not stated (the CPU's physical cores)
    origin: str = "llama-bench"  # or "llmfit" (community, output tokens over the request's wall time), "mlx-lm", ...
    runtime: str = "llama.cpp"
    family: str = ""
    qkey: str = ""
    unit_seconds: float = 0.0  # the engine's time at efficiency 1, no overhead
    bandwidth: float = 0.0  # the device's memory bandwidth [B/s]

    def scale(self, exponent: float) -> float:
        """How generation efficiency moves with bandwidth: (B / B_ref)^exponent (prompt: 1)."""
        from sizer.runtimes.local_runtimes import BANDWIDTH_REFERENCE
        return (self.bandwidth / BANDWIDTH_REFERENCE) ** exponent if self.test == "tg" else 1.0


def _match(table, text):
    return next((target for pattern, target in table if re.search(pattern, text)), None)


def _mix(row) -> str | None:
    from sizer.runtimes.formats import GGUF_MIXES
    text = (row["precision_or_quant"] + " " + row["model"]).lower()
    for words, mix in QUANT_WORDS.items():
        if words in text:
            return mix
    for mix in sorted(GGUF_MIXES, key=len, reverse=True):
        if re.search(rf"\b{mix.lower()}\b", text):
            return mix
    return "F16" if re.search(r"\bf16\b", text) else None


def _test(row) -> tuple[str, int, int] | None:
    seq, metric = row["seq_len"].lower(), row["metric"].lower()
    depth = re.search(r"depth (\d+)", seq)
    m = re.match(r"(prompt|generate) (\d+)( at context depth \d+)?$", seq)
    if not m or not (metric.startswith("pp tokens/s") or metric.startswith("tg tokens/s")):
        return None
    return ("pp" if m.group(1) == "prompt" else "tg"), int(m.group(2)), int(depth.group(1)) if depth else 0


def _llmfit(row, line: int) -> Run | str:
    """A llmfit community row as a generation run, or why it is left out."""
    other = row["other_config"].lower()
    if "provider llamacpp" not in other and "ollama" not in row["metric"].lower():
        return "llmfit: not llama.cpp or Ollama"
    device = _match(HARDWARE, row["hardware"].lower())
    if device is None:
        return "device not in the catalog"
    name = row["model"].lower()
    model = _match(MODELS, name)
    if model is None:
        size = re.search(r"[-_ ](\d+(?:\.\d+)?)b[-_.]", name)
        if size is None or re.search(r"-a\d+(\.\d+)?b|e\d+b|-h-|lfm2|moe", name):
            return "model not in sizer's registry"
        model = f"params:{size.group(1)}e9"
    mix = _mix(row)
    if mix is None:
        return "quantisation not a modelled GGUF mix"
    if _offloaded(device, model, mix):
        return "partial or no GPU offload (llmfit: the file fills the card, so the runtime offloads layers to the CPU)"
    out = re.search(r"avg output tokens ([\d.]+)", row["seq_len"])
    tokens = int(float(out.group(1))) if out else 128
    return Run(key=f"L{line}", group=f"{row['hardware']}|{model}|{mix}", device=device, model=model, mix=mix, test="tg",
               tokens=max(tokens, 1), depth=0, measured=float(row["value"].strip()), origin="llmfit")


def _offloaded(device: str, model: str, mix: str) -> bool:
    """Whether a GGUF file leaves less than OFFLOAD_MARGIN of the card free: Ollama and llama.cpp's auto-fit then put
    layers on the CPU, and llmfit does not record the split, so the run is not a whole-model GPU run."""
    from sizer.hardware.catalog import load_catalog
    from sizer.runtimes.gguf import gguf_bytes
    card = load_catalog().find(device)
    if card.kind == "cpu" or card.unified_memory:
        return False
    memory = card.memory.si("memory", "[information]")
    return gguf_bytes(_arch(model), mix) > (1 - OFFLOAD_MARGIN) * memory


MLX_MODELS = [(r"qwen3-30b-a3b", "qwen3-30b-a3b"), (r"qwen3-4b", "params:4.0e9"), (r"llama-3\.1-8b", "llama-3.1-8b"),
              (r"qwen3-8b", "params:8.2e9"), (r"qwen2\.5-14b", "params:14.7e9"), (r"phi-4-mini", "params:3.8e9")]
MLX_HARDWARE = [(r"m4 max, 64gb", "apple-m4-max-40c-gpu"), (r"m3 ultra \(60-core", "apple-m3-ultra-60c-gpu"),
                (r"m2 max \(38-core", "apple-m2-max-gpu"), (r"m2 max \(30-core", "apple-m2-max-30c-gpu")]


def _mlx(row, line: int) -> Run | str:
    """An mlx-lm or Rapid-MLX row as an MLX run (prompt or generation after its prompt), or why it is left out."""
    device = _match(MLX_HARDWARE, row["hardware"].lower())
    if device is None:
        return "MLX: device not in the catalog or cores not stated"
    name = row["model"].lower()
    model = _match(MLX_MODELS, name)
    if model is None:
        return "MLX: model not in sizer's registry"
    quant = row["precision_or_quant"].lower()
    if quant == "bf16":
        mix = "bf16"
    else:
        bits = re.search(r"\bq(\d)\b|(\d)bit", quant + " " + name)
        if bits is None:
            return "MLX: quantisation not stated"
        mix = f"mlx-q{bits.group(1) or bits.group(2)}" + ("-g32" if "g32" in quant else "")
    seq, metric = row["seq_len"].lower(), row["metric"].lower()
    # mlx_lm.benchmark -p 2048 -g 128 (BENCHMARKS.md): its generation row follows a 2048-token prompt
    prompt = re.search(r"prompt (\d+)", seq) or (re.search(r"(2048)", "prompt 2048") if "mlx-lm" in row["source"]
                                                  and seq.startswith("generate") else None)
    if prompt is None or not re.match(r"[\d.]+$", row["value"].strip()):
        return "MLX: test length or value not stated"
    if metric.startswith("pp") or metric.startswith("prefill"):
        test, tokens, depth = "pp", int(prompt.group(1)), 0
    elif metric.startswith("tg") or metric.startswith("decode"):
        out = re.search(r"(?:generate|max_tokens) (\d+)", seq + " " + metric)
        test, tokens, depth = "tg", int(out.group(1)) if out else 128, int(prompt.group(1))
    else:
        return "MLX: not a prompt or generation speed"
    if test == "tg" and "generate" not in seq and "max_tokens" not in seq and "generation 128" not in metric:
        return "MLX: generation length not stated"
    return Run(key=f"L{line}", group=f"mlx|{row['hardware']}|{model}|{mix}", device=device, model=model, mix=mix,
               test=test, tokens=tokens, depth=depth, measured=float(row["value"].strip()), ubatch=2048,
               origin="mlx-lm" if "mlx-lm" in row["source"] else "rapid-mlx", runtime="mlx")


def map_runs() -> tuple[list[Run], dict[str, int]]:
    """The rows of the shared data file sizer can ask, and why the others were left out (counts)."""
    skipped: dict[str, int] = {}
    runs = []
    with open(DATA, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            other = row["other_config"].lower()
            reason = None
            if "llmfit" in row["source"]:
                run = _llmfit(row, line)
                if isinstance(run, str):
                    skipped[run] = skipped.get(run, 0) + 1
                else:
                    runs.append(run)
                continue
            if "ml-explore/mlx-lm" in row["source"] or "Rapid-MLX" in row["source"]:
                run = _mlx(row, line)
                if isinstance(run, str):
                    skipped[run] = skipped.get(run, 0) + 1
                else:
                    runs.append(run)
                continue
            if "ds4" in row["source"] or "mlx" in row["source"].lower():
                reason = "not llama.cpp or mlx-lm (ds4, other MLX front ends)"
            elif "ik_llama" in other or "vulkan" in other or "opencl" in other:
                reason = "another engine or backend (ik_llama.cpp, Vulkan, OpenCL)"
            device = _match(HARDWARE, row["hardware"].lower())
            if reason is None and ("partial" in row["hardware"].lower() or
                                   (re.search(r"ngl 0\b", other) and device not in CPUS)):
                reason = "partial or no GPU offload"
            model = _match(MODELS, row["model"].lower())
            mix, test = _mix(row), _test(row)
            threads = re.search(r"threads (\d+)", other)
            if reason is None and device in CPUS and threads and int(threads.group(1)) < MIN_CPU_THREADS:
                reason = f"CPU runs on fewer than {MIN_CPU_THREADS} threads (outside the scored thread counts)"
            if reason is None and device is None:
                reason = "device not in the catalog"
            if reason is None and model is None:
                reason = "model not in sizer's registry"
            if reason is None and mix is None:
                reason = "quantisation not a modelled GGUF mix"
            if reason is None and test is None:
                reason = "not a pp/tg llama-bench test"
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            group = f"{row['hardware']}|{model}|{mix}"
            ubatch = re.search(r"ubatch (\d+)", other)
            runs.append(Run(key=f"L{line}", group=group, device=device, model=model, mix=mix, test=test[0],
                            tokens=test[1], depth=test[2], measured=float(row["value"].strip()),
                            ubatch=int(ubatch.group(1)) if ubatch else 512,
                            threads=int(threads.group(1)) if threads and device in CPUS else 0))
    return runs, skipped


def write_runs(runs: list[Run]) -> None:
    tmp = RUNS_CSV.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(RUN_FIELDS)
        for run in runs:
            writer.writerow([getattr(run, name) for name in RUN_FIELDS])
    tmp.replace(RUNS_CSV)


def load_runs() -> list[Run]:
    """The committed mapped runs (benchmarks/local_inference_runs.csv)."""
    with open(RUNS_CSV, newline="") as f:
        return [Run(**{k: (int(v) if k in ("tokens", "depth", "ubatch", "threads") else float(v) if k == "measured" else v)
                       for k, v in row.items()}) for row in csv.DictReader(f)]


def held_out(run: Run) -> bool:
    return int(hashlib.sha256(run.group.encode()).hexdigest(), 16) % 2 == 1


def _unit_profile():
    from sizer.runtimes.local_runtimes import ANY, KernelEfficiency, LocalProfile
    return LocalProfile(kernels={(ANY, ANY): KernelEfficiency(1.0, 1.0)}, step_overhead={ANY: 0.0}, bandwidth_exponent={},
                        flash_attention=True, batch=2048, ubatch=512, offload="", fitted_on=(), source="unit")


def _format(run: Run):
    from sizer.runtimes.formats import weight_format
    return weight_format("fp16" if run.mix == "F16" else run.mix)


def _arch(model: str):
    from sizer.workloads.decoder_shape import decoder_for_params
    from sizer.workloads.registry import find_model
    return decoder_for_params(float(model.split(":", 1)[1]))[0] if model.startswith("params:") else find_model(model)


def _seconds(run: Run, profile) -> float:
    from sizer.hardware.catalog import load_catalog
    from sizer.local.machine import local_times
    device = load_catalog().find(run.device)
    fmt = _format(run)
    profile = dataclasses.replace(profile, threads=run.threads or None)  # the run's -t (CPU-only runs)
    if run.test == "pp":
        t = local_times(_arch(run.model), device, fmt, profile, prompt_len=run.tokens, output_len=1, depth=run.depth,
                        ubatch=run.ubatch)
        return t.prefill_seconds
    t = local_times(_arch(run.model), device, fmt, profile, prompt_len=1, output_len=run.tokens, depth=run.depth)
    return t.decode_seconds


def _annotate(runs: list[Run]) -> None:
    from sizer.hardware.catalog import load_catalog
    from sizer.runtimes.local_runtimes import device_family, quant_key
    unit = _unit_profile()
    for run in runs:
        run.family = device_family(load_catalog().find(run.device))
        run.qkey = quant_key(_format(run))
        run.unit_seconds = _seconds(run, unit)
        run.bandwidth = load_catalog().find(run.device).memory_bandwidth.si("memory_bandwidth", "[information]/[time]")


def _grain_key(run: Run, grain: str) -> str:
    return {"family": "*", "class": CLASSES.get(run.qkey, run.qkey), "type": run.qkey}[grain]


def _efficiency(run: Run, overhead: float, exponent: float = 0.0) -> float:
    """The efficiency at the reference bandwidth that makes the engine's time match the measurement
    (times scale as 1/efficiency)."""
    per_token = 1.0 / run.measured
    work = per_token * (run.tokens if run.test == "pp" else 1.0) - overhead
    return (run.unit_seconds / work if work > 0 else 1.0) / run.scale(exponent)


def overhead_seen(runs: list[Run]) -> bool:
    """Whether a family's generation runs can tell a per-pass time from an efficiency: some device's runs differ
    2x or more in the time a token takes at full efficiency (different model sizes or types). Otherwise a longer
    per-pass time and a higher efficiency fit its runs alike, and the choice between them is arbitrary."""
    by_device: dict[str, list[float]] = {}
    for run in runs:
        if run.test == "tg":
            by_device.setdefault(run.device, []).append(run.unit_seconds)
    return any(max(v) >= 2 * min(v) for v in by_device.values())


def _fit_family(runs: list[Run], overheads: tuple[float, ...] = OVERHEADS) -> tuple[float, dict, dict]:
    """Per family: the overhead (one of ``overheads`` [s]), and per test the grain, with the lowest fit error; and
    the efficiencies."""
    best = None
    # a bandwidth exponent needs generation runs on devices of different bandwidths (1.5x apart) to be seen at all
    bandwidths = [r.bandwidth for r in runs if r.test == "tg"]
    exponents = EXPONENTS if bandwidths and max(bandwidths) >= 1.5 * min(bandwidths) else (0.0,)
    for overhead, exponent in ((o, x) for o in overheads for x in exponents):
        total, grains, effs, counts = 0.0, {}, {}, {}
        for test in ("pp", "tg"):
            mine = [r for r in runs if r.test == test]
            if not mine:
                continue
            choice = None
            whole = statistics.median(_efficiency(r, overhead, exponent) for r in mine)
            for grain in GRAINS:
                table: dict[tuple[str, str], list[float]] = {}
                devices: dict[tuple[str, str], set] = {}
                for run in mine:
                    table.setdefault((test, _grain_key(run, grain)), []).append(_efficiency(run, overhead, exponent))
                    devices.setdefault((test, _grain_key(run, grain)), set()).add(run.device)
                # a type or class measured on one device only would fit that device, not the kernels: the family's figure
                e = {key: statistics.median(v) if len(devices[key]) >= MIN_DEVICES else whole for key, v in table.items()}
                errors = [abs(_predict_unit(r, e[(test, _grain_key(r, grain))], overhead, exponent) / r.measured - 1)
                          for r in mine]
                score = statistics.median(errors) + 0.5 * statistics.mean(errors)  # the median first, the tail as tie-break
                if choice is None or score < choice[0]:
                    choice = (score, grain, e, {k: len(v) for k, v in table.items()})
            total += choice[0]
            grains[test] = choice[1]
            effs.update(choice[2])
            counts.update(choice[3])
        if best is None or total < best[0]:
            best = (total, overhead, grains, effs, counts, exponent)
    return best[1], best[2], {"effs": best[3], "counts": best[4], "exponent": best[5]}


def _predict_unit(run: Run, efficiency: float, overhead: float, exponent: float = 0.0) -> float:
    seconds = run.unit_seconds / min(efficiency * run.scale(exponent), 1.0) + overhead
    return (run.tokens if run.test == "pp" else 1.0) / seconds


def fit(runs: list[Run]) -> dict:
    """Every runtime's profile fitted on its ``runs`` (the fit half), as local_fit.yaml holds them."""
    return {name: fit_runtime([r for r in runs if r.runtime == name]) for name in sorted({r.runtime for r in runs})}


def fit_runtime(runs: list[Run]) -> dict:
    """One runtime's profile fitted on ``runs``.

    A family without runs of a test (prompt or generation) takes that test's efficiency from the other families
    of its kind (GPUs from GPUs, the median of their family figures at the reference bandwidth). A family whose
    generation runs cannot show a per-pass time (:func:`overhead_seen`: none, or one model size per device) takes
    the median per-pass time of the families of its kind that show one, and its efficiencies are fitted at that
    time; where none of its kind shows one, its per-pass time is chosen with its efficiencies as before (by the
    fit's error, on its prompt runs where it has no generation run).
    """
    kernels, overheads, grains, exponents = {}, {}, {}, {}
    tests = {family: {r.test for r in runs if r.family == family} for family in {r.family for r in runs}}
    seen = {family: overhead_seen([r for r in runs if r.family == family]) for family in tests}
    fits = {}
    for family in sorted(tests, key=lambda f: not seen[f]):  # the families that show a per-pass time first
        mine = [r for r in runs if r.family == family]
        kin_overheads = [overheads[g] for g in tests if g != family and seen[g] and g in overheads
                         and (g == "cpu") == (family == "cpu")]
        fixed = (statistics.median(kin_overheads),) if not seen[family] and kin_overheads else OVERHEADS
        overhead, grain, fitted = _fit_family(mine, fixed)
        overheads[family], grains[family], exponents[family] = overhead, grain, fitted["exponent"]
        fits[family] = fitted
    whole = {family: {test: statistics.median(e for (t, _), e in fits[family]["effs"].items() if t == test)
                      for test in tests[family]} for family in tests}
    for family in sorted(tests):
        kin = [g for g in tests if g != family and (g == "cpu") == (family == "cpu")]
        for test in ("pp", "tg"):
            if test not in tests[family]:
                pool = [whole[g][test] for g in kin if test in whole[g]]
                whole[family][test] = statistics.median(pool) if pool else 0.5
        mine = [r for r in runs if r.family == family]
        grain, fitted, both = grains[family], fits[family], whole[family]
        qkeys = sorted({r.qkey for r in mine} | set(CLASSES))
        kernels[f"{family}/*"] = {"prompt": round(both["pp"], 4), "generation": round(both["tg"], 4), "rows": 0}
        for q in qkeys:
            fake = Run("", "", "", "", "", "", 0, 0, 0.0, family=family, qkey=q)
            gp, gt = (_grain_key(fake, grain.get(test, "family")) for test in ("pp", "tg"))
            pp, tg = fitted["effs"].get(("pp", gp)), fitted["effs"].get(("tg", gt))
            if pp is None and tg is None:
                continue
            rows = fitted["counts"].get(("pp", gp), 0) + fitted["counts"].get(("tg", gt), 0)
            kernels[f"{family}/{q}"] = {"prompt": round(pp if pp is not None else both["pp"], 4),
                                        "generation": round(tg if tg is not None else both["tg"], 4), "rows": rows}
    every = [r for r in runs]
    kernels["*/*"] = {"prompt": round(statistics.median(_efficiency(r, 0.0) for r in every if r.test == "pp"), 4),
                      "generation": round(statistics.median(_efficiency(r, 0.0) for r in every if r.test == "tg"), 4),
                      "rows": 0}
    return {"kernels": kernels, "step_overhead": {**overheads, "*": 1e-3}, "grain": grains,
            "bandwidth_exponent": {**exponents, "*": 0.0}, "fitted_on": sorted(r.key for r in runs)}


def score(runs: list[Run]) -> dict:
    """Errors of the committed profile on ``runs``: |predicted / measured - 1| by family and test."""
    from sizer.runtimes import runtime
    out: dict[str, dict] = {}
    for run in runs:
        predicted = (run.tokens if run.test == "pp" else 1.0) / _seconds(run, runtime(run.runtime).profile)
        err = predicted / run.measured - 1
        family = run.family if run.runtime == "llama.cpp" else f"{run.runtime}:{run.family}"
        for group in (family, "all") if run.runtime == "llama.cpp" else (family,):
            out.setdefault(group, {}).setdefault(run.test, []).append(err)
    summary = {}
    for group, tests in out.items():
        summary[group] = {test: {"rows": len(e), "median_abs": statistics.median(abs(x) for x in e),
                                 "signed_median": statistics.median(e),
                                 "p90_abs": sorted(abs(x) for x in e)[int(0.9 * (len(e) - 1))]}
                          for test, e in tests.items()}
    return summary


def spreads(runs: list[Run]) -> dict:
    """Per runtime, per device family and over all its families ("*"): the 10th-90th percentile of measured /
    predicted speed of ``runs`` (the held-out half) for prompt and generation, with their count: the ranges
    sizer's local answers give (:meth:`sizer.runtimes.local_runtimes.LocalProfile.spread`)."""
    import numpy as np

    from sizer.runtimes import runtime
    ratios: dict[str, dict[str, dict[str, list[float]]]] = {}
    for run in runs:
        predicted = (run.tokens if run.test == "pp" else 1.0) / _seconds(run, runtime(run.runtime).profile)
        test = "prompt" if run.test == "pp" else "generation"
        for family in (run.family, "*"):
            ratios.setdefault(run.runtime, {}).setdefault(family, {}).setdefault(test, []).append(run.measured / predicted)
    return {name: {family: {test: {"low": round(float(np.percentile(r, 10)), 3), "high": round(float(np.percentile(r, 90)), 3),
                                   "n": len(r)} for test, r in tests.items()}
                   for family, tests in families.items()} for name, families in ratios.items()}


def _write_yaml(profile: dict) -> None:
    import yaml
    header = ("# Fitted by benchmarks/local_inference_accuracy.py on the fit half of\n"
              "# ../shared/data/local-inference-measurements.csv (rows named by their CSV line in fitted_on).\n"
              "# kernels: 'family/ggml type' -> prompt (of the matrix peak), generation (of memory bandwidth).\n"
              "# speed_spread: 10th-90th percentile of measured / predicted speed on the HELD-OUT half (the answers' range).\n")
    tmp = FIT_OUT.with_suffix(".tmp")
    tmp.write_text(header + yaml.safe_dump(profile, sort_keys=True, width=120))
    tmp.replace(FIT_OUT)


def _reload_runtimes() -> None:
    import importlib

    from sizer.runtimes import local_runtimes
    importlib.reload(local_runtimes)  # its runtimes are built from the fitted file at import (no cache to clear)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="score the committed profile on the committed runs only")
    args = parser.parse_args(argv)
    if args.check:
        runs, skipped = load_runs(), {}
    else:
        runs, skipped = map_runs()
        write_runs(runs)
    _annotate(runs)
    fit_half = [r for r in runs if not held_out(r)]
    test_half = [r for r in runs if held_out(r)]
    if not args.check:
        profile = fit(fit_half)
        _write_yaml(profile)
        _reload_runtimes()
        for name, by_family in spreads(test_half).items():  # the held-out errors of that fit: the answers' ranges
            profile[name]["speed_spread"] = by_family
        _write_yaml(profile)
        _reload_runtimes()
    result = {"rows_used": len(runs), "fit_rows": len(fit_half), "held_out_rows": len(test_half), "skipped": skipped,
              "held_out": score(test_half), "fit": score(fit_half)}
    if not args.check:
        tmp = RESULT_OUT.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1, sort_keys=True))
        tmp.replace(RESULT_OUT)
    print(f"rows used {len(runs)} (fit {len(fit_half)}, held out {len(test_half)}); skipped {sum(skipped.values())}")
    print("| family | test | held-out rows | median |error| | signed median | p90 |")
    print("|---|---|---|---|---|---|")
    for family, tests in sorted(result["held_out"].items()):
        for test, s in sorted(tests.items()):
            print(f"| {family} | {test} | {s['rows']} | {100 * s['median_abs']:.1f} % | {100 * s['signed_median']:+.1f} % "
                  f"| {100 * s['p90_abs']:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
