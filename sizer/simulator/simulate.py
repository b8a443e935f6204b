"""Continuous batching, simulated one iteration at a time (issue 16).

A replica runs iterations as vLLM, TensorRT-LLM and SGLang schedule them: every running request
decodes one token, and waiting requests are prefilled in chunks while a token budget per
iteration lasts (chunked prefill). The paged KV cache bounds the running batch: by default a
request is admitted when its prompt and whole answer fit in the unreserved cache (TensorRT-LLM's
GUARANTEED_NO_EVICT); with ``reserve_kv=False`` it is admitted when its prompt fits, and when the
growing answers outgrow the cache the youngest request is preempted and later recomputed (vLLM's
recompute preemption).

Each iteration's time is the one engine's: :func:`iteration_grid` evaluates
:func:`sizer.engine.roofline.step_seconds` (forward-only ``INFERENCE`` pass) once per deployment
over a grid of (tokens in the iteration, KV tokens read), and the simulation interpolates in it.
Prefill and decode tokens enter the engine alike (each passes every linear layer once, the
weights are read once per iteration, the KV cache of every running request is read once).

.. math:: t_{iter} = t_{engine}(n_{prefill} + n_{decode},\\ K) + t_{overhead} + c_{seq}\\, n_{running}

where :math:`c_{seq}` is the runtime's CPU time per running request and iteration (sampling, detokenisation,
bookkeeping: :class:`sizer.runtimes.serving_runtimes.ServingProfile`, fitted on the runtime's own rows).

The run itself (:func:`simulate`) is put together from its parts: the arrivals
(:mod:`~sizer.simulator.arrivals`), what is known of each request (:mod:`~sizer.simulator.requests`),
the scheduler's admission and chunked prefill (:mod:`~sizer.simulator.scheduler`), the KV cache's
accounting (:mod:`~sizer.simulator.kv_cache`), the iterations' seconds from the grid
(:mod:`~sizer.simulator.iteration_cost`) and what is measured (:mod:`~sizer.simulator.metrics`); a
broken invariant is refused (:mod:`~sizer.simulator.invariants`). ``SimulationResult``,
``SimulationInvariantError`` and ``WARMUP_SHARE`` are re-exported here.

References
----------
docs/references.md [kwon2023vllm], [agrawal2024sarathi], [agrawal2024vidur].
"""
from __future__ import annotations

import bisect
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from sizer.choices import Split
from sizer.deadline import check_deadline
from sizer.engine.constants import SERVING_MATRIX_EFFICIENCY, serving_efficiencies
from sizer.engine.devices import DeviceTable
from sizer.engine.roofline import Configs, step_seconds
from sizer.engine.step_inputs import INFERENCE, Shape
from sizer.hardware.schema import Device
from sizer.memo import registered_cache
from sizer.passes import moe_decode
from sizer.passes.arithmetic import (
    LOGIT_BYTES,
    ServingLayers,
    decode_layers,
    fold,
    kv_cache_bytes_per_token,
    prefill_profile,
    serving_table,
    stored_weight_bytes,
    touched_experts,
)
from sizer.passes.moe_decode import TENSOR_PARALLEL, MoeLayout
from sizer.results import unit_factor
from sizer.runtimes.formats import WeightFormat
from sizer.runtimes.runtime import Runtime
from sizer.runtimes.serving_mechanisms import fitted_settings, generation_name
from sizer.runtimes.serving_runtimes import TENSORRT_LLM, VLLM
from sizer.simulator.arrivals import Arrivals, arrivals_for
from sizer.simulator.invariants import SimulationInvariantError  # noqa: F401  (re-exported: the simulation's refusal)
from sizer.simulator.iteration_cost import Interpolator, batch_seconds, decode_stretch, steps_within_cell
from sizer.simulator.kv_cache import KvCache
from sizer.simulator.metrics import WARMUP_SHARE, RunTotals, SimulationResult, empty_result, summarize  # noqa: F401
from sizer.simulator.requests import RequestLedger
from sizer.simulator.scheduler import Scheduler
from sizer.simulator.traffic import Lengths, Load
from sizer.workloads.architecture import Architecture

