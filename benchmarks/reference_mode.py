"""Held-out error of reference mode (``--measured ... --measured-on DEVICE``, sizer/measured.py).

A user measures a workload on one device; sizer carries the measurement over to another device through the
engine: ``predicted(target) x measured(reference) / predicted(reference)``. This script scores that, on the
single-device measurement sets of ../shared/data, source by source: for every source, every ordered pair of
runs of the same workload in that source on two different devices, the reference run predicts the target run
(nothing is fitted: the engine's defaults, so every pair is held out). The error is predicted / measured - 1
of the target's throughput; the datasheet error of the same targets (no reference) is given beside it.

- ``single-device-training.csv``: training steps of torchvision CNNs and BERT (lamikr, lucadiliello, TensorFlow
  docs), a workload = (built-in profile, input, precision, batch);
- ``measured-benchmarks.csv``: through ``benchmarks/published_measurements.csv`` (Lambda, NVIDIA
  DeepLearningExamples), a workload = (profile, sequence length, precision), each run at its own batch;
- ``local-inference-measurements.csv``: through ``benchmarks/local_inference_runs.csv`` (llama-bench, llmfit,
  mlx-lm ... runs sizer can ask), a workload = (model, GGUF mix, pp/tg, tokens, depth, runtime).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/reference_mode.py

Writes ``benchmarks/results/reference_mode.json`` and ``.md`` (the table in benchmarks/ACCURACY.md).
"""
from __future__ import annotations

import csv
import json
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

DATA = HERE.parent.parent / "shared" / "data"
RESULTS = HERE / "results"


@dataclass(frozen=True)
class Run:
    """One measured run: its source, the workload it ran, the device and its measured throughput [1/s]."""

    source: str
    workload: tuple[object, ...]
    device: str
    measured: float  # throughput [samples or tokens / s]
    predict: Callable[[], float]  # the engine's throughput for this run [1/s]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


# ------------------------------------------------------------------------------------------ the three sets

_TRAIN_METRICS = {"ms_per_iter_fwd_bwd": lambda v, b: b / (v / 1e3), "images_per_s_train": lambda v, b: v,
                  "train_seconds_per_100_steps": lambda v, b: b / (v / 100)}
_TF_MODELS = {"ResNet-50 v1": "resnet50", "ResNet-152 v1": "resnet152", "Inception-V3": "inception-v3",
              "VGG-16": "vgg16", "AlexNet": "alexnet-imagenet"}
_VENDOR = re.compile(r"^(?:NVIDIA |AMD |Intel )?(?:GeForce |Radeon |Tesla )?")


def _device(catalog, text: str) -> str | None:
    """A catalog id for the data's device text: as written, else without vendor words and memory size."""
    from sizer.errors import SizerError

    for name in (text, _VENDOR.sub("", text), re.sub(r"\s*\d+\s*GB$", "", _VENDOR.sub("", text)),
                 re.sub(r"\s*\(.*\)$", "", _VENDOR.sub("", text))):
        try:
            return catalog.find(name).id
        except SizerError:
            continue
    return None


def _profile(model: str) -> tuple[str, int | None] | None:
    from sizer.workloads.profile import builtin_profile_names

    names = set(builtin_profile_names())
    ticked = re.search(r"`([a-z0-9_]+)`", model)
    if ticked and ticked.group(1).replace("_", "-") in names:
        return ticked.group(1).replace("_", "-"), None
    for prefix, name in _TF_MODELS.items():
        if model.startswith(prefix) and "tf_cnn_benchmarks" in model:
            return name, None
    return None


def training_runs(catalog) -> list[Run]:
    """single-device-training.csv: the training rows sizer can predict (a built-in profile, a catalog device)."""
    from sizer.choices import Optimizer, Precision
    from sizer.engine.modes import profile_step_seconds
    from sizer.workloads.profile import load_profile

    out = []
    for row in csv.DictReader((DATA / "single-device-training.csv").open(encoding="utf-8")):
        convert = _TRAIN_METRICS.get(row["metric"])
        device = _device(catalog, row["device"])
        if convert is None or device is None or row["n_devices"] != "1":
            continue
        if row["model"].startswith("BERT-base"):
            seq = re.search(r"seq (\d+)", row["input_size"])
            workload: tuple[str, int | None] | None = ("bert-base", int(seq.group(1))) if seq else None
        else:
            workload = _profile(row["model"])
        if workload is None:
            continue
        batch = float(row["batch_size_per_device"])
        precision = Precision.FP16 if row["precision"].startswith("fp16") else Precision.FP32
        optimizer = Optimizer.ADAM if workload[0].startswith("bert") else Optimizer.MOMENTUM

        def predict(workload=workload, device=device, precision=precision, batch=batch, optimizer=optimizer) -> float:
            profile = load_profile(*workload)
            return batch / profile_step_seconds(profile, catalog.find(device), precision, batch, optimizer)

        out.append(Run(row["source_repo"], (*workload, precision.value, batch, row["metric"], row["input_size"]), device,
                       convert(float(row["value"]), batch), predict))
    return out


