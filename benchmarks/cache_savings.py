"""What each declared cache saves: representative commands and requests with it and without it.

    python benchmarks/cache_savings.py [--repeat 3] [--only NAME ...] [--out results/cache_savings.jsonl]

For every cache of :data:`sizer.memo.POLICIES` (and once with all of them on), in turn:

- CLI start-up: the CPU time (user + system) of ``sizer peak "Tesla P40" --json``,
  ``sizer recommend --params 7e9 --tokens 2e10 --json`` (the contract check's question),
  ``sizer time --model llama-2-7b ...`` and ``sizer inference --model llama-2-7b --rate 2``,
  each the median of ``--repeat`` runs, with a warmed disk cache of its own;
- a warm service: one process answers through ``TestClient`` 40 new ``/v1/recommend`` questions
  (as shared/checks/contract-engine asks them), 40 ``/v1/peak``, 10 new ``/v1/time`` and 6 new
  ``/v1/inference`` questions after a warm-up; the CPU time per request of each.

The cache is turned off with ``SIZER_CACHES_OFF=NAME`` (its function is then a plain call). CPU
time is used because the machine is shared (other processes disturb wall time more); the load
average is recorded beside every row. One JSON line per configuration goes to ``--out``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SIZER = str(Path(PYTHON).with_name("sizer"))
COMMANDS = {
    "peak": [SIZER, "peak", "Tesla P40", "--json"],
    "recommend": [SIZER, "recommend", "--params", "7e9", "--tokens", "2e10", "--json"],
    "time": [SIZER, "time", "--model", "llama-2-7b", "--tokens", "1e9", "--device", "H100 SXM", "--count", "8",
             "--precision", "bf16", "--json"],
    "inference": [SIZER, "inference", "--model", "llama-2-7b", "--device", "H100 SXM", "--rate", "2", "--json"],
}

SERVICE = r'''
import json, sys, time
from fastapi.testclient import TestClient
from api.app import create_app

client = TestClient(create_app())
def ask(path, body):
    r = client.post(path, json=body)
    assert r.status_code == 200, (path, r.status_code, r.text[:300])
def cpu_per_request(path, bodies):
    start = time.process_time()
    for body in bodies:
        ask(path, body)
    return (time.process_time() - start) / len(bodies)
ask("/v1/recommend", {"params": 6e9, "tokens": 1e10}); ask("/v1/peak", {"device": "A100 80GB SXM4"})
ask("/v1/time", {"model": "llama-2-13b", "tokens": 1e9, "device": "A100 80GB SXM4", "count": 8})
ask("/v1/inference", {"model": "llama-2-13b", "device": "A100 80GB SXM4", "rate": 1})
out = {
  "recommend_new": cpu_per_request("/v1/recommend", [{"params": 7e9 + i * 1e6, "tokens": 2e10 + i * 1e7} for i in range(40)]),
  "peak": cpu_per_request("/v1/peak", [{"device": "Tesla P40"}] * 40),
  "time_new": cpu_per_request("/v1/time", [{"model": "llama-2-7b", "tokens": 1e9 + i * 1e7, "device": "H100 SXM",
                                           "count": 8, "precision": "bf16"} for i in range(10)]),
  "inference_new": cpu_per_request("/v1/inference", [{"model": "llama-2-7b", "device": "H100 SXM", "rate": 1 + i * 0.25}
                                                     for i in range(6)]),
}
print(json.dumps(out))
'''


def cpu_of(command: list[str], env: dict) -> float:
    """CPU time [s] (user + system) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({env.get('SIZER_CACHES_OFF')}): {done.stderr.decode()[-800:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(off: str | None, repeat: int, cache_dir: str) -> dict:
    env = {**os.environ, "SIZER_CACHE_DIR": cache_dir, "PYTHONPATH": str(ROOT)}
    env.pop("SIZER_CACHES_OFF", None)
    if off:
        env["SIZER_CACHES_OFF"] = off
    row: dict = {"off": off or "(none)", "loadavg": Path("/proc/loadavg").read_text().split()[:3]}
    for name, command in COMMANDS.items():
        row[f"cli_{name}_s"] = statistics.median(cpu_of(command, env) for _ in range(repeat))
    service = subprocess.run([PYTHON, "-c", SERVICE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if service.returncode != 0:
        raise SystemExit(f"service ({off}) failed: {service.stderr[-800:]}")
    row.update({f"http_{k}_s": v for k, v in json.loads(service.stdout.strip().splitlines()[-1]).items()})
    row["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
    return row


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from sizer.memo import POLICIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="cache names to turn off in turn (default: every declared one)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cache_savings.jsonl"))
    args = parser.parse_args()
    names = [None, *(args.only if args.only is not None else [p.name for p in POLICIES])]
    with tempfile.TemporaryDirectory() as cache_dir:
        for command in COMMANDS.values():  # warm the disk cache once
            cpu_of(command, {**os.environ, "SIZER_CACHE_DIR": cache_dir, "PYTHONPATH": str(ROOT)})
        with open(args.out, "a", encoding="utf-8") as out:
            for name in names:
                started = time.perf_counter()
                row = measure(name, args.repeat, cache_dir)
                row["wall_s"] = round(time.perf_counter() - started, 1)
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
