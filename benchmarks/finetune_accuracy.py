"""Fine-tuning peak memory against published runs, fit and held-out (benchmarks/ACCURACY.md, "Fine-tuning").

Rows: ``../shared/data/finetune-measurements.csv``, the Lightning-AI/litgpt tables (``resource-tables.md``:
A100-SXM4-40GB, Alpaca with its longest sample of 1,044 tokens; ``config_hub/finetune/README.md``: A10G,
``max_seq_length`` 512). Both report ``torch.cuda.max_memory_allocated``, so they are compared with
sizer's ``active`` memory. Each row maps to a request: the model by name where the registry has it,
LoRA / QLoRA / full from the method, litgpt's ``bf16-true`` as pure bf16 states (every state in bf16),
the micro-batch as given, the devices as given (a full fine-tune on several devices is FSDP, ZeRO 3).
Adapter (LLaMA-Adapter) rows and models sizer does not know are left out and counted.

The split is by model (every run of one model on one side): models whose name hashes even are the fit
part, the others held out. Fitted on the fit part only: the activation factors of eager PyTorch LoRA and
QLoRA runs (:func:`fit_activation_factors`, kept in :mod:`sizer.workloads.finetune`); the fit part also
chose the mechanisms (litgpt's LoRA defaults). OOM rows check the verdict
the other way: a published OOM should not fit, a published figure must fit.

Run: ``python benchmarks/finetune_accuracy.py`` (prints the table and the headline figures); ``--fit`` also
prints the fit part's figures for every combination of eager adapter constants (:func:`fit_eager_constants`).
"""
from __future__ import annotations

import csv
import hashlib
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sizer.results import unit_factor

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "finetune-measurements.csv"
MEMORY_METRICS = ("max_gpu_memory", "peak_memory")
# litgpt names -> sizer's registry
MODELS = {"llama 2 (7 b)": "llama-2-7b", "llama 2 (13 b)": "llama-2-13b", "falcon (40 b)": "falcon-40b",
          "falcon (7 b)": "falcon-7b", "falcon-7b": "falcon-7b", "gemma-2-9b": "gemma-2-9b", "llama-2-7b": "llama-2-7b",
          "llama-3-8b": "llama-3-8b", "llama-3.1-8b": "llama-3.1-8b", "mistral-7b": "mistral-7b",
          "mistral-7b-v0.2": "mistral-7b", "phi-3-mini-4k-instruct": "phi-3-mini"}
DEVICES = {"NVIDIA A100-SXM4-40GB": "A100 40GB", "NVIDIA A10G": "A10G"}
RESOURCE_TABLE_SEQ = 1044  # "variable (Alpaca, longest sample 1044 tokens)": the peak is at the longest
# litgpt config_hub lora.yaml / qlora.yaml: lora_r 32 on query and value (recalled from the configs, not re-read);
# resource-tables: r 8 on query and value (4,194,304 trained parameters of Llama 2 7B = 32 x 8 x 8192 x 2)
LORA = {"resource": (8, "q,v"), "config_hub": (32, "q,v")}
# The framework column: both litgpt documents ran litgpt's finetune scripts (bf16-true, AdamW, no checkpointing,
# FSDP for a full fine-tune on several devices), asked as --framework litgpt (sizer/frameworks/frameworks.yaml);
# benchmarks/finetune_by_source.py maps the other sources' tools
FRAMEWORK = "litgpt"


def held_out_model(model: str) -> bool:
    """The split, by model: a model whose name hashes odd is held out, for memory and time rows alike."""
    return int(hashlib.sha256(model.encode()).hexdigest(), 16) % 2 == 1


@dataclass(frozen=True)
class Run:
    model: str
    device: str
    count: int
    method: str
    seq_len: int
    micro_batch: int
    measured_gb: float | None  # None: OOM
    source: str

    @property
    def held_out(self) -> bool:
        return held_out_model(self.model)


def _litgpt_run(row: dict[str, str]) -> tuple[str, str, str, int] | None:
    """A litgpt row's model, device, method (full, lora, qlora) and micro-batch [sequence], where sizer can
    express them; None for the rest (an unmapped model or device, litgpt's adapter method, no micro-batch)."""
    model = MODELS.get(row["model"].strip().lower())
    device = DEVICES.get(row["hardware"].strip())
    method = row["method_or_test"].lower()
    kind = "qlora" if ("qlora" in method or "nf4" in row["precision_or_quant"]) else \
        "lora" if "lora" in method else "full" if "full" in method else None
    micro = re.search(r"micro-batch (\d+)", row["batch"])
    if model is None or device is None or kind is None or "adapter" in method or micro is None:
        return None
    return model, device, kind, int(micro.group(1))


