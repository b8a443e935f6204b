"""A recommendation's layout search is kept by what it depends on (issue 18 item 8): nearby
parameter counts share a generated shape and its search; the run's length is applied after, and the
answer is the one a fresh search gives."""
from __future__ import annotations

import math
import subprocess
import sys

import pytest

import sizer.plan.layout_basis as layout_basis
import sizer.plan.recommend as recommend_module
from sizer.engine.job import default_batch_tokens, resolve_job
from sizer.plan.layout_basis import layout_key
from sizer.plan.recommend import recommend
from sizer.schemas.base import WorkloadRequest
from sizer.schemas.recommendation import RecommendRequest
from sizer.workloads.decoder_shape import decoder_for_params


def _forget():
    layout_basis._kept.cache_clear()


@pytest.fixture
def searches(monkeypatch):
    calls = []
    search = layout_basis._search
    monkeypatch.setattr(layout_basis, "_search", lambda *a, **k: calls.append(1) or search(*a, **k))
    monkeypatch.setenv("SIZER_CACHE_DIR", "off")  # searches counted in this process, none read from disk
    _forget()
    yield calls
    _forget()


def test_nearby_counts_share_a_shape_and_its_search(searches, catalog):
    # the contract check's new questions: 7e9 + i x 1e6 parameters, a new token count each
    counts = [7e9 + i * 1e6 for i in range(0, 200, 9)]
    shapes = {decoder_for_params(p)[0] for p in counts}
    assert 1 < len(shapes) < len(counts) / 4  # a handful of shapes, not one per count
    for i, params in enumerate(counts):
        recommend(RecommendRequest(params=params, tokens=2e10 + i * 1e7, max_devices=8, kinds=["gpu"]), catalog)
    assert len(searches) == len(shapes)


def test_the_key_leaves_out_the_length_only():
    short, long = (resolve_job(WorkloadRequest(params=7e9, tokens=t, batch_size=2 ** 22)) for t in (1e9, 3e11))
    assert layout_key(short) == layout_key(long)
    # a default batch scales with the run's compute (DeepSeek LLM's rule): lengths 300x apart get batches 4x
    # apart, so the key differs through the batch, not the length
    defaulted = [resolve_job(WorkloadRequest(params=7e9, tokens=t)) for t in (1e9, 3e11)]
    assert defaulted[0].batch_size < defaulted[1].batch_size
    assert layout_key(defaulted[0]) != layout_key(defaulted[1])
    other_batch = resolve_job(WorkloadRequest(params=7e9, tokens=1e9, batch_size=2 ** 20))
    other_precision = resolve_job(WorkloadRequest(params=7e9, tokens=1e9, precision="fp32"))
    other_shape = resolve_job(WorkloadRequest(params=13e9, tokens=1e9))
    assert len({layout_key(j) for j in (short, other_batch, other_precision, other_shape)}) == 4


@pytest.mark.parametrize("question", [
    dict(params=7e9, tokens=2e10),
    dict(params=7.05e9, tokens=3.3e11, deadline="20 d"),
    dict(params=1.3e9, tokens=2.6e10, objective="cost", pricing="buy", budget="20000 USD"),
    dict(params=1e8, samples=1e6, batch_size=1000),  # a batch no count of 2^k devices splits evenly
])
def test_a_kept_search_answers_as_a_fresh_one(catalog, question):
    base = dict(max_devices=16, **question)
    recommend(RecommendRequest(**{**base, **_longer(base)}), catalog)  # keeps the search of another length
    kept = recommend(RecommendRequest(**base), catalog).model_dump()
    _forget()
    fresh = recommend(RecommendRequest(**base), catalog).model_dump()
    assert _close(kept, fresh)


def _longer(question: dict) -> dict:
    field = "tokens" if "tokens" in question else "samples"
    return {field: question[field] * 3.7}


def _close(a, b, path="") -> bool:
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        return all(_close(a[k], b[k], f"{path}.{k}") for k in a)
    if isinstance(a, list):
        assert len(a) == len(b), path
        return all(_close(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b, strict=True)))
    if isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12), path
        return True
    assert a == b, path
    return True


def test_a_nearby_batch_is_not_shared_between_lengths(catalog):
    # 1,000 samples per step do not split over 16 devices: a layout runs 992 or 1,008, whose steps
    # ceil(S/B) round differently per length, so the search is kept per length
    job = resolve_job(WorkloadRequest(params=1e8, samples=1e6, batch_size=1000))
    devices = recommend_module._devices(catalog, ("gpu",))
    kept = layout_basis.basis(job, layout_basis.SearchSpace(devices, (catalog.key, ("gpu",)), (1, 2, 4, 8, 16)))
    assert not kept.token_free


def test_a_length_bound_search_runs_once_for_its_own_length(searches, catalog):
    # the shape's first search is that length's own: asking it again, or for it, searches no more;
    # another length gets its own search
    space = layout_basis.SearchSpace(recommend_module._devices(catalog, ("gpu",)), (catalog.key, ("gpu",)),
                                     (1, 2, 4, 8, 16))
    first = resolve_job(WorkloadRequest(params=1e8, samples=1e6, batch_size=1000))
    assert not layout_basis.basis(first, space).token_free
    layout_basis.basis(first, space)
    assert len(searches) == 1
    longer = resolve_job(WorkloadRequest(params=1e8, samples=3.7e6, batch_size=1000))
    layout_basis.basis(longer, space)
    assert len(searches) == 2


