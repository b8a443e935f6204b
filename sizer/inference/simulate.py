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

References
----------
docs/references.md [kwon2023vllm], [agrawal2024sarathi], [agrawal2024vidur].
"""
from __future__ import annotations

import bisect
import heapq
import math
from collections import deque
import dataclasses
from dataclasses import dataclass

import numpy as np

from sizer.deadline import check_deadline
from sizer.errors import SizerError
from sizer.engine.constants import SERVING_MATRIX_EFFICIENCY, serving_efficiencies
from sizer.engine.devices import DeviceTable
from sizer.engine.roofline import INFERENCE, Configs, Shape, step_seconds
from sizer.inference.formats import WeightFormat
from sizer.inference.serving import (LOGIT_BYTES, decode_layers, fold, kv_cache_bytes_per_token, prefill_profile,
                                     serving_table, stored_weight_bytes, touched_experts)
from sizer.inference.traffic import Lengths, Load, poisson_arrivals
from sizer.memo import registered_cache
from sizer.runtimes.serving_runtimes import TENSORRT_LLM, VLLM
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
MAX_ITERATIONS = 400_000
# Scheduling (batch assembly, sampling, detokenisation) per iteration beyond the engine's per-pass
# overhead: fitted by `benchmarks/serving_accuracy.py --fit` on TensorRT-LLM's perf-overview offline rows.
SCHEDULER_OVERHEAD = 0.0
# The fraction of the matrix peak batched iterations reach is the serving engine's own
# (SERVING_MATRIX_EFFICIENCY, fitted offline on other sources): `benchmarks/serving_accuracy.py --fit`
# searched 0.55-0.70 on TensorRT-LLM's perf-overview rows and landed at 0.60, so no second constant.
BATCHING_MATRIX_EFFICIENCY = SERVING_MATRIX_EFFICIENCY


def batching_table(devices: tuple, weights: WeightFormat, matrix: float | None = None) -> DeviceTable:
    """Device rates for continuous batching: the serving table (``matrix``: another matrix
    efficiency, for the fit's search only)."""
    if matrix is None or matrix == SERVING_MATRIX_EFFICIENCY:
        return serving_table(tuple(devices), weights)
    return serving_table(tuple(devices), weights, tuple(serving_efficiencies(d.kind, matrix=matrix) for d in devices))
WARMUP_SHARE = 0.1  # of the requests, left out of percentiles and throughput (the empty start)


class SimulationInvariantError(SizerError):
    """The simulation broke one of its own invariants (KV tokens conserved and within the cache, each
    request finished once, time moving forward): the answer is refused rather than given wrong."""

    def __init__(self, what: str):
        super().__init__(f"the serving simulation broke an invariant ({what}); no answer is given rather than a "
                         "wrong one: please report the request that caused it")


def _broken(what: str):
    raise SimulationInvariantError(what)


@dataclass(frozen=True, eq=False)
class Replica:
    """One replica: ``count`` devices of table row ``device``, split by ``split`` ("tensor" or "layer")."""

    arch: Architecture
    weights: WeightFormat
    kv_bytes: float  # per value
    table: DeviceTable
    device: int
    count: int
    split: str = "tensor"
    max_batch: int = DEFAULT_MAX_BATCH
    token_budget: int = DEFAULT_TOKEN_BUDGET
    prefix_hit: float = 0.0  # share of prompt tokens found in the prefix cache
    iteration_overhead: float = None  # s of scheduling per iteration (default SCHEDULER_OVERHEAD)
    sequence_overhead: float = 0.0  # s of the scheduler's CPU per running request per iteration (the runtime's, fitted)
    reserve_kv: bool = True  # admit only when prompt + answer fit (TensorRT-LLM GUARANTEED_NO_EVICT); False:
    # admit when the prompt fits and preempt the youngest when the answers outgrow the cache (vLLM)
    memory_share: float = VLLM_MEMORY_SHARE  # of the device memory the runtime uses (TensorRT-LLM: 1)
    kv_free_share: float = 1.0  # of the memory left after weights and activations the cache takes (TensorRT-LLM: 0.9)
    # what the replica runs of each request (disaggregated serving): "both"; "prefill" (the prompt and the
    # first token, then the request leaves); "decode" (the prompt's KV cache arrives whole, the rest of the answer)
    phase: str = "both"

    def __post_init__(self):
        if self.iteration_overhead is None:
            object.__setattr__(self, "iteration_overhead", SCHEDULER_OVERHEAD)


def runtime_replica(runtime, arch: Architecture, weights: WeightFormat, kv_bytes: float, table: DeviceTable, device: int,
                    count: int, split: str = "tensor", *, max_running: int | None = None, token_budget: int | None = None,
                    prefix_hit: float = 0.0) -> Replica:
    """One replica as ``runtime`` (a serving :class:`~sizer.runtimes.Runtime`) runs it: its scheduler defaults
    (``max_running`` and ``token_budget`` override them), memory shares, admission policy and fitted CPU time."""
    p = runtime.profile
    return Replica(arch, weights, kv_bytes, table, device, count, split, max_running or p.max_running,
                   token_budget or p.token_budget, prefix_hit, reserve_kv=p.reserve_kv, memory_share=p.memory_share,
                   kv_free_share=p.kv_free_share, sequence_overhead=p.sequence_overhead)


@dataclass(frozen=True)
class IterationGrid:
    """Seconds of one iteration over (tokens, KV tokens), and the KV cache's capacity."""

    tokens: np.ndarray  # axis 0: prefill plus decode tokens in the iteration
    kv_tokens: np.ndarray  # axis 1: KV tokens read (uniform from 0)
    seconds: np.ndarray  # [tokens, kv_tokens]
    kv_capacity: int  # tokens the paged cache holds on the replica
    weights: float  # B per device
    fits: bool

    def interpolator(self):
        """A function (n tokens, k KV tokens) -> seconds, bilinear in the grid, on plain lists (the
        simulation calls it once per iteration)."""
        t, s = self.tokens.tolist(), self.seconds.tolist()
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
        """Bilinear interpolation of the grid at ``n`` tokens and ``k`` KV tokens [s]."""
        return self.interpolator()(n, k)


def device_kv_bytes_per_token(replica: Replica, context: float) -> float:
    """KV-cache bytes one token keeps on each device of ``replica`` at ``context`` tokens [B]: heads split
    over tensor ranks, or layers over a layer split; a sliding-window block keeps its window only."""
    if replica.split == "layer":
        return kv_cache_bytes_per_token(replica.arch, replica.kv_bytes, 1, context) / replica.count
    return kv_cache_bytes_per_token(replica.arch, replica.kv_bytes, replica.count, context)


def _table_key(table: DeviceTable) -> tuple:
    """A value fingerprint of a device table: its devices' content keys and every array's bytes."""
    parts = []
    for field in dataclasses.fields(table):
        value = getattr(table, field.name)
        if isinstance(value, np.ndarray):
            parts.append(value.tobytes())
        elif field.name == "devices":
            parts.append(tuple(d.key for d in value))
        else:
            parts.append(repr(value))
    return tuple(parts)


def _grid_key(replica: Replica, mean_context: float) -> tuple:
    return (replica.arch, _table_key(replica.table), replica.weights, replica.kv_bytes, replica.device, replica.count,
            replica.split, replica.max_batch, replica.token_budget, replica.iteration_overhead, replica.memory_share,
            replica.kv_free_share, round(mean_context))


@registered_cache()
def _decode_layers(arch: Architecture, context: float, kv_layer_token: float, idle: float):
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
    tp = replica.count if replica.split == "tensor" else 1  # a layer split runs the layers in turn
    stored = stored_weight_bytes(arch, replica.weights)
    kv_layer_token = kv_cache_bytes_per_token(arch, replica.kv_bytes) / arch.layers
    idle = 1.0 - arch.experts_per_token / arch.experts if arch.moe else 0.0
    decode = _decode_layers(arch, float(max(round(mean_context), 1)), kv_layer_token, idle)

    # memory on each device: weights, the activations of one chunk, the runtime's reserve; its share of the rest holds KV
    weights = arch.params_total() * stored / replica.count
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
    if arch.moe:
        touched = touched_experts(arch.experts, arch.experts_per_token, n)
        share = (touched - arch.experts_per_token) / (arch.experts - arch.experts_per_token)
        extra = extra + share[:, None] * decode.idle_expert_params[None, :] * stored / n[:, None]
    parts = step_seconds(decode.table, table, configs, optimizer_state_bytes=0.0, kind=INFERENCE,
                         weight_bytes=np.full(len(n), stored), extra_bytes=extra,
                         shape=Shape(blocks=arch.layers, hidden=arch.hidden, tokens_per_sample=1))
    seconds = (parts.step + table.step_overhead[d] + replica.iteration_overhead).reshape(len(tokens), len(kv_axis))
    grid = IterationGrid(tokens=tokens, kv_tokens=kv_axis, seconds=seconds, kv_capacity=capacity,
                         weights=float(weights), fits=capacity >= KV_BLOCK_TOKENS)
    return grid


@dataclass(frozen=True)
class SimulationResult:
    """Per measured request (seconds) and the totals of the measured window."""

    ttft: np.ndarray
    tpot: np.ndarray  # requests of more than one output token
    e2e: np.ndarray
    output_tokens_per_s: float
    total_tokens_per_s: float  # prompt and output tokens
    request_rate: float  # completed requests per second
    preemptions: int
    busy: float  # share of the window with work running
    complete: bool  # every request finished within the work bound
    iterations: int
    simulated_seconds: float
    kv_capacity: int
    steady_output_tokens_per_s: float = 0.0  # over the middle 60 % of completions (no start, no drain)
    steady_request_rate: float = 0.0

    def percentile(self, name: str, q: float) -> float:
        values = getattr(self, name)
        if not self.complete or len(values) == 0:
            return float("inf")
        return float(np.percentile(values, q))


def simulate(replica: Replica, load: Load, lengths: Lengths, requests: int = 1000, seed: int = 0,
             max_iterations: int = MAX_ITERATIONS) -> SimulationResult:
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
        Of the random arrivals and lengths (the same seed: the same requests at every rate).

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
    cap, max_batch, budget = grid.kv_capacity, replica.max_batch, replica.token_budget
    too_long = prompts + outputs > cap
    if too_long.all():
        return _empty(grid)
    if load.rate is not None:
        arrivals = (lengths.trace[2][np.arange(requests) % len(lengths.trace[2])]
                    if lengths.trace is not None and lengths.trace[2] is not None and len(lengths.trace[2]) >= requests
                    else poisson_arrivals(load.rate, requests, rng)).tolist()
    else:
        arrivals = [0.0] * min(load.users, requests) + [np.inf] * (requests - min(load.users, requests))
    hit = 1.0 if replica.phase == "decode" else replica.prefix_hit  # a decode replica receives the prompt's cache
    prompt_l = prompts.tolist()
    output_l = outputs.tolist()
    todo = [max(1, int(round(p * (1 - hit)))) for p in prompt_l]  # prefill tokens still to compute
    kv_of = [0] * requests  # KV tokens held
    first = [np.nan] * requests
    done = [np.nan] * requests
    start_iter = [0] * requests  # iteration whose end gave the latest first token
    made = [0] * requests  # output tokens before the latest (re)prefill
    version = [0] * requests
    order = list(np.argsort(arrivals, kind="stable")) if load.rate is not None else list(range(requests))
    next_arrival = 0  # into order (open loop)
    closed = load.rate is None
    pending_users: list[tuple[float, int]] = []  # (arrival, request) of closed-loop users
    if closed:
        pending_users = [(0.0, r) for r in range(min(load.users, requests))]
    next_user_request = len(pending_users)  # the request a closed-loop user sends next
    waiting: deque[int] = deque()
    prefilling: list[int] = []  # admitted, prompt not yet done
    heap: list[tuple[int, int, int]] = []  # (finish iteration, request, version)
    running: list[int] = []  # decoding, oldest first (preemption takes the last alive)
    alive = [False] * requests
    decoding = 0
    kv_used = 0
    reserved = 0  # KV tokens promised to admitted requests (prompt + whole answer) under the reserving policy
    reserve = replica.reserve_kv
    now = 0.0
    it = 0
    finished = 0
    preemptions = 0
    busy_time = 0.0
    interp = grid.interpolator()
    per_sequence = replica.sequence_overhead
    for r in np.flatnonzero(too_long).tolist():  # can never be held: finished as failures
        done[r] = np.inf
        finished += 1

    step_of_k = float(grid.kv_tokens[1])
    loops = 0
    while finished < requests and it < max_iterations:
        loops += 1
        if loops & 1023 == 0:
            check_deadline()
        # arrivals up to now
        if closed:
            while pending_users and pending_users[0][0] <= now:
                _, r = heapq.heappop(pending_users)
                if not too_long[r]:
                    waiting.append(r)
        else:
            while next_arrival < requests and arrivals[order[next_arrival]] <= now:
                r = order[next_arrival]
                next_arrival += 1
                if not too_long[r]:
                    waiting.append(r)
        # the running answers grow by one token each: preempt the youngest while they would not fit
        while decoding and kv_used + decoding > cap:
            r = running.pop()
            if not alive[r]:
                continue
            alive[r] = False
            version[r] += 1
            decoding -= 1
            grown = it - 1 - start_iter[r]  # tokens decoded since its first, all iterations before this one
            kv_used -= kv_of[r] + grown
            reserved -= prompt_l[r] + output_l[r]
            made[r] += grown
            todo[r] = prompt_l[r] + made[r]
            kv_of[r] = 0
            waiting.appendleft(r)
            preemptions += 1
        # only decoding, nothing waiting: run the iterations up to the next finish, arrival or cache cell at once
        # (within one cell of the grid an iteration's time grows linearly with the KV tokens read)
        if decoding and not waiting and not prefilling:
            k = heap[0][0] - it if heap else 0
            k = min(k, (cap - kv_used) // decoding, int((int(kv_used / step_of_k) + 1) * step_of_k - kv_used) // decoding)
            upcoming = pending_users[0][0] if closed and pending_users else (
                arrivals[order[next_arrival]] if not closed and next_arrival < requests else np.inf)
            if k >= 2:
                t0 = interp(decoding, kv_used)
                d = interp(decoding, kv_used + decoding) - t0
                t0 += per_sequence * decoding
                if upcoming != np.inf:  # the fewest iterations after which the next arrival has come
                    gap = upcoming - now
                    a2, b1 = d / 2, t0 - d / 2
                    ka = (gap / b1 if abs(a2) < 1e-15 else (-b1 + math.sqrt(b1 * b1 + 4 * a2 * gap)) / (2 * a2))
                    k = min(k, max(int(math.ceil(ka)), 1))
                if k >= 2:
                    span = k * t0 + d * k * (k - 1) / 2
                    now += span
                    busy_time += span
                    kv_used += k * decoding
                    it += k
                    continue
        # chunked prefill within the token budget; admission needs the prompt's KV and a batch slot
        left = budget - decoding
        chunked = 0
        completed = []
        for r in prefilling:
            if left <= 0:
                break
            c = todo[r] if todo[r] < left else left
            todo[r] -= c
            left -= c
            chunked += c
            if todo[r] == 0:
                completed.append(r)
        while left > 0 and waiting and decoding + len(prefilling) < max_batch:
            r = waiting[0]
            need = prompt_l[r] + made[r]
            whole = prompt_l[r] + output_l[r]
            # (the running answers grow by one token each in this iteration too)
            if (reserved + whole > cap) if reserve else (kv_used + decoding + need + 1 > cap):
                break
            waiting.popleft()
            reserved += whole
            kv_used += need + 1  # the prompt and the slot of the token its prefill produces (vLLM allocates both)
            kv_of[r] = need + 1
            prefilling.append(r)
            c = todo[r] if todo[r] < left else left
            todo[r] -= c
            left -= c
            chunked += c
            if todo[r] == 0:
                completed.append(r)
        n = decoding + chunked
        if n == 0:  # idle: jump to the next arrival
            upcoming = pending_users[0][0] if closed and pending_users else (
                arrivals[order[next_arrival]] if not closed and next_arrival < requests else None)
            if upcoming is None or upcoming == np.inf:
                break
            now = max(now, upcoming)
            continue
        dt = interp(n, kv_used) + per_sequence * (decoding + len(prefilling))
        if not dt > 0.0 or dt == math.inf:
            _broken(f"an iteration of {n} tokens over {kv_used} KV tokens took {dt!r} s")
        now += dt
        busy_time += dt
        kv_used += decoding
        # finished answers (their cache freed here, their ends recorded once below)
        ended = []
        while heap and heap[0][0] <= it:
            _, r, v = heapq.heappop(heap)
            if v != version[r]:
                continue
            alive[r] = False
            decoding -= 1
            kv_used -= kv_of[r] + (it - start_iter[r])
            ended.append(r)
        # prompts done: their first token now
        for r in completed:
            prefilling.remove(r)
            if first[r] != first[r]:  # NaN: the first time
                first[r] = now
            made[r] += 1
            remaining = output_l[r] - made[r]
            if remaining <= 0:  # a one-token answer ends with its prefill
                kv_used -= kv_of[r]
                ended.append(r)
                continue
            start_iter[r] = it
            heapq.heappush(heap, (it + remaining, r, version[r]))
            running.append(r)
            alive[r] = True
            decoding += 1
        # every request that ended now: its reservation released; a closed-loop user sends the next
        for r in ended:
            reserved -= prompt_l[r] + output_l[r]
            if done[r] == done[r]:  # not NaN: it had already finished
                _broken(f"request {r} finished twice")
            done[r] = now
            finished += 1
            if closed and next_user_request < requests:
                heapq.heappush(pending_users, (now + load.think_time, next_user_request))
                arrivals[next_user_request] = now + load.think_time
                next_user_request += 1
        if not 0 <= kv_used <= cap or reserved < 0 or (reserve and reserved > cap):
            _broken(f"{kv_used} KV tokens held, {reserved} promised, of a cache of {cap}")
        it += 1
    _check_conserved(kv_used, reserved if reserve else 0, prefilling, running, alive, kv_of, start_iter, it,
                     prompt_l, output_l)

    arrival = np.asarray(arrivals, dtype=float)
    first_a, done_a = np.asarray(first, dtype=float), np.asarray(done, dtype=float)
    complete = finished >= requests and bool(np.all(np.isfinite(done_a)))
    measured = np.argsort(arrival, kind="stable")[int(requests * WARMUP_SHARE):]
    measured = measured[np.isfinite(done_a[measured])]
    ttft = first_a[measured] - arrival[measured]
    e2e = done_a[measured] - arrival[measured]
    long = outputs[measured] > 1
    tpot = (done_a[measured][long] - first_a[measured][long]) / (outputs[measured][long] - 1)
    if len(measured):
        window_start = float(np.min(arrival[measured]))
        window_end = float(np.max(done_a[measured]))
        span = max(window_end - window_start, 1e-9)
        out_rate = float(outputs[measured].sum() / span)
        tot_rate = float((outputs[measured] + prompts[measured]).sum() / span)
        req_rate = len(measured) / span
    else:
        out_rate = tot_rate = req_rate = 0.0
    # the steady part: completions between the 20th and 80th percentile of completion times
    ends = np.flatnonzero(np.isfinite(done_a))
    steady_out = steady_rate = 0.0
    if len(ends) >= 10:
        ends = ends[np.argsort(done_a[ends], kind="stable")]
        i0, i1 = int(len(ends) * 0.2), int(len(ends) * 0.8)
        span = float(done_a[ends[i1]] - done_a[ends[i0]])
        if span > 0:
            steady_out = float(outputs[ends[i0 + 1:i1 + 1]].sum() / span)
            steady_rate = (i1 - i0) / span
    return SimulationResult(ttft=ttft, tpot=tpot, e2e=e2e, output_tokens_per_s=out_rate, total_tokens_per_s=tot_rate,
                            request_rate=req_rate, preemptions=preemptions, busy=min(busy_time / max(now, 1e-9), 1.0),
                            complete=complete, iterations=it, simulated_seconds=now, kv_capacity=cap,
                            steady_output_tokens_per_s=steady_out, steady_request_rate=steady_rate)


def _check_conserved(kv_used: int, reserved: int, prefilling, running, alive, kv_of, start_iter, it: int,
                     prompt_l, output_l) -> None:
    """At the end of a run: the KV tokens the total says are held are those the requests in flight hold
    (admitted = held + freed), and the promises are those of the requests in flight."""
    held = sum(kv_of[r] for r in prefilling)
    promised = sum(prompt_l[r] + output_l[r] for r in prefilling)
    for r in set(running):
        if alive[r]:
            held += kv_of[r] + (it - 1 - start_iter[r])
            promised += prompt_l[r] + output_l[r]
    if held != kv_used:
        _broken(f"{kv_used} KV tokens counted held at the end, the requests in flight hold {held}")
    if reserved and reserved != promised:
        _broken(f"{reserved} KV tokens counted promised at the end, the requests in flight were promised {promised}")


def _empty(grid: IterationGrid) -> SimulationResult:
    nothing = np.zeros(0)
    return SimulationResult(ttft=nothing, tpot=nothing, e2e=nothing, output_tokens_per_s=0.0, total_tokens_per_s=0.0,
                            request_rate=0.0, preemptions=0, busy=0.0, complete=False, iterations=0,
                            simulated_seconds=0.0, kv_capacity=grid.kv_capacity)
