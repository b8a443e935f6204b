"""``sizer plan``: the layouts of one (model, device, count) that fit, fastest first, with why.

Every candidate of the full search (:mod:`sizer.engine.search`: tensor × pipeline × data
parallel, ZeRO 0-3, recomputation none/selective/full, micro-batches) is evaluated in one engine
call; each shown layout says where its step goes (pipeline bubble, communication, memory).

>>> from sizer.hardware.catalog import load_catalog
>>> result = plan(PlanRequest(model="llama-2-7b", tokens=2e11, device="H100 SXM", count=16))
>>> best = result.layouts[0]
>>> best.tp * best.pp * best.dp == 16 and best.fits
True
"""
from __future__ import annotations

import numpy as np
from pydantic import ConfigDict, Field

from sizer.hardware.catalog import Catalog, load_catalog
from sizer.engine.constants import default_efficiencies
from sizer.engine.evaluate import range_factors, workload_kind
from sizer.engine.devices import build_device_table
from sizer.engine.search import FULL, FULL_MICRO, search
from sizer.engine.roofline import RECOMPUTE
from sizer.engine.training import time_unit
from sizer.errors import InputError
from sizer.results import Assumption, Model, QuantityOut, RangeOut, unit_factor
from sizer.formulas.peaks import supported_precisions
from sizer.workloads.request import WorkloadRequest
from sizer.workloads.job import resolve_job

DEFAULT_SHOWN = 10


class PlanRequest(WorkloadRequest):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"model": "llama-2-70b", "device": "H100 SXM", "count": 256, "tokens": 2e12}]})

    device: str
    count: int = Field(..., ge=1, le=1_000_000)
    shown: int = Field(DEFAULT_SHOWN, ge=1, le=100, description="layouts to show, fastest first")
    headroom: bool = False
    overlap_allreduce: bool = False
    ep: int | None = Field(None, ge=1, le=1024, description="expert-parallel size to hold fixed (a mixture of experts); "
                                                          "default: searched")


class LayoutOption(Model):
    tp: int
    pp: int
    dp: int
    ep: int = 1
    zero: int
    recompute: str
    micro_batch: float
    accumulation: int
    step_time: RangeOut
    training_time: RangeOut | None
    memory_per_device: QuantityOut
    fits: bool
    mfu: float
    hfu: float
    why: str


class PlanResult(Model):
    workload: str
    device: str
    count: int
    precision: str
    searched: int
    fitting: int
    layouts: list[LayoutOption]
    assumptions: list[Assumption]


def _why(ev, r: int, memory: float) -> str:
    p = ev.parts
    step = float(p.step[r])
    share = lambda value: f"{float(value) / step:.0%}"  # noqa: E731
    parts = [f"bubble {share(p.bubble[r])}"] if ev.configs.pp[r] > 1 else []
    if ev.configs.tp[r] > 1:
        parts.append(f"tensor-parallel traffic {share(p.tensor_parallel[r])}")
    if np.broadcast_to(p.expert_parallel, p.step.shape)[r] > 0:
        parts.append(f"expert all-to-all {share(np.broadcast_to(p.expert_parallel, p.step.shape)[r])}")
    if ev.configs.dp[r] > 1:
        parts.append(f"gradient sync {share(p.data_parallel[r])}")
    if ev.configs.pp[r] > 1:
        parts.append(f"stage sends {share(p.pipeline[r])}")
    parts.append(f"memory {float(ev.memory_needed[r]) / memory:.0%} of the device")
    return ", ".join(parts)


def plan(request: PlanRequest, catalog: Catalog | None = None) -> PlanResult:
    """Search the layouts of ``request.count`` devices for the job and rank those that fit."""
    catalog = catalog or load_catalog()
    device = catalog.find(request.device)
    job = resolve_job(request)
    table = build_device_table((device,), job.precision,
                               (default_efficiencies(device.kind, job.arch is not None),))
    if not table.supported[0]:
        raise InputError("precision", request.precision,
                         f"a precision {device.name} supports: {', '.join(supported_precisions(device))}")
    if request.ep is not None:
        from sizer.engine.training import check_expert_parallel

        check_expert_parallel(job, request.count, 1, 1, request.ep)
    found = search(job, table, [0], [request.count], full=True, headroom=request.headroom,
                   overlap_allreduce=request.overlap_allreduce)
    ev = found.evaluation
    eps = np.broadcast_to(ev.configs.ep, ev.configs.tp.shape)
    rows = found.ranked(0)
    if request.ep is not None:  # the user's expert-parallel size only
        rows = rows[eps[rows] == request.ep]
    fitting = len(rows)
    if not fitting:  # nothing fits: the layouts closest to fitting, so the user sees by how much
        candidates = np.flatnonzero(ev.feasible & ((eps == request.ep) if request.ep is not None else True))
        rows = candidates[np.argsort(ev.memory_needed[candidates], kind="stable")]
    low, high, range_source = range_factors("datasheet", workload_kind(job, device.kind))
    memory = float(table.memory[0])
    peak = float(table.peak[0])
    unit = time_unit(float(ev.training_seconds[rows[0]])) if len(rows) else "s"
    layouts = []
    for r in rows[:request.shown]:
        step = float(ev.parts.step[r])
        limit = float(ev.parts.physical_limit[r])
        bounds = (max(limit, step * low), max(limit, step), max(limit, step * high))
        c = ev.configs
        layouts.append(LayoutOption(
            tp=int(c.tp[r]), pp=int(c.pp[r]), dp=int(c.dp[r]), ep=int(eps[r]), zero=int(c.zero[r]), recompute=RECOMPUTE[int(c.recompute[r])],
            micro_batch=float(c.micro_batch[r]), accumulation=int(c.accumulation[r]),
            step_time=RangeOut.of_seconds(bounds, "s"),
            training_time=RangeOut.of_seconds(tuple(b * float(ev.steps[r]) for b in bounds), unit) if job.samples else None,
            memory_per_device=QuantityOut.convert(ev.memory_needed[r], "B", "GB"), fits=bool(ev.fits[r]),
            mfu=float(ev.parts.model_flops[r]) / (bounds[1] * peak), hfu=float(ev.parts.hardware_flops[r]) / (bounds[1] * peak),
            why=_why(ev, r, memory)))
    assumptions = [
        *job.assumptions,
        Assumption(name="search", value=f"tp {', '.join(map(str, sorted(set(ev.configs.tp.astype(int)))))} (inside a node, "
                   f"dividing the heads) x pp {', '.join(map(str, FULL['pp']))}"
                   + (f" x ep {', '.join(map(str, sorted(set(eps.astype(int)))))} (tp x ep inside a node)" if eps.max() > 1 else "")
                   + f" x ZeRO 0-3 x recompute none/selective/full x "
                   f"micro-batch {', '.join(map(str, FULL_MICRO))}: {len(ev.step if hasattr(ev, 'step') else ev.fits)} layouts, "
                   f"{fitting} fit", source="sizer's layout search"),
        Assumption(name="range", value=f"{low:.3g}-{high:.3g} x expected", source=range_source),
    ]
    if not fitting:
        assumptions.append(Assumption(name="fit", value=f"no layout fits {device.name}'s {memory * unit_factor('B', 'GB'):.3g} GB: "
                                      "shown are those closest to fitting", source="sizer's layout search"))
    return PlanResult(workload=job.summary, device=device.name, count=request.count, precision=table.precisions[0],
                      searched=int(len(ev.fits)), fitting=fitting, layouts=layouts, assumptions=assumptions)
