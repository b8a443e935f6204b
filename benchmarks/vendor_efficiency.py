"""Training efficiency of non-NVIDIA software stacks (AMD ROCm, Intel Gaudi's SynapseAI, Google's XLA on
TPU), fitted on their own MLPerf Training results against NVIDIA's in the same round.

    python benchmarks/vendor_efficiency.py

For each MLPerf result of an AMD, Intel or Google system (``../shared/data/mlperf-training-amd-intel-tpu.csv``)
and NVIDIA's H100 (H200 in v5.0, where no H100 ran) in the same benchmark and round at the nearest count,
the measured per-device speed ratio ``(T_nv n_nv) / (T_x n_x)`` is compared with the ratio sizer predicts
for a proxy of the benchmark on both (``gpt3``: GPT-3 175B at 2,048 tokens, 1,536 sequences per step;
``llama2_70b_lora``: Llama 2 70B, LoRA, 8,192 tokens, 8 sequences per step; each with its layout
searched). The stack's factor on the tensor efficiency is the median of measured / predicted over its fit
rows; the other rows of the same stack are held out and scored. Split (fixed): AMD fitted on MI300X,
scored on MI325X; Intel fitted on ``llama2_70b_lora``, scored on ``gpt3``; Google fitted on TPU v5p,
scored on v5e and Trillium. Results: ``benchmarks/results/vendor_efficiency.{json,md}``; the factors go
into ``sizer/engine/constants.py`` (``SOFTWARE_STACK_FACTORS``) by hand, with this file named as source.
"""
from __future__ import annotations

import csv
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from sizer.datafile import write_text  # noqa: E402
from sizer.engine.constants import Efficiencies, default_efficiencies  # noqa: E402
from sizer.engine.job import resolve_job  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.schemas.base import WorkloadRequest  # noqa: E402
from sizer.training.time_answer import estimate_training  # noqa: E402

# shared/ beside the checkout (as developers and CI have it), else the workplace's copy
DATA = next((path for path in (HERE.parent.parent / "shared" / "data" / "mlperf-training-amd-intel-tpu.csv",
                               Path("/work/shared/data/mlperf-training-amd-intel-tpu.csv")) if path.exists()),
            HERE.parent.parent / "shared" / "data" / "mlperf-training-amd-intel-tpu.csv")
ACCELERATORS = {  # MLPerf's names -> catalog names
    "AMD Instinct MI300X 192GB HBM3": "MI300X", "AMD Instinct MI325X 256GB HBM3e": "MI325X",
    "AMD Instinct MI325X 256GB HBM3E DLC": "MI325X", "Intel Gaudi2": "Gaudi 2",
    "Intel(R) Gaudi(R) 2 AI Accelerator": "Gaudi 2", "TPU-v5e": "TPU v5e", "TPU-v5p": "TPU v5p",
    "TPU-trillium": "TPU v6e", "NVIDIA H100-SXM5-80GB": "H100 SXM", "NVIDIA H200-SXM5-141GB": "H200"}
PROXIES = {"gpt3": dict(model="gpt3-175b", seq_len=2048, batch_size=1536 * 2048, tokens=1536 * 2048 * 100),
           "llama2_70b_lora": dict(model="llama-2-70b", seq_len=8192, batch_size=8 * 8192, tokens=8 * 8192 * 100,
                                   method="lora")}
STACKS = {"AMD": "ROCm", "Intel": "SynapseAI (Gaudi)", "Google": "XLA on TPU"}
FIT = {"AMD": lambda row: row["accelerator"].startswith("AMD Instinct MI300X"),
       "Intel": lambda row: row["benchmark"] == "llama2_70b_lora",
       "Google": lambda row: row["accelerator"] == "TPU-v5p"}


def _per_device_speed(catalog, name: str, count: int, benchmark: str, efficiency: Efficiencies | None) -> float:
    """Predicted samples per second per device of the benchmark's proxy [1/s]."""
    device = catalog.find(name)
    job = resolve_job(WorkloadRequest(precision="bf16", optimizer="adamw", **PROXIES[benchmark]))
    # MLPerf's LoRA submissions are tuned stacks (fused kernels, as NVIDIA's NeMo runs them; recalled, not re-read):
    # timed with the pre-training constants, not those of eager fine-tuning frameworks (sizer.engine.eager)
    # the proxy's batch stands in for the benchmark's, not a user's: as a default, the nearest batch a count runs is taken
    job = replace(job, eager=False, batch_given=False)
    # the defaults the stack factors multiply (not the factored ones), so that the fit is reproducible
    base = efficiency if efficiency is not None else default_efficiencies(device.kind, True)
    result = estimate_training(job, device, count, efficiency=base)
    # the searched layout's own step: the stack factors compare devices at their best layouts, not at what runs of
    # their family achieve (sizer.engine.achieved, fitted after them)
    step = result.best_layout.step_time if result.best_layout is not None else result.step_time
    return result.batch_size / step.expected / count


