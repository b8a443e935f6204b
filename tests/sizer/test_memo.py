"""The core's one cache mechanism (issue 18 item 4): bounded, keyed by values, never by id(); a catalog
passed once is not kept alive by any cache."""
import ast
import gc
import threading
import weakref
from pathlib import Path

import pytest

from sizer.hardware.catalog import _name_index, load_catalog
from sizer.memo import keyed_cache
from sizer.plan.recommend import recommend
from sizer.schemas.recommendation import RecommendRequest

SIZER = Path(__file__).resolve().parents[2] / "sizer"


def test_a_keyed_cache_keeps_at_most_maxsize_answers_least_recently_used_out_first():
    calls = []

    @keyed_cache(maxsize=2, key=lambda x: x)
    def square(x):
        calls.append(x)
        return x * x

    assert square.peek(1) is None  # peek computes nothing
    square(1), square(2), square(1), square(3)  # 2 is the least recently used when 3 arrives
    assert square.cache_info().size == 2
    assert (square.peek(1), square.peek(2)) == (1, None)
    square(1)
    square(2)
    assert calls == [1, 2, 3, 2]


def test_an_error_is_never_cached():
    calls = []

    @keyed_cache(maxsize=4, key=lambda x: x)
    def fails(x):
        calls.append(x)
        raise ValueError(x)

    for _ in range(2):
        with pytest.raises(ValueError):
            fails(1)
    assert calls == [1, 1] and fails.cache_info().size == 0


def test_threads_share_one_bounded_cache():
    @keyed_cache(maxsize=8, key=lambda x: x % 16)
    def same(x):
        return x % 16

    threads = [threading.Thread(target=lambda i=i: [same(i + j) for j in range(200)]) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert same.cache_info().size <= 8


def test_no_cache_in_the_core_is_keyed_by_identity():
    # id() of a freed object is reused by the next one: a cache keyed by it answers for the wrong object,
    # or must keep every object alive to prevent that (issue 18: one kept every catalog ever passed)
    calls = [f"{path.relative_to(SIZER.parent)}:{node.lineno}" for path in SIZER.rglob("*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id"]
    assert calls == []


def test_a_catalog_passed_to_recommend_is_not_kept_alive(tmp_path):
    path = tmp_path / "extra.yaml"
    path.write_text("sources: {}\ndevices: []\n", encoding="utf-8")  # the built-in devices, in a new catalog object
    gone = _recommend_with_a_new_catalog(path)
    gc.collect()
    assert gone() is None


def _recommend_with_a_new_catalog(path: Path) -> weakref.ref:
    # in a frame of its own: pydantic's first build of a result model reads its caller's frame locals
    # (a snapshot that would hold the catalog while the test's frame lives), which a run of this file
    # alone meets and a full run, whose models are built, does not
    catalog = load_catalog(path)
    recommend(RecommendRequest(params=7e5, samples=6e4, epochs=4, precision="fp32", max_devices=1, kinds=["cpu"]),
              catalog)
    return weakref.ref(catalog)


def test_equal_catalogs_share_cached_answers(tmp_path):
    path = tmp_path / "extra.yaml"
    path.write_text("sources: {}\ndevices: []\n", encoding="utf-8")
    first, second = load_catalog(path), load_catalog(path)
    assert first is not second and first.key == second.key
    assert _name_index(first) is _name_index(second)  # kept under Catalog.key, not the object


def test_one_question_asked_by_many_threads_at_once_is_computed_once():
    # A burst of the same new question (a page's clients, the HTTP load check's first requests)
    # waits for the one evaluation in flight instead of repeating it in every thread.
    calls = []
    started = threading.Event()

    @keyed_cache(maxsize=4, key=lambda x: x)
    def slow(x):
        calls.append(x)
        started.set()
        threading.Event().wait(0.2)
        return x + 1

    answers = []
    threads = [threading.Thread(target=lambda: answers.append(slow(1))) for _ in range(8)]
    threads[0].start()
    started.wait(5)
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1] and answers == [2] * 8


def test_a_failed_computation_lets_a_waiting_thread_try_itself():
    calls = []
    started, release = threading.Event(), threading.Event()

    @keyed_cache(maxsize=4, key=lambda x: x)
    def flaky(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            release.wait(5)
            raise ValueError("first try fails")
        return x

    errors, answers = [], []

    def first():
        try:
            flaky(3)
        except ValueError as error:
            errors.append(error)

    a = threading.Thread(target=first)
    a.start()
    started.wait(5)
    b = threading.Thread(target=lambda: answers.append(flaky(3)))
    b.start()
    release.set()
    a.join()
    b.join()
    assert len(errors) == 1 and answers == [3] and calls == [3, 3]


def test_a_kept_answer_cannot_be_written_into():
    # one caller writing into a shared answer would change every later caller's: its arrays are read-only
    import numpy as np

    from sizer.memo import keyed_cache

    @keyed_cache(maxsize=4, key=lambda n: n)
    def table(n):
        return {"times": np.zeros(n), "pair": (np.ones(n), 1)}

    first = table(3)
    with pytest.raises(ValueError):
        first["times"][0] = 1.0
    with pytest.raises(ValueError):
        first["pair"][0][1] = 2.0
    assert table(3)["times"].sum() == 0.0


def test_unless_running_never_waits_for_an_answer_in_flight():
    # a service's event loop asks whether a search is at hand; it must not wait for one another thread runs
    started, release = threading.Event(), threading.Event()

    @keyed_cache(maxsize=4, key=lambda x: x)
    def slow(x):
        started.set()
        release.wait(5)
        return x + 1

    running = threading.Thread(target=slow, args=(1,))
    running.start()
    started.wait(5)
    assert slow.unless_running(1) is None  # in flight elsewhere: None at once
    assert slow.unless_running(2) == 3  # not in flight: computed here, and kept
    assert slow.peek(2) == 3
    release.set()
    running.join()
    assert slow.unless_running(1) == 2 and slow.cache_info().hits == 1