# The default runtime's scheduler limits and memory shares, read from its one description
# (sizer/runtimes/serving_runtimes.py: vLLM's EngineArgs max_num_seqs 256, max_num_batched_tokens 2048 with chunked
# prefill, gpu_memory_utilization 0.9; TensorRT-LLM's KvCacheConfig free_gpu_memory_fraction 0.9).
DEFAULT_MAX_BATCH = VLLM.profile.max_running
DEFAULT_TOKEN_BUDGET = VLLM.profile.token_budget
KV_BLOCK_TOKENS = 16  # vLLM's paged-attention block
VLLM_MEMORY_SHARE = VLLM.profile.memory_share
TRTLLM_KV_FREE_SHARE = TENSORRT_LLM.profile.kv_free_share
MAX_REQUESTS = 20_000  # work bound of one simulation
# The other work bound: steps of the loop, each one iteration with a prefill, a stretch of decode-only iterations run
# at once, or an idle gap skipped to the next arrival. Simulated iterations are not bounded: at a light load one
# answer's thousand decode iterations are one step, and an idle minute another, so a run at any rate ends when its
# arrivals are exhausted (issue 43: 0.1 requests/s of 1,000-token answers was cut at 400,000 iterations).
MAX_ITERATIONS = 400_000
# Scheduling (batch assembly, sampling, detokenisation) per iteration beyond the engine's per-pass
# overhead: fitted by `benchmarks/serving_accuracy.py --fit` on TensorRT-LLM's perf-overview offline rows.
SCHEDULER_OVERHEAD = 0.0
# The fraction of the matrix peak batched iterations reach is the serving engine's own
# (SERVING_MATRIX_EFFICIENCY, fitted offline on other sources): `benchmarks/serving_accuracy.py --fit`
# searched 0.55-0.70 on TensorRT-LLM's perf-overview rows and landed at 0.60, so no second constant.
BATCHING_MATRIX_EFFICIENCY = SERVING_MATRIX_EFFICIENCY


def batching_table(devices: tuple[Device, ...], weights: WeightFormat, matrix: float | None = None) -> DeviceTable:
    """Device rates for continuous batching: the serving table (``matrix``: another matrix
    efficiency, for the fit's search only).

    Parameters
    ----------
    devices : tuple of Device
        The catalog devices, one row each.
    weights : WeightFormat
        The weights' storage format (sets the rates the kernels reach).
    matrix : float, optional
        A fraction of the matrix peak [1] other than the engine's serving one (the fit's search only).

    Returns
    -------
    DeviceTable
        The devices' rates, memory and overheads, one row each.
    """
    if matrix is None or matrix == SERVING_MATRIX_EFFICIENCY:
        return serving_table(tuple(devices), weights)
    return serving_table(tuple(devices), weights, tuple(serving_efficiencies(d.kind, matrix=matrix) for d in devices))


@dataclass(frozen=True, eq=False)
class Replica:
    """One replica: ``count`` devices of table row ``device``, split by ``split`` ("tensor" or "layer")."""

    arch: Architecture
    weights: WeightFormat
    kv_bytes: float  # per value
    table: DeviceTable
    device: int
    count: int
    split: Split = Split.TENSOR
    max_batch: int = DEFAULT_MAX_BATCH
    token_budget: int = DEFAULT_TOKEN_BUDGET
    prefix_hit: float = 0.0  # share of prompt tokens found in the prefix cache
    iteration_overhead: float = SCHEDULER_OVERHEAD  # s of scheduling per iteration
    sequence_overhead: float = 0.0  # s of the scheduler's CPU per running request per iteration (the runtime's, fitted)
    reserve_kv: bool = True  # admit only when prompt + answer fit (TensorRT-LLM GUARANTEED_NO_EVICT); False:
    # admit when the prompt fits and preempt the youngest when the answers outgrow the cache (vLLM)
    memory_share: float = VLLM_MEMORY_SHARE  # of the device memory the runtime uses (TensorRT-LLM: 1)
    kv_free_share: float = 1.0  # of the memory left after weights and activations the cache takes (TensorRT-LLM: 0.9)
    # what the replica runs of each request (disaggregated serving): "both"; "prefill" (the prompt and the
    # first token, then the request leaves); "decode" (the prompt's KV cache arrives whole, the rest of the answer)
    phase: str = "both"
    # the engine's generation (sizer/runtimes/serving_mechanisms.yaml): seconds a request spends outside the engine
    # on its way in and its first token on its way out (API server, tokenising, streaming), and whether prefill
    # chunks share an iteration with the running answers (False: vLLM V0 without chunked prefill, prompts first)
    request_latency: float = 0.0
    mixed_batches: bool = True
    moe: MoeLayout = TENSOR_PARALLEL  # the runtime's expert and attention split (sizer.passes.moe_decode)


