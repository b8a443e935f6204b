"""`sizer time`: training time on n devices, per step and in all."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from cli import output
from cli.common import (ActivationMemory, BatchSize, CalibrationOption, CatalogOption, CountOption, Derating, DeviceOption,
                        Epochs, ForwardPerSample, JsonOption, Optimizer, Params, PrecisionOption, Samples, SeqLen, Tokens,
                        WorkloadOption, load, load_calibration_file, workload_request)


def time(params: Params = None, samples: Samples = None, epochs: Epochs = "1", tokens: Tokens = None,
         device: DeviceOption = ..., count: CountOption = 1, precision: PrecisionOption = "fp32",
         batch_size: BatchSize = None, optimizer: Optimizer = "adam", seq_len: SeqLen = None,
         workload: WorkloadOption = None,
         reference: Annotated[Optional[str], typer.Option("--reference", help="One measurement to predict from: 'DEVICE=THROUGHPUT/s', e.g. 'V100 SXM2 16GB=833/s'.")] = None,
         reference_batch_size: Annotated[Optional[str], typer.Option("--reference-batch-size", help="Batch of the reference measurement (default: --batch-size).")] = None,
         calibration: CalibrationOption = None,
         forward_flops_per_sample: ForwardPerSample = None, activation_memory_per_sample: ActivationMemory = None,
         derating: Derating = None,
         sharding: Annotated[str, typer.Option("--sharding", help="none (replicas) or full (ZeRO-3/FSDP).")] = "none",
         overlap: Annotated[bool, typer.Option("--overlap", help="Assume the all-reduce overlaps the backward pass.")] = False,
         catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Training time: per layer for a --workload profile, else from --params; never below C/(n R_peak)."""
    from sizer import estimates

    request = workload_request(estimates.TimeRequest, params=params, samples=samples, epochs=epochs, tokens=tokens,
                               device=device, count=count, precision=precision, batch_size=batch_size,
                               optimizer=optimizer, seq_len=seq_len, forward_flops_per_sample=forward_flops_per_sample,
                               activation_memory_per_sample=activation_memory_per_sample, derating=derating,
                               sharding=sharding, overlap_allreduce=overlap, workload=workload, reference=reference,
                               reference_batch_size=reference_batch_size, calibration=load_calibration_file(calibration))
    result = estimates.estimate_time(request, load(catalog))
    if json:
        return output.emit_json(result)
    if isinstance(result, estimates.ProfileTimeResult):
        return _render_profiled(result)
    output.key_values(f"Training time: {result.count} x {result.device} ({result.precision})", [
        ("training time", output.rng(result.training_time)), ("physical limit C/(n R_peak)", output.qty(result.physical_limit)),
        ("first-order C/(n R_s) (seed 004 eq. 4)", output.qty(result.first_order_time)),
        ("training compute", output.qty(result.training_compute)), ("steps", output.fmt(result.steps)),
        ("step time", output.rng(result.step_time)), ("  compute-bound", output.rng(result.compute_time_per_step)),
        ("  memory-bound", output.rng(result.memory_time_per_step)), ("  overhead", output.rng(result.overhead_per_step)),
        ("  all-reduce", output.qty(result.allreduce_time_per_step)), ("bound by", result.bound),
        ("throughput", output.rng(result.throughput))])
    output.assumptions(result.assumptions)


def _render_profiled(result) -> None:
    rows = [("mode", result.mode), ("step time", output.rng(result.step_time)), ("throughput", output.rng(result.throughput))]
    if result.training_time is not None:
        rows += [("training time", output.rng(result.training_time)), ("steps", output.fmt(result.steps)),
                 ("training compute", output.qty(result.training_compute))]
    rows += [("physical limit per step", output.qty(result.physical_limit_per_step)),
             ("optimizer update", output.qty(result.optimizer_time_per_step)),
             ("overhead", output.qty(result.overhead_per_step)), ("all-reduce", output.qty(result.allreduce_time_per_step))]
    output.key_values(f"Training time: {result.workload}, batch {result.batch_size:g}, {result.count} x {result.device} "
                      f"({result.precision})", rows)
    output.table("Layer groups", ("kind", "layers", "time per step", "share", "bound by"),
                 ((g.kind, g.layers, output.qty(g.time_per_step), f"{g.share:.0%}", g.bound) for g in result.layer_groups))
    output.assumptions(result.assumptions)


def register(app: typer.Typer) -> None:
    app.command()(time)
