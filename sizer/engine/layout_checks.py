"""A training job's layout: the checks that refuse an impossible one and the one search's choice of the rest.

The layout fields a user pins (ZeRO stage, tensor, pipeline, context and expert parallel sizes, recomputation,
virtual chunks) are checked against the model and the device count here, as Megatron-LM and DeepSpeed would
refuse them; the rest is chosen by :func:`sizer.engine.search.search`. The answer built on the chosen layout is
:mod:`sizer.training.time_answer`'s.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sizer.engine.devices import DeviceTable
from sizer.engine.job import Job
from sizer.errors import InputError

if TYPE_CHECKING:
    from sizer.engine.search import Fixed


def check_expert_parallel(job: Job, count: int, tp: int, pp: int, ep: int) -> None:
    """An expert-parallel size the job can run, or InputError naming ``ep``: a mixture of experts,
    ``ep`` dividing its experts and the tensor x data-parallel ranks (expert ranks are data-parallel
    ranks, as in Megatron-Core and DeepSpeed-MoE, or span the tensor ranks too with experts not
    tensor-split: :func:`~sizer.engine.roofline.expert_layout`).

    Parameters
    ----------
    job : Job
        The workload.
    count : int
        Devices [1].
    tp, pp : int
        Tensor- and pipeline-parallel sizes [1].
    ep : int
        Expert-parallel size [1].

    Raises
    ------
    InputError
        Naming ``ep``: not a mixture of experts, not a divisor of the experts or of count / pp.

    References
    ----------
    [gshard], [deepspeed-moe]
    """
    if isinstance(ep, bool) or not isinstance(ep, int) or ep < 1:
        raise InputError("ep", ep, "a whole number of expert-parallel ranks, at least 1")
    if ep == 1:
        return
    arch = job.arch
    if arch is None or not arch.moe:
        raise InputError("ep", ep, "a mixture-of-experts model (--model with experts, e.g. mixtral-8x7b): expert "
                                   "parallelism splits the routed experts")
    if arch.experts % ep:
        raise InputError("ep", ep, f"a divisor of the {arch.experts} experts of {arch.name}")
    ranks = count // pp if count % (tp * pp) == 0 else 0
    if not ranks or ranks % ep:
        raise InputError("ep", ep, f"a divisor of the tensor x data-parallel ranks count / pp = {count / pp:g}: "
                                   "expert-parallel ranks are data-parallel (or tensor and data-parallel) ranks")


def check_layout(job: Job, count: int, tp: int | None, pp: int | None, recompute: int | None, cp: int | None = None,
                 *, interleave: int | None = None) -> None:
    """A layout the job can run, or InputError naming the field that cannot be.

    Parameters
    ----------
    job : Job
        The workload.
    count : int
        Devices [1].
    tp, pp, cp : int or None
        Tensor, pipeline and context-parallel sizes given [1].
    recompute : int or None
        Recomputation policy given [1].
    interleave : int or None
        Virtual pipeline chunks per stage given [1] (:func:`sizer.engine.search.chunks_hold_blocks`).

    Raises
    ------
    InputError
        A split that does not divide the count, the heads or the sequence, virtual chunks without a
        block each, or parallelism for a workload without transformer blocks.

    References
    ----------
    [megatron], [ringattention]
    """
    tp_, pp_, cp_ = tp or 1, pp or 1, cp or 1
    if count % (tp_ * pp_ * cp_):
        field, value = ("cp", cp) if cp else (("tp", tp) if tp else ("pp", pp))
        raise InputError(field, value, f"tensor x pipeline x context parallel sizes that divide the device count "
                                       f"({count}): tp {tp_} x pp {pp_} x cp {cp_} = {tp_ * pp_ * cp_}")
    if job.shape is None:
        _refuse_parallel_without_blocks(tp, pp, cp, recompute)
        return
    arch = job.arch
    assert arch is not None  # a job has a shape exactly when it has an architecture (Job.shape)
    if tp_ > 1 and (arch.heads % tp_ or (arch.kv_heads % tp_ and tp_ % arch.kv_heads)):
        raise InputError("tp", tp, f"a size that divides the {arch.heads} heads and the {arch.kv_heads} key/value heads "
                                   "(or is a multiple of them)")
    if pp_ > job.shape.blocks:
        raise InputError("pp", pp, f"at most one pipeline stage per block ({job.shape.blocks})")
    if interleave is not None and interleave > 1:
        _check_interleave(job.shape.blocks, pp, interleave)
    if cp_ > 1 and job.tokens_per_sample % (2 * cp_):
        raise InputError("cp", cp, f"a size whose twice divides the sequence length ({job.tokens_per_sample:.0f}): "
                                   "ring attention balances causal work with 2 chunks per rank")



def _refuse_parallel_without_blocks(tp: int | None, pp: int | None, cp: int | None, recompute: int | None) -> None:
    """InputError naming the first of ``tp``, ``pp``, ``cp`` (above 1) or ``recompute`` (given, not 0) asked of
    a workload without transformer blocks: these are modelled per block.

    Parameters
    ----------
    tp, pp, cp : int or None
        Tensor, pipeline and context-parallel sizes given [1].
    recompute : int or None
        Recomputation policy given [1].
    """
    tp_, pp_, cp_ = tp or 1, pp or 1, cp or 1
    if tp_ > 1 or pp_ > 1 or cp_ > 1 or recompute:
        field = "tp" if tp_ > 1 else ("pp" if pp_ > 1 else ("cp" if cp_ > 1 else "recompute"))
        raise InputError(field, {"tp": tp, "pp": pp, "cp": cp, "recompute": recompute}[field],
                         "a transformer (--model or --params with --tokens): tensor, pipeline and context parallelism "
                         "and recomputation are modelled per transformer block")


def _check_interleave(blocks: int, pp: int | None, interleave: int) -> None:
    """InputError naming ``interleave`` where some virtual pipeline chunk would hold no block.

    Parameters
    ----------
    blocks : int
        Transformer blocks of the model [1].
    pp : int or None
        Pipeline stages given [1]; None: the search chooses, at least 2.
    interleave : int
        Virtual pipeline chunks per stage given [1], above 1.
    """
    from sizer.engine.search import blocks_per_stage, chunks_hold_blocks

    if pp is not None and not chunks_hold_blocks(blocks, pp, interleave):
        most = int(blocks_per_stage(blocks, pp))
        raise InputError("interleave", interleave, f"at most {most} virtual chunks per stage: "
                                                   f"{blocks} blocks over {pp} stages leave "
                                                   f"{most} block(s) to the heaviest stage")
    if not chunks_hold_blocks(blocks, 2, interleave):
        most = int(blocks_per_stage(blocks, 2))
        raise InputError("interleave", interleave, f"at most {most} virtual chunks per stage: "
                                                   f"{blocks} blocks over at least 2 stages")


def fixed_layout(zero: int | None = None, tp: int | None = None, pp: int | None = None, cp: int | None = None,
                 recompute: int | None = None, interleave: int | None = None, ep: int | None = None) -> Fixed:
    """The layout fields the user gave: the search pins these and searches the rest.

    Parameters
    ----------
    zero, tp, pp, cp, recompute, interleave, ep : int or None
        Given values [1]; None where not given.

    Returns
    -------
    dict
        The given fields by name.
    """
    given = {"zero": zero, "tp": tp, "pp": pp, "cp": cp, "recompute": recompute, "interleave": interleave, "ep": ep}
    return {name: value for name, value in given.items() if value is not None}


def choose_layout(job: Job, table: DeviceTable, count: int, fixed: Fixed | None = None, *, headroom: bool = False,
                  overlap_allreduce: bool = False, overlap_all_to_all: bool = False) -> dict[str, float]:
    """The fastest layout that fits with ``fixed`` pinned, else the one closest to fitting.

    Parameters
    ----------
    job : Job
        The workload.
    table : DeviceTable
        The one device at the job's precision.
    count : int
        Devices [1].
    fixed : dict, optional
        Pinned dimensions.
    headroom, overlap_allreduce, overlap_all_to_all : bool
        As :func:`sizer.engine.search.search`.

    Returns
    -------
    dict
        ``zero``, ``tp``, ``pp``, ``cp``, ``recompute``, ``interleave``, ``ep`` [1] and ``micro`` [sample].

    Raises
    ------
    InputError
        Where no layout of ``count`` devices splits the batch (:func:`refuse_batch`).

    References
    ----------
    [megatron]
    """
    from sizer.engine.search import search

    found = search(job, table, [0], [count], fixed=fixed, headroom=headroom, overlap_allreduce=overlap_allreduce,
                   overlap_all_to_all=overlap_all_to_all)
    ev = found.evaluation
    if not len(found.pair) or not ev.feasible.any():
        refuse_batch(job, table, count, fixed or {})
    c, i = ev.configs, int(found.chosen[0])
    if not ev.feasible[i]:
        i = int(np.flatnonzero(ev.feasible)[np.argmin(ev.memory_needed[ev.feasible])])
    return {"zero": int(c.zero[i]), "tp": int(c.tp[i]), "pp": int(c.pp[i]), "cp": int(c.cp[i]),
            "recompute": int(c.recompute[i]), "interleave": int(c.interleave[i]), "micro": float(c.micro_batch[i]),
            "ep": int(np.broadcast_to(c.ep, c.tp.shape)[i])}


def refuse_batch(job: Job, table: DeviceTable, count: int, fixed: Fixed) -> None:
    """InputError for a batch no layout of ``count`` devices can run, naming the most devices that can.

    Parameters
    ----------
    job : Job
        The workload.
    table : DeviceTable
        The one device.
    count : int
        Devices [1].
    fixed : dict
        Pinned dimensions.

    Raises
    ------
    InputError
        Always, on ``batch_size``.
    """
    from sizer.engine.search import candidates

    asked = max(1.0, round(job.batch_size))
    counts = np.asarray([int(2 ** k) for k in range(21) if 2 ** k <= count] + [count], dtype=np.int64)
    c = candidates(job, table, np.zeros(len(counts), dtype=np.int64), counts, fixed)
    unit = job.micro_batch or 1.0
    dp = c["count"] / (c["tp"] * c["pp"] * c["cp"])
    runs = c["count"][dp * unit <= asked]
    most = int(runs.max()) if len(runs) else 0
    hint = f"; at most {most:,} devices can run it" if most else ""
    raise InputError("batch_size", job.batch_size,
                     f"at least one {job.sample_word} per data-parallel replica: no layout of {count:,} devices "
                     f"splits a batch of {asked:,.0f} {job.sample_word}s{hint} (or give a larger --batch-size)")


def refuse_changed_batch(job: Job, exact: bool, batch: float, count: int) -> None:
    """InputError on ``batch_size`` where the batch the user gave is not the one the chosen layout runs and
    not within :data:`BATCH_ROUNDING` of it: a given batch is kept where some layout splits it (the search
    prefers those), else run as the nearest that splits within 2 % and said (:func:`sizer.training.time_answer.batch_change`).

    Parameters
    ----------
    job : Job
        The workload (its asked batch, and whether the user gave it).
    exact : bool
        Whether the chosen layout runs the asked batch (:attr:`Evaluation.exact`).
    batch : float
        The batch the chosen layout runs [sample].
    count : int
        Devices [1].

    Raises
    ------
    InputError
        On ``batch_size``, naming the nearest batch a layout of ``count`` devices runs.
    """
    asked = max(1.0, round(job.batch_size))
    if job.batch_given and not exact and not rounded_batch(asked, batch):
        raise InputError("batch_size", f"{asked:,.0f} {job.sample_word}s",
                         f"a batch every data-parallel replica of a layout of {count:,} devices splits into whole "
                         f"micro-batches: {asked:,.0f} {job.sample_word}s is split by none, the nearest one is "
                         f"{batch:,.0f}, {abs(batch / asked - 1):.1%} away (sizer runs a given batch as the nearest "
                         "that splits only within 2 %; give that one, or another count)")


# A given batch that no layout splits runs as the nearest one that splits when it lies within BATCH_ROUNDING
# (sizer.engine.search): a published batch is a rounded figure ("2M tokens": OPT-175B's 2,000,000 tokens are 976.6
# sequences of 2,048, and its 992 GPUs at TP 8 make 124 replicas, so 992 sequences ran, 1.6 % more); the answer says
# which batch ran


def rounded_batch(asked: float, batch: float) -> bool:
    """Whether ``batch`` may stand for the given ``asked`` one: within :data:`BATCH_ROUNDING` of it.

    Parameters
    ----------
    asked : float
        The batch given [sample].
    batch : float
        The nearest batch a layout runs [sample].

    Returns
    -------
    bool
    """
    from sizer.engine.constants import BATCH_ROUNDING

    return abs(batch / max(asked, 1.0) - 1.0) <= BATCH_ROUNDING + 1e-12