def load_runs(path: Path = DATA) -> tuple[list[Run], int]:
    """The litgpt memory rows sizer can express, and how many were left out."""
    runs, skipped = [], 0
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            if "litgpt" not in row["source"] or row["metric"] not in MEMORY_METRICS:
                continue
            parsed = _litgpt_run(row)
            if parsed is None or "bf16-true" not in row["precision_or_quant"]:
                skipped += 1
                continue
            model, device, kind, micro_batch = parsed
            source = "resource" if "resource-tables" in row["source"] else "config_hub"
            seq = RESOURCE_TABLE_SEQ if source == "resource" else int(row["seq_len"])
            value = None if row["value"].strip() == "OOM" else float(row["value"])
            runs.append(Run(model, device, int(row["n_devices"]), kind, seq, micro_batch, value, source))
    return runs, skipped


def predict(run: Run):
    """sizer's memory answer for a run (the facade, as the CLI and HTTP ask it)."""
    from sizer.facade import MemoryRequest, estimate_memory

    fields = dict(model=run.model, method=run.method, device=run.device, count=run.count, seq_len=run.seq_len,
                  micro_batch=run.micro_batch, state_precision="bf16", precision="bf16", optimizer="adamw",
                  framework=FRAMEWORK)
    if run.method != "full":
        rank, targets = LORA[run.source]
        fields.update(lora_rank=rank, lora_targets=targets)
    elif run.count > 1:
        fields["zero"] = 3
    return estimate_memory(MemoryRequest(**fields), suggest=False)


def score(runs: list[Run]) -> dict:
    """Errors of the active memory on measured runs, and the verdicts on every run, per part."""
    parts: dict[str, dict] = {}
    for run in runs:
        part = parts.setdefault("held-out" if run.held_out else "fit", {"errors": [], "wrong_oom": [], "oom_rows": 0,
                                                                        "rows": []})
        result = predict(run)
        if run.measured_gb is None:
            part["oom_rows"] += 1
            part["rows"].append((run, result.active.value, None, result.fits))
            continue
        error = abs(result.active.value - run.measured_gb) / run.measured_gb
        part["errors"].append(error)
        if not result.fits:
            part["wrong_oom"].append(run)
        part["rows"].append((run, result.active.value, error, result.fits))
    return parts


def fit_activation_factors(runs: list[Run]) -> dict[str, float]:
    """The activation factors of :mod:`sizer.workloads.finetune`, fitted on the fit part only: per method
    (LoRA, QLoRA), the median over single-device measured runs of the factor that makes the activations
    close the gap, ``(measured - everything else) / (activations at factor 1)``."""
    from sizer.workloads.finetune import LORA_ACTIVATION_FACTOR, QLORA_ACTIVATION_FACTOR

    current = {"lora": LORA_ACTIVATION_FACTOR, "qlora": QLORA_ACTIVATION_FACTOR}
    implied: dict[str, list[float]] = {"lora": [], "qlora": []}
    for run in runs:
        if run.held_out or run.measured_gb is None or run.count != 1 or run.method not in implied:
            continue
        result = predict(run)
        activations = result.activations.value
        rest = result.active.value - activations
        implied[run.method].append((run.measured_gb - rest) / (activations / current[run.method]))
    return {method: statistics.median(values) for method, values in implied.items() if values}


def summary(errors: list[float]) -> tuple[float, float]:
    """Median and 90th percentile of absolute relative errors [1]."""
    ordered = sorted(errors)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return statistics.median(ordered), p90


# Throughput. litgpt's tables give time per iteration (one micro-batch) over Alpaca's variable-length samples, not
# tokens: the mean tokens a sample carries under litgpt's prompt template is not stated, so it is fitted per source
# on the fit part (a property of the data, not of sizer) and used unchanged on the held-out part. config_hub's
# runtimes cover litgpt's Alpaca2k (2,000 samples, 5 % held for validation: 1,900 trained per epoch; recalled from
# litgpt's datamodule, not re-read) for the stated epochs, validation included.
ALPACA2K_TRAIN_SAMPLES = 1900
SAMPLE_TOKENS_GRID = tuple(range(96, 513, 32))
TIME_METRICS = ("time_per_1000_iterations", "training_runtime")


