"""`sizer catalog list|show`: the sourced hardware catalog."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from cli import output
from cli.common import HELP_SETTINGS, CatalogOption, HelpGroup, JsonOption, load

app = typer.Typer(no_args_is_help=True, cls=HelpGroup, rich_markup_mode=None,
                  context_settings=HELP_SETTINGS, help="The hardware catalog: every figure with its source.")


@app.command("list")
def list_devices(kind: Annotated[Optional[str], typer.Option("--kind", help="gpu, accelerator or cpu.")] = None,
                 catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Every device with its memory, bandwidth and FP32 peak."""
    from sizer.facade import summarize_device
    from sizer.facade import InputError

    if kind is not None and kind not in ("gpu", "accelerator", "cpu"):
        raise InputError("kind", kind, "gpu, accelerator or cpu")
    devices = [summarize_device(d) for d in load(catalog) if kind is None or d.kind == kind]
    if json:
        return output.emit_json({"devices": devices})
    output.table(f"Catalog: {len(devices)} devices", ("id", "name", "kind", "memory", "bandwidth", "FP32 peak", "precisions"),
                 ((d.id, d.name, d.kind, output.qty(d.memory), output.qty(d.memory_bandwidth), output.qty(d.fp32_peak),
                   ", ".join(d.precisions)) for d in devices))


def _checked(value) -> str:
    """'yes' for a figure read in its source, 'NO' for one recalled or from a low-confidence row."""
    return "yes" if value.verified else "NO"


@app.command("show")
def show(device: Annotated[str, typer.Argument(help="Device id or name.")], catalog: CatalogOption = None,
         json: JsonOption = False) -> None:
    """Every figure of one device, with its source."""
    from sizer.facade import describe_device

    view = describe_device(load(catalog).find(device))
    if json:
        return output.emit_json(view)
    rows = []
    for name in ("fp32_cores", "cores", "threads", "base_clock", "boost_clock", "derived_fp32_peak", "memory",
                 "memory_bandwidth", "tdp", "interconnect_bandwidth"):
        value = getattr(view, name)
        if value is not None:
            rows.append((name.replace("_", " "), output.qty(value), _checked(value),
                         value.source + (f" — {value.note}" if value.note else "")))
    for precision, value in view.peaks.items():
        rows.append((f"{precision} peak (dense)", output.qty(value), _checked(value),
                     value.source + (f" — {value.note}" if value.note else "")))
    if view.purchase_price:
        p = view.purchase_price
        rows.append(("purchase price", f"{output.qty(output.Value(p.value, p.unit))} ({p.date})", "", p.source))
    for p in view.cloud_prices:
        rows.append((f"rent: {p.provider} {p.instance}", f"{output.qty(output.Value(p.value, p.unit))} ({p.date})", "", p.source))
    output.table(f"{view.name} ({view.id}): {view.kind}, {view.vendor} {view.architecture}, {view.launch_year}",
                 ("figure", "value", "verified", "source"), rows,
                 caption="; ".join(x for x in (view.interconnect and f"interconnect: {view.interconnect}", view.vector,
                                              view.unified_memory and "unified memory: shared by CPU and GPU",
                                              view.unverified and f"unverified (recalled or low confidence): {', '.join(view.unverified)}",
                                              view.fp32_peak_discrepancy, view.notes) if x) or None)


@app.command("template")
def template(json: JsonOption = False) -> None:
    """Print a commented catalog entry to fill in for your own device (use it with --catalog FILE)."""
    from sizer.facade import catalog_template

    if json:
        return output.emit_json({"template": catalog_template()})
    typer.echo(catalog_template(), nl=False)
