"""Tables for answers on the user's own hardware (``--have``) and for the changes that would make a job work."""
from __future__ import annotations

from . import output


def _cost(cost) -> str:
    if cost is None:
        return "-"
    return f"{output.rng(cost)} ({cost.price_basis})"


def _layout(layout: dict) -> str:
    if "weights" in layout:
        split = f"tp {layout['tp']}" if "tp" in layout else f"layer split over {layout['layer_split']}"
        return f"{split}, {layout['weights']}, KV {layout['kv_cache']}, batch {layout['batch']}"
    if "tp" in layout:  # the parts that are not the plain default, so the column stays narrow
        parts = [f"{k} {layout[k]}" for k in ("tp", "pp", "dp") if layout[k] > 1]
        parts += [f"ZeRO {layout['zero']}"] if layout["zero"] else []
        parts += [f"recompute {layout['recompute']}"] if layout["recompute"] != "none" else []
        return ", ".join(parts + [f"micro-batch {layout['micro_batch']:g} x {layout['accumulation']}"])
    return f"ZeRO {layout['zero']}, recompute {layout['recompute']}, micro-batch {layout['micro_batch']:g}"


def suggestions(items, title: str = "What would make it work (each evaluated again; cheapest first)") -> None:
    """The suggestion table, where there are suggestions."""
    if not items:
        return
    serving = any(s.decode_tokens_per_s is not None for s in items)
    rows = [(s.change, output.share(s.memory_per_device, s.device_memory) if s.device_memory else output.qty(s.memory_per_device),
             output.rng(s.decode_tokens_per_s if serving else s.training_time) if (s.decode_tokens_per_s or s.training_time) else "-",
             _cost(s.cost)) for s in items]
    output.table(title, ("change", "memory need / has", "tokens/s per user" if serving else "training time",
                         "cost per M tokens" if serving else "cost"), rows,
                 caption="rent: a cloud price; buy: the purchase amortised over 3 years plus energy. --json: the request "
                         "fields each change sets ('apply').")


def owned(result) -> None:
    """The answer for each hardware set of ``--have``, then what would make each that fails work."""
    serving = result.task == "inference"
    rows = []
    for o in result.options:
        speed = o.decode_tokens_per_s if serving else o.training_time
        rows.append((o.hardware, o.verdict, output.rng(speed) if speed is not None and o.fits else "-",
                     _cost(o.cost) if o.fits else "-", output.share(o.memory_per_device, o.device_memory)
                     if o.device_memory else output.qty(o.memory_per_device), f"{o.method}, {o.precision}; {_layout(o.layout)}"))
    output.table(f"On your hardware: {result.workload}",
                 ("hardware", "verdict", "tokens/s per user" if serving else "training time",
                  "cost per M tokens" if serving else "cost to run", "memory need / has", "method, precision, layout"), rows,
                 caption="Answered for the hardware given with --have only; the layout is the engine's choice on that count.")
    for o in result.options:
        if getattr(o, "recipe", None):
            output.key_values(f"Recipe on {o.hardware} (for the trainer's configuration)", [("recipe", o.recipe)])
        suggestions(o.suggestions, f"What would make it work on {o.hardware} (each evaluated again; same hardware "
                                   "first, then more devices; cheapest first)")
    output.assumptions(result.assumptions)
