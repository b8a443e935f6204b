"""Build benchmarks/published_measurements.csv from ../shared/data/measured-benchmarks.csv.

Each published row is mapped to a catalog device, a built-in workload profile, a precision and
a per-device throughput, keeping its source. Rows the model cannot predict are kept with the
reason in ``excluded`` (XLA-compiled runs, FP16 on GPUs without tensor cores).

    python benchmarks/build_published_table.py [SOURCE_CSV]
"""
from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sizer.datafile import write_text  # noqa: E402  the one atomic writer

HERE = Path(__file__).parent
DEFAULT_SOURCE = HERE.parent.parent / "shared" / "data" / "measured-benchmarks.csv"
OUT = HERE / "published_measurements.csv"

DEVICES = {  # published hardware name -> catalog id (and why, where it is not exact)
    "V100 32GB (PCIe/SXM unspecified)": ("tesla-v100-sxm2-32gb", "Lambda's 'V100 32GB': form factor unspecified, taken as SXM2"),
    "V100 16GB SXM2 (DGX-1)": ("tesla-v100-sxm2-16gb", ""),
    "V100 32GB SXM2 (DGX-1)": ("tesla-v100-sxm2-32gb", ""),
    "V100 32GB SXM3 (DGX-2)": ("tesla-v100-sxm2-32gb", "SXM3 (DGX-2) taken as the SXM2 32 GB entry; SXM3 clocks slightly higher"),
    "Titan RTX 24GB": ("titan-rtx", ""), "RTX 2080 Ti 11GB": ("rtx-2080-ti", ""), "GTX 1080 Ti 11GB": ("gtx-1080-ti", ""),
    "RTX 3080 10GB": ("rtx-3080-10gb", ""), "A100 40GB SXM4": ("a100-40gb-sxm4", ""),
    "A100 40GB SXM4 (DGX A100)": ("a100-40gb-sxm4", ""), "A100 80GB SXM4 (DGX A100)": ("a100-80gb-sxm4", ""),
    "RTX A5000 24GB": ("rtx-a5000", ""), "A40 48GB": ("a40", ""), "RTX A4000 16GB": ("rtx-a4000", ""),
}
AMPERE = {"rtx-3080-10gb", "a100-40gb-sxm4", "a100-80gb-sxm4", "rtx-a5000", "a40", "rtx-a4000"}
NO_TENSOR_CORES = {"gtx-1080-ti"}


def workload_of(model: str) -> tuple[str, int | None]:
    if model.startswith("ResNet-50"):
        return "resnet50", None
    size = "bert-large" if "BERT-large" in model else "bert-base"
    for length in (128, 384, 512):
        if f"seq_len {length}" in model:
            return size, length
    raise ValueError(f"unknown model {model!r}")


def precision_of(text: str, device: str, source: str) -> tuple[str, str]:
    text = text.lower()
    if "fp16" in text:
        return "fp16", ""
    if "tf32" in text:
        return "tf32", ""
    if device in AMPERE and "lambdal" in source:
        # Lambda's 2021 runs used NGC 20.10 (PyTorch 1.7), which ran FP32 matmuls and convolutions on TF32
        return "tf32", "FP32 run on Ampere with PyTorch 1.7 (NGC 20.10): TF32 on by default for matmul and conv"
    return "fp32", ""


def build(source: Path = DEFAULT_SOURCE) -> list[dict]:
    rows = []
    for row in csv.DictReader(source.open(encoding="utf-8")):
        device, device_note = DEVICES[row["hardware"]]
        workload, seq_len = workload_of(row["model"])
        precision, precision_note = precision_of(row["precision"], device, row["source_repo"])
        n = int(row["n_devices"])
        value = float(row["value"])
        per_device = value / n if row["metric"].endswith("_total") else value
        excluded = ""
        if "xla" in row["precision"]:
            excluded = "XLA-compiled run: fused kernels outside the eager-PyTorch model"
        elif precision == "fp16" and device in NO_TENSOR_CORES:
            excluded = "FP16 on a GPU without tensor cores (Pascal runs FP16 math at 1/64 rate): no peak to predict from"
        notes = "; ".join(x for x in (device_note, precision_note,
                                      "pre-training with an MLM head; profile has the SQuAD span head" if "pre-training" in row["model"] else "")
                          if x)
        rows.append({"device": device, "hardware_as_published": row["hardware"], "workload": workload,
                     "seq_len": seq_len or "", "precision": precision, "precision_as_published": row["precision"],
                     "batch_size_per_device": int(float(row["batch_size_per_device"])), "n_devices": n,
                     "throughput_per_device": round(per_device, 4), "unit": "sequences/s" if "sequences" in row["metric"] else "images/s",
                     "source": f"{row['source_repo']} {row['source_path']}", "excluded": excluded, "notes": notes})
    return rows


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE
    rows = build(source)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_text(OUT, text.getvalue())
    print(f"{OUT}: {len(rows)} rows, {sum(not r['excluded'] for r in rows)} predictable")


if __name__ == "__main__":
    main()
