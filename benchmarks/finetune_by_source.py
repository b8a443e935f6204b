"""Fine-tuning peak memory and throughput by source, each asked with the framework the source used
(benchmarks/ACCURACY.md, "Fine-tuning by source, with the source's framework"; issue 39).

Every row of ``../shared/data/finetune-measurements.csv`` that sizer can express becomes a request with
``framework`` set to the tool the source ran (:data:`FRAMEWORK_OF_TOOL`, the framework column) and the settings
the row states (model, method, device and count, sequence length, micro-batch, LoRA rank and targets, layout,
optimizer); the framework's documented recipe fills what the row does not state. Rows are scored by source:
leave-one-source-out, where the only fitted constants of the fine-tuning memory path (the activation factors of
eager LoRA and QLoRA runs, :mod:`sizer.workloads.finetune`) are refitted on every source but the scored one (the
factor 1, the layer graph's own count, where no other source has a row of that method). Memory rows compare
``torch.cuda.max_memory_allocated`` figures with sizer's ``active`` memory and reserved or nvidia-smi figures with
its ``total`` (active plus the framework reserve). Throughput rows compare tokens per second (or seconds per
iteration) with the time engine at the row's layout.

Rows left out, with the reason, are counted per source (:func:`load_rows` returns them): models the registry does
not hold (Qwen 1, ChatGLM, Baichuan, Yi-6B, the torchao 1B test model), methods sizer does not model (P-Tuning,
GaLore, LISA, DoRA, AQLM, GPTQ bases), operator-level benchmarks (Liger, Cut Cross-Entropy), RLHF pipelines
(DeepSpeed-Chat), rows whose sequence length or batch no document states (axolotl's Llama 2 README), and layouts the
row does not give (Megatron-SWIFT's Megatron-LM rows of the Quick-start benchmark).

Run: ``python benchmarks/finetune_by_source.py``.
"""
from __future__ import annotations

import csv
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import finetune_accuracy  # noqa: E402  (litgpt's rows, parsed there)

DATA = finetune_accuracy.DATA
GIB = 2**30
# The framework column: the tool each source ran -> sizer's --framework
FRAMEWORK_OF_TOOL = {
    "litgpt": "litgpt",
    "ms-swift sft (Transformers Trainer + PEFT)": "hf-trainer",
    "ms-swift sft with Unsloth": "unsloth",
    "Megatron-SWIFT (Megatron-LM)": "megatron",
    "ms-swift DeepSpeed ZeRO-2/3": "deepspeed",
    "torchtune (pytorch/ao optimizer benchmark)": "torchtune",
    "axolotl": "axolotl",
    "XTuner (DeepSpeed ZeRO-3, sequence parallel)": "deepspeed",
}


@dataclass(frozen=True)
class Row:
    """One published measurement as a sizer request."""

    source: str  # the CSV's source column: the unit of the split
    tool: str  # what the source ran, a key of FRAMEWORK_OF_TOOL
    fields: dict[str, Any] = field(hash=False)  # request fields the row states (framework added from the tool)
    measured: float | None  # GB (memory), tokens/s (throughput); None: published OOM
    kind: str  # "allocated", "reserved" (memory) or "throughput"
    timed: bool = False  # asked through the time engine (a layout with tensor parallelism, or a throughput)

    @property
    def framework(self) -> str:
        return FRAMEWORK_OF_TOOL[self.tool]

    @property
    def method(self) -> str:
        return str(self.fields.get("method", "full"))


def _gib(value: str) -> float:
    return float(value) * GIB / 1e9


def _litgpt_rows() -> list[Row]:
    runs, _ = finetune_accuracy.load_runs()
    rows = []
    for run in runs:
        fields: dict[str, Any] = dict(model=run.model, method=run.method, device=run.device, count=run.count,
                                      seq_len=run.seq_len, micro_batch=run.micro_batch, precision="bf16")
        if run.method != "full":
            rank, targets = finetune_accuracy.LORA[run.source]
            fields.update(lora_rank=rank, lora_targets=targets)
        source = "Lightning-AI/litgpt " + ("tutorials/resource-tables.md" if run.source == "resource"
                                           else "config_hub/finetune/README.md")
        rows.append(Row(source, "litgpt", fields, run.measured_gb, "allocated"))
    return rows


