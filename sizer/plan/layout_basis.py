"""A recommendation's layouts, kept by what they depend on: the model's shape, not the run's length.

The layout search of every (device, count) pair depends on the layers and shape of the model, the
batch, the sequence, precision, optimizer, fine-tuning method, headroom and the devices; not on how
long the run is. The optimizer steps ``ceil(S E / B)`` multiply every candidate that runs the asked
batch ``B`` alike, so among those the choice is the same for every length (:attr:`Basis.token_free`
says when a pair fell back to a nearby batch, where rounding of the steps could matter; such a
search is kept per length). A bare parameter count becomes one of a few generated shapes, so many
new questions share one search. Per request only the length is applied: training time = step
time x steps, from the one summary (:func:`sizer.engine.summary.summarise`). The default batch
follows the run's compute in powers of two of sequences (:mod:`sizer.formulas.batch_rule`), so runs
of nearby lengths share it, and with it their search; a run 20 times longer has another batch.

>>> from sizer.engine.job import resolve_job
>>> from sizer.schemas.base import WorkloadRequest
>>> near, far = ((resolve_job(WorkloadRequest(params=7e9 + d, tokens=t)) for d, t in ((0, 2e10), (1e6, 2.1e10))),
...              (resolve_job(WorkloadRequest(params=7e9, tokens=t)) for t in (1e9, 2e10)))
>>> (lambda a, b: layout_key(a) == layout_key(b))(*near), (lambda a, b: layout_key(a) == layout_key(b))(*far)
(True, False)
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Hashable, NamedTuple, Protocol, cast

import numpy as np

from sizer.choices import Mode
from sizer.diskcache import cached, key_of
from sizer.engine.devices import DeviceTable, build_device_table, cached_device_table
from sizer.engine.job import Job
from sizer.engine.layers import LayerTable
from sizer.formulas.peaks import supported_precisions
from sizer.hardware.schema import Device
from sizer.memo import registered_cache
from sizer.results import unit_factor
from sizer.schemas.calibration_file import Calibration
from sizer.workloads.architecture import Architecture
from sizer.workloads.finetune import FineTune

if TYPE_CHECKING:
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

    from sizer.engine.evaluate import Evaluation

# Job fields the search does not read: how long the run is and how it is described. Every other
# field (and any added later) enters the key. Of ``workload`` the search reads the backward factor only.
LENGTH_AND_WORDS = frozenset({"description", "samples", "epochs", "workload", "assumptions"})
NAMES = frozenset({"name", "source", "verified", "assumptions"})  # words, not figures


def _figures(value: object) -> object:
    """A hashable stand-in for one field's figures (arrays by digest, words left out)."""
    if isinstance(value, LayerTable):
        return value.content_key
    if isinstance(value, Architecture):
        return tuple((f.name, getattr(value, f.name)) for f in dataclasses.fields(value) if f.name not in NAMES)
    if isinstance(value, FineTune):
        return tuple((name, getattr(value, name)) for name in value._fields if name not in NAMES)
    return value


def layout_key(job: Job) -> tuple[tuple[str, object], ...]:
    """What the layout search of ``job`` depends on: every field but its length and words.

    Parameters
    ----------
    job : Job
        The workload.

    Returns
    -------
    tuple
        Hashable; equal for jobs whose searches are equal (the same shape, batch, sequence,
        precision, optimizer and method, of any length).
    """
    fields = tuple((f.name, _figures(getattr(job, f.name))) for f in dataclasses.fields(job)
                   if f.name not in LENGTH_AND_WORDS)
    return fields + (("backward_factor", job.workload.backward_factor),)


