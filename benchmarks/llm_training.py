"""Accuracy of sizer's language-model training step times against published runs.

    python benchmarks/llm_training.py [--fit] [--data PATH]

Reads ``../shared/data/llm-training-benchmarks.csv`` (long format: one row per metric; the rows of
one run share every column but ``metric``, ``value``, ``unit``, ``notes`` and ``confidence``), maps
each run to a :class:`sizer.facade.TimeRequest` (model by name, or a GPT-style model by its stated
layers / hidden / heads; device by catalog name; tp / pp / dp, micro and global batch, sequence
length, activation checkpointing -> ``recompute``, FSDP / ZeRO mode -> ``zero``, precision; FP8
runs against the FP8 peak), predicts the step time with the engine and compares it with the
measured one. Runs that cannot be mapped are listed with the reason.

The measured throughput (tokens per second per GPU) is taken, in this order, from
``tokens_per_sec_per_gpu``; ``tokens_per_sec`` / GPUs; ``samples_per_sec`` x seq_len / GPUs;
``iteration_time``; ``model_tflops_per_gpu`` or ``mfu`` x peak divided by the model FLOP per token
(Megatron's count, which ours equals: tests/benchmarks/test_llm_accuracy.py); Narayanan's
``tflops_per_gpu_incl_recompute`` divided by his eq. 3 per token (it counts the recomputed forward
pass). Each run records which.

Split (fixed): the efficiency model is fitted on the MosaicML llm-foundry runs only; every other
source (Narayanan 2021, Korthikanti 2022, Megatron-LM, NeMo) is held out. ``--fit`` refits
``matrix`` and ``matrix_half`` on the fit part (vectorised: every candidate in one engine call per
run). Results: ``benchmarks/results/llm_training.{json,md}``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from machine import quantile  # noqa: E402

from sizer.datafile import load_yaml, write_text  # noqa: E402
from sizer.engine.constants import TRANSFORMER_GPU_EFFICIENCIES, Efficiencies  # noqa: E402
from sizer.engine.job import resolve_job  # noqa: E402
from sizer.facade import TimeRequest, model_source, recompute_index  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402

DEFAULT_CSV = HERE.parent.parent / "shared" / "data" / "llm-training-benchmarks.csv"  # shared/ beside the checkout
RESULTS = HERE / "results"
COMMITTED_RUNS = HERE / "llm_training_runs.csv"  # the mapped runs, for tests/benchmarks/test_llm_accuracy.py
RUNS_FIELDS = ("label", "source", "fit", "model", "layers", "hidden", "heads", "seq_len", "global_batch", "micro_batch",
               "device", "count", "tp", "pp", "zero", "recompute", "precision", "measured_tokens_per_gpu", "basis",
               "ep", "interleave", "family", "release", "cp", "attention", "layout_stated")
FIT_SOURCES = ("mosaicml/llm-foundry",)
# The FP8 scaling overhead (sizer/engine/constants.py FP8_SCALING_OVERHEAD) is fitted on one other source's
# FP8 runs and scored on the rest (Megatron-Bridge, MosaicML): ``--fit-fp8``.
FP8_FIT_SOURCES = ("NVIDIA/NeMo",)
FP8_OVERHEADS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)
FAMILIES = ("dense", "fp8", "fp4", "moe")  # dense: 16-bit dense models; fp8/fp4: dense models in FP8/NVFP4; moe: mixtures
FP4_DEVICES = ("B200", "GB200")  # catalog entries with an FP4 (NVFP4) peak among the mapped devices
RUN_COLUMNS = ("source", "source_path_or_table", "model", "params", "n_layers", "hidden_size", "n_heads", "seq_len",
               "device", "n_devices", "tensor_parallel", "pipeline_parallel", "data_parallel", "sharding", "micro_batch",
               "global_batch", "activation_checkpointing", "precision")
# The attention implementation is a property of the run's software, stated from its source like the precision.
# Megatron-LM as Narayanan et al. 2021 and Korthikanti et al. 2022 ran it materialises the s x s scores (a fused
# scale-mask-softmax kernel, softmax dropout): both papers predate FlashAttention (Dao et al., arXiv:2205.14135,
# May 2022), and Korthikanti's selective recomputation exists to drop those scores (§4.1, the 5as/h term). Every
# other source (llm-foundry, Megatron-LM README, NeMo, Megatron-Bridge) runs flash attention (sizer's default).
STANDARD_ATTENTION_SOURCES = ("Narayanan et al. 2021", "Korthikanti et al. 2022")
GPT_VOCAB = 51200  # Megatron-LM GPT runs: GPT-2 BPE padded to a multiple of 1024 (Narayanan et al. 2021 §5.1)

# Device names as the sources write them -> catalog names. The clusters behind these tables are
# SXM parts on NVLink (MosaicML's a100_40gb / a100_80gb / h100_80gb, NVIDIA's Selene and DGX).
DEVICES = {
    "h100_80gb": "H100 SXM", "a100_40gb": "A100 40GB SXM", "a100_80gb": "A100 80GB SXM",
    "A100 80GB (Selene)": "A100 80GB SXM", "A100 80GB": "A100 80GB SXM", "H100": "H100 SXM", "DGX-H100": "H100 SXM",
    "DGX-B200": "B200", "H200": "H200",
    "DGX-GB200": "GB200",  # one Blackwell GPU of a GB200 NVL72 rack: 72 per NVLink domain (catalog interconnect.domain)
}
UNMAPPED_DEVICES = {
    "H100 96GB HBM2e (Grand Teton, 500W)": "no catalog entry for Meta's 96 GB HBM2e H100 at 500 W (other memory "
                                           "bandwidth and clocks than the H100 SXM)",
    "DGX-GB300": "no GB300 entry in the catalog: ../shared/data has no GB300 figures (peaks, memory, bandwidth)",
    "DGX-B300": "no B300 entry in the catalog: ../shared/data has no B300 figures (peaks, memory, bandwidth)",
}
MODELS = {  # source model names -> built-in models (catalog/models.yaml)
    "llama3_70b": "llama-3-70b", "llama3-70b": "llama-3-70b", "llama 3 70b": "llama-3-70b",
    "llama 3.1 70b": "llama-3.1-70b", "llama3.1_405b": "llama-3.1-405b", "llama 3.1 405b": "llama-3.1-405b",
    "llama3_8b": "llama-3-8b", "llama3-8b": "llama-3-8b", "llama 3 8b": "llama-3-8b", "llama 3.1 8b": "llama-3.1-8b",
    "llama2-7b": "llama-2-7b", "llama2-13b": "llama-2-13b", "llama2-70b": "llama-2-70b",
    "gpt3-175b": "gpt3-175b", "gpt-3 175b": "gpt3-175b",
    # mixtures of experts (issue 17); Megatron-Bridge's perf recipes, force-balanced and dropless unless marked
    "deepseekv3": "deepseek-v3", "deepseekv3 (w/o mtp)": "deepseek-v3", "deepseekv3 (dropless)": "deepseek-v3",
    "qwen3_30b_a3b": "qwen3-30b-a3b", "qwen3_235b_a22b": "qwen3-235b-a22b", "gpt oss 120b": "gpt-oss-120b",
}
MOE_UNMAPPED = {  # mixture-of-experts variants that stay unmapped, and why
    "(tokendrop)": "token-dropping MoE (capacity factor not stated; the table gives no precision either)",
    "(w/ mtp)": "DeepSeek-V3 with its multi-token-prediction module, which the layer graph does not model",
    "kimi": "Kimi K2 is not in catalog/models.yaml (no config in ../shared/data)",
    "deepseekv4": "DeepSeek-V4 is not in catalog/models.yaml (no published config in ../shared/data)",
    "nemotron_3": "Nemotron 3 is a hybrid Mamba-transformer MoE: no state-space layers in the layer graph",
}
FP8 = ("amp_fp8", "fp8", "fp8-cs", "float8 tensorwise", "float8 rowwise", "float8 (nn.linear) + bf16")
# MXFP8 (OCP microscaling: FP8 values with one 8-bit scale per 32) runs on Blackwell's FP8 tensor cores at
# the FP8 rate; its finer scaling is part of the FP8 scaling overhead
MX_FP8 = ("mxfp8", "fp8-mx")


@dataclass
class Run:
    """One published run: its columns and its metrics."""

    columns: dict[str, str]
    metrics: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> str:
        return self.columns[key]

    def number(self, key: str) -> float | None:
        text = self.columns[key].strip().rstrip("B")
        try:
            return float(text)
        except ValueError:
            return None

    @property
    def label(self) -> str:
        c = self.columns
        layout = "/".join(c[k] or "-" for k in ("tensor_parallel", "pipeline_parallel", "data_parallel"))
        return (f"{c['source'].split(',')[0][:28]} | {c['model']} | {c['device']} x{c['n_devices']} | tp/pp/dp {layout} | "
                f"mb {c['micro_batch'] or '-'} gb {c['global_batch'] or '-'} s {c['seq_len'] or '-'} | "
                f"{c['sharding'] or '-'} | AC {c['activation_checkpointing'] or '-'} | {c['precision'] or '-'}")


def load_runs(path: Path) -> list[Run]:
    """Group the long-format rows into runs; a metric met twice in one group starts another run
    (variants the columns do not tell apart, e.g. torchtitan's vanilla and async TP)."""
    groups: dict[tuple, list[Run]] = {}
    for row in csv.DictReader(path.open(encoding="utf-8")):
        # the layout sizes a table keeps in its notes (Megatron-Bridge: CP, VP, EP) tell runs apart too
        layout = tuple(re.findall(r"\b(CP|VP|EP)=(\w+)", row.get("notes", "")))
        key = tuple(row[c] for c in RUN_COLUMNS) + layout
        runs = groups.setdefault(key, [])
        target = next((r for r in runs if row["metric"] not in r.metrics), None)
        if target is None:
            target = Run({**{c: row[c] for c in RUN_COLUMNS}, "notes": row.get("notes", "")})
            runs.append(target)
        try:
            target.metrics[row["metric"]] = float(row["value"])
            target.units[row["metric"]] = row["unit"]
        except ValueError:
            continue
    return [run for runs in groups.values() for run in runs]


class Unmapped(Exception):
    """A run the engine cannot be asked about, with the reason."""


def _model(run: Run, seq_len: int, configs: Path) -> tuple[str, str]:
    """(model argument, how it was found)."""
    name = run["model"].strip()
    key = name.lower()
    if key.startswith("mpt-"):
        return key, "by name (catalog/models.yaml)"
    if key in MODELS:
        return MODELS[key], "by name"
    layers, hidden, heads = (run.number(k) for k in ("n_layers", "hidden_size", "n_heads"))
    if layers and hidden and heads and key.startswith("gpt"):
        return gpt_config(configs, int(layers), int(hidden), int(heads), seq_len), f"GPT-3-style by its stated shape ({int(layers)} x {int(hidden)}, {int(heads)} heads, vocab {GPT_VOCAB})"
    for marker, reason in MOE_UNMAPPED.items():
        if marker in key:
            raise Unmapped(reason)
    if any(w in key for w in ("deepseek", "qwen3", "oss", "kimi", "nemotron", "mixtral")):
        raise Unmapped("a mixture-of-experts or hybrid model that the model registry does not hold")
    raise Unmapped("model not in the registry and no layers/hidden/heads stated")


def _precision(run: Run) -> str:
    text = run["precision"]
    key = text.strip().lower()
    if not key and run["source"].startswith("NVIDIA-NeMo/Megatron-Bridge"):
        raise Unmapped("precision not stated (the 25.09 tables have no precision column)")
    if key in FP8 or key in MX_FP8:
        return "fp8"
    if key in ("nvfp4",):
        if DEVICES.get(run["device"]) not in FP4_DEVICES:
            raise Unmapped(f"precision {text}: the catalog has no FP4 peak for this device")
        return "fp4"
    if key in ("", "amp_bf16", "bf16", "none (bfloat16)", "mixed precision (16-bit)", "mixed precision"):
        return "bf16"
    raise Unmapped(f"precision {text!r} not understood")


def _zero(run: Run) -> tuple[int, str]:
    sharding = run["sharding"].lower()
    if "shard_grad_op" in sharding:
        return 2, "FSDP SHARD_GRAD_OP = ZeRO-2"
    if "fsdp" in sharding and "fsdp=0" not in sharding or "zero-3" in sharding:
        return 3, "FSDP FULL_SHARD = ZeRO-3"
    if run["source"].startswith("NVIDIA"):
        return 1, "Megatron distributed optimizer (ZeRO-1), NeMo/Megatron default (assumed)"
    if sharding.startswith("ddp"):
        return 0, "DDP"
    return 0, "no sharding"


def _recompute(text: str) -> str:
    key = text.strip().lower()
    if key.startswith(("yes", "full")):
        return "full"
    if key.startswith("selective"):
        return "selective"
    return "none"


def measured_tokens_per_gpu(run: Run, seq_len: int, count: int, global_batch: float | None, flops_per_token: float,
                            narayanan_per_token: float, peak: float) -> tuple[float, str]:
    """Tokens per second per GPU as measured, and which figure it came from (module docstring)."""
    m = run.metrics
    if "tokens_per_sec_per_gpu" in m:
        return m["tokens_per_sec_per_gpu"], "tokens/s per GPU"
    if "tokens_per_sec" in m:
        return m["tokens_per_sec"] / count, "tokens/s / GPUs"
    if "samples_per_sec" in m:
        return m["samples_per_sec"] * seq_len / count, "sequences/s x seq_len / GPUs"
    if "iteration_time" in m and global_batch:
        return global_batch * seq_len / m["iteration_time"] / count, "global batch / iteration time"
    if "model_tflops_per_gpu" in m:
        return m["model_tflops_per_gpu"] * 1e12 / flops_per_token, "model TFLOP/s per GPU / model FLOP per token"
    if "mfu" in m:
        return m["mfu"] / 100 * peak / flops_per_token, "MFU x catalog peak / model FLOP per token"
    if "tflops_per_gpu_incl_recompute" in m:
        return m["tflops_per_gpu_incl_recompute"] * 1e12 / narayanan_per_token, \
            "TFLOP/s incl. recompute / Narayanan eq. 3 per token"
    raise Unmapped("no throughput metric (only " + ", ".join(sorted(m)) + ")")


def narayanan_flops_per_token(layers: int, hidden: int, seq_len: int, vocab: int) -> float:
    """Narayanan et al. 2021 eq. 3 per token, with full recomputation:
    :math:`96 l h^2 (1 + s / 6h + V / 16 l h)`."""
    return 96.0 * layers * hidden ** 2 * (1 + seq_len / (6 * hidden) + vocab / (16 * layers * hidden))


@dataclass
class Mapped:
    label: str
    source: str
    model: str  # as the source names it
    shape: tuple[int, int, int] | None  # layers, hidden, heads where the model is given by its shape
    request: TimeRequest
    measured: float  # tokens/s per GPU
    basis: str
    notes: list[str]
    fit: bool
    release: str = ""  # the software release a table was measured with (Megatron-Bridge: the NeMo container)
    family: str = "dense"  # dense, moe, fp8 (MoE runs in FP8 count as moe), rack-scale: how the accuracy is split
    # False where the source gives neither tensor nor pipeline sizes nor a data-parallel-only scheme (Narayanan's
    # PTD-P comparison rows): the run is scored with no layout only, never as the tp 1 pp 1 it is mapped to
    layout_stated: bool = True


def release_of(notes: str) -> str:
    """The NeMo container release a Megatron-Bridge table names ("26.06.01 NeMo Container; ..."), else ""."""
    found = re.match(r"\s*(\d+\.\d+(?:\.\d+)?) NeMo Container", notes)
    return found.group(1) if found else ""


def run_family(model: str, precision: str, device: str) -> str:
    """The family a run is scored in: ``moe`` (a mixture of experts), else ``fp8`` or ``fp4``, else ``dense``."""
    from sizer.workloads.registry import resolve_model

    try:
        moe = not model.endswith(".json") and resolve_model(model).moe
    except ValueError:
        moe = False
    return "moe" if moe else (precision if precision in ("fp8", "fp4") else "dense")


def map_run(run: Run, catalog, configs: Path) -> Mapped:
    """A TimeRequest for ``run`` and its measured throughput, or Unmapped."""
    if run["device"] in UNMAPPED_DEVICES:
        raise Unmapped(UNMAPPED_DEVICES[run["device"]])
    if run["device"] not in DEVICES:
        raise Unmapped(f"device {run['device']!r} not mapped")
    device = DEVICES[run["device"]]
    if any(w in run["source_path_or_table"].lower() for w in ("finetun", "lora", "sft")) or "(SFT)" in run["model"] \
            or "(LoRA)" in run["model"]:
        raise Unmapped("fine-tuning run (packed/variable sequences, LoRA): not a pre-training step")
    if "layer" in " ".join(run.metrics) and not any(k in run.metrics for k in ("iteration_time", "mfu")):
        raise Unmapped("per-layer times only")
    if " cp" in f" {run['sharding'].lower()}" or "+ cp" in run["sharding"].lower():
        raise Unmapped("context parallelism named in the sharding column without its size (torchtitan)")
    notes_text = run.columns.get("notes", "")
    cp_match = re.search(r"\bCP=(\d+)", notes_text)
    cp = int(cp_match.group(1)) if cp_match else 1  # ring attention over cp ranks (the engine's context parallelism)
    ep_match = re.search(r"\bEP=(\d+)", notes_text)
    vp_match = re.search(r"\bVP=(\d+)", notes_text)
    ep = int(ep_match.group(1)) if ep_match else 1
    interleave = int(vp_match.group(1)) if vp_match else 1
    seq = run.number("seq_len")
    count = run.number("n_devices")
    if not seq or not count:
        raise Unmapped("sequence length or device count not stated")
    seq, count = int(seq), int(count)
    precision = _precision(run)
    tp = int(run.number("tensor_parallel") or 1)
    pp = int(run.number("pipeline_parallel") or 1)
    layout_stated = (run.number("tensor_parallel") is not None or run.number("pipeline_parallel") is not None
                     or re.search(r"fsdp|zero|ddp", run["sharding"].lower()) is not None)
    if count % (tp * pp * cp):
        raise Unmapped(f"tp x pp x cp ({tp} x {pp} x {cp}) does not divide the {count} devices")
    dp = count // (tp * pp * cp)
    stated_dp = run.number("data_parallel")
    notes = []
    if stated_dp and int(stated_dp) != dp:
        raise Unmapped(f"stated dp {int(stated_dp)} is not devices / (tp pp cp) = {dp} (a context parallelism the "
                       "table does not state?)")
    micro = run.number("micro_batch")
    global_batch = run.number("global_batch")
    if global_batch is None:
        raise Unmapped("global batch not stated (gradient accumulation and the pipeline bubble unknown)")
    if micro is None and pp > 1:
        micro = 1.0
        notes.append("micro-batch not stated: 1 with pipeline parallelism (Megatron-LM's default)")
    zero, zero_note = _zero(run)
    notes.append(zero_note)
    recompute = _recompute(run["activation_checkpointing"])
    if not run["activation_checkpointing"]:
        notes.append("recomputation not stated: none assumed")
    if micro is None:
        notes.append("micro-batch not stated: the largest that fits")
    model, how = _model(run, seq, configs)
    notes.append(f"model {how}")
    shape = tuple(int(run.number(k)) for k in ("n_layers", "hidden_size", "n_heads")) if model.endswith(".json") else None
    if ep > 1:
        notes.append(f"EP {ep} from the source's notes")
    if interleave > 1:
        notes.append(f"virtual pipeline {interleave} from the source's notes")
    if cp > 1:
        notes.append(f"context parallelism {cp} from the source's notes")
    source = run["source"].split(",")[0]
    attention = "standard" if source.startswith(STANDARD_ATTENTION_SOURCES) else "flash"
    if attention == "standard":
        notes.append("standard attention (s x s scores kept): Megatron-LM before FlashAttention")
    request = TimeRequest(model=model_source(model), seq_len=seq, tokens=global_batch * seq, batch_size=global_batch * seq,
                          micro_batch=micro, device=device, count=count, tp=tp, pp=pp, zero=zero, recompute=recompute,
                          precision=precision, optimizer="adamw", ep=ep if ep > 1 else None,
                          interleave=interleave if pp > 1 else 1, cp=cp if cp > 1 else None, attention=attention)
    return Mapped(label=run.label, source=source, model=run["model"], shape=shape, request=request,
                  measured=0.0, basis="", notes=notes, fit=run["source"] in FIT_SOURCES,
                  family=run_family(model, precision, device), release=release_of(notes_text),
                  layout_stated=layout_stated)


def prepare(runs: list[Run], catalog, configs: Path) -> tuple[list[tuple[Mapped, object, object]], list[dict]]:
    """Mapped runs with their job and device, and the unmapped ones with the reason."""
    mapped, unmapped = [], []
    for run in runs:
        try:
            m = map_run(run, catalog, configs)
            job = resolve_job(m.request)
            device = catalog.find(m.request.device)
            arch = job.arch
            per_token = 3 * job.layers.total_forward_flops / job.tokens_per_sample
            from sizer.formulas.peaks import device_peak

            peak = float(device_peak(device, m.request.precision)[0].to("FLOP/s").magnitude)
            narayanan = narayanan_flops_per_token(arch.layers, arch.hidden, int(job.tokens_per_sample), arch.vocab)
            m.measured, m.basis = measured_tokens_per_gpu(run, m.request.seq_len, m.request.count,
                                                          job.batch_size, per_token, narayanan, peak)
            mapped.append((m, job, device))
        except (Unmapped, ValueError) as error:
            unmapped.append({"run": run.label, "reason": str(error).splitlines()[0][:200]})
    return mapped, unmapped


def predict(mapped, efficiency: Efficiencies) -> list[dict]:
    """Predicted against measured step time for every mapped run."""
    from sizer.training.time_answer import estimate_training

    out = []
    for m, job, device in mapped:
        if not m.layout_stated:
            continue  # no published layout to predict with: scored by predict_without_layout only
        r = m.request
        result = estimate_training(job, device, r.count, zero=r.zero, tp=r.tp, pp=r.pp, ep=r.ep, cp=r.cp or 1,
                                   interleave=r.interleave, recompute=recompute_index(r.recompute),
                                   efficiency=efficiency)
        tokens = result.batch_size * job.tokens_per_sample
        predicted = tokens / result.step_time.expected / r.count
        out.append({"run": m.label, "source": m.source, "fit": m.fit, "device": r.device, "family": m.family,
                    "release": m.release,
                    "ep": r.ep or 1, "interleave": r.interleave, "cp": r.cp or 1,
                    "model": m.model, "count": r.count, "tp": r.tp, "pp": r.pp, "zero": r.zero,
                    "recompute": r.recompute, "micro_batch": result.layout.micro_batch, "precision": r.precision,
                    "measured_tokens_per_gpu": m.measured, "measured_basis": m.basis,
                    "predicted_tokens_per_gpu": predicted, "mfu_predicted": result.mfu,
                    # predicted / measured step time - 1 (positive: predicted too slow)
                    "time_error": m.measured / predicted - 1, "fits_memory": result.fits, "notes": m.notes})
    return out


def predict_without_layout(mapped, efficiency: Efficiencies, with_layout: list[dict]) -> list[dict]:
    """The same runs given only model, tokens, device, count, global batch and sequence length: the
    layout search chooses tensor/pipeline/context parallelism, ZeRO, recomputation and micro-batch.

    Per run: the searched prediction against the measurement, the searched layout's step against
    the published layout's (both predicted: > 1 means the search chose a slower layout), and the
    searched MFU against the published run's (measured) MFU."""
    from sizer.errors import InputError
    from sizer.training.time_answer import estimate_training

    by_run = {r["run"]: r for r in with_layout}
    out = []
    for m, job, device in mapped:
        r = m.request
        bare = replace(job, micro_batch=None)
        given = by_run.get(m.label)  # None: the source states no layout
        row = {"run": m.label, "source": m.source, "fit": m.fit, "device": r.device, "model": m.model,
               "count": r.count, "measured_tokens_per_gpu": m.measured}
        try:
            result = estimate_training(bare, device, r.count, efficiency=efficiency)
        except InputError as error:
            out.append({**row, "refused": str(error)[:200]})
            continue
        predicted = result.batch_size * job.tokens_per_sample / result.step_time.expected / r.count
        # the best layout's own throughput, the upper bound beside the achieved headline (sizer.engine.achieved)
        bound_step = result.best_layout.step_time.expected if result.best_layout else result.step_time.expected
        layout = result.layout
        row.update({"refused": None, "predicted_tokens_per_gpu": predicted, "time_error": m.measured / predicted - 1,
                    "bound_tokens_per_gpu": result.batch_size * job.tokens_per_sample / bound_step / r.count,
                    "mfu_searched": result.mfu,
                    "layout": f"tp {layout.tp} pp {layout.pp} cp {layout.cp} dp {layout.dp} zero {layout.zero} "
                              f"{layout.recompute} v{layout.interleave} mb {layout.micro_batch}x{layout.accumulation}",
                    "searched_over_published_step": None, "published_fits": False, "mfu_published": None,
                    "published_layout": "not stated"})
        if given is not None:
            published_step = job.batch_size * job.tokens_per_sample / given["predicted_tokens_per_gpu"] / r.count
            # the published run's MFU: its measured throughput at the with-layout prediction's FLOP per token
            row.update({"searched_over_published_step": result.step_time.expected / published_step,
                        "published_fits": given["fits_memory"] and _in_search_space(job, r.tp, r.pp),
                        "mfu_published": given["mfu_predicted"] * m.measured / given["predicted_tokens_per_gpu"],
                        "published_layout": f"tp {given['tp']} pp {given['pp']} zero {given['zero']} "
                                            f"{given['recompute']} mb {given['micro_batch']}"})
        out.append(row)
    return out


def _in_search_space(job, tp: int, pp: int) -> bool:
    """Whether the search could have chosen this split (tensor sizes the heads allow, stages dividing
    the blocks in powers of two): Korthikanti's 35 stages of 3 blocks, for one, are not."""
    from sizer.engine.search import POWERS, tensor_sizes

    return tp in tensor_sizes(job) and pp in POWERS and job.shape.blocks % pp == 0


def summarize_without_layout(rows: list[dict]) -> dict:
    """Median/p90 of the searched predictions' errors, runs refused, the worst searched/published step
    (where the published layout fits, so that it is in the search space) and the MFU gap."""
    scored = [r for r in rows if not r["refused"]]
    base = summarize(scored)
    comparable = [r["searched_over_published_step"] for r in scored if r["published_fits"]]
    gaps = [abs(r["mfu_searched"] - r["mfu_published"]) for r in scored if r["mfu_published"] is not None]
    return {**base, "refused": len(rows) - len(scored),
            "worst_searched_over_published_step": max(comparable) if comparable else None,
            "median_mfu_gap": statistics.median(gaps) if gaps else None}


def gpt_config(configs: Path, layers: int, hidden: int, heads: int, seq_len: int) -> str:
    """A GPT-2-type config.json for a GPT-3-style model given by its shape (Megatron's GPT runs)."""
    path = configs / f"gpt-{layers}-{hidden}-{heads}-{seq_len}.json"
    path.write_text(json.dumps({"model_type": "gpt2", "n_layer": layers, "n_embd": hidden, "n_head": heads,
                                "vocab_size": GPT_VOCAB, "n_positions": seq_len}), encoding="utf-8")
    return str(path)


def write_committed(mapped) -> None:
    """The mapped runs, one line each, with their measured throughput (the regression test's data)."""
    tmp = COMMITTED_RUNS.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RUNS_FIELDS)
        writer.writeheader()
        for m, _, _ in mapped:
            r = m.request
            layers, hidden, heads = m.shape or ("", "", "")
            writer.writerow({"label": m.label, "source": m.source, "fit": int(m.fit),
                             "model": m.model if m.shape else r.model, "layers": layers, "hidden": hidden, "heads": heads,
                             "seq_len": r.seq_len, "global_batch": r.batch_size / r.seq_len,
                             "micro_batch": "" if r.micro_batch is None else r.micro_batch, "device": r.device,
                             "count": r.count, "tp": r.tp, "pp": r.pp, "zero": r.zero, "recompute": r.recompute,
                             "precision": r.precision, "measured_tokens_per_gpu": f"{m.measured:.6g}", "basis": m.basis,
                             "ep": r.ep or 1, "interleave": r.interleave, "family": m.family, "release": m.release,
                             "cp": r.cp or 1, "attention": r.attention, "layout_stated": int(m.layout_stated)})
    tmp.replace(COMMITTED_RUNS)


