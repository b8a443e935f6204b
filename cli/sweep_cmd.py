"""`sizer sweep`: a what-if table over workloads × devices × counts × precisions, as CSV or JSON."""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Optional

import typer

from . import output
from .common import ActivationMemory, CatalogOption, Epochs, JsonOption, Optimizer, PricingOption, SeqLen, load

ListOption = Optional[str]
COST_HEAD = {"rent": "rent cost", "buy": "buy cost", "any": "cost (rent, or (b) buy)"}


def _split(field: str, text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items) or len(items) > 10_000:
        from sizer.facade import InputError

        raise InputError(field, text, "a comma-separated list, e.g. '1e9,7e9'")
    return items


def _counts(text: str) -> list[int]:
    from sizer.facade import InputError

    counts = []
    for item in _split("count", text) or []:
        if not (item.isascii() and item.isdigit()) or len(item) > 7:  # "٣" and "３" are digits to str.isdigit
            raise InputError("count", item, "whole numbers of devices, e.g. '1,2,4,8'")
        counts.append(int(item))
    return counts


def sweep(params: Annotated[ListOption, typer.Option("--params", help="Parameters, comma-separated: '1e9,7B'.")] = None,
          model: Annotated[ListOption, typer.Option("--model", "-m", help="Models by name or hub id, comma-separated: 'llama-2-7b,Qwen/Qwen3-32B' (`sizer models` lists them).")] = None,
          samples: Annotated[ListOption, typer.Option("--samples", help="Samples per epoch, comma-separated.")] = None,
          tokens: Annotated[ListOption, typer.Option("--tokens", help="Training tokens, comma-separated (instead of --samples).")] = None,
          batch_size: Annotated[ListOption, typer.Option("--batch-size", help="Global batch sizes, comma-separated.")] = None,
          epochs: Epochs = "1", optimizer: Optimizer = "adam", seq_len: SeqLen = None,
          activation_memory_per_sample: ActivationMemory = None,
          device: Annotated[Optional[list[str]], typer.Option("--device", "-d", help="Device (repeatable); default: the whole catalog.")] = None,
          count: Annotated[str, typer.Option("--count", "-n", help="Device counts, comma-separated.")] = "1,2,4,8",
          precision: Annotated[str, typer.Option("--precision", "-p", help="Precisions, comma-separated (mixed: bf16, else fp16).")] = "mixed",
          sharding: Annotated[str, typer.Option("--sharding", help="auto (the layout `sizer time` chooses), none, full, or 'none,full'.")] = "auto",
          pricing: PricingOption = "rent",
          cloud: Annotated[Optional[str], typer.Option("--cloud", help="Cloud provider for rent prices (AWS, GCP, Lambda, RunPod, ...).")] = None,
          headroom: Annotated[bool, typer.Option("--headroom", help="Reserve 25-30 % extra memory for reference copies of the weights (Jamgharyan's recommendation).")] = False,
          format: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
          out: Annotated[Optional[str], typer.Option("--out", "-o", help="Write to this file instead of standard output.")] = None,
          catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Evaluate every combination at once (vectorised): time, memory, fit and rent cost per row."""
    from sizer.facade import sweep as run

    format = _check_format(samples, tokens, format, json)
    if out is not None:  # never over a file this sweep reads: its catalog or a model's config.json
        _check_out(out, catalog, model)
    amount_field = "tokens" if tokens is not None else "samples"
    amounts = _split(amount_field, tokens if tokens is not None else samples) or []
    sizes = _sizes(params, model)
    batches = _split("batch_size", batch_size) or [None]
    counts, precisions, shardings = _counts(count), _split("precision", precision), _split("sharding", sharding)
    chosen = load(catalog)
    # Count the rows from the option lengths before building anything: a 10,000 x 10,000 grid
    # used to be built in full (minutes, then MemoryError) before the core refused it.
    _check_rows(len(sizes) * len(amounts) * len(batches) * (len(device) if device else len(chosen))
                * len(counts) * len(precisions or [None]) * len(shardings or [None]))
    common = {"epochs": epochs, "optimizer": optimizer, "seq_len": seq_len,
              "activation_memory_per_sample": activation_memory_per_sample}
    workloads = _workloads(sizes, amount_field, amounts, batches, common)
    table = run(workloads, devices=device, counts=counts, precisions=precisions, shardings=shardings, catalog=chosen,
                headroom=headroom, pricing=pricing, cloud=cloud)
    if format == "table":
        return _print_table(table, pricing)
    _write(table, format, out)


def _check_format(samples: str | None, tokens: str | None, format: str, json: bool) -> str:
    """The output format (``json`` where --json is given), after checking that exactly one of --samples
    and --tokens is given; InputError naming the field otherwise."""
    from sizer.facade import InputError

    if samples is not None and tokens is not None:
        raise InputError("tokens", tokens, "either --tokens or --samples, not both")
    if samples is None and tokens is None:
        raise InputError("samples", None, "--samples or --tokens (comma-separated lists)")
    format = "json" if json else format
    if format not in ("table", "csv", "json"):
        raise InputError("format", format, "table, csv or json")
    return format


def _check_out(out: str, catalog: str | None, model: str | None) -> None:
    """InputError where ``out`` would overwrite a file this sweep reads: its catalog or a model's config file."""
    from sizer.facade import CATALOG_ENV, check_writable

    check_writable(out, "out", {"catalog": catalog or os.environ.get(CATALOG_ENV),
                                "model": [m for m in (_split("model", model) or []) if os.path.isfile(m)]})


def _sizes(params: str | None, model: str | None) -> list[tuple[str, str]]:
    """(field, value) of each model size swept: ``params`` counts or ``model`` names, exactly one of the two."""
    from sizer.facade import InputError

    if (params is None) == (model is None):
        raise InputError("params", params, "--params or --model (comma-separated lists), one of the two")
    return [("params", p) for p in _split("params", params) or []] + [("model", m) for m in _split("model", model) or []]


def _check_rows(rows: int) -> None:
    """InputError where the sweep has more rows [1] than the core evaluates in one table."""
    from sizer.facade import MAX_EVALUATIONS, InputError

    if rows > MAX_EVALUATIONS:
        raise InputError("sweep", rows, f"at most {MAX_EVALUATIONS:,} combinations (the product of the list lengths "
                         "and the devices); narrow the sweep")


def _workloads(sizes: list[tuple[str, str]], amount_field: str, amounts: list[str], batches: Sequence[str | None],
               common: Mapping[str, object]) -> list[dict[str, object]]:
    """One workload per size x amount x batch, with the options every workload shares; unset fields left out."""
    workloads = []
    for size_field, size in sizes:
        for amount in amounts:
            for batch in batches:
                fields = {size_field: size, amount_field: amount, "batch_size": batch, **common}
                workloads.append({k: v for k, v in fields.items() if v is not None})
    return workloads


def _write(table: Any, format: str, out: str | None) -> None:
    """The table as CSV or JSON, to standard output or (atomically) to ``out``."""
    from sizer.facade import write_text

    if format == "csv":  # names from a user's catalog must not run as spreadsheet formulas
        text = table.map(output.spreadsheet_cell).to_csv(index=False)
    else:
        text = table.to_json(orient="records", indent=1)
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        write_text(out, text, "out")


def _print_table(table, pricing: str = "rent") -> None:
    """The fastest 30 rows; where they do not fit, a narrow layout with merged cells and ranges under their value."""
    shown = table[table.supported].sort_values("training_time_s_expected").head(30)
    wide, narrow = [], []
    for _, r in shown.iterrows():
        time = output.Range(r.training_time_s_low, r.training_time_s_expected, r.training_time_s_high, "s")
        rent = (None if r.cost_usd_expected != r.cost_usd_expected else
                output.Range(r.cost_usd_low, r.cost_usd_expected, r.cost_usd_high, "USD"))
        mark = " (b)" if pricing == "any" and r.price_basis == "buy" else ""
        memory = output.share(output.Value(r.memory_per_device_b, "B"), output.Value(r.device_memory_b, "B"))
        fits = "fits" if r.fits else "does not fit"
        wide.append((output.count(r.params), r["name"], r.precision, r["count"], r.sharding, output.rng(time), memory, fits,
                     output.rng(rent) + mark, r.bound))
        narrow.append((f"{output.count(r.params)}, {r.precision}, {r.sharding}", f"{r['count']} × {r['name']}",
                       output.rng(time, stacked=True), f"{memory}\n{fits}", output.rng(rent, stacked=True) + mark, r.bound))
    output.table("Sweep: the fastest 30 combinations",
                 ("params", "device", "precision", "count", "sharding", "training time", "memory need / has", "fits",
                  COST_HEAD[pricing], "bound"), wide,
                 narrow=(("params, precision, sharding", "count × device", "training time", "memory",
                          COST_HEAD[pricing], "bound"), narrow),
                 caption=f"{len(table)} combinations evaluated; ranges are expected (low–high); memory is needed / on the device; "
                         + ("(b): no rent price, the amortised purchase cost; " if pricing == "any" else
                            "a cost of '-' has no price of this basis from an offer that runs that count (--pricing any prices it); ")
                         +
                         "--format csv or --json for all of them.")


def register(app: typer.Typer) -> None:
    """Add ``sizer sweep`` to ``app``.

    Parameters
    ----------
    app : typer.Typer
        The command-line application.
    """
    app.command()(sweep)
