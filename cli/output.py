"""Rendering results: JSON for machines, rich tables for people. No formulas live here.

Every number a person reads goes through one renderer: :func:`fmt` for plain numbers, :func:`qty`
for a quantity and :func:`rng` for an expected (low–high) range. Units are chosen for people at
this exit, through the one pint registry: currency never takes an SI prefix (``0.75 USD/h``, not
``750 mUSD/h``), time reads in ms, s, min, h or days as fits, bytes, FLOP and watts take the
decimal prefix that keeps the number short. Tables fit the terminal: ``COLUMNS`` when set (also
when piped), else the terminal's width, else :data:`PIPED_WIDTH`; a cell is wrapped, never cut.

>>> fmt(10437.2)
'10,440'
>>> rng(Range(low=9824, expected=10437, high=11131, unit="s"))
'2.899 (2.729–3.092) h'
"""
from __future__ import annotations

import math
import os
import re
import shutil
import sys
from dataclasses import dataclass
from typing import Any, Iterable

from pydantic import BaseModel

PIPED_WIDTH = 100
"""Columns when standard output is not a terminal and ``COLUMNS`` is not set."""

MIN_WIDTH = 30
SIGNIFICANT = 4
DASH = "–"  # en dash, between the ends of a range


@dataclass(frozen=True)
class Range:
    """An expected value with its low and high ends, in one unit (the shape of ``RangeOut``)."""

    low: float
    expected: float
    high: float
    unit: str = ""


@dataclass(frozen=True)
class Value:
    """A value with its unit (the shape of ``QuantityOut``), for numbers that arrive bare (table columns)."""

    value: float
    unit: str = ""


def emit_json(result: BaseModel | list | dict) -> None:
    from sizer.facade import ensure_finite

    ensure_finite(result)  # a NaN or infinity is an error (exit 2), never null with success
    if isinstance(result, BaseModel):
        text = result.model_dump_json(indent=2)
    else:
        import json

        text = json.dumps(result, indent=2, default=lambda o: o.model_dump(mode="json"))
    sys.stdout.write(text + "\n")


def emit_json_bytes(data: bytes) -> None:
    """JSON the core wrote and checked finite itself (:func:`sizer.results.finite_json`)."""
    sys.stdout.write(data.decode("utf-8") + "\n")


# --- numbers -------------------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _decimals(value: float, significant: int = SIGNIFICANT) -> int:
    """Digits after the point that leave ``significant`` significant digits (negative: round to tens...)."""
    if value == 0 or not math.isfinite(value):
        return 0
    return significant - 1 - math.floor(math.log10(abs(value)))


def _fixed(value: float, decimals: int) -> str:
    """``value`` rounded to ``decimals`` places (tens, hundreds when negative), with thousands separators."""
    if decimals <= 0:
        step = 10 ** (-decimals)
        return f"{round(value / step) * step:,.0f}"
    return f"{value:,.{decimals}f}"


def _scientific(value: float, significant: int = SIGNIFICANT) -> str:
    exponent = math.floor(math.log10(abs(value)))
    mantissa = f"{value / 10 ** exponent:.{significant - 1}f}".rstrip("0").rstrip(".")
    return f"{mantissa}×10{str(exponent).translate(_SUPERSCRIPT)}"


def _is_plain(value: float) -> bool:
    """Numbers written out in digits; beyond these a power of ten reads better."""
    return value == 0 or 1e-3 <= abs(value) < 1e15


def fmt(value: float, significant: int = SIGNIFICANT) -> str:
    """A number for people: 4 significant digits, thousands separators, no exponent in 0.001–10¹⁵.

    >>> fmt(1.044e4), fmt(0.0421), fmt(7e9), fmt(2.5e20), fmt(24.0)
    ('10,440', '0.0421', '7,000,000,000', '2.5×10²⁰', '24')
    """
    value = float(value)
    if not math.isfinite(value):  # a NaN or infinity is an error (exit 2), never printed with success
        from sizer.facade import SizerError

        raise SizerError(f"the inputs give a result that is not a finite number ({value}); use values in a realistic range")
    if not _is_plain(value):
        return _scientific(value, significant)
    text = _fixed(value, _decimals(value, significant))
    return text.rstrip("0").rstrip(".") if "." in text else text


def count(value: float) -> str:
    """A large count in words, as people say it ("7 billion"); smaller ones in digits.

    >>> count(7e9), count(1.3e12), count(125e6), count(50_000)
    ('7 billion', '1.3 trillion', '125 million', '50,000')
    """
    value = float(value)
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if math.isfinite(value) and size <= abs(value) < 1000 * size:
            return f"{fmt(value / size)} {word}"
    return fmt(value)