def load_committed(catalog, configs: Path, path: Path = COMMITTED_RUNS, *, held_out_only: bool = False):
    """The committed runs as (Mapped, job, device), ready for :func:`predict`."""
    out = []
    for row in csv.DictReader(path.open(encoding="utf-8")):
        fit_part = row["fit"] == "1"
        if held_out_only and fit_part:
            continue
        seq = int(row["seq_len"])
        shape = tuple(int(row[k]) for k in ("layers", "hidden", "heads")) if row["layers"] else None
        model = gpt_config(configs, *shape, seq) if shape else row["model"]
        batch = float(row["global_batch"])
        request = TimeRequest(model=model_source(model), seq_len=seq, tokens=batch * seq, batch_size=batch * seq,
                              micro_batch=float(row["micro_batch"]) if row["micro_batch"] else None,
                              device=row["device"], count=int(row["count"]), tp=int(row["tp"]), pp=int(row["pp"]),
                              zero=int(row["zero"]), recompute=row["recompute"], precision=row["precision"],
                              optimizer="adamw", ep=int(row.get("ep") or 1) if int(row.get("ep") or 1) > 1 else None,
                              interleave=int(row.get("interleave") or 1),
                              cp=int(row.get("cp") or 1) if int(row.get("cp") or 1) > 1 else None,
                              attention=row.get("attention") or "flash")
        m = Mapped(label=row["label"], source=row["source"], model=row["model"], shape=shape, request=request,
                   measured=float(row["measured_tokens_per_gpu"]), basis=row["basis"], notes=[], fit=fit_part,
                   family=row.get("family") or "dense", release=row.get("release") or "",
                   layout_stated=row.get("layout_stated", "1") != "0")
        out.append((m, resolve_job(request), catalog.find(request.device)))
    return out


