"""Training time and memory of one (device, count): the request models and the entry functions the
facade, ``--have`` (:mod:`sizer.plan.owned`) and the suggestions build on. The facade adds the
suggestions of what would make a configuration fit; these functions never suggest, so the
modules that make suggestions can call them without importing the facade back.
"""
from __future__ import annotations

from typing import Protocol

import pint
from pydantic import ValidationError

from sizer.asked import Asked, on_catalog
from sizer.choices import Sharding, recompute_index, zero_stage_of
from sizer.engine.job import resolve_job
from sizer.engine.modes import choose_efficiencies
from sizer.errors import InputError, SizerError
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.networks import Topology
from sizer.hardware.schema import Device
from sizer.measured import memory_answer, time_answer
from sizer.request_edits import given_names, rebuilt
from sizer.results import Assumption
from sizer.schemas.base import WorkloadRequest
from sizer.schemas.time_and_memory import MemoryRequest, MemoryResult, SearchedLayout, TimeRequest, TimeResult
from sizer.training.memory_answer import training_memory
from sizer.training.time_answer import estimate_training


def node_type(name: str | None, device: Device) -> Topology | None:
    """The topology of a catalog node type, checked to hold ``device``; None when no name is given.

    Parameters
    ----------
    name : str or None
        A node type of ``catalog/networks`` (``DGX H100``, ``AWS p5``, ...): how many devices a node
        holds, the link inside a node and the network between nodes.
    device : Device
        The device the question runs on; the node type must hold this one.

    Returns
    -------
    Topology or None
        The node type's topology; None where ``name`` is None (the engine's default nodes apply).

    Raises
    ------
    InputError
        On ``system``, where the node type holds another device.
    """
    if name is None:
        return None
    from sizer.hardware.networks import load_networks

    topology = load_networks().topology(name)
    if topology.device != device.id:
        raise InputError("system", name, f"a node type of {device.name} ({topology.system} holds {topology.device})")
    return topology


class ShardedRequest(Protocol):
    """A request that may pin a ZeRO stage: time, memory and cost questions."""

    @property
    def zero(self) -> int | None:
        """The ZeRO stage asked [1], or None."""

    @property
    def sharding(self) -> Sharding:
        """The older sharding name (full is ZeRO 3)."""


def zero_stage(request: ShardedRequest) -> int | None:
    """The ZeRO stage a request asks for, from ``zero`` or from the older ``sharding`` name.

    Parameters
    ----------
    request : TimeRequest, MemoryRequest or TcoRequest
        The training request (its ``zero`` stage [1] and ``sharding``).

    Returns
    -------
    int or None
        The ZeRO stage 0-3 [1] (``sharding full`` is 3, as FSDP FULL_SHARD); None where neither field
        is given, so that the layout search chooses.

    Raises
    ------
    InputError
        On ``zero``, where ``zero`` and ``sharding`` name different stages.
    """
    if request.zero is None and request.sharding is Sharding.NONE:
        return None  # not given
    stage = zero_stage_of(request.sharding)
    if request.zero is not None:
        if stage and request.zero != stage:
            raise InputError("zero", request.zero, f"the stage --sharding {request.sharding} means ({stage}), or one of the two")
        return request.zero
    return stage


def time_estimate(request: TimeRequest, catalog: Catalog | None = None) -> TimeResult:
    """Step time, training time, memory and utilisation from the one engine (spec §3.3): the request's devices found
    in ``catalog`` (:func:`sizer.asked.on_catalog`), then :func:`time_on`. A public entry for a caller holding a
    request and a catalog; the facade and the core call :func:`time_on`.

    Parameters
    ----------
    request : TimeRequest
        The workload, the device and count [1], and any part of the layout to pin (the rest is searched).
    catalog : Catalog, optional
        The devices; default the built-in catalog.

    Returns
    -------
    TimeResult
        As :func:`time_on`.
    """
    return time_on(on_catalog(request, catalog if catalog is not None else load_catalog()))


