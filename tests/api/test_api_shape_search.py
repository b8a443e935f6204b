"""A new shape's layout search over HTTP: searched once for every question that waits for it, in shares over the
worker processes (api.deps.search_once), then kept where the questions wait; and a worker that cannot read a job
ends instead of leaving its question hanging."""
from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.deps import CLIENT, LANES, Lanes, search_once
from api.pool import WorkerLost, WorkerPool
from api.settings import Settings

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class _Pool:
    """Runs each job in this process after a moment, recording it; ``size`` workers."""

    def __init__(self, size: int, fail: bool = False):
        self.size, self.fail, self.jobs = size, fail, []

    async def run(self, function, args, left, done):
        self.jobs.append(args)
        await asyncio.sleep(0.02)
        done()
        if self.fail:
            raise RuntimeError("the share failed")
        return function(*args)


def _lanes(pool: _Pool) -> Lanes:
    return Lanes(Settings(estimate_workers=pool.size), pool)  # type: ignore[arg-type]


async def _ask(lanes: Lanes, key: str, asked: int, busy: int = 0):
    kept: list[list] = []
    LANES.set(lanes)
    CLIENT.set("client")
    _, pooled = lanes.of(asyncio.get_running_loop())
    for _ in range(busy):  # slots another question holds
        await pooled.acquire("other")
    found = await asyncio.gather(*(search_once(key, lambda *a: a, ("shape",), kept.append) for _ in range(asked)))
    return found, kept, lanes.searches_of(asyncio.get_running_loop())


def test_questions_waiting_for_one_shape_share_one_search_split_over_the_free_workers():
    pool = _Pool(size=2)
    found, kept, running = asyncio.run(_ask(_lanes(pool), "7B shape", asked=8))
    assert found == [True] * 8
    assert pool.jobs == [("shape", 0, 2), ("shape", 1, 2)]  # one search, in two shares, for the eight questions
    assert kept == [[("shape", 0, 2), ("shape", 1, 2)]]  # kept once, its shares in order
    assert running == {}  # nothing left running


def test_a_search_takes_only_the_workers_free_now():
    pool = _Pool(size=4)
    found, kept, _ = asyncio.run(_ask(_lanes(pool), "7B shape", asked=3, busy=2))
    assert found == [True] * 3 and pool.jobs == [("shape", 0, 2), ("shape", 1, 2)]


def test_a_failed_search_sends_its_questions_their_usual_way():
    pool = _Pool(size=2, fail=True)
    found, kept, running = asyncio.run(_ask(_lanes(pool), "7B shape", asked=4))
    assert found == [False] * 4 and kept == [] and running == {}
    assert len(pool.jobs) == 2  # searched once, not once per question


def test_without_worker_processes_nothing_is_searched_apart():
    async def scenario():
        LANES.set(Lanes(Settings(estimate_workers=0), None))
        return await search_once("key", lambda *a: a, (), lambda shares: None)

    assert asyncio.run(scenario()) is False