def rows() -> list[dict]:
    """Every non-NVIDIA result with its NVIDIA reference and the measured / predicted speed ratio."""
    with DATA.open(newline="") as handle:
        data = [r for r in csv.DictReader(handle) if r["score_min"] and r["benchmark"] in PROXIES
                and r["accelerator"] in ACCELERATORS]
    catalog = load_catalog()
    out = []
    for row in data:
        vendor = catalog.find(ACCELERATORS[row["accelerator"]]).vendor
        if vendor not in STACKS:
            continue
        same = [r for r in data if r["benchmark"] == row["benchmark"] and r["version"] == row["version"]
                and ACCELERATORS[r["accelerator"]] in ("H100 SXM", "H200")]
        if not same:
            continue
        preferred = [r for r in same if ACCELERATORS[r["accelerator"]] == "H100 SXM"] or same
        count = int(row["accelerator_count"])
        ref = min(preferred, key=lambda r: (abs(int(r["accelerator_count"]) - count), float(r["score_min"])))
        measured = (float(ref["score_min"]) * int(ref["accelerator_count"])) / (float(row["score_min"]) * count)
        predicted = (_per_device_speed(catalog, ACCELERATORS[row["accelerator"]], count, row["benchmark"], None)
                     / _per_device_speed(catalog, ACCELERATORS[ref["accelerator"]], int(ref["accelerator_count"]),
                                         row["benchmark"], None))
        out.append({"vendor": vendor, "stack": STACKS[vendor], "benchmark": row["benchmark"], "version": row["version"],
                    "accelerator": row["accelerator"], "count": count, "reference": ref["accelerator"],
                    "reference_count": int(ref["accelerator_count"]), "measured_ratio": measured,
                    "predicted_ratio": predicted, "factor": measured / predicted, "fit": FIT[vendor](row)})
    return out


def fit(found: list[dict]) -> dict:
    """Per vendor: the fitted factor (median of the fit rows) and the held-out errors with it applied."""
    out = {}
    for vendor in STACKS:
        mine = [r for r in found if r["vendor"] == vendor]
        fitted = [r["factor"] for r in mine if r["fit"]]
        if not fitted:
            continue
        factor = statistics.median(fitted)
        held = [abs(r["factor"] / factor - 1) for r in mine if not r["fit"]]
        out[vendor] = {"stack": STACKS[vendor], "factor": factor, "fit_rows": len(fitted), "held_out_rows": len(held),
                       "held_out_median": statistics.median(held) if held else None,
                       "held_out_max": max(held) if held else None,
                       "held_out_median_unfitted": statistics.median([abs(r["factor"] - 1) for r in mine if not r["fit"]])
                       if held else None}
    return out


def main() -> None:
    found = rows()
    fitted = fit(found)
    results = HERE / "results"
    write_text(results / "vendor_efficiency.json", json.dumps({"rows": found, "fit": fitted}, indent=2))
    lines = ["| stack | factor on the tensor efficiency | fit rows | held-out rows | held-out median | worst | unfitted median |",
             "|---|---|---|---|---|---|---|"]
    pct = lambda v: "-" if v is None else f"{v:.1%}"  # noqa: E731
    lines += [f"| {f['stack']} ({vendor}) | {f['factor']:.3f} | {f['fit_rows']} | {f['held_out_rows']} | "
              f"{pct(f['held_out_median'])} | {pct(f['held_out_max'])} | {pct(f['held_out_median_unfitted'])} |"
              for vendor, f in fitted.items()]
    lines += ["", "| stack | benchmark | round | accelerator x count | reference x count | measured / predicted | fit |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['stack']} | {r['benchmark']} | {r['version']} | {r['accelerator']} x {r['count']} | {r['reference']} x "
              f"{r['reference_count']} | {r['factor']:.3f} | {'fit' if r['fit'] else 'held out'} |" for r in found]
    text = "\n".join(lines) + "\n"
    write_text(results / "vendor_efficiency.md", text)
    print(text)


if __name__ == "__main__":
    main()
