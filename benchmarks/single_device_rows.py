"""The one-device training runs that sizer can be asked about, from every source in ../shared/data.

Two files: ``benchmarks/published_measurements.csv`` (built from ``measured-benchmarks.csv``: NVIDIA
DeepLearningExamples and Lambda, single-device rows only) and ``single-device-training.csv`` (groups
L, A3, S, TF, D; ``README-2026-12.md`` §3). A row can be asked when its device is a catalog device,
its network a workload profile in ``catalog/workloads``, its precision one the device has a peak for,
and it times a training step; every other row is kept with the reason it is left out.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE.parent.parent / "shared" / "data"
SINGLE = DATA / "single-device-training.csv"
PUBLISHED = HERE / "published_measurements.csv"

# hardware as the source names it -> catalog id (None: not in the catalog, said in `excluded`)
DEVICES = {
    "AMD Radeon RX 5700 8GB (gfx1010)": "rx-5700",
    "AMD Radeon RX 6800 16GB (gfx1030)": "rx-6800",
    "AMD Radeon RX 7700S 8GB (laptop, gfx1102)": "rx-7700s",
    "AMD Radeon RX 7800 XT 16GB (gfx1101)": "rx-7800-xt",
    "AMD Radeon RX 7900 XTX 24GB (gfx1100)": "radeon-rx-7900-xtx",
    "AMD Radeon 780M (Phoenix iGPU, gfx1103)": "radeon-780m",
    "AMD Radeon 680M (Rembrandt iGPU, gfx1035)": None,
    "NVIDIA GeForce RTX 2060 Max-Q (laptop) 6GB": "rtx-2060-max-q",
    "NVIDIA GeForce RTX 3090 24GB": "rtx-3090",
    "NVIDIA GeForce RTX 4060 Ti 16GB": "rtx-4060-ti-16gb",
    "Apple M1 Max (32-core GPU, 32GB)": "apple-m1-max-32c-32gb-gpu",
    "Apple M1 Ultra (48-core GPU, 64GB)": "apple-m1-ultra-48c-64gb-gpu",
    "Apple M2 Ultra (60-core GPU, 64GB)": "apple-m2-ultra-60c-64gb-gpu",
    "Apple M3 Max (40-core GPU, 64GB)": "apple-m3-max-40c-64gb-gpu",
    "Apple M3 Pro (14-core GPU, 18GB)": "apple-m3-pro-14c-gpu",
    "Apple M1 Max CPU (8P+2E cores, 32GB)": "apple-m1-max-cpu",
    "NVIDIA Tesla T4 16GB (Google Colab Pro)": "tesla-t4",
    "NVIDIA Tesla V100 SXM2 16GB": "tesla-v100-sxm2-16gb",
    "NVIDIA GeForce GTX TITAN X (Maxwell) 12GB": "gtx-titan-x-maxwell",
    "NVIDIA Tesla K80 (one GK210, AWS p2.8xlarge)": "tesla-k80",
    "NVIDIA Tesla K80 (one GK210, GCE n1-standard-32-k80x8)": "tesla-k80",
    "NVIDIA Tesla P100 SXM2 16GB (DGX-1)": "tesla-p100-sxm2-16gb",
    "2x Intel Xeon E5-2686 v4 (Broadwell, AWS r4.16xlarge dedicated, 32 cores / 64 vCPU)": "xeon-e5-2686-v4-x2",
}
# network as the source names it (first match of the pattern) -> workload profile and sequence length
MODELS = (
    (r"`resnet(18|34|50|101|152)`", lambda m: (f"resnet{m.group(1)}", None)),
    (r"`vgg(11|16|19)`", lambda m: (f"vgg{m.group(1)}" if m.group(1) != "11" else "vgg11-imagenet", None)),
    (r"`densenet(121|201)`", lambda m: (f"densenet{m.group(1)}", None)),
    (r"`mobilenet_v2`", lambda m: ("mobilenet-v2", None)),
    (r"`mobilenet_v3_large`", lambda m: ("mobilenet-v3-large", None)),
    (r"`squeezenet1_1`", lambda m: ("squeezenet1-1", None)),
    (r"^AlexNet", lambda m: ("alexnet-imagenet", None)),
    (r"^VGG-A / VGG-11", lambda m: ("vgg11-imagenet", None)),
    (r"^GoogLeNet", lambda m: ("googlenet", None)),
    (r"^Inception-V3", lambda m: ("inception-v3", None)),
    (r"^ResNet-50 v1", lambda m: ("resnet50", None)),
    (r"^ResNet-152 v1", lambda m: ("resnet152", None)),
    (r"^VGG-16 \(tf_cnn", lambda m: ("vgg16", None)),
    (r"^BERT-base-cased .* seq_len (128|512)", lambda m: ("bert-base", int(m.group(1)))),
)
# how a step is measured -> seconds per step from the value and the batch
TRAINING_METRICS = {
    "ms_per_iter_fwd_bwd": lambda value, batch: value / 1e3,
    "train_seconds_per_100_steps": lambda value, batch: value / 100.0,
    "images_per_s_train": lambda value, batch: batch / value,
}
# doubts that say the row measures something other than the step (a stated defect of the run)
EXCLUDING_DOUBTS = ("MPS nightly 1.13.0.dev20220601", "spills to swap", "unoptimised fp16 path", "real-data row")
DEVICE_CLASS = {"NVIDIA": "NVIDIA", "AMD": "AMD", "Apple": "Apple"}


@dataclass(frozen=True)
class Run:
    """One run that can be asked: what ran where, and its measured seconds per step."""

    source: str
    device: str  # catalog id
    workload: str
    seq_len: int | None
    precision: str  # a sizer Precision value
    batch: float
    measured_step: float  # s
    updates: bool  # the timed step includes the optimizer update
    doubt: str
    label: str


def source_of(row: dict[str, str]) -> str:
    """The source a row is judged by: its repository (published rows) or the README's group name."""
    names = {"L": "lamikr/pytorch-gpu-benchmark", "A3": "lucadiliello/pytorch-apple-silicon-benchmarks",
             "S": "soumith/convnet-benchmarks", "TF": "tensorflow.org benchmarks (2017)", "D": "DAWNBench"}
    return names[row["group"]]


