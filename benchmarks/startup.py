"""Whole-process start-up of the CLI against pint's own start-up, as ratios within one run.

    python benchmarks/startup.py [--repeat 15]

Runs, interleaved round by round so that machine load hits all of them alike:
the baseline ``python -c "import pint; pint.UnitRegistry()"``, ``sizer peak "Tesla P40" --json``
and ``sizer recommend --params 7e9 --tokens 2e10 --json`` (the contract check's question over the whole
catalog; also the default workload's table form). Reports each median wall time and the ratios peak / baseline (goal <= 1.0,
issue 41) and recommend / peak (goal <= 1.1, issue 41), and the same ratios of CPU time (user + system of
the process), which a machine shared with other work disturbs less than wall time, with the load average before
each round. The first round warms the disk cache (sizer's parsed catalog and unit definitions, see
sizer/diskcache.py) and is not counted; before it, sizer's modules are compiled to bytecode as an installed wheel
has them (pint's are, from its wheel): with PYTHONDONTWRITEBYTECODE set, an editable checkout would otherwise
compile some 60 modules from source in every run (~0.1 s).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402

PYTHON = sys.executable
SIZER = str(Path(PYTHON).with_name("sizer"))
COMMANDS = {
    "baseline": [PYTHON, "-c", "import pint; pint.UnitRegistry()"],
    "peak": [SIZER, "peak", "Tesla P40", "--json"],
    "recommend": [SIZER, "recommend", "--params", "7e9", "--tokens", "2e10", "--json"],  # the contract check's question
    "recommend_table": [SIZER, "recommend"],
}
GOALS = {"peak/baseline": 1.0, "recommend/peak": 1.1}


CPU_TIMES: dict[str, list[float]] = {}


def run_once(command: list[str], name: str | None = None) -> float:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-500:]}")
    if name is not None:
        CPU_TIMES.setdefault(name, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    subprocess.run([PYTHON, "-m", "compileall", "-q", *(str(root / d) for d in ("sizer", "cli", "api"))],
                   stdout=subprocess.DEVNULL, check=False)
    for command in COMMANDS.values():  # warm-up round: fills the disk cache and the OS file cache
        run_once(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    loads: list[float] = []
    for _ in range(args.repeat):
        loads.append(os.getloadavg()[0])
        for name, command in COMMANDS.items():
            times[name].append(run_once(command, name))
    medians = {name: machine.median(values) for name, values in times.items()}
    ratios = {"peak/baseline": medians["peak"] / medians["baseline"],
              "recommend/peak": medians["recommend"] / medians["peak"],
              "recommend_table/peak": medians["recommend_table"] / medians["peak"]}
    # Ratios per round as well: both commands of one round saw about the same load.
    per_round = {"peak/baseline": [p / b for p, b in zip(times["peak"], times["baseline"], strict=True)],
                 "recommend/peak": [r / p for r, p in zip(times["recommend"], times["peak"], strict=True)],
                 "recommend_table/peak": [r / p for r, p in zip(times["recommend_table"], times["peak"], strict=True)]}
    round_medians = {k: machine.median(v) for k, v in per_round.items()}
    lines = ["# Start-up (whole process)", "", f"{args.repeat} interleaved rounds after one warm-up round; "
             "median wall time of each command. Load average (1 min) before each round: "
             + ", ".join(f"{x:.1f}" for x in loads) + ".", "", "| command | median s | min s | max s |", "| --- | --- | --- | --- |"]
    for name, values in times.items():
        shown = "import pint; pint.UnitRegistry()" if name == "baseline" else " ".join(["sizer", *COMMANDS[name][1:]])
        lines.append(f"| `{shown}` "
                     f"| {medians[name]:.3f} | {min(values):.3f} | {max(values):.3f} |")
    lines += ["", "| ratio | of medians | median of per-round ratios | goal |", "| --- | --- | --- | --- |"]
    for name, value in ratios.items():
        goal = GOALS.get(name)
        lines.append(f"| {name} | {value:.2f} | {round_medians.get(name, float('nan')):.2f} | "
                     f"{'<= %.1f' % goal if goal else '-'} |")
    cpu = {name: machine.median(values) for name, values in CPU_TIMES.items()}
    cpu_ratios = {"peak/baseline": cpu["peak"] / cpu["baseline"], "recommend/peak": cpu["recommend"] / cpu["peak"]}
    lines += ["", "CPU time (user + system), median s: " + ", ".join(f"{name} {value:.3f}" for name, value in cpu.items()),
              "", "| ratio of CPU time | of medians | goal |", "| --- | --- | --- |"]
    lines += [f"| {name} | {value:.2f} | <= {GOALS[name]:.1f} |" for name, value in cpu_ratios.items()]
    ok = all(ratios[name] <= goal for name, goal in GOALS.items())
    lines += ["", f"Goals met (wall time): {'yes' if ok else 'NO'}; "
                  f"(CPU time): {'yes' if all(cpu_ratios[n] <= g for n, g in GOALS.items()) else 'NO'}."]
    machine.write("startup", {"repeat": args.repeat, "times_s": times, "medians_s": medians, "ratios": ratios,
                              "per_round_ratio_medians": round_medians, "goals": GOALS, "goals_met": ok,
                              "cpu_times_s": CPU_TIMES, "cpu_medians_s": cpu, "cpu_ratios": cpu_ratios,
                              "loadavg_per_round": loads,
                              "cache_dir": os.environ.get("SIZER_CACHE_DIR", "default")}, "\n".join(lines))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
