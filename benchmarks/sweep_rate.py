"""Evaluations per second: sizer.plan.sweep (vectorised) against a plain loop over the single estimates.

    python benchmarks/sweep_rate.py [--loop-rows 400]

One evaluation is one workload × device × device count × precision × sharding: its training
time range, memory per device and fit, and rent cost. The loop calls
``estimate_training_time``, ``training_memory`` and ``estimate_tco`` for each combination (what
a user without the sweep would write); it runs on a random subset of the grid, as it is slow.
The sweep evaluates the whole grid, and the same subset's workloads on their own for a
like-for-like figure. The catalog is loaded before timing in both cases.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
import machine  # noqa: E402

from sizer.facade import TimeRequest, estimate_time  # noqa: E402
from sizer.formulas.peaks import supported_precisions  # noqa: E402
from sizer.formulas.tco import estimate_tco  # noqa: E402
from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.plan.sweep import sweep  # noqa: E402
from sizer.results import Estimate  # noqa: E402
from sizer.schemas.base import WorkloadRequest  # noqa: E402
from sizer.units import Quantity  # noqa: E402

WORKLOADS = [{"params": p, "tokens": 20 * p, "optimizer": "adamw"} for p in (1.25e8, 3.5e8, 1.3e9, 2.7e9, 7e9, 1.3e10)] + \
            [{"params": p, "samples": s, "epochs": 90, "batch_size": 256, "activation_memory_per_sample": "30 MB"}
             for p in (1.1e7, 2.5e7, 6e7, 8.6e7) for s in (1.28e6, 1.4e7)]
COUNTS = [1, 2, 4, 8, 16, 64, 256, 1024]
PRECISIONS = ["fp32", "tf32", "bf16", "fp8"]
SHARDINGS = ["none", "full"]


def loop_once(request: WorkloadRequest, device, count: int, precision: str, sharding: str) -> None:
    time_result = estimate_time(TimeRequest(**request.model_dump(exclude_unset=True), precision=precision, device=device.id,
                                            count=count, sharding=sharding))
    t = time_result.training_time
    estimate_tco(device, count, Estimate(Quantity(t.low, t.unit), Quantity(t.expected, t.unit), Quantity(t.high, t.unit)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loop-rows", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    catalog = load_catalog()
    requests = [WorkloadRequest(**w) for w in WORKLOADS]
    grid = [(w, d, c, p, s) for w in range(len(requests)) for d in catalog for c in COUNTS for p in PRECISIONS
            for s in SHARDINGS if p in supported_precisions(d) and (c <= 256 or "tokens" in WORKLOADS[w])]
    rng = random.Random(6)
    subset = rng.sample(grid, min(args.loop_rows, len(grid)))
    sweep(WORKLOADS[:1], counts=[1], catalog=catalog)  # warm imports
    loop_once(requests[0], next(iter(catalog)), 1, "fp32", "none")

    loop_rates, sweep_rates = [], []
    rows = 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        for w, device, count, precision, sharding in subset:
            loop_once(requests[w], device, count, precision, sharding)
        loop_rates.append(len(subset) / (time.perf_counter() - start))
        start = time.perf_counter()
        table = sweep(WORKLOADS, counts=COUNTS, precisions=PRECISIONS, shardings=SHARDINGS, catalog=catalog)
        elapsed = time.perf_counter() - start
        rows = len(table)
        sweep_rates.append(rows / elapsed)
    supported_rows = int(table.supported.sum())
    loop_rate, sweep_rate = machine.median(loop_rates), machine.median(sweep_rates)
    # The sweep's rows include unsupported precisions (NaN rows); count only supported ones too.
    sweep_supported_rate = sweep_rate * supported_rows / rows
    speedup = sweep_supported_rate / loop_rate
    lines = ["# Bulk evaluation: sweep against a plain loop", "",
             f"Grid: {len(WORKLOADS)} workloads x {len(catalog)} devices x {len(COUNTS)} counts x {len(PRECISIONS)} "
             f"precisions x {len(SHARDINGS)} shardings = {rows} rows ({supported_rows} with the precision supported). "
             f"Loop: {len(subset)} random supported rows. Median of {args.repeat} repeats.", "",
             "| path | evaluations / s |", "| --- | --- |",
             f"| plain loop (estimate_time + estimate_tco) | {loop_rate:,.0f} |",
             f"| sizer.plan.sweep, all rows | {sweep_rate:,.0f} |",
             f"| sizer.plan.sweep, supported rows only | {sweep_supported_rate:,.0f} |", "",
             f"Speed-up (supported rows): {speedup:,.0f}x."]
    machine.write("sweep_rate", {"rows": rows, "supported_rows": supported_rows, "loop_rows": len(subset),
                                 "loop_rates": loop_rates, "sweep_rates": sweep_rates, "loop_rate": loop_rate,
                                 "sweep_rate": sweep_rate, "sweep_supported_rate": sweep_supported_rate,
                                 "speedup": speedup}, "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