# ms-swift's LLM benchmark (swift sft on one A100; memory as ms-swift logs it, torch.cuda.max_memory_reserved):
# the models the registry holds. lora_target_modules DEFAULT is q, k, v for the Llama family in ms-swift 1.x
# (recalled, not re-read); the Unsloth row's 4.72M trained parameters are Llama 3 8B's r 8 on q, k, v.
SWIFT_MODELS = {"yi-34b-chat": "yi-34b", "llama3-8b-instruct": "llama-3-8b"}


def _swift(row: dict[str, str]) -> Row | None:
    model = SWIFT_MODELS.get(row["model"])
    if model is None or row["metric"] != "gpu_memory" or row["n_devices"] != "1" or "+" in row["value"]:
        return None
    method = row["method_or_test"]
    seq = int(re.match(r"\d+", row["seq_len"]).group()) if re.match(r"\d+", row["seq_len"]) else 2048
    fields: dict[str, Any] = dict(model=model, device="A100 80GB SXM", count=1, seq_len=seq, micro_batch=1,
                                  precision="bf16", recompute="full", lora_rank=8, lora_targets="q,k,v")
    if method.startswith("swift sft --sft_type lora") and "QLoRA" not in method and row["precision_or_quant"] == "bf16":
        return Row(row["source"], "ms-swift sft (Transformers Trainer + PEFT)", {**fields, "method": "lora"},
                   _gib(row["value"]), "reserved")
    if method.startswith("unsloth+lora+q4"):
        return Row(row["source"], "ms-swift sft with Unsloth", {**fields, "method": "qlora"}, _gib(row["value"]),
                   "reserved")
    return None


def _megatron_swift(row: dict[str, str]) -> Row | None:
    """Megatron-SWIFT's documents: LoRA-Training's Qwen2.5-7B on 2 GPUs (tp 2, sequence parallel, full
    recomputation, micro-batch 16, 2,048 tokens; an 80 GB card assumed, the GPU is not named) and Quick-start's
    Qwen2.5-14B / Qwen3-30B-A3B under DeepSpeed ZeRO-2/3 on A800s (8,192 tokens, micro-batch 1; ms-swift turns
    gradient checkpointing on). Its Megatron-LM rows of the Quick-start give no layout: left out."""
    value = row["value"].strip()
    if row["metric"] != "gpu_memory_per_gpu":
        return None
    measured = None if value == "OOM" else float(value) * (GIB / 1e9 if row["unit"] == "GiB" else 1.0)
    if "LoRA-Training" in row["source"]:
        method = "lora" if "(lora)" in row["method_or_test"] else "full"
        fields = dict(model="Qwen/Qwen2.5-7B-Instruct", method=method, device="A100 80GB SXM", count=2, tp=2,
                      seq_len=2048, micro_batch=16, batch_size="16 sequences", tokens=2048 * 16 * 10, precision="bf16",
                      recompute="full")
        if method == "lora":
            fields.update(lora_rank=8, lora_targets="all-linear")
        return Row(row["source"], "Megatron-SWIFT (Megatron-LM)", fields, measured, "reserved", timed=True)
    stage = re.search(r"ZeRO(\d)", row["method_or_test"])
    if stage is None:
        return None
    model = "Qwen/Qwen2.5-14B" if "14B" in row["model"] else "qwen3-30b-a3b"
    count = 8 if model == "Qwen/Qwen2.5-14B" else 16
    fields = dict(model=model, method="full", device="A800 80GB SXM", count=count, zero=int(stage.group(1)),
                  seq_len=8192, micro_batch=1, precision="bf16", recompute="full")
    return Row(row["source"], "ms-swift DeepSpeed ZeRO-2/3", fields, measured, "reserved")


def _torchao(row: dict[str, str]) -> Row | None:
    """pytorch/ao's optimizer benchmark, run with torchtune's full_finetune_single_device (Llama 2 7B, A100, pure
    bf16): the optimizer the row names; torchtune's recipe the rest. Alpaca's longest sample (1,044 tokens with the
    Llama 2 tokenizer, litgpt's table) and torchtune's batch_size 2 (recalled from the low-memory config) are
    assumed: the row states neither."""
    if row["source"] != "pytorch/ao torchao/optim/README.md" or row["metric"] != "peak_memory_allocated":
        return None
    optimizer = {"PyTorch (fused)": "adamw", "bnb 8-bit": "adamw-8bit", "ao 8-bit": "adamw-8bit"}.get(
        re.search(r"impl '([^']+)'", row["method_or_test"]).group(1))
    if optimizer is None:
        return None  # torchao's 4-bit AdamW: no such optimizer in sizer
    fields = dict(model="llama-2-7b", method="full", device="A100 80GB SXM", count=1, seq_len=1044, micro_batch=2,
                  precision="bf16", optimizer=optimizer)
    return Row(row["source"], "torchtune (pytorch/ao optimizer benchmark)", fields, float(row["value"]), "allocated")


