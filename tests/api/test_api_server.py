"""`sizer serve` for real: a uvicorn process on a loopback port, talked to over a socket."""
from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from tests.conftest import stop_server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(port: int, method: str, path: str, body=None, raw: bytes | None = None, timeout: float = 120):
    # the timeout bounds a server that never answers; a loaded machine took over 5 s to answer a recommendation
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def served():
    """The port and the process of a `sizer serve` (one uvicorn worker: the process answers itself)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIZER_")}
    env["SIZER_API_TIMEOUT_S"] = "600"  # the request limit is no part of these questions (tests/conftest.py)
    process = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--host", "127.0.0.1", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # a bound on a server that never starts, not a test of how soon
        while True:
            try:
                if _call(port, "GET", "/healthz", timeout=1)[0] == 200:
                    break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"sizer serve did not come up: {process.stderr.read().decode()[-2000:] if process.poll() is not None else 'timeout'}")
            time.sleep(0.2)
        yield port, process
    finally:
        stop_server(process)


@pytest.fixture()
def server(served):
    return served[0]


def _cpu_seconds(process) -> float:
    """CPU time the server process has used [s]: unlike wall-clock time, other load on the machine does not stretch it."""
    import psutil

    times = psutil.Process(process.pid).cpu_times()
    return times.user + times.system


def test_served_over_a_socket(server):
    status, body = _call(server, "POST", "/v1/peak", {"device": "Tesla P40"})
    # spec §3.1 worked example, 1.176e13 FLOP/s to the spec's 4 digits
    assert status == 200 and json.loads(body)["peak"]["value"] == pytest.approx(1.176e13, rel=1e-3)


def test_bombs_are_refused_fast_and_the_server_goes_on(served):
    server, process = served
    for clock in ("10**10**10 Hz", "1e400 GHz", "nan GHz", "-1.5 GHz", "5 m", "x" * 5000):
        started = _cpu_seconds(process)
        status, body = _call(server, "POST", "/v1/peak", {"cores": 3840, "clock": clock}, timeout=30)
        assert status == 422 and b"clock" in body and _cpu_seconds(process) - started < 1, clock
    status, _ = _call(server, "POST", "/v1/peak", raw=b"[" * 70_000)
    assert status == 413
    assert _call(server, "GET", "/healthz")[0] == 200


def test_page_and_recommendation(server):
    status, page = _call(server, "GET", "/")
    assert status == 200 and b"<form" in page
    question = {"params": 7e9, "tokens": 2e10, "precision": "bf16"}
    status, body = _call(server, "POST", "/v1/recommend", question)
    assert status == 200 and json.loads(body)["ranked"]
    # the served answer is the in-process one: same devices, counts and times in the same order
    with TestClient(create_app()) as client:
        local = client.post("/v1/recommend", json=question).json()["ranked"]
    served = json.loads(body)["ranked"]
    assert [(r["device"], r["count"], r["training_time"]) for r in served] == \
        [(r["device"], r["count"], r["training_time"]) for r in local]
