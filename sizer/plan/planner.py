"""``sizer plan``: the layouts of one (model, device, count) that fit, fastest first, with why.

Every candidate of the one layout search (:mod:`sizer.engine.search`: tensor × pipeline ×
context × data parallel, interleaving, ZeRO 0-3, recomputation, whole micro-batches) is evaluated
in one engine call; each layout is shown once and says where its step goes (pipeline bubble,
communication, memory). Fields given (``tp``, ``micro_batch``, ...) pin their dimension. The first
row is what ``sizer time`` answers without a layout.

>>> result = plan(PlanRequest(model="llama-2-7b", tokens=2e11, device="H100 SXM", count=16))
>>> best = result.layouts[0]
>>> best.tp * best.pp * best.cp * best.dp == 16 and best.fits
True
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from sizer.asked import Asked, on_catalog
from sizer.choices import Mode, recompute_index
from sizer.engine import achieved
from sizer.engine.constants import device_efficiencies
from sizer.engine.devices import DeviceTable, build_device_table
from sizer.engine.evaluate import Evaluation
from sizer.engine.job import Job, resolve_job
from sizer.engine.layout_checks import check_layout, fixed_layout, refuse_batch, refuse_changed_batch
from sizer.engine.search import search, unique_layouts
from sizer.engine.step_inputs import RECOMPUTE
from sizer.engine.summary import Summary, summarise
from sizer.engine.time_range import range_factors, workload_kind
from sizer.errors import InputError
from sizer.formulas.peaks import supported_precisions
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.launch.dispatch import check_emit
from sizer.measured import at_mfu, mfu_assumption
from sizer.plan.launch_answer import with_launch
from sizer.results import Assumption, QuantityOut, RangeOut, time_unit, unit_factor
from sizer.schemas.plan import LayoutOption, PlanRequest, PlanResult
from sizer.training.time_answer import batch_change


def _why(ev: Evaluation, r: int, memory: float) -> str:
    p = ev.parts
    step = float(p.step[r])

    def share(value: float) -> str:
        return f"{float(value) / step:.0%}"

    parts = [f"bubble {share(p.bubble[r])}"] if ev.configs.pp[r] > 1 else []
    if ev.configs.tp[r] > 1:
        parts.append(f"tensor-parallel traffic {share(p.tensor_parallel[r])}")
    if ev.configs.cp[r] > 1:
        parts.append(f"ring attention {share(p.context_parallel[r])}")
    if np.broadcast_to(p.expert_parallel, p.step.shape)[r] > 0:
        parts.append(f"expert all-to-all {share(np.broadcast_to(p.expert_parallel, p.step.shape)[r])}")
    if ev.configs.dp[r] * ev.configs.cp[r] > 1:
        parts.append(f"gradient sync {share(p.data_parallel[r])}")
    if ev.configs.pp[r] > 1:
        parts.append(f"stage sends {share(p.pipeline[r])}")
    parts.append(f"memory {float(ev.memory_needed[r]) / memory:.0%} of the device")
    return ", ".join(parts)


def at_one_batch(ev: Evaluation, rows: npt.NDArray[np.intp], distance: npt.NDArray[np.float64]) -> npt.NDArray[np.intp]:
    """``rows`` (in their order) that run one batch, so that their times compare: the asked batch where
    any row runs it, else the nearest one some row runs (the first such row's batch where several are
    equally near).

    Parameters
    ----------
    ev : Evaluation
        The evaluated candidates.
    rows : numpy.ndarray
        Rows in order [index].
    distance : numpy.ndarray
        Per candidate, how far its batch is from the asked one, ``|log(batch / asked)|`` [1]
        (:func:`sizer.engine.search.batch_distance`).

    Returns
    -------
    numpy.ndarray
        The rows at that batch, in the given order [index].
    """
    if not len(rows):
        return rows
    nearest = rows[np.argmin(distance[rows])]  # the first of the nearest (argmin takes the first)
    same: npt.NDArray[np.intp] = rows[ev.batch[rows] == ev.batch[nearest]]
    return same


def plan(request: PlanRequest, catalog: Catalog | None = None) -> PlanResult:
    """Search the layouts of ``request.count`` devices for the job and rank those that fit (:func:`plan_on`), the
    request's device found in ``catalog`` first (:func:`sizer.asked.on_catalog`): a public entry for a caller holding
    a request and a catalog; the facade calls :func:`plan_on`.

    Parameters
    ----------
    request : PlanRequest
        The workload, device and count [1], the layout dimensions to pin, and how many layouts to show.
    catalog : Catalog, optional
        The devices; default the built-in catalog.

    Returns
    -------
    PlanResult
        As :func:`plan_on`.
    """
    check_emit(request)  # a tool that launches no training layout is refused before the search
    return plan_on(on_catalog(request, catalog or load_catalog()))


def plan_on(asked: Asked[PlanRequest]) -> PlanResult:
    """Search the layouts of ``request.count`` devices for the job and rank those that fit.

    Parameters
    ----------
    asked : Asked of PlanRequest
        The workload, device and count [1], the layout dimensions to pin, and how many layouts to show; its
        device found in the catalog (its ``emit`` checked first, :func:`sizer.launch.dispatch.check_emit`).

    Returns
    -------
    PlanResult
        The layouts that fit, fastest first, each with its step and training time [s, or the unit a
        person reads], memory per device [GB], MFU and HFU [1] and where its step goes; where none fits,
        those closest to fitting. The first is the layout ``sizer time`` answers with.

    Raises
    ------
    InputError
        Naming the field: a precision the device lacks, a pinned layout that does not divide the
        count or the model, or a batch no layout can run.
    """
    request, device = asked.request, asked.the_device
    job = resolve_job(request)
    table = build_device_table((device,), job.precision,
                               (device_efficiencies(device, job.arch is not None),))
    if not table.supported[0]:
        raise InputError("precision", request.precision,
                         f"a precision {device.name} supports: {', '.join(supported_precisions(device))}")
    recompute = recompute_index(request.recompute)
    check_layout(job, request.count, request.tp, request.pp, recompute, request.cp, interleave=request.interleave)
    if request.ep is not None:
        from sizer.engine.layout_checks import check_expert_parallel

        check_expert_parallel(job, request.count, request.tp or 1, request.pp or 1, request.ep)
    fixed = fixed_layout(request.zero, request.tp, request.pp, request.cp, recompute, request.interleave, request.ep)
    found = search(job, table, [0], [request.count], fixed=fixed, headroom=request.headroom,
                   overlap_allreduce=request.overlap_allreduce, overlap_all_to_all=request.overlap_all_to_all)
    ev = found.evaluation
    if not ev.feasible.any():
        refuse_batch(job, table, request.count, fixed)
    eps = np.broadcast_to(ev.configs.ep, ev.configs.tp.shape)
    rows = found.ranked(0)
    if request.ep is not None:  # the user's expert-parallel size only
        rows = rows[eps[rows] == request.ep]
    rows = at_one_batch(ev, rows, found.distance)
    fitting = len(rows)
    if not fitting:  # nothing fits: the layouts closest to fitting, so the user sees by how much
        candidates = np.flatnonzero(ev.feasible & ((eps == request.ep) if request.ep is not None else True))
        rows = candidates[np.argsort(ev.memory_needed[candidates], kind="stable")]
        rows = unique_layouts(ev, at_one_batch(ev, rows, found.distance))
    low, high, range_source = range_factors(Mode.DATASHEET, workload_kind(job, device.kind))
    shown = rows[:request.shown]
    summary = at_mfu(summarise(ev, shown, low, high, float(table.peak[0])), request.mfu)  # a given MFU, where one is
    achieved_note = None
    if request.mfu is None and achieved.transfers(job.shape is not None, any(v is not None for v in fixed.values())):
        # no layout pinned: every row at what published runs achieved against the layout sizer finds, as `time`'s
        # headline (sizer.engine.achieved), so that plan's first row and `time` are one answer
        summary, achieved_note = _achieved(summary, f"{device.id} {device.name}")
    unit = time_unit(float(summary.training("expected")[0])) if len(shown) else "s"
    layouts = _with_interruptions([_option(ev, r, k, summary, unit, job, float(table.memory[0]))
                                   for k, r in enumerate(shown)], request, job, table)
    values = sorted(set(ev.configs.tp.astype(int)))
    experts = f" x ep {', '.join(map(str, sorted(set(eps.astype(int)))))} (across nodes where tp x ep exceeds one)" if eps.max() > 1 else ""
    assumptions = [
        *job.assumptions,
        Assumption(name="search", value=f"tp {', '.join(map(str, values))} (inside a node, dividing the heads) x pp "
                   f"in powers of two (1F1B, interleaved to one block per virtual stage; uneven splits at the heaviest stage's pace) x cp for long sequences{experts} x ZeRO 0-3 x recomputation "
                   f"x whole micro-batches{', pinned: ' + ', '.join(f'{k} {v}' for k, v in fixed.items()) if fixed else ''}: "
                   f"{len(ev.fits)} candidates, {fitting} distinct layouts fit"
                   + (f" at a batch of {float(ev.batch[rows[0]]):,.0f} {job.sample_word}s (every row runs it, so their times compare)"
                      if len(rows) else ""), source="sizer's layout search"),
        Assumption(name="range", value=f"{low:.3g}-{high:.3g} x expected", source=range_source)
        if request.mfu is None else mfu_assumption(request.mfu),
    ]
    if achieved_note is not None:
        assumptions.append(achieved_note)
    if any(option.training_time_with_interruptions for option in layouts):
        from sizer.engine.goodput import stated

        assumptions.append(stated())
    if len(shown):
        refuse_changed_batch(job, bool(ev.exact[shown[0]]), float(ev.batch[shown[0]]), request.count)
    warnings = [batch_change(job, float(ev.batch[shown[0]]))] if len(shown) and not ev.exact[shown[0]] else []
    if not fitting:
        memory = float(table.memory[0])
        assumptions.append(Assumption(name="fit", value=f"no layout fits {device.name}'s {memory * unit_factor('B', 'GB'):.3g} GB: "
                                      "shown are those closest to fitting", source="sizer's layout search"))
    result = PlanResult(workload=job.summary, device=device.name, count=request.count, precision=table.precisions[0],
                        searched=int(len(ev.fits)), fitting=fitting, layouts=layouts, sample=job.sample_word,
                        warnings=warnings, assumptions=assumptions)
    return with_launch(asked, result)  # with emit: the fastest layout's command (sizer.launch)


def _achieved(summary: Summary, device_name: str) -> tuple[Summary, Assumption]:
    """Every row's step at the achieved pace: over the device family's factor (:mod:`sizer.engine.achieved`), MFU
    and HFU times it, and the assumption that says so."""
    factor, family, sources = achieved.achieved_factor(device_name)
    slower = achieved.at_achieved_pace(summary, factor)
    note = Assumption(name="achieved, not only possible",
                      value=f"no layout pinned: each row is what published runs on {family} devices achieved against "
                      f"the layout's own time ({factor:.3g} of its throughput, {sources} sources), as `sizer time` "
                      "answers; a layout given is predicted as the user's own run", source=achieved.SOURCE, verified=False)
    return slower, note


def _with_interruptions(options: list[LayoutOption], request: PlanRequest, job: Job,
                        table: DeviceTable) -> list[LayoutOption]:
    """``options`` with their training time with interruptions where asked, or by default (sizer.engine.goodput):
    each bound of the range times its own expected wall-clock factor."""
    from sizer.engine import goodput

    timed = [o.training_time for o in options if o.training_time is not None]
    if not timed:
        return options
    scale = unit_factor(timed[0].unit, "s")  # one unit for the whole list
    seconds = np.asarray([[t.low, t.expected, t.high] for t in timed]) * scale
    shown = np.asarray(goodput.wanted(request.interruptions, seconds[:, 1], request.count))  # one flag per timed row
    factor = np.asarray(goodput.interruptions(seconds, request.count,
                                              float(goodput.checkpoint_bytes(job, table))).factor).reshape(seconds.shape)
    out: list[LayoutOption] = []
    k = 0
    for option in options:
        if option.training_time is None:
            out.append(option)
            continue
        t = option.training_time
        if shown[k]:
            lost = dict(low=t.low * factor[k, 0], expected=t.expected * factor[k, 1], high=t.high * factor[k, 2], unit=t.unit)
            option = option.model_copy(update={"training_time_with_interruptions": RangeOut(**lost)})
        out.append(option)
        k += 1
    return out


def _option(ev: Evaluation, r: int, k: int, summary: Summary, unit: str, job: Job, memory: float) -> LayoutOption:
    c = ev.configs
    step = (float(summary.step_low[k]), float(summary.step_expected[k]), float(summary.step_high[k]))
    steps = float(summary.steps[k])
    return LayoutOption(
        tp=int(c.tp[r]), pp=int(c.pp[r]), cp=int(c.cp[r]), ep=int(np.broadcast_to(c.ep, c.tp.shape)[r]),
        dp=int(round(float(c.dp[r]))), zero=int(c.zero[r]),
        recompute=RECOMPUTE[int(c.recompute[r])], interleave=int(c.interleave[r]),
        micro_batch=int(round(float(c.micro_batch[r]))), accumulation=int(c.accumulation[r]),
        batch_size=float(ev.batch[r]), step_time=RangeOut.of_seconds(step, "s"),
        training_time=RangeOut.of_seconds((step[0] * steps, step[1] * steps, step[2] * steps), unit) if job.samples else None,
        memory_per_device=QuantityOut.convert(ev.memory_needed[r], "B", "GB"), fits=bool(ev.fits[r]),
        mfu=float(summary.mfu[k]), hfu=float(summary.hfu[k]), why=_why(ev, r, memory))
