"""Local inference scored by source: fit the local runtimes on every source but one, score that one.

The half split of ``local_inference_accuracy.py`` puts runs of one source on both sides (a llmfit submission's
machine, a PR's card); here a whole source is held out at a time, so every score is of a source the fit never
saw. A source is the data file's ``source`` column (one repository collection such as llmfit's community
submissions, or one llama.cpp PR or issue thread). For each source: the runs of the other sources are fitted by
:func:`local_inference_accuracy.fit_runtime` (the same per-family overheads, grains and bandwidth exponents), the
answer's range is the 10th-90th percentile of measured / predicted speed on those fit sources (per runtime and
device family, the runtime's over every family below :data:`MIN_SPREAD_ROWS` runs; always containing 1), and the
held-out source's runs are predicted. Errors are reported per device class
(:func:`sizer.runtimes.device_class.device_class`), per runtime, for depth runs and for multi-device runs.

Writes ``benchmarks/results/local_inference_by_source.json`` and ``.md`` and the run -> source map
``benchmarks/local_inference_run_sources.csv`` (committed, so ``--check`` and the tests run without the data file).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/local_inference_by_source.py [--check]

``--check`` scores from the committed runs and source map without rewriting anything.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import local_inference_accuracy as lia  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOURCES_CSV = ROOT / "benchmarks" / "local_inference_run_sources.csv"
RESULT_JSON = ROOT / "benchmarks" / "results" / "local_inference_by_source.json"
RESULT_MD = ROOT / "benchmarks" / "results" / "local_inference_by_source.md"
MIN_SPREAD_ROWS = 8  # fit runs a family needs for a range of its own (as sizer.runtimes.local_runtimes)
TARGETS = {"tg": 0.10, "pp": 0.20}  # issue 40: generation median <= 10 %, prompt <= 20 % on every device class


def write_sources(runs: list[lia.Run]) -> None:
    """Record each mapped run's source (the data file's ``source`` column at the run's line)."""
    with open(lia.DATA, newline="") as f:
        by_line = {line: row["source"] for line, row in enumerate(csv.DictReader(f), start=2)}
    tmp = SOURCES_CSV.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(("key", "source"))
        for run in runs:
            writer.writerow((run.key, by_line[int(run.key[1:])]))
    tmp.replace(SOURCES_CSV)


def load_sources() -> dict[str, str]:
    """Run key -> source, as committed."""
    with open(SOURCES_CSV, newline="") as f:
        return {row["key"]: row["source"] for row in csv.DictReader(f)}


def _profile(name: str, fitted: dict):
    """The runtime's profile with the kernels of ``fitted`` (a :func:`lia.fit_runtime` dict) in place."""
    from sizer.runtimes import runtime
    from sizer.runtimes.local_runtimes import _kernels
    return dataclasses.replace(runtime(name).profile, kernels=_kernels(fitted["kernels"]),
                               step_overhead=dict(fitted["step_overhead"]),
                               bandwidth_exponent=dict(fitted["bandwidth_exponent"]), speed_spread={})


def _predict(run: lia.Run, profile) -> float:
    return (run.tokens if run.test == "pp" else 1.0) / lia._seconds(run, profile)


def _quantile(values: list[float], q: float) -> float:
    import numpy as np
    return float(np.percentile(values, q))


def leave_one_source_out(runs: list[lia.Run], sources: dict[str, str]) -> list[dict]:
    """One record per run: predicted by a fit on every other source, with a range from the other sources.

    The range of a held-out source's run is the 10th-90th percentile of measured / predicted over the by-source
    predictions of every OTHER source (per runtime and device family; the runtime's over all families where the
    family has fewer than :data:`MIN_SPREAD_ROWS` such runs; always containing 1): how far a fit transfers to a
    source it has not seen, judged without the run's own source.

    Parameters
    ----------
    runs : list of Run
        Annotated runs (:func:`lia._annotate`).
    sources : dict of str to str
        Run key -> source.

    Returns
    -------
    list of dict
        ``key``, ``source``, ``runtime``, ``device``, ``family``, ``class``, ``test``, ``depth``, ``measured`` and
        ``predicted`` [tokens/s], ``error`` (predicted / measured - 1), ``inside`` (measured within the range).
    """
    from sizer.hardware.catalog import load_catalog
    from sizer.runtimes.device_class import device_class
    catalog = load_catalog()
    out = []
    for source in sorted({sources[r.key] for r in runs}):
        held = [r for r in runs if sources[r.key] == source]
        rest = [r for r in runs if sources[r.key] != source]
        for name in sorted({r.runtime for r in held}):
            fit_runs = [r for r in rest if r.runtime == name]
            profile = _profile(name, lia.fit_runtime(fit_runs)) if fit_runs else None
            for run in (r for r in held if r.runtime == name):
                predicted = _predict(run, profile) if profile is not None else None  # None: its runtime's only source
                out.append({"key": run.key, "source": source, "runtime": name, "device": run.device,
                            "family": run.family, "class": device_class(catalog.find(run.device)), "test": run.test,
                            "depth": run.depth, "measured": run.measured,
                            "predicted": None if predicted is None else round(predicted, 3),
                            "error": None if predicted is None else round(predicted / run.measured - 1, 4)})
    for rec in out:
        rec["inside"] = None if rec["error"] is None else _inside(rec, out)
    return out