def _axolotl(row: dict[str, str]) -> Row | None:
    """axolotl's gpt-oss examples (device_mem_reserved from its logs; 4,096-token packed samples, micro-batch 1,
    checkpointing; the MXFP4 checkpoint dequantised to bf16 and trained in bf16, FSDP2 on several devices)."""
    if "gpt-oss" not in row["source"] or "reserved" not in row["metric"]:
        return None
    model = "gpt-oss-120b" if "120b" in row["model"] else "gpt-oss-20b"
    count = int(re.match(r"\d+", row["n_devices"]).group())
    size = re.match(r"(\d+)GB GPU", row["hardware"])
    device = {"24": "RTX 4090", "48": "RTX 6000 Ada", "80": "H100 SXM"}[size.group(1)] if size else "H100 SXM"
    optimizer = "adamw-8bit" if "8bit" in row["precision_or_quant"] else "adamw"
    fields: dict[str, Any] = dict(model=model, device=device, count=count, seq_len=4096, micro_batch=1, precision="bf16",
                                  state_precision="bf16", optimizer=optimizer, recompute="full")
    if "LoRA" in row["method_or_test"]:
        fields.update(method="lora", lora_rank=8, lora_targets="all-linear")
    else:
        fields.update(method="full", zero=3, offload_params=True if "offload_params true" in row["other_config"] else None)
    return Row(row["source"], "axolotl", {k: v for k, v in fields.items() if v is not None}, _gib(row["value"]), "reserved")


PARSERS: tuple[Callable[[dict[str, str]], Row | None], ...] = (_swift, _megatron_swift, _torchao, _axolotl)


def load_rows(path: Path = DATA) -> tuple[list[Row], dict[str, int]]:
    """The memory rows sizer can express, litgpt's included, and per source how many rows were left out."""
    rows = _litgpt_rows()
    left: dict[str, int] = {}
    with open(path, newline="") as handle:
        for raw in csv.DictReader(handle):
            if "litgpt" in raw["source"]:
                continue
            found = next((r for r in (parse(raw) for parse in PARSERS) if r is not None), None)
            if found is None:
                left[raw["source"]] = left.get(raw["source"], 0) + 1
            else:
                rows.append(found)
    return rows, left


def predict(row: Row) -> tuple[float, float, bool]:
    """sizer's figure for a row asked with its framework: (predicted GB, activations GB, fits)."""
    from sizer.facade import MemoryRequest, TimeRequest, estimate_memory, estimate_time

    fields = {**row.fields, "framework": row.framework}
    if row.timed:
        time = estimate_time(TimeRequest(**fields), suggest=False)
        return time.memory_per_device.value, 0.0, time.fits
    memory = estimate_memory(MemoryRequest(**{k: v for k, v in fields.items() if k not in ("tokens", "batch_size")}),
                             suggest=False)
    figure = memory.active if row.kind == "allocated" else memory.total
    return figure.value, memory.activations.value, bool(memory.fits)


FACTORS = ("LORA_ACTIVATION_FACTOR", "QLORA_ACTIVATION_FACTOR")


def fit_factors(rows: list[Row]) -> dict[str, float]:
    """The activation factors of eager LoRA and QLoRA fine-tunes fitted on ``rows`` (single-device measured adapter
    rows of the memory path): per method, the median factor that closes each row's gap; 1 (the layer graph's count)
    where no row has the method."""
    import sizer.workloads.finetune as finetune

    fitted = {}
    for name, method in zip(FACTORS, ("lora", "qlora"), strict=True):
        current = getattr(finetune, name)
        implied = []
        for row in rows:
            if row.method != method or row.timed or row.measured is None or row.fields.get("count", 1) != 1:
                continue
            predicted, activations, _ = predict(row)
            if activations > 0:
                implied.append((row.measured - (predicted - activations)) / (activations / current))
        fitted[name] = statistics.median(implied) if implied else 1.0
    return fitted


