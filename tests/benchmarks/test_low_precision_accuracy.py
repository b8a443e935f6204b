"""Low precision at its real rate (benchmarks/low_precision_accuracy.py, issue 38 item 4): the figures of
benchmarks/ACCURACY.md ("Low precision at its real rate") cannot regress unseen. NVFP4 rows of TensorRT-LLM's perf
overview (the fit's prefill-heavy rows and all 40), its B200 row in inference-benchmarks.csv, and every FP8/W8A8
point of serving-tails.csv askable."""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import low_precision_accuracy as lp  # noqa: E402
import serving_accuracy as sa  # noqa: E402
import serving_by_source as by_source  # noqa: E402

from sizer.hardware.catalog import load_catalog  # noqa: E402
from sizer.runtimes import runtime  # noqa: E402
from sizer.runtimes.formats import weight_format  # noqa: E402
from sizer.serving.under_load import runtime_refusal  # noqa: E402
from sizer.simulator import simulate as sim  # noqa: E402


@pytest.fixture(scope="module")
def nvfp4_rows():
    sa.REQUESTS = 200
    cases = [c for c in sa.cases() if c.source == "TensorRT-LLM perf overview" and c.weights == "nvfp4"]
    rows = sa.score(cases, load_catalog(), sim.SCHEDULER_OVERHEAD, sim.BATCHING_MATRIX_EFFICIENCY)
    return [(c, r["error"]) for c, r in zip(cases, rows, strict=True)]


def test_nvfp4_prefill_heavy_rows_at_the_fp4_rate(nvfp4_rows):
    # 2026-12-06: 12 rows (outputs <= 500 tokens), median |error| 3.5 %, signed +2.0 % (14 % under at the FP8 rate)
    prefill = [e for c, e in nvfp4_rows if c.output <= 500]
    assert len(prefill) == 12
    assert statistics.median(abs(e) for e in prefill) <= 0.065
    assert abs(statistics.median(prefill)) <= 0.06


def test_all_nvfp4_rows_stay_within_the_serving_target(nvfp4_rows):
    # 2026-12-06: all 40 rows 13.8 % median |error|, signed +13.8 % (the long-output rows over-predicted, as at the
    # FP8 rate, by more): guarded a little above, and under the 15 % target
    errors = [e for _, e in nvfp4_rows]
    assert len(errors) == 40
    assert statistics.median(abs(e) for e in errors) <= 0.15
    assert statistics.median(errors) <= 0.15


def test_the_b200_nvfp4_row_of_inference_benchmarks():
    # TensorRT-LLM perf overview v1.0, Llama 3.3 70B NVFP4 on one B200, 128/128: 11,147 tokens/s; -22 % at the FP8
    # rate, -5.4 % now
    row = next(r for r in lp.inference_rows()["rows"] if r["device"] == "b200")
    assert abs(row["error_pct"]) <= 10


def test_every_fp8_and_w8a8_point_of_serving_tails_is_askable():
    # 17 of them were refused ("the catalog has no fp8 peak") on A100, RTX A6000 and RTX 4090 before vLLM's
    # weight-only FP8 on Ampere and the 4090's FP8 and A6000's int8 rates
    catalog = load_catalog()
    points = [p for p in by_source.points()[0] if p.weights in ("fp8", "w8a8")]
    assert len(points) >= 70
    for p in points:
        device, fmt = catalog.find(p.device), weight_format(p.weights)
        assert runtime_refusal(runtime(p.runtime), fmt, device) is None, p.key
        assert sim.batching_table((device,), fmt).supported[0], p.key
