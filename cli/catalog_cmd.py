"""`sizer catalog list|show`: the sourced hardware catalog."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from . import output
from .common import HELP_SETTINGS, CatalogOption, HelpGroup, JsonOption, load

app = typer.Typer(no_args_is_help=True, cls=HelpGroup, rich_markup_mode=None,
                  context_settings=HELP_SETTINGS, help="The hardware catalog: every figure with its source.")


@app.command("list")
def list_devices(kind: Annotated[Optional[str], typer.Option("--kind", help="gpu, accelerator or cpu.")] = None,
                 prices: Annotated[bool, typer.Option("--prices", help="Show each device's cheapest on-demand rent "
                                                      "and its purchase price, with their dates, instead of its figures.")] = False,
                 catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Every device with its memory, bandwidth and FP32 peak (--prices: its rent and purchase prices)."""
    from sizer.facade import CATALOG_KINDS, DeviceKind, parse_choice, summarize_device

    wanted = None if kind is None else parse_choice(DeviceKind, kind, "kind", CATALOG_KINDS)
    devices = [summarize_device(d) for d in load(catalog) if wanted is None or d.kind is wanted]
    if json:
        return output.emit_json({"devices": devices})
    if prices:
        return _price_table(devices)
    output.table(f"Catalog: {len(devices)} devices", ("id", "name", "kind", "memory", "bandwidth", "FP32 peak", "precisions"),
                 ((d.id, d.name, d.kind, output.qty(d.memory), output.qty(d.memory_bandwidth), output.qty(d.fp32_peak),
                   ", ".join(d.precisions)) for d in devices))


def _rent(p) -> str:
    return "-" if p is None else f"{p.value:.4g} USD/h, {p.provider} {p.instance} ({p.date})"


def _bought(p) -> str:
    if p is None:
        return "-"
    if p.devices_in_system and p.devices_in_system > 1:
        system = f" (1/{p.devices_in_system} of {p.system or 'a system'})"
    else:  # a machine the chip is only sold in (a Mac) is named: the price is the machine's
        system = f" ({p.system})" if p.system else ""
    alone = ", the device alone" if p.scope == "gpu" else ""  # buying adds a server share to it (docs/prices.md)
    return f"{p.value:,.0f} USD{system}{alone}, {p.basis}, {p.confidence} confidence ({p.date})"


def _price_table(devices) -> None:
    """`catalog list --prices`: per device its cheapest on-demand rent and its purchase price, each dated."""
    from sizer.facade import DeviceKind

    accelerators = [d for d in devices if d.kind is not DeviceKind.CPU]
    rented = sum(d.cloud_price is not None for d in accelerators)
    bought = sum(d.purchase_price is not None for d in accelerators if d.cloud_price is None)
    output.table(f"Catalog prices: {len(devices)} devices", ("id", "rent per device (cheapest on-demand, date)",
                                                             "purchase per device (basis, date)"),
                 ((d.id, _rent(d.cloud_price), _bought(d.purchase_price)) for d in devices),
                 caption=f"{rented} of {len(accelerators)} accelerators have a dated rent price; {bought} of the "
                         f"{len(accelerators) - rented} others a purchase price. Every offer and quote with its source: "
                         "sizer catalog show DEVICE." + _awaiting())


def _awaiting() -> str:
    """The ids the built-in price files price that no device has yet (added once the device is in the catalog)."""
    from sizer.facade import awaiting_prices, load_catalog

    waiting = awaiting_prices(load_catalog().devices)
    return "" if not waiting else " Prices waiting for a device the catalog lacks: " + ", ".join(
        f"{device_id} ({', '.join(files)})" for device_id, files in waiting.items()) + "."


def _checked(value) -> str:
    """'yes' for a figure read in its source, 'NO' for one recalled or from a low-confidence row."""
    return "yes" if value.verified else "NO"


@app.command("show")
def show(device: Annotated[str, typer.Argument(help="Device id or name.")], catalog: CatalogOption = None,
         json: JsonOption = False) -> None:
    """Every figure of one device, with its source."""
    from sizer.facade import describe_device

    devices = load(catalog)
    view = describe_device(devices.find(device), devices.assumed(device))
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
    for i, p in enumerate(([view.purchase_price] if view.purchase_price else []) + view.purchase_prices):
        rows.append(("purchase price" + ("" if i or not view.purchase_price else " (costs use it)"), _bought(p),
                     _checked(p), p.source))
    for p in view.cloud_prices:
        size = f"{p.devices_in_instance} per instance" if p.devices_in_instance and p.devices_in_instance > 1 else "one per instance"
        network = f"; between nodes {p.network}" if p.network else ""
        rows.append((f"rent: {p.provider} {p.instance}", f"{output.qty(output.Value(p.value, p.unit))} per device, "
                     f"{p.term}, {size}{network} ({p.date})", "", p.source))
    output.table(f"{view.name} ({view.id}): {view.kind}, {view.vendor} {view.architecture}, {view.launch_year}",
                 ("figure", "value", "verified", "source"), rows,
                 caption="; ".join(x for x in (view.interconnect and f"interconnect: {view.interconnect}", view.vector,
                                              view.unified_memory and "unified memory: shared by CPU and GPU",
                                              view.unverified and f"unverified (recalled or low confidence): {', '.join(view.unverified)}",
                                              view.fp32_peak_discrepancy, view.notes, view.assumed) if x) or None)


@app.command("template")
def template(json: JsonOption = False) -> None:
    """Print a commented catalog entry to fill in for your own device (use it with --catalog FILE)."""
    from sizer.facade import catalog_template

    if json:
        return output.emit_json({"template": catalog_template()})
    typer.echo(catalog_template(), nl=False)
