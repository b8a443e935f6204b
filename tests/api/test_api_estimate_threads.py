"""Engine estimates over HTTP run one at a time per process, waiting in the event loop; a recommend
question whose layouts are kept is answered where it arrives (issue 18 item 8)."""
from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

import api.routers.recommend as recommend_route
import api.routers.time as time_route
from api.app import create_app
from api.settings import Settings

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def _post_at_once(app, path: str, bodies: list[dict]) -> list[httpx.Response]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sizer") as client:
        return await asyncio.gather(*(client.post(path, json=body) for body in bodies))


def test_estimates_asked_together_run_one_at_a_time(monkeypatch):
    running, most, lock = [0], [0], threading.Lock()
    answer = time_route._time

    def observed(body, catalog):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)  # long enough for the others to arrive
        try:
            return answer(body, catalog)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(time_route, "_time", observed)
    bodies = [{"model": "llama-2-7b", "tokens": 1e9 + i, "device": "H100 SXM", "count": 8} for i in range(4)]
    responses = asyncio.run(_post_at_once(create_app(), "/v1/time", bodies))
    assert [r.status_code for r in responses] == [200] * 4
    assert most[0] == 1


def test_a_recommend_question_of_a_searched_shape_is_answered_without_a_worker_thread(monkeypatch):
    handed = []
    run_estimate = recommend_route.run_estimate

    async def counted(function, *args, **priced):
        handed.append(args[0])
        return await run_estimate(function, *args, **priced)

    monkeypatch.setattr(recommend_route, "run_estimate", counted)
    # without worker processes the search runs in the service's thread, which keeps the shape it found (with them,
    # a new shape is priced over the in-process budget and searched in a worker: tests/api/test_api_pricing.py)
    app = create_app(Settings(estimate_workers=0))
    shape = {"params": 5.1e9, "max_devices": 32}
    first, = asyncio.run(_post_at_once(app, "/v1/recommend", [{**shape, "tokens": 1e10}]))
    assert first.status_code == 200 and len(handed) == 1  # a new shape: searched in a worker thread
    later = asyncio.run(_post_at_once(app, "/v1/recommend", [{**shape, "tokens": 1e10 + i * 1e7} for i in range(1, 4)]))
    assert [r.status_code for r in later] == [200] * 3 and len(handed) == 1
    bad, = asyncio.run(_post_at_once(app, "/v1/recommend", [{**shape, "tokens": -1}]))
    assert bad.status_code == 422 and len(handed) == 1


@pytest.mark.parametrize("named", [{"model": "config.json"}, {"workload": "profile.yaml"}])
def test_a_recommend_body_naming_a_file_reads_nothing_on_the_server(monkeypatch, tmp_path, named):
    """Over HTTP models and workloads come by name: a body naming a file is refused (422) before the
    question is resolved, on the quick path as on the thread's (the file is never opened)."""
    import os

    path = tmp_path / next(iter(named.values()))
    path.write_text('{"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}', encoding="utf-8")
    app = create_app()
    opened, real_open = [], os.open
    monkeypatch.setattr(os, "open", lambda file, *a, **k: opened.append(str(file)) or real_open(file, *a, **k))
    body = {key: str(path) for key in named} | {"tokens": 1e9}
    response, = asyncio.run(_post_at_once(app, "/v1/recommend", [body]))
    assert response.status_code == 422 and str(path) not in opened