@dataclass(frozen=True)
class TimedRun:
    model: str
    device: str
    method: str
    micro_batch: int
    seconds_per_iteration: float
    source: str

    @property
    def held_out(self) -> bool:
        return held_out_model(self.model)


def load_timed_runs(path: Path = DATA) -> list[TimedRun]:
    """The litgpt single-device time rows sizer can express, as seconds per iteration (one micro-batch)."""
    runs = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            if "litgpt" not in row["source"] or row["metric"] not in TIME_METRICS or row["n_devices"] != "1":
                continue
            parsed = _litgpt_run(row)
            if parsed is None:
                continue
            model, device, kind, mb = parsed
            if row["metric"] == "time_per_1000_iterations":
                seconds = float(row["value"]) * unit_factor("min", "s") / 1000
                source = "resource"
            else:
                epochs = re.search(r"epochs (\d+)", row["other_config"])
                if epochs is None:
                    continue
                seconds = float(row["value"]) * unit_factor("min", "s") / (ALPACA2K_TRAIN_SAMPLES * int(epochs.group(1)) / mb)
                source = "config_hub"
            runs.append(TimedRun(model, device, kind, mb, seconds, source))
    return runs


def predict_iteration(run: TimedRun, sample_tokens: int) -> float:
    """sizer's expected seconds for one micro-batch of ``sample_tokens``-token sequences (no recomputation,
    litgpt's default), from the one time engine."""
    from sizer.facade import TimeRequest, estimate_time

    fields = dict(model=run.model, method=run.method, device=run.device, seq_len=sample_tokens,
                  tokens=1000 * run.micro_batch * sample_tokens, batch_size=run.micro_batch * sample_tokens,
                  micro_batch=run.micro_batch, precision="bf16", state_precision="bf16", optimizer="adamw",
                  recompute="none", framework=FRAMEWORK)
    if run.method != "full":
        rank, targets = LORA[run.source]
        fields.update(lora_rank=rank, lora_targets=targets)
    return estimate_time(TimeRequest(**fields), suggest=False).step_time.expected


def fit_sample_tokens(runs: list[TimedRun], predict: Callable[[TimedRun, int], float] = predict_iteration) -> dict[str, int]:
    """Per source, the mean tokens per sample that makes the fit part's predictions best (median absolute log
    error over :data:`SAMPLE_TOKENS_GRID`); the held-out part is never read."""
    import math

    fitted = {}
    for source in {run.source for run in runs}:
        # the adapters' and full runs only: QLoRA's dequantisation is fitted after, on these tokens
        fit = [run for run in runs if run.source == source and not run.held_out and run.method != "qlora"]
        if not fit:
            continue
        def loss(tokens: int, fit: list[TimedRun] = fit) -> float:  # this source's runs, bound here
            return statistics.median(abs(math.log(predict(run, tokens) / run.seconds_per_iteration)) for run in fit)
        fitted[source] = min(SAMPLE_TOKENS_GRID, key=loss)
    return fitted


DEQUANT_SHARE_GRID = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0)


def fit_dequant_share(runs: list[TimedRun], sample_tokens: dict[str, int],
                      predict: Callable[[TimedRun, int], float] = predict_iteration) -> float:
    """The bandwidth share of QLoRA's dequantisation (:data:`sizer.workloads.finetune.DEQUANT_BANDWIDTH_SHARE`)
    that makes the fit part's QLoRA runs best, at the fitted tokens per sample (median absolute log error)."""
    import math

    import sizer.workloads.finetune as finetune

    fit = [run for run in runs if run.method == "qlora" and not run.held_out and run.source in sample_tokens]
    kept = finetune.DEQUANT_BANDWIDTH_SHARE

    def loss(share: float) -> float:
        finetune.DEQUANT_BANDWIDTH_SHARE = share
        return statistics.median(abs(math.log(predict(run, sample_tokens[run.source]) / run.seconds_per_iteration))
                                 for run in fit)
    try:
        return min(DEQUANT_SHARE_GRID, key=loss)
    finally:
        finetune.DEQUANT_BANDWIDTH_SHARE = kept


