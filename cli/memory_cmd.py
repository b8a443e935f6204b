"""`sizer memory`: training memory per device, and whether it fits."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from . import launch_output, output, owned_output
from .common import (
    ActivationMemory,
    BatchSize,
    CatalogOption,
    CountOption,
    EpOption,
    FrameworkOption,
    HaveOption,
    JsonOption,
    LoraRankOption,
    LoraTargetsOption,
    LossOption,
    MethodOption,
    MicroBatch,
    ModelOption,
    OffloadActivationsOption,
    OffloadParamsOption,
    Optimizer,
    OptimizerInBackwardOption,
    Params,
    PrecisionOption,
    RecomputeOption,
    Samples,
    SeqLen,
    StatePrecisionOption,
    Tokens,
    WorkloadOption,
    ZeroOption,
    answer_owned,
    load,
    recipe_fields,
    workload_request,
)
from .measured_options import MeasuredOption, rescaled_rows


def memory(params: Params = None, model: ModelOption = None, workload: WorkloadOption = None, samples: Samples = None, tokens: Tokens = None,
           device: Annotated[Optional[str], typer.Option("--device", "-d", help="Device to check the fit against.")] = None,
           count: CountOption = 1, precision: PrecisionOption = None, optimizer: Optimizer = None,
           batch_size: BatchSize = None, seq_len: SeqLen = None, activation_memory_per_sample: ActivationMemory = None,
           micro_batch: MicroBatch = None, zero: ZeroOption = None, ep: EpOption = None,
           method: MethodOption = None, lora_rank: LoraRankOption = None, lora_targets: LoraTargetsOption = None,
           recompute: RecomputeOption = "none",
           sharding: Annotated[str, typer.Option("--sharding", help="none (replicas) or full (ZeRO-3/FSDP).")] = "none",
           headroom: Annotated[bool, typer.Option("--headroom", help="Reserve 25-30 % extra memory for reference copies of the weights (Jamgharyan's recommendation).")] = False,
           state_precision: StatePrecisionOption = None, optimizer_in_backward: OptimizerInBackwardOption = None,
           offload_params: OffloadParamsOption = None, offload_activations: OffloadActivationsOption = None,
           loss: LossOption = None, framework: FrameworkOption = None,
           offload: Annotated[bool, typer.Option("--offload", help="Optimizer states and master weights in host memory (ZeRO-Offload).")] = False,
           measured: MeasuredOption = None,
           have: HaveOption = None, emit: launch_output.EmitOption = None, catalog: CatalogOption = None,
           json: JsonOption = False) -> None:
    """Weights, gradients, optimizer states, activations and overhead per device."""
    from sizer import facade

    request = workload_request(facade.MemoryRequest, params=params, samples=samples, tokens=tokens, device=device,
                               count=count, precision=precision, optimizer=optimizer, batch_size=batch_size,
                               seq_len=seq_len, activation_memory_per_sample=activation_memory_per_sample,
                               micro_batch=micro_batch, sharding=sharding, headroom=headroom, model=model,
                               workload=workload, zero=zero, ep=ep,
                               method=method, lora_rank=lora_rank, lora_targets=lora_targets, recompute=recompute, have=have, offload=offload or None, measured=measured, emit=emit,
                               framework=framework,
                               **recipe_fields(state_precision, optimizer_in_backward, offload_params, offload_activations, loss))
    if have:
        return answer_owned(request, catalog, json)
    result = facade.estimate_memory(request, load(catalog))
    if json:
        return output.emit_json(result)
    verdict = "-" if result.fits is None else ("fits" if result.fits else "does NOT fit")
    # The parts above "total" add up to it (model states are shown by part, not also as a subtotal).
    output.key_values(f"Training memory per device: {result.device or 'no device given'} x {result.count}", [
        *rescaled_rows(result),
        ("method", result.method + ("" if result.method == "full" else f" ({output.fmt(result.trainable_params)} trained parameters)")),
        ("sharding", f"ZeRO stage {result.zero}" if result.zero else "none (replicas)"),
        ("weights", output.qty(result.weights)), ("gradients", output.qty(result.gradients)),
        ("optimizer states", output.qty(result.optimizer_states)), ("master weights", output.qty(result.master_weights)),
        (f"activations ({output.fmt(result.micro_batch)} per device, recompute {result.recompute})", output.qty(result.activations)),
        ("framework overhead", output.qty(result.framework_overhead)),
        ("ZeRO communication buckets", output.qty(result.buffers)),
        ("logits and loss (FP32, per micro-batch)", output.qty(result.logits)),
        ("QLoRA dequantisation buffer", output.qty(result.dequant_buffer)),
        ("total", output.qty(result.total)), ("of which active (allocator peak)", output.qty(result.active)),
        ("host memory (offloaded, paged)", output.qty(result.host_memory)), ("recipe", result.recipe),
        ("with headroom", output.qty(result.required_with_headroom)), ("device memory", output.qty(result.device_memory)),
        ("verdict", verdict), ("largest micro-batch that fits", "-" if result.largest_micro_batch is None else result.largest_micro_batch),
        *_searched(result.searched)])
    owned_output.suggestions(result.suggestions)
    output.assumptions(result.assumptions)
    launch_output.show(result.launch)


def _searched(searched) -> list[tuple[str, str]]:
    """The layout `sizer time` would choose, where none was asked: the same question's other answer, said."""
    if searched is None:
        return []
    verdict = "fits" if searched.fits else "does NOT fit"
    return [("layout search would choose", f"{searched.layout}: {output.qty(searched.memory_per_device)}, {verdict}")]


def register(app: typer.Typer) -> None:
    app.command()(memory)
