"""sizer/timing.py: per-step roofline, overhead, all-reduce, physical limit."""
import pytest
from hypothesis import given, settings, strategies as st

from sizer.errors import InputError
from sizer.timing import estimate_training_time, first_order_training_time, ring_allreduce_time
from sizer.units import Quantity
from sizer.workload import WorkloadRequest, resolve_workload


def _seconds(range_out, which="expected"):
    return Quantity(getattr(range_out, which), range_out.unit).to("s").magnitude


def test_first_order_time_gpt3_on_1024_a100():
    # seed 004 eq. 4 at the dense BF16 peak: 3.15e23 / (1024 x 312e12) = 9.86e5 s = 11.4 days
    t = first_order_training_time(Quantity(3.15e23, "FLOP"), Quantity(312e12, "FLOP/s"), 1024)
    assert t.to("s").magnitude == pytest.approx(3.15e23 / (1024 * 312e12))


def test_ring_allreduce_formula():
    # 2 (n-1)/n x bytes / bandwidth: 2 x 7/8 x 14 GB / 450 GB/s = 54.4 ms
    assert ring_allreduce_time(Quantity(14, "GB"), 8, Quantity(450, "GB/s")).to("ms").magnitude == pytest.approx(54.444, rel=1e-4)
    assert ring_allreduce_time(Quantity(14, "GB"), 1, Quantity(450, "GB/s")).magnitude == 0


def test_seed001_mlp_is_overhead_bound_and_near_the_measured_time(catalog):
    # seed 001: 347 s for 400 epochs of 80,909 samples at batch 512 on an RTX 3060 (table 4.3)
    workload = resolve_workload(WorkloadRequest(params=6.9e5, samples=80909, epochs=400, batch_size=512))
    result = estimate_training_time(workload, catalog.find("RTX 3060"))
    assert result.bound == "overhead"
    assert _seconds(result.training_time, "low") <= 347 <= _seconds(result.training_time, "high")
    # the first-order C/R term alone is off by more than an order of magnitude (spec §3.3)
    assert result.first_order_time.value * 10 < 347


def test_time_never_beats_the_physical_limit_gpt3(catalog):
    workload = resolve_workload(WorkloadRequest(params=175e9, samples=300e9, precision="bf16"))
    result = estimate_training_time(workload, catalog.find("A100 80GB SXM"), 1024, sharding="full")
    limit = 3.15e23 / (1024 * 312e12)
    assert _seconds(result.training_time, "low") >= limit * 0.999


def test_count_is_checked(catalog):
    workload = resolve_workload(WorkloadRequest(params=1e6, samples=1e5))
    with pytest.raises(InputError, match="count"):
        estimate_training_time(workload, catalog.find("T4"), 0)


DEVICES = ["Tesla P40", "T4", "A100 80GB SXM", "H100 SXM", "RTX 4090", "Xeon Platinum 8180"]


@settings(max_examples=40, deadline=None)
@given(st.floats(1e5, 1e11), st.floats(1e3, 1e10), st.sampled_from(DEVICES), st.integers(1, 64), st.floats(1.0, 8.0))
def test_laws_of_time(catalog, params, samples, device_name, count, factor):
    device = catalog.find(device_name)

    def time(p=params, s=samples, n=count, **kw):
        result = estimate_training_time(resolve_workload(WorkloadRequest(params=p, samples=s, batch_size=256)), device, n, **kw)
        return result

    base = time()
    t = base.training_time
    # the range contains its expected value and never beats C / (n R_peak)
    assert t.low <= t.expected <= t.high
    limit = base.training_compute.value / (count * base.peak.value)
    assert _seconds(t, "low") >= limit * (1 - 1e-9)
    # more parameters or samples never take less time
    assert _seconds(time(p=params * factor).training_time) >= _seconds(t) * (1 - 1e-9)
    assert _seconds(time(s=samples * factor).training_time) >= _seconds(t) * (1 - 1e-9)
    # more devices never increase the compute time per step
    more = time(n=count * 2)
    assert more.compute_time_per_step.expected <= base.compute_time_per_step.expected * (1 + 1e-9)