_EXPONENT_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")
_LONG_INTEGER = re.compile(r"(?<![\w.,-])\d{5,}(?![\w.,-])")


def humanise(text: str) -> str:
    """Numbers the core wrote into its sentences with an exponent ("1.3e9-parameter") or without separators, for people.

    >>> humanise("resnet50: 195 layers, 8.178e+09 forward FLOP per sample; 1.3e9-parameter, 2.5e-05 s")
    'resnet50: 195 layers, 8.178 billion forward FLOP per sample; 1.3 billion-parameter, 2.5×10⁻⁵ s'
    >>> humanise("4194304 tokens per step (2023, page c2878, commit 045df3bf56)")
    '4,194,304 tokens per step (2023, page c2878, commit 045df3bf56)'

    Digits that only look like a number with an exponent (a commit "@008e574") are left as written:
    a real figure is finite.

    >>> humanise("transformers@008e574:src")
    'transformers@008e574:src'
    """
    def rewrite(match: re.Match) -> str:
        value = float(match.group(0))
        if not math.isfinite(value) or (value != 0 and not 1e-300 < abs(value) < 1e300):
            return match.group(0)
        return count(value) if abs(value) >= 1e6 else fmt(value)

    return _LONG_INTEGER.sub(lambda match: f"{int(match.group(0)):,}", _EXPONENT_NUMBER.sub(rewrite, text))


def _fmt_range(low: float, expected: float, high: float) -> str:
    """``expected (low–high)``, all three at the resolution of the expected value."""
    if not all(map(math.isfinite, (low, expected, high))) or not all(map(_is_plain, (low, expected, high))):
        return f"{fmt(expected)} ({fmt(low)}{DASH}{fmt(high)})"
    decimals = _decimals(expected)
    while decimals > 0 and all(_fixed(v, decimals) == _fixed(v, decimals - 1) + ("0" if decimals > 1 else ".0")
                               for v in (low, expected, high)):
        decimals -= 1  # drop a trailing zero shared by all three
    return f"{_fixed(expected, decimals)} ({_fixed(low, decimals)}{DASH}{_fixed(high, decimals)})"


# --- units ---------------------------------------------------------------------------------------

_DISPLAY = {"d": "days", "a": "years"}
_PREFIXED_BASES = {  # dimension (as pint prints it) -> base unit that takes a decimal prefix
    "[information]": "B", "[information] / [time]": "B/s", "[computation]": "FLOP",
    "[computation] / [time]": "FLOP/s", "[mass] * [length] ** 2 / [time] ** 3": "W",
    "[mass] * [length] ** 2 / [time] ** 2": "Wh", "1 / [time]": "Hz",
}
_CURRENCY_UNITS = {"[currency]": "USD", "[currency] / [time]": "USD/hour"}


def _time_unit(seconds: float) -> str:
    magnitude = abs(seconds)
    if magnitude < 1:
        return "compact"
    from sizer.facade import unit_factor

    for limit, unit in ((120, "s"), (120, "minute"), (48, "hour"), (730, "day")):  # up to 120 s, 120 min, 48 h, 730 days
        limit *= unit_factor(unit, "s")
        if magnitude < limit:
            return unit
    return "year"


def people_unit(quantity) -> Any:
    """The same quantity in the unit a person reads best (pint does the conversion).

    >>> f"{people_unit(_Q(0.75, 'USD/hour')):~P}", f"{people_unit(_Q(3.1e13, 'FLOP/s')):~P}"
    ('0.75 USD/h', '31.0 TFLOP/s')
    """
    if quantity.magnitude == 0 or not math.isfinite(quantity.magnitude):
        return quantity
    dimension = str(quantity.dimensionality)
    if "[currency]" in dimension:
        target = _CURRENCY_UNITS.get(dimension)
        return quantity.to(target) if target else quantity
    if dimension == "[time]":
        unit = _time_unit(quantity.to("s").magnitude)
        return quantity.to("s").to_compact() if unit == "compact" else quantity.to(unit)
    base = _PREFIXED_BASES.get(dimension)
    if base is not None:
        compact = quantity.to(base).to_compact()
        # Bytes stay in GB up to 10,000 GB: memory sizes compare best in one unit.
        if base == "B" and 1 <= quantity.to("GB").magnitude < 10_000:
            return quantity.to("GB")
        return compact
    return quantity


def _unit_text(units) -> str:
    text = f"{units:~P}"
    return _DISPLAY.get(text, text)


