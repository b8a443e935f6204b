"""Local inference scored by source (benchmarks/local_inference_by_source.py): every source held out in turn, fitted
on the others; the figures of benchmarks/ACCURACY.md ("Local inference by source") cannot regress unseen."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import local_inference_accuracy as lia  # noqa: E402
import local_inference_by_source as by_source  # noqa: E402

# Median |error| held out by source, per group and test: the figures of 2026-12-06
# (benchmarks/results/local_inference_by_source.json) plus 2 points. Targets (issue 40): generation 10 %, prompt 20 %.
GUARDS = {
    ("all", "tg"): 0.165, ("all", "pp"): 0.179,
    ("runtime:llama.cpp", "tg"): 0.172, ("runtime:llama.cpp", "pp"): 0.200,
    ("class:nvidia-consumer:llama.cpp", "tg"): 0.195, ("class:nvidia-consumer:llama.cpp", "pp"): 0.200,
    ("class:apple:llama.cpp", "tg"): 0.166, ("class:apple:llama.cpp", "pp"): 0.153,
    ("class:amd:llama.cpp", "tg"): 0.143, ("class:amd:llama.cpp", "pp"): 0.327,
    ("class:cpu:llama.cpp", "tg"): 0.153, ("class:cpu:llama.cpp", "pp"): 0.501,
    ("runtime:mlx", "tg"): 0.107, ("runtime:mlx", "pp"): 0.134,
    ("depth:llama.cpp", "tg"): 0.143, ("depth:llama.cpp", "pp"): 0.321,
}


@pytest.fixture(scope="module")
def runs():
    runs = lia.load_runs()
    lia._annotate(runs)
    return runs


@pytest.fixture(scope="module")
def records(runs):
    return by_source.leave_one_source_out(runs, by_source.load_sources())


@pytest.fixture(scope="module")
def summary(records):
    return by_source.summarise(records)


@pytest.mark.parametrize("group,test", sorted(GUARDS))
def test_by_source_median_does_not_regress(summary, group, test):
    s = summary[group][test]
    assert s["runs"] >= 4
    assert s["median_abs"] <= GUARDS[(group, test)]


def test_every_mapped_run_has_a_source_and_is_scored_by_a_fit_without_it(runs, records):
    sources = by_source.load_sources()
    assert {r.key for r in runs} == set(sources)
    assert len(set(sources.values())) >= 10
    llmfit = {r.key for r in runs if "llmfit" in sources[r.key]}
    fitted = lia.fit_runtime([r for r in runs if r.key not in llmfit and r.runtime == "llama.cpp"])
    assert llmfit and not llmfit & set(fitted["fitted_on"])
    assert all(rec["error"] is not None for rec in records)  # each runtime has two sources or more


def test_a_family_without_generation_runs_takes_the_other_gpu_families_figure(runs):
    # with llmfit held out no NVIDIA generation run remains; NVIDIA's generation figure was a fixed 0.5 then
    # (35 % median error on llmfit's 155 runs), now the median of the AMD and Apple families' figures
    sources = by_source.load_sources()
    rest = [r for r in runs if "llmfit" not in sources[r.key] and r.runtime == "llama.cpp"]
    assert not [r for r in rest if r.family == "nvidia" and r.test == "tg"]
    fitted = lia.fit_runtime(rest)["kernels"]
    kin = sorted([fitted["amd/*"]["generation"], fitted["apple/*"]["generation"]])
    assert fitted["nvidia/*"]["generation"] == pytest.approx(sum(kin) / 2, abs=1e-3)
    assert fitted["nvidia/*"]["generation"] != 0.5
    # a per-pass time shows only where one device's generation runs differ 2x in size (llmfit: 0.5B to 32B models);
    # the PR threads left measure one model per device, so no GPU family can show one and none is borrowed
    assert lia.overhead_seen([r for r in runs if r.family == "nvidia" and r.runtime == "llama.cpp"])
    assert not any(lia.overhead_seen([r for r in rest if r.family == f]) for f in ("nvidia", "amd", "apple"))


def test_depth_runs_are_scored_out_of_source(records):
    # RX 7900 XTX, Llama 8B Q4_K_M at context depth 4096 (llama.cpp PR #26284): predicted by a fit without that PR
    depth = [r for r in records if r["depth"] > 0 and r["runtime"] == "llama.cpp"]
    assert {r["device"] for r in depth} == {"radeon-rx-7900-xtx"} and len(depth) == 10
    generation = [r for r in depth if r["test"] == "tg"]
    assert all(abs(r["error"]) <= 0.15 for r in generation)


def test_the_committed_results_are_this_code_on_the_committed_runs(summary):
    committed = json.loads(by_source.RESULT_JSON.read_text())["summary"]
    for group, tests in summary.items():
        for test, s in tests.items():
            assert committed[group][test]["runs"] == s["runs"]
            assert committed[group][test]["median_abs"] == pytest.approx(s["median_abs"], abs=1e-4)