def summarize(rows: list[dict], spread: tuple[float, float] | None = None) -> dict:
    """Median and p90 |time error| and, with range factors, how often the range covers the measurement."""
    if not rows:
        return {"n": 0}
    errors = [abs(r["time_error"]) for r in rows]
    ratios = [1 / (1 + r["time_error"]) for r in rows]  # measured / predicted step time
    out = {"n": len(rows), "median_abs_error": statistics.median(errors), "p90_abs_error": quantile(errors, 0.9),
           "median_ratio_measured_over_predicted": statistics.median(ratios),
           "too_fast": sum(r > 1 for r in ratios)}
    if spread is not None:
        out["range_coverage"] = sum(spread[0] <= r <= spread[1] for r in ratios) / len(ratios)
    return out


def fit(mapped, base: Efficiencies) -> Efficiencies:
    """Grid search of the matrix efficiency ceiling and its half-size on the fit runs, minimising the
    median |log(measured / predicted)|."""
    train = [x for x in mapped if x[0].fit]
    best, best_score = base, float("inf")
    for matrix in (0.55, 0.6, 0.65, 0.7, 0.75, 0.8):
        for half in (0.0, 1e9, 2e9, 4e9, 8e9, 16e9, 32e9):
            candidate = replace(base, matrix=matrix, matrix_half=half)
            rows = predict(train, candidate)
            score = statistics.median(abs(math.log(1 + r["time_error"])) for r in rows)
            print(f"matrix {matrix} half {half:.3g}: median |log error| {score:.3f}", flush=True)
            if score < best_score:
                best, best_score = candidate, score
    return best


