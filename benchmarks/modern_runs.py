"""Accuracy on the 2024-2026 training runs of ``../shared/data/modern-training-runs.csv``, judged by source.

    python benchmarks/modern_runs.py

Each configuration (the rows of one run share every column but ``metric``, ``value``, ``unit``) is mapped to a
:class:`sizer.facade.TimeRequest` (model by catalog name, device by catalog name, global batch in sequences, sequence
length, precision, LoRA where the benchmark is ``llama2_70b_lora``) and its step time predicted twice: with the run's
own layout where the source states one (tp, pp, cp, vp -> interleave, micro-batch; NeMo's distributed optimizer is
ZeRO-1, MaxText's FSDP ZeRO-3), and with no layout (the search chooses, then the achieved-efficiency factor of
:mod:`sizer.engine.achieved` makes it the time a competent team achieves). The error is measured / predicted
throughput - 1 (positive: predicted too slow).

The unit of the split is the *source*: a submitter's MLPerf results (``source_ref``'s folder) or one tpu-recipes
README family; the achieved factors are refitted with every source but one (:func:`sizer.engine.achieved.fit`) and
that one is scored (leave-one-source-out). Runs that cannot be mapped are listed with the reason.
Results: ``benchmarks/results/modern_runs.{json,md}`` and ``benchmarks/modern_runs.csv`` (the scored runs, for
tests/benchmarks/test_modern_runs.py). The runs of ``benchmarks/llm_training_runs.csv`` asked with no layout join the
achieved fit as further sources.
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from machine import quantile  # noqa: E402

from sizer.datafile import write_text  # noqa: E402
from sizer.engine import achieved  # noqa: E402
from sizer.errors import InputError  # noqa: E402
from sizer.facade import TimeRequest, estimate_time  # noqa: E402

DATA = next((p for p in (HERE.parent.parent / "shared" / "data" / "modern-training-runs.csv",
                         Path("/work/shared/data/modern-training-runs.csv")) if p.exists()),
            HERE.parent.parent / "shared" / "data" / "modern-training-runs.csv")
RESULTS = HERE / "results"
COMMITTED = HERE / "modern_runs.csv"
KEY = ("source", "model", "seq_len", "global_batch", "global_batch_tokens", "micro_batch", "device", "n_devices", "tp",
       "pp", "dp", "cp", "ep", "etp", "vp", "fsdp", "recompute", "precision", "framework")
DEVICES = {"NVIDIA Blackwell GPU (GB200)": "gb200-per-gpu", "NVIDIA Blackwell GPU (B200-SXM-180GB)": "b200",
           "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)": "b300", "NVIDIA Blackwell Ultra GPU (GB300)": "gb300-per-gpu",
           "NVIDIA H100-SXM5-80GB": "H100 SXM", "NVIDIA H200-SXM5-141GB": "H200", "NVIDIA H200-NVL-141GB": "h200-nvl",
           "AMD Instinct MI350X": "mi350x", "AMD Instinct MI355X": "mi355x", "TPU v6e (Trillium)": "tpu-v6e"}
MODELS = {"Llama 3.1 405B": "llama-3.1-405b", "Llama 3.1 8B": "llama-3.1-8b", "Llama 3.1 70B": "llama-3.1-70b",
          "Llama 2 70B": "llama-2-70b", "Llama 2 70B LoRA fine-tuning (GovReport)": "llama-2-70b",
          "Mistral 7B": "mistral-7b", "Mixtral 8x7B": "mixtral-8x7b", "Mixtral 8x22B": "mixtral-8x22b",
          "GPT-3 175B (MaxText gpt3-175b)": "gpt3-175b"}
# MLPerf's reference LoRA (mlcommons/training llama2_70b_lora): rank 16 on the attention projections (recalled from the
# benchmark's README, not in the data file: verified false)
LORA_RANK = 16


def source_unit(row: dict[str, str]) -> str:
    """The unit of the leave-one-source-out split: an MLPerf submitter within its round and benchmark (the folder of
    ``source_ref``), or the tpu-recipes family (one README set by one team)."""
    ref = row["source_ref"]
    if "training_results" in ref:
        submitter = ref.split(":", 1)[1].split("/")[0]
        return f"{row['source'].split(' closed')[0]} {row['source'].split('division, ')[1].split(' results')[0]}: {submitter}"
    return row["source"].split(" (")[0]


def load(path: Path = DATA) -> list[dict]:
    """One dict per configuration: its columns and its metrics by name."""
    runs: dict[tuple[str, ...], dict] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            key = (*(row[k] for k in KEY), row["source_ref"])
            run = runs.setdefault(key, {**row, "metrics": {}, "unit_of_split": source_unit(row)})
            run["metrics"].setdefault(row["metric"], float(row["value"]))
    return list(runs.values())


def _int(text: str) -> int | None:
    try:
        return int(float(text))
    except ValueError:
        return None


def _precision(run: dict) -> str:
    text = run["precision"].lower()
    if "fp4" in text:
        return "fp4"
    if "fp8" in text:
        return "fp8"
    if "bf16" in text:
        return "bf16"
    # MLPerf rows the file could not tie to a precision: NVIDIA's and AMD's llama31_8b / llama2_70b_lora
    # implementations train in FP8 (their README configs; recalled, verified false)
    return "fp8" if "MLPerf" in run["source"] else "bf16"


def request(run: dict, layout: bool) -> TimeRequest:
    """The run as a question: with its layout (``layout``) or without (the search chooses)."""
    model = MODELS.get(run["model"])
    device = DEVICES.get(run["device"])
    seq, batch = _int(run["seq_len"]), _int(run["global_batch"])
    if model is None or device is None:
        raise InputError("model" if model is None else "device", run["model"] if model is None else run["device"],
                         "a catalog model and device")
    if seq is None or batch is None:
        raise InputError("seq_len", run["seq_len"], "a stated sequence length and global batch")
    fields: dict = {"model": model, "device": device, "count": int(run["n_devices"]), "seq_len": seq,
                    "batch_size": f"{batch} sequences", "tokens": 1e9, "precision": _precision(run), "interruptions": False,
                    # every source here overlaps the gradient reduction with the backward pass: NeMo/Megatron-Core's
                    # overlap_grad_reduce, XLA's async collectives in MaxText, the MLPerf reference implementations
                    "overlap_allreduce": True}
    if "LoRA" in run["model"]:
        fields.update(method="lora", lora_rank=LORA_RANK)
    if layout:
        tp, pp, cp, vp, mb = (_int(run[k]) for k in ("tp", "pp", "cp", "vp", "micro_batch"))
        if "FSDP" in run["fsdp"]:
            fields.update(zero=3, tp=1, pp=1, cp=1)
        elif tp is None and pp is None:
            raise InputError("tp", "", "a stated layout")
        else:
            fields.update(tp=tp or 1, pp=pp or 1, cp=cp or 1, zero=1 if "LoRA" not in run["model"] else None)
            if vp and (pp or 1) > 1:
                fields["interleave"] = vp
        replicas = int(run["n_devices"]) // ((fields.get("tp") or 1) * (fields.get("pp") or 1) * (fields.get("cp") or 1))
        if mb and batch % (replicas * mb) == 0:  # a micro-batch the file states that does not split the batch: not kept
            fields["micro_batch"] = mb
        if run["recompute"] == "full":
            fields["recompute"] = "full"
    return TimeRequest(**{k: v for k, v in fields.items() if v is not None})


def measured_step(run: dict) -> float | None:
    """The measured step time [s]."""
    return run["metrics"].get("step_time")


def predict(runs: list[dict]) -> list[dict]:
    """Per run: the predicted step with the run's layout (where stated) and with none (the searched best, the
    bound), or the reason it was not mapped."""
    out = []
    for run in runs:
        row = {"source": run["unit_of_split"], "model": run["model"], "device": run["device"],
               "count": int(run["n_devices"]), "precision": _precision(run), "measured_step": measured_step(run),
               "family": achieved.family_of_name(DEVICES.get(run["device"], "")), "with_layout": None,
               "bound": None, "refused": None, "unmapped": None}
        for layout in (True, False):
            try:
                answer = estimate_time(request(run, layout))
            except InputError as error:
                text = str(error)
                if "a stated layout" in text:
                    continue
                if "a catalog model" in text or "a stated sequence" in text:
                    row["unmapped"] = text
                    break
                row["refused" if not layout else "refused_with_layout"] = text[:200]
                continue
            tokens = answer.batch_size * (_int(run["seq_len"]) or 0)
            # no layout: the best layout's own step (the bound the achieved factors are fitted and applied to)
            own = answer.best_layout.step_time if answer.best_layout is not None else answer.step_time
            step = own.expected * float(run["global_batch"]) / answer.batch_size  # the asked batch
            row["with_layout" if layout else "bound"] = step
            row["tokens_per_step"] = tokens
        out.append(row)
    return out


def errors(rows: list[dict], key: str, factors: dict[str, float] | None = None) -> list[dict]:
    """measured / predicted throughput - 1 per run with a measurement, the prediction scaled by the family's
    achieved factor where ``factors`` are given."""
    out = []
    for r in rows:
        if r.get(key) is None or not r["measured_step"]:
            continue
        predicted = r[key] / (factors.get(r["family"], 1.0) if factors is not None else 1.0)
        out.append({**r, "error": predicted / r["measured_step"] - 1.0})
    return out


def summary(errs: list[dict]) -> dict:
    values = [e["error"] for e in errs]
    if not values:
        return {"n": 0}
    absolute = [abs(v) for v in values]
    return {"n": len(values), "median_abs": statistics.median(absolute), "p90_abs": quantile(absolute, 0.9),
            "signed_median": statistics.median(values), "sources": len({e["source"] for e in errs})}


def leave_one_source_out(rows: list[dict]) -> list[dict]:
    """Each source scored with the achieved factors fitted on every other source's runs."""
    sources = sorted({r["source"] for r in rows if r.get("bound") and r["measured_step"]})
    scored = []
    for held in sources:
        fit_rows = [r for r in rows if r["source"] != held and r.get("bound") and r["measured_step"]]
        factors, _ = achieved.fit([(r["family"], r["source"], r["measured_step"], r["bound"]) for r in fit_rows])
        # at most 1, as the product applies it (sizer.engine.achieved.achieved_factor: the bound is never beaten)
        scored += errors([r for r in rows if r["source"] == held], "bound", {f: min(1.0, v[0]) for f, v in factors.items()})
    return scored