def time_on(asked: Asked[TimeRequest]) -> TimeResult:
    """Step time, training time, memory and utilisation from the one engine (spec §3.3).

    Parameters
    ----------
    asked : Asked of TimeRequest
        The workload, the device and count [1], and any part of the layout to pin (the rest is searched); its
        device (and reference device, device measured on) found in the catalog.

    Returns
    -------
    TimeResult
        Step and training time [s, or the unit a person reads], memory per device [GB], the layout chosen,
        MFU [1] and the assumptions behind them.

    Raises
    ------
    InputError
        Naming the field at fault (a reference without a workload, a node type of another device, host
        memory that is not positive, ...).
    """
    request, device = asked.request, asked.the_device
    job = resolve_job(request)
    if request.reference is not None and request.workload is None and request.model is None:
        raise InputError("reference", request.reference, "a workload profile or a model too (--workload or --model): a "
                                                         "reference measurement calibrates a described workload")
    reference_batch = request.reference_batch_size
    reference = (asked.reference, request.reference) if asked.reference is not None and request.reference else None
    efficiency, mode, notes = choose_efficiencies(job, device, reference=reference,
                                                  reference_batch_size=reference_batch, calibration=request.calibration)
    topology = node_type(request.system, device)
    host_memory = float(request.host_memory.to("B").magnitude) if request.host_memory is not None else None
    result = estimate_training(job, device, request.count, zero=zero_stage(request), tp=request.tp, pp=request.pp,
                             ep=request.ep,
                             topology=topology, offload=request.offload, hybrid_shard=request.hybrid_shard,
                             recompute=recompute_index(request.recompute), interleave=request.interleave, cp=request.cp,
                             mode=mode, efficiency=efficiency,
                             headroom=request.headroom, overlap_allreduce=request.overlap_allreduce,
                             extra_assumptions=tuple(notes), host_memory=host_memory,
                             interruptions=request.interruptions, overlap_all_to_all=request.overlap_all_to_all,
                             checkpoint_interval=checkpoint_seconds(request.checkpoint_interval))
    if request.framework is None:
        from sizer.frameworks.checks import runs_it

        at = result.layout  # with none named, the framework that runs the layout chosen is said
        result = result.model_copy(update={"assumptions": [*result.assumptions, runs_it(at.tp, at.pp, at.cp, at.ep, at.zero)]})
    answered: TimeResult = time_answer(asked, result, time_on)  # the user's measurement or MFU, where given
    return answered


def checkpoint_seconds(given: pint.Quantity[float] | None) -> float | None:
    """A given checkpoint interval in seconds, or None (Daly's optimal interval).

    Parameters
    ----------
    given : pint.Quantity or None
        The interval as asked, e.g. ``'3 hours'`` (read where the request was built) [time].

    Returns
    -------
    float or None
        Seconds [s].

    Raises
    ------
    InputError
        On ``checkpoint_interval``, where it is not a positive time.
    """
    if given is None:
        return None
    return float(given.to("s").magnitude)  # above zero: the request's field refuses zero


def layout_asked(request: MemoryRequest) -> bool:
    """Whether a memory question pins any part of its layout (a ZeRO stage, sharding, recomputation, expert
    parallelism or offload) rather than leaving each at its default; the CLI sends every default, so the
    values are read, not which fields were set (:func:`chosen_names`).

    Parameters
    ----------
    request : MemoryRequest
        The memory question.

    Returns
    -------
    bool
        True where any of ``zero``, ``sharding``, ``recompute``, ``ep`` or ``offload`` differs from its default.
    """
    return any(name in LAYOUT_FIELDS for name in chosen_names(request))


# the layout fields: at its request's own default, one a client sends anyway (the CLI sends every default) is no choice
LAYOUT_FIELDS = ("zero", "sharding", "recompute", "ep", "offload", "hybrid_shard", "overlap_allreduce")


def chosen_names(request: WorkloadRequest) -> frozenset[str]:
    """The fields of a request the user chose: those given, less any of :data:`LAYOUT_FIELDS` at its request
    type's own default (memory's recompute "none" and ep 1 among them), so that the CLI, which sends every
    default, and HTTP, which sends what the user typed, ask the search the same.

    Parameters
    ----------
    request : WorkloadRequest
        A training request of any command.

    Returns
    -------
    frozenset of str
        The names of the fields given and not None, less the sent defaults (their values stay typed on ``request``).
    """
    defaults = type(request).model_fields
    return frozenset(name for name in given_names(request)
                     if not (name in LAYOUT_FIELDS and name in defaults and getattr(request, name) == defaults[name].default))


