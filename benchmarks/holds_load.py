"""Issue 43's denial-of-service reproducers: a victim's cheap question while every endpoint's dearest admitted
body is sent, the server's memory after a fire-and-forget burst, and connections trickling their bodies.

    python benchmarks/holds_load.py [--seconds 20]

Starts ``sizer serve`` (default settings: one worker process per core for questions priced over the in-process
budget) on a free loopback port; a victim at 127.0.0.1 asks the cheap ``POST /v1/time`` question (7B, 1e10
tokens, 8 H100) one at a time, every 0.3 s, and its latencies are recorded in each phase:

1. **The 64-byte ranking** (the contract check's part a): two clients post
   ``{"task":"inference","model":"deepseek-v3","max_devices":64}`` back to back (3.5-4.2 CPU-s each).
2. **The dearest body of each endpoint**: four attackers (127.0.0.2-5) cycle through the most expensive
   question each endpoint admits: the serving ranking with ``max_devices`` 1,024, a training ranking of a new
   shape with ``max_devices`` 65,536, the dearest serving load under the iteration budget, ``have`` lists of 8
   entries of 4,096 devices for time and serving, memory and plan on 65,536 devices.
3. **Fire-and-forget**: two addresses (127.0.0.2-3), four threads each, send those bodies and hang up at once,
   for ``--seconds``; the server's resident memory is read before, at the end and 10 s after (goal: back within
   20 % of its start; the issue saw 86 MB grow to 1.15 GB, never returned).
4. **Trickled bodies**: 32 addresses (127.0.0.2-33) each hold 32 connections that send complete headers, then a
   body byte a second (1,024 connections, past the 1,000 limit), re-opening each one closed; the victim must
   still be answered.

Goals: victim p99 <= 1 s in phases 1 and 2 and every victim request answered 200 (429/503 counted apart in
phase 4, where the limits shed load). Results go to benchmarks/results/holds_load.{json,md} with the load
average before and after: the machine is shared, so the figures are read beside it. Everything is bounded:
phases of at most 60 s, sockets time out, the server is stopped at the end.
"""
from __future__ import annotations

import argparse
import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import abuse_load  # noqa: E402
import machine  # noqa: E402
from abuse_load import free_port  # noqa: E402

SIZER = str(Path(sys.executable).with_name("sizer"))
CHEAP = {"params": "7B", "tokens": "1e10", "device": "H100 SXM", "count": 8}
RANKING_64 = {"task": "inference", "model": "deepseek-v3", "max_devices": 64}
HAVE = ["4096x H100 SXM", "4096x H200", "4096x A100 SXM 80GB", "4096x MI300X", "4096x B200", "4096x H100 PCIe",
        "4096x L40S", "4096x MI325X"]
_shapes = itertools.count(1)


def dearest(turn: int) -> tuple[str, dict]:
    """The ``turn``-th of the dearest bodies each endpoint admits (a training ranking of a new shape each time)."""
    bodies = [
        ("/v1/recommend", {"task": "inference", "model": "deepseek-v3", "max_devices": 1024}),
        ("/v1/recommend", {"params": f"{7 + next(_shapes) * 0.013:.3f}B", "tokens": "1e10", "max_devices": 65536}),
        ("/v1/inference", {"model": "deepseek-v3", "device": "H200", "count": 8, "users": 100000, "slo_e2e": "1 ms",
                           "max_running": 4096, "token_budget": 512}),
        ("/v1/time", {"model": "deepseek-v3", "tokens": "1e12", "have": HAVE}),
        ("/v1/inference", {"model": "deepseek-v3", "have": HAVE}),
        ("/v1/memory", {"model": "deepseek-v3", "device": "H100 SXM", "count": 65536}),
        ("/v1/plan", {"model": "deepseek-v3", "tokens": "1e12", "device": "H100 SXM", "count": 65536}),
    ]
    return bodies[turn % len(bodies)]


def request(port: int, path: str, body: dict, source: str = "127.0.0.1", timeout: float = 30,
            hang_up: bool = False) -> int:
    """abuse_load's raw POST; a hang-up here is fire-and-forget (no wait after sending)."""
    return abuse_load.request(port, path, body, source=source, timeout=timeout, hang_up=hang_up, hang_up_after_s=0.0)