# eq and repr left out: arrays have no truth value to compare by, nor a readable repr (and each generated
# method costs start-up: Python 3.11 compiles them one by one)
@dataclass(frozen=True, eq=False, repr=False)
class Basis:
    """Per device (axis 0) and count (axis 1): the layout the search chose and its figures per step."""

    table: DeviceTable
    counts: np.ndarray  # devices [1], per column
    found: np.ndarray  # bool: a layout fits
    exact: np.ndarray  # bool: the chosen layout runs the asked batch
    batch: np.ndarray  # global batch of the chosen layout [sample]
    step_low: np.ndarray  # s per step, the one summary's range, floored at the physical limit
    step_expected: np.ndarray
    step_high: np.ndarray
    mfu: np.ndarray
    memory_needed: np.ndarray  # B per device
    fits: np.ndarray
    bound: np.ndarray  # index into BOUNDS
    zero: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    ep: np.ndarray
    recompute: np.ndarray  # index into RECOMPUTE
    micro_batch: np.ndarray
    range_low: np.ndarray  # per device: factors of the expected time [1]
    range_high: np.ndarray
    range_source: str  # where the range's factors come from (the error spread of the search's mode), as said
    unserved: tuple[tuple[str, str, float | None] | None, ...]  # per device: why no count fits, its cause and
    # shortfall (memory needed over the device's); None where one does
    token_free: bool  # every fitting choice runs the asked batch: the same for any length
    length: tuple[float, float]  # (samples, epochs) of the job searched: where not token-free, for that length only

    def steps(self, job: Job) -> npt.NDArray[np.float64]:
        """Optimizer steps of ``job``'s run on each chosen layout [1] (:meth:`Job.steps_for`).

        Parameters
        ----------
        job : Job
            The workload whose length (samples and epochs) is applied; its layouts must be this basis's.

        Returns
        -------
        numpy.ndarray
            Per device and count, ``ceil(samples x epochs / batch)`` at the chosen layout's batch [1].
        """
        return np.asarray(job.steps_for(self.batch), dtype=float)


class SearchSpace(NamedTuple):  # a record, not a dataclass: a third of the start-up cost of one (Python 3.11)
    """What a layout search ranges over besides the workload: the devices, the device counts of each, and how."""

    devices: tuple[Device, ...]  # the devices ranked
    devices_key: tuple[Hashable, ...]  # what identifies the devices by value: the catalog's key and the kinds chosen
    counts: tuple[int, ...]  # device counts per device [1]
    headroom: bool = False  # reserve the upper memory headroom
    calibration: Calibration | None = None  # per-device efficiencies

    def key(self, job: Job) -> tuple[Hashable, ...]:
        """What the search of ``job`` over this space is kept under: equal for questions that share one search.

        Parameters
        ----------
        job : Job
            The workload.

        Returns
        -------
        tuple
            Hashable: the layout key (:func:`layout_key`), the devices' key, the counts, headroom and calibration.
        """
        calibration = None if self.calibration is None else self.calibration.model_dump_json()
        return (layout_key(job), self.devices_key, self.counts, self.headroom, calibration)


def basis(job: Job, space: SearchSpace) -> Basis:
    """The layouts of ``job`` on every device and count of ``space``, from the kept searches where one applies.

    Parameters
    ----------
    job : Job
        The workload.
    space : SearchSpace
        The devices and counts searched, with headroom and calibration.

    Returns
    -------
    Basis
        The chosen layouts per (device, count).
    """
    key = space.key(job)
    found = _kept(key, job, space)
    longer = _length_key(key, found, job)
    return found if longer is None else _kept(longer, job, space)


def kept_basis(job: Job, space: SearchSpace, disk: bool = True) -> Basis | None:
    """:func:`basis`'s answer where it is kept (no search needed), else None; searches nothing.

    Kept in this process, or, with ``disk``, in the disk cache: a service's worker process that searched a new
    shape leaves it there, and the service's own process takes it from there (once), so that the shape's later
    questions are answered where they arrive instead of each in a worker again.

    Parameters
    ----------
    job : Job
        The workload.
    space : SearchSpace
        The devices and counts searched, with headroom and calibration.
    disk : bool, default True
        Also read a search kept on disk (and keep it in this process).

    Returns
    -------
    Basis or None
        The kept layouts per (device, count); None where :func:`basis` would have to search.
    """
    key = space.key(job)
    found = _kept_here_or_on_disk(key, job, space, disk)
    longer = None if found is None else _length_key(key, found, job)
    return found if longer is None else _kept_here_or_on_disk(longer, job, space, disk)