def fit_fp8(mapped, efficiency: Efficiencies) -> float:
    """The FP8 scaling overhead that minimises the median |log(measured / predicted)| on the FP8 runs
    of :data:`FP8_FIT_SOURCES` (and on nothing else)."""
    from sizer.engine import constants, devices

    train = [x for x in mapped if x[0].source in FP8_FIT_SOURCES and x[0].request.precision == "fp8"]
    best, best_score = constants.FP8_SCALING_OVERHEAD, float("inf")
    for overhead in FP8_OVERHEADS:
        constants.FP8_SCALING_OVERHEAD = overhead
        devices.cached_device_table.cache_clear()  # tables keyed by device content, not by this constant
        score = statistics.median(abs(math.log(1 + r["time_error"])) for r in predict(train, efficiency))
        print(f"FP8 scaling overhead {overhead:.2f}: median |log error| {score:.3f} on {len(train)} runs", flush=True)
        if score < best_score:
            best, best_score = overhead, score
    constants.FP8_SCALING_OVERHEAD = best
    devices.cached_device_table.cache_clear()
    return best


def family_summaries(rows: list[dict], spread) -> dict:
    """Per family (:data:`FAMILIES`): the held-out runs' figures, all and by source. FP8 runs of the
    sources the FP8 overhead was fitted on count as fitted, not held out."""
    out = {}
    for family in FAMILIES:
        held = [r for r in rows if r["family"] == family and not r["fit"]
                and not (family == "fp8" and r["source"] in FP8_FIT_SOURCES)]
        if family == "fp8":  # MosaicML's FP8 runs are held out from the FP8 overhead's fit, not from the efficiencies'
            held += [r for r in rows if r["family"] == family and r["fit"]]
        out[family] = {"held_out": summarize(held, spread),
                       "by_source": {s: summarize([r for r in held if r["source"] == s], spread)
                                     for s in sorted({r["source"] for r in held})},
                       "by_device": {d: summarize([r for r in held if r["device"] == d], spread)
                                     for d in sorted({r["device"] for r in held})}}
    return out


