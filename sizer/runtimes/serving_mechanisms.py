"""What differs between serving engines' generations (issue 38): scheduling policy and CPU costs by runtime and version.

A serving runtime's profile (:mod:`sizer.runtimes.serving_runtimes`) describes one version. Its generations differ in
ways measurements from different sources show: vLLM's V0 engine (before 0.8) prefills without chunking below 32K of
context, so prompts run in iterations of their own while the answers wait, and its Python scheduler costs more per
running request than V1's; V1 (0.8 on) chunks every prefill and takes larger defaults on large GPUs; SGLang keeps
prefill batches apart from decode batches and admits as many requests as its pools hold. Each generation in
``serving_mechanisms.yaml`` has a ``policy`` (read in the engine's source, recalled: ``verified: false``) and a
``fitted`` block: the CPU time per running request and iteration, the latency a request spends outside the engine
(API server in, first token out) and whether the policy is on, chosen leave-one-source-out on
``../shared/data/serving-tails.csv`` by ``benchmarks/serving_by_source.py`` (figures in ``benchmarks/ACCURACY.md``).

>>> generation_name("vllm", "0.7.3"), generation_name("vllm", "v0.11.0"), generation_name("sglang", None)
('vllm-v0', 'vllm-v1', 'sglang')
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sizer.datafile import load_yaml
from sizer.memo import registered_cache

MECHANISMS_FILE = Path(__file__).with_name("serving_mechanisms.yaml")


@dataclass(frozen=True)
class Generation:
    """One engine generation: its versions, scheduling policy and fitted costs.

    Parameters
    ----------
    name : str
        ``vllm-v0``, ``vllm-v1``, ``sglang``, ``tensorrt-llm``.
    runtime : str
        The serving runtime's name.
    versions : tuple of (tuple of int or None)
        First version in, first version out (None: open).
    policy : dict
        The scheduling facts (see the YAML file's header).
    sequence_overhead : float
        CPU time per running request and iteration [s] (fitted).
    request_latency : float
        Time a request spends outside the engine, in and out [s] (fitted).
    policy_on : bool
        Whether the fit kept the policy.
    fitted_on : str
        The rows the fit chose on.
    """

    name: str
    runtime: str
    versions: tuple[tuple[int, ...] | None, tuple[int, ...] | None]
    policy: dict[str, Any]
    sequence_overhead: float
    request_latency: float
    policy_on: bool
    fitted_on: str


def _version(text: str | None) -> tuple[int, ...] | None:
    m = re.match(r"\s*v?(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(x) for x in m.groups() if x is not None) if m else None


@registered_cache()
def generations() -> tuple[Generation, ...]:
    """Every generation of ``serving_mechanisms.yaml``, in file order.

    Returns
    -------
    tuple of Generation
        The generations.
    """
    data = load_yaml(MECHANISMS_FILE, "serving_mechanisms")["generations"]
    out = []
    for name, g in data.items():
        lo, hi = g["versions"]
        fitted = g["fitted"]
        out.append(Generation(name, g["runtime"], (_version(lo), _version(hi)), dict(g["policy"]),
                              float(fitted["sequence_overhead_s"]), float(fitted["request_latency_s"]),
                              bool(fitted["policy"]), str(fitted["fitted_on"])))
    return tuple(out)


def generation_name(runtime: str, version: str | None) -> str:
    """The generation of ``runtime`` at ``version`` (None or unreadable: the newest).

    Parameters
    ----------
    runtime : str
        A serving runtime's name (``vllm``, ``sglang``, ``tensorrt-llm``).
    version : str or None
        Its version as a source states it (``0.7.3``, ``v0.11.0``, ``0.20.1+cu130`` ...).

    Returns
    -------
    str
        The generation's name; the runtime's own name when the file has none for it.
    """
    v = _version(version)
    mine = [g for g in generations() if g.runtime == runtime]
    if not mine:
        return runtime
    for g in mine:
        lo, hi = g.versions
        if v is not None and (lo is None or v >= lo) and (hi is None or v < hi):
            return g.name
    return mine[-1].name  # no version: the newest


def generation(name: str) -> Generation | None:
    """The generation named ``name``, or None.

    Parameters
    ----------
    name : str
        A generation's name.

    Returns
    -------
    Generation or None
        It, when the file has it.
    """
    return next((g for g in generations() if g.name == name), None)


def policy_settings(name: str, *, memory_gb: float, device: str, max_model_len: float | None) -> dict[str, Any]:
    """Replica fields the generation's scheduling policy sets for a deployment.

    Parameters
    ----------
    name : str
        The generation.
    memory_gb : float
        Memory of one device [GB].
    device : str
        The device's catalog id (the large-GPU defaults leave A100s out by name).
    max_model_len : float or None
        The served context [tokens] (None: long, above any threshold).

    Returns
    -------
    dict
        ``mixed_batches``, ``token_budget``, ``max_batch`` where the policy sets them.

    >>> policy_settings("vllm-v0", memory_gb=80, device="a800", max_model_len=4096)
    {'mixed_batches': False, 'token_budget': 4096}
    >>> policy_settings("vllm-v1", memory_gb=141, device="h200", max_model_len=None)
    {'max_batch': 1024, 'token_budget': 8192}
    """
    g = generation(name)
    if g is None:
        return {}
    p, out = g.policy, dict[str, Any]()
    above = p.get("chunked_above_context")
    if above is not None:
        if max_model_len is not None and max_model_len <= above:
            out["mixed_batches"] = False
            out["token_budget"] = int(max(max_model_len, p.get("unchunked_min_budget", 0)))
    elif p.get("mixed_batches") is False:
        out["mixed_batches"] = False
    if "max_running" in p:
        out["max_batch"] = int(p["max_running"])
    large = p.get("large_gpu")
    if large and memory_gb >= large["min_memory_gb"] and not any(x in device.lower() for x in large["except"]):
        out["max_batch"], out["token_budget"] = int(large["max_running"]), int(large["token_budget"])
    return out


def fitted_settings(name: str, *, memory_gb: float, device: str, max_model_len: float | None) -> dict[str, Any]:
    """Replica fields of the generation as fitted: its CPU time, request latency and (where kept) its policy.

    Parameters
    ----------
    name : str
        The generation.
    memory_gb : float
        Memory of one device [GB].
    device : str
        The device's catalog id.
    max_model_len : float or None
        The served context [tokens].

    Returns
    -------
    dict
        Replica fields (``sequence_overhead``, ``request_latency``, and the policy's where kept).
    """
    g = generation(name)
    if g is None:
        return {}
    out: dict[str, Any] = {"sequence_overhead": g.sequence_overhead, "request_latency": g.request_latency}
    if g.policy_on:
        out.update(policy_settings(name, memory_gb=memory_gb, device=device, max_model_len=max_model_len))
    return out
