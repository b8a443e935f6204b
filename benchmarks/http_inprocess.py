"""CPU per request of ``/v1/peak`` and of a new ``/v1/recommend`` question through the whole ASGI app, in one
process (no sockets, no other process): what a new question costs the service beyond a peak, steadier than the
socket benchmarks on a machine shared with other work.

    python benchmarks/http_inprocess.py [--rounds 5] [--requests 300]

The app is built as ``sizer serve`` builds it, without worker processes; the three shapes of the contract check's
questions (7e9-7.2e9 parameters) are searched once first, then each round asks ``--requests`` peaks and as many new
questions (parameters 7e9 + i x 1e6 cycled over 200, a new token count each: no body repeats), timing each block's
CPU (``time.process_time``; the client, httpx's ASGI transport, is inside it for both). Reports the medians and the
ratio of the per-request CPU (peak / new question: what ``/v1/recommend`` new / ``/v1/peak`` would be if the
service's own CPU set the rate).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402


async def measure(rounds: int, requests: int) -> dict[str, list[float]]:
    import httpx
    from sizer.api.app import create_app
    from sizer.api.settings import Settings

    app = create_app(Settings(estimate_workers=0))
    times: dict[str, list[float]] = {"peak": [], "new": []}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        for i in range(0, 200, 5):  # the three shapes searched and kept; every model built
            answer = await client.post("/v1/recommend", json={"params": 7e9 + i * 1e6, "tokens": 2e10 + i * 1e7})
            assert answer.status_code == 200, answer.text
        for _ in range(20):
            await client.post("/v1/peak", json={"device": "Tesla P40"})
        gc.freeze()  # as `sizer serve` does after its start-up (api/heap.py)
        asked = 1000
        for _ in range(rounds):
            start = time.process_time()
            for _ in range(requests):
                await client.post("/v1/peak", json={"device": "Tesla P40"})
            times["peak"].append((time.process_time() - start) / requests)
            start = time.process_time()
            for _ in range(requests):
                asked += 1
                answer = await client.post("/v1/recommend", json={"params": 7e9 + (asked % 200) * 1e6,
                                                                  "tokens": 2e10 + asked * 1e7})
            assert answer.status_code == 200, answer.text
            times["new"].append((time.process_time() - start) / requests)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0]
    times = asyncio.run(measure(args.rounds, args.requests))
    med = {k: machine.median(v) for k, v in times.items()}
    ratio = med["peak"] / med["new"]
    lines = ["# HTTP in process (ASGI app, no sockets)", "",
             f"{args.rounds} rounds of {args.requests} requests each; load average (1 min) at start {load:.1f}.", "",
             "| request | CPU ms per request, each round | median |", "| --- | --- | --- |",
             *(f"| {k} | {', '.join(f'{1000 * x:.2f}' for x in v)} | {1000 * med[k]:.2f} |" for k, v in times.items()),
             "", f"peak / new question CPU: {ratio:.2f} (the new questions' rate over /v1/peak's, were the service's own "
             "CPU all that set them)."]
    machine.write("http_inprocess", {"rounds": args.rounds, "requests": args.requests, "loadavg_at_start": load,
                                     "cpu_per_request_s": times, "median_s": med, "ratio": ratio}, "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