def evaluate_split(mapped, efficiency: Efficiencies) -> dict:
    rows = predict(mapped, efficiency)
    fit_rows = [r for r in rows if r["fit"]]
    held = [r for r in rows if not r["fit"]]
    ratios = [1 / (1 + r["time_error"]) for r in fit_rows]
    spread = (quantile(ratios, 0.1), quantile(ratios, 0.9)) if ratios else None
    by_source = {}
    for source in sorted({r["source"] for r in held}):
        by_source[source] = summarize([r for r in held if r["source"] == source], spread)
    searched = predict_without_layout([x for x in mapped if x[0].family in ("dense", "fp8")], efficiency, rows)  # dense models
    searched_held = [r for r in searched if not r["fit"]]
    no_layout = {"fit": summarize_without_layout([r for r in searched if r["fit"]]),
                 "held_out": summarize_without_layout(searched_held),
                 "held_out_by_source": {source: summarize_without_layout([r for r in searched_held if r["source"] == source])
                                        for source in sorted({r["source"] for r in searched_held})},
                 "rows": searched}
    return {"fit": summarize(fit_rows, spread), "held_out": summarize(held, spread), "held_out_by_source": by_source,
            "families": family_summaries(rows, spread), "range_factors_from_fit": spread, "rows": rows,
            "no_layout": no_layout}


