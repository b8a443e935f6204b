"""sizer/plan/sweep.py: the vectorised what-if table gives the single-estimate functions' numbers."""
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sizer.errors import InputError
from sizer.facade import TimeRequest, estimate_time
from sizer.formulas.tco import estimate_tco
from sizer.plan.sweep import COLUMNS, MAX_EVALUATIONS, sweep
from sizer.results import Estimate
from sizer.schemas.base import WorkloadRequest
from sizer.units import Quantity

# Floating-point tolerance only: both paths compute the same formulas, pint's in other units
# (GB/s, hours), so the last bits of a product may differ.
RTOL = 1e-9


def _seconds(range_out, which):
    return Quantity(getattr(range_out, which), range_out.unit).to("s").magnitude


def _check_row(row, request: WorkloadRequest, catalog, headroom=False, overlap=False):
    """One row of the sweep against `sizer time` on the same question: the one engine, two doors."""
    device = catalog.find(row.device)
    count = int(row["count"])
    fields = {**request.model_dump(exclude_unset=True), "precision": row.precision, "device": row.device, "count": count,
              "zero": int(row.zero), "tp": int(row.tp), "pp": int(row.pp), "recompute": row.recompute,
              "overlap_allreduce": overlap, "headroom": headroom}
    time = estimate_time(TimeRequest(**fields), catalog)
    for which in ("low", "expected", "high"):
        assert row[f"training_time_s_{which}"] == pytest.approx(_seconds(time.training_time, which), rel=RTOL)
        assert row[f"step_time_s_{which}"] == pytest.approx(_seconds(time.step_time, which), rel=RTOL)
    limit = Quantity(time.physical_limit.value, time.physical_limit.unit).to("s").magnitude
    assert row.physical_limit_s == pytest.approx(limit, rel=RTOL)
    assert row.bound == time.bound
    assert row.mfu == pytest.approx(time.mfu, rel=RTOL)
    assert row.peak_flops == pytest.approx(time.peak.value, rel=RTOL)
    assert row.training_compute_flop == pytest.approx(time.training_compute.value, rel=RTOL)
    assert row.memory_per_device_b == pytest.approx(time.memory_per_device.quantity().to("B").magnitude, rel=RTOL)
    assert bool(row.fits) == time.fits

    unit = time.training_time.unit
    duration = Estimate(*(Quantity(getattr(time.training_time, w), unit) for w in ("low", "expected", "high")))
    tco = estimate_tco(device, count, duration)
    if tco.rent is None:
        assert math.isnan(row.cost_usd_expected) and row.price_basis == ""
    else:
        assert row.price_basis == tco.rent.price_basis == "rent"
        for which in ("low", "expected", "high"):
            assert row[f"cost_usd_{which}"] == pytest.approx(getattr(tco.rent, which), rel=RTOL)


def test_columns_and_size(catalog):
    table = sweep([{"params": 1.3e9, "tokens": 2.6e10}], devices=["H100 SXM", "Tesla P40", "Xeon Platinum 8180"],
                  counts=[1, 2, 8], precisions=["bf16", "fp32"], shardings=["none", "full"], catalog=catalog)
    assert tuple(table.columns) == COLUMNS
    assert len(table) == 3 * 3 * 2 * 2
    unsupported = table[~table.supported]
    assert set(unsupported.device) <= {"tesla-p40", "xeon-platinum-8180"} and unsupported.training_time_s_expected.isna().all()


def test_default_workload_on_the_whole_catalog_matches_the_single_estimates(catalog):
    request = WorkloadRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw")
    table = sweep([request], counts=[1, 4, 64], shardings=["none", "full"], catalog=catalog)
    supported = table[table.supported]
    assert len(supported) > 100
    for _, row in supported.sample(25, random_state=1).iterrows():
        _check_row(row, request, catalog)


