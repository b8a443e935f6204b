"""What-if tables: many workloads × devices × device counts × precisions × sharding at once.

:func:`sweep` evaluates the same model as :func:`sizer.timing.estimate_training_time`,
:func:`sizer.memory.training_memory` and the rent side of :func:`sizer.tco.estimate_tco`, but
over numpy arrays: per (workload, precision) everything device-specific is read from the
catalog once, and the time, memory and cost of every (device, count, sharding) combination is
computed in a handful of array operations. The shared pieces (training compute, per-step memory
traffic, model-state bytes, derating, overhead, links, prices) are the scalar path's own
functions and constants, so the two cannot drift apart; ``tests/test_sweep.py`` checks them
equal on random samples.

Columns of the table (one row per combination; times in seconds, memory in bytes, cost in USD):
``workload, params, samples, token_mode, precision, device, name, kind, count, sharding,
supported, training_compute_flop, peak_flops, step_time_s_{low,expected,high}, bound,
training_time_s_{low,expected,high}, physical_limit_s, memory_per_device_b, device_memory_b,
fits, rent_price_usd_per_hour, rent_usd_{low,expected,high}``. Rows whose precision the device
lacks have ``supported`` False and NaN figures.

>>> table = sweep([{"params": 1.3e9, "tokens": 2.6e10}], devices=["H100 SXM", "Tesla P40"],
...               counts=[1, 8], precisions=["bf16", "fp32"])
>>> len(table), int(table["supported"].sum())
(8, 6)
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable, Sequence

import numpy as np

from sizer.catalog import Catalog, load_catalog
from sizer.catalog_schema import Device
from sizer.deadline import check_deadline
from sizer.compute import training_compute_from_forward
from sizer.errors import InputError
from sizer.memory import FRAMEWORK_OVERHEAD, HEADROOM_HIGH, state_bytes
from sizer.precision import check_precision, weight_bytes
from sizer.tco import cheapest_cloud_price
from sizer.throughput import DEFAULT_DERATING, Derating, device_peak, supported_precisions
from sizer.timing import (DEFAULT_STEP_OVERHEAD, FULL_SHARDING_TRAFFIC, StepOverhead, link_of,
                          step_memory_traffic)
from sizer.units import Quantity, parse_quantity
from sizer.workload import Workload, WorkloadRequest, resolve_workload

MAX_EVALUATIONS = 5_000_000  # rows of one table: about 2 GB of frame; a larger sweep is refused
SHARDINGS = ("none", "full")
HOURS_PER_SECOND = Quantity(1, "s").to("hour").magnitude
BOUNDS = ("compute", "memory", "overhead", "communication")
COLUMNS = ("workload", "params", "samples", "token_mode", "precision", "device", "name", "kind", "count", "sharding",
           "supported", "training_compute_flop", "peak_flops", "step_time_s_low", "step_time_s_expected",
           "step_time_s_high", "bound", "training_time_s_low", "training_time_s_expected", "training_time_s_high",
           "physical_limit_s", "memory_per_device_b", "device_memory_b", "fits", "rent_price_usd_per_hour",
           "rent_usd_low", "rent_usd_expected", "rent_usd_high")


@dataclasses.dataclass(frozen=True)
class DeviceFigures:
    """What the sweep needs of one catalog device, in SI magnitudes (NaN where unknown)."""

    device: Device
    bandwidth_b_per_s: float
    link_b_per_s: float
    memory_b: float
    framework_overhead_b: float
    rent_usd_per_hour: float

    @classmethod
    def of(cls, device: Device) -> "DeviceFigures":
        bandwidth = device.memory_bandwidth.quantity("memory_bandwidth", "[information]/[time]").to("B/s").magnitude
        link = link_of(device)[1].to("B/s").magnitude
        memory = device.memory.quantity("memory", "[information]").to("B").magnitude
        overhead = FRAMEWORK_OVERHEAD.to("B").magnitude if device.kind != "cpu" else 0.0
        cloud = cheapest_cloud_price(device)
        rent = parse_quantity("cloud_prices", cloud.value, "[currency]/[time]").to("USD/hour").magnitude \
            if cloud is not None else math.nan
        return cls(device, float(bandwidth), float(link), float(memory), float(overhead), float(rent))

    def peak(self, precision: str) -> float:
        """Peak FLOP/s for the precision, NaN where the device lacks it."""
        if precision not in supported_precisions(self.device):
            return math.nan
        return float(device_peak(self.device, precision)[0].to("FLOP/s").magnitude)


def _as_request(workload: WorkloadRequest | dict) -> WorkloadRequest:
    if isinstance(workload, WorkloadRequest):
        return workload
    if isinstance(workload, dict):
        from pydantic import ValidationError

        try:
            return WorkloadRequest.model_validate(workload)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "workload"
            raise InputError("workloads", workload, f"valid workload fields ({where}: {first['msg']})") from None
    raise InputError("workloads", workload, "a list of workloads, each a mapping such as {'params': 7e9, 'tokens': 2e10}")


def _counts(counts: Iterable[int]) -> np.ndarray:
    values = list(counts)
    if not values:
        raise InputError("counts", values, "at least one device count")
    for count in values:
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or not 1 <= count <= 1_000_000:
            raise InputError("counts", count, "whole numbers of devices from 1 to 1,000,000")
    return np.asarray(values, dtype=np.int64)


def _group(workload: Workload, figures: Sequence[DeviceFigures], peaks: np.ndarray, counts: np.ndarray,
           sharding: str, derating: Derating, overhead: StepOverhead, headroom: bool,
           overlap_allreduce: bool) -> dict[str, Any]:
    """Every (device, count) of one workload at one precision and sharding, as columns."""
    devices, n = len(figures), len(counts)
    count = np.tile(counts.astype(float), devices)
    pick = np.repeat(np.arange(devices), n)

    def per_device(values: list[float]) -> np.ndarray:
        return np.asarray(values, dtype=float)[pick]

    peak = peaks[pick]
    bandwidth = per_device([f.bandwidth_b_per_s for f in figures])
    link = per_device([f.link_b_per_s for f in figures])
    memory = per_device([f.memory_b for f in figures])
    framework = per_device([f.framework_overhead_b for f in figures])
    rent_price = per_device([f.rent_usd_per_hour for f in figures])

    compute = training_compute_from_forward(workload.forward_flops_per_sample, workload.samples, workload.epochs,
                                            workload.backward_factor).to("FLOP").magnitude
    steps = workload.steps
    keep = 1 - np.array([derating.low, derating.expected, derating.high])[:, None]  # low time: least derating
    compute_time = (compute / steps / count) / (peak * keep)
    share = workload.batch_size / count
    micro = np.minimum(share, float(workload.seq_len)) if workload.token_mode and workload.seq_len else share
    accumulation = np.maximum(1.0, workload.batch_size / count / micro)
    params_per_device = workload.params / count if sharding == "full" else np.full_like(count, workload.params)
    traffic = step_memory_traffic(workload, params_per_device, micro, accumulation).to("B").magnitude
    memory_time = traffic / (bandwidth * keep)
    gradient = workload.params * weight_bytes(workload.precision) * (FULL_SHARDING_TRAFFIC if sharding == "full" else 1)
    allreduce = np.where(count > 1, 2 * (count - 1) / count * gradient / link, 0.0)
    over = np.array([overhead.low.to("s").magnitude, overhead.expected.to("s").magnitude,
                     overhead.high.to("s").magnitude])[:, None]
    kernels = np.maximum(compute_time, memory_time)
    communication = np.maximum(0.0, allreduce - kernels * 2 / 3) if overlap_allreduce else allreduce
    step = kernels + communication + over
    limit = compute / (count * peak)
    training = np.maximum(step * steps, limit)

    bound = np.where(compute_time[1] >= memory_time[1], 0, 1)
    bound = np.where(over[1] > np.maximum(compute_time[1], memory_time[1]), 2, bound)
    if not overlap_allreduce:
        bound = np.where(allreduce > np.maximum(np.maximum(compute_time[1], memory_time[1]), over[1]), 3, bound)

    states = state_bytes(workload.params, workload.precision, workload.optimizer).total.to("B").magnitude
    shards = count if sharding == "full" else 1.0
    per_sample = workload.activation_memory_per_sample.to("B").magnitude \
        if workload.activation_memory_per_sample is not None else 0.0
    total = states / shards + framework + per_sample * micro
    needed = total * (1 + HEADROOM_HIGH) if headroom else total
    rent = rent_price * count * training * HOURS_PER_SECOND  # USD/hour x devices x hours

    supported = ~np.isnan(peak)
    rows = len(count)
    return {
        "workload": np.zeros(rows, dtype=np.int64), "params": np.full(rows, workload.params),
        "samples": np.full(rows, workload.samples), "token_mode": np.full(rows, workload.token_mode),
        "precision": np.full(rows, workload.precision, dtype=object), "device": pick, "count": count.astype(np.int64),
        "sharding": np.full(rows, sharding, dtype=object), "supported": supported,
        "training_compute_flop": np.full(rows, compute), "peak_flops": peak,
        "step_time_s_low": step[0], "step_time_s_expected": step[1], "step_time_s_high": step[2],
        "bound": np.where(supported, np.asarray(BOUNDS, dtype=object)[bound], None),
        "training_time_s_low": training[0], "training_time_s_expected": training[1],
        "training_time_s_high": training[2], "physical_limit_s": limit,
        "memory_per_device_b": needed, "device_memory_b": memory, "fits": needed <= memory,
        "rent_price_usd_per_hour": rent_price,
        "rent_usd_low": rent[0], "rent_usd_expected": rent[1], "rent_usd_high": rent[2]}


def sweep(workloads: Sequence[WorkloadRequest | dict], devices: Iterable[str] | None = None,
          counts: Iterable[int] = (1,), precisions: Iterable[str] | None = None, shardings: Iterable[str] = ("none",),
          *, catalog: Catalog | None = None, derating: Derating = DEFAULT_DERATING,
          overhead: StepOverhead = DEFAULT_STEP_OVERHEAD, headroom: bool = False, overlap_allreduce: bool = False):
    """A pandas DataFrame with one row per workload × device × count × precision × sharding.

    ``workloads`` are :class:`~sizer.workload.WorkloadRequest` objects or mappings with its
    fields; ``devices`` are names or ids (default: the whole catalog); ``precisions`` default to
    each workload's own. Numbers are those of the single-estimate functions (module docstring).
    """
    import pandas as pd

    catalog = catalog if catalog is not None else load_catalog()
    if isinstance(workloads, (WorkloadRequest, dict)) or not isinstance(workloads, Sequence) or not workloads:
        raise InputError("workloads", workloads, "a non-empty list of workloads")
    requests = [_as_request(w) for w in workloads]
    chosen = list(catalog) if devices is None else [catalog.find(name) for name in devices]
    if not chosen:
        raise InputError("devices", devices, "at least one device")
    count_array = _counts(counts)
    shardings = list(shardings)
    if not shardings:
        raise InputError("sharding", shardings, "at least one of none, full")
    for sharding in shardings:
        if sharding not in SHARDINGS:
            raise InputError("sharding", sharding, "none or full")
    wanted = None if precisions is None else [check_precision(p) for p in precisions]
    rows = len(requests) * len(chosen) * len(count_array) * len(shardings) * (len(wanted) if wanted else 1)
    if rows > MAX_EVALUATIONS:
        raise InputError("sweep", rows, f"at most {MAX_EVALUATIONS:,} combinations; narrow the sweep")

    figures = [DeviceFigures.of(device) for device in chosen]
    peaks: dict[str, np.ndarray] = {}
    groups = []
    for index, request in enumerate(requests):
        base = resolve_workload(request)
        for precision in wanted or [base.precision]:
            if precision not in peaks:
                peaks[precision] = np.asarray([f.peak(precision) for f in figures], dtype=float)
            workload = dataclasses.replace(base, precision=precision)
            for sharding in shardings:
                check_deadline()
                columns = _group(workload, figures, peaks[precision], count_array, sharding, derating, overhead,
                                 headroom, overlap_allreduce)
                columns["workload"] += index
                groups.append(columns)
    merged = {name: np.concatenate([g[name] for g in groups]) for name in groups[0]}
    pick = merged.pop("device")
    merged["device"] = np.asarray([f.device.id for f in figures], dtype=object)[pick]
    merged["name"] = np.asarray([f.device.name for f in figures], dtype=object)[pick]
    merged["kind"] = np.asarray([f.device.kind for f in figures], dtype=object)[pick]
    return pd.DataFrame({name: merged[name] for name in COLUMNS})