def run_benchmark(path: Path, efficiency: Efficiencies | None = None) -> dict:
    catalog = load_catalog()
    with tempfile.TemporaryDirectory(prefix="sizer-llm-") as configs:
        mapped, unmapped = prepare(load_runs(path), catalog, Path(configs))
        write_committed(mapped)
        efficiency = efficiency or TRANSFORMER_GPU_EFFICIENCIES
        result = evaluate_split(mapped, efficiency)
    result["unmapped"] = unmapped
    result["efficiencies"] = efficiency.as_dict()
    return result


def write(result: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    text = json.dumps(result, indent=1, default=str)
    tmp = RESULTS / "llm_training.json.tmp"
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(RESULTS / "llm_training.json")
    pct = lambda v: f"{v:.1%}" if isinstance(v, float) else "-"  # noqa: E731
    lines = ["# Language-model training: predicted vs measured step time", "",
             f"Fit part: {', '.join(FIT_SOURCES)}; held out: every other source. "
             f"Range factors (10th-90th percentile of measured/predicted on the fit part): "
             f"{', '.join(f'{v:.3g}' for v in result['range_factors_from_fit'] or ())}.", "",
             "| part | n | median abs time error | p90 | range coverage | too fast |", "|---|---|---|---|---|---|"]
    parts = [("held out (all)", result["held_out"]), ("fit (in sample)", result["fit"]),
             *((f"held out: {k}", v) for k, v in result["held_out_by_source"].items())]
    for family, summary in result["families"].items():
        parts.append((f"**{family}**, held out", summary["held_out"]))
        parts += [(f"{family}: {k}", v) for k, v in {**summary["by_source"], **summary["by_device"]}.items()]
    for name, s in parts:
        lines.append(f"| {name} | {s['n']} | {pct(s.get('median_abs_error'))} | {pct(s.get('p90_abs_error'))} | "
                     f"{pct(s.get('range_coverage'))} | {s.get('too_fast', '-')} |")
    lines += ["", "## Held-out runs", "", "| run | family | EP / VP | release | measured tok/s/GPU | predicted | time error | basis |",
              "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        if not r["fit"]:
            lines.append(f"| {r['run']} | {r['family']} | {r['ep']} / {r['interleave']} | {r['release'] or '-'} | "
                         f"{r['measured_tokens_per_gpu']:.4g} | {r['predicted_tokens_per_gpu']:.4g} | "
                         f"{r['time_error']:+.1%} | {r['measured_basis']} |")
    lines += no_layout_lines(result["no_layout"])
    lines += ["", f"## Runs not mapped ({len(result['unmapped'])})", "", "| run | reason |", "|---|---|"]
    lines += [f"| {u['run']} | {u['reason']} |" for u in result["unmapped"]]
    tmp = RESULTS / "llm_training.md.tmp"
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(RESULTS / "llm_training.md")
    print("\n".join(lines[:6 + len(parts)]))


def no_layout_lines(no_layout: dict) -> list[str]:
    """The "no layout given" table: the search's predictions against the measurements."""
    pct = lambda v: f"{v:.1%}" if isinstance(v, float) else "-"  # noqa: E731
    lines = ["", "## No layout given: the layout search's choice", "",
             "Only model, tokens, device, count, global batch and sequence length are given; the search chooses the "
             "rest. `searched/published` is the searched layout's predicted step over the published layout's "
             "(where the published layout fits and is in the search space).", "",
             "| part | n | median abs time error | p90 | refused | worst searched/published step | median MFU gap |",
             "|---|---|---|---|---|---|---|"]
    parts = [("held out (all)", no_layout["held_out"]), ("fit (in sample)", no_layout["fit"]),
             *((f"held out: {k}", v) for k, v in no_layout["held_out_by_source"].items())]
    for name, s in parts:
        worst = s.get("worst_searched_over_published_step")
        gap = s.get("median_mfu_gap")
        lines.append(f"| {name} | {s['n']} | {pct(s.get('median_abs_error'))} | {pct(s.get('p90_abs_error'))} | "
                     f"{s.get('refused', '-')} | {'-' if worst is None else f'{worst:.3f}'} | "
                     f"{'-' if gap is None else f'{gap:.3f}'} |")
    lines += ["", "| run | searched layout | published layout | time error | searched/published | MFU searched / published |",
              "|---|---|---|---|---|---|"]
    for r in no_layout["rows"]:
        if r["fit"]:
            continue
        if r["refused"]:
            lines.append(f"| {r['run']} | refused: {r['refused']} | | | | |")
            continue
        ratio, mfu = r["searched_over_published_step"], r["mfu_published"]
        lines.append(f"| {r['run']} | {r['layout']} | {r['published_layout']} | {r['time_error']:+.1%} | "
                     f"{'-' if ratio is None else f'{ratio:.3f}'} | {r['mfu_searched']:.2f} / "
                     f"{'-' if mfu is None else f'{mfu:.2f}'} |")
    return lines


SPREAD_KIND = "transformer-gpu"  # the workload/device kind the held-out runs cover


def write_spread(result: dict) -> None:
    """The held-out runs' 10th-90th percentile of measured/predicted step time, as the datasheet range
    of generated transformers on GPUs (sizer/engine/error_spread.yaml, ``by_workload``)."""
    import yaml

    ratios = [1 / (1 + r["time_error"]) for r in result["rows"] if not r["fit"]]
    low, high = quantile(ratios, 0.1), quantile(ratios, 0.9)
    path = HERE.parent / "sizer" / "engine" / "error_spread.yaml"
    data = load_yaml(path, "error_spread")
    data["modes"]["datasheet"].setdefault("by_workload", {})[SPREAD_KIND] = {
        "low": round(low, 3), "high": round(high, 3),
        "source": f"10th-90th percentile of measured/predicted step time on the held-out LLM runs (not fitted on), "
                  f"n = {len(ratios)} (benchmarks/llm_training.py)"}
    header = ("# Factors of the expected step time that bound a prediction's low-high range, per mode; `by_workload`:\n"
              "# per kind of workload and device. Written by benchmarks/accuracy.py and benchmarks/llm_training.py\n"
              "# from the observed errors; do not edit by hand.\n")
    write_text(path, header + yaml.safe_dump(data, sort_keys=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--write-spread", action="store_true", help="held-out range factors -> error_spread.yaml")
    parser.add_argument("--fit-fp8", action="store_true", help="refit the FP8 scaling overhead on FP8_FIT_SOURCES")
    args = parser.parse_args()
    efficiency = TRANSFORMER_GPU_EFFICIENCIES
    if args.fit:
        catalog = load_catalog()
        with tempfile.TemporaryDirectory(prefix="sizer-llm-") as configs:
            mapped, _ = prepare(load_runs(args.data), catalog, Path(configs))
            efficiency = fit(mapped, TRANSFORMER_GPU_EFFICIENCIES)
        print("fitted:", efficiency.as_dict())
    if args.fit_fp8:
        catalog = load_catalog()
        with tempfile.TemporaryDirectory(prefix="sizer-llm-") as configs:
            mapped, _ = prepare(load_runs(args.data), catalog, Path(configs))
            print("fitted FP8 scaling overhead:", fit_fp8(mapped, efficiency))
    result = run_benchmark(args.data, efficiency)
    write(result)
    if args.write_spread:
        write_spread(result)


if __name__ == "__main__":
    main()