def fit_eager_constants(runs: list[TimedRun]) -> tuple[tuple, dict[tuple, tuple[float, float]]]:
    """The eager adapter constants of :mod:`sizer.engine.eager` (GEMM-size half-point scale, launch-time scale) that
    make the fit part best: for each combination of the grids, the tokens per sample and the dequantisation share refitted
    on the fit part, then the fit part's throughput error scored; the combination with the lowest mean of median and p90
    wins (both are targets); ties go to the first in grid order (the simpler). The held-out part is never read.
    Returns the winner and every combination's (median, p90)."""
    import itertools

    import sizer.engine.eager as eager
    import sizer.workloads.finetune as finetune

    kept = eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE
    # each prediction kept per (run, tokens, the three constants this search sets): the QLoRA rows' scores are the
    # dequantisation fit's predictions at the share it chose; only the fit part is scored (the held-out never read)
    predicted: dict[tuple[TimedRun, int, float, float, float], float] = {}

    def predict(run: TimedRun, tokens: int) -> float:
        key = (run, tokens, eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE)
        if key not in predicted:
            predicted[key] = predict_iteration(run, tokens)
        return predicted[key]

    fit_runs = [run for run in runs if not run.held_out]
    figures = {}
    try:
        for pair in itertools.product(eager.MATRIX_HALF_SCALE_GRID, eager.LAUNCH_SCALE_GRID):
            eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE = pair
            tokens = fit_sample_tokens(runs, predict)
            finetune.DEQUANT_BANDWIDTH_SHARE = fit_dequant_share(runs, tokens, predict)
            figures[pair] = summary([error for _, _, error in score_throughput(fit_runs, tokens, predict)["fit"]])
            finetune.DEQUANT_BANDWIDTH_SHARE = kept[2]
    finally:
        eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE = kept
    return min(figures, key=lambda pair: sum(figures[pair])), figures


def score_throughput(runs: list[TimedRun], sample_tokens: dict[str, int],
                     predict: Callable[[TimedRun, int], float] = predict_iteration) -> dict[str, list]:
    """Per part, (run, predicted seconds, relative error of the throughput) for every timed run."""
    parts: dict[str, list] = {"fit": [], "held-out": []}
    for run in runs:
        if run.source not in sample_tokens:
            continue
        predicted = predict(run, sample_tokens[run.source])
        error = abs(run.seconds_per_iteration / predicted - 1.0)  # throughput is 1 / time
        parts["held-out" if run.held_out else "fit"].append((run, predicted, error))
    return parts


HF_MEASUREMENTS = Path(__file__).with_name("hf_finetune_memory_h100.jsonl")


def score_hf_measurements(path: Path = HF_MEASUREMENTS) -> list[tuple[dict, float, float]]:
    """sizer's active memory against this project's own H100 measurements of Hugging Face fine-tuning steps
    (benchmarks/gpu_finetune_memory.py; Llama-3-8B shape, LoRA r 8 on q, v and full, pure bf16 AdamW): an
    independent framework, never used to fit the activation factors. Returns (row, predicted GB, error)."""
    from sizer.datafile import parse_json
    from sizer.facade import MemoryRequest, estimate_memory

    scored = []
    for line in path.read_text().splitlines():
        row = parse_json(line, "measurement", str(path))
        if row.get("oom"):
            continue
        fields = dict(model="llama-3-8b", method=row["method"], device="H100 SXM", seq_len=row["seq_len"],
                      micro_batch=row["micro_batch"], state_precision="bf16", precision="bf16", optimizer="adamw",
                      recompute="full" if row["checkpointing"] else "none")
        if row["method"] == "lora":
            fields.update(lora_rank=8, lora_targets="q,v")
        predicted = estimate_memory(MemoryRequest(**fields), suggest=False).active.value
        scored.append((row, predicted, abs(predicted - row["active_gb"]) / row["active_gb"]))
    return scored


HF_SPEED = Path(__file__).with_name("hf_finetune_speed_h100.jsonl")


