"""Every question priced before it runs, and routed by its price (issue 43): over the in-process budget to
the worker pool, where a hang-up stops it; within it in the service's one estimate thread, whose slot an
abandoned estimate keeps until it has stopped; waits bounded for all clients together; and the client
behind a trusted proxy named by X-Forwarded-For."""
from __future__ import annotations

import asyncio
import threading

import pytest
from fastapi import Response
from fastapi.testclient import TestClient

from api.app import create_app
from api.deps import CLIENT, LANES, Lanes, run_estimate
from api.fair import FairQueue, QueueFull
from api.pool import WorkerPool
from api.settings import Settings

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# the 64-byte body: ~3.5 CPU-seconds a request, priced at zero and run in /v1/time's slot
DEEPSEEK_RANKING = {"task": "inference", "model": "deepseek-v3", "max_devices": 64}
CHEAP = {"params": "7B", "tokens": "1e10", "device": "H100 SXM", "count": 8}
EIGHT = [f"8x {name}" for name in ("H100 SXM", "H200", "A100 SXM 80GB", "MI300X", "L40S", "H100 PCIe", "B200",
                                   "RTX 4090")]


@pytest.fixture()
def pooled(monkeypatch):
    """Calls handed to the worker pool (function name, price), answered at once without a worker."""
    handed: list[str] = []

    async def fake_run(self, function, args, left, done):
        handed.append(function.__name__)
        done()
        return Response(content=b'{"pooled": true}', media_type="application/json")

    monkeypatch.setattr(WorkerPool, "run", fake_run)
    return handed


def test_the_64_byte_ranking_is_priced_over_the_budget_and_goes_to_the_pool(pooled):
    with TestClient(create_app(Settings(estimate_workers=1))) as client:
        answer = client.post("/v1/recommend", json=DEEPSEEK_RANKING)
    assert answer.status_code == 200 and answer.json() == {"pooled": True}
    assert pooled == ["_recommend"]


def test_a_new_shape_is_searched_in_the_pool_and_a_failed_search_leaves_the_question_its_usual_way(pooled):
    # a training ranking of a new shape: its search in the pool's shares (one: one worker); the fake pool's "shares"
    # are no search, so they are not kept, and the question goes to the pool whole, as before shares
    with TestClient(create_app(Settings(estimate_workers=1))) as client:
        assert client.post("/v1/recommend", json={"params": "6.9B", "tokens": "1e10", "max_devices": 16}).status_code == 200
    assert pooled == ["search_share", "_recommend"]


@pytest.mark.parametrize("path, body", [
    ("/v1/time", {**CHEAP, "count": None, "device": None, "have": EIGHT}),  # 8 have entries: 8 estimates
    ("/v1/inference", {"model": "llama-3.1-8b", "rate": 10, "slo_ttft": "1 s", "have": EIGHT}),
    ("/v1/memory", {"model": "deepseek-v3", "device": "H100 SXM", "count": 4096}),  # 0.25 CPU-s measured
])
def test_questions_priced_over_the_budget_go_to_the_pool(pooled, path, body):
    body = {k: v for k, v in body.items() if v is not None}
    with TestClient(create_app(Settings(estimate_workers=1))) as client:
        assert client.post(path, json=body).status_code == 200
    assert len(pooled) == 1


def test_a_cheap_question_stays_in_the_process(pooled):
    with TestClient(create_app(Settings(estimate_workers=1))) as client:
        answer = client.post("/v1/time", json=CHEAP)
    assert answer.status_code == 200 and "training_time" in answer.json() and pooled == []


def test_an_eight_entry_have_is_refused_at_eight_times_the_iterations_of_one():
    one = {"model": "llama-3.1-8b", "rate": 10, "slo_ttft": "1 s", "have": EIGHT[:1]}
    from sizer.facade import InferenceRequest, serving_iterations

    iterations = serving_iterations(InferenceRequest(**one))
    settings = Settings(estimate_workers=0, max_serving_iterations=4 * iterations)  # one fits, eight do not
    with TestClient(create_app(settings)) as client:
        assert client.post("/v1/inference", json=one).status_code == 200
        refused = client.post("/v1/inference", json={**one, "have": EIGHT})
    assert refused.status_code == 422
    assert "slo_ttft" in [item["loc"][-1] for item in refused.json()["detail"]]


