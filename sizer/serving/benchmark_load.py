"""Load as serving benchmarks apply it (issue 38): a finite run of N prompts on the deployment as given.

vLLM's ``benchmark_serving.py`` (``vllm bench serve``) sends ``--num-prompts`` requests (default 1000) at a Poisson
``--request-rate`` (inf: all at t = 0, a burst), optionally capped at ``--max-concurrency``, and measures every one
of them. A rate above what the deployment sustains then builds a queue over those prompts: time to first token
grows with it, the output throughput is capped at the deployment's capacity (not the rate times the output
length), and the answer says the deployment is saturated and by how much (rate / capacity). Without
``prompts`` sizer answers the steady state instead, on as many replicas as the load needs
(:func:`sizer.serving.capacity.serve_load`).
"""
from __future__ import annotations

import math

from sizer.results import Assumption
from sizer.serving.capacity import LoadAnswer, Slo, max_rate, simulated_requests
from sizer.simulator.simulate import Replica, simulate
from sizer.simulator.traffic import Lengths, Load

# vllm-project/vllm benchmarks/benchmark_serving.py: --num-prompts default 1000
DEFAULT_PROMPTS = 1000


def serve_benchmark(replica: Replica, load: Load, lengths: Lengths, slo: Slo, prompts: int,
                    replicas: int | None = None, seed: int = 0) -> LoadAnswer:
    """The benchmark's run: ``prompts`` requests under ``load`` on ``replicas`` replicas (default one), every one
    measured (no warm-up left out), and the replicas' capacity to state how far the load is above it.

    Parameters
    ----------
    replica : Replica
        One replica.
    load : Load
        The total Poisson rate [1/s], or users [1] (a fixed concurrency; a burst is as many users as prompts).
    lengths : Lengths
        Request lengths [tokens].
    slo : Slo
        Limits [s] at a percentile [%]: whether the run meets them.
    prompts : int
        Requests the benchmark sends [1].
    replicas : int or None
        Replicas the load is spread over [1] (None: one; a benchmark runs against the deployment it is given).
    seed : int
        Of the random lengths and arrivals [1].

    Returns
    -------
    LoadAnswer
        The run of one replica at its share, its capacity [1/s] (the largest rate within the SLOs, or the
        saturated rate without SLOs), whether the SLOs are met, and the utilisation: the rate over the
        saturated capacity of all replicas (above 1: saturated).
    """
    count = replicas or 1
    cap, full = max_rate(replica, lengths, slo, simulated_requests(slo.percentile), seed)
    share = (Load(rate=load.rate / count) if load.rate is not None else
             Load(users=max(1, math.ceil((load.users or 1) / count)), think_time=load.think_time, burst=load.burst))
    run = simulate(replica, share, lengths, max(1, math.ceil(prompts / count)), seed, warmup=0.0)
    met = slo.met(run) if slo.any else run.complete
    saturated_rate = full.steady_request_rate
    util = (load.rate / (count * saturated_rate) if load.rate is not None and saturated_rate > 0 else
            run.request_rate / saturated_rate if saturated_rate > 0 else math.inf)
    return LoadAnswer(run, count, cap, None, met, util, full.steady_output_tokens_per_s)


def benchmark_notes(load: Load, answer: LoadAnswer, prompts: int) -> list[Assumption]:
    """What a finite benchmark's answer assumed, and, where the rate is above capacity, that it is saturated.

    Parameters
    ----------
    load : Load
        The total load.
    answer : LoadAnswer
        :func:`serve_benchmark`'s answer.
    prompts : int
        Requests the benchmark sends [1].

    Returns
    -------
    list of Assumption
        The benchmark's length, and the saturation where the rate exceeds the capacity.
    """
    replicas = answer.replicas or 1
    how = ("all at t = 0 (a burst)" if load.burst else f"at {load.rate:.4g} requests/s (Poisson)" if load.rate is not None
           else f"by {load.users} users at a time")
    notes = [Assumption(name="benchmark", value=f"{prompts} prompts sent {how} to {replicas} replica(s), every one "
                        "measured (no warm-up left out), as vLLM's benchmark_serving.py does (--num-prompts, default "
                        f"{DEFAULT_PROMPTS})", source="vllm-project/vllm benchmarks/benchmark_serving.py")]
    if load.rate is not None and answer.utilisation > 1.0 and math.isfinite(answer.utilisation):
        run, capacity_rate = answer.run, load.rate / answer.utilisation  # all replicas' saturated rate [1/s]
        notes.append(Assumption(
            name="saturated",
            value=(f"{load.rate:.4g} requests/s is {answer.utilisation:.2f} x the capacity of {replicas} replica(s) "
                   f"({capacity_rate:.4g} requests/s): a queue builds over the {prompts} prompts, time to first token "
                   f"grows with it (p50 {run.percentile('ttft', 50):.3g} s, p99 {run.percentile('ttft', 99):.3g} s), "
                   f"and the output is capped near the capacity ({run.output_tokens_per_s * replicas:.4g} tokens/s "
                   "over the run), not the rate times the output length; a longer benchmark queues longer"),
            source="simulation"))
    return notes


def scale_out_note(load: Load, answer: LoadAnswer, slo_given: bool) -> Assumption | None:
    """Where the steady-state answer spread a rate over several replicas because one would be saturated, that one
    replica would be, and by how much (the same question asked with ``prompts`` answers that replica's queue).

    Parameters
    ----------
    load : Load
        The total load.
    answer : LoadAnswer
        :func:`sizer.serving.capacity.serve_load`'s answer (replicas searched, not given).
    slo_given : bool
        Whether the capacity is the largest rate within SLOs (else the saturated throughput).

    Returns
    -------
    Assumption or None
        ``one replica``: the rate over one replica's capacity, where above 1; None otherwise.

    >>> from sizer.simulator.metrics import empty_result
    >>> note = scale_out_note(Load(rate=8.0), LoadAnswer(empty_result(0), 2, 4.9, None, True, 0.82, 0.0), False)
    >>> note.value[:62]
    '8 requests/s is 1.63 x the capacity of one replica (4.9 reques'
    """
    per_replica = answer.max_request_rate
    if load.rate is None or per_replica <= 0 or load.rate <= per_replica or not answer.replicas:
        return None
    what = "within the SLOs" if slo_given else "saturated"
    return Assumption(
        name="one replica",
        value=(f"{load.rate:.4g} requests/s is {load.rate / per_replica:.2f} x the capacity of one replica "
               f"({per_replica:.4g} requests/s, {what}): one replica is saturated, its queue grows without bound, so "
               f"the load is spread over {answer.replicas} replicas; --prompts N (HTTP and Python: prompts) answers a "
               "benchmark of N prompts on the replicas given, its queue and time to first token"),
        source="simulation")