workloads = st.builds(
    dict,
    params=st.floats(1e6, 2e11),  # a generated transformer needs at least 1e6 (its embeddings alone)
    samples=st.floats(1e3, 1e12),
    epochs=st.integers(1, 50),
    batch_size=st.sampled_from([32, 256, 4096, 4 * 1024 * 1024]),
    optimizer=st.sampled_from(["sgd", "momentum", "adam", "adamw", "adagrad", "rmsprop"]),
    activation_memory_per_sample=st.sampled_from([None, "0 B", "12 MB", "3 GB"]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workload=workloads, tokens=st.booleans(), seed=st.integers(0, 2**31 - 1), headroom=st.booleans(),
       overlap=st.booleans())
def test_random_samples_equal_the_single_estimates(catalog, workload, tokens, seed, headroom, overlap):
    # more than 1e12 optimizer steps is refused up front (sizer.engine.workload.MAX_STEPS); stay inside
    assume(workload["samples"] * workload["epochs"] / workload["batch_size"] <= 1e12)
    # a batch beyond one epoch's data is refused up front (test_bad_input_corpus): stay inside
    assume(workload["batch_size"] <= workload["samples"])
    if tokens:
        workload["tokens"] = workload.pop("samples") * workload.pop("epochs")
        workload["seq_len"] = 2048
        workload["batch_size"] = max(workload["batch_size"], 2048)  # a token batch holds whole sequences
        workload.pop("activation_memory_per_sample")  # a language model's activations come from its layer graph
    request = WorkloadRequest(**workload)
    table = sweep([request], counts=[1, 3, 16, 1024], precisions=["fp32", "bf16", "fp8"], shardings=["none", "full"],
                  catalog=catalog, headroom=headroom, overlap_allreduce=overlap)
    supported = table[table.supported]
    for _, row in supported.sample(3, random_state=seed % 1000).iterrows():
        _check_row(row, request, catalog, headroom=headroom, overlap=overlap)


@pytest.mark.parametrize("kwargs, field", [
    ({"workloads": []}, "workloads"),
    ({"workloads": {"params": 1e9}}, "workloads"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}], "counts": [0]}, "counts"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}], "counts": [1.5]}, "counts"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}], "counts": []}, "counts"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}], "precisions": ["fp7"]}, "precision"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}], "shardings": ["half"]}, "sharding"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}], "shardings": []}, "sharding"),  # found by fuzzing: IndexError
    ({"workloads": [{"params": "nan", "samples": 1e6}]}, "params"),
    ({"workloads": [{"params": [1], "samples": 1e6}]}, "workloads"),
    ({"workloads": [{"parameters": 1e9}]}, "workloads"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}], "devices": ["no such gpu"]}, "device"),
    ({"workloads": [{"params": 1e9, "samples": 1e6}] * 100, "counts": list(range(1, 1001))}, "sweep"),
])
def test_bad_input_is_an_input_error(catalog, kwargs, field):
    with pytest.raises(InputError if field != "device" else ValueError) as error:
        sweep(catalog=catalog, **kwargs)
    assert getattr(error.value, "field", field) == field


def test_the_size_limit_is_stated():
    assert MAX_EVALUATIONS >= 1_000_000


# issue 43: the same question asked twice, by another spelling or another name, is one row; the same
# device by name and by id made pandas' categorical codes outrun their categories (a ValueError traceback).
@pytest.mark.parametrize("twice, once", [
    ({"devices": ["H100 SXM", "h100-sxm5-80gb"]}, {"devices": ["H100 SXM"]}),
    ({"counts": [1, 1, 8, 1]}, {"counts": [1, 8]}),
    ({"precisions": ["bf16", "BF16", " bf16"]}, {"precisions": ["bf16"]}),
    ({"shardings": ["none", "none", "full"]}, {"shardings": ["none", "full"]}),
    ({"shardings": ["auto", "AUTO"]}, {"shardings": ["auto"]}),
])
def test_a_question_asked_twice_is_one_row(catalog, twice, once):
    base = {"devices": ["H100 SXM"], "counts": [1, 8], "precisions": ["bf16"], "shardings": ["auto"]}
    doubled = sweep([{"params": 1e9, "tokens": 1e10}], catalog=catalog, **{**base, **twice})
    single = sweep([{"params": 1e9, "tokens": 1e10}], catalog=catalog, **{**base, **once})
    assert len(doubled) == len(single) > 0
    assert doubled.astype(str).equals(single.astype(str))


@pytest.mark.parametrize("workloads", [
    [{"params": "1B", "tokens": 1e10}, {"params": "1B", "tokens": 1e10}],
    [{"params": "1B", "tokens": 1e10}, {"params": 1e9, "tokens": "1e10"}],  # two spellings of one count
    [{"model": "llama-2-7b", "tokens": 1e10}, {"model": "meta-llama/Llama-2-7b-hf", "tokens": 1e10}],  # name and hub id
])
def test_one_workload_written_twice_is_one_question(catalog, workloads):
    table = sweep(workloads, devices=["H100 SXM"], counts=[1, 8], catalog=catalog)
    assert len(table) == 2 and set(table.workload) == {0}  # the first asking's rows, numbered as it was given


def test_distinct_workloads_and_precisions_keep_their_rows(catalog):
    # folding must not merge questions that differ: another size, another amount, another precision
    table = sweep([{"params": 1e9, "tokens": 1e10}, {"params": 2e9, "tokens": 1e10}, {"params": 1e9, "tokens": 2e10}],
                  devices=["H100 SXM", "A100 80GB SXM"], counts=[1], precisions=["bf16", "fp32"], catalog=catalog)
    assert len(table) == 3 * 2 * 2
    assert sorted(set(table.workload)) == [0, 1, 2]


def test_a_transformer_swept_without_sharding_is_at_times_answer(catalog):
    # issue 39: with no layout pinned `time` answers the achieved pace (sizer.engine.achieved); the sweep's rows
    # (the layout time chooses) say the same, not the bound
    table = sweep([{"model": "llama-2-7b", "tokens": 2e11}], devices=["H100 SXM", "A100 80GB SXM"], counts=[8, 64],
                  catalog=catalog)
    rows = table[table.supported]
    assert len(rows) == 4
    for _, row in rows.iterrows():
        time = estimate_time(TimeRequest(model="llama-2-7b", tokens=2e11, device=row.device, count=int(row["count"])),
                             catalog)
        assert time.best_layout is not None  # an achieved headline, its bound beside it
        assert row.training_time_s_expected == pytest.approx(_seconds(time.training_time, "expected"), rel=RTOL)
        assert row.mfu == pytest.approx(time.mfu, rel=RTOL)