def published_runs(catalog) -> list[Run]:
    """measured-benchmarks.csv, as benchmarks/published_measurements.csv maps it: single-device rows."""
    from accuracy import OPTIMIZER, load_rows

    from sizer.choices import Precision
    from sizer.engine.modes import profile_step_seconds
    from sizer.workloads.profile import load_profile

    out = []
    for row in load_rows():
        if row["n_devices"] != 1:
            continue

        def predict(row=row) -> float:
            profile = load_profile(row["workload"], row["seq_len"])
            return row["batch"] / profile_step_seconds(profile, catalog.find(row["device"]), Precision(row["precision"]),
                                                       row["batch"], OPTIMIZER[row["workload"]])

        out.append(Run(row["source"].split(" ", 1)[0], (row["workload"], row["seq_len"], row["precision"]), row["device"],
                       float(row["throughput_per_device"]), predict))
    return out


def local_runs() -> list[Run]:
    """local-inference-measurements.csv, as benchmarks/local_inference_runs.csv maps it; the source by line."""
    from local_inference_accuracy import DATA as LOCAL
    from local_inference_accuracy import _seconds, load_runs

    from sizer.runtimes import runtime

    with LOCAL.open(encoding="utf-8", newline="") as f:
        sources = {str(i): row["source"] for i, row in enumerate(csv.DictReader(f), start=2)}
    out = []
    for run in load_runs():
        source = sources.get(run.key.lstrip("L"), "?")

        def predict(run=run) -> float:
            return (run.tokens if run.test == "pp" else 1.0) / _seconds(run, runtime(run.runtime).profile)

        out.append(Run(re.sub(r"\s*\(.*$", "", source).split(" ")[0], (run.model, run.mix, run.test, run.tokens, run.depth,
                                                                       run.runtime, run.origin), run.device,
                       run.measured, predict))
    return out


# -------------------------------------------------------------------------------------------------- score


def pair_errors(runs: Iterable[Run]) -> dict[str, list[dict[str, float]]]:
    """Per source: for every ordered pair of runs of one workload on two devices, the reference-mode error of the
    target (predicted through the reference / measured - 1) and its datasheet error."""
    predicted: dict[int, float] = {}
    groups: dict[tuple[str, tuple[object, ...]], list[Run]] = defaultdict(list)
    for run in runs:
        groups[(run.source, run.workload)].append(run)
    out: dict[str, list[dict[str, float]]] = defaultdict(list)
    for (source, _), members in groups.items():
        if len({m.device for m in members}) < 2:
            continue
        for m in members:
            if id(m) not in predicted:
                try:
                    predicted[id(m)] = m.predict()
                except ValueError:  # a run the engine refuses (SizerError is a ValueError)
                    predicted[id(m)] = float("nan")
        for target in members:
            for reference in members:
                p_t, p_r = predicted[id(target)], predicted[id(reference)]
                if reference.device == target.device or not (p_t > 0 and p_r > 0):
                    continue
                carried = p_t * reference.measured / p_r  # the reference's factor, applied whole (sizer/measured.py)
                out[source].append({"error": carried / target.measured - 1, "datasheet": p_t / target.measured - 1})
    return out


def summarize(errors: list[dict[str, float]]) -> dict[str, float]:
    """Median and p90 |error|, signed median, and the datasheet median |error| of the same targets."""
    absolute = [abs(e["error"]) for e in errors]
    return {"pairs": len(errors), "median_abs_error": statistics.median(absolute), "p90_abs_error": _quantile(absolute, 0.9),
            "signed_median": statistics.median(e["error"] for e in errors),
            "datasheet_median_abs_error": statistics.median(abs(e["datasheet"]) for e in errors)}


def score(sets: dict[str, list[Run]]) -> dict[str, object]:
    """Every set's pairs scored by source, and over every pair of every set (``all``)."""
    by_set: dict[str, dict[str, dict[str, float]]] = {}
    every: list[dict[str, float]] = []
    for name, runs in sets.items():
        errors = pair_errors(runs)
        by_set[name] = {source: summarize(e) for source, e in sorted(errors.items())}
        every += [e for errs in errors.values() for e in errs]
    return {"by_set": by_set, "all": summarize(every)}


def markdown(result: dict[str, object]) -> str:
    lines = ["| set | source | pairs | median abs | p90 abs | signed median | datasheet median abs |",
             "|---|---|---:|---:|---:|---:|---:|"]
    by_set = result["by_set"]
    assert isinstance(by_set, dict)
    for name, sources in by_set.items():
        for source, s in sources.items():
            lines.append(f"| {name} | {source} | {s['pairs']} | {s['median_abs_error']:.1%} | {s['p90_abs_error']:.1%} | "
                         f"{s['signed_median']:+.1%} | {s['datasheet_median_abs_error']:.1%} |")
    a = result["all"]
    assert isinstance(a, dict)
    lines.append(f"| all | every source | {a['pairs']} | {a['median_abs_error']:.1%} | {a['p90_abs_error']:.1%} | "
                 f"{a['signed_median']:+.1%} | {a['datasheet_median_abs_error']:.1%} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    from sizer.datafile import write_text
    from sizer.hardware.catalog import load_catalog

    catalog = load_catalog()
    sets = {"single-device-training": training_runs(catalog), "measured-benchmarks": published_runs(catalog),
            "local-inference": local_runs()}
    result = score(sets)
    result["runs"] = {name: len(runs) for name, runs in sets.items()}
    write_text(RESULTS / "reference_mode.json", json.dumps(result, indent=2) + "\n")
    table = markdown(result)
    write_text(RESULTS / "reference_mode.md", table)
    print(table)
    print(result["runs"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