def _as_quantity(value: float, unit: str):
    from sizer.facade import Quantity

    return Quantity(value, unit or "dimensionless")


def qty(q: Any) -> str:
    """'value unit' of a QuantityOut-like object (``.value``, ``.unit``) or a pint quantity; '-' when absent.

    >>> qty(_Q(0.75, "USD/hour")), qty(_Q(1.5e-3, "s")), qty(_Q(3, "day")), qty(_Q(2.5e20, "FLOP"))
    ('0.75 USD/h', '1.5 ms', '3 days', '250 EFLOP')
    """
    if q is None:
        return "-"
    quantity = q if hasattr(q, "dimensionality") else _as_quantity(q.value, q.unit)
    if str(quantity.units) in ("", "dimensionless"):
        return fmt(quantity.magnitude)
    shown = people_unit(quantity)
    text = fmt(shown.magnitude)
    return f"{text} {_unit_text(shown.units)}".strip()


def rng(r: Any, stacked: bool = False) -> str:
    """'expected (low–high) unit' of a RangeOut-like object, '-' when absent; ``stacked`` puts the range on a second line.

    >>> rng(Range(low=9824, expected=10437, high=11131, unit=""))
    '10,440 (9,820–11,130)'
    """
    if r is None:
        return "-"
    if not r.unit or r.unit == "dimensionless":
        text, unit = _fmt_range(r.low, r.expected, r.high), ""
    else:
        shown = people_unit(_as_quantity(r.expected, r.unit))
        low, high = (_as_quantity(v, r.unit).to(shown.units).magnitude for v in (r.low, r.high))
        text, unit = _fmt_range(low, shown.magnitude, high), _unit_text(shown.units)
    if not stacked:
        return f"{text} {unit}".strip()
    expected, rest = text.split(" ", 1)
    return f"{expected} {unit}".strip() + "\n" + rest


def share(need: Any, has: Any) -> str:
    """'need / has unit' of two quantities of one kind, in the unit chosen for ``has`` ("25.1 / 192 GB")."""
    if need is None or has is None:
        return qty(need) if has is None else "- / " + qty(has)
    total = people_unit(_as_quantity(has.value, has.unit))
    part = _as_quantity(need.value, need.unit).to(total.units).magnitude
    return f"{fmt(part, 3)} / {fmt(total.magnitude, 3)} {_unit_text(total.units)}"


def _Q(value: float, unit: str):  # used by the doctests
    return _as_quantity(value, unit)


# --- terminal ------------------------------------------------------------------------------------

def width() -> int:
    """Columns to render for: ``COLUMNS`` when set (also when piped), else the terminal's, else :data:`PIPED_WIDTH`."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), MIN_WIDTH)
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((PIPED_WIDTH, 24)).columns, MIN_WIDTH)
    return PIPED_WIDTH


def console(stderr: bool = False):
    from rich.console import Console

    return Console(soft_wrap=False, width=width(), stderr=stderr)


def fit_widths(cells: list[list[str]], available: int) -> list[int] | None:
    """Content widths for columns sharing ``available`` cells: each at least its longest word, the rest shared by need.

    ``cells`` holds each column's texts, header first. None when every column fits at its natural width,
    or when even the longest words do not fit (then the table folds them).

    >>> fit_widths([["device", "NVIDIA GeForce RTX 4090"], ["time", "17.78 (16.74–18.97) days"]], 40)
    [16, 24]
    """
    from rich.cells import cell_len

    lines = [[line for text in column for line in text.splitlines() or [""]] for column in cells]
    widest = [max(cell_len(line) for line in column) for column in lines]
    longest_word = [max((cell_len(word) for line in column for word in line.split()), default=1) for column in lines]
    if sum(widest) <= available or sum(longest_word) > available:
        return None
    widths, spare = list(longest_word), available - sum(longest_word)
    # Columns that need little more room get all of it first (so they stay on one line); the others
    # share what is left in proportion to what they would need, and wrap between words.
    wrapping = sorted(range(len(widths)), key=lambda i: widest[i] - longest_word[i])
    while wrapping and widest[wrapping[0]] - widths[wrapping[0]] <= spare:
        index = wrapping.pop(0)
        spare -= widest[index] - widths[index]
        widths[index] = widest[index]
    wants = {i: widest[i] - widths[i] for i in wrapping}
    for index in wrapping:
        widths[index] += spare * wants[index] // sum(wants.values())
    return widths


# Characters that drive a terminal rather than print: C0 and C1 controls (ESC starts colour, cursor
# and title sequences) and the bidirectional overrides that reorder what is shown.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    r"""``text`` safe to print: control characters shown as escapes (``\x1b``) and rich markup escaped,
    so that a name from a catalog file can neither colour nor move the terminal nor restyle a table.

    >>> terminal_text("A100\x1b[31m [bold]x")
    'A100\\x1b[31m \\[bold]x'
    """
    from rich.markup import escape

    return escape(control_escaped(text))


def control_escaped(text: str) -> str:
    r"""``text`` with its control and direction-changing characters written as escapes (``\x1b``), so
    that a name read from a file reaches a terminal or a spreadsheet as text, never as its bytes.

    >>> control_escaped("A100\x1b[2J\u202e")
    'A100\\x1b[2J\\u202e'
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)