def victim(port: int, seconds: float) -> dict:
    latencies, statuses = [], []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        started = time.perf_counter()
        statuses.append(request(port, "/v1/time", CHEAP))
        latencies.append(time.perf_counter() - started)
        time.sleep(0.3)
    shed = sum(s in (429, 503) for s in statuses)
    return {"requests": len(latencies), "non_200": sum(s != 200 for s in statuses) - shed, "shed_429_503": shed,
            "p50_s": machine.quantile(latencies, 0.5), "p99_s": machine.quantile(latencies, 0.99),
            "max_s": max(latencies), "statuses": {str(k): statuses.count(k) for k in sorted(set(statuses))}}


def _count(counts: dict, lock: threading.Lock, key: str) -> None:
    with lock:
        counts[key] = counts.get(key, 0) + 1


def ranking_client(port: int, source: str, stop: float, counts: dict, lock: threading.Lock) -> None:
    while time.monotonic() < stop:
        _count(counts, lock, str(request(port, "/v1/recommend", RANKING_64, source=source)))


def dearest_client(port: int, source: str, stop: float, counts: dict, lock: threading.Lock) -> None:
    turn = int(source.rsplit(".", 1)[1])
    while time.monotonic() < stop:
        turn += 1
        path, body = dearest(turn)
        _count(counts, lock, f"{path} {request(port, path, body, source=source)}")


def fire_and_forget(port: int, source: str, stop: float, counts: dict, lock: threading.Lock) -> None:
    turn = int(source.rsplit(".", 1)[1]) * 1000 + threading.get_ident() % 1000
    while time.monotonic() < stop:
        turn += 1
        path, body = (("/v1/recommend", RANKING_64) if turn % 3 == 0 else
                      ("/v1/time", {**CHEAP, "tokens": f"{1e10 + turn:.0f}"}) if turn % 3 == 1 else dearest(turn))
        _count(counts, lock, str(request(port, path, body, source=source, hang_up=True)))


def trickle(port: int, source: str, stop: float, counts: dict, lock: threading.Lock) -> None:
    head = b"POST /v1/time HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{"
    held: list[socket.socket] = []
    try:
        while time.monotonic() < stop:
            for sock in list(held):
                try:
                    sock.sendall(b" ")
                except OSError:
                    held.remove(sock)
                    sock.close()
                    _count(counts, lock, "closed by server")
            while len(held) < 32 and time.monotonic() < stop:
                try:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(source, 0))
                    sock.sendall(head)
                    held.append(sock)
                    _count(counts, lock, "opened")
                except OSError:
                    _count(counts, lock, "refused at connect")
                    break
            time.sleep(1.0)
    finally:
        for sock in held:
            sock.close()