def older_rows() -> list[dict]:
    """The runs of ``benchmarks/llm_training_runs.csv`` (Narayanan 2021, Korthikanti 2022, Megatron-LM, NeMo,
    Megatron-Bridge, MosaicML) asked with no layout, as rows of :func:`predict` (steps per token: the ratio is
    what the fit and the score use)."""
    import tempfile

    import llm_training

    from sizer.hardware.catalog import load_catalog

    with tempfile.TemporaryDirectory(prefix="sizer-modern-") as configs:
        mapped = llm_training.load_committed(load_catalog(), Path(configs))
        searched = llm_training.predict_without_layout(mapped, None, [])
    out = []
    for r in searched:
        row = {"source": r["source"], "model": r["model"], "device": r["device"], "count": r["count"],
               "precision": "", "measured_step": 1.0 / r["measured_tokens_per_gpu"], "with_layout": None,
               "family": achieved.family_of_name(r["device"]), "bound": None, "refused": r.get("refused"),
               "unmapped": None, "older": True}
        if not r.get("refused"):
            row["bound"] = 1.0 / r["bound_tokens_per_gpu"]
        out.append(row)
    return out


# Runs that publish a wall-clock duration (../shared/data/reliability-and-goodput.csv, benchmarks/frontier_runs.csv):
# (label, request, published days, source). INTELLECT-1 (42 days on "up to 112" H100 joining and leaving) is left
# out: its device count varied and no mean is published.
WALL_CLOCK_RUNS = (
    ("Llama 3.1 405B on 16,384 H100", dict(model="llama-3.1-405b", tokens=15.6e12, device="H100 SXM", count=16384,
                                           seq_len=8192, batch_size="2048 sequences", precision="bf16"),
     30.84e6 / 16384 / 24, "Llama 3.1 model card: 30.84M H100 GPU-hours (benchmarks/frontier_runs.csv)"),
    ("OPT-175B on 992 A100 80GB", dict(model="opt-175b", tokens=180e9, device="A100 80GB SXM", count=992, seq_len=2048,
                                       batch_size="2M tokens"),
     61.0, "SuperBench (Xiong et al.): 'a two-month distributed training for the OPT model'; 180B-token corpus "
           "(OPT-175B chronicles rows)"),
    ("Olmo Hybrid 7B (dense 7B proxy) on 512 B200", dict(params=7e9, tokens=3e12, device="b200", count=512,
                                                         precision="bf16"),
     6.19, "Lambda + Ai2 blog: the final 3T tokens in 6.19 days on 512 B200 (a hybrid linear-RNN model, run as a "
           "dense 7B: sizer has no Gated DeltaNet)"),
)


