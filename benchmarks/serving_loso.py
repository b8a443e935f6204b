"""Leave-one-source-out scoring for the serving benchmarks (issue 38, item 1).

``benchmarks/inference_accuracy.py --by-source`` and ``benchmarks/serving_accuracy.py --by-source`` use it:
every row is predicted once per value of a grid of the fitted constants (the cache), then for each source the
constants are chosen on the rows of every *other* source and the held-out source is scored at them. A source is
the data file's ``source`` (repository at a commit and the document: each MLPerf round, each blog post, each
performance overview is one).

The fold's loss weighs every fitting source alike: the mean over sources of the mean absolute log error of its
rows. A source with many rows (TensorRT-LLM's perf overview: 100) would otherwise choose the constants alone, and
an absolute (not squared) log error keeps one source 2-3 x off (the vLLM MI300X guide) from choosing them.
"""
from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any


def figures(errors: Sequence[float], inside: Sequence[bool] | None = None) -> dict[str, Any]:
    """Median |error|, 90th percentile of |error|, signed median and n of signed errors (predicted / measured - 1)."""
    if not errors:
        return {"n": 0, "median_abs_error": math.nan, "p90_abs_error": math.nan, "signed_median": math.nan}
    absolute = sorted(abs(e) for e in errors)
    p90 = absolute[min(len(absolute) - 1, math.ceil(0.9 * len(absolute)) - 1)]  # nearest rank
    out: dict[str, Any] = {"n": len(errors), "median_abs_error": statistics.median(absolute), "p90_abs_error": p90,
                           "signed_median": statistics.median(errors)}
    if inside is not None:
        out["inside_range"] = sum(inside) / len(inside)
    return out


def log_error(predicted: float, measured: float) -> float:
    """|log(predicted / measured)|, infinite where nothing was predicted."""
    return abs(math.log(predicted / measured)) if predicted > 0 and measured > 0 else math.inf


def choose(grid: Iterable[Hashable], sources: Iterable[str], loss: Callable[[Hashable, str], float]) -> Hashable:
    """The grid value with the least mean loss over ``sources`` (``loss(value, source)``: the source's mean
    absolute log error at that value); ties go to the first in ``grid``."""
    names = list(sources)
    best, best_loss = None, math.inf
    for value in grid:
        total = statistics.fmean(loss(value, s) for s in names) if names else 0.0
        if total < best_loss:
            best, best_loss = value, total
    if best is None:
        raise ValueError("empty grid")
    return best


def short_source(source: str) -> str:
    """A source named briefly for tables: the repository, the commit's first 7 digits and the document."""
    text = re.sub(r"@([0-9a-f]{7})[0-9a-f]{0,33}", r"@\1", source.removeprefix("github:"))
    text = re.sub(r"\(blog post ([^)]*)\)", r"\1", text).replace("@", " ")
    text = re.sub(r" \(blog https?://[^/]+/([^)]*?)(\.html)?\)", r" blog \1", text)
    return " ".join(text.split())


def table(per_source: dict[str, dict[str, Any]], chosen: dict[str, str]) -> list[str]:
    """Markdown rows: one per held-out source with its figures and the constants fitted without it."""
    lines = ["| held-out source | n | median \\|error\\| | p90 | signed median | fitted on the other sources |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for source, f in per_source.items():
        lines.append(f"| {short_source(source)} | {f['n']} | {f['median_abs_error']:.1%} | {f['p90_abs_error']:.1%} | "
                     f"{f['signed_median']:+.1%} | {chosen.get(source, '')} |")
    return lines
