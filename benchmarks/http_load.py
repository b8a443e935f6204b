"""The real HTTP server under concurrent load: throughput and p50/p99 latency per endpoint.

    python benchmarks/http_load.py [--concurrency 8] [--seconds 5] [--rounds 3] [--workers 1]
    python benchmarks/http_load.py --contract-runs 5

``--contract-runs N`` instead starts a fresh ``sizer serve`` N times and measures each as the contract check does
(``shared/checks/contract-engine``: a connection per request from 8 threads, 600 ``/v1/peak`` then 200 new
``/v1/recommend`` questions, so the first of each new shape is searched inside the 200), with the load average
before each run; it reports each run's ratio, their median and the smallest (goal >= 0.8 on every run, issue 41).
With ``--cold`` each run's service has a disk cache of its own holding everything but the kept layout searches, as
on the first run after a change to the core's files: all three shapes of the 200 questions are searched in the run.

Starts ``sizer serve`` on a free loopback port (access log off), waits for ``/healthz``, then
drives it with ``--concurrency`` keep-alive connections from one asyncio client (raw HTTP/1.1,
so that the client costs the shared CPU as little as possible). Phases of ``--seconds`` each
alternate ``GET /healthz``, ``POST /v1/peak`` and ``POST /v1/recommend`` for ``--rounds`` rounds,
so that all three see the same machine. Any status other than 200, a dropped connection or a
request over 30 s counts as an error; the goal is zero errors, and ``/v1/peak`` at no less than
half the request rate of ``/healthz``. Everything is bounded: at most 64 connections, 60 s per
phase, and the server is stopped at the end whatever happens.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402

SIZER = str(Path(sys.executable).with_name("sizer"))
ENDPOINTS = {
    "/healthz": ("GET", None),
    "/v1/peak": ("POST", {"device": "Tesla P40"}),
    "/v1/recommend": ("POST", {"params": 7e9, "tokens": 2e10, "precision": "bf16", "optimizer": "adamw",
                               "deadline": "30 d"}),
}
# A new question each time, as the contract check asks them (shared/checks/contract-engine): parameter
# counts 7e9 + i x 1e6 for i in 0..199 (cycled) with a new token count per request, so that no body repeats
# and the kept answers do not carry it; nearby counts share a generated shape, and so its layout search.
FRESH = "/v1/recommend (a new question each time)"
ENDPOINTS[FRESH] = ("POST", None)
_fresh = itertools.count(1)
REQUEST_TIMEOUT_S = 30.0
GOAL_PEAK_OVER_HEALTH = 0.5
GOAL_RECOMMEND_OVER_PEAK = 0.8  # /v1/recommend against /v1/peak on one worker (issue 41; 0.5 in the engine issue)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request_bytes(path: str, port: int) -> bytes:
    method, body = ENDPOINTS[path]
    if path == FRESH:
        n = next(_fresh)
        body = {"params": 7e9 + (n % 200) * 1e6, "tokens": 2e10 + n * 1e7}
        path = "/v1/recommend"
    payload = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    return head.encode() + b"\r\n" + payload


async def read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), None)
    if length is None:
        raise ConnectionError("response without Content-Length")
    await reader.readexactly(length)
    return status


async def connection(port: int, make, until: float, latencies: list[float], errors: list[str]) -> None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as error:
        errors.append(f"connect: {error}")
        return
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            writer.write(make())
            try:
                status = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT_S)
            except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError) as error:
                errors.append(f"{type(error).__name__}")
                return
            latencies.append(time.perf_counter() - start)
            if status != 200:
                errors.append(f"status {status}")
    finally:
        writer.close()


async def phase(port: int, path: str, concurrency: int, seconds: float) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    raw = request_bytes(path, port)
    make = (lambda: request_bytes(path, port)) if path == FRESH else (lambda: raw)
    start = time.perf_counter()
    await asyncio.gather(*(connection(port, make, start + seconds, latencies, errors) for _ in range(concurrency)))
    return {"elapsed": time.perf_counter() - start, "latencies": latencies, "errors": errors}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def wait_ready(port: int, server: subprocess.Popen, limit_s: float = 90) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with status {server.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(request_bytes("/healthz", port).replace(b"keep-alive", b"close"))
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the server did not answer /healthz in time")


def contract_run(env: dict[str, str]) -> dict:
    """One fresh service measured as the contract check measures it: 600 peaks, then 200 new questions."""
    import urllib.error
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    port = free_port()
    server = subprocess.Popen([SIZER, "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def post(path: str, body: dict) -> int | None:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                         method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as answer:
                answer.read()
                return answer.status
        except urllib.error.HTTPError as error:
            return error.code
        except OSError:
            return None

    latencies: list[float] = []  # [s] per request of the last phase, in the order asked

    def timed(path: str, body: dict) -> int | None:
        start = time.perf_counter()
        status = post(path, body)
        latencies.append(time.perf_counter() - start)
        return status

    def rate(path: str, bodies: list[dict]) -> tuple[float, int]:
        latencies.clear()
        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda body: timed(path, body), bodies))
        return len(bodies) / (time.perf_counter() - start), sum(s != 200 for s in statuses)

    try:
        wait_ready(port, server)
        load = os.getloadavg()[0]
        peak, peak_errors = rate("/v1/peak", [{"device": "Tesla P40"}] * 600)
        fresh, fresh_errors = rate("/v1/recommend", [{"params": 7e9 + i * 1e6, "tokens": 2e10 + i * 1e7}
                                                     for i in range(200)])
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    waits = sorted(latencies)
    return {"load_1min": load, "peak_per_s": peak, "fresh_recommend_per_s": fresh, "ratio": fresh / peak,
            "errors": peak_errors + fresh_errors, "fresh_p50_ms": 1e3 * percentile(waits, 0.5),
            "fresh_over_20ms": sum(w > 0.020 for w in waits), "fresh_max_ms": 1e3 * waits[-1]}


def cold_run(env: dict[str, str]) -> dict:
    """:func:`contract_run` with a disk cache of its own: the shared one's entries but the kept layout searches."""
    import shutil
    import tempfile

    from sizer.diskcache import cache_dir

    shared = cache_dir()
    with tempfile.TemporaryDirectory(prefix="sizer-cold-") as folder:
        for entry in (shared.iterdir() if shared is not None and shared.is_dir() else ()):
            if entry.is_file() and not entry.name.startswith("layout-basis-"):
                shutil.copy2(entry, folder)
        return contract_run({**env, "SIZER_CACHE_DIR": folder})


