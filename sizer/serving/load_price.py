"""What a serving question under load costs, priced from its fields before anything is simulated.

A question with a rate or users runs continuous-batching simulations (:mod:`sizer.simulator.simulate`):
one saturated run, a capacity search (bisection over the rate, or doubling and bisection over the
users) when SLOs are given, and the run at the load's share. Each simulation's iterations are bounded
below by the tokens it must pass through the per-iteration token budget and by the answers it must
decode through the running-batch slots:

.. math:: I_{sim} = \\min\\Big(I_{max},\\ N \\big(\\frac{P (1 - h) + O}{B_{tok}} + \\frac{O}{\\min(B_{run}, B_{tok})}\\big)\\Big)

with N simulated requests, P and O the mean prompt and output lengths [tokens], h the prefix-cache hit
share, B_tok the token budget and B_run the most running requests. The price is the sum over the
simulations the question implies, in simulated iterations: computed from the request alone, in
microseconds, so that a service can refuse a question whose price is over its budget before any
work is done (:func:`refuse_over_budget`), naming the fields that lower the price.

>>> from sizer.serving.estimate import InferenceRequest
>>> light = InferenceRequest(model="llama-3.1-8b", device="H100 SXM", rate=10)
>>> serving_iterations(light) < 10_000
True
>>> heavy = InferenceRequest(model="deepseek-v3", device="H200", count=8, users=100000, slo_e2e="1 ms",
...                          max_running=4096, token_budget=64)
>>> serving_iterations(heavy) > 1e6
True
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sizer.errors import InputError, InputErrors
from sizer.serving.capacity import SATURATED_ROUNDS, SEARCH_STEPS, simulated_requests
from sizer.serving.load_search import CANDIDATES_PER_DEVICE, FULL_SEARCH_ROWS, REPLICA_TRIES
from sizer.serving.under_load import parse_load
from sizer.simulator.simulate import DEFAULT_MAX_BATCH, DEFAULT_TOKEN_BUDGET, MAX_ITERATIONS, MAX_REQUESTS

if TYPE_CHECKING:  # the request's class (its module is imported by those that import this one)
    from sizer.schemas.serving_requests import ServedModel


def simulation_iterations(requests: float, prompt: float, output: float, hit: float, token_budget: int,
                          max_running: int) -> float:
    """Iterations [1] one simulation of ``requests`` requests runs, at least (the module's equation);
    ``prompt`` and ``output`` are mean lengths [tokens], ``hit`` the prefix-cache share [1].

    Parameters
    ----------
    requests : float
        Requests simulated, :math:`N` [1] (taken between 10 and :data:`MAX_REQUESTS`).
    prompt : float
        Mean prompt length, :math:`P` [tokens].
    output : float
        Mean output length, :math:`O` [tokens].
    hit : float
        Share of prompt tokens from the prefix cache, :math:`h` [1].
    token_budget : int
        Tokens per iteration, :math:`B_{tok}` [tokens].
    max_running : int
        Running requests at most, :math:`B_{run}` [1].

    Returns
    -------
    float
        Iterations [1], at most :data:`MAX_ITERATIONS` (the simulation's own bound).
    """
    n = min(max(requests, 10), MAX_REQUESTS)
    per_request = (prompt * (1 - hit) + output) / token_budget + output / min(max_running, token_budget)
    return min(float(MAX_ITERATIONS), n * per_request)


def _simulated_requests(request: ServedModel) -> list[float]:
    """Requests [1] of each simulation one serving estimate under load runs (sizer.serving.capacity.serve_load)."""
    load, _, slo = parse_load(request)
    assert load is not None  # asked only with a rate or users
    running = request.max_running or DEFAULT_MAX_BATCH
    per_run = simulated_requests(slo.percentile)  # the one simulation-length rule (sizer.serving.capacity)
    runs: list[float] = [max(per_run, SATURATED_ROUNDS * (int(running * 1.25) + 1))]  # the saturated run
    if slo.any:  # the rate's bisection, after a lone-request run
        runs += [100] + [per_run] * SEARCH_STEPS
    if load.users is not None and slo.any and request.replicas is None:  # users doubled, then bisected
        probes = 2 * math.ceil(math.log2(4 * running)) + 1
        runs += [max(per_run, 3 * min(load.users, 4 * running))] * probes
    share = load.users if load.users is not None else 0
    runs.append(max(per_run, 3 * share))  # the run at the load's share (the whole load: the most it can be)
    return runs


def serving_iterations(request: ServedModel) -> float:
    """Simulated iterations [1] a serving question under load costs (0 without a rate or users).

    Parameters
    ----------
    request : ServedModel
        An :class:`~sizer.schemas.serving_requests.InferenceRequest` (or a recommendation's request): its load,
        lengths, SLOs, scheduler limits and prefix-cache share.

    Returns
    -------
    float
        The sum of the simulations' iterations [1], each by :func:`simulation_iterations`.
    """
    if getattr(request, "rate", None) is None and getattr(request, "users", None) is None:
        return 0.0
    _, lengths, _ = parse_load(request)
    prompt, output = lengths.mean()
    budget = request.token_budget or DEFAULT_TOKEN_BUDGET
    running = request.max_running or DEFAULT_MAX_BATCH
    return sum(simulation_iterations(n, prompt, output, request.prefix_cache_hit, budget, running)
               for n in _simulated_requests(request))


def recommend_serving_iterations(request: ServedModel, devices: int) -> float:
    """Simulated iterations [1] of ranking ``devices`` catalog devices for a load
    (:func:`sizer.serving.load_search.recommend_under_load`): per device its screened candidates,
    each tried at up to a few replica counts, then the capacity search of the leading rows.

    Parameters
    ----------
    request : ServedModel
        The recommendation's request: its load, lengths, SLOs and scheduler limits.
    devices : int
        Catalog devices ranked [1].

    Returns
    -------
    float
        Simulated iterations [1]; 0 without a rate or users.
    """
    if getattr(request, "rate", None) is None and getattr(request, "users", None) is None:
        return 0.0
    load, lengths, slo = parse_load(request)
    assert load is not None  # a rate or users was given
    prompt, output = lengths.mean()
    budget = request.token_budget or DEFAULT_TOKEN_BUDGET
    running = request.max_running or DEFAULT_MAX_BATCH
    per_run = simulated_requests(slo.percentile)  # the one simulation-length rule (sizer.serving.capacity)
    share = max(per_run, 3 * (load.users or 0))
    # per device its best candidates, each at a few replica counts (the search stops at the first that serves;
    # the best of each further devices-per-replica count is tried only where those miss)
    screened = devices * CANDIDATES_PER_DEVICE * REPLICA_TRIES
    leading = 2 * FULL_SEARCH_ROWS * (3 + SEARCH_STEPS)  # saturated, lone, bisection and final per row
    return (screened * simulation_iterations(share, prompt, output, request.prefix_cache_hit, budget, running)
            + leading * simulation_iterations(max(per_run, SATURATED_ROUNDS * running), prompt, output,
                                              request.prefix_cache_hit, budget, running))


def refuse_over_budget(request: ServedModel, iterations: float, budget: float) -> None:
    """Raise :class:`~sizer.errors.InputErrors` naming the fields that lower the price when
    ``iterations`` [1] is over ``budget`` [1]; nothing otherwise.

    Parameters
    ----------
    request : ServedModel
        The question priced (its fields are named in the errors).
    iterations : float
        Its price in simulated iterations [1] (:func:`serving_iterations`).
    budget : float
        The most simulated iterations a question may cost [1].
    """
    if iterations <= budget:
        return
    why = f"a question of at most {budget:,.0f} simulated iterations (this one prices at {iterations:,.0f})"
    errors: list[InputError] = []
    if getattr(request, "users", None) is not None:
        errors.append(InputError("users", request.users, f"fewer users: {why}"))
    if (request.token_budget or DEFAULT_TOKEN_BUDGET) < DEFAULT_TOKEN_BUDGET:
        errors.append(InputError("token_budget", request.token_budget, f"a larger token budget per iteration (vLLM's "
                                                                       f"default {DEFAULT_TOKEN_BUDGET}): {why}"))
    if (request.max_running or DEFAULT_MAX_BATCH) > DEFAULT_MAX_BATCH:
        errors.append(InputError("max_running", request.max_running, f"fewer running requests (vLLM's default "
                                                                     f"{DEFAULT_MAX_BATCH}): {why}"))
    slos = [name for name in ("slo_ttft", "slo_tpot", "slo_e2e") if getattr(request, name, None) is not None]
    for name in slos:
        errors.append(InputError(name, getattr(request, name), f"no latency limit, or give replicas (each limit "
                                                               f"starts a capacity search): {why}"))
    if getattr(request, "trace", None) is not None:
        errors.append(InputError("trace", "(rows)", f"a trace of shorter requests: {why}"))
    elif request.lengths is not None:
        errors.append(InputError("lengths", request.lengths.name, f"a distribution of shorter requests: {why}"))
    else:
        errors += [InputError(name, getattr(request, name), f"shorter requests: {why}")
                   for name in ("prompt_len", "output_len")]
    raise InputErrors(errors)