def test_an_abandoned_estimate_keeps_the_one_thread_until_it_has_stopped():
    """Hung-up clients' estimates ran on side by side (about 40 threads, the process at 1.15 GB): now the
    slot of an abandoned estimate is freed when its thread ends, so at most one runs."""
    started, release, running, most = threading.Event(), threading.Event(), [0], [0]

    def estimate(_):
        running[0] += 1
        most[0] = max(most[0], running[0])
        started.set()
        release.wait(60)  # a bound on a broken test, not a time it is given
        running[0] -= 1
        return "done"

    async def scenario():
        lanes = Lanes(Settings(estimate_workers=0), None)
        LANES.set(lanes)
        CLIENT.set("a")
        first = asyncio.ensure_future(run_estimate(estimate, 1))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 60)
        first.cancel()  # the client hung up
        await asyncio.sleep(0.05)
        inline, _ = lanes.of(asyncio.get_running_loop())
        held = inline.busy  # still 1: the thread has not stopped
        second = asyncio.ensure_future(run_estimate(estimate, 2))
        await asyncio.sleep(0.05)
        waiting = not second.done() and inline.queued == 1
        release.set()
        answer = await asyncio.wait_for(second, 60)
        return held, waiting, answer

    held, waiting, answer = asyncio.run(scenario())
    assert held == 1 and waiting and answer == "done" and most[0] == 1


def test_waits_are_bounded_for_all_clients_together_with_retry_after():
    async def scenario():
        queue = FairQueue(slots=1, max_waiting=8, max_total=2)
        await queue.acquire("busy")
        waiters = [asyncio.ensure_future(queue.acquire(f"c{i}")) for i in range(2)]
        await asyncio.sleep(0)
        try:
            await queue.acquire("c9")
        except QueueFull as error:
            refused = error
        for waiter in waiters:
            waiter.cancel()
        await asyncio.sleep(0)
        return refused, queue.queued

    refused, left = asyncio.run(scenario())
    assert refused.status_code == 503 and refused.headers == {"Retry-After": "1"}
    assert "SIZER_API_MAX_WAITING" in refused.detail
    assert left == 0  # cancelled waits leave the count


def _clients_seen(monkeypatch, settings: Settings, headers: dict[str, str]) -> list[str]:
    import api.routers.time as time_route

    seen: list[str] = []
    answer = time_route._time

    def observed(body, catalog):
        seen.append(CLIENT.get())
        return answer(body, catalog)

    monkeypatch.setattr(time_route, "_time", observed)
    with TestClient(create_app(settings)) as client:  # the test client's peer address is 'testclient'
        assert client.post("/v1/time", json=CHEAP, headers=headers).status_code == 200
    return seen


def test_x_forwarded_for_is_ignored_by_default(monkeypatch):
    assert _clients_seen(monkeypatch, Settings(estimate_workers=0), {"x-forwarded-for": "198.51.100.7"}) == ["testclient"]


def test_x_forwarded_for_names_the_client_behind_a_trusted_proxy(monkeypatch):
    settings = Settings(estimate_workers=0, forwarded_allow_ips="*")  # the test client's peer is no IP: any peer
    assert _clients_seen(monkeypatch, settings, {"x-forwarded-for": "198.51.100.7"}) == ["198.51.100.7"]


def test_behind_named_proxies_the_client_is_the_rightmost_hop_not_a_proxy():
    proxies = Settings(forwarded_allow_ips="10.0.0.0/8, 192.0.2.1").trusted_proxies()
    # the client's own claim (left) is not believed over the address the trusted proxies saw it come from
    assert proxies.client("192.0.2.1", "203.0.113.1, 198.51.100.7, 10.0.0.5") == "198.51.100.7"
    assert proxies.client("198.51.100.9", "203.0.113.1") == "198.51.100.9"  # not a proxy: the header is ignored


def test_a_bad_proxy_address_is_refused_naming_it():
    with pytest.raises(ValueError, match="forwarded_allow_ips"):
        Settings(forwarded_allow_ips="10.0.0.0/33")