def score_hf_speed(path: Path = HF_SPEED) -> list[tuple[dict, float, float]]:
    """sizer's expected step time against this project's H100 timings of Hugging Face fine-tuning steps (3 warm-up
    and 5 timed steps each; the same model and recipes as :func:`score_hf_measurements`): never fitted on.
    Returns (row, predicted seconds, relative error of the throughput)."""
    from sizer.datafile import parse_json
    from sizer.facade import TimeRequest, estimate_time

    scored = []
    for line in path.read_text().splitlines():
        row = parse_json(line, "measurement", str(path))
        if row.get("oom"):
            continue
        tokens = row["seq_len"] * row["micro_batch"]
        fields = dict(model="llama-3-8b", method=row["method"], device="H100 SXM", seq_len=row["seq_len"],
                      micro_batch=row["micro_batch"], tokens=1000 * tokens, batch_size=tokens, state_precision="bf16",
                      precision="bf16", optimizer="adamw", recompute="full" if row["checkpointing"] else "none")
        if row["method"] == "lora":
            fields.update(lora_rank=8, lora_targets="q,v")
        predicted = estimate_time(TimeRequest(**fields), suggest=False).step_time.expected
        scored.append((row, predicted, abs(row["s_per_step"] / predicted - 1.0)))
    return scored


def main() -> None:
    runs, skipped = load_runs()
    parts = score(runs)
    for name, part in parts.items():
        print(f"## {name}")
        for run, predicted, error, fits in part["rows"]:
            measured = "OOM" if run.measured_gb is None else f"{run.measured_gb:.2f}"
            print(f"{run.model:14} {run.method:5} {run.device:9} x{run.count} seq {run.seq_len:5} mb {run.micro_batch}: "
                  f"measured {measured:>6} GB, sizer active {predicted:6.2f} GB"
                  + (f", error {error:.0%}" if error is not None else "") + f", fits {fits}")
        if part["errors"]:
            median, p90 = summary(part["errors"])
            print(f"{name}: {len(part['errors'])} measured runs, median {median:.1%}, p90 {p90:.1%}; "
                  f"published runs called 'does not fit': {len(part['wrong_oom'])}; OOM rows {part['oom_rows']}")
    print(f"left out (adapters, unknown models or devices): {skipped}")
    print(f"activation factors fitted on the fit part: {fit_activation_factors(runs)}")
    print("## Hugging Face on an H100 (this project's measurements, benchmarks/hf_finetune_memory_h100.jsonl)")
    hf = score_hf_measurements()
    for row, predicted, error in hf:
        print(f"{row['method']:5} seq {row['seq_len']:5} mb {row['micro_batch']} checkpointing {row['checkpointing']!s:5}: "
              f"measured {row['active_gb']:.2f} GB, sizer active {predicted:.2f} GB, error {error:.1%}")
    median, p90 = summary([e for _, _, e in hf])
    print(f"hf: {len(hf)} runs, median {median:.1%}, p90 {p90:.1%}")
    speed = score_hf_speed()
    for row, predicted, error in speed:
        print(f"{row['method']:5} seq {row['seq_len']:5} mb {row['micro_batch']} checkpointing {row['checkpointing']!s:5}: "
              f"measured {row['s_per_step']:.3f} s/step, sizer {predicted:.3f} s/step, throughput error {error:.0%}")
    median, p90 = summary([e for _, _, e in speed])
    print(f"hf speed: {len(speed)} runs, median {median:.1%}, p90 {p90:.1%}")
    timed = load_timed_runs()
    tokens = fit_sample_tokens(timed)
    print(f"## throughput (mean tokens per sample fitted on the fit part: {tokens}; QLoRA dequantisation bandwidth "
          f"share fitted on the fit part: {fit_dequant_share(timed, tokens)})")
    if "--fit" in sys.argv:
        best, figures = fit_eager_constants(timed)
        for (half, launch), (median, p90) in figures.items():
            print(f"eager adapter constants: half-point x{half}, launch x{launch}: fit median {median:.1%}, p90 {p90:.1%}")
        print(f"chosen on the fit part: half-point x{best[0]}, launch x{best[1]}")
    for name, rows in score_throughput(timed, tokens).items():
        for run, predicted, error in rows:
            print(f"{name:8} {run.model:14} {run.method:5} {run.device:9} mb {run.micro_batch}: measured "
                  f"{run.seconds_per_iteration:.3f} s/it, sizer {predicted:.3f} s/it, error {error:.0%}")
        if rows:
            median, p90 = summary([row[2] for row in rows])
            print(f"{name}: {len(rows)} timed runs, throughput median {median:.1%}, p90 {p90:.1%}")


if __name__ == "__main__":
    main()