def runtime_replica(runtime: Runtime, arch: Architecture, weights: WeightFormat, kv_bytes: float, table: DeviceTable, device: int,
                    count: int, split: Split = Split.TENSOR, *, max_running: int | None = None, token_budget: int | None = None,
                    prefix_hit: float = 0.0, version: str | None = None, max_model_len: float | None = None,
                    moe: MoeLayout = TENSOR_PARALLEL) -> Replica:
    """One replica as ``runtime`` (a serving :class:`~sizer.runtimes.Runtime`) runs it: its scheduler defaults
    (``max_running`` and ``token_budget`` override them), memory shares, admission policy and fitted CPU time.

    Parameters
    ----------
    runtime : Runtime
        The serving runtime, with its profile (vLLM, SGLang, TensorRT-LLM ...).
    arch : Architecture
        The model.
    weights : WeightFormat
        The weights' storage format.
    kv_bytes : float
        Bytes of one cached key or value element [B].
    table : DeviceTable
        Device rates (:func:`batching_table`).
    device : int
        The table row of the replica's devices [1].
    count : int
        Devices in the replica [1].
    split : str
        ``"tensor"`` (heads split over ranks) or ``"layer"`` (layers in turn).
    max_running : int, optional
        Running requests at most [1] (default: the runtime's).
    token_budget : int, optional
        Tokens per iteration at most [tokens] (default: the runtime's).
    prefix_hit : float
        Share of prompt tokens found in the prefix cache [1].
    version : str, optional
        The runtime's version: its generation's scheduling policy and fitted costs
        (:mod:`sizer.runtimes.serving_mechanisms`) apply; None: the profile's as they are.
    max_model_len : float, optional
        The served context [tokens] (vLLM V0 chunks prefill only above 32K); None: long.
    moe : MoeLayout
        The expert and attention split (expert parallelism, data-parallel attention; default tensor parallel).

    Returns
    -------
    Replica
        What the simulation runs.
    """
    p = runtime.profile
    replica = Replica(arch, weights, kv_bytes, table, device, count, split, max_running or p.max_running,
                      token_budget or p.token_budget, prefix_hit, reserve_kv=p.reserve_kv, memory_share=p.memory_share,
                      kv_free_share=p.kv_free_share, sequence_overhead=p.sequence_overhead, moe=moe)
    if version is None:
        return replica
    dev = table.devices[device]
    settings = fitted_settings(generation_name(runtime.name, version), memory_gb=float(table.memory[device]) * unit_factor('B', 'GB'),
                               device=dev.id, max_model_len=max_model_len)
    if max_running is not None:  # what the caller sets wins over the generation's defaults
        settings.pop("max_batch", None)
    if token_budget is not None:
        settings.pop("token_budget", None)
    return dataclasses.replace(replica, **settings)


@dataclass(frozen=True)
class IterationGrid:
    """Seconds of one iteration over (tokens, KV tokens), and the KV cache's capacity."""

    tokens: np.ndarray  # axis 0: prefill plus decode tokens in the iteration
    kv_tokens: np.ndarray  # axis 1: KV tokens read (uniform from 0)
    seconds: np.ndarray  # [tokens, kv_tokens]
    kv_capacity: int  # tokens the paged cache holds on the replica
    weights: float  # B per device
    fits: bool

    def interpolator(self) -> Interpolator:
        """A function (n tokens, k KV tokens) -> seconds, bilinear in the grid, on plain lists (the
        simulation calls it once per iteration).

        Returns
        -------
        callable
            (tokens in the iteration [tokens], KV tokens read [tokens]) -> seconds [s]; beyond the grid's
            last cell it extrapolates linearly.
        """
        t: list[float] = self.tokens.tolist()
        s: list[list[float]] = self.seconds.tolist()
        last_i, last_j = len(t) - 2, len(self.kv_tokens) - 2
        step = float(self.kv_tokens[1])
        right = bisect.bisect_right

        def time(n: float, k: float) -> float:
            i = right(t, n) - 1
            i = 0 if i < 0 else (last_i if i > last_i else i)
            x = (n - t[i]) / (t[i + 1] - t[i])
            q = k / step
            j = int(q)
            if j > last_j:
                j = last_j
            y = q - j
            a, b = s[i], s[i + 1]
            return (1 - x) * (a[j] + y * (a[j + 1] - a[j])) + x * (b[j] + y * (b[j + 1] - b[j]))
        return time

    def time(self, n: float, k: float) -> float:
        """Bilinear interpolation of the grid at ``n`` tokens and ``k`` KV tokens [s].

        Parameters
        ----------
        n : float
            Tokens in the iteration [tokens].
        k : float
            KV tokens read [tokens].

        Returns
        -------
        float
            Seconds of the iteration [s].
        """
        return self.interpolator()(n, k)


