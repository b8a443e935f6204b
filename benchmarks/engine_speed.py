"""In-process speed of the one engine: recommend over the whole catalog, a layout search, time.

    python benchmarks/engine_speed.py [--repeat 30]

Goals (the engine issue, then issue 15's complete layout search): ``recommend`` for the default
workload over the whole catalog ≤ 50 ms warm in-process; ``sizer plan`` for a 70B model on 1,024
GPUs ≤ 100 ms warm. Each
figure is the median of ``--repeat`` calls after one warm-up call (which builds the catalog's
device tables and the layer graph). Results go to benchmarks/results/engine_speed.{json,md}.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
import machine  # noqa: E402

from sizer.facade import PlanRequest, TimeRequest, estimate_time, plan, recommend  # noqa: E402
from sizer.plan import layout_basis  # noqa: E402
from sizer.plan import recommend as recommend_module

GOALS_MS = {"recommend (default workload, whole catalog, layouts searched again)": 50.0,
            "plan (llama-2-70b, H100 SXM x 1024)": 100.0}


def recommend_afresh():
    """The default recommendation computed again (the kept answers forgotten; device tables and the
    layer graph, built once per process, stay)."""
    recommend_module._answer.cache_clear()
    return recommend()


def recommend_searched_afresh():
    """The default recommendation with its layout search done again too (the kept layouts of
    sizer.plan.layout_basis forgotten): the whole search over the catalog, issue 15's goal."""
    layout_basis._kept.cache_clear()
    return recommend_afresh()


def timed(call, repeat: int) -> tuple[float, float]:
    call()  # warm-up: tables and graphs are built once
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return machine.median(times) * 1e3, min(times) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    cases = {
        "recommend (default workload, whole catalog, layouts searched again)": recommend_searched_afresh,
        "recommend (default workload, whole catalog; the shape's kept layouts)": recommend_afresh,
        "recommend, the same question again (a kept answer)": lambda: recommend(),
        "plan (llama-2-70b, H100 SXM x 256)": lambda: plan(PlanRequest(model="llama-2-70b", device="H100 SXM", count=256,
                                                                          tokens=2e12)),
        "plan (llama-2-70b, H100 SXM x 1024)": lambda: plan(PlanRequest(model="llama-2-70b", device="H100 SXM",
                                                                           count=1024, tokens=2e12)),
        "plan (--params 7e10, A100 80GB SXM x 1024, seq 32768)": lambda: plan(PlanRequest(
            params=7e10, device="A100 80GB SXM", count=1024, tokens=2e12, seq_len=32768)),
        "time (llama-2-7b, H100 SXM x 8, layout searched)": lambda: estimate_time(
            TimeRequest(model="llama-2-7b", tokens=2e12, device="H100 SXM", count=8)),
    }
    results = {name: timed(call, args.repeat) for name, call in cases.items()}
    lines = ["# Engine speed, in-process", "", f"Median and fastest of {args.repeat} calls after a warm-up.", "",
             "| call | median ms | fastest ms | goal |", "| --- | --- | --- | --- |"]
    ok = True
    for name, (median, fastest) in results.items():
        goal = GOALS_MS.get(name)
        ok &= goal is None or median <= goal
        lines.append(f"| {name} | {median:.1f} | {fastest:.1f} | {'<= %g ms' % goal if goal else '-'} |")
    lines += ["", f"Goals met: {'yes' if ok else 'NO'}."]
    machine.write("engine_speed", {"repeat": args.repeat, "results_ms": {k: {"median": m, "fastest": f}
                                                                         for k, (m, f) in results.items()},
                                   "goals_ms": GOALS_MS, "goals_met": ok}, "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
