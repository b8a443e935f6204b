"""`sizer peak`: peak and sustained FLOP/s of a device or of a core count and clock."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from . import output
from .common import CatalogOption, Derating, JsonOption, load


def peak(device: Annotated[Optional[str], typer.Argument(help="Device id or name, e.g. 'Tesla P40'.")] = None,
         precision: Annotated[str, typer.Option("--precision", "-p", help="fp32, tf32, fp16, bf16, fp8 or fp4.")] = "fp32",
         cores: Annotated[Optional[str], typer.Option("--cores", help="FP32 cores (with --clock, instead of a device).")] = None,
         clock: Annotated[Optional[str], typer.Option("--clock", help="Boost clock, e.g. '1.531 GHz'.")] = None,
         derating: Derating = None, catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Peak FLOP/s (R = 2NC or the catalog's dense tensor peak) and the sustained range."""
    from sizer import facade

    result = facade.peak(facade.PeakRequest(device=device, precision=precision, cores=cores, clock=clock,
                                                  derating=derating), load(catalog) if device else None)
    if json:
        return output.emit_json(result)
    output.key_values(f"Peak throughput: {result.device or 'given cores and clock'} ({result.precision})", [
        ("peak", output.qty(result.peak)), ("sustained", output.rng(result.sustained)), ("basis", result.basis),
        ("stated FP32 peak", output.qty(result.stated_fp32_peak))])
    output.assumptions(result.assumptions)


def register(app: typer.Typer) -> None:
    app.command()(peak)