def device_kv_bytes_per_token(replica: Replica, context: float) -> float:
    """KV-cache bytes one token keeps on each device of ``replica`` at ``context`` tokens [B]: heads split
    over tensor ranks, or layers over a layer split; a sliding-window block keeps its window only.

    Parameters
    ----------
    replica : Replica
        The model, KV format, device count and split.
    context : float
        Tokens attended over [tokens] (a sliding window keeps fewer).

    Returns
    -------
    float
        Bytes per token on each device [B].
    """
    if replica.split == Split.LAYER:
        return kv_cache_bytes_per_token(replica.arch, replica.kv_bytes, 1, context) / replica.count
    if replica.moe.dp_attention:  # each sequence's cache on the one attention rank that runs it
        return kv_cache_bytes_per_token(replica.arch, replica.kv_bytes, 1, context) / replica.count
    return kv_cache_bytes_per_token(replica.arch, replica.kv_bytes, replica.count, context)


def _table_key(table: DeviceTable) -> tuple[object, ...]:
    """A value fingerprint of a device table: its devices' content keys and every array's bytes."""
    parts: list[object] = []
    for field in dataclasses.fields(table):
        value = getattr(table, field.name)
        if isinstance(value, np.ndarray):
            parts.append(value.tobytes())
        elif field.name == "devices":
            parts.append(tuple(d.key for d in value))
        else:
            parts.append(repr(value))
    return tuple(parts)


def _grid_key(replica: Replica, mean_context: float) -> tuple[object, ...]:
    return (replica.arch, _table_key(replica.table), replica.weights, replica.kv_bytes, replica.device, replica.count,
            replica.split, replica.max_batch, replica.token_budget, replica.iteration_overhead, replica.memory_share,
            replica.kv_free_share, replica.moe, round(mean_context))


@registered_cache()
def _decode_layers(arch: Architecture, context: float, kv_layer_token: float, idle: float) -> ServingLayers:
    return decode_layers(arch, context, kv_layer_token, idle)


@registered_cache()
def _widest_layer_bytes(arch: Architecture, tokens: int) -> float:
    """Activation bytes of the widest layer over a prefill chunk of ``tokens`` (held at once)."""
    return float(fold(prefill_profile(arch, tokens)).table.bytes.max())


