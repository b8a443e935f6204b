"""The machine a benchmark ran on, and writing its results to benchmarks/results/.

Shared by the speed, load and fuzz benchmarks (not by the accuracy benchmark).
"""
from __future__ import annotations

import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sizer.datafile import write_text  # noqa: E402  the one atomic writer

RESULTS = Path(__file__).parent / "results"


def describe() -> dict:
    """CPU model, core count, load, Python and the sizer commit, for the record."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    return {"cpu": model, "nproc": os.cpu_count(), "loadavg_at_start": _loadavg(), "python": sys.version.split()[0],
            "platform": platform.platform(), "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values``, linear between the closest ranks."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: list[float]) -> float:
    return statistics.median(values)


def write(name: str, data: dict, markdown: str) -> tuple[Path, Path]:
    """benchmarks/results/NAME.json and NAME.md, with the machine description."""
    RESULTS.mkdir(exist_ok=True)
    data = {"machine": describe(), **data}
    json_path, md_path = RESULTS / f"{name}.json", RESULTS / f"{name}.md"
    write_text(json_path, json.dumps(data, indent=2) + "\n")
    m = data["machine"]
    write_text(md_path, markdown.rstrip() + f"\n\nMachine: {m['cpu']}, {m['nproc']} cores, load {m['loadavg_at_start']} "
                        f"at start, Python {m['python']}, {m['platform']}; commit {m['commit']}, {m['date']}.\n")
    return json_path, md_path
