"""Rendering results: JSON for machines, rich tables for people. No formulas live here."""
from __future__ import annotations

import math
import sys
from typing import Any, Iterable

from pydantic import BaseModel


def emit_json(result: BaseModel | list | dict) -> None:
    from sizer.results import ensure_finite

    ensure_finite(result)  # a NaN or infinity is an error (exit 2), never null with success
    if isinstance(result, BaseModel):
        text = result.model_dump_json(indent=2)
    else:
        import json

        text = json.dumps(result, indent=2, default=lambda o: o.model_dump(mode="json"))
    sys.stdout.write(text + "\n")


def fmt(value: float) -> str:
    """A number with 4 significant digits, in engineering-friendly form; NaN or infinity is an error (exit 2)."""
    if not math.isfinite(value):
        from sizer.errors import SizerError

        raise SizerError(f"the inputs give a result that is not a finite number ({value}); use values in a realistic range")
    if value == 0:
        return "0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e6:
        return f"{value:,.4g}" if magnitude >= 1 else f"{value:.4g}"
    return f"{value:.3e}"


def _readable_unit(value: float, unit: str) -> tuple[float, str]:
    """A prefixed unit that keeps the number short ("1.176e13 FLOP/s" -> "11.76 TFLOP/s")."""
    if not unit or unit in ("USD", "hour", "day") or value == 0 or (unit == "s" and abs(value) >= 1):
        return 1.0, unit
    from sizer.units import Quantity

    compact = Quantity(value, unit).to_compact()
    return float(compact.magnitude) / value, f"{compact.units:~P}"


def qty(q: Any) -> str:
    """'value unit' of a QuantityOut-like object, or '-' when absent."""
    if q is None:
        return "-"
    factor, unit = _readable_unit(q.value, q.unit)
    return f"{fmt(q.value * factor)} {unit}".strip()


def rng(r: Any) -> str:
    """'expected (low-high) unit' of a RangeOut-like object."""
    if r is None:
        return "-"
    factor, unit = _readable_unit(r.expected, r.unit)
    return f"{fmt(r.expected * factor)} ({fmt(r.low * factor)}-{fmt(r.high * factor)}) {unit}".strip()


def console():
    from rich.console import Console

    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else 160)


def table(title: str, columns: Iterable[str], rows: Iterable[Iterable[Any]], caption: str | None = None) -> None:
    from rich.table import Table

    t = Table(title=title, caption=caption, title_justify="left", caption_justify="left")
    for column in columns:
        t.add_column(column)
    for row in rows:
        t.add_row(*(str(cell) for cell in row))
    console().print(t)


def key_values(title: str, pairs: Iterable[tuple[str, Any]]) -> None:
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_header=False)
    t.add_column(style="bold")
    t.add_column()
    for key, value in pairs:
        t.add_row(str(key), str(value))
    console().print(t)


def assumptions(items: Iterable[Any]) -> None:
    table("Assumptions", ("assumption", "value", "source"), ((a.name, a.value, a.source) for a in items))