def contract_main(runs: int, cold: bool = False) -> int:
    env = {**os.environ, "SIZER_API_LOG_LEVEL": "warning"}
    results = [cold_run(env) if cold else contract_run(env) for _ in range(max(1, runs))]
    ratios = [r["ratio"] for r in results]
    ok = min(ratios) >= GOAL_RECOMMEND_OVER_PEAK and not any(r["errors"] for r in results)
    lines = ["# HTTP, as the contract check asks" + (" (no layout search on disk)" if cold else ""), "",
             f"{len(results)} fresh `sizer serve` runs; each: 600 `POST /v1/peak`, then 200 new `/v1/recommend` "
             "questions, a connection per request from 8 threads" + (
                 "; each service with a disk cache of its own holding all but the kept layout searches, so that each "
                 "run searches the questions' three shapes" if cold else "") + ".", "",
             "| run | load (1 min) | /v1/peak per s | /v1/recommend (new) per s | ratio | errors | new: p50, slowest "
             "[ms]; over 20 ms |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {i + 1} | {r['load_1min']:.1f} | {r['peak_per_s']:.0f} | {r['fresh_recommend_per_s']:.0f} | "
              f"{r['ratio']:.2f} | {r['errors']} | {r['fresh_p50_ms']:.1f}, {r['fresh_max_ms']:.0f}; "
              f"{r['fresh_over_20ms']} |" for i, r in enumerate(results)]
    lines += ["", "(The questions waiting on a shape's search are those over 20 ms; the slowest waited longest.)"]
    lines += ["", f"Ratio median {machine.median(ratios):.2f}, smallest {min(ratios):.2f} (goal >= "
                  f"{GOAL_RECOMMEND_OVER_PEAK} on every run). Goal met: {'yes' if ok else 'NO'}."]
    machine.write("http_contract_cold" if cold else "http_contract", {"runs": results, "cold": cold, "median_ratio": machine.median(ratios), "min_ratio": min(ratios),
                                    "goal": GOAL_RECOMMEND_OVER_PEAK, "goals_met": ok}, "\n".join(lines))
    print("\n".join(lines))
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--contract-runs", type=int, default=0)
    parser.add_argument("--cold", action="store_true", help="with --contract-runs: no layout search on disk")
    args = parser.parse_args()
    if args.contract_runs:
        return contract_main(args.contract_runs, args.cold)
    concurrency, seconds = max(1, min(args.concurrency, 64)), max(0.5, min(args.seconds, 60.0))
    port = free_port()
    env = {**os.environ, "SIZER_API_LOG_LEVEL": "warning"}
    server = subprocess.Popen([SIZER, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(args.workers)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    results = {path: {"elapsed": 0.0, "latencies": [], "errors": []} for path in ENDPOINTS}
    try:
        wait_ready(port, server)
        for path in ENDPOINTS:  # warm-up: first requests import and build what each route needs
            asyncio.run(phase(port, path, 1, 0.5))
        for _ in range(max(1, args.rounds)):
            for path in ENDPOINTS:
                got = asyncio.run(phase(port, path, concurrency, seconds))
                for key in ("latencies", "errors"):
                    results[path][key] += got[key]
                results[path]["elapsed"] += got["elapsed"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    summary = {}
    for path, got in results.items():
        summary[path] = {"requests": len(got["latencies"]), "errors": len(got["errors"]),
                         "error_kinds": sorted(set(got["errors"])),
                         "rate_per_s": len(got["latencies"]) / got["elapsed"] if got["elapsed"] else 0.0,
                         "p50_ms": percentile(got["latencies"], 0.50) * 1e3,
                         "p99_ms": percentile(got["latencies"], 0.99) * 1e3}
    ratio = summary["/v1/peak"]["rate_per_s"] / summary["/healthz"]["rate_per_s"]
    recommend_ratio = summary["/v1/recommend"]["rate_per_s"] / summary["/v1/peak"]["rate_per_s"]
    errors = sum(s["errors"] for s in summary.values())
    fresh_ratio = summary[FRESH]["rate_per_s"] / summary["/v1/peak"]["rate_per_s"]
    ok = errors == 0 and ratio >= GOAL_PEAK_OVER_HEALTH and min(recommend_ratio, fresh_ratio) >= GOAL_RECOMMEND_OVER_PEAK
    lines = ["# HTTP under load", "",
             f"`sizer serve` ({args.workers} worker) on loopback; {concurrency} keep-alive connections; "
             f"{args.rounds} rounds of {seconds:g} s per endpoint, endpoints alternating.", "",
             "| endpoint | requests | errors | requests/s | p50 ms | p99 ms |", "| --- | --- | --- | --- | --- | --- |"]
    for path, s in summary.items():
        lines.append(f"| `{ENDPOINTS[path][0]} {path}` | {s['requests']} | {s['errors']} | {s['rate_per_s']:,.1f} | "
                     f"{s['p50_ms']:.1f} | {s['p99_ms']:.1f} |")
    lines += ["", f"/v1/recommend rate / /v1/peak rate = {recommend_ratio:.2f} (goal >= {GOAL_RECOMMEND_OVER_PEAK}, the engine "
                  f"issue; a repeated question, answered from the kept answers); a new question each time: "
                  f"{fresh_ratio:.2f} (goal >= {GOAL_RECOMMEND_OVER_PEAK})."]
    lines += ["", f"/v1/peak rate / /healthz rate = {ratio:.2f} (goal >= {GOAL_PEAK_OVER_HEALTH}); errors: {errors} "
                  f"(goal 0). Goals met: {'yes' if ok else 'NO'}."]
    machine.write("http_load", {"concurrency": concurrency, "seconds_per_phase": seconds, "rounds": args.rounds,
                                "workers": args.workers, "bodies": {p: b for p, (_, b) in ENDPOINTS.items()},
                                "endpoints": summary, "peak_over_healthz": ratio, "recommend_over_peak": recommend_ratio, "fresh_recommend_over_peak": fresh_ratio, "errors": errors, "goals_met": ok},
                  "\n".join(lines))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
