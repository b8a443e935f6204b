"""Serving on a device count that does not split the model's heads: data-parallel replicas of a tensor-parallel size
that does (:func:`sizer.passes.arithmetic.tensor_replicas`).

vLLM and TensorRT-LLM refuse a tensor-parallel size that does not divide the attention heads; a team with 8 GPUs and
a model of 40 heads runs 4 replicas of tensor parallel 2 (vLLM ``--tensor-parallel-size 2 --data-parallel-size 4``,
or 4 servers behind a load balancer). The batch asked is spread over the replicas as a load balancer spreads it;
each replica is answered by the one-replica estimate, and this module puts their answers together: per-sequence
figures (time to first token, per-user speed, memory per device, fit) are the busiest replica's, figures over all
sequences (total and prompt tokens/s, the largest batch, cost and energy per token) count every replica and device.
"""
from __future__ import annotations

from typing import Any

from sizer.results import Assumption, RangeOut
from sizer.schemas.serving import InferenceResult
from sizer.serving.under_load import cost_out, usd_per_million

SOURCE = ("vLLM docs, 'Parallelism and Scaling' (tensor_parallel_size, data_parallel_size); vLLM's check that the "
          "attention heads divide by the tensor-parallel size (ModelConfig.verify_with_parallel_config)")


def replica_batches(batch: int, replicas: int) -> dict[int, int]:
    """The sequences each replica carries, as a load balancer spreads ``batch`` evenly: sequences per replica to
    the replicas carrying that many (idle replicas, where there are fewer sequences than replicas, left out).

    Parameters
    ----------
    batch : int
        Concurrent sequences over all replicas [1].
    replicas : int
        Replicas [1].

    Returns
    -------
    dict of int to int
        Sequences per replica [1] to replicas [1], the busiest first.

    Examples
    --------
    >>> replica_batches(8, 4), replica_batches(6, 4), replica_batches(1, 4)
    ({2: 4}, {2: 2, 1: 2}, {1: 1})
    """
    even, extra = divmod(batch, replicas)
    shares = {even + 1: extra} if extra else {}
    if even:
        shares[even] = replicas - extra
    return shares


def _summed(ranges: list[tuple[RangeOut, int]]) -> RangeOut:
    """Ranges of tokens/s added over replicas (each weighted by the replicas running it)."""
    return RangeOut.model_construct(low=sum(r.low * n for r, n in ranges), expected=sum(r.expected * n for r, n in ranges),
                                    high=sum(r.high * n for r, n in ranges), unit=ranges[0][0].unit)


def replicas_note(model: str, heads: int, kv_heads: int, count: int, replicas: int, tp: int, shares: dict[int, int],
                  fitting: str, node: int | None = None) -> Assumption:
    """The assumption saying the layout: ``count`` devices as ``replicas`` replicas of tensor parallel ``tp``.

    Parameters
    ----------
    model : str
        The model's name.
    heads, kv_heads : int
        Its attention and key/value heads [1].
    count : int
        Devices asked [1].
    replicas, tp : int
        Replicas and devices per replica [1] (:func:`sizer.passes.arithmetic.tensor_replicas`).
    shares : dict of int to int
        Sequences per replica [1] to replicas carrying that many [1] (:func:`replica_batches`).
    fitting : str
        Tensor-parallel sizes up to ``count`` that split the heads, as words ('1, 2 or 5').
    node : int, optional
        Devices in one scale-up domain, where it bounds ``tp`` (a larger size that splits the heads crosses nodes) [1].

    Returns
    -------
    Assumption
        Named ``replicas``.
    """
    busy = sum(shares.values())
    spread = ", ".join(f"{n} carrying {b}" for b, n in shares.items())
    carried = (f"each replica serves 1/{replicas} of the sequences" if len(shares) == 1 and busy == replicas else
               f"the sequences spread as a load balancer spreads them ({spread}; {replicas - busy} idle)" if busy < replicas
               else f"the sequences spread as a load balancer spreads them ({spread})")
    return Assumption(name="replicas", value=f"{count} devices as {replicas} replicas of tensor parallel {tp}: {model}'s "
                      f"{heads} heads and {kv_heads} key/value heads split over {fitting} ranks, "
                      f"not {count}{_within(node)}; {carried}. Time to first token, per-sequence speed, memory and fit are the busiest "
                      "replica's; total and prompt tokens/s, the largest batch, cost and energy count every replica",
                      source=SOURCE)


def _within(node: int | None) -> str:
    """Words for a tensor-parallel size kept inside one scale-up domain of ``node`` devices ('' where not bounded)."""
    return "" if node is None else f", and tensor parallel kept within a node of {node} (its all-reduces on the fabric)"


def replicated(answers: dict[int, InferenceResult], shares: dict[int, int], count: int, batch: int,
               price: tuple[float | None, Any], tdp: float | None, notes: dict[str, Assumption]) -> InferenceResult:
    """One answer for every replica from the one-replica answers at each batch a replica carries.

    Parameters
    ----------
    answers : dict of int to InferenceResult
        Sequences per replica [1] to the one-replica answer at that batch (its ``count`` the tensor-parallel size).
    shares : dict of int to int
        Sequences per replica [1] to replicas carrying that many [1] (:func:`replica_batches`), the busiest first.
    count : int
        Devices over all replicas [1].
    batch : int
        Concurrent sequences over all replicas [1].
    price : tuple of (float or None, str or None)
        USD per device-hour of an offer that runs ``count`` devices [USD/hour] and its basis (``rent`` or ``buy``).
    tdp : float or None
        One device's power [W] (None: unknown).
    notes : dict of str to Assumption
        Assumptions replacing the busiest answer's of the same name (the price and the energy of ``count``
        devices), and ``replicas``, put after the model's.

    Returns
    -------
    InferenceResult
        The busiest replica's answer with the figures over all sequences counted over every replica.
    """
    busiest = answers[next(iter(shares))]
    replicas = count // busiest.count
    total = _summed([(answers[b].total_tokens_per_s, n) for b, n in shares.items()])
    prompt = _summed([(answers[b].prefill_tokens_per_s, n) for b, n in shares.items()])
    hourly, basis = price
    # a cost per token is inverse to the total speed: its range is the speed's range turned over
    within = {"low": total.low / total.expected, "high": total.high / total.expected} if total.expected > 0 else None
    per_million = usd_per_million(hourly, count, total.expected) if busiest.fits else None
    cost = cost_out(per_million, basis, within) if per_million is not None and basis and within else None
    energy = (RangeOut.model_construct(low=tdp * count / total.high, expected=tdp * count / total.expected,
                                       high=tdp * count / total.low, unit="J")
              if tdp is not None and busiest.energy_per_token is not None and total.low > 0 else None)
    assumptions = [notes.get(a.name, a) for a in busiest.assumptions]
    at = next((i + 1 for i, a in enumerate(assumptions) if a.name == "model"), 0)
    assumptions.insert(at, notes["replicas"])
    return busiest.model_copy(update={
        "count": count, "batch": batch, "total_tokens_per_s": total, "prefill_tokens_per_s": prompt,
        "max_batch": busiest.max_batch * replicas,
        "compute_bound_batch": None if busiest.compute_bound_batch is None else busiest.compute_bound_batch * replicas,
        "cost_per_million_tokens": cost, "energy_per_token": energy, "assumptions": assumptions})
