"""Start-up of this tree against another tree (a baseline checkout with its own venv), interleaved round by round.

    python benchmarks/startup_ab.py --base /path/to/baseline/.venv/bin/python [--rounds 9]

For each tree, in every round and in the same order: ``python -c "import pint; pint.UnitRegistry()"``,
``sizer peak "Tesla P40" --json`` and ``sizer recommend --params 7e9 --tokens 2e10 --json``, each a fresh process;
CPU time (user + system) and wall time of each, the load average (1 min) before each round. Reports the medians and
the ratios peak / pint and recommend / peak per tree (issue 41's goals: <= 1.0 and <= 1.1), and whether both trees
printed the same bytes (the speed work must not change an answer). On a machine shared with other work the CPU
ratios are the steadier ones; compare trees only within one run. Both trees are compiled to bytecode first (as an
installed wheel is) and run once before the rounds (disk cache and OS file cache warm).
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402

GOALS = {"peak/pint": 1.0, "recommend/peak": 1.1}


def commands(python: str) -> dict[str, list[str]]:
    sizer = str(Path(python).with_name("sizer"))
    return {"pint": [python, "-c", "import pint; pint.UnitRegistry()"], "peak": [sizer, "peak", "Tesla P40", "--json"],
            "recommend": [sizer, "recommend", "--params", "7e9", "--tokens", "2e10", "--json"]}


def run_once(command: list[str]) -> tuple[float, float, bytes]:
    """CPU [s], wall [s] and stdout of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, timeout=120, cwd="/")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-500:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the baseline tree's venv python (its sizer script beside it)")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    trees = {"base": args.base, "this": sys.executable}
    for python in trees.values():
        root = subprocess.run([python, "-c", "import sizer, pathlib; print(pathlib.Path(sizer.__file__).parent.parent)"],
                              capture_output=True, text=True, check=True, cwd="/").stdout.strip()
        subprocess.run([python, "-m", "compileall", "-q", *(f"{root}/{d}" for d in ("sizer", "cli", "api"))],
                       stdout=subprocess.DEVNULL, check=False)
    outputs = {(tree, name): run_once(command)[2] for tree, python in trees.items()
               for name, command in commands(python).items()}
    cpu: dict[tuple[str, str], list[float]] = {}
    wall: dict[tuple[str, str], list[float]] = {}
    loads = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for tree, python in trees.items():
            for name, command in commands(python).items():
                c, w, _ = run_once(command)
                cpu.setdefault((tree, name), []).append(c)
                wall.setdefault((tree, name), []).append(w)
    med_cpu = {k: machine.median(v) for k, v in cpu.items()}
    med_wall = {k: machine.median(v) for k, v in wall.items()}
    ratios = {tree: {"cpu": {"peak/pint": med_cpu[(tree, "peak")] / med_cpu[(tree, "pint")],
                             "recommend/peak": med_cpu[(tree, "recommend")] / med_cpu[(tree, "peak")]},
                     "wall": {"peak/pint": med_wall[(tree, "peak")] / med_wall[(tree, "pint")],
                              "recommend/peak": med_wall[(tree, "recommend")] / med_wall[(tree, "peak")]}}
              for tree in trees}
    same = {name: outputs[("base", name)] == outputs[("this", name)] for name in ("peak", "recommend")}
    lines = ["# Start-up, this tree against a baseline (interleaved)", "",
             f"{args.rounds} rounds after one warm-up; load average (1 min) before each round: "
             + ", ".join(f"{x:.1f}" for x in loads) + ".", "",
             "| tree | command | median CPU ms | median wall ms |", "| --- | --- | --- | --- |"]
    lines += [f"| {tree} | {name} | {1000 * med_cpu[(tree, name)]:.0f} | {1000 * med_wall[(tree, name)]:.0f} |"
              for (tree, name) in med_cpu]
    lines += ["", "| tree | peak / pint CPU | wall | recommend / peak CPU | wall |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {tree} | {r['cpu']['peak/pint']:.2f} | {r['wall']['peak/pint']:.2f} | {r['cpu']['recommend/peak']:.2f} "
              f"| {r['wall']['recommend/peak']:.2f} |" for tree, r in ratios.items()]
    lines += ["", f"Goals (issue 41): peak / pint <= {GOALS['peak/pint']}, recommend / peak <= {GOALS['recommend/peak']}. "
              f"Same output in both trees: peak {same['peak']}, recommend {same['recommend']}."]
    machine.write("startup_ab", {"rounds": args.rounds, "trees": trees, "loadavg_per_round": loads,
                                 "cpu_s": {f"{t}:{n}": v for (t, n), v in cpu.items()},
                                 "wall_s": {f"{t}:{n}": v for (t, n), v in wall.items()},
                                 "ratios": ratios, "goals": GOALS, "same_output": same}, "\n".join(lines))
    print("\n".join(lines))
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