def missing_search(job: Job, space: SearchSpace) -> Hashable | None:
    """The key of the search :func:`basis` would run for ``job`` (its shape's; or, where the shape's kept search
    chose a nearby batch somewhere, its length's), or None where it would run none: its layouts are kept in this
    process or on disk. Searches nothing.

    Parameters
    ----------
    job : Job
        The workload.
    space : SearchSpace
        The devices and counts searched, with headroom and calibration.

    Returns
    -------
    Hashable or None
        The key to keep the search under (:func:`keep_shares`); None where nothing is to be searched.
    """
    key: Hashable = space.key(job)
    found = _kept_here_or_on_disk(key, job, space)
    if found is None:
        return key
    longer = _length_key(key, found, job)
    return longer if longer is not None and _kept_here_or_on_disk(longer, job, space) is None else None


def _length_key(key: Hashable, shape: Basis, job: Job) -> Hashable | None:
    """Where the shape's kept search ``shape`` chose a nearby batch somewhere and was searched for another length,
    the key ``job``'s own length's search is kept under (the shape's entry is the first length's own); else None."""
    if shape.token_free or shape.length == (job.samples, job.epochs):
        return None
    return (key, job.samples, job.epochs)


def share_rows(devices: int, share: int, shares: int) -> npt.NDArray[np.int64]:
    """The devices (rows) of share ``share`` of ``shares``: every ``shares``-th from the ``share``-th, so that each
    share holds devices from every part of the catalog (whose kinds and sizes cost a search unevenly).

    Parameters
    ----------
    devices : int
        Devices searched in all [1].
    share, shares : int
        This share's number, from 0, and how many shares the search is split into [1].

    Returns
    -------
    numpy.ndarray
        The share's device indices, ascending.

    >>> share_rows(5, 1, 2).tolist()
    [1, 3]
    """
    if not 0 <= share < shares:
        raise ValueError(f"share {share} of {shares}")
    return np.arange(share, devices, shares, dtype=np.int64)


def search_share(job: Job, space: SearchSpace, share: int, shares: int) -> Basis:
    """One share of :func:`basis`'s search: the devices of :func:`share_rows` at every count, searched as the
    whole search searches them (each (device, count) pair's choice is its own), for :func:`keep_shares` to join.
    A service splits a new shape's search over its idle worker processes so.

    Parameters
    ----------
    job : Job
        The workload.
    space : SearchSpace
        The whole search's devices and counts, with headroom and calibration.
    share, shares : int
        Which share, from 0, of how many [1].

    Returns
    -------
    Basis
        The share's devices along axis 0; its table the whole one's, without the devices (as a kept search's).
    """
    found = _search(job, space, share_rows(len(space.devices), share, shares))
    return dataclasses.replace(found, table=dataclasses.replace(found.table, devices=()))


# Basis fields that are not per device: the same in every share
_WHOLE = frozenset({"table", "counts", "token_free", "length", "range_source"})


def join_shares(shares: list[Basis]) -> Basis:
    """The whole search from its shares (:func:`search_share`, share ``k`` of ``len(shares)`` at index ``k``).

    Parameters
    ----------
    shares : list of Basis
        Every share, in order.

    Returns
    -------
    Basis
        As :func:`basis`'s own search gives it: every device in order along axis 0.
    """
    first, count = shares[0], len(shares)
    devices = sum(len(part.unserved) for part in shares)
    rows = [share_rows(devices, k, count) for k in range(count)]
    joined: dict[str, Any] = {}
    for f in dataclasses.fields(Basis):
        if f.name in _WHOLE:
            continue
        parts = [getattr(part, f.name) for part in shares]
        if f.name == "unserved":
            reasons: list[Any] = [None] * devices
            for at, part in zip(rows, parts, strict=True):
                for i, reason in zip(at.tolist(), part, strict=True):
                    reasons[i] = reason
            joined[f.name] = tuple(reasons)
            continue
        whole = np.empty((devices, *parts[0].shape[1:]), dtype=parts[0].dtype)
        for at, part in zip(rows, parts, strict=True):
            whole[at] = part
        joined[f.name] = whole
    return Basis(table=first.table, counts=first.counts, token_free=all(part.token_free for part in shares),
                 length=first.length, range_source=first.range_source, **joined)