def wall_clock() -> list[dict]:
    """Each run with a published duration: the expected wall-clock with interruptions, before (Llama 3's rate, the
    best layout) and now (the achieved headline, the lived model), against the published days."""
    from sizer.engine import goodput
    from sizer.results import unit_factor

    out = []
    for label, question, days, source in WALL_CLOCK_RUNS:
        answer = estimate_time(TimeRequest(**question, interruptions=True))
        lived = answer.with_interruptions
        assert lived is not None and answer.training_time is not None
        bound = answer.best_layout.training_time if answer.best_layout and answer.best_layout.training_time \
            else answer.training_time
        before = goodput.interrupted_time(bound, answer.count, _state_bytes(answer))
        to_days = lambda r: r.expected * unit_factor(r.unit, "day")  # noqa: E731
        now = to_days(lived.training_time)
        out.append({"run": label, "published_days": days, "source": source,
                    "before_days": to_days(before.training_time), "now_days": now,
                    "now_low_days": lived.training_time.low * unit_factor(lived.training_time.unit, "day"),
                    "now_high_days": lived.training_time.high * unit_factor(lived.training_time.unit, "day"),
                    "goodput": lived.goodput, "interruptions": lived.interruptions,
                    "error_before": to_days(before.training_time) / days - 1, "error_now": now / days - 1})
    return out


