"""Layout search: the tensor × pipeline × context × data parallel split, interleaving, ZeRO stage,
recomputation and micro-batch that run a job fastest on ``count`` devices, among those that fit.

One search behind ``time``, ``sweep``, ``recommend`` and ``plan`` when no layout is given (issue 15):

- tensor parallelism up to the node's NVLink domain, dividing the heads (and the KV heads, or a
  multiple of them that replicates them), with sequence parallelism;
- pipeline stages in powers of two up to the blocks (with a given batch also 3, 5 or 7 times one, so that a
  count such as 384 finds the replicas that split the batch), dividing the blocks or not (an uneven split runs at its
  heaviest stage's pace, within :data:`UNEVEN_STAGE_LIMIT` of an even one), plain or interleaved 1F1B
  (``v`` virtual stages each, any divisor of the heaviest stage's blocks up to one block per virtual
  stage; its bubble ``(p-1)/(v m)``);
- context parallelism (ring attention) for sequences of at least :data:`CP_MIN_CHUNK` tokens per rank;
- ZeRO 0-3 (ZeRO-2 reduce-scatters every micro-batch, so with a pipeline's many micro-batches ZeRO-1, one
  reduce-scatter per step, is what wins; ZeRO-1 searched with pipelines only; sharding only with more than one
  data/context-parallel rank), recomputation
  none/selective/full (selective only where it keeps less than none: with flash attention it
  keeps as much and costs more, so it never wins);
- whole micro-batches: the largest that fits, and for pipelines every power of two up to 32 (more micro-batches
  shrink the bubble, larger ones run larger GEMMs: the best lies between; issue 43 found 8 missed where only 1, 2
  and 4 were tried beside the largest).

Every candidate of every (device, count) pair is evaluated in one call of the engine; fields the
user fixed (``--tp``, ``--micro-batch``, ``--ep``, ...) pin their dimension and the rest is searched.
A mixture of experts adds expert-parallel sizes (dividing its experts and the data-parallel size; the
``tp x ep`` group may span nodes, its all-to-all then partly over the network).

Many pairs at once (``recommend``, ``sweep``) are searched in two stages: first every split with
the largest micro-batch that fits and plain 1F1B; then the small micro-batches and interleaving
only for pipelines that could still beat their pair's best: their step without the bubble and
the stage sends (all that a smaller micro-batch or interleaving can remove; smaller GEMMs only
run slower) must be below it, and each variant's own floor too (its bubble is at least
``min(m'/m, 1)/v`` of the first stage's, with ``m'`` the micro-batch its memory allows). Before any time is computed, the first stage drops (from memory
alone, which costs no layer arithmetic) the layouts another one of the same split and micro-batch
beats outright: more recomputation than one that fits, or, with one micro-batch per step, ZeRO 0/1/3 where
ZeRO-2 fits with no more recomputation (same traffic as 0/1 with a cheaper optimizer step, less traffic than
3), with more micro-batches ZeRO 0/2/3 where ZeRO-1 fits with no more recomputation. The
choice is the one a single-pair search makes: a dominated pipeline is not evaluated, but its
interleaved and small-micro-batch variants (which keep more in flight, so may fit where its
dominator's do not) go to the second stage floored by its dominator's time, and the variants are
pruned by the same rule among themselves (checked: the same choice on 4,015 device x count pairs of
five workloads over the GPU catalog).

What each step costs (a whole-catalog search is on the path of a new question, issue 41): the first stage reads of
a pair only its count and its device's node size, memory, storage and precision support, so it is worked out once
per kind of pair alike in these (some 60 of 200 devices) and copied to the others; a split's states are computed
once (:func:`~sizer.engine.evaluate.held_bytes`) and each batching of it from them; each row's memory once, for
the pruning and the evaluation alike. benchmarks/search_equivalence.py checks that none of this changes one array
of a search.

Where no layout runs the asked batch (a default batch the replicas outnumber, or one no replica
count divides), the nearest batch some layout runs is taken (:func:`batch_distance`), and the
fastest among equally near ones.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from sizer.deadline import check_deadline
from sizer.engine.constants import BATCH_ROUNDING, optimizer_state_bytes
from sizer.engine.devices import DeviceTable
from sizer.engine.evaluate import (
    Evaluation,
    HeldBytes,
    MemoryParts,
    activation_bytes_per_sample,
    batched_memory,
    batching,
    evaluate,
    held_bytes,
)
from sizer.engine.job import Job

# Candidate layouts as columns, one entry per candidate: ``pair`` and ``device`` indices, ``count`` and one column
# per dimension of DIMENSIONS (whole numbers; a second stage's ``micro`` may carry NaN for "choose")
Candidates = dict[str, npt.NDArray[Any]]
# The layout fields a user pinned, by name (:func:`sizer.training.time_answer.fixed_layout`)
Fixed = dict[str, int]
Rows = TypeVar("Rows")

POWERS = (1, 2, 4, 8, 16, 32, 64)
# pipeline stages: powers of two up to the blocks, whether or not they divide them (Llama 3.1 405B ran its 126
# blocks on 16 stages); an uneven split runs at its heaviest stage's pace (sizer.engine.roofline.heaviest_stages),
# so one whose heaviest stage holds more than UNEVEN_STAGE_LIMIT x the mean (80 blocks on 32 stages: 3 against
# 2.5) idles every other stage that long and is not searched (it may be given)
PIPELINE = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# with a given batch, stage counts of 3, 5 or 7 times a power of two too: a count such as 384 (BLOOM-176B: TP 4 x
# PP 12 x DP 8, Megatron-DeepSpeed) splits 2,048 sequences only through such a pipeline, and frameworks run any
# stage count (Megatron-LM --pipeline-model-parallel-size, DeepSpeed PipelineModule(num_stages)); on a count of
# devices that is a power of two they divide none and add no layout
PIPELINE_ODD = tuple(sorted({f * p for f in (3, 5, 7) for p in PIPELINE if f * p <= max(PIPELINE)}))
UNEVEN_STAGE_LIMIT = 1.1
PIPELINE_MICRO = (1, 2, 4, 8, 16, 32)  # micro-batches a pipeline may prefer to the largest that fits: more of them, a smaller bubble
CONTEXT = (1, 2, 4, 8, 16)
CP_MIN_CHUNK = 4096  # tokens per context rank: below, ring attention's exchange outweighs what it saves
# ZeRO 0-3: with one micro-batch per step ZeRO-2 moves the bytes of ZeRO-0/1 and keeps less, so it beats them
# outright; with more (pipelines), it reduce-scatters every micro-batch (constants.zero2_traffic_rounds) and
# ZeRO-1 (one reduce-scatter of the accumulated gradients, Megatron's distributed optimizer) beats ZeRO-0 and 3
ZERO = (0, 1, 2, 3)
ADAM_STATE_BYTES = 8.0  # two FP32 moments a parameter (Adam, AdamW)
RECOMPUTE_ALL = (0, 1, 2)
DIMENSIONS = ("tp", "pp", "cp", "ep", "zero", "recompute", "interleave", "micro")


@dataclass(frozen=True)
class Search:
    """The candidates evaluated, and per (device, count) pair the chosen one.

    A search of one pair keeps every candidate (``ranked`` lists them); a search of many keeps the
    rows that competed for the choice (each stage's choice per pair, every row of a pair that nothing
    fits)."""

    evaluation: Evaluation
    pair: npt.NDArray[np.int64]  # per candidate: which (device, count) pair it belongs to
    ep: npt.NDArray[Any]  # per candidate: expert-parallel ranks (1: no expert parallelism yet)
    chosen: npt.NDArray[np.int64]  # per pair: index of the fastest fitting candidate, else of the smallest memory need
    found: npt.NDArray[np.bool_]  # per pair: whether any candidate fits
    distance: npt.NDArray[np.float64]  # per candidate: how far its batch is from the asked one (batch_keys)
    tier: npt.NDArray[np.bool_]  # per candidate: True where its batch is not one the question accepts (batch_keys)

    def ranked(self, pair: int) -> npt.NDArray[np.int64]:
        """Candidates of one pair that fit, fastest first (the asked batch, then the nearest), each layout once.

        Parameters
        ----------
        pair : int
            Index of the (device, count) pair [1].

        Returns
        -------
        numpy.ndarray
            Rows of the evaluation [index].
        """
        ev = self.evaluation
        rows = np.flatnonzero((self.pair == pair) & ev.fits & ev.feasible)
        rows = rows[np.lexsort((ev.memory_needed[rows], ev.training_seconds[rows], self.distance[rows],
                                self.tier[rows]))]
        return unique_layouts(ev, rows)




def rounded_batch_given(job: Job) -> bool:
    """Whether the job's batch was given as a rounded figure: not a whole number of samples.

    Parameters
    ----------
    job : Job
        The workload (its batch [sample] and whether it was given).

    Returns
    -------
    bool
    """
    return bool(job.batch_given and abs(job.batch_size - round(job.batch_size)) > 1e-6)


def batch_keys(job: Job, ev: Evaluation) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """The two batch keys of the choice, most significant first: ``tier`` (False for a batch the question
    accepts) and ``near`` (how far from the asked batch, before time).

    A batch of whole samples: the asked batch first (``tier`` is ``~exact``), then the nearest. A rounded
    batch (:func:`rounded_batch_given`): every batch within :data:`BATCH_ROUNDING` is accepted and time
    decides among them (``near`` 0), the nearest beyond it after.

    Parameters
    ----------
    job : Job
        The workload.
    ev : Evaluation
        The evaluated candidates.

    Returns
    -------
    tuple of numpy.ndarray
        ``tier`` (bool) and ``near`` [1] per candidate.
    """
    distance = batch_distance(job, ev)
    if not rounded_batch_given(job):
        return ~ev.exact, distance
    outside = distance > np.log1p(BATCH_ROUNDING) + 1e-12
    return outside, np.where(outside, distance, 0.0)


def batch_distance(job: Job, ev: Evaluation) -> npt.NDArray[np.float64]:
    """How far each candidate's batch is from the asked one: ``|log(batch / asked)|`` (0: the asked batch).

    Where no layout runs the asked batch, the search takes the nearest one that some layout runs
    (issue 15), and the fastest among equally near ones: a larger batch has fewer steps, so time
    alone would prefer the largest change.

    Parameters
    ----------
    job : Job
        The workload (its asked batch).
    ev : Evaluation
        The evaluated candidates.

    Returns
    -------
    numpy.ndarray
        Per candidate [1].
    """
    asked = max(1.0, float(np.round(job.batch_size)))
    return np.abs(np.log(np.maximum(ev.batch, 1.0) / asked))


def unique_layouts(ev: Evaluation, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``rows`` without repeats of a layout (the same split, stages, ZeRO, recomputation and batching).

    Parameters
    ----------
    ev : Evaluation
        The evaluated candidates.
    rows : numpy.ndarray
        Rows in order [index].

    Returns
    -------
    numpy.ndarray
        The first row of each distinct layout, in the given order [index].
    """
    c = ev.configs
    ep = np.broadcast_to(np.asarray(c.ep, dtype=float), c.tp.shape)
    keys = np.stack([c.tp[rows], c.pp[rows], c.cp[rows], ep[rows], c.zero[rows], c.recompute[rows], c.interleave[rows],
                     c.micro_batch[rows], c.accumulation[rows]], axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    return rows[np.sort(first)]


def unique_rows(keys: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``np.unique(keys, axis=0, return_index=True, return_inverse=True)``: the same three arrays, by one lexsort of
    the columns (``np.unique`` along an axis sorts the rows as records, several times slower on a search's ~1,400
    pairs).

    Parameters
    ----------
    keys : numpy.ndarray
        Rows of numbers (2-D) [any unit].

    Returns
    -------
    tuple of numpy.ndarray
        The distinct rows in lexicographic order (the first column most significant), the first row of each, and
        each row's distinct row (NaN, as in ``np.unique``, never equal: a row holding one is its own) [index].

    Examples
    --------
    >>> rows, first, inverse = unique_rows(np.array([[2, 1], [1, 5], [2, 1]]))
    >>> rows.tolist(), first.tolist(), inverse.tolist()
    ([[1, 5], [2, 1]], [1, 0], [1, 0, 1])
    """
    columns = keys.T
    order = np.lexsort(columns[::-1])  # stable: each run of equal rows in its order, the first row first
    ordered = keys[order]
    starts = np.zeros(len(order), dtype=bool)
    starts[:1] = True
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    inverse = np.empty(len(order), dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    first = order[starts]
    return keys[first], first, inverse


def chunks_hold_blocks(blocks: npt.ArrayLike, pp: npt.ArrayLike, interleave: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    r"""Whether every one of a stage's ``interleave`` virtual chunks can hold at least one block.

    A pipeline of ``pp`` stages gives its heaviest stage :math:`\lceil L / p \rceil` of the ``L``
    blocks (an uneven split runs at that stage's pace, :func:`blocks_per_stage`); interleaved 1F1B
    cuts each stage into ``v`` chunks (Narayanan et al. 2021 §2.2, Megatron-LM's virtual pipeline),
    which needs :math:`v \le \lceil L / p \rceil`. The layout search and a layout the user pins
    both ask here, so that a searched layout can be pinned again.

    Parameters
    ----------
    blocks : int or numpy.ndarray
        Transformer blocks [1].
    pp, interleave : int or numpy.ndarray
        Pipeline stages and virtual chunks per stage [1].

    Returns
    -------
    bool or numpy.ndarray of bool
        Per element: whether the heaviest stage has a block for every chunk.

    >>> bool(chunks_hold_blocks(32, 8, 4)), bool(chunks_hold_blocks(32, 8, 5))  # 4 blocks per stage
    (True, False)
    >>> bool(chunks_hold_blocks(126, 8, 16))  # Llama 3.1 405B: stages of 15 and 16 blocks
    True
    """
    holds: npt.NDArray[np.bool_] = np.asarray(interleave) <= blocks_per_stage(blocks, pp)
    return holds


def tensor_sizes(job: Job) -> tuple[int, ...]:
    """Tensor-parallel sizes the heads allow.

    Every size divides the query heads, and divides the key/value heads or is a multiple of them
    (each then replicated), as Megatron-LM splits attention by heads.

    Parameters
    ----------
    job : Job
        The workload (its architecture's heads).

    Returns
    -------
    tuple of int
        Sizes from :data:`POWERS` [1]; (1,) without an architecture.

    References
    ----------
    [megatron]
    """
    if job.shape is None or job.arch is None:
        return (1,)
    heads, kv = job.arch.heads, job.arch.kv_heads
    return tuple(t for t in POWERS if heads % t == 0 and (kv % t == 0 or t % kv == 0))


def blocks_per_stage(blocks: npt.ArrayLike, pp: npt.ArrayLike) -> npt.NDArray[np.number[Any]]:
    """Blocks on the heaviest of ``pp`` stages.

    Parameters
    ----------
    blocks : int or numpy.ndarray
        Transformer blocks [1].
    pp : int or numpy.ndarray
        Pipeline stages [1].

    Returns
    -------
    numpy.ndarray
        ``ceil(blocks / pp)`` [1] (integers for integer inputs).
    """
    per_stage: npt.NDArray[np.number[Any]] = -(-np.asarray(blocks) // np.maximum(np.asarray(pp), 1))
    return per_stage


def interleave_depths(blocks: int, stages: Iterable[int]) -> tuple[int, ...]:
    """Every interleaving depth some pipeline of ``stages`` can run.

    Parameters
    ----------
    blocks : int
        Transformer blocks [1].
    stages : iterable of int
        Pipeline sizes searched [1].

    Returns
    -------
    tuple of int
        1, and each divisor above 1 of the blocks on a pipeline's heaviest stage, up to all of them
        (one block per virtual stage) [1].

    Examples
    --------
    >>> interleave_depths(32, (1, 2, 4))
    (1, 2, 4, 8, 16)
    """
    depths = {1}
    for p in stages:
        if 1 < p <= blocks:
            per_stage = int(blocks_per_stage(blocks, p))
            depths.update(v for v in range(2, per_stage + 1) if per_stage % v == 0)
    return tuple(sorted(depths))


def interleaves(blocks: int, pp: npt.ArrayLike, v: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether ``v`` virtual stages split each of ``pp`` stages evenly.

    Parameters
    ----------
    blocks : int
        Transformer blocks [1].
    pp, v : int or numpy.ndarray
        Pipeline stages and virtual stages per device [1].

    Returns
    -------
    numpy.ndarray of bool
        True where ``v`` is 1, or a pipeline's heaviest stage's blocks divide into ``v`` chunks.
    """
    v = np.asarray(v)
    even: npt.NDArray[np.bool_] = (v == 1) | ((np.asarray(pp) > 1) & (blocks_per_stage(blocks, pp) % np.maximum(v, 1) == 0))
    return even


def _expert_sizes(job: Job) -> tuple[int, ...]:
    """Expert-parallel sizes of a mixture of experts: the powers of two that divide its experts."""
    if job.arch is None or not job.arch.moe:
        return (1,)
    return tuple(e for e in POWERS if job.arch.experts % e == 0)


def stage_counts(job: Job) -> tuple[int, ...]:
    """Pipeline stage counts searched: powers of two; with a given batch also 3, 5 or 7 times one
    (:data:`PIPELINE_ODD`), so that a device count with an odd factor finds the replicas that split it.

    Parameters
    ----------
    job : Job
        The workload (whether its batch was given).

    Returns
    -------
    tuple of int
        Stage counts [1], ascending.
    """
    return tuple(sorted(PIPELINE + PIPELINE_ODD)) if job.batch_given else PIPELINE


def _dimension_values(job: Job, fixed: Fixed) -> dict[str, tuple[int, ...]]:
    """The values each dimension takes: the fixed one, else those the model allows."""
    transformer = job.shape is not None
    blocks = job.shape.blocks if job.shape is not None else 1
    seq = int(job.tokens_per_sample) if transformer else 1
    recompute: tuple[int, ...] = RECOMPUTE_ALL if transformer else (0,)
    if transformer:
        kept = activation_bytes_per_sample(job, np.asarray([0, 1]))
        if kept[1] >= kept[0]:  # selective drops nothing (flash attention): never faster than none
            recompute = (0, 2)
    values: dict[str, tuple[int, ...]] = {
        "tp": tensor_sizes(job),
        "pp": tuple(p for p in stage_counts(job) if p <= blocks
                    and blocks_per_stage(blocks, p) * p <= UNEVEN_STAGE_LIMIT * blocks)
        if transformer else (1,),
        "cp": tuple(c for c in CONTEXT if c == 1 or (seq % (2 * c) == 0 and seq // c >= CP_MIN_CHUNK))
        if transformer else (1,),
        "ep": _expert_sizes(job),
        "zero": ZERO,
        "recompute": recompute,
        "interleave": interleave_depths(blocks, [p for p in stage_counts(job)
                                                 if blocks_per_stage(blocks, p) * p <= UNEVEN_STAGE_LIMIT * blocks])
        if transformer else (1,),
        "micro": (0, *PIPELINE_MICRO) if transformer and job.micro_batch is None else (0,),
    }
    rule = job.layouts  # the named framework's layouts (sizer.frameworks): a dimension it does not run stays 1
    for name in ("tp", "pp", "cp", "ep"):
        if not getattr(rule, name):
            values[name] = (1,)
    if not rule.pp:
        values["interleave"] = (1,)
    values["zero"] = tuple(z for z in ZERO if z == 0 or z in rule.zero)
    for name, value in fixed.items():
        if value is not None:
            values[name] = (value,)
    return values


def candidates(job: Job, table: DeviceTable, device: npt.NDArray[np.int64], count: npt.NDArray[np.int64],
               fixed: Fixed | None = None, *, first_stage: bool = False) -> Candidates:
    """The candidate layouts of every (device, count) pair, as flat arrays with their pair index.

    Parameters
    ----------
    job : Job
        The workload.
    table : DeviceTable
        The devices (their NVLink domain bounds tensor parallelism).
    device, count : numpy.ndarray
        Per pair: device index and device count [1].
    fixed : dict, optional
        Pinned dimensions (``tp``, ``pp``, ``cp``, ``zero``, ``recompute``, ``interleave``).
    first_stage : bool, default False
        The largest micro-batch that fits and plain 1F1B only.

    Returns
    -------
    dict of numpy.ndarray
        ``pair``, ``device``, ``count`` and one column per dimension of :data:`DIMENSIONS`.

    References
    ----------
    [megatron], [korthikanti], [ringattention], [zero]
    """
    fixed = fixed or {}
    values = _dimension_values(job, fixed)
    if first_stage:
        values["micro"], values["interleave"] = values["micro"][:1], values["interleave"][:1]
    # every combination, the last dimension fastest (itertools.product's order), built in numpy as indices
    columns = [np.asarray(values[name], dtype=np.int64) for name in DIMENSIONS]
    grids = np.meshgrid(*(np.arange(len(column)) for column in columns), indexing="ij")
    index = {name: grid.ravel() for name, grid in zip(DIMENSIONS, grids, strict=True)}
    blocks = job.shape.blocks if job.shape is not None else 1
    # a template row is a layout only where its dimensions agree with each other; the pipeline and interleaving
    # agree or not as pairs of values, decided once on the small table of their values
    stages, depths = columns[DIMENSIONS.index("pp")], columns[DIMENSIONS.index("interleave")]
    # a given depth may split a stage unevenly, as long as each of the heaviest stage's chunks holds a block
    divides = interleaves(blocks, stages[:, None], depths[None, :]) | (
        ("interleave" in fixed) & chunks_hold_blocks(blocks, stages[:, None], depths[None, :]))
    agree = (depths[None, :] == 1) | ((stages[:, None] > 1) & divides)
    micro, pipelined = columns[DIMENSIONS.index("micro")], stages > 1
    keep = agree[index["pp"], index["interleave"]] & ((micro[index["micro"]] == 0) | pipelined[index["pp"]]
                                                       | ("micro" in fixed))
    # ZeRO-1 is searched without pipelines too: a step that accumulates several micro-batches (a batch larger
    # than dp x the largest micro-batch that fits) reduce-scatters once under ZeRO-1 and once a micro-batch
    # under ZeRO-2, so ZeRO-1 can be the fastest there (300M on 8 H100s at 2M tokens: 32 x 4)
    template = np.stack([column[index[name][keep]] for name, column in zip(DIMENSIONS, columns, strict=True)], axis=1)
    # Which template rows are layouts depends on a pair's count and node size alone: decided once per
    # distinct (count, node size), then each pair takes its combination's rows (pair-major, template order)
    node = np.asarray(table.devices_per_node, dtype=np.int64)[device]
    combos, _, combo_of = unique_rows(np.stack([count, node], axis=1))
    n, per_node = combos[:, :1], combos[:, 1:]
    tp, pp, cp, ep, zero = (template[None, :, DIMENSIONS.index(name)] for name in ("tp", "pp", "cp", "ep", "zero"))
    split = tp * pp * cp
    # expert parallelism (Megatron's) carves its groups out of the data-parallel ranks: ep divides dp
    dp = n // split
    inside = (tp <= per_node) | ("tp" in fixed)
    # a searched ep divides dp; a given one may span the tensor ranks too
    # (experts then not tensor-split, sizer.engine.roofline.expert_layout), as on main
    # expert ranks may span nodes: the all-to-all then runs partly over the network (roofline.all_to_all_seconds)
    experts = (dp % ep == 0) if "ep" not in fixed else ((tp * dp) % ep == 0)
    sharded = (zero == 0) | (n > split) | ("zero" in fixed)  # ZeRO needs dp x cp > 1, unless asked for
    # the framework's layouts: replicas (ZeRO 0 over several ranks) only where it runs them, and no more than its
    # highest stage beside pipeline stages (no framework runs ZeRO-3 with a pipeline: sizer.frameworks.Layouts)
    rule = job.layouts
    runs = ((zero > 0) | (n == split) | (0 in rule.zero) | ("zero" in fixed)) & \
        ((pp == 1) | (zero <= (rule.zero_with_pp if rule.zero_with_pp is not None else 0)) | ("zero" in fixed))
    valid = (n % split == 0) & experts & inside & sharded & runs  # [combination, template row]
    per_combo = valid.sum(axis=1)
    rows_of = per_combo[combo_of]  # layouts per pair
    pair = np.repeat(np.arange(len(device)), rows_of)
    flat = np.flatnonzero(valid.ravel()) % len(template)  # each combination's template rows, one after another
    starts = np.concatenate([[0], np.cumsum(per_combo)[:-1]])[combo_of]
    within = np.arange(len(pair)) - np.repeat(np.cumsum(rows_of) - rows_of, rows_of)
    rows = template[flat[np.repeat(starts, rows_of) + within]]
    if "zero" not in fixed and optimizer_state_bytes(job.optimizer) >= ADAM_STATE_BYTES:
        # a sharded pipeline never needs ZeRO-0: ZeRO-1 moves the same bytes, updates 1/dp of the parameters and,
        # with FP32 master weights and Adam's two moments (12 bytes a parameter, at least 6 of them sharded
        # away), keeps less than ZeRO-0 even with its two buckets (at most 4 bytes a parameter): beaten outright
        at = {name: DIMENSIONS.index(name) for name in ("tp", "pp", "cp", "zero")}
        split = rows[:, at["tp"]] * rows[:, at["pp"]] * rows[:, at["cp"]]
        master = np.asarray(table.master_bytes, dtype=float)[device[pair]] > 0
        weights = np.asarray(table.weight_bytes, dtype=float)[device[pair]] <= 2
        beaten = (rows[:, at["zero"]] == 0) & (rows[:, at["pp"]] > 1) & (count[pair] > split) & master & weights
        rows, pair = rows[~beaten], pair[~beaten]
    return {"pair": pair, "device": device[pair], "count": count[pair],
            **{name: rows[:, k] for k, name in enumerate(DIMENSIONS)}}


def search(job: Job, table: DeviceTable, device: npt.ArrayLike, count: npt.ArrayLike, *, fixed: Fixed | None = None,
           headroom: bool = False,
           overlap_allreduce: bool = False, overlap_all_to_all: bool = False) -> Search:
    """Evaluate every candidate layout of every (device, count) pair and choose one per pair.

    The fastest that fits running the asked batch, else the fastest that fits a batch near it, else
    the one closest to fitting.

    Parameters
    ----------
    job : Job
        The workload.
    table : DeviceTable
        The devices at the job's precision.
    device, count : int or array
        Per pair: device index and device count [1].
    fixed : dict, optional
        Pinned dimensions; the rest is searched.
    headroom : bool, default False
        Reserve the upper memory headroom.
    overlap_allreduce : bool, default False
        Overlap the gradient all-reduce with the backward pass.
    overlap_all_to_all : bool, default False
        Overlap expert parallelism's all-to-alls with another micro-batch's computation.

    Returns
    -------
    Search
        Every candidate's evaluation and per pair the chosen row and whether it fits.

    References
    ----------
    [megatron], [korthikanti], [ringattention], [zero]
    """
    devices = np.atleast_1d(np.asarray(device, dtype=np.int64))
    counts = np.atleast_1d(np.asarray(count, dtype=np.int64))
    check_deadline()
    fixed = fixed or {}
    pairs = len(devices)
    if pairs == 1 or "interleave" in fixed or "micro" in fixed:  # every candidate in one evaluation
        c = candidates(job, table, devices, counts, fixed)
        ev = _evaluate(job, table, c, headroom, overlap_allreduce, overlap_all_to_all)
    else:  # two stages (module docstring)
        stage = _first_stage(job, table, devices, counts, fixed, headroom)
        c = stage.kept
        ev = _evaluate(job, table, c, headroom, overlap_allreduce, overlap_all_to_all, memory=stage.kept_memory)
        more, memory = _second_stage(job, table, c, ev, pairs, fixed, stage)
        if len(more["pair"]):
            check_deadline()
            later = _evaluate(job, table, more, headroom, overlap_allreduce, overlap_all_to_all, memory=memory)
            # only the rows that can still be chosen go on: each stage's own choice per pair (the choice of
            # both is the better of the two, the first stage's on a tie, as over every row), and every row of
            # a pair that nothing of the stage fits (for the layout closest to fitting)
            first, second = _contenders(job, ev, c["pair"], pairs), _contenders(job, later, more["pair"], pairs)
            ev = concatenate(take(ev, first), take(later, second))
            c = {name: np.concatenate([c[name][first], more[name][second]]) for name in c}
    tier, distance = batch_keys(job, ev)
    chosen, found = _choice(ev, c["pair"], distance, pairs, tier)
    return Search(evaluation=ev, pair=c["pair"], ep=c["ep"], chosen=chosen, found=found, distance=distance, tier=tier)


def _choice(ev: Evaluation, pair: npt.NDArray[np.int64], distance: npt.NDArray[np.float64], pairs: int,
            tier: npt.NDArray[np.bool_]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Per pair, the row chosen and whether it fits: the first fitting row by (the asked batch, the
    nearest batch, time, memory), else the feasible row needing the least memory (module docstring)."""
    fitting = np.flatnonzero(ev.fits & ev.feasible)
    chosen = np.zeros(pairs, dtype=np.int64)
    found = np.zeros(pairs, dtype=bool)
    fitted, first = first_per_pair(pair, fitting, (tier, distance, ev.training_seconds, ev.memory_needed))
    chosen[fitted], found[fitted] = first, True
    unfound = ~found & (np.bincount(pair, minlength=pairs) > 0)  # nothing fits: show the layout closest to fitting
    if unfound.any():
        rows = np.flatnonzero(unfound[pair])
        closest, first = first_per_pair(pair, rows, (np.where(ev.feasible, ev.memory_needed, np.inf),))
        chosen[closest] = first
    return chosen, found


def first_per_pair(pair: npt.NDArray[np.int64], rows: npt.NDArray[np.int64],
                   keys: tuple[npt.NDArray[Any], ...]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per pair, the first of its ``rows`` by ``keys``: the row a stable sort would put first.

    Each pair's rows are narrowed key by key to those at the pair's least (NaN after every number, as a sort
    puts it), the earliest row of what is left taken: ``np.lexsort`` over (keys, pair)'s choice, without
    sorting every row.

    Parameters
    ----------
    pair : numpy.ndarray
        Per row: its pair [index].
    rows : numpy.ndarray
        The rows to choose among, ascending [index].
    keys : tuple of numpy.ndarray
        Per row, the most significant first (booleans or numbers) [any unit].

    Returns
    -------
    tuple of numpy.ndarray
        The pairs that have rows, ascending, and each one's first row [index].

    Examples
    --------
    >>> pair, time = np.array([0, 0, 1, 1, 1]), np.array([2.0, 1.0, np.nan, 3.0, 3.0])
    >>> [a.tolist() for a in first_per_pair(pair, np.arange(5), (time,))]
    [[0, 1], [1, 3]]
    """
    rows = rows[np.argsort(pair[rows], kind="stable")]  # each pair's rows together, in their order
    owner = pair[rows]
    for key in keys:
        if len(rows) < 2:
            break
        values = np.asarray(key[rows], dtype=float)
        if values[0] == values.min() == values.max():  # one value (no NaN) in every pair: it narrows nothing
            continue
        start = np.r_[True, owner[1:] != owner[:-1]]
        least = np.fmin.reduceat(values, np.flatnonzero(start))[np.cumsum(start) - 1]  # NaN only where all are
        keep = (values == least) | np.isnan(least)
        rows, owner = rows[keep], owner[keep]
    start = np.r_[True, owner[1:] != owner[:-1]] if len(rows) else np.zeros(0, dtype=bool)
    return owner[start], rows[start]


def _contenders(job: Job, ev: Evaluation, pair: npt.NDArray[np.int64], pairs: int) -> npt.NDArray[np.int64]:
    """Rows of one stage's evaluation that the final choice can take: the stage's choice for each pair
    where something fits, every row of a pair where nothing does."""
    tier, distance = batch_keys(job, ev)
    chosen, found = _choice(ev, pair, distance, pairs, tier)
    keep = ~found[pair]
    keep[chosen[found]] = True
    return np.flatnonzero(keep)


def _evaluate(job: Job, table: DeviceTable, c: Candidates, headroom: bool, overlap_allreduce: bool,
              overlap_all_to_all: bool = False, memory: MemoryParts | None = None) -> Evaluation:
    micro = np.where(c["micro"] > 0, c["micro"], np.nan)
    return evaluate(job, table, c["device"], c["count"], c["zero"], tp=c["tp"], pp=c["pp"], cp=c["cp"],
                    recompute=c["recompute"], interleave=c["interleave"], ep=c["ep"], micro_batch=micro,
                    headroom=headroom, overlap_allreduce=overlap_allreduce, overlap_all_to_all=overlap_all_to_all,
                    memory=memory)


def _second_stage(job: Job, table: DeviceTable, c: Candidates, ev: Evaluation, pairs: int, fixed: Fixed,
                  first: _FirstStage) -> tuple[Candidates, MemoryParts]:
    """Small micro-batches and interleaving for the first stage's pipelines (and the dominated ones of
    ``first.shadow``, floored by their dominator) that could still win; with their memory."""
    shadow = first.shadow
    ok = ev.fits & ev.feasible
    # only the pair's nearest batch (the asked one where some layout runs it) can be chosen
    distance = batch_distance(job, ev)
    nearest = np.full(pairs, np.inf)
    np.minimum.at(nearest, c["pair"][ok], distance[ok])
    chosen_batch = ok & (distance == nearest[c["pair"]])
    best = np.full(pairs, np.inf)
    np.minimum.at(best, c["pair"][chosen_batch], ev.training_seconds[chosen_batch])
    p = ev.parts
    floor = np.maximum((p.step - p.bubble - p.pipeline), p.physical_limit) * ev.steps
    eligible = chosen_batch & (c["pp"] > 1) & (floor < best[c["pair"]])
    rows = np.flatnonzero(eligible)
    shadows = np.flatnonzero(eligible[shadow["dominator"]])
    # the bases: the eligible pipelines, then the dominated ones whose dominator is eligible; ``ref`` is the
    # evaluated row whose time floors them (their own, or their dominator's)
    bases = {name: np.concatenate([c[name][rows], shadow[name][shadows]]) for name in c}
    ref = np.concatenate([rows, shadow["dominator"][shadows]])
    values = _dimension_values(job, fixed)
    variants = np.asarray([(m, v) for m in values["micro"] for v in values["interleave"] if (m, v) != (0, 1)],
                          dtype=np.int64).reshape(-1, 2)
    blocks = job.shape.blocks if job.shape is not None else 1
    # which variants a base's pipeline runs, decided once per distinct stage count (as in candidates)
    stages, stage_of = np.unique(bases["pp"], return_inverse=True)
    depth = variants[None, :, 1]
    runs_on = interleaves(blocks, stages[:, None], depth) | (
        ("interleave" in fixed) & chunks_hold_blocks(blocks, stages[:, None], depth))
    # the floors below, before any memory, on the grid of bases x variants: a given micro-batch's ratio is
    # known, the largest that fits is at least one sequence (so its bubble at least 1/m of the first stage's)
    floors = _VariantFloor.of(ev, ref, best[c["pair"][ref]])
    micro, own = variants[None, :, 0], (np.arange(len(ref)) < len(rows))[:, None]
    hopeful = floors.below_best(np.where(micro > 0, micro, 1.0) / floors.micro[:, None], depth,
                                own | ((micro > 0) & (micro <= floors.micro[:, None])))
    index, variant = np.nonzero(runs_on[np.asarray(stage_of).ravel()] & hopeful)  # base-major, variants in order
    micro, interleave = variants[variant, 0], variants[variant, 1]
    # only those that fit and split the batch can be chosen (their pair has a fitting layout already):
    # memory alone says which, before any layer arithmetic; a variant holds its base's states (the batching alone
    # differs), so only the batching is worked out again
    held = take(first.held, np.concatenate([first.kept_source[rows], first.shadow_source[shadows]]))
    dp = (bases["count"] / (bases["tp"] * bases["pp"] * bases["cp"]))[index]
    batched = batching(job, held, dp, pp=bases["pp"][index], interleave=interleave,
                       micro_batch=np.where(micro > 0, micro, np.nan), rows=index)
    # and each variant's own floor: a micro-batch m' <= m runs each sample no faster (smaller GEMMs, the same
    # launches and weight reads per pass) and a larger one each pass no faster, so its bubble is at least
    # min(m'/m, 1)/v of the first stage's
    fit = np.flatnonzero(batched.fits & batched.whole)
    ratio = batched.micro[fit] / floors.micro[index[fit]]
    runs = fit[take(floors, index[fit]).below_best(ratio, interleave[fit], (index[fit] < len(rows)) | (ratio <= 1.0))]
    # among the variants themselves, one beaten outright by another of the same split, micro-batch and
    # interleaving (the first stage's rule) is not evaluated; only the variants that run can beat one
    of = index[runs]
    runs = runs[~_dominance({"zero": bases["zero"][of], "recompute": bases["recompute"][of]}, batched.micro[runs],
                            interleave[runs], batched.accumulation[runs], split=_split_key(bases)[of])[0]]
    of = index[runs]
    return ({**{name: column[of] for name, column in bases.items()}, "micro": micro[runs], "interleave": interleave[runs]},
            batched_memory(take(held, of), take(batched, runs)))


@dataclass(frozen=True)
class _VariantFloor:
    """Per second-stage base, what floors its variants' training time (:meth:`below_best`): its reference row's
    step without the bubble and the stage sends, that bubble, its steps and physical limit, micro-batch, and the
    time its pair's best layout takes so far."""

    rest: npt.NDArray[np.float64]  # s per step
    bubble: npt.NDArray[np.float64]  # s per step
    steps: npt.NDArray[np.float64]
    limit: npt.NDArray[np.float64]  # s
    micro: npt.NDArray[np.float64]  # sample
    best: npt.NDArray[np.float64]  # s

    @classmethod
    def of(cls, ev: Evaluation, ref: npt.NDArray[np.int64], best: npt.NDArray[np.float64]) -> _VariantFloor:
        p = ev.parts
        return cls(rest=(p.step - p.bubble - p.pipeline)[ref], bubble=p.bubble[ref], steps=ev.steps[ref],
                   limit=(p.physical_limit * ev.steps)[ref], micro=ev.configs.micro_batch[ref], best=best)

    def below_best(self, ratio: npt.NDArray[np.float64], interleave: npt.NDArray[Any],
                   bounded: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Whether a variant's least training time (its base's time without the bubble and stage sends, plus the
        bubble shrunk by ``min(ratio, 1) / interleave``; only the physical limit where not ``bounded``: a
        dominated base's variant with a larger micro-batch than its dominator's runs each sample faster than the
        dominator did) is below its pair's best; per base (axis 0), broadcast against the arguments."""
        def per_base(a: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
            return a if np.ndim(ratio) == 1 else a[:, None]

        floor = np.minimum(ratio, 1.0)  # the shrink, then the floor, in one array (a grid of some 200,000)
        floor /= interleave
        floor *= per_base(self.bubble)
        floor += per_base(self.rest)
        floor *= per_base(self.steps)
        limit = per_base(self.limit)
        np.maximum(floor, limit, out=floor)
        below: npt.NDArray[np.bool_] = np.where(bounded, floor, limit) < per_base(self.best)
        return below


def _split_key(c: Candidates) -> npt.NDArray[np.int64]:
    """Per candidate, one integer for its pair, split and expert ranks."""
    # powers of two by their exponent (tp <= 64, pp <= 256, cp <= 16, ep <= 64)
    split = (np.log2(c["tp"]).astype(np.int64) * 16 + np.log2(c["pp"]).astype(np.int64)) * 16 \
        + np.log2(c["cp"]).astype(np.int64)
    key: npt.NDArray[np.int64] = (c["pair"] * 4096 + split) * 8 + np.log2(c["ep"]).astype(np.int64)
    return key


def _groups(c: Candidates, micro: npt.NDArray[np.float64], interleave: npt.NDArray[Any] | None = None,
            split: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.int64]:
    """Per candidate, its group: the same pair, split, expert ranks (``split``, where given: :func:`_split_key`),
    micro-batch (and interleaving)."""
    base = _split_key(c) if split is None else split
    if interleave is not None:  # the interleaving by its value
        base = base * 1024 + np.minimum(np.asarray(interleave, dtype=np.int64), 1023)
    whole = np.asarray(micro)
    if len(whole) and np.all(whole == np.round(whole)) and whole.max() < 1 << 24 and base.max() < 1 << 38:
        # micro-batches are whole numbers: one integer key, one sort; the rows come nearly in its order (pair by
        # pair, split by split), which a stable (merge) sort runs through fastest
        key = base * (1 << 24) + whole.astype(np.int64)
        order = np.argsort(key, kind="stable")
        starts = np.r_[True, key[order][1:] != key[order][:-1]]
    else:
        order = np.lexsort((micro, base))
        starts = np.r_[True, (base[order][1:] != base[order][:-1]) | (micro[order][1:] != micro[order][:-1])]
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(starts) - 1
    return group


def _dominating_stage(zero: npt.NDArray[np.int64], accumulation: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """The ZeRO stage that beats ``zero`` outright at no more recomputation, or -1 (module docstring): ZeRO-2
    with one micro-batch per step (the traffic of 0/1, less memory, a cheaper step than 3); with more, ZeRO-1
    (the traffic of 0 with a sharded optimizer step, less traffic than 2's reduce-scatter per micro-batch and
    3's gathers)."""
    single = np.asarray(accumulation) <= 1
    return np.where(single, np.where(zero != 2, 2, -1), np.where(zero != 1, 1, -1))


def _dominance(c: Candidates, micro: npt.NDArray[np.float64], interleave: npt.NDArray[Any] | None = None,
               accumulation: npt.NDArray[np.float64] | None = None, split: npt.NDArray[np.int64] | None = None
               ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Which candidates (every one of which fits) another of their group (:func:`_groups`) beats outright: it needs
    less recomputation at the same ZeRO stage, or is the stage :func:`_dominating_stage` names with no more
    recomputation (module docstring). Returns (dominated, group, least recomputation that fits per group and
    ZeRO stage, the dominating stage per candidate)."""
    group = _groups(c, micro, interleave, split)
    rc, zero = c["recompute"], c["zero"]
    least = np.full((int(group.max()) + 1 if len(group) else 0, 4), np.iinfo(np.int64).max)
    np.minimum.at(least.reshape(-1), group * 4 + zero, rc)  # one flat index: ufunc.at's fast path
    stage = _dominating_stage(zero, np.ones(len(zero)) if accumulation is None else accumulation)
    beaten = (stage >= 0) & (least[group, np.maximum(stage, 0)] <= rc)
    return (least[group, zero] < rc) | beaten, group, least, stage


def take(a: Rows, rows: npt.NDArray[np.int64]) -> Rows:
    """An evaluation (or its parts) at some of its rows (:func:`concatenate`'s counterpart).

    Parameters
    ----------
    a : Evaluation, dataclass, numpy.ndarray or None
        Per-row arrays (scalars stand for every row).
    rows : numpy.ndarray
        Row indices [index].

    Returns
    -------
    Evaluation, dataclass, numpy.ndarray or None
        ``a`` at ``rows``.
    """
    if isinstance(a, np.ndarray):
        return cast(Rows, a[rows] if a.ndim >= 1 else a)
    names = _field_names(type(a))
    if names is None:
        return a
    return type(a)(**{name: take(getattr(a, name), rows) for name in names})


def _field_names(kind: type) -> tuple[str, ...] | None:
    """The fields of a dataclass (every one an argument of its constructor, as dataclasses.replace needs), else
    None."""
    return tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None


def concatenate(a: Rows, b: Rows) -> Rows:
    """Two evaluations (or their parts) as one, row after row.

    Parameters
    ----------
    a, b : Evaluation, dataclass, numpy.ndarray or None
        Of the same structure.

    Returns
    -------
    Evaluation, dataclass, numpy.ndarray or None
        ``a``'s rows followed by ``b``'s.
    """
    if a is None:
        return a
    if isinstance(a, np.ndarray):
        return cast(Rows, np.concatenate([np.broadcast_to(a, np.shape(a)), cast(npt.NDArray[Any], b)]))
    names = _field_names(type(a))
    if names is None:
        return a
    return type(a)(**{name: concatenate(getattr(a, name), getattr(b, name)) for name in names})


@dataclass(frozen=True)
class _FirstStage:
    """The first stage's candidates that go on (:func:`_first_stage`): ``kept`` to be evaluated, with their memory;
    ``shadow``, the dominated pipelines, each with its dominator's index among ``kept``; and the bytes every
    batching of a kept or shadow row holds (``held``, at ``kept_source`` and ``shadow_source``)."""

    kept: Candidates
    kept_memory: MemoryParts
    shadow: Candidates
    held: HeldBytes
    kept_source: npt.NDArray[np.intp]
    shadow_source: npt.NDArray[np.intp]


def _first_stage(job: Job, table: DeviceTable, devices: npt.NDArray[np.int64], counts: npt.NDArray[np.int64],
                 fixed: Fixed, headroom: bool) -> _FirstStage:
    """Every split with the largest micro-batch that fits and plain 1F1B, less those another beats outright
    (:func:`_undominated`). Memory and dominance read of a pair its count, its device's node size, memory, storage
    and precision support only: pairs alike in these (a catalog of some 200 devices has about 60 kinds) have the
    same candidate rows, kept alike, so each kind is worked out once, on its first pair, and copied to the others."""
    keys = np.stack([counts, table.devices_per_node[devices], table.weight_bytes[devices],
                     table.master_bytes[devices], table.storage_scale[devices], table.framework_overhead[devices],
                     table.memory[devices], table.supported[devices]], axis=1).astype(float)
    _, first, alike = unique_rows(keys)
    c = candidates(job, table, devices[first], counts[first], fixed, first_stage=True)
    kept, shadow, dominator, held, memory = _undominated(job, table, c, len(first), headroom)
    kept_pair, kept_at = _spread(c["pair"][kept], alike, len(first))
    shadow_pair, shadow_at = _spread(c["pair"][shadow], alike, len(first))
    # a shadow's dominator: the same place among its own pair's kept rows as among its kind's
    kind_start = np.searchsorted(c["pair"][kept], np.arange(len(first)))
    pair_start = np.searchsorted(kept_pair, np.arange(len(devices)))
    kept_source, shadow_source = kept[kept_at], shadow[shadow_at]

    def copied(rows: npt.NDArray[np.intp], pair: npt.NDArray[np.intp]) -> Candidates:
        return {**{name: column[rows] for name, column in c.items()}, "pair": pair, "device": devices[pair]}

    return _FirstStage(kept=copied(kept_source, kept_pair), kept_memory=take(memory, kept_source),
                       shadow={**copied(shadow_source, shadow_pair),
                               "dominator": pair_start[shadow_pair] + dominator[shadow_at]
                               - kind_start[alike[shadow_pair]]},
                       held=held, kept_source=kept_source, shadow_source=shadow_source)


def _spread(kind: npt.NDArray[np.int64], alike: npt.NDArray[np.intp], kinds: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Rows worked out once per kind of pair (``kind``: each row's, ascending) given to every pair of that kind
    (``alike``: each pair's kind), pair after pair, in their order: each copy's pair, and the row it copies."""
    per_kind = np.bincount(kind, minlength=kinds)
    per_pair = per_kind[alike]
    pair = np.repeat(np.arange(len(alike)), per_pair)
    at = np.arange(len(pair)) + np.repeat((np.cumsum(per_kind) - per_kind)[alike] - (np.cumsum(per_pair) - per_pair),
                                          per_pair)
    return pair, at


def _undominated(job: Job, table: DeviceTable, c: Candidates, pairs: int, headroom: bool
                 ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp], HeldBytes, MemoryParts]:
    """The first-stage candidates that no other candidate beats outright (module docstring), and per
    pair with nothing that fits its layout closest to fitting (``kept``, rows of ``c``); the dominated pipelines
    that fit (``shadow``) and each one's dominator (its index among ``kept``), for the second stage; and every row's
    held bytes and memory."""
    d = c["device"]
    dp = c["count"] / (c["tp"] * c["pp"] * c["cp"])
    held = held_bytes(job, table.weight_bytes[d], table.master_bytes[d], table.storage_scale[d],
                      table.framework_overhead[d], table.memory[d], dp, c["zero"], tp=c["tp"], pp=c["pp"], cp=c["cp"],
                      recompute=c["recompute"], headroom=headroom, ep=c["ep"])
    mem = batched_memory(held, batching(job, held, dp, pp=c["pp"], interleave=c["interleave"]))
    feasible = mem.whole & table.supported[d] & (dp == np.round(dp))
    ok = np.flatnonzero(mem.fits & feasible)
    # groups of one (pair, split, micro-batch): the accumulation follows from these; only rows that fit can
    # beat one, and only those that fit are kept or shadowed for it
    fits = {name: c[name][ok] for name in ("pair", "tp", "pp", "cp", "ep", "zero", "recompute")}
    dominated, group, least, stage = _dominance(fits, mem.micro[ok], accumulation=mem.accumulation[ok])
    rc, zero = fits["recompute"], fits["zero"]
    keep = np.zeros(len(dp), dtype=bool)
    keep[ok[~dominated]] = True
    fitting = np.zeros(pairs, dtype=bool)
    fitting[fits["pair"]] = True
    rows = np.flatnonzero(~fitting[c["pair"]])
    if len(rows):  # pairs where nothing fits keep their least-memory (feasible first) layout, to say by how much
        order = rows[np.lexsort((mem.needed[rows], ~feasible[rows], c["pair"][rows]))]
        first = order[np.r_[True, c["pair"][order][1:] != c["pair"][order][:-1]]]
        keep[first] = True
    # a dominated pipeline is not evaluated, but its interleaved and small-micro-batch variants may fit where its
    # dominator's do not (they keep more in flight): they go to the second stage with the dominator's time as
    # their floor (the dominator runs no slower: less recomputation, or its stage's no larger traffic)
    shadow = np.flatnonzero(dominated & (fits["pp"] > 1))
    g, z, r, s = group[shadow], zero[shadow], rc[shadow], stage[shadow]
    by_stage = (s >= 0) & (least[g, np.maximum(s, 0)] <= r)
    dominator_zero = np.where(by_stage, s, z)
    dominator_rc = np.where(by_stage, least[g, np.maximum(s, 0)], least[g, z])
    slot = np.full((len(least), 4, len(RECOMPUTE_ALL)), -1, dtype=np.int64)
    kept = np.flatnonzero(keep)
    # the kept rows that fit, by their place among all kept rows (those of pairs where nothing fits dominate none)
    kept_fitting = np.flatnonzero(~dominated)
    slot[group[kept_fitting], zero[kept_fitting], rc[kept_fitting]] = np.searchsorted(kept, ok[kept_fitting])
    dominator = slot[g, dominator_zero, dominator_rc]
    return kept, ok[shadow[dominator >= 0]], dominator[dominator >= 0], held, mem
