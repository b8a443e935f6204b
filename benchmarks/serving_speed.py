"""Speed of the continuous-batching simulation (issue 16): wall time per simulated minute of a busy replica.

    python benchmarks/serving_speed.py

A busy replica is one kept full (a closed loop of more users than its batch slots). The target is
one simulated minute in at most 50 ms, so that a capacity search (about a dozen simulations per
deployment) stays well under a second. The iteration grid (the engine's evaluations) is built once
per deployment and timed apart. It also times ``recommend --inference`` under load (the deployment
search over device x format x count x replicas), in wall and CPU seconds. Results:
``benchmarks/results/serving_speed.{json,md}``.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from sizer.datafile import write_text  # noqa: E402  the one atomic writer
from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.runtimes.formats import kv_cache_bytes_per_value, weight_format  # noqa: E402
from sizer.serving.capacity import Slo, serve_load  # noqa: E402
from sizer.simulator.simulate import Replica, batching_table, iteration_grid, simulate  # noqa: E402
from sizer.simulator.traffic import LENGTH_DISTRIBUTIONS, Lengths, Load  # noqa: E402
from sizer.workloads.registry import resolve_model  # noqa: E402

CASES = (("llama-2-70b", "h100-sxm5-80gb", 4, "fp16", "fp16", Lengths(1024, 256)),
         ("llama-3.1-8b", "h100-sxm5-80gb", 1, "fp8", "fp8", Lengths(1024, 256)),
         ("llama-3.1-8b", "h100-sxm5-80gb", 1, "fp8", "fp8", Lengths(distribution=LENGTH_DISTRIBUTIONS["sharegpt-multiturn-8k"])),
         ("llama-2-70b", "h200-sxm-141gb", 1, "fp8", "fp8", Lengths(distribution=LENGTH_DISTRIBUTIONS["azure-conv"])),
         ("mixtral-8x7b", "h100-sxm5-80gb", 2, "fp16", "fp16", Lengths(512, 256)))
REPEATS = 3
# `recommend --inference` under load: the deployment search, timed warm (median of RECOMMEND_REPEATS after
# one warm-up); CPU seconds of this process beside the wall time, as the machine is shared
RECOMMEND_CASES = (dict(model="llama-2-70b", weights="fp8", rate=5, slo_ttft="2 s", slo_tpot="100 ms"),
                   dict(model="llama-2-70b", rate=5, slo_ttft="2 s", slo_tpot="100 ms"),
                   dict(model="llama-3.1-8b", rate=20, slo_ttft="1 s", slo_tpot="50 ms"),
                   dict(model="llama-2-70b", weights="fp8", rate=5, slo_ttft="2 s", slo_tpot="100 ms", disaggregated=True))
RECOMMEND_REPEATS = 5


def time_recommend(catalog) -> list[dict]:
    import statistics

    from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference

    rows = []
    for case in RECOMMEND_CASES:
        walls, cpus = [], []
        for i in range(RECOMMEND_REPEATS + 1):
            started, cpu = time.perf_counter(), time.process_time()
            result = recommend_inference(InferenceRecommendRequest(**case), catalog)
            if i:  # the first call builds the tables and grids
                walls.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
        top = result.ranked[0]
        rows.append({"case": ", ".join(f"{k}={v}" for k, v in case.items()), "formats": result.weights,
                     "wall_s_median": round(statistics.median(walls), 3), "cpu_s_median": round(statistics.median(cpus), 3),
                     "ranked": len(result.ranked), "top": f"{top.replicas} x {top.count} {top.name} ({top.weights}, KV {top.kv_cache})"})
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    catalog = load_catalog()
    rows = []
    for model, device, count, weights, kv, lengths in CASES:
        fmt = weight_format(weights)
        replica = Replica(resolve_model(model), fmt, kv_cache_bytes_per_value(kv),
                          batching_table((catalog.find(device),), fmt), 0, count)
        mean_prompt, mean_output = lengths.mean()
        started = time.perf_counter()
        iteration_grid(replica, mean_prompt + mean_output / 2)
        grid_ms = (time.perf_counter() - started) * 1e3
        best = None
        for _ in range(REPEATS):
            started = time.perf_counter()
            run = simulate(replica, Load(users=int(replica.max_batch * 1.25)), lengths, requests=3000)
            wall = time.perf_counter() - started
            per_minute = wall / (run.simulated_seconds / 60) * 1e3
            best = min(best or (per_minute, wall, run), (per_minute, wall, run), key=lambda x: x[0])
        started = time.perf_counter()
        serve_load(replica, Load(rate=max(run.request_rate / 2, 0.01)), lengths, Slo(ttft=2.0, tpot=0.2))
        capacity_ms = (time.perf_counter() - started) * 1e3
        per_minute, wall, run = best
        rows.append({"case": f"{model} on {count} x {device} ({weights}), {lengths.label}",
                     "ms_per_simulated_minute": round(per_minute, 2), "simulated_s": round(run.simulated_seconds, 1),
                     "iterations": run.iterations, "wall_ms": round(wall * 1e3, 1), "grid_ms": round(grid_ms, 1),
                     "capacity_search_ms": round(capacity_ms, 1), "meets_50_ms": per_minute <= 50})
        print(rows[-1], flush=True)
    recommend = time_recommend(catalog)
    out = {"machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine(),
                       "load_average": [round(x, 1) for x in os.getloadavg()]},
           "target_ms_per_simulated_minute": 50, "rows": rows, "recommend": recommend}
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    write_text(results / "serving_speed.json", json.dumps(out, indent=1) + "\n")
    lines = ["# Serving simulation speed", "", "Generated by `benchmarks/serving_speed.py` (best of "
             f"{REPEATS}; the machine is shared, so times vary). Target: <= 50 ms per simulated minute of a busy replica.",
             "", "| case | ms per simulated minute | iterations | grid build ms | capacity search ms |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['ms_per_simulated_minute']} | {r['iterations']} | {r['grid_ms']} | "
              f"{r['capacity_search_ms']} |" for r in rows]
    lines += ["", "`recommend --inference` under load (warm; median of "
              f"{RECOMMEND_REPEATS}; load average {out['machine']['load_average']}):", "",
              "| request | formats | wall s | CPU s | ranked | top |", "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['formats']} | {r['wall_s_median']} | {r['cpu_s_median']} | {r['ranked']} | {r['top']} |"
              for r in recommend]
    write_text(results / "serving_speed.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