def test_the_engine_runs_the_shape_of_a_bare_count():
    # FLOP and memory come from the generated shape's own parameters, and so does the default batch
    for params in (6.3e9, 6.45e9, 6.55e9, 7e9):
        job = resolve_job(WorkloadRequest(params=params, tokens=1e10))
        shape = decoder_for_params(params)[0]
        assert job.params == pytest.approx(shape.params_total(), rel=1e-9)
        # the rule's batch for the shape's own compute, in a power of two of whole sequences
        rule = default_batch_tokens(shape.params_total(), 1e10)
        sequences = 2.0 ** round(math.log2(rule / job.tokens_per_sample))
        assert job.batch_size == sequences


def test_a_question_is_quick_once_its_shape_is_searched(catalog):
    """quick_question says whether recommend_json needs no search (the service then answers where the
    question arrives): not before the shape's search, yes after it for any length, never where
    suggestions may be worked out; a refused question is quick."""
    from sizer.plan.recommend import quick_question, recommend_json

    def answered_quickly(request, catalog):
        return quick_question(request, catalog)[0]

    _forget()
    first = RecommendRequest(params=7e9, tokens=2e10, max_devices=64)
    assert not answered_quickly(first, catalog)
    recommend_json(first, catalog)
    assert answered_quickly(RecommendRequest(params=7e9, tokens=3.1e10, max_devices=64), catalog)
    quick = quick_question(RecommendRequest(params=7e9, tokens=3.1e10, max_devices=64), catalog)[1]
    assert quick is not None and quick.kept is not None  # handed to recommend_json: not looked up again
    assert not answered_quickly(RecommendRequest(params=7e9, tokens=3.1e10, max_devices=64, suggest=2), catalog)
    assert not answered_quickly(RecommendRequest(params=7e9, tokens=3.1e10, max_devices=64, deadline="2 d"), catalog)
    assert not answered_quickly(RecommendRequest(params=3.3e10, tokens=3.1e10, max_devices=64), catalog)
    assert answered_quickly(RecommendRequest(params=7e9, tokens=2e10, kinds=[]), catalog)  # refused at once
    _forget()


def test_a_search_kept_on_disk_is_the_search(monkeypatch, tmp_path, catalog):
    # a new process reads the default question's search from the disk cache: the same answer, no search
    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path))
    question = RecommendRequest(params=1.3e9, tokens=2.6e10, max_devices=8, kinds=["gpu"])
    _forget()
    searched = recommend(question, catalog)
    calls = []
    search = layout_basis._search
    monkeypatch.setattr(layout_basis, "_search", lambda *a, **k: calls.append(1) or search(*a, **k))
    _forget()  # as a new process: nothing in memory
    kept = recommend(question, catalog)
    assert calls == [] and any(tmp_path.glob("layout-basis-*.pickle"))
    assert [(r.name, r.count, r.training_time) for r in kept.ranked] == \
        [(r.name, r.count, r.training_time) for r in searched.ranked]


def test_a_search_another_process_left_on_disk_is_taken_without_searching(monkeypatch, tmp_path, catalog):
    # a service's worker process searched a new shape (and left it in the disk cache); the service's own process
    # then answers that shape's questions where they arrive, reading the search instead of handing each one over
    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path))
    question = recommend_module._question(RecommendRequest(params=7e9, tokens=2e10, max_devices=8, kinds=["gpu"]),
                                          catalog)
    space = recommend_module._space(question, catalog)
    _forget()
    assert layout_basis.kept_basis(question.job, space) is None  # nothing on disk: None, nothing searched
    searched = layout_basis.basis(question.job, space)  # "the worker": searches, writes it
    _forget()  # "the service's process": nothing kept in its memory
    calls = []
    monkeypatch.setattr(layout_basis, "_search", lambda *a, **k: calls.append(1))
    assert layout_basis.kept_basis(question.job, space, disk=False) is None  # memory only
    taken = layout_basis.kept_basis(question.job, space)
    assert calls == [] and taken is not None
    assert (taken.step_expected == searched.step_expected).all() and taken.table.devices == question.devices
    assert layout_basis.kept_basis(question.job, space, disk=False) is taken  # and kept in memory from then on
    _forget()


def test_core_stamps_are_every_core_module_and_yaml_in_path_order() -> None:
    """The disk key of a kept search stamps every .py and .yaml file of the core, sorted as paths: the same
    stamps as Path.rglob with file_stamp gives (the walk only makes them cheaper)."""
    from pathlib import Path

    from sizer import plan
    from sizer.diskcache import file_stamp, key_of
    from sizer.plan.layout_basis import core_files, core_stamps

    root = Path(plan.__file__).resolve().parent.parent
    expected = tuple(file_stamp(path) for path in sorted((*root.rglob("*.py"), *root.rglob("*.yaml"))))
    core_stamps.cache_clear()
    assert core_files() == expected
    assert core_stamps() == key_of(expected)  # what the disk keys take: the digest of those stamps
    assert any(path.endswith("error_spread.yaml") for path, _, _ in expected)