def _state_bytes(answer) -> float:
    """Model states a checkpoint holds: the parameters trained times weights, FP32 master weights and Adam's two
    moments (2 + 4 + 8 bytes), as sizer.engine.goodput.checkpoint_bytes counts them for mixed precision."""
    return answer.trainable_params * 14.0


def run() -> dict:
    rows = predict(load()) + older_rows()
    with_layout = errors(rows, "with_layout")
    bound = errors(rows, "bound")
    shipped = errors(rows, "bound", {f: min(1.0, achieved.factor_of_family(f)) for f in achieved.FAMILIES})
    held = leave_one_source_out(rows)
    return {"runs": len(rows), "unmapped": [r for r in rows if r["unmapped"]],
            "refused": [r for r in rows if r.get("refused") or r.get("refused_with_layout")],
            "with_layout": summary(with_layout), "no_layout_bound": summary(bound),
            "no_layout_achieved_shipped": summary(shipped), "no_layout_achieved_loso": summary(held),
            "by_source_loso": {s: summary([e for e in held if e["source"] == s]) for s in sorted({e["source"] for e in held})},
            "by_source_with_layout": {s: summary([e for e in with_layout if e["source"] == s])
                                      for s in sorted({e["source"] for e in with_layout})},
            "by_family_loso": {f: summary([e for e in held if e["family"] == f]) for f in sorted({e["family"] for e in held})},
            "by_family_with_layout": {f: summary([e for e in with_layout if e["family"] == f])
                                      for f in sorted({e["family"] for e in with_layout})},
            "factors_all_sources": fitted_factors(rows),
            "wall_clock": wall_clock(),
            "rows": [{k: v for k, v in r.items()} for r in rows]}


def fitted_factors(rows: list[dict]) -> dict:
    """The achieved factors fitted on every source (what sizer/engine/achieved.py ships)."""
    factors, pooled = achieved.fit([(r["family"], r["source"], r["measured_step"], r["bound"]) for r in rows
                                    if r.get("bound") and r["measured_step"]])
    return {"families": {f: {"factor": round(v[0], 3), "sources": v[1]} for f, v in factors.items()},
            "pooled": round(pooled, 3)}


