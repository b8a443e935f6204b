"""`sizer plan`: the layouts of one (model, device, count) that fit, fastest first."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from . import launch_output, output
from .common import (
    BatchSize,
    CatalogOption,
    CpOption,
    EpOption,
    FrameworkOption,
    HaveOption,
    InterleaveOption,
    InterruptionsOption,
    JsonOption,
    LoraRankOption,
    LoraTargetsOption,
    MethodOption,
    MicroBatch,
    ModelOption,
    Optimizer,
    Params,
    PpOption,
    PrecisionOption,
    RecomputeOption,
    SeqLen,
    Tokens,
    TpOption,
    ZeroOption,
    answer_owned,
    load,
    workload_request,
)
from .measured_options import MfuOption


def plan(model: ModelOption = None, params: Params = None, tokens: Tokens = None, device: Annotated[Optional[str], typer.Option("--device", "-d", help="Device id or any unambiguous part of its name (or --have).")] = None,
         count: Annotated[int, typer.Option("--count", "-n", min=1, max=1_000_000, help="Number of devices to lay out.")] = 1,
         precision: PrecisionOption = None, optimizer: Optimizer = None, batch_size: BatchSize = None,
         micro_batch: MicroBatch = None, seq_len: SeqLen = None, method: MethodOption = None,
         lora_rank: LoraRankOption = None, lora_targets: LoraTargetsOption = None, ep: EpOption = None,
         shown: Annotated[int, typer.Option("--top", min=1, max=100, help="Layouts to show.")] = 10,
         headroom: Annotated[bool, typer.Option("--headroom", help="Reserve 25-30 % extra memory for reference copies of the weights (Jamgharyan's recommendation).")] = False,
         tp: TpOption = None, pp: PpOption = None, cp: CpOption = None, zero: ZeroOption = None,
         recompute: RecomputeOption = None, interleave: InterleaveOption = None,
         interruptions: InterruptionsOption = None, framework: FrameworkOption = None,
         overlap_all_to_all: Annotated[bool, typer.Option("--overlap-all-to-all", help="A mixture of experts' all-to-alls overlap another micro-batch's computation (DualPipe, Megatron-Core's overlapped dispatch).")] = False,
         mfu: MfuOption = None,
         have: HaveOption = None, emit: launch_output.EmitOption = None, catalog: CatalogOption = None,
         json: JsonOption = False) -> None:
    """Search tensor x pipeline x context x data parallel, interleaving, ZeRO, recomputation and micro-batch;
    rank the layouts that fit. Layout options given pin their dimension."""
    from sizer.facade import PlanRequest
    from sizer.facade import plan as run

    request = workload_request(PlanRequest, model=model, params=params, tokens=tokens, device=device, count=count,
                               precision=precision, optimizer=optimizer or (None if framework else "adamw"), batch_size=batch_size,
                               micro_batch=micro_batch, seq_len=seq_len, shown=shown, framework=framework, headroom=headroom, method=method, lora_rank=lora_rank,
                               lora_targets=lora_targets, tp=tp, pp=pp, cp=cp, zero=zero, recompute=recompute,
                               interleave=interleave, ep=ep, have=have, interruptions=interruptions,
                               overlap_all_to_all=overlap_all_to_all or None, mfu=mfu, emit=emit)
    if have:
        return answer_owned(request, catalog, json)
    result = run(request, load(catalog))
    if json:
        return output.emit_json(result)
    lost = any(o.training_time_with_interruptions for o in result.layouts)
    rows = [(i, f"{o.tp}/{o.pp}{f'x{o.interleave}' if o.interleave > 1 else ''}/{o.cp}/{o.dp}"
             + (f" ep{o.ep}" if o.ep > 1 else ""), o.zero, o.recompute, f"{o.micro_batch} x {o.accumulation}",
             output.rng(o.training_time) if o.training_time else output.rng(o.step_time),
             *((output.rng(o.training_time_with_interruptions) if o.training_time_with_interruptions else "-",)
               if lost else ()), f"{o.mfu:.0%}",
             output.qty(o.memory_per_device), o.why) for i, o in enumerate(result.layouts, start=1)]
    output.table(f"Layouts of {result.workload} on {result.count} x {result.device} ({result.precision})",
                 ("#", "tp/pp/cp/dp", "ZeRO", "recompute", "micro x acc.", "training time" if result.layouts and
                  result.layouts[0].training_time else "step time", *(("with interruptions",) if lost else ()), "MFU",
                  "memory", "why"), rows,
                 caption=_caption(result))
    for warning in result.warnings:
        output.warn(warning)
    output.assumptions(result.assumptions)
    launch_output.show(result.launch)


def _caption(result) -> str:
    """How many fit, the one batch every row runs, and the order (fastest first, or closest to fitting)."""
    batch = f"; every row at a batch of {result.layouts[0].batch_size:,.0f} {result.sample}s" if result.layouts else ""
    order = "fastest first" if result.fitting else "none fits: closest to fitting first"
    return f"{result.fitting} of {result.searched} layouts fit{batch}; {order}. --json for everything."


def register(app: typer.Typer) -> None:
    app.command()(plan)