def test_a_new_shape_searched_in_worker_shares_answers_as_the_process_does(monkeypatch, tmp_path):
    # shapes no other test asks (disk cache of its own): searched in two workers' shares, then answered here (a
    # question with a deadline, which may need suggestions worked out, then in a worker that finds the search kept)
    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path))
    body = {"params": 5.55e9, "tokens": 3.3e10, "max_devices": 16}
    late = {"params": 4.44e9, "tokens": 2.2e10, "max_devices": 16, "deadline": "30 d"}  # not quick, even once kept
    with TestClient(create_app(Settings(estimate_workers=0))) as client:
        here = client.post("/v1/recommend", json=body)
        here_late = client.post("/v1/recommend", json=late)
    for entry in tmp_path.glob("layout-basis-*"):
        entry.unlink()
    from sizer.memo import clear_all

    clear_all()  # this process must not hold the searches (nor the answers) either
    import api.routers.recommend as route

    searched, search = [], route.search_once

    async def recorded(*args, **kwargs):
        searched.append(await search(*args, **kwargs))
        return searched[-1]

    monkeypatch.setattr(route, "search_once", recorded)
    with TestClient(create_app(Settings(estimate_workers=2))) as client:
        there = client.post("/v1/recommend", json=body)
        again = client.post("/v1/recommend", json={**body, "tokens": 3.4e10})  # the same shape, kept now
        there_late = client.post("/v1/recommend", json=late)  # searched in shares, then answered in a worker
    clear_all()
    assert here.status_code == there.status_code == again.status_code == 200
    assert searched == [True, True]  # each new shape searched in shares once; the second question found it kept
    assert here_late.status_code == there_late.status_code == 200
    assert [r["device"] for r in here_late.json()["ranked"]] == [r["device"] for r in there_late.json()["ranked"]]
    assert list(tmp_path.glob("layout-basis-*"))  # the joined search kept on disk for other processes
    a, b = here.json(), there.json()
    assert [(r["device"], r["count"]) for r in a["ranked"]] == [(r["device"], r["count"]) for r in b["ranked"]]
    assert json.dumps(a["rejected"]) == json.dumps(b["rejected"])
    layout = ("zero", "tp", "pp", "ep", "recompute", "micro_batch", "fits", "bound")
    for x, y in zip(a["ranked"], b["ranked"], strict=True):
        assert [x[k] for k in layout] == [y[k] for k in layout]
        assert x["training_time"]["expected"] == pytest.approx(y["training_time"]["expected"], rel=1e-12)


def test_a_worker_that_cannot_read_its_job_ends_and_the_job_is_lost_not_left_waiting():
    class Unreadable:
        def __reduce__(self):  # pickles, but unpickling raises ValueError in the worker
            return int, ("not a number",)

    pool = WorkerPool(1, niceness=0)
    try:
        async def scenario():
            with pytest.raises(WorkerLost):
                await asyncio.wait_for(pool.run(print, (Unreadable(),), (30, 30), done=lambda: None), 60)
            return await asyncio.wait_for(pool.run(sum, ([1, 2],), (30, 30), done=lambda: None), 60)

        assert asyncio.run(scenario()) == 3  # and a fresh worker answers the next job
    finally:
        pool.close()


# Run in a worker (a builtin pickles by name): objects frozen out of the collector's scans, whether the search is
# imported and the core's files stamped
_WORKER_STATE = ("__import__('gc').get_freeze_count(), 'sizer.engine.search' in __import__('sys').modules, "
                 "__import__('sizer.plan.layout_basis').plan.layout_basis.core_stamps.cache_info().currsize > 0")


def test_a_worker_loads_the_search_and_freezes_its_start_up_before_its_first_job():
    pool = WorkerPool(1, niceness=0)
    try:
        frozen, search, stamped = asyncio.run(asyncio.wait_for(pool.run(eval, (_WORKER_STATE,), (30, 30), done=lambda: None), 60))
    finally:
        pool.close()
    assert frozen > 10_000 and search and stamped  # a first search waits on none of it, nor on a full collection


def test_a_client_with_too_many_waiting_gets_no_search_and_no_warning(caplog):
    pool = _Pool(size=1)
    lanes = Lanes(Settings(estimate_workers=1, max_client_waiting=1), pool)  # type: ignore[arg-type]

    async def scenario():
        LANES.set(lanes)
        CLIENT.set("client")
        _, pooled = lanes.of(asyncio.get_running_loop())
        await pooled.acquire("other")  # the one worker busy
        waiting = asyncio.ensure_future(pooled.acquire("client"))  # the client's one waiting request
        await asyncio.sleep(0)
        found = await search_once("key", lambda *a: a, ("shape",), lambda shares: None)
        waiting.cancel()
        return found

    with caplog.at_level("WARNING", logger="sizer.api"):
        assert asyncio.run(scenario()) is False  # its usual way answers 503 with Retry-After
    assert pool.jobs == [] and not caplog.records