def _line(name: str, s: dict) -> str:
    if not s.get("n"):
        return f"| {name} | 0 | | | |"
    return (f"| {name} | {s['n']} | {s['median_abs']:.1%} | {s['p90_abs']:.1%} | {s['signed_median']:+.1%} |")


def write(result: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    write_text(RESULTS / "modern_runs.json", json.dumps(result, indent=1, default=str) + "\n")
    lines = ["# Modern training runs (../shared/data/modern-training-runs.csv), judged by source", "",
             f"{result['runs']} configurations; {len(result['unmapped'])} not mapped; "
             f"{len(result['refused'])} refused.", "",
             "| prediction | n | median abs | p90 abs | signed median |", "|---|---|---|---|---|",
             _line("with the run's layout", result["with_layout"]),
             _line("no layout, best layout found (the bound)", result["no_layout_bound"]),
             _line("no layout, achieved (shipped factors, in sample)", result["no_layout_achieved_shipped"]),
             _line("no layout, achieved (leave-one-source-out)", result["no_layout_achieved_loso"]), "",
             "## By source (no layout, achieved, leave-one-source-out)", "",
             "| source | n | median abs | p90 abs | signed median |", "|---|---|---|---|---|",
             *(_line(s, v) for s, v in result["by_source_loso"].items()), "",
             "## By device family", "", "| family (no layout, LOSO) | n | median abs | p90 abs | signed median |",
             "|---|---|---|---|---|", *(_line(s, v) for s, v in result["by_family_loso"].items()), "",
             "| family (with layout) | n | median abs | p90 abs | signed median |", "|---|---|---|---|---|",
             *(_line(s, v) for s, v in result["by_family_with_layout"].items()), "",
             "## Wall-clock with interruptions (runs that publish a duration)", "",
             "| run | published days | before | now (range) | error before | error now |", "|---|---|---|---|---|---|",
             *(f"| {w['run']} | {w['published_days']:.1f} | {w['before_days']:.1f} | {w['now_days']:.1f} "
               f"({w['now_low_days']:.1f}-{w['now_high_days']:.1f}) | {w['error_before']:+.0%} | {w['error_now']:+.0%} |"
               for w in result["wall_clock"]), "",
             "## Not mapped", "", *(f"- {r['model']} on {r['count']} {r['device']}: {r['unmapped']}" for r in result["unmapped"]),
             "", "## Refused", "", *(f"- {r['model']} on {r['count']} {r['device']}: {r.get('refused') or r.get('refused_with_layout')}"
                                      for r in result["refused"])]
    write_text(RESULTS / "modern_runs.md", "\n".join(lines) + "\n")


COMMITTED_FIELDS = ("source", "family", "model", "device", "count", "precision", "measured_step", "with_layout", "bound",
                    "older")


def write_committed(rows: list[dict]) -> None:
    """The scored runs, for tests/benchmarks/test_modern_runs.py (which refits and scores them without the engine)."""
    lines = [",".join(COMMITTED_FIELDS)]
    for r in rows:
        if not r.get("measured_step") or r.get("unmapped"):
            continue
        values = [r.get(k) for k in COMMITTED_FIELDS]
        lines.append(",".join("" if v is None else f'"{v}"' if isinstance(v, str) else f"{v:.10g}" if isinstance(v, float)
                              else str(int(v)) for v in values))
    write_text(COMMITTED, "\n".join(lines) + "\n")


def load_committed(path: Path = COMMITTED) -> list[dict]:
    """The committed runs, numbers as floats (None where empty)."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("measured_step", "with_layout", "bound"):
            r[k] = float(r[k]) if r[k] else None
        r["count"] = int(r["count"])
    return rows


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    result = run()
    write(result)
    write_committed(result["rows"])
    for key in ("with_layout", "no_layout_bound", "no_layout_achieved_shipped", "no_layout_achieved_loso"):
        print(key, result[key])


if __name__ == "__main__":
    main()
