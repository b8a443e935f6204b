"""Layout search: the tensor × pipeline × context × data parallel split, interleaving, ZeRO stage,
recomputation and micro-batch that run a job fastest on ``count`` devices, among those that fit.

One search behind ``time``, ``sweep``, ``recommend`` and ``plan`` when no layout is given (issue 15):

- tensor parallelism up to the node's NVLink domain, dividing the heads (and the KV heads, or a
  multiple of them that replicates them), with sequence parallelism;
- pipeline stages dividing the blocks, plain or interleaved 1F1B (``v`` virtual stages each,
  dividing the blocks too; its bubble ``(p-1)/(v m)``);
- context parallelism (ring attention) for sequences of at least :data:`CP_MIN_CHUNK` tokens per rank;
- ZeRO 0-3 (1-3 only with more than one data/context-parallel rank), recomputation
  none/selective/full (selective only where it keeps less than none: with flash attention it
  keeps as much and costs more, so it never wins);
- whole micro-batches: the largest that fits, and for pipelines the small ones that shrink the bubble.

Every candidate of every (device, count) pair is evaluated in one call of the engine; fields the
user fixed (``--tp``, ``--micro-batch``, ...) pin their dimension and the rest is searched. The
candidate arrays carry an ``ep`` column (expert parallelism, 1 for now) for the MoE search.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from sizer.deadline import check_deadline
from sizer.engine.devices import DeviceTable
from sizer.engine.evaluate import Evaluation, activation_bytes_per_sample, evaluate
from sizer.workloads.job import Job

POWERS = (1, 2, 4, 8, 16, 32, 64)
INTERLEAVE = (1, 2, 4)
PIPELINE_MICRO = (1, 2, 4)  # small micro-batches a pipeline may prefer: more of them, a smaller bubble
CONTEXT = (1, 2, 4, 8, 16)
CP_MIN_CHUNK = 4096  # tokens per context rank: below, ring attention's exchange outweighs what it saves
ZERO = (0, 1, 2, 3)
RECOMPUTE_ALL = (0, 1, 2)
DIMENSIONS = ("tp", "pp", "cp", "ep", "zero", "recompute", "interleave", "micro")


@dataclass(frozen=True)
class Search:
    """Every candidate evaluated, and per (device, count) pair the chosen one."""

    evaluation: Evaluation
    pair: np.ndarray  # per candidate: which (device, count) pair it belongs to
    ep: np.ndarray  # per candidate: expert-parallel ranks (1: no expert parallelism yet)
    chosen: np.ndarray  # per pair: index of the fastest fitting candidate, else of the smallest memory need
    found: np.ndarray  # per pair: whether any candidate fits

    def ranked(self, pair: int) -> np.ndarray:
        """Candidates of one pair that fit, fastest first (the asked batch before a changed one),
        each layout once."""
        ev = self.evaluation
        rows = np.flatnonzero((self.pair == pair) & ev.fits & ev.feasible)
        rows = rows[np.lexsort((ev.memory_needed[rows], ev.training_seconds[rows], ~ev.exact[rows]))]
        return unique_layouts(ev, rows)


def unique_layouts(ev: Evaluation, rows: np.ndarray) -> np.ndarray:
    """``rows`` without repeats of a layout (the same split, stages, ZeRO, recomputation and batching)."""
    c = ev.configs
    keys = np.stack([c.tp[rows], c.pp[rows], c.cp[rows], c.zero[rows], c.recompute[rows], c.interleave[rows],
                     c.micro_batch[rows], c.accumulation[rows]], axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    return rows[np.sort(first)]


def tensor_sizes(job: Job) -> tuple[int, ...]:
    """Tensor-parallel sizes the heads allow: every size divides the query heads, and divides the
    key/value heads or is a multiple of them (each then replicated)."""
    if job.shape is None or job.arch is None:
        return (1,)
    heads, kv = job.arch.heads, job.arch.kv_heads
    return tuple(t for t in POWERS if heads % t == 0 and (kv % t == 0 or t % kv == 0))


def _dimension_values(job: Job, fixed: dict) -> dict[str, tuple]:
    """The values each dimension takes: the fixed one, else those the model allows."""
    transformer = job.shape is not None
    blocks = job.shape.blocks if transformer else 1
    seq = int(job.tokens_per_sample) if transformer else 1
    recompute = RECOMPUTE_ALL if transformer else (0,)
    if transformer:
        kept = activation_bytes_per_sample(job, np.asarray([0, 1]))
        if kept[1] >= kept[0]:  # selective drops nothing (flash attention): never faster than none
            recompute = (0, 2)
    values = {
        "tp": tensor_sizes(job),
        "pp": tuple(p for p in POWERS if p <= blocks and blocks % p == 0) if transformer else (1,),
        "cp": tuple(c for c in CONTEXT if c == 1 or (seq % (2 * c) == 0 and seq // c >= CP_MIN_CHUNK))
        if transformer else (1,),
        "ep": (1,),
        "zero": ZERO,
        "recompute": recompute,
        "interleave": INTERLEAVE if transformer else (1,),
        "micro": (0, *PIPELINE_MICRO) if transformer and job.micro_batch is None else (0,),
    }
    for name, value in fixed.items():
        if value is not None:
            values[name] = (value,)
    return values


def candidates(job: Job, table: DeviceTable, device: np.ndarray, count: np.ndarray,
               fixed: dict | None = None) -> dict[str, np.ndarray]:
    """The candidate layouts of every (device, count) pair, as flat arrays with their pair index."""
    fixed = fixed or {}
    values = _dimension_values(job, fixed)
    template = np.asarray(list(itertools.product(*(values[name] for name in DIMENSIONS))), dtype=np.int64)
    tp, pp, cp, ep, zero, rc, v, mb = template.T
    blocks = job.shape.blocks if job.shape is not None else 1
    # a template row is a layout only where its dimensions agree with each other
    keep = ((v == 1) | ((pp > 1) & (blocks % np.maximum(pp * v, 1) == 0))) & ((mb == 0) | (pp > 1) | ("micro" in fixed))
    template = template[keep]
    pairs, layouts = len(device), len(template)
    pair = np.repeat(np.arange(pairs), layouts)
    d, n = device[pair], count[pair]
    columns = {name: np.tile(template[:, k], pairs) for k, name in enumerate(DIMENSIONS)}
    split = columns["tp"] * columns["pp"] * columns["cp"] * columns["ep"]
    inside = (columns["tp"] <= table.devices_per_node[d]) | ("tp" in fixed)
    sharded = (columns["zero"] == 0) | (n > split) | ("zero" in fixed)  # ZeRO needs dp x cp > 1, unless asked for
    valid = (n % split == 0) & inside & sharded
    return {"pair": pair[valid], "device": d[valid], "count": n[valid],
            **{name: column[valid] for name, column in columns.items()}}


def search(job: Job, table: DeviceTable, device, count, *, fixed: dict | None = None, headroom: bool = False,
           overlap_allreduce: bool = False) -> Search:
    """Evaluate every candidate layout of every (device, count) pair and choose one per pair: the
    fastest that fits running the asked batch, else the fastest that fits a batch near it, else
    the one closest to fitting."""
    device = np.atleast_1d(np.asarray(device, dtype=np.int64))
    count = np.atleast_1d(np.asarray(count, dtype=np.int64))
    check_deadline()
    c = candidates(job, table, device, count, fixed)
    micro = np.where(c["micro"] > 0, c["micro"], np.nan)
    ev = evaluate(job, table, c["device"], c["count"], c["zero"], tp=c["tp"], pp=c["pp"], cp=c["cp"],
                  recompute=c["recompute"], interleave=c["interleave"], micro_batch=micro, headroom=headroom,
                  overlap_allreduce=overlap_allreduce)
    ok = ev.fits & ev.feasible
    pairs = len(device)
    order = np.lexsort((ev.memory_needed, ev.training_seconds, ~ev.exact, ~ok, c["pair"]))
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
    return Search(evaluation=ev, pair=c["pair"], ep=c["ep"], chosen=chosen, found=found)