KEPT_ANSWER = """
import sys
from sizer.facade import RecommendRequest, recommend_json
from sizer.hardware.catalog import load_catalog
recommend_json(RecommendRequest(params=7e9, tokens=2e10, max_devices=8), load_catalog())
print(" ".join(name for name in ("sizer.engine.search", "sizer.engine.evaluate", "sizer.engine.roofline",
                                  "sizer.engine.summary") if name in sys.modules))
"""


def test_a_kept_search_is_answered_without_importing_the_search(tmp_path):
    # a command whose layouts are on disk (the default question, asked again) needs the workload and the kept layouts,
    # not the search and roofline that made them: importing those was ~10 % of `sizer recommend`'s start-up
    env = {"SIZER_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first, again = (subprocess.run([sys.executable, "-c", KEPT_ANSWER], capture_output=True, text=True, env=env,
                                   check=True).stdout.split() for _ in range(2))
    assert "sizer.engine.search" in first  # the first process searched (and left the layouts on disk)
    assert again == []


def _equal_but_rounding(whole: layout_basis.Basis, joined: layout_basis.Basis) -> None:
    """Every chosen layout, flag and reason the same; every figure the same but for BLAS's rounding, which sums a
    row by where it lies in the matrix (a device searched among half the catalog lies elsewhere)."""
    import dataclasses

    import numpy as np

    for field in dataclasses.fields(layout_basis.Basis):
        a, b = getattr(whole, field.name), getattr(joined, field.name)
        if field.name == "table":
            continue
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            assert a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), field.name
        elif isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field.name
        else:
            assert a == b, field.name


@pytest.mark.parametrize("question", [
    dict(params=7e9, tokens=2e10),
    dict(model="mixtral-8x7b", tokens=1e12),  # experts: expert parallelism searched too
    dict(params=1.3e9, tokens=1e10, precision="fp8", kinds=["gpu", "cpu"], headroom=True),
])
@pytest.mark.parametrize("shares", [2, 3])
def test_a_search_in_shares_is_the_whole_search(catalog, question, shares):
    # a service splits a new shape's search over its worker processes, a share of the devices each
    q = recommend_module._question(RecommendRequest(**question), catalog)
    space = recommend_module._space(q, catalog)
    whole = layout_basis._search(q.job, space)
    parts = [layout_basis.search_share(q.job, space, k, shares) for k in range(shares)]
    assert sorted(i for k in range(shares) for i in layout_basis.share_rows(len(q.devices), k, shares)) == \
        list(range(len(q.devices)))  # every device in one share, once
    _equal_but_rounding(whole, layout_basis.join_shares(parts))


def test_a_search_kept_from_shares_is_found_by_every_question_of_its_shape(monkeypatch, tmp_path, catalog):
    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path))
    _forget()
    request = RecommendRequest(params=7.01e9, tokens=2.1e10)
    question = recommend_module._question(request, catalog)
    search = recommend_module.pending_search(question, catalog)
    assert search is not None and not recommend_module.quick_question(request, catalog)[0]
    shares = [recommend_module.search_share(search, catalog, k, 2) for k in range(2)]
    recommend_module.keep_search(search, catalog, shares)

    def no_search(*args, **kwargs):
        raise AssertionError("searched again")

    search_whole = layout_basis._search
    monkeypatch.setattr(layout_basis, "_search", no_search)
    nearby = RecommendRequest(params=7.02e9, tokens=2.2e10)  # the same shape, another length
    assert recommend_module.quick_question(request, catalog)[0] and recommend_module.quick_question(nearby, catalog)[0]
    assert recommend_module.pending_search(recommend_module._question(nearby, catalog), catalog) is None
    answered = recommend(nearby, catalog).model_dump()
    _forget()
    assert list(tmp_path.glob("layout-basis-*"))  # kept on disk too: another process takes it from there
    monkeypatch.setattr(layout_basis, "_search", search_whole)
    monkeypatch.setenv("SIZER_CACHE_DIR", "off")
    assert _close(answered, recommend(nearby, catalog).model_dump())  # as a whole search of its own answers
    _forget()


def test_a_length_bound_search_is_pending_for_another_length(searches, catalog):
    # where the shape's search chose a nearby batch somewhere, another length waits for its own search
    space = layout_basis.SearchSpace(recommend_module._devices(catalog, ("gpu",)), (catalog.key, ("gpu",)),
                                     (1, 2, 4, 8, 16))
    first = resolve_job(WorkloadRequest(params=1e8, samples=1e6, batch_size=1000))
    shape = layout_basis.missing_search(first, space)
    assert shape is not None
    layout_basis.basis(first, space)
    assert layout_basis.missing_search(first, space) is None
    longer = resolve_job(WorkloadRequest(params=1e8, samples=3.7e6, batch_size=1000))
    assert layout_basis.missing_search(longer, space) == (shape, longer.samples, longer.epochs)