def spreadsheet_cell(value: Any) -> Any:
    r"""A CSV cell a spreadsheet will not run as a formula: text starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading apostrophe (OWASP's CSV-injection advice); control
    characters are written as escapes, as in a table (:func:`control_escaped`); numbers are left as they are.

    >>> spreadsheet_cell("=HYPERLINK(1)"), spreadsheet_cell("H100 SXM"), spreadsheet_cell(-1.5)
    ("'=HYPERLINK(1)", 'H100 SXM', -1.5)
    >>> spreadsheet_cell("A100\x1b[31m")
    'A100\\x1b[31m'
    """
    if not isinstance(value, str):
        return value
    if value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        value = "'" + value
    return control_escaped(value)


def _print_table(title: str | None, headers: list[str] | None, rows: list[list[str]], caption: str | None = None,
                 bold_first: bool = False) -> None:
    from rich.table import Table

    columns = len(headers) if headers else max((len(row) for row in rows), default=1)
    title, caption = (terminal_text(humanise(text)) if text else text for text in (title, caption))
    rows = [[terminal_text(humanise(cell)) for cell in row] for row in rows]
    headers = [terminal_text(h) for h in headers] if headers else headers
    t = Table(title=title, caption=caption, title_justify="left", caption_justify="left", show_header=bool(headers))
    texts = [[(headers[i] if headers else "")] + [row[i] for row in rows] for i in range(columns)]
    # Borders: one rule between and around the columns, one space of padding on each side of a cell.
    widths = fit_widths(texts, width() - (columns + 1) - 2 * columns) or [None] * columns
    for index in range(columns):
        t.add_column(headers[index] if headers else None, overflow="fold", width=widths[index],
                     style="bold" if bold_first and index == 0 else None)
    for row in rows:
        t.add_row(*row)
    console().print(t)


Layout = tuple[Iterable[str], Iterable[Iterable[Any]]]


def _natural_width(headers: list[str], rows: list[list[str]]) -> int:
    from rich.cells import cell_len

    widest = [max(cell_len(line) for text in [headers[i]] + [row[i] for row in rows] for line in text.splitlines() or [""])
              for i in range(len(headers))]
    return sum(widest) + 3 * len(headers) + 1


def table(title: str, columns: Iterable[str], rows: Iterable[Iterable[Any]], caption: str | None = None,
          narrow: Layout | None = None) -> None:
    """A table that fits :func:`width`: cells wrap between words and fold a word too long for any column, never cut.

    ``narrow`` is a second layout (fewer, merged columns) used when the first does not fit on one line per row.
    """
    layouts = [(columns, rows)] + ([narrow] if narrow is not None else [])
    layouts = [([str(c) for c in heads], [[str(cell) for cell in row] for row in body]) for heads, body in layouts]
    chosen = next((layout for layout in layouts if _natural_width(*layout) <= width()), layouts[-1])
    _print_table(title, *chosen, caption=caption)


def key_values(title: str, pairs: Iterable[tuple[str, Any]]) -> None:
    _print_table(title, None, [[str(key), str(value)] for key, value in pairs], bold_first=True)


def assumptions(items: Iterable[Any]) -> None:
    table("Assumptions", ("assumption", "value", "source"), ((a.name, a.value, a.source) for a in items))


def progress(label: str):
    """A rich progress bar on standard error (so piped output stays clean): ``with progress("profile") as p: ...``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(SpinnerColumn(), TextColumn(f"[bold]{label}[/bold]"), BarColumn(bar_width=20), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("{task.description}"), console=console(stderr=True), transient=False)


def say(text: str) -> None:
    """One line of text for people on standard output, wrapped between words to :func:`width`."""
    console().print(terminal_text(humanise(text)), highlight=False)


def warn(message: str) -> None:
    """A warning the reader must not miss: bold, on standard output beside the table it concerns."""
    console().print(f"[bold red]warning:[/] {terminal_text(message)}")
