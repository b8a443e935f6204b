"""The long fuzzing run: hypothesis over the core and schemathesis over the HTTP service.

    python benchmarks/fuzz.py [--examples 2000] [--api-examples 300]

Runs tests/sizer/test_fuzz_core.py with ``--examples`` examples per test and
tests/api/test_fuzz_api_schema.py with ``--api-examples`` per operation (the test suite runs 30 and
skips the latter), then writes how many examples each test ran and whether it passed to
benchmarks/results/fuzz.json and fuzz.md. A failure prints hypothesis' minimal example.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402

ROOT = Path(__file__).parent.parent
STAT = re.compile(r"(\d+) passing, (\d+) failing, and (\d+) invalid")


def run(test_file: str, examples: int) -> tuple[int, dict[str, dict[str, int]], str]:
    env = {**os.environ, "SIZER_FUZZ_EXAMPLES": str(examples)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file,
                           "--hypothesis-show-statistics", "-o", "addopts="], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=6 * 3600)
    counts: dict[str, dict[str, int]] = {}
    test = None
    for line in done.stdout.splitlines():
        if line.startswith(test_file + "::"):
            test = line.split("::", 1)[1].rstrip(":")
            counts.setdefault(test, {"passing": 0, "failing": 0, "invalid": 0})
        elif test and (match := STAT.search(line)):
            for key, value in zip(("passing", "failing", "invalid"), match.groups(), strict=True):
                counts[test][key] += int(value)
    return done.returncode, counts, done.stdout[-4000:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--api-examples", type=int, default=300)
    args = parser.parse_args()
    results = {}
    lines = ["# Fuzzing", "", "| test | examples asked | passing | failing | invalid (filtered) |", "| --- | --- | --- | --- | --- |"]
    status = 0
    for test_file, examples in (("tests/sizer/test_fuzz_core.py", args.examples), ("tests/api/test_fuzz_api_schema.py", args.api_examples)):
        code, counts, tail = run(test_file, examples)
        results[test_file] = {"examples": examples, "returncode": code, "tests": counts}
        status = status or code
        for test, c in counts.items():
            lines.append(f"| `{Path(test_file).stem}::{test}` | {examples} | {c['passing']} | {c['failing']} | {c['invalid']} |")
        if code != 0:
            print(tail)
    total = sum(c["passing"] for r in results.values() for c in r["tests"].values())
    lines += ["", f"{total:,} passing examples in all; result: {'all passed' if status == 0 else 'FAILURES (see above)'}."]
    machine.write("fuzz", {"results": results, "total_passing": total, "passed": status == 0}, "\n".join(lines))
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
