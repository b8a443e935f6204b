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
chose the mechanisms (the standard loss's 8 bytes per logit, litgpt's LoRA defaults). OOM rows check the verdict
the other way: a published OOM should not fit, a published figure must fit.

Run: ``python benchmarks/finetune_accuracy.py`` (prints the table and the headline figures).
"""
from __future__ import annotations

import csv
import hashlib
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

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
        return int(hashlib.sha256(self.model.encode()).hexdigest(), 16) % 2 == 1


def load_runs(path: Path = DATA) -> tuple[list[Run], int]:
    """The litgpt memory rows sizer can express, and how many were left out."""
    runs, skipped = [], 0
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            if "litgpt" not in row["source"] or row["metric"] not in MEMORY_METRICS:
                continue
            model = MODELS.get(row["model"].strip().lower())
            device = DEVICES.get(row["hardware"].strip())
            method = row["method_or_test"].lower()
            kind = "qlora" if ("qlora" in method or "nf4" in row["precision_or_quant"]) else \
                "lora" if "lora" in method else "full" if "full" in method else None
            micro = re.search(r"micro-batch (\d+)", row["batch"])
            if model is None or device is None or kind is None or "adapter" in method or micro is None \
                    or "bf16-true" not in row["precision_or_quant"]:
                skipped += 1
                continue
            source = "resource" if "resource-tables" in row["source"] else "config_hub"
            seq = RESOURCE_TABLE_SEQ if source == "resource" else int(row["seq_len"])
            value = None if row["value"].strip() == "OOM" else float(row["value"])
            runs.append(Run(model, device, int(row["n_devices"]), kind, seq, int(micro.group(1)), value, source))
    return runs, skipped


def predict(run: Run):
    """sizer's memory answer for a run (the facade, as the CLI and HTTP ask it)."""
    from sizer.facade import MemoryRequest, estimate_memory

    fields = dict(model=run.model, method=run.method, device=run.device, count=run.count, seq_len=run.seq_len,
                  micro_batch=run.micro_batch, state_precision="bf16", precision="bf16", optimizer="adamw")
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


if __name__ == "__main__":
    main()
