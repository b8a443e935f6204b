"""Reading an answer's setup (:mod:`sizer.launch.setups`) from its request and result objects (``--emit``).

The values come from the result's typed fields and from the same core functions the answer was computed with
(the served format and architecture, the resolved job, the node model), never from the answer's printed text.
Kept out of :mod:`sizer.launch` (the setups' definitions and the emitters), which the request and result
modules import for their ``emit`` and ``launch`` fields, so that nothing imports itself back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sizer.choices import DeviceKind, KvCache, Method, Recompute, Split
from sizer.launch.setups import LocalSetup, ServingSetup, TrainingSetup, model_id

if TYPE_CHECKING:
    from sizer.asked import Asked
    from sizer.runtimes.runtime import Runtime
    from sizer.schemas.base import WorkloadRequest
    from sizer.schemas.plan import LayoutOption, PlanRequest
    from sizer.schemas.serving import InferenceResult
    from sizer.schemas.serving_requests import InferenceRequest
    from sizer.schemas.time_and_memory import Layout, MemoryRequest, MemoryResult, TimeRequest, TimeResult


def serving_setup(request: InferenceRequest, result: InferenceResult, asked: Asked[Any], tool: Runtime) -> ServingSetup:
    """The serving setup of a ``sizer inference`` answer (the replica, its copies, its scheduler).

    Parameters
    ----------
    request : InferenceRequest
        The question.
    result : InferenceResult
        Its answer.
    asked : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): its device's entry.
    tool : Runtime
        The serving engine the command is for: its memory shares (the answer's own where it was sized for it).

    Returns
    -------
    ServingSetup
        The setup.
    """
    from sizer.passes.arithmetic import tensor_replicas
    from sizer.runtimes.formats import weight_format
    from sizer.serving.estimate import served_architecture
    from sizer.serving.under_load import serving_runtime

    arch, _ = served_architecture(request)
    model, known = model_id(request.model)
    loaded = result.scenario == "load"
    engine = serving_runtime(request) if (request.runtime is not None or loaded) else None
    varying = request.lengths is not None or request.trace is not None
    context = request.depth + result.prompt_len + result.output_len
    if varying:  # a set's or a trace's longest request is not in the answer: the model's own context holds any
        context = arch.max_context
    replicas = (result.capacity.replicas or 1) if loaded and result.capacity is not None else 1
    tensor = result.split == Split.TENSOR
    count, batch = result.count, result.batch
    if tensor and not loaded:  # a count that does not split the heads was answered as replicas (the same rule)
        from sizer.hardware.nodes import node_layout

        replicas, count = tensor_replicas(result.count, arch, node_layout(asked.the_device)[0])
        batch = -(-result.batch // replicas)  # the busiest replica's sequences: --max-num-seqs is per replica
    profile = engine.profile if engine is not None else None
    running = (request.max_running or (profile.max_running if profile else batch)) if loaded else batch
    budget = (request.token_budget or (profile.token_budget if profile else None)) if loaded else None
    return ServingSetup(model=model, model_known=known, weights=result.weights, kv_cache=KvCache(result.kv_cache),
                        tensor_parallel=count if tensor else 1, pipeline_parallel=1 if tensor else count,
                        replicas=replicas, max_model_len=context, max_running=running, token_budget=budget,
                        experts=arch.experts, device=asked.the_device, count=count,
                        gguf_file=weight_format(result.weights).gguf_mix is not None,
                        engine=engine.name if engine is not None else None, fits=result.fits, lengths_vary=varying,
                        memory_share=tool.profile.memory_share, kv_free_share=tool.profile.kv_free_share,
                        expert_parallel=bool(getattr(request, "expert_parallel", False) or getattr(request, "dp_attention", False)),
                        dp_attention=bool(getattr(request, "dp_attention", False)))


def local_runtime_of(request: InferenceRequest, asked: Asked[Any]) -> Runtime | None:
    """The local runtime the answer ran under (llama.cpp, mlx), None where a serving engine or model answered.

    Parameters
    ----------
    request : InferenceRequest
        The question.
    asked : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): its device's (and host CPU's) entry.

    Returns
    -------
    Runtime or None
        The local runtime, as :func:`sizer.local.machine.local_runtime` chose it for the answer.
    """
    from sizer.local.machine import local_runtime
    from sizer.serving.estimate import served_format

    fmt, _ = served_format(request)
    chosen, _ = local_runtime(request.runtime, asked.the_device, fmt)  # with devices: the first of them
    return chosen


def local_setup(request: InferenceRequest, result: InferenceResult, asked: Asked[Any], local: Runtime) -> LocalSetup:
    """The llama.cpp run of a local ``sizer inference`` answer.

    Parameters
    ----------
    request : InferenceRequest
        The question.
    result : InferenceResult
        Its answer.
    asked : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): its device's (and host CPU's) entry.
    local : Runtime
        The local runtime the answer ran under (:func:`local_runtime_of`).

    Returns
    -------
    LocalSetup
        The setup.
    """
    from sizer.passes.layer_offload import DEFAULT_HOST
    from sizer.serving.estimate import served_architecture

    arch, _ = served_architecture(request)
    device = asked.the_device  # with devices: the first of them
    offloaded = request.gpu_layers is not None and request.gpu_layers < arch.layers
    threads = request.threads
    cpu = device if device.kind is DeviceKind.CPU else (asked.host(DEFAULT_HOST) if offloaded else None)
    if threads is None and cpu is not None and cpu.cores is not None:  # the answer's default: the CPU's physical cores
        threads = int(cpu.cores.value)
    if request.devices is not None and result.per_device:  # unequal cards: each one's layers (an offload's
        shares = tuple(d.layers for d in result.per_device)   # per_device also lists the host CPU: not a split)
    else:
        shares = tuple([1] * result.count) if result.count > 1 else ()
    flash = local.profile.flash_attention if request.flash_attention is None else request.flash_attention
    return LocalSetup(model=str(request.model) if request.model is not None else "model", weights=result.weights,
                      kv_cache=KvCache(result.kv_cache), layers=arch.layers,
                      gpu_layers=request.gpu_layers if offloaded else None,
                      context=request.depth + result.prompt_len + result.output_len, sequences=result.batch,
                      flash_attention=flash, ubatch=request.ubatch, threads=threads, layer_shares=shares,
                      split=result.split, on_gpu=device.kind is not DeviceKind.CPU, fits=result.fits)


def training_setup(request: WorkloadRequest, layout: Layout | LayoutOption, *, global_batch: float | None,
                   precision: str, fits: bool | None, asked: Asked[Any]) -> TrainingSetup:
    """The layout of a ``sizer time`` or ``sizer plan`` answer (and its request's choices).

    Parameters
    ----------
    request : TimeRequest or PlanRequest
        The question.
    layout : Layout or LayoutOption
        The chosen layout (``time``'s ``layout``; ``plan``'s first, fastest row).
    global_batch : float or None
        Samples per optimizer step [1].
    precision : str
        The training precision the answer used.
    fits : bool or None
        Whether the answer found it fits.
    asked : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): its device's (and host CPU's) entry.

    Returns
    -------
    TrainingSetup
        The setup.
    """
    from sizer.engine.job import resolve_job
    from sizer.hardware.nodes import node_layout

    job = resolve_job(request, need_samples=False)
    device = asked.device  # TimeRequest and PlanRequest name one; WorkloadRequest does not
    count = layout.tp * layout.pp * layout.cp * layout.dp
    return TrainingSetup(
        model=str(request.model) if request.model is not None else None, tp=layout.tp, pp=layout.pp, cp=layout.cp,
        dp=layout.dp, ep=layout.ep, interleave=layout.interleave, zero=layout.zero, recompute=Recompute(layout.recompute),
        micro_batch=int(layout.micro_batch), accumulation=int(layout.accumulation),
        global_batch=round(global_batch) if global_batch is not None else None,
        seq_len=int(job.tokens_per_sample) if job.token_mode else None,
        layers=job.arch.layers if job.arch is not None else None, precision=precision, optimizer=job.optimizer,
        method=job.finetune.method if job.finetune is not None else Method.FULL,
        lora_rank=job.finetune.rank if job.finetune is not None else None,
        lora_targets=job.finetune.targets if job.finetune is not None else (),
        offload=bool(getattr(request, "offload", False)), count=count,
        devices_per_node=node_layout(device)[0] if device is not None else count, device=device, fits=fits,
        framework=_framework(request))


def time_setup(request: TimeRequest, result: TimeResult, asked: Asked[Any]) -> TrainingSetup:
    """The layout a ``sizer time`` answer chose (:func:`training_setup`).

    Parameters
    ----------
    request : TimeRequest
        The question.
    result : TimeResult
        Its answer.
    asked : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): its device's (and host CPU's) entry.

    Returns
    -------
    TrainingSetup
        The setup.
    """
    return training_setup(request, result.layout, global_batch=result.batch_size, precision=result.precision,
                          fits=result.fits, asked=asked)


def plan_setup(request: PlanRequest, layout: LayoutOption, precision: str, asked: Asked[Any]) -> TrainingSetup:
    """The fastest layout of a ``sizer plan`` answer (:func:`training_setup`).

    Parameters
    ----------
    request : PlanRequest
        The question.
    layout : LayoutOption
        The layout to launch (the answer's first, fastest one).
    precision : str
        The training precision the answer used.
    asked : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): its device's (and host CPU's) entry.

    Returns
    -------
    TrainingSetup
        The setup.
    """
    return training_setup(request, layout, global_batch=layout.batch_size, precision=precision, fits=layout.fits,
                          asked=asked)


def memory_setup(request: MemoryRequest, result: MemoryResult, asked: Asked[Any]) -> TrainingSetup:
    """The fine-tuning setup of a ``sizer memory`` answer: its micro-batch, ZeRO stage and recomputation on its
    devices, replicated (a memory answer chooses no tensor or pipeline split and no accumulation).

    Parameters
    ----------
    request : MemoryRequest
        The question.
    result : MemoryResult
        Its answer.
    asked : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): its device's (and host CPU's) entry.

    Returns
    -------
    TrainingSetup
        The setup, ``accumulation`` and ``global_batch`` None.
    """
    from sizer.engine.job import resolve_job
    from sizer.hardware.nodes import node_layout

    job = resolve_job(request, need_samples=False)
    device = asked.device
    return TrainingSetup(
        model=str(request.model) if request.model is not None else None, tp=1, pp=1, cp=1, dp=result.count,
        ep=request.ep, interleave=1, zero=result.zero, recompute=Recompute(result.recompute),
        micro_batch=max(1, round(result.micro_batch)), accumulation=None, global_batch=None,
        seq_len=int(job.tokens_per_sample) if job.token_mode else None,
        layers=job.arch.layers if job.arch is not None else None, precision=result.precision,
        optimizer=job.optimizer, method=Method(result.method),
        lora_rank=job.finetune.rank if job.finetune is not None else None,
        lora_targets=job.finetune.targets if job.finetune is not None else (), offload=request.offload,
        count=result.count, devices_per_node=node_layout(device)[0] if device is not None else result.count,
        device=device, fits=result.fits, framework=_framework(request))


def _framework(request: object) -> str | None:
    """The training framework or recipe a request names, where its model has such a field (``--framework``,
    added beside ``--emit``); None otherwise."""
    value = getattr(request, "framework", None)
    return None if value is None else str(value)