def leave_one_source_out(rows: list[Row]) -> dict[str, list[tuple[Row, float, float | None, bool]]]:
    """Per source: every row predicted with the factors fitted on the other sources: (row, predicted, signed relative
    error or None for an OOM row, fits)."""
    import sizer.workloads.finetune as finetune

    kept = {name: getattr(finetune, name) for name in FACTORS}
    scored: dict[str, list[tuple[Row, float, float | None, bool]]] = {}
    try:
        for source in sorted({row.source for row in rows}):
            for name, value in fit_factors([r for r in rows if r.source != source]).items():
                setattr(finetune, name, value)
            for row in (r for r in rows if r.source == source):
                predicted, _, fits = predict(row)
                error = None if row.measured is None else predicted / row.measured - 1.0
                scored.setdefault(source, []).append((row, predicted, error, fits))
            for name, value in kept.items():
                setattr(finetune, name, value)
    finally:
        for name, value in kept.items():
            setattr(finetune, name, value)
    return scored


def figures(errors: list[float]) -> dict[str, float]:
    """Median and p90 of |error|, signed median, share within 15 % (the median target)."""
    absolute = sorted(abs(e) for e in errors)
    p90 = absolute[min(len(absolute) - 1, int(round(0.9 * (len(absolute) - 1))))]
    return {"median": statistics.median(absolute), "p90": p90, "signed": statistics.median(errors),
            "within_15": sum(e <= 0.15 for e in absolute) / len(absolute), "rows": len(absolute)}


# --- throughput -------------------------------------------------------------------------------------------------
# Each timed row as (request fields, measured seconds per optimizer step). litgpt's rows are litgpt's own
# (finetune_accuracy.load_timed_runs: time per micro-batch over Alpaca, whose tokens per sample are fitted);
# XTuner's TGS (tokens per GPU per second, packed sequences, one per GPU and step, DeepSpeed ZeRO-3 with its
# sequence parallelism as context parallelism); ms-swift's DeepSpeed ZeRO-2/3 benchmark (Qwen2.5-14B on 8 A800s,
# 8,192 tokens, per-device batch 1 x 2 accumulation steps: 16 sequences a step); ms-swift's LLM benchmark at
# max_length 512 and 1,024 (its dataset's samples, 3,234 +- 2,548 tokens, are mostly cut to the maximum: read as
# full length; one sample a micro-batch, 16 a step).


@dataclass(frozen=True)
class Timed:
    source: str
    tool: str
    fields: dict[str, Any] = field(hash=False)
    seconds: float  # measured seconds per optimizer step [s]
    run: Any = None  # litgpt's TimedRun (its step is asked by finetune_accuracy.predict_iteration)

    @property
    def framework(self) -> str:
        return FRAMEWORK_OF_TOOL[self.tool]


XTUNER_MODELS = {"Llama2-7B": "llama-2-7b", "Llama2-70B": "llama-2-70b", "Yi-34B-200K": "yi-34b"}
SEQ = {"k": 1024, "M": 1024 * 1024}


def load_timed() -> list[Timed]:
    """Every timed row sizer can express (module comment above)."""
    timed = []
    for run in finetune_accuracy.load_timed_runs():
        source = "Lightning-AI/litgpt " + ("tutorials/resource-tables.md" if run.source == "resource"
                                           else "config_hub/finetune/README.md")
        timed.append(Timed(source, "litgpt", {"method": run.method}, run.seconds_per_iteration, run))
    with open(DATA, newline="") as handle:
        for raw in csv.DictReader(handle):
            found = _timed(raw)
            if found is not None:
                timed.append(found)
    return timed