def memory_estimate(request: MemoryRequest, catalog: Catalog | None = None) -> MemoryResult:
    """Training memory per device and the fit decision (spec §3.8): the request's device found in ``catalog``
    (:func:`sizer.asked.on_catalog`), then :func:`memory_on`. A public entry for a caller holding a request and a
    catalog; the facade and the core call :func:`memory_on`.

    Parameters
    ----------
    request : MemoryRequest
        The workload, optionally a device and count [1], and the layout asked.
    catalog : Catalog, optional
        The devices; default the built-in catalog.

    Returns
    -------
    MemoryResult
        As :func:`memory_on`.
    """
    return memory_on(on_catalog(request, catalog if catalog is not None else load_catalog()))


def memory_on(asked: Asked[MemoryRequest]) -> MemoryResult:
    """Training memory per device and the fit decision, from the engine's memory model (spec §3.8).

    With a device and no part of the layout asked (:func:`layout_asked`), the layout the time estimate's
    search would choose for the same body is reported beside it (``searched``), so that one question
    never gets two unexplained answers.

    Parameters
    ----------
    asked : Asked of MemoryRequest
        The workload, optionally a device (found in the catalog) and count [1], and the layout asked (ZeRO stage,
        recomputation, expert parallelism, offload).

    Returns
    -------
    MemoryResult
        Memory per device by part [GB], the fit on the device where one is given, and the assumptions.
    """
    request, device = asked.request, asked.device
    estimated = training_memory(resolve_job(request, need_samples=False), device, request.count,
                                zero=zero_stage(request) or 0, headroom=request.headroom,
                                recompute=recompute_index(request.recompute) or 0, ep=request.ep, offload=request.offload)
    result: MemoryResult = memory_answer(request, estimated)  # the user's measured peak memory, where given
    if device is None or layout_asked(request):
        return result
    searched = searched_layout(asked)
    if searched is None:
        return result
    need = searched.memory_per_device
    note = Assumption(name="layout", value=f"data parallel over {request.count}, ZeRO 0, no recomputation: the memory "
                      f"answer's default, not searched; the layout search chooses {searched.layout}: {need.value:.4g} {need.unit} per "
                      f"device, {'fits' if searched.fits else 'does not fit'}",
                      source="sizer time's layout search (give --zero, --sharding or --recompute to pin a layout)")
    return result.model_copy(update={"searched": searched, "assumptions": [note, *result.assumptions]})


def searched_layout(asked: Asked[MemoryRequest]) -> SearchedLayout | None:
    """The layout the time estimate chooses for a memory question's body, its memory per device and fit;
    None where the body cannot be timed (the time estimate refuses it: the memory answer stands alone).

    Parameters
    ----------
    asked : Asked of MemoryRequest
        The memory question on its catalog; a length of 1e9 tokens (or samples) is put in where none is given,
        since a step's layout does not depend on the run's length.

    Returns
    -------
    SearchedLayout or None
        The layout, its memory per device [GB] and whether it fits; None where the time estimate refuses
        the question.
    """
    # recomputation "none" sent by the CLI is no recomputation asked: searched; a peak memory measured does not
    # rescale the layout's time
    request = asked.request
    names = chosen_names(request) - {"have", "measured"}
    length = {}
    if request.tokens is None and request.samples is None:  # a step's layout needs no length
        length["tokens" if request.model is not None or request.params is not None else "samples"] = 1e9
    try:
        timed = time_on(asked.again(rebuilt(TimeRequest, request, names, **length), have=()))
    except (SizerError, ValidationError):
        return None
    layout = timed.layout
    words = f"tp {layout.tp} x pp {layout.pp} x dp {layout.dp}, ZeRO {layout.zero}, recompute {layout.recompute}, " \
            f"micro-batch {layout.micro_batch}"
    return SearchedLayout(layout=words, tp=layout.tp, pp=layout.pp, dp=layout.dp, zero=layout.zero,
                          recompute=layout.recompute, micro_batch=layout.micro_batch,
                          memory_per_device=timed.memory_per_device, fits=timed.fits)