def _model(name: str) -> tuple[str, int | None] | None:
    for pattern, build in MODELS:
        found = re.search(pattern, name)
        if found:
            return build(found)
    return None


def _precision(text: str) -> str:
    if text.startswith("fp32 (TF32"):
        return "tf32"  # PyTorch 1.7-1.11 ran FP32 matmuls and convolutions on TF32 on Ampere by default
    if text.startswith("fp16"):
        return "fp16"
    return "fp32"


def single_device_rows() -> tuple[list[Run], list[tuple[str, str]]]:
    """Every row of single-device-training.csv that can be asked, and (label, reason) for the others."""
    runs, excluded = [], []
    for row in csv.DictReader(SINGLE.open(encoding="utf-8")):
        label = f"{row['group']}: {row['hardware']} / {row['model'][:40]} / b{row['batch_size_per_device']} / {row['precision'][:12]}"
        device = DEVICES.get(row["hardware"])
        model = _model(row["model"])
        metric = TRAINING_METRICS.get(row["metric"])
        reason = ("not a timed training step" if metric is None else
                  "device not in the catalog" if device is None else
                  "network not a workload profile" if model is None else
                  "Chainer (2016), not a vendor-library path" if "chainer" in row["framework_version"].lower() else
                  f"doubt: {row['doubt']}" if any(d in row["doubt"] for d in EXCLUDING_DOUBTS) else "")
        if reason:
            excluded.append((label, reason))
            continue
        assert metric is not None and device is not None and model is not None
        batch = float(row["batch_size_per_device"])
        runs.append(Run(source=source_of(row), device=device, workload=model[0], seq_len=model[1],
                        precision=_precision(row["precision"]), batch=batch,
                        measured_step=metric(float(row["value"]), batch), updates="optimizer" not in row["task"]
                        and "no update" not in row["task"], doubt=row["doubt"], label=label))
    return runs, excluded


def published_rows() -> tuple[list[Run], list[tuple[str, str]]]:
    """The single-device rows of published_measurements.csv (multi-device rows belong to another question)."""
    runs, excluded = [], []
    for row in csv.DictReader(PUBLISHED.open(encoding="utf-8")):
        label = f"{row['source'][:30]}: {row['device']} / {row['workload']} / {row['precision']}"
        if row["n_devices"] != "1" or row["excluded"]:
            excluded.append((label, row["excluded"] or "more than one device"))
            continue
        batch = float(row["batch_size_per_device"])
        runs.append(Run(source=row["source"].split()[0], device=row["device"], workload=row["workload"],
                        seq_len=int(row["seq_len"]) if row["seq_len"] else None, precision=row["precision"],
                        batch=batch, measured_step=batch / float(row["throughput_per_device"]), updates=True,
                        doubt="", label=label))
    return runs, excluded


def all_rows() -> tuple[list[Run], list[tuple[str, str]]]:
    """Both files' runs that can be asked, and the rows left out with their reason."""
    a, a_out = published_rows()
    b, b_out = single_device_rows()
    return a + b, a_out + b_out
