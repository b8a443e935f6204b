"""Layout search: which tensor × pipeline × data parallel split, ZeRO stage, recomputation and
micro-batch run a job fastest on ``count`` devices, among those that fit in memory.

A mixture of experts adds expert-parallel sizes (dividing its experts and the data-parallel
size, the ``tp x ep`` group inside a node) to every set. Two candidate sets: the ``quick`` one that ``time``, ``sweep`` and ``recommend`` use when the user
gives no layout (data parallel with ZeRO 0/1/3; only where none of those fits, tensor parallel
inside a node and full recomputation too), and the ``full`` one that ``sizer plan`` ranks (adds
pipeline stages, ZeRO-2, selective recomputation and explicit micro-batches). Every candidate of every (device, count) pair is
evaluated in one call of the engine.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from sizer.deadline import check_deadline
from sizer.engine.evaluate import Evaluation, evaluate
from sizer.engine.devices import DeviceTable
from sizer.workloads.job import Job

POWERS = (1, 2, 4, 8, 16, 32, 64)
DATA_PARALLEL = {"zero": (0, 1, 3), "recompute": (0,), "pp": (1,), "tensor": False}
QUICK = {"zero": (0, 1, 3), "recompute": (0, 2), "pp": (1,), "tensor": True}
FULL = {"zero": (0, 1, 2, 3), "recompute": (0, 1, 2), "pp": POWERS, "tensor": True}
FULL_MICRO = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class Search:
    """Every candidate evaluated, and per (device, count) pair the chosen one."""

    evaluation: Evaluation
    pair: np.ndarray  # per candidate: which (device, count) pair it belongs to
    chosen: np.ndarray  # per pair: index of the fastest fitting candidate, else of the smallest memory need
    found: np.ndarray  # per pair: whether any candidate fits

    def ranked(self, pair: int) -> np.ndarray:
        """Candidates of one (device, count) pair that fit, fastest first.

        Parameters
        ----------
        pair : int
            Index of the pair [1].

        Returns
        -------
        numpy.ndarray
            Rows of ``evaluation``, by training time [s] ascending.
        """
        ev = self.evaluation
        rows = np.flatnonzero((self.pair == pair) & ev.fits & ev.feasible)
        return rows[np.argsort(ev.training_seconds[rows], kind="stable")]


def _tensor_sizes(job: Job) -> tuple[int, ...]:
    """Tensor-parallel sizes the heads allow (every size divides the query heads; key/value heads are
    split or replicated)."""
    if job.shape is None or job.arch is None:
        return (1,)
    heads, kv = job.arch.heads, job.arch.kv_heads
    return tuple(t for t in POWERS if heads % t == 0 and (kv % t == 0 or t % kv == 0))


def _expert_sizes(job: Job) -> tuple[int, ...]:
    """Expert-parallel sizes of a mixture of experts: the powers of two that divide its experts."""
    if job.arch is None or not job.arch.moe:
        return (1,)
    return tuple(e for e in POWERS if job.arch.experts % e == 0)


def candidates(job: Job, table: DeviceTable, device: np.ndarray, count: np.ndarray, choice: dict,
               full: bool = False) -> dict[str, np.ndarray]:
    """The candidate layouts of every (device, count) pair, as flat arrays with their pair index.

    Tensor-parallel sizes that divide the heads and fit in a node, pipeline stages up to the
    block count, the ZeRO stages and recomputation policies of ``choice``; layouts whose
    tp x pp does not divide the count, or ZeRO without data parallelism, are dropped. A mixture of
    experts adds expert-parallel sizes that divide the data-parallel size, with the ``tp x ep``
    group inside a node (the fast domain).

    Parameters
    ----------
    job : Job
        The workload.
    table : DeviceTable
        The devices.
    device : numpy.ndarray
        Device index of each pair [1].
    count : numpy.ndarray
        Devices of each pair [1].
    choice : dict
        The candidate set (``DATA_PARALLEL``, ``QUICK`` or ``FULL``).
    full : bool, default False
        Also explicit micro-batches (``FULL_MICRO``).

    Returns
    -------
    dict of str to numpy.ndarray
        ``pair``, ``device``, ``count``, ``tp``, ``pp``, ``zero``, ``recompute``, ``micro``
        (0: the largest that fits) and ``ep`` per candidate [1].

    References
    ----------
    [megatron], [zero], [korthikanti], [spec-3.3], [gshard]
    """
    transformer = job.shape is not None
    recompute = choice["recompute"] if transformer else (0,)
    pps = [p for p in choice["pp"] if p <= job.shape.blocks] if transformer else [1]
    micro = FULL_MICRO if full and job.micro_batch is None else (0,)  # 0: the largest that fits
    tensor = _tensor_sizes(job) if choice["tensor"] else (1,)
    experts = _expert_sizes(job)
    template = np.asarray(list(itertools.product(tensor, pps, choice["zero"], recompute, micro, experts)), dtype=np.int64)
    pairs, layouts = len(device), len(template)
    pair = np.repeat(np.arange(pairs), layouts)
    d, n = device[pair], count[pair]
    tp, pp, zero, rc, mb, ep = (np.tile(template[:, k], pairs) for k in range(6))
    split = tp * pp
    dp = n // split
    valid = (n % split == 0) & (tp <= table.devices_per_node[d]) & ~((zero > 0) & (n == split))  # ZeRO needs dp > 1
    valid &= (dp % ep == 0) & (tp * ep <= table.devices_per_node[d])
    return {"pair": pair[valid], "device": d[valid], "count": n[valid], "tp": tp[valid], "pp": pp[valid],
            "zero": zero[valid], "recompute": rc[valid], "micro": mb[valid], "ep": ep[valid]}


def search(job: Job, table: DeviceTable, device, count, *, full: bool = False, headroom: bool = False,
           overlap_allreduce: bool = False) -> Search:
    """Evaluate every candidate layout of every (device, count) pair and choose one per pair.

    The fastest layout that fits; where none fits, the one closest to fitting. The quick set
    tries data parallelism with ZeRO 0/1/3 first and adds tensor parallelism and full
    recomputation only for pairs where none of those fits.

    Parameters
    ----------
    job : Job
        The workload.
    table : DeviceTable
        The devices.
    device : int or array
        Device index of each pair [1].
    count : int or array
        Devices of each pair [1].
    full : bool, default False
        The full candidate set that ``sizer plan`` ranks.
    headroom : bool, default False
        Reserve the memory headroom.
    overlap_allreduce : bool, default False
        Overlap the gradient all-reduce with the backward pass.

    Returns
    -------
    Search
        Every candidate's evaluation, its pair, and per pair the chosen candidate and whether
        any fits.

    References
    ----------
    [megatron], [zero], [spec-3.3]
    """
    device = np.atleast_1d(np.asarray(device, dtype=np.int64))
    count = np.atleast_1d(np.asarray(count, dtype=np.int64))
    check_deadline()
    if full:
        c = candidates(job, table, device, count, FULL, full=True)
    else:  # data parallel first; tensor parallelism and recomputation only for pairs where none of it fits
        c = candidates(job, table, device, count, DATA_PARALLEL)
        first = evaluate(job, table, c["device"], c["count"], c["zero"], ep=c["ep"], headroom=headroom)
        fits = np.zeros(len(device), dtype=bool)
        np.logical_or.at(fits, c["pair"], first.fits & first.feasible)
        if job.shape is not None and not fits.all():
            missing = np.flatnonzero(~fits)
            more = candidates(job, table, device[missing], count[missing], QUICK)
            more["pair"] = missing[more["pair"]]
            keep = (more["tp"] > 1) | (more["recompute"] > 0)  # the data-parallel (and expert-parallel) ones are in
            c = {k: np.concatenate([c[k], more[k][keep]]) for k in c}
    micro = np.where(c["micro"] > 0, c["micro"], np.nan) if full else None
    ev = evaluate(job, table, c["device"], c["count"], c["zero"], tp=c["tp"], pp=c["pp"], recompute=c["recompute"],
                  ep=c["ep"], micro_batch=micro, headroom=headroom, overlap_allreduce=overlap_allreduce)
    ok = ev.fits & ev.feasible
    pairs = len(device)
    seconds = np.where(ok, ev.training_seconds, np.inf)
    order = np.lexsort((ev.memory_needed, seconds, c["pair"]))  # by pair, fastest fitting first, then least memory
    first = np.searchsorted(c["pair"][order], np.arange(pairs))
    found = np.zeros(pairs, dtype=bool)
    chosen = np.zeros(pairs, dtype=np.int64)
    valid = first < len(order)
    chosen[valid] = order[first[valid]]
    found[valid] = ok[chosen[valid]]
    unfound = valid & ~found  # nothing fits: show the layout closest to fitting
    if unfound.any():
        closest = np.lexsort((np.where(ev.feasible, ev.memory_needed, np.inf), c["pair"]))
        chosen[unfound] = closest[np.searchsorted(c["pair"][closest], np.arange(pairs))[unfound]]
    return Search(evaluation=ev, pair=c["pair"], chosen=chosen, found=found)