def keep_shares(key: Hashable, job: Job, space: SearchSpace, shares: list[Basis]) -> Basis:
    """Keep the search its ``shares`` make (:func:`join_shares`) as :func:`basis` keeps its own: in this process
    and on disk, under ``key`` (:func:`missing_search`'s), where :func:`kept_basis` and :func:`basis` find it.

    Parameters
    ----------
    key : Hashable
        The search's key, as :func:`missing_search` gave it.
    job : Job
        The workload.
    space : SearchSpace
        The devices and counts searched, with headroom and calibration.
    shares : list of Basis
        Every share of the search, in order (:func:`search_share`).

    Returns
    -------
    Basis
        The layouts per (device, count), as :func:`basis` answers.
    """
    return _kept(key, job, space, searched=join_shares(shares))


class _NotKept(Exception):
    """No search kept on disk for the key (raised by :func:`_kept` asked not to search; an error is never kept)."""


def _kept_here_or_on_disk(key: Hashable, job: Job, space: SearchSpace, disk: bool = True) -> Basis | None:
    kept = cast(_KeptSearches, _kept)
    found = kept.peek(key)
    if found is None and disk:
        try:  # never waits for a search running in this process (the caller may be the service's event loop)
            found = kept.unless_running(key, job, space, search=False)
        except _NotKept:
            return None
    return found


class _KeptSearches(Protocol):
    """:func:`_kept` as :func:`sizer.memo.registered_cache` makes it, whose type says a plain callable:
    called, it searches where nothing is kept; ``peek`` answers what is kept, or None."""

    def __call__(self, key: Hashable, job: Job, space: SearchSpace, search: bool = True,
                 searched: Basis | None = None) -> Basis: ...

    def peek(self, key: Hashable) -> Basis | None: ...

    def unless_running(self, key: Hashable, job: Job, space: SearchSpace, search: bool = True) -> Basis | None: ...


@registered_cache(key=lambda key, *rest, **options: key)
def _kept(key: Hashable, job: Job, space: SearchSpace, search: bool = True, searched: Basis | None = None) -> Basis:
    # A whole-catalog search is 50-60 ms of a command's start-up; the same question (the default one,
    # say) is kept on disk too (sizer.diskcache), under its key and the code of the whole core, so a
    # change to any module gives it a new entry. Devices travel by value in the key, not in the entry.
    # search=False: only what the disk holds, else _NotKept (kept_basis: no search where a question arrives).
    # searched: the search's answer, worked out elsewhere (shares of it in a service's workers, keep_shares).
    def build() -> Basis:
        if searched is not None:
            return searched
        if not search:
            raise _NotKept
        found = _search(job, space)
        return dataclasses.replace(found, table=dataclasses.replace(found.table, devices=()))

    try:
        disk_key = key_of(core_stamps(), repr(key))
    except OSError:
        if not search:
            raise _NotKept from None
        return _search(job, space)
    kept: Basis = cached("layout-basis", disk_key, build)
    return dataclasses.replace(kept, table=dataclasses.replace(kept.table, devices=space.devices))


@registered_cache()
def core_stamps() -> str:
    """A digest of :func:`core_files`' stamps: what a kept search (and a recommendation's kept prices) was computed
    by. Once per process (some 180 files: 1-15 ms on a loaded machine, which a service checking the disk for a new
    shape's search paid each time); a digest, so that the disk keys built from it digest a few bytes, not every
    stamp's text, and the kept value is one string.

    Returns
    -------
    str
        :func:`sizer.diskcache.key_of` of the stamps.
    """
    return key_of(core_files())


def core_files() -> tuple[tuple[str, int, int], ...]:
    """Name, size and modification time of every module and data file of the core (the fitted error
    spreads are YAML beside the code).

    Returns
    -------
    tuple of (str, int, int)
        Each file's path, size [B] and modification time [ns], sorted by path.
    """
    found: list[tuple[list[str], str, int, int]] = []
    folders = [str(Path(__file__).resolve().parent.parent)]
    while folders:  # os.scandir: each entry's kind without a stat, and the bytecode caches not listed at all
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith((".py", ".yaml")):
                    stat_result = entry.stat()
                    found.append((entry.path.split(os.sep), entry.path, stat_result.st_size, stat_result.st_mtime_ns))
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
    return tuple((path, size, mtime) for _, path, size, mtime in sorted(found))  # in Path order, as file_stamp's


def prepare_search() -> None:
    """Import the search's modules now, which :func:`basis` imports where it first searches: a process that will
    search (a service's worker) does so before its first question instead of while it waits; and stamps the core's
    files, which name the searches it keeps on disk."""
    from sizer.engine import search, summary, time_range  # noqa: F401

    core_stamps()


