"""What-if tables: many workloads × devices × device counts × precisions × sharding at once.

:func:`sweep` runs the one engine (:func:`sizer.engine.evaluate.evaluate`) on the whole grid of
each (workload, precision): the same numbers as ``sizer time`` for every row.

Columns of the table (one row per combination; times in seconds, memory in bytes, cost in USD):
``workload, params, samples, token_mode, precision, device, name, kind, count, sharding, zero,
tp, pp, ep, recompute, batch_size, supported, training_compute_flop, peak_flops, step_time_s_{low,expected,high}, bound, mfu,
training_time_s_{low,expected,high}, physical_limit_s, memory_per_device_b, device_memory_b,
fits, price_basis, price_usd_per_hour, cost_usd_{low,expected,high}``. Rows whose precision the
device lacks have ``supported`` False and NaN figures. Costs are priced by ``pricing`` (rent, buy
or any) through :func:`sizer.formulas.tco.hourly_price`, and ``price_basis`` says which each
row's cost is ("rent", "buy", or "" where no price of the basis is known). ``batch_size`` is the batch
each row runs: the asked one; for a default batch, the nearest that the layout splits into whole micro-batches (a
default batch that the count's replicas outnumber is raised, as ``sizer time`` and ``plan`` do), while a count
that cannot split a batch the user gave is not ``supported``, as ``sizer time`` refuses it.

>>> table = sweep([{"params": 1.3e9, "tokens": 2.6e10}], devices=["H100 SXM", "Tesla P40"],
...               counts=[1, 8], precisions=["bf16", "fp32"])
>>> len(table), int(table["supported"].sum())
(8, 6)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from sizer.choices import PRICE_BASES as CHOSEN_BASES
from sizer.choices import PRICINGS, Mode, Precision, Sharding, parse_choice, zero_stage_of
from sizer.deadline import check_deadline
from sizer.engine import achieved
from sizer.engine.devices import DeviceTable, cached_device_table
from sizer.engine.evaluate import Evaluation, evaluate
from sizer.engine.job import Job, resolve_job
from sizer.engine.search import search
from sizer.engine.step_inputs import BOUNDS, RECOMPUTE
from sizer.engine.summary import summarise
from sizer.engine.time_range import range_arrays
from sizer.errors import InputError
from sizer.formulas.tco import Pricing, check_provider, hourly_price
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.schema import Device
from sizer.results import unit_factor
from sizer.schemas.base import WorkloadRequest

if TYPE_CHECKING:
    import pandas as pd

PRECISION_NAMES = ("", *(p.value for p in Precision if p is not Precision.MIXED))  # "": not supported
MAX_EVALUATIONS = 5_000_000  # rows of one table: about 2 GB of frame; a larger sweep is refused
SECONDS_PER_HOUR = unit_factor("hour", "s")
COLUMNS = ("workload", "params", "samples", "token_mode", "precision", "device", "name", "kind", "count", "sharding",
           "zero", "tp", "pp", "ep", "recompute", "batch_size", "supported", "training_compute_flop", "peak_flops", "step_time_s_low", "step_time_s_expected",
           "step_time_s_high", "bound", "mfu", "training_time_s_low", "training_time_s_expected",
           "training_time_s_high", "physical_limit_s", "memory_per_device_b", "device_memory_b", "fits",
           "price_basis", "price_usd_per_hour", "cost_usd_low", "cost_usd_expected", "cost_usd_high")
PRICE_BASES = ("", *CHOSEN_BASES)  # "": no price


def _as_request(workload: WorkloadRequest | dict[str, Any]) -> WorkloadRequest:
    if isinstance(workload, WorkloadRequest):
        return workload
    if isinstance(workload, dict):
        from pydantic import ValidationError

        try:
            return WorkloadRequest.model_validate(workload)
        except ValidationError as error:
            from sizer.workloads.field_check import request_errors

            unread = [e for e in request_errors(error, workload) if isinstance(e, InputError)
                      and isinstance(e.value, (str, int, float))]
            if unread:  # a count or quantity whose text does not read: its own field named (a list is no workload)
                raise unread[0] from None
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "workload"
            raise InputError("workloads", workload, f"valid workload fields ({where}: {first['msg']})") from None
    raise InputError("workloads", workload, "a list of workloads, each a mapping such as {'params': 7e9, 'tokens': 2e10}")


def _counts(counts: Iterable[int]) -> npt.NDArray[np.float64]:
    values = list(counts)
    if not values:
        raise InputError("counts", values, "at least one device count")
    for count in values:
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or not 1 <= count <= 1_000_000:
            raise InputError("counts", count, "whole numbers of devices from 1 to 1,000,000")
    return np.asarray(list(dict.fromkeys(int(count) for count in values)), dtype=float)  # 1,1 asks one question


def hourly_prices(devices: Sequence[Device], pricing: Pricing = "rent", cloud: str | None = None,
                  counts: tuple[int, ...] = (1,)) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int8]]:
    """Per device and count of ``counts`` (devices x counts): the price [USD/h] as :func:`hourly_price`
    chooses it for ``pricing`` from offers that can run that many devices (of the provider ``cloud``
    if named; NaN where unknown) and its basis as an index into :data:`PRICE_BASES`.

    Parameters
    ----------
    devices : sequence of Device
        The catalog devices.
    pricing : str, default "rent"
        rent, buy or any.
    cloud : str, optional
        A provider whose offers alone are used.
    counts : tuple of int, default (1,)
        Devices per run [1].

    Returns
    -------
    tuple of numpy.ndarray
        The hourly price of one device [USD/h] (devices x counts, NaN where unknown), and each price's
        basis (devices x counts, an index into :data:`PRICE_BASES`: 0 none, 1 rent, 2 buy).
    """
    prices: list[list[float]] = []
    bases: list[list[int]] = []
    for device in devices:
        chosen = [hourly_price(device, cloud, pricing=pricing, count=int(count)) for count in counts]
        prices.append([p.hourly.to("USD/hour").magnitude if p.hourly is not None else np.nan for p in chosen])
        bases.append([PRICE_BASES.index(p.price_basis or "") for p in chosen])
    return (np.asarray(prices, dtype=float).reshape(len(devices), len(counts)),
            np.asarray(bases, dtype=np.int8).reshape(len(devices), len(counts)))


def _auto_layouts(job: Job, table: DeviceTable, counts: npt.NDArray[np.float64], headroom: bool,
                  overlap_allreduce: bool) -> Evaluation:
    """Per (device, count): the layout ``sizer time`` would choose (the one search), evaluated."""
    pair_device, pair_count = (a.ravel() for a in np.meshgrid(np.arange(len(table.devices)), counts, indexing="ij"))
    found = search(job, table, pair_device, pair_count.astype(np.int64), headroom=headroom,
                   overlap_allreduce=overlap_allreduce)
    c, rows = found.evaluation.configs, found.chosen
    return evaluate(job, table, c.device[rows], c.count[rows], c.zero[rows], tp=c.tp[rows], pp=c.pp[rows],
                    cp=c.cp[rows], recompute=c.recompute[rows], interleave=c.interleave[rows],
                    ep=np.broadcast_to(c.ep, c.tp.shape)[rows],
                    micro_batch=None if job.micro_batch is not None else c.micro_batch[rows], headroom=headroom,
                    overlap_allreduce=overlap_allreduce)


def _group(index: int, job: Job, devices: tuple[Device, ...], precision: Precision, counts: npt.NDArray[np.float64],
           zeros: npt.NDArray[np.int64] | None, prices: tuple[npt.NDArray[np.float64], npt.NDArray[np.int8]],
           headroom: bool, overlap_allreduce: bool) -> dict[str, Any]:
    table = cached_device_table(devices, precision, job.arch is not None)
    if zeros is None:
        ev = _auto_layouts(job, table, counts, headroom, overlap_allreduce)
    else:
        grid_device, grid_count, grid_zero = np.meshgrid(np.arange(len(devices)), counts, zeros, indexing="ij")
        ev = evaluate(job, table, grid_device, grid_count, grid_zero, headroom=headroom,
                      overlap_allreduce=overlap_allreduce)
    lows, highs = range_arrays(Mode.DATASHEET, job, devices)
    d, count = ev.configs.device, ev.configs.count
    limit_step = ev.parts.physical_limit
    steps = ev.steps
    rows = len(d)
    # a batch the user gave is never changed: a count whose replicas cannot split it runs nothing here
    supported = ev.feasible & (ev.exact | (not job.batch_given))

    def nan(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """A figure where the row is supported, NaN where its precision is not."""
        return np.where(supported, values, np.nan)

    peak = table.peak[d]
    summary = summarise(ev, np.arange(rows), lows[d], highs[d], peak)
    if zeros is None and achieved.transfers(job.shape is not None, False):
        # the layout `sizer time` chooses, at the pace `time` answers with (issue 39: what published runs on the
        # device's family achieved against it; sizer.engine.achieved)
        factor = np.asarray([achieved.achieved_factor(f"{dev.id} {dev.name}")[0] for dev in devices])[d]
        summary = achieved.at_achieved_pace(summary, factor)
    step_range = [nan(summary.step_low), nan(summary.step_expected), nan(summary.step_high)]
    training = [s * steps for s in step_range]
    hourly_grid, basis_grid = prices  # devices x counts: the offer that runs each count
    order = np.argsort(counts)
    j = order[np.searchsorted(counts, count, sorter=order)]
    hourly, basis = hourly_grid[d, j], basis_grid[d, j]
    cost = [hourly * count * t / SECONDS_PER_HOUR for t in training]
    mfu = nan(summary.mfu)
    resolved = np.asarray([PRECISION_NAMES.index(p or "") for p in table.precisions], dtype=np.int8)
    return {
        "workload": np.full(rows, index), "params": np.full(rows, job.params), "samples": np.full(rows, job.samples),
        "token_mode": np.full(rows, job.token_mode), "precision": resolved[d], "device": d, "count": count.astype(np.int64),
        "sharding": (ev.configs.zero == 3).astype(np.int8), "zero": ev.configs.zero,
        "tp": ev.configs.tp.astype(np.int64), "pp": ev.configs.pp.astype(np.int64),
        "ep": np.broadcast_to(ev.configs.ep, ev.configs.tp.shape).astype(np.int64),
        "recompute": ev.configs.recompute.astype(np.int8), "batch_size": ev.batch,
        "supported": supported, "training_compute_flop": np.full(rows, job.training_flops), "peak_flops": peak,
        "step_time_s_low": step_range[0], "step_time_s_expected": step_range[1], "step_time_s_high": step_range[2],
        "bound": np.where(supported, ev.parts.bound, -1).astype(np.int8), "mfu": mfu,
        "training_time_s_low": training[0], "training_time_s_expected": training[1], "training_time_s_high": training[2],
        "physical_limit_s": nan(limit_step * steps), "memory_per_device_b": ev.memory_needed,
        "device_memory_b": table.memory[d], "fits": ev.fits, "price_basis": basis,
        "price_usd_per_hour": hourly, "cost_usd_low": cost[0], "cost_usd_expected": cost[1], "cost_usd_high": cost[2]}


def sweep(workloads: Sequence[WorkloadRequest | dict[str, Any]], devices: Iterable[str] | None = None,
          counts: Iterable[int] = (1,), precisions: Iterable[str] | None = None, shardings: Iterable[str] = ("auto",),
          *, catalog: Catalog | None = None, headroom: bool = False, overlap_allreduce: bool = False,
          pricing: Pricing = "rent", cloud: str | None = None) -> pd.DataFrame:
    """A pandas DataFrame with one row per workload × device × count × precision × sharding.

    ``workloads`` are :class:`~sizer.schemas.base.WorkloadRequest` objects or mappings with its
    fields; ``devices`` are names or ids (default: the whole catalog); ``precisions`` default to
    each workload's own. ``shardings``: ``auto`` (the layout ``sizer time`` chooses for each row), or
    ``none`` / ``full`` (data parallel with replicated or ZeRO-3-sharded model states). ``pricing``
    and ``cloud`` choose the price of each row's cost (see :func:`hourly_prices`).

    Parameters
    ----------
    workloads : sequence of WorkloadRequest or dict
        At least one workload.
    devices : iterable of str, optional
        Device names or ids; default the whole catalog.
    counts : iterable of int, default (1,)
        Devices per row [1], 1 to 1,000,000.
    precisions : iterable of str, optional
        Precisions; default each workload's own.
    shardings : iterable of str, default ("auto",)
        ``auto`` alone, or ``none`` and ``full``.
    catalog : Catalog, optional
        Default the built-in catalog.
    headroom : bool, default False
        Reserve seed 003's 25-30 % extra memory.
    overlap_allreduce : bool, default False
        Overlap the gradient all-reduce with the backward pass.
    pricing : str, default "rent"
        rent, buy or any.
    cloud : str, optional
        A provider whose offers alone are used.

    Returns
    -------
    pandas.DataFrame
        One row per combination, the columns of :data:`COLUMNS` (times [s], memory [B], cost [USD]).

    Raises
    ------
    InputError
        Naming the field: no workloads or devices, a bad count, sharding, precision or pricing, or more
        than :data:`MAX_EVALUATIONS` rows.
    """
    import pandas as pd

    catalog = catalog if catalog is not None else load_catalog()
    if isinstance(workloads, (WorkloadRequest, dict)) or not isinstance(workloads, Sequence) or not workloads:
        raise InputError("workloads", workloads, "a non-empty list of workloads")
    # one device named twice (by name and by id) is one question: one row, and one code per device
    chosen = tuple(catalog) if devices is None else tuple({d.id: d for d in map(catalog.find, devices)}.values())
    if not chosen:
        raise InputError("devices", devices, "at least one device")
    count_array = _counts(counts)
    zeros = _zero_stages(list(shardings))
    wanted = None if precisions is None else list(dict.fromkeys(parse_choice(Precision, p, "precision") for p in precisions))
    rows = len(workloads) * len(chosen) * len(count_array) * (1 if zeros is None else len(zeros)) * (len(wanted) if wanted else 1)
    if rows > MAX_EVALUATIONS:
        raise InputError("sweep", rows, f"at most {MAX_EVALUATIONS:,} combinations; narrow the sweep")
    requests = [_as_request(w) for w in workloads]
    if pricing not in PRICINGS:
        raise InputError("pricing", pricing, ", ".join(PRICINGS))
    prices = hourly_prices(chosen, pricing, check_provider(cloud, catalog), tuple(count_array.astype(int).tolist()))
    groups: list[dict[str, Any]] = []
    each_precision: list[Precision | None] = list(wanted) if wanted else [None]  # None: the workload's own
    asked: set[str] = set()
    for index, request in enumerate(requests):
        for precision in each_precision:
            check_deadline()
            job = resolve_job(request if precision is None else request.model_copy(update={"precision": precision}))
            if (key := _question_key(job)) in asked:  # '1B,1e9' or 'bf16,BF16': one question, its first row kept
                continue
            asked.add(key)
            groups.append(_group(index, job, chosen, job.precision, count_array, zeros, prices, headroom,
                                 overlap_allreduce))
    return pd.DataFrame(_merged(groups, chosen))


def _zero_stages(shardings: list[str]) -> npt.NDArray[np.int64] | None:
    """The ZeRO stages [1] of the shardings asked (``none``, ``full``), or None for ``auto`` (the layout
    ``sizer time`` chooses for each row).

    Parameters
    ----------
    shardings : list of str
        ``["auto"]``, or ``none`` and ``full`` in any number.

    Raises
    ------
    InputError
        On ``sharding``: none given, ``auto`` with others, or an unknown name.
    """
    if not shardings:
        raise InputError("sharding", shardings, "at least one of auto, none, full")
    autos = sum(isinstance(s, str) and s.strip().lower() == "auto" for s in shardings)  # 'auto,AUTO' is auto
    if autos and autos < len(shardings):
        raise InputError("sharding", shardings, "auto alone, or a list of none and full")
    if autos:
        return None
    stages = dict.fromkeys(zero_stage_of(parse_choice(Sharding, s, "sharding")) for s in shardings)  # 'none,none': one
    return np.asarray(list(stages), dtype=np.int64)


def _question_key(job: Job) -> str:
    """What makes two resolved workloads one question: every figure of the job but its wording (the
    description and the assumptions that quote the user's text), the layer table by its content digest.

    Parameters
    ----------
    job : Job
        A resolved workload at one precision.

    Returns
    -------
    str
        Equal for jobs the engine cannot tell apart ('1B' and '1e9' parameters, a model by name and by hub id).
    """
    import dataclasses

    skip = {"layers", "description", "assumptions"}
    figures = tuple((f.name, getattr(job, f.name)) for f in dataclasses.fields(job) if f.name not in skip)
    return repr((job.layers.content_key, figures))


def _merged(groups: list[dict[str, Any]], chosen: tuple[Device, ...]) -> dict[str, Any]:
    """The groups' columns joined, in :data:`COLUMNS`' order, text columns as categoricals: codes built per
    group, the names once (no per-row strings).

    Parameters
    ----------
    groups : list of dict
        One :func:`_group` per (workload, precision), at least one.
    chosen : tuple of Device
        The devices swept, whose positions the ``device`` codes are.
    """
    import pandas as pd

    merged = {name: np.concatenate([g[name] for g in groups]) for name in groups[0]}
    labels = {"device": [d.id for d in chosen], "precision": PRECISION_NAMES, "price_basis": PRICE_BASES, "sharding": ["none", "full"],
              "recompute": list(RECOMPUTE), "bound": list(BOUNDS)}
    pick = merged["device"]
    for name, categories in labels.items():
        merged[name] = pd.Categorical.from_codes(merged[name], categories=list(dict.fromkeys(categories)))
    merged["name"] = pd.Categorical.from_codes(pick, categories=[d.name for d in chosen]) \
        if len({d.name for d in chosen}) == len(chosen) else np.asarray([d.name for d in chosen], dtype=object)[pick]
    merged["kind"] = np.asarray([d.kind for d in chosen], dtype=object)[pick]
    return {name: merged[name] for name in COLUMNS}
