"""`sizer time`: training time on n devices, per step and in all, from the one engine."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from . import launch_output, output, owned_output
from .common import (
    ActivationMemory,
    BatchSize,
    CalibrationOption,
    CatalogOption,
    CountOption,
    CpOption,
    DpOption,
    Epochs,
    EpOption,
    ForwardPerSample,
    FrameworkOption,
    HaveOption,
    HostMemoryOption,
    InterleaveOption,
    InterruptionsOption,
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
    PpOption,
    PrecisionOption,
    RecomputeOption,
    Samples,
    SampleTokensOption,
    SeqLen,
    StatePrecisionOption,
    Tokens,
    TpOption,
    WorkloadOption,
    ZeroOption,
    answer_owned,
    load,
    load_calibration_file,
    recipe_fields,
    workload_request,
)
from .measured_options import MeasuredOnOption, MeasuredOption, MfuOption, rescaled_rows


def time(params: Params = None, model: ModelOption = None, samples: Samples = None, epochs: Epochs = "1",
         tokens: Tokens = None, device: Annotated[Optional[str], typer.Option("--device", "-d", help="Device id or any unambiguous part of its name, e.g. 'A100 80GB SXM' (or --have).")] = None, count: CountOption = 1, precision: PrecisionOption = None,
         batch_size: BatchSize = None, micro_batch: MicroBatch = None, optimizer: Optimizer = None,
         seq_len: SeqLen = None, workload: WorkloadOption = None, zero: ZeroOption = None,
         tp: TpOption = None, pp: PpOption = None, cp: CpOption = None, dp: DpOption = None, ep: EpOption = None,
         interleave: InterleaveOption = None,
         recompute: RecomputeOption = None,
         system: Annotated[Optional[str], typer.Option("--system", help="A catalog node type (DGX H100, AWS p5 ...): devices per node and the links.")] = None,
         offload: Annotated[bool, typer.Option("--offload", help="Optimizer states and master weights in host memory (ZeRO-Offload).")] = False,
         hybrid_shard: Annotated[bool, typer.Option("--hybrid-shard", help="With --zero 3: shard within a node, replicate across nodes (FSDP HYBRID_SHARD).")] = False,
         attention: Annotated[str, typer.Option("--attention", help="flash (softmax statistics kept) or standard (s x s scores kept).")] = "flash",
         method: MethodOption = None, lora_rank: LoraRankOption = None, lora_targets: LoraTargetsOption = None,
         reference: Annotated[Optional[str], typer.Option("--reference", help="One measurement to predict from: 'DEVICE=THROUGHPUT/s', e.g. 'V100 SXM2 16GB=833/s'.")] = None,
         reference_batch_size: Annotated[Optional[str], typer.Option("--reference-batch-size", help="Batch of the reference measurement (default: --batch-size).")] = None,
         calibration: CalibrationOption = None,
         forward_flops_per_sample: ForwardPerSample = None, activation_memory_per_sample: ActivationMemory = None,
         sharding: Annotated[str, typer.Option("--sharding", help="none (replicas) or full (ZeRO-3/FSDP).")] = "none",
         overlap: Annotated[bool, typer.Option("--overlap", help="Assume the all-reduce overlaps the backward pass.")] = False,
         overlap_all_to_all: Annotated[bool, typer.Option("--overlap-all-to-all", help="A mixture of experts' all-to-alls overlap another micro-batch's computation (DualPipe, Megatron-Core's overlapped dispatch).")] = False,
         host_memory: HostMemoryOption = None, interruptions: InterruptionsOption = None,
         checkpoint_interval: Annotated[Optional[str], typer.Option("--checkpoint-interval", help="Training between checkpoints for the time with interruptions, e.g. '3 hours' (default: Daly's optimal interval).")] = None,
         state_precision: StatePrecisionOption = None, optimizer_in_backward: OptimizerInBackwardOption = None,
         offload_params: OffloadParamsOption = None, offload_activations: OffloadActivationsOption = None,
         loss: LossOption = None, sample_tokens: SampleTokensOption = None, framework: FrameworkOption = None,
         measured: MeasuredOption = None, measured_on: MeasuredOnOption = None, mfu: MfuOption = None,
         have: HaveOption = None, emit: launch_output.EmitOption = None, catalog: CatalogOption = None,
         json: JsonOption = False) -> None:
    """Training time per layer (a --workload profile, a --model or --params); never below C/(n R_peak)."""
    from sizer import facade
    from sizer.facade import InputError

    if dp is not None and dp * (tp or 1) * (pp or 1) * (cp or 1) != count:
        split = (tp or 1) * (pp or 1) * (cp or 1)
        raise InputError("dp", dp, f"count / (tp x pp x cp) = {count / split:g}: tp x pp x cp x dp is the device count")
    request = workload_request(facade.TimeRequest, tp=tp, pp=pp, cp=cp, ep=ep, interleave=interleave, recompute=recompute,
                               system=system, attention=attention, offload=offload or None, hybrid_shard=hybrid_shard or None, params=params, model=model, samples=samples, epochs=epochs,
                               tokens=tokens, device=device, count=count, precision=precision, batch_size=batch_size,
                               micro_batch=micro_batch, optimizer=optimizer, seq_len=seq_len,
                               forward_flops_per_sample=forward_flops_per_sample, zero=zero,
                               activation_memory_per_sample=activation_memory_per_sample,
                               sharding=sharding, overlap_allreduce=overlap, workload=workload, reference=reference,
                               reference_batch_size=reference_batch_size, calibration=load_calibration_file(calibration),
                               method=method, lora_rank=lora_rank, lora_targets=lora_targets, have=have,
                               host_memory=host_memory, interruptions=interruptions,
                               checkpoint_interval=checkpoint_interval,
                               overlap_all_to_all=overlap_all_to_all or None,
                               measured=measured, measured_on=measured_on, mfu=mfu, emit=emit, framework=framework,
                               **recipe_fields(state_precision, optimizer_in_backward, offload_params, offload_activations, loss,
                                               sample_tokens))
    if have:
        return answer_owned(request, catalog, json)
    result = facade.estimate_time(request, load(catalog))
    if json:
        return output.emit_json(result)
    layout = result.layout
    rows = [("mode", result.mode),
            ("method", result.method + ("" if result.method == "full" else f" ({output.fmt(result.trainable_params)} trained parameters)")),
            ("recipe", result.recipe or "-"),
            *rescaled_rows(result),
            ("step time", output.rng(result.step_time)), ("throughput", output.rng(result.throughput))]
    if result.training_time is not None:
        rows += [("training time", output.rng(result.training_time))]
        if result.best_layout is not None and result.best_layout.training_time is not None:
            rows += [("best layout found (upper bound)", f"{output.rng(result.best_layout.training_time)} (runs on "
                      f"{result.best_layout.family} achieved {result.best_layout.achieved_factor:.0%} of it)")]
        if result.with_interruptions is not None:
            lost = result.with_interruptions
            rows += [("training time with interruptions", f"{output.rng(lost.training_time)} ({lost.interruptions:,.0f} "
                                                          f"failures expected, {lost.goodput:.0%} goodput)")]
        rows += [("physical limit C/(n R_peak)", output.qty(result.physical_limit)),
                 ("first-order: compute / (devices x sustained peak) (reference)", output.qty(result.first_order_time)),
                 ("training compute", output.qty(result.training_compute)), ("steps", output.fmt(result.steps))]
    interleaved = f", interleave {layout.interleave}" if layout.interleave > 1 else ""
    experts = f" (ep {layout.ep})" if layout.ep > 1 else ""
    rows += [("layout", f"tp {layout.tp} x pp {layout.pp} x cp {layout.cp} x dp {layout.dp}{experts}, ZeRO {layout.zero}, "
                        f"recompute {layout.recompute}{interleaved}, micro-batch {layout.micro_batch} x {layout.accumulation}"),
             ("MFU / HFU", f"{result.mfu:.0%} / {result.hfu:.0%}"
                           + (" (MFU given)" if result.rescaled is not None and result.rescaled.basis == "mfu" else "")), ("bound by", result.bound),
             ("  kernels", output.qty(result.kernels_per_step)), ("  optimizer update", output.qty(result.optimizer_time_per_step)),
             ("  overhead", output.qty(result.overhead_per_step)),
             ("  tensor parallel", output.qty(result.tensor_parallel_per_step)),
             ("  pipeline (sends; bubble in kernels)", f"{output.qty(result.pipeline_per_step)}; {output.qty(result.bubble_per_step)}"),
             ("  context parallel", output.qty(result.context_parallel_per_step)),
             ("  data parallel", output.qty(result.data_parallel_per_step)),
             *([("  expert all-to-all", output.qty(result.expert_parallel_per_step))] if layout.ep > 1 else []),
             *([("  what runs lose against the best layout", output.qty(facade.QuantityOut.of(facade.Quantity(
                 result.step_time.expected - result.best_layout.step_time.expected, "s"), "s")))]
               if result.best_layout is not None else []),
             ("memory per device", f"{output.qty(result.memory_per_device)} of {output.qty(result.device_memory)}"),
             ("fits", "yes" if result.fits else "NO")]
    output.key_values(f"Training time: {result.workload}, {result.count} x {result.device} ({result.precision})", rows)
    output.table("Layer groups", ("kind", "layers", "time per step", "share"),
                 ((g.kind, g.layers, output.qty(g.time_per_step), f"{g.share:.0%}") for g in result.layer_groups))
    for warning in result.warnings:
        output.warn(warning)
    owned_output.suggestions(result.suggestions)
    output.assumptions(result.assumptions + (result.with_interruptions.assumptions if result.with_interruptions else []))
    launch_output.show(result.launch)


def register(app: typer.Typer) -> None:
    app.command()(time)