def _search(job: Job, space: SearchSpace, rows: npt.NDArray[np.int64] | None = None) -> Basis:
    """The search of ``space``'s devices (of the ``rows`` among them: a share, :func:`search_share`) at every count."""
    devices, counts, headroom, calibration = space.devices, space.counts, space.headroom, space.calibration
    from sizer.engine.search import search
    from sizer.engine.summary import summarise
    from sizer.engine.time_range import range_arrays, range_factors
    if calibration is not None:
        from sizer.engine.modes import calibrated_efficiencies  # only with a calibration (start-up)

        effs = tuple(calibrated_efficiencies(d, e) if (e := calibration.for_device(d)) else None for d in devices)
        table = build_device_table(devices, job.precision, effs)
    else:
        table = cached_device_table(devices, job.precision, job.arch is not None)
    searched = np.arange(len(devices)) if rows is None else np.asarray(rows, dtype=np.int64)
    shape = (len(searched), len(counts))
    pair_device, pair_count = (a.ravel() for a in np.meshgrid(searched, np.asarray(counts), indexing="ij"))
    found = search(job, table, pair_device, pair_count.astype(np.int64), headroom=headroom)
    ev, rows = found.evaluation, found.chosen
    mode = Mode.CALIBRATED if calibration is not None else Mode.DATASHEET
    lows, highs = range_arrays(mode, job, devices)
    summary = summarise(ev, rows, lows[pair_device], highs[pair_device], table.peak[pair_device])
    c = ev.configs

    def at(values: npt.ArrayLike) -> npt.NDArray[Any]:
        """The chosen rows of a per-candidate column (figures, flags or codes; or one value broadcast), as
        devices x counts, in the column's own dtype."""
        return np.asarray(np.broadcast_to(values, c.tp.shape)[rows]).reshape(shape)

    token_free = bool(np.all(ev.exact[rows] | ~found.found))
    unserved = tuple(None if found.found[k * len(counts):(k + 1) * len(counts)].any()
                     else _unserved(devices[i], table, i, ev, np.flatnonzero(pair_device[found.pair] == i), job)
                     for k, i in enumerate(searched.tolist()))
    return Basis(table=table, counts=np.asarray(counts, dtype=float), found=found.found.reshape(shape),
                 exact=at(ev.exact) & found.found.reshape(shape),
                 batch=at(ev.batch), step_low=summary.step_low.reshape(shape),
                 step_expected=summary.step_expected.reshape(shape), step_high=summary.step_high.reshape(shape),
                 mfu=summary.mfu.reshape(shape), memory_needed=at(ev.memory_needed), fits=at(ev.fits),
                 bound=at(ev.parts.bound), zero=at(c.zero), tp=at(c.tp), pp=at(c.pp), ep=at(c.ep),
                 recompute=at(c.recompute), micro_batch=at(c.micro_batch), range_low=lows[searched], range_high=highs[searched],
                 range_source=f"{range_factors(mode)[2]}; sizer/engine/error_spread.yaml", unserved=unserved,
                 token_free=token_free, length=(job.samples, job.epochs))


def _unserved(device: Device, table: DeviceTable, i: int, ev: Evaluation, rows: npt.NDArray[np.intp],
              job: Job) -> tuple[str, str, float | None]:
    """Why no count of device ``i`` fits (the candidates ``rows`` are all of its), the kind of reason,
    and by how much the nearest option misses (memory needed over the device's)."""
    if not table.supported[i]:
        return f"no {job.precision.value} support (has {', '.join(supported_precisions(device)) or 'none'})", "precision", None
    feasible = ev.feasible[rows]
    if not feasible.any():
        return "the batch has fewer samples than the smallest device count", "batch", None
    best = rows[feasible][np.argmin(ev.memory_needed[rows][feasible])]
    return (f"does not fit: needs {ev.memory_needed[best] * unit_factor('B', 'GB'):.3g} GB per device even sharded over "
            f"{int(ev.configs.count[best])}, has {table.memory[i] * unit_factor('B', 'GB'):.3g} GB"), "memory", \
        float(ev.memory_needed[best] / table.memory[i])