def _inside(rec: dict, records: list[dict]) -> bool:
    """Whether ``rec``'s measured speed lies in the range the other sources' by-source errors give."""
    others = [r for r in records if r["source"] != rec["source"] and r["runtime"] == rec["runtime"]
              and r["test"] == rec["test"] and r["error"] is not None]
    mine = [r for r in others if r["family"] == rec["family"]]
    pool = mine if len(mine) >= MIN_SPREAD_ROWS else others
    if len(pool) < MIN_SPREAD_ROWS:
        return False  # no range to speak of: counted outside
    ratios = [r["measured"] / r["predicted"] for r in pool]
    low, high = min(_quantile(ratios, 10), 1.0), max(_quantile(ratios, 90), 1.0)
    return bool(low * rec["predicted"] <= rec["measured"] <= high * rec["predicted"])


def summarise(records: list[dict]) -> dict[str, dict[str, dict]]:
    """Median |error|, p90, signed median and share inside the range per group and test.

    Groups: ``all``, ``class:<device class>`` and ``runtime:<name>`` (llama.cpp classes only under ``class:``
    where the runtime is llama.cpp; MLX is reported under ``runtime:mlx``), ``depth`` (runs at a context depth).
    """
    groups: dict[str, dict[str, list[dict]]] = {}
    for rec in records:
        if rec["error"] is None:
            continue
        keys = ["all", f"runtime:{rec['runtime']}", f"class:{rec['class']}:{rec['runtime']}"]
        if rec["depth"] > 0 and rec["runtime"] == "llama.cpp":
            keys.append("depth:llama.cpp")
        for key in keys:
            groups.setdefault(key, {}).setdefault(rec["test"], []).append(rec)
    summary: dict[str, dict[str, dict]] = {}
    for key, tests in groups.items():
        for test, recs in tests.items():
            errors = [r["error"] for r in recs]
            absolute = sorted(abs(e) for e in errors)
            summary.setdefault(key, {})[test] = {
                "runs": len(recs), "sources": sorted({r["source"] for r in recs}),
                "median_abs": round(statistics.median(absolute), 4),
                "p90_abs": round(_quantile(absolute, 90), 4),
                "signed_median": round(statistics.median(errors), 4),
                "inside": round(sum(r["inside"] for r in recs) / len(recs), 3)}
    return summary


def per_source(records: list[dict]) -> dict[str, dict[str, dict]]:
    """Per held-out source and test: runs, median |error|, signed median, share inside."""
    out: dict[str, dict[str, dict]] = {}
    for source in sorted({r["source"] for r in records}):
        for test in ("pp", "tg"):
            recs = [r for r in records if r["source"] == source and r["test"] == test and r["error"] is not None]
            if recs:
                out.setdefault(source, {})[test] = {
                    "runs": len(recs), "devices": sorted({r["device"] for r in recs}),
                    "median_abs": round(statistics.median(abs(r["error"]) for r in recs), 4),
                    "signed_median": round(statistics.median(r["error"] for r in recs), 4),
                    "inside": round(sum(r["inside"] for r in recs) / len(recs), 3)}
    return out


def markdown(result: dict) -> str:
    """The tables of benchmarks/ACCURACY.md's by-source section."""
    names = {"tg": "generation", "pp": "prompt"}
    lines = ["| group | test | runs (sources) | median \\|error\\| | p90 | signed median | inside range | target |",
             "|---|---|---|---|---|---|---|---|"]
    for key in sorted(result["summary"], key=lambda k: (k != "all", k)):
        for test, s in sorted(result["summary"][key].items(), reverse=True):
            target = TARGETS[test]
            met = "met" if s["median_abs"] <= target else "**not met**"
            lines.append(f"| {key} | {names[test]} | {s['runs']} ({len(s['sources'])}) | {100 * s['median_abs']:.1f} % "
                         f"| {100 * s['p90_abs']:.1f} % | {100 * s['signed_median']:+.1f} % | {100 * s['inside']:.0f} % "
                         f"| ≤ {100 * target:.0f} % {met} |")
    lines += ["", "| held-out source | test | runs | devices | median \\|error\\| | signed median | inside |",
              "|---|---|---|---|---|---|---|"]
    for source, tests in result["per_source"].items():
        for test, s in sorted(tests.items(), reverse=True):
            lines.append(f"| {source[:70]} | {names[test]} | {s['runs']} | {', '.join(s['devices'])} "
                         f"| {100 * s['median_abs']:.1f} % | {100 * s['signed_median']:+.1f} % | {100 * s['inside']:.0f} % |")
    return "\n".join(lines) + "\n"


def run(check: bool = False) -> dict:
    """Map (unless ``check``), fit by source, score; the result dict."""
    runs = lia.load_runs()  # the committed mapping (local_inference_accuracy.py rewrites it on a full run)
    if not check:
        write_sources(runs)
    sources = load_sources()
    lia._annotate(runs)
    records = leave_one_source_out(runs, sources)
    unscored = [r for r in records if r["error"] is None]
    return {"runs": len(records), "sources": sorted({r["source"] for r in records}),
            "unscored": {"runs": len(unscored), "why": "the only source of its runtime: nothing else to fit it on",
                         "sources": sorted({r["source"] for r in unscored})},
            "summary": summarise(records), "per_source": per_source(records), "records": records}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="score from the committed runs and source map only")
    args = parser.parse_args(argv)
    result = run(check=args.check)
    text = markdown(result)
    if not args.check:
        RESULT_JSON.write_text(json.dumps(result, indent=1, sort_keys=True))
        RESULT_MD.write_text(text)
    print(f"{result['runs']} runs from {len(result['sources'])} sources")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