def _timed(row: dict[str, str]) -> Timed | None:
    if "xtuner" in row["source"] and row["metric"].startswith("TGS"):
        number = re.match(r"(\d+)([kM])", row["seq_len"])
        sp = re.search(r"sequence parallel size (\d+)", row["other_config"])
        if number is None or sp is None:
            return None
        seq, count, cp = int(number.group(1)) * SEQ[number.group(2)], int(row["n_devices"]), int(sp.group(1))
        fields = dict(model=XTUNER_MODELS[row["model"]], method="full", device="A100 80GB SXM", count=count, cp=cp,
                      seq_len=seq, micro_batch=1, batch_size=f"{count // cp} sequences", tokens=seq * (count // cp) * 10,
                      zero=3, precision="bf16")
        return Timed(row["source"], "XTuner (DeepSpeed ZeRO-3, sequence parallel)", fields,
                     (count // cp) * seq / (float(row["value"]) * count))
    if "Megatron-SWIFT/Quick-start" in row["source"] and row["metric"] == "time_per_iteration" and "14B" in row["model"]:
        stage = re.search(r"ZeRO(\d)", row["method_or_test"])
        if stage is None:
            return None  # its Megatron-LM row gives no layout
        fields = dict(model="Qwen/Qwen2.5-14B", method="full", device="A800 80GB SXM", count=8, zero=int(stage.group(1)),
                      seq_len=8192, micro_batch=1, batch_size="16 sequences", tokens=8192 * 16 * 10, precision="bf16",
                      recompute="full")
        return Timed(row["source"], "ms-swift DeepSpeed ZeRO-2/3", fields, float(row["value"]))
    if "ms-swift docs/source_en/LLM" in row["source"] and row["metric"] == "training_speed":
        model = SWIFT_MODELS.get(row["model"])
        seq = re.match(r"\d+", row["seq_len"])
        if model is None or seq is None or int(seq.group()) > 1024 or row["precision_or_quant"] != "bf16" \
                or not row["method_or_test"].startswith("swift sft --sft_type lora") or row["n_devices"] != "1":
            return None
        length = int(seq.group())
        fields = dict(model=model, method="lora", device="A100 80GB SXM", count=1, seq_len=length, micro_batch=1,
                      batch_size="16 sequences", tokens=length * 16 * 10, precision="bf16", recompute="full",
                      lora_rank=8, lora_targets="q,k,v")
        return Timed(row["source"], "ms-swift sft (Transformers Trainer + PEFT)", fields, 16 / float(row["value"]))
    return None


def predict_step(row: Timed, sample_tokens: int) -> float:
    """sizer's expected seconds per step for a timed row, asked with its framework."""
    from sizer.facade import TimeRequest, estimate_time

    if row.run is not None:
        return float(finetune_accuracy.predict_iteration(row.run, sample_tokens))
    return float(estimate_time(TimeRequest(**{**row.fields, "framework": row.framework}), suggest=False).step_time.expected)


def _at_constants(predict: Callable[[Timed, int], float]) -> Callable[[Timed, int], float]:
    """``predict`` kept per (row, tokens per sample, eager adapter constants, dequantisation share): the folds of
    :func:`throughput_by_source` refit on overlapping rows and ask the same predictions again (1,372 distinct of
    3,009). For one call's rows only, which stay alive while it runs (the key holds the row's ``id``: its fields
    are a dict); every module constant the fits change is in the key."""
    import sizer.engine.eager as eager
    import sizer.workloads.finetune as finetune

    kept: dict[tuple[int, int, float, float, float], float] = {}

    def predicted(row: Timed, sample_tokens: int) -> float:
        key = (id(row), sample_tokens, eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE,
               finetune.DEQUANT_BANDWIDTH_SHARE)
        if key not in kept:
            kept[key] = predict(row, sample_tokens)
        return kept[key]
    return predicted


def _fit_timed(rows: list[Timed], predict: Callable[[Timed, int], float] = predict_step
               ) -> tuple[int, float, tuple[float, float]]:
    """The throughput constants fitted on ``rows`` (every row, none held out): litgpt's tokens per sample (on its LoRA
    and full rows), QLoRA's dequantisation share (on its QLoRA rows), then the eager adapter constants over their
    grids (on every adapter row: litgpt's and Hugging Face PEFT's). Where ``rows`` have no row of a kind, the
    unfitted value: 320 tokens is not available to a held-out litgpt document from nowhere, so a litgpt document
    is always fitted on the other one."""
    import itertools
    import math

    import sizer.engine.eager as eager
    import sizer.workloads.finetune as finetune

    def loss(chosen: list[Timed], tokens: int) -> float:
        return statistics.median(abs(math.log(predict(r, tokens) / r.seconds)) for r in chosen)

    litgpt = [r for r in rows if r.run is not None]
    plain = [r for r in litgpt if r.run.method != "qlora"]
    tokens = min(finetune_accuracy.SAMPLE_TOKENS_GRID, key=lambda t: loss(plain, t)) if plain else 320
    qlora = [r for r in litgpt if r.run.method == "qlora"]
    kept = finetune.DEQUANT_BANDWIDTH_SHARE
    shares = {}
    for share in finetune_accuracy.DEQUANT_SHARE_GRID if qlora else ():
        finetune.DEQUANT_BANDWIDTH_SHARE = share
        shares[share] = loss(qlora, tokens)
    finetune.DEQUANT_BANDWIDTH_SHARE = kept
    share = min(shares, key=shares.__getitem__) if shares else 1.0
    adapters = [r for r in rows if (r.run.method if r.run is not None else r.fields.get("method")) in ("lora", "qlora")]
    pairs = {}
    held = eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE
    try:
        finetune.DEQUANT_BANDWIDTH_SHARE = share
        for pair in itertools.product(eager.MATRIX_HALF_SCALE_GRID, eager.LAUNCH_SCALE_GRID) if adapters else ():
            eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE = pair
            errors = sorted(abs(r.seconds / predict(r, tokens) - 1.0) for r in adapters)
            pairs[pair] = statistics.median(errors) + errors[min(len(errors) - 1, int(round(0.9 * (len(errors) - 1))))]
    finally:
        eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE = held
    return tokens, share, min(pairs, key=pairs.__getitem__) if pairs else (1.0, 1.0)


def throughput_by_source(rows: list[Timed]) -> dict[str, list[tuple[Timed, float, float]]]:
    """Per source: (row, predicted seconds per step, signed throughput error) with the constants fitted on the other
    sources (:func:`_fit_timed`)."""
    import sizer.engine.eager as eager
    import sizer.workloads.finetune as finetune

    held = eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE
    scored: dict[str, list[tuple[Timed, float, float]]] = {}
    predict = _at_constants(predict_step)
    try:
        for source in sorted({r.source for r in rows}):
            tokens, share, pair = _fit_timed([r for r in rows if r.source != source], predict)
            eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE = pair
            finetune.DEQUANT_BANDWIDTH_SHARE = share
            for row in (r for r in rows if r.source == source):
                predicted = predict(row, tokens)
                scored.setdefault(source, []).append((row, predicted, row.seconds / predicted - 1.0))
            eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE = held
    finally:
        eager.ADAPTER_MATRIX_HALF_SCALE, eager.ADAPTER_LAUNCH_SCALE, finetune.DEQUANT_BANDWIDTH_SHARE = held
    return scored


def main() -> None:
    rows, left = load_rows()
    scored = leave_one_source_out(rows)
    every: list[float] = []
    medians = []
    for source, results in scored.items():
        errors = [e for _, _, e, _ in results if e is not None]
        tool = results[0][0].tool
        print(f"## {source} ({tool} -> --framework {FRAMEWORK_OF_TOOL[tool]})")
        for row, predicted, error, fits in results:
            measured = "OOM" if row.measured is None else f"{row.measured:.2f}"
            print(f"  {row.fields['model']:26} {row.method:5} x{row.fields.get('count', 1)} seq {row.fields.get('seq_len')}: "
                  f"measured {measured:>6} GB ({row.kind}), sizer {predicted:6.2f} GB"
                  + (f", {error:+.0%}" if error is not None else "") + f", fits {fits}")
        if errors:
            f = figures(errors)
            medians.append(f["median"])
            every += errors
            print(f"  {source}: {f['rows']} rows, median {f['median']:.1%}, p90 {f['p90']:.1%}, signed {f['signed']:+.1%}")
    f = figures(every)
    print(f"all sources, each held out: {f['rows']} rows from {len(scored)} sources, median {f['median']:.1%}, "
          f"p90 {f['p90']:.1%}, signed {f['signed']:+.1%}, within 15 %: {f['within_15']:.0%}; "
          f"median of the per-source medians {statistics.median(medians):.1%}")
    print(f"factors on all sources: {fit_factors(rows)}")
    for source, count in sorted(left.items()):
        print(f"left out: {count:3} rows of {source}")
    print("## throughput (error of the throughput, signed: + where sizer predicts it too fast)")
    timed = throughput_by_source(load_timed())
    every, medians = [], []
    for source, results in timed.items():
        errors = [e for _, _, e in results]
        f = figures(errors)
        every += errors
        medians.append(f["median"])
        tool = results[0][0].tool
        print(f"  {source} ({tool} -> --framework {FRAMEWORK_OF_TOOL[tool]}): {f['rows']} rows, median {f['median']:.1%}, "
              f"p90 {f['p90']:.1%}, signed {f['signed']:+.1%}")
        for row, predicted, error in results:
            print(f"    {row.fields.get('model', row.run.model if row.run else '')} {row.fields.get('seq_len', '')} "
                  f"x{row.fields.get('count', 1)}: measured {row.seconds:.3f} s/step, sizer {predicted:.3f}, {error:+.0%}")
    f = figures(every)
    print(f"throughput, all sources each held out: {f['rows']} rows from {len(timed)} sources, median {f['median']:.1%}, "
          f"p90 {f['p90']:.1%}, signed {f['signed']:+.1%}; median of the per-source medians {statistics.median(medians):.1%}")


if __name__ == "__main__":
    main()