def phase(port: int, seconds: float, sources: list[str], target, threads_each: int = 1, victim_too: bool = True) -> dict:
    stop = time.monotonic() + seconds + (1 if victim_too else 0)
    counts: dict = {}
    lock = threading.Lock()
    threads = [threading.Thread(target=target, args=(port, s, stop, counts, lock), daemon=True)
               for s in sources for _ in range(threads_each)]
    for t in threads:
        t.start()
    result = None
    if victim_too:
        time.sleep(1)  # the abuse under way before the victim asks
        result = victim(port, seconds)
    for t in threads:
        t.join(45)
    return {"victim": result, "abuse": counts, "load_after": [round(x, 2) for x in os.getloadavg()]}


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` [MB] (0 where it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children_rss_mb(pid: int) -> float:
    """Resident memory of ``pid``'s child processes (the estimate workers) [MB]."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            total += sum(rss_mb(int(child)) for child in (task / "children").read_text().split())
        except OSError:
            pass
    return total


def wait_ready(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if request(port, "/v1/time", CHEAP, timeout=5) == 200:
            return
        if server.poll() is not None:
            raise SystemExit(f"sizer serve ended: {server.stderr.read().decode()[-2000:]}")
        time.sleep(0.3)
    raise SystemExit("sizer serve did not come up in 60 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    seconds = max(2.0, min(args.seconds, 60.0))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIZER_API_")}
    env["SIZER_API_LOG_LEVEL"] = "error"
    load_before = [round(x, 2) for x in os.getloadavg()]
    server = subprocess.Popen([SIZER, "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_ready(port, server)
        for turn in range(7):  # every route's first answer builds its tables: not growth
            request(port, *dearest(turn), timeout=30)
        quiet = victim(port, 3)
        memory = {"start_mb": rss_mb(server.pid), "workers_start_mb": children_rss_mb(server.pid)}
        burst = phase(port, seconds, ["127.0.0.2", "127.0.0.3"], fire_and_forget, threads_each=4, victim_too=False)
        memory["end_of_burst_mb"] = rss_mb(server.pid)
        time.sleep(10)
        memory["after_10_s_mb"] = rss_mb(server.pid)
        memory["workers_after_mb"] = children_rss_mb(server.pid)
        ranking = phase(port, seconds, ["127.0.0.1", "127.0.0.1"], ranking_client)
        dearest_bodies = phase(port, seconds, [f"127.0.0.{i}" for i in range(2, 6)], dearest_client)
        trickled = phase(port, seconds, [f"127.0.0.{i}" for i in range(2, 34)], trickle)
        memory["at_the_end_mb"] = rss_mb(server.pid)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    load_after = [round(x, 2) for x in os.getloadavg()]
    returned = memory["after_10_s_mb"] <= 1.2 * memory["start_mb"]
    fast = all(p["victim"]["p99_s"] <= 1.0 and p["victim"]["non_200"] == 0 for p in (ranking, dearest_bodies))
    served = trickled["victim"]["non_200"] == 0 and trickled["victim"]["shed_429_503"] < trickled["victim"]["requests"]
    rows = [("alone", quiet, {}, load_before),
            ("2 clients, the 64-byte deepseek-v3 ranking", ranking["victim"], ranking["abuse"], ranking["load_after"]),
            ("4 attackers, each endpoint's dearest body", dearest_bodies["victim"], dearest_bodies["abuse"],
             dearest_bodies["load_after"]),
            ("32 addresses x 32 trickled bodies", trickled["victim"], trickled["abuse"], trickled["load_after"])]
    lines = ["# Issue 43: every expensive request priced, slow bodies evicted, memory returned", "",
             f"`sizer serve` (default settings) on loopback; the victim asks `POST /v1/time` every 0.3 s for "
             f"{seconds:g} s per phase.", "",
             "| phase | victim requests | not 200 | 429/503 | p50 s | p99 s | max s | load after | abuse (status: count) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, v, abuse, load in rows:
        lines.append(f"| {name} | {v['requests']} | {v['non_200']} | {v['shed_429_503']} | {v['p50_s']:.3f} | "
                     f"{v['p99_s']:.3f} | {v['max_s']:.3f} | {load[0]} | "
                     f"{', '.join(f'{k}: {n}' for k, n in sorted(abuse.items())) or '-'} |")
    lines += ["", f"Fire-and-forget burst ({seconds:g} s, 2 addresses x 4 threads, {sum(burst['abuse'].values())} "
                  f"requests hung up on at once): the service's resident memory {memory['start_mb']:.0f} MB before, "
                  f"{memory['end_of_burst_mb']:.0f} MB at its end, {memory['after_10_s_mb']:.0f} MB 10 s later "
                  f"({memory['after_10_s_mb'] / memory['start_mb'] - 1:+.0%}); the estimate workers "
                  f"{memory['workers_start_mb']:.0f} MB before, {memory['workers_after_mb']:.0f} MB after; "
                  f"{memory['at_the_end_mb']:.0f} MB at the end of all phases.", "",
              f"Goals: victim p99 <= 1 s and every victim request 200 with the ranking and the dearest bodies: "
              f"{'met' if fast else 'NOT met'}; memory within 20 % of its start after the burst: "
              f"{'met' if returned else 'NOT met'}; the victim served among trickled bodies: "
              f"{'yes' if served else 'NO'}. Load average before {load_before}, after {load_after} (`uptime`; the "
              f"machine is shared with other work)."]
    machine.write("holds_load", {"seconds_per_phase": seconds, "victim_body": CHEAP, "ranking_body": RANKING_64,
                                 "alone": quiet, "ranking": ranking, "dearest_bodies": dearest_bodies,
                                 "fire_and_forget": burst, "memory": memory, "trickled_bodies": trickled,
                                 "loadavg_before": load_before, "loadavg_after": load_after,
                                 "goals_met": {"p99": fast, "memory": returned, "trickle": served}},
                  "\n".join(lines))
    print("\n".join(lines))
    return 0 if fast and returned and served else 1


if __name__ == "__main__":
    raise SystemExit(main())