@registered_cache(key=_grid_key)
def iteration_grid(replica: Replica, mean_context: float) -> IterationGrid:
    """The engine's iteration time over a grid, built once per (replica, mean context).

    Parameters
    ----------
    replica : Replica
        What runs the iterations.
    mean_context : float
        Tokens a decoding request attends over on average [tokens]: sets the attention FLOP per token.

    Returns
    -------
    IterationGrid
        Seconds per iteration [s] over tokens in the iteration (1 to the token budget plus the
        largest batch, about 25 % apart) and KV tokens read (0 to the cache's capacity), and the
        capacity [tokens].

    References
    ----------
    docs/references.md [kwon2023vllm].
    """
    arch, table, d = replica.arch, replica.table, replica.device
    tp = replica.count if replica.split == Split.TENSOR else 1  # a layer split runs the layers in turn
    stored = stored_weight_bytes(arch, replica.weights)
    kv_layer_token = kv_cache_bytes_per_token(arch, replica.kv_bytes) / arch.layers
    idle = 1.0 - arch.experts_per_token / arch.experts if arch.moe else 0.0
    decode = _decode_layers(arch, float(max(round(mean_context), 1)), kv_layer_token, idle)

    # memory on each device: weights, the activations of one chunk, the runtime's reserve; its share of the rest holds KV
    weights = arch.params_total() * stored / replica.count
    tensor = replica.split == Split.TENSOR
    if tensor:  # attention whole on every data-parallel attention rank
        weights = float(moe_decode.weights_per_device(arch, stored, replica.count, replica.moe))
    act = _widest_layer_bytes(arch, min(replica.token_budget, 8192)) * table.storage_scale[d] / tp + replica.max_batch * arch.vocab * LOGIT_BYTES
    free = float(table.memory[d] * replica.memory_share - weights - table.framework_overhead[d] - act) * replica.kv_free_share
    kv_device_token = device_kv_bytes_per_token(replica, mean_context)  # at the mean context (sliding windows)
    capacity = int(max(free, 0.0) // kv_device_token // KV_BLOCK_TOKENS * KV_BLOCK_TOKENS)

    most = replica.token_budget + replica.max_batch
    tokens = np.unique(np.concatenate([[1.0, 2.0, 4.0], np.round(np.geomspace(1, most, 36))]))
    kv_axis = np.linspace(0.0, max(capacity, KV_BLOCK_TOKENS), 9)
    n, k = (g.ravel() for g in np.meshgrid(tokens, kv_axis, indexing="ij"))
    configs = Configs.of(np.full(len(n), d), float(tp), n, 1, 0, tp=float(tp))
    extra = decode.kv_bytes[None, :] * (k / n)[:, None]  # B per token: the batch's whole KV read once
    if tensor:  # MLA's latent: every tensor rank reads all of it
        extra = extra * float(moe_decode.kv_read_factor(arch, tp, replica.moe))
    if arch.moe:
        touched = touched_experts(arch.experts, arch.experts_per_token, n)
        share = (touched - arch.experts_per_token) / (arch.experts - arch.experts_per_token)
        extra = extra + share[:, None] * decode.idle_expert_params[None, :] * stored / n[:, None]
    parts = step_seconds(decode.table, table, configs, optimizer_state_bytes=0.0, kind=INFERENCE,
                         weight_bytes=np.full(len(n), stored), extra_bytes=extra,
                         shape=Shape(blocks=arch.layers, hidden=arch.hidden, tokens_per_sample=1))
    seconds = parts.step + table.step_overhead[d] + replica.iteration_overhead
    if tensor:  # the runtime's fused-MoE path, expert and attention split
        seconds = seconds + moe_decode.iteration_seconds(arch, table, d, replica.count, stored, replica.moe, n)
    seconds = seconds.reshape(len(tokens), len(kv_axis))
    grid = IterationGrid(tokens=tokens, kv_tokens=kv_axis, seconds=seconds, kv_capacity=capacity,
                         weights=float(weights), fits=capacity >= KV_BLOCK_TOKENS)
    return grid


def simulate(replica: Replica, load: Load, lengths: Lengths, requests: int = 1000, seed: int = 0,
             max_iterations: int = MAX_ITERATIONS, warmup: float = WARMUP_SHARE) -> SimulationResult:
    """Serve ``requests`` requests of ``lengths`` under ``load`` on one replica, iteration by iteration.

    Parameters
    ----------
    replica : Replica
        The devices, formats and scheduler limits.
    load : Load
        Poisson rate [1/s] or closed-loop users (think time [s]).
    lengths : Lengths
        Prompt and output lengths [tokens].
    requests : int
        Requests to serve [1]; the first tenth warms the replica up and is not measured.
    seed : int
        Of the random arrivals and lengths [1] (the same seed: the same requests at every rate).
    max_iterations : int
        Work bound [1], in steps of the loop (an iteration, a stretch of decode-only iterations, an idle gap):
        a run cut here is not complete (and meets no SLO). The simulated iterations are not bounded, so a
        light load runs until its arrivals are exhausted.
    warmup : float
        Share of the requests, first by arrival, not measured [1]: 0 for a finite benchmark, which measures
        every prompt it sends (the queue an over-capacity rate builds included).

    Returns
    -------
    SimulationResult
        Time to first token, time per output token and end-to-end latency of every measured
        request [s], output and total tokens per second [1/s], preemptions.

    References
    ----------
    docs/references.md [kwon2023vllm], [agrawal2024sarathi].
    """
    requests = int(min(max(requests, 10), MAX_REQUESTS))
    rng = np.random.default_rng(seed)
    prompts, outputs = lengths.sample(rng, requests)
    if replica.phase == "prefill":  # the same requests (the same draws), each ending with its first token
        outputs = np.ones_like(outputs)
    mean_prompt, mean_output = lengths.mean()
    grid = iteration_grid(replica, mean_prompt + mean_output / 2)
    too_long = prompts + outputs > grid.kv_capacity
    if too_long.all():
        return empty_result(grid.kv_capacity)
    arrivals = arrivals_for(load, lengths, requests, rng)
    hit = 1.0 if replica.phase == "decode" else replica.prefix_hit  # a decode replica receives the prompt's cache
    ledger = RequestLedger(prompts.tolist(), outputs.tolist(), hit)
    for r in np.flatnonzero(too_long).tolist():  # can never be held: finished as failures
        ledger.refuse(r)
    scheduler = Scheduler(ledger, KvCache(grid.kv_capacity, replica.reserve_kv), replica.max_batch, replica.token_budget)
    totals = _run(scheduler, arrivals, grid, replica.sequence_overhead, max_iterations, replica.mixed_batches)
    first, done = ledger.first, ledger.done
    if replica.request_latency:  # the API server's share: every first token (and so every end) reaches the client later
        first, done = [t + replica.request_latency for t in first], [t + replica.request_latency for t in done]
    return summarize(arrivals.times, first, done, prompts, outputs, totals, warmup)


def _run(scheduler: Scheduler, arrivals: Arrivals, grid: IterationGrid, per_sequence: float,
         max_steps: int, mixed: bool = True) -> RunTotals:
    """Run iterations until every request ended, the work bound (``max_steps`` steps of the loop: an iteration, a
    decode-only stretch, an idle gap) or an idle end; the invariants are checked every iteration (the cache) and at
    the end (conservation)."""
    ledger, kv = scheduler.ledger, scheduler.kv
    interp = grid.interpolator()
    cell = float(grid.kv_tokens[1])
    requests = len(ledger.done)
    # the steps of an iteration, bound once
    due, enqueue, preempt_to_fit, schedule = arrivals.due, scheduler.enqueue, scheduler.preempt_to_fit, scheduler.schedule
    decode_only, end_answers, first_tokens = scheduler.decode_only, scheduler.end_answers, scheduler.first_tokens
    on_finished = arrivals.on_finished
    now = busy = 0.0
    it = loops = 0
    while ledger.finished < requests and loops < max_steps:
        loops += 1
        if loops & 1023 == 0:
            check_deadline()
        # (each step is skipped when it has nothing to do: the loop runs up to MAX_ITERATIONS times, whatever the
        # simulated iterations; a light load's gaps and lone answers are single steps)
        arrived = due(now)
        if arrived:
            enqueue(arrived)
        if kv.overfull(scheduler.decoding):
            preempt_to_fit(it)  # the running answers grow by one token each: the youngest give way
        stretch = _decode_stretch(scheduler, arrivals, interp, cell, per_sequence, it, now) if decode_only() else None
        if stretch is not None:  # only decoding, nothing waiting: the iterations up to the next event at once
            steps, span = stretch
            now += span
            busy += span
            kv.grow(steps * scheduler.decoding)
            it += steps
            continue
        chunked, completed = schedule()
        tokens = scheduler.decoding + chunked
        if tokens == 0:  # idle: jump to the next arrival
            upcoming = arrivals.next_time()
            if upcoming == math.inf:
                break
            now = max(now, upcoming)
            continue
        running = scheduler.decoding + len(scheduler.prefilling)  # requests in the batch
        dt, to_first = batch_seconds(interp, chunked, scheduler.decoding, kv.used, running, per_sequence, mixed)
        now += dt
        busy += dt
        kv.grow(scheduler.decoding)
        # answers ended (their cache freed), then prompts done (their first token now); each end recorded once
        ended = end_answers(it)
        if completed:
            ended += first_tokens(completed, now - dt + to_first, it)
        for r in ended:
            kv.release(ledger.whole(r))
            ledger.finish(r, now)
            on_finished(now)  # a closed-loop user sends the next
        kv.check()
        it += 1
    scheduler.check_conserved(it)
    return RunTotals(finished=ledger.finished, preemptions=scheduler.preemptions, busy_seconds=busy,
                     simulated_seconds=now, iterations=it, kv_capacity=kv.capacity)


def _decode_stretch(scheduler: Scheduler, arrivals: Arrivals, interp: Interpolator, cell: float, per_sequence: float,
                    it: int, now: float) -> tuple[int, float] | None:
    """Iterations and seconds of a decode-only stretch of two or more iterations up to the next end, arrival, grid
    cell or full cache (within one cell an iteration's time grows linearly with the KV tokens read); None when the
    stretch would be shorter."""
    decoding, kv = scheduler.decoding, scheduler.kv
    most = min(scheduler.iterations_to_next_end(it), kv.decode_steps_left(decoding),
               steps_within_cell(kv.used, decoding, cell))
    if most < 2:
        return None
    steps, span = decode_stretch(interp, decoding, kv.used, per_sequence, most, arrivals.next_time() - now)
    return (steps, span) if steps >= 2 else None
