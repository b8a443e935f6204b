"""One pint registry for the whole project, and bounded parsing of user-given quantities.

Custom units (see pint's "defining units"): ``FLOP`` as its own dimension so that FLOP/s
can never be mixed up with Hz, ``FLOPS = FLOP / s``, and ``USD`` as a currency dimension.
Bytes come with pint's SI (kB, MB, GB) and IEC (KiB, MiB, GiB) prefixes.

User strings are never handed to pint's expression evaluator as they are: :func:`parse_quantity`
first checks them against a small grammar (a decimal number, then a unit made of names,
``*``, ``/`` and small integer powers), bounded in length, so that ``10**10**10 Hz`` or a
kilobyte-long string is refused before anything is evaluated.

>>> parse_quantity("clock", "1.531 GHz", "[frequency]").to("MHz")
<Quantity(1531.0, 'megahertz')>
"""
from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from importlib import resources
from typing import Annotated, Any, ParamSpec, TypeVar

import pint
from pint.util import UnitsContainer
from pydantic import GetCoreSchemaHandler, PlainSerializer, PlainValidator, ValidationInfo, WithJsonSchema
from pydantic_core import PydanticCustomError, core_schema

from sizer.diskcache import cached, key_of
from sizer.errors import InputError
from sizer.memo import clear, registered_cache

Params = ParamSpec("Params")
Result = TypeVar("Result")


def _build_registry() -> pint.UnitRegistry[float]:
    """pint's own definitions, with ``bit`` given its own dimension.

    pint defines ``bit = []`` (dimensionless), which would let "24 GB" pass as a plain count;
    here bit and byte get the dimension ``[information]``. Loading the edited text once is
    also faster than pint's default start-up.
    """
    files = resources.files("pint")
    text = (files / "default_en.txt").read_text(encoding="utf-8")
    text = text.replace("\nbit = []", "\nbit = [information]")
    text = text.replace("@import constants_en.txt", (files / "constants_en.txt").read_text(encoding="utf-8"))
    registry: pint.UnitRegistry[float] = pint.UnitRegistry(None, cache_folder=None)
    try:
        # What load_definitions does, with the parsed text kept in sizer's disk cache: parsing
        # is most of a registry's start-up, and the key covers the text and pint's version.
        parser = registry._def_parser
        if parser is None:
            raise AttributeError("pint registry without a definition parser")  # handled below
        parse = parser.parse_string
        project = cached("pint-definitions", key_of(pint.__version__, text), lambda: parse(text))
        definitions = list(parser.iter_parsed_project(project))
    except Exception:  # a pint whose internals differ: parse the ordinary way
        registry.load_definitions(text.splitlines())
        return registry
    for definition in definitions:
        registry._helper_dispatch_adder(definition)
    return registry


def _memoise_unit_parsing(registry: pint.UnitRegistry[float]) -> None:
    """Remember parsed unit expressions ("FLOP/s", "USD/hour"), which pint re-parses every time.

    pint caches only single unit names; a recommendation converts thousands of quantities to a
    handful of compound units, and parsing them was most of its time. A later ``define`` or
    ``load_definitions`` empties the memo, so it can never answer from stale definitions.
    """
    global _pint_parse_units
    _pint_parse_units = registry.parse_units_as_container

    def parse_units_as_container(input_string: str, as_delta: bool | None = None,
                                 case_sensitive: bool | None = None) -> UnitsContainer:
        if isinstance(input_string, str) and len(input_string) <= 200:
            return _parse_units(input_string, as_delta, case_sensitive)
        return _pint_parse_units(input_string, as_delta, case_sensitive)

    def forgetting(method: Callable[Params, Result]) -> Callable[Params, Result]:
        @functools.wraps(method)
        def wrapper(*args: Params.args, **kwargs: Params.kwargs) -> Result:
            clear("sizer.units._parse_units")
            return method(*args, **kwargs)
        return wrapper

    # Replaced on this one registry object (pint has no hook for it); setattr says so to the type checker.
    setattr(registry, "parse_units_as_container", parse_units_as_container)  # noqa: B010 (a method replaced: assignment would not type-check)
    setattr(registry, "define", forgetting(registry.define))  # noqa: B010 (a method replaced: assignment would not type-check)
    setattr(registry, "load_definitions", forgetting(registry.load_definitions))  # noqa: B010 (a method replaced: assignment would not type-check)


_pint_parse_units: Callable[[str, bool | None, bool | None], UnitsContainer]  # the registry's own parse


@registered_cache()
def _parse_units(input_string: str, as_delta: bool | None, case_sensitive: bool | None) -> UnitsContainer:
    return _pint_parse_units(input_string, as_delta, case_sensitive)


ureg = _build_registry()
ureg.define("FLOP = [computation]")
ureg.define("@alias FLOP = flop")
ureg.define("FLOPS = FLOP / second")
ureg.define("@alias FLOPS = flops")
ureg.define("USD = [currency]")
ureg.define("@alias USD = usd = dollar")
ureg.define("sample = [samples]")
ureg.define("token = sample")
ureg.define("sequence = sample")
ureg.define("image = sample")
ureg.define("step = [steps]")
_memoise_unit_parsing(ureg)
Quantity = ureg.Quantity
# pint reads a pickled quantity back in its application registry: this one, so that a quantity in FLOP or USD
# crosses processes (a service hands a job to its worker processes) and reads back there as it was
pint.set_application_registry(ureg)  # type: ignore[no-untyped-call]  # pint leaves it untyped

MAX_TEXT_LENGTH = 64
# Bounds on a user's value, checked after conversion to SI base units (seconds, bits, FLOP, USD,
# kg m^2 s^-3 for watts): "1e30 Yrad**3*Yrad**3*..." must not become infinity, and 1e-300 is no
# batch. Every real figure lies well inside: 3e23 FLOP of training compute, 1 ps, 4e-8 USD/J.
MAX_MAGNITUDE = 1e30
MIN_MAGNITUDE = 1e-30
MAX_POWER = 3

_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?"  # ASCII digits: "１.５" is refused
_NAME = r"[A-Za-z_µΩ°%][A-Za-z_0-9µ]*"
_FACTOR = rf"{_NAME}(?:\s*(?:\*\*|\^)\s*-?[0-{MAX_POWER}])?"
_UNIT = rf"{_FACTOR}(?:\s*[*/]\s*{_FACTOR})*"
_QUANTITY_RE = re.compile(rf"^\s*(?P<number>{_NUMBER}|nan|inf|infinity)?\s*(?P<unit>{_UNIT})?\s*$",
                          re.IGNORECASE)

DIMENSION_WORDS = {
    "[frequency]": "a frequency such as '1.5 GHz'",
    "[time]": "a duration such as '7 d' or '36 h'",
    "[information]": "an amount of memory such as '24 GiB' or '80 GB'",
    "[information] / [time]": "a bandwidth such as '900 GB/s'",
    "[computation]": "an amount of compute such as '3.15e23 FLOP'",
    "[computation] / [time]": "a compute rate such as '19.5 TFLOPS'",
    "[currency]": "an amount of money such as '1500 USD', '$1500' or '1.5k USD'",
    "[currency] / [time]": "a price per time such as '2.5 USD/hour'",
    "[currency] / [energy]": "an energy price such as '0.12 USD/kWh'",
    "[power]": "a power such as '300 W'",
    "": "a plain number",
}


@registered_cache()
def describe_dimension(dimension: str) -> str:
    """Human wording of a pint dimensionality string, for error messages.

    Parameters
    ----------
    dimension : str
        A pint dimensionality such as ``"[frequency]"`` or ``"[currency] / [time]"``; ``""`` for a
        plain number.

    Returns
    -------
    str
        The words with an example ("a frequency such as '1.5 GHz'") where :data:`DIMENSION_WORDS`
        has the dimension (in any equivalent spelling), else "a quantity of dimension ...".
    """
    key = str(ureg.get_dimensionality(dimension)) if dimension else ""
    for known, words in DIMENSION_WORDS.items():
        if known and str(ureg.get_dimensionality(known)) == key:
            return words
    return given if (given := DIMENSION_WORDS.get(dimension)) else f"a quantity of dimension {dimension}"


def _check_magnitude(field: str, raw: object, value: float, expected: str,
                     allow_zero: bool, allow_negative: bool, base_unit: str = "") -> None:
    """Refuse a value (in SI base units, ``base_unit``) that is not finite, beyond the bounds, negative or zero."""
    if math.isnan(value) or math.isinf(value):
        raise InputError(field, raw, f"a finite number ({expected})")
    if value < 0 and not allow_negative:
        raise InputError(field, raw, f"a positive value ({expected})")
    if value == 0 and not allow_zero:
        raise InputError(field, raw, f"a value above zero ({expected})")
    if value != 0 and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        unit = f" in SI base units ({base_unit})" if base_unit else ""
        raise InputError(field, raw, f"a magnitude from {MIN_MAGNITUDE:g} to {MAX_MAGNITUDE:g}{unit} ({expected})")


def _base_magnitude(field: str, raw: object, quantity: pint.Quantity[float], expected: str) -> tuple[float, str]:
    """The magnitude of ``quantity`` in SI base units, and those units; an overflow is an InputError."""
    try:
        base = quantity.to_root_units()
        value = float(base.magnitude)
    except (OverflowError, ZeroDivisionError, ArithmeticError):
        raise InputError(field, raw, f"a finite number ({expected})") from None
    return value, format(base.units, "~P")


def parse_quantity(field: str, raw: Any, dimension: str, *, default_unit: str | None = None,
                   allow_zero: bool = False, allow_negative: bool = False) -> pint.Quantity[float]:
    """Parse a user value into a Quantity of the given dimensionality, or raise InputError.

    Text is checked against a small grammar (a decimal number, then a unit of names, ``*``, ``/``
    and powers up to 3), at most :data:`MAX_TEXT_LENGTH` characters, before pint sees it; the value
    in SI base units must be finite and within :data:`MIN_MAGNITUDE` to :data:`MAX_MAGNITUDE`.

    Parameters
    ----------
    field : str
        The request field the value came from, named in the error.
    raw : Any
        A string with units ("1.531 GHz", "$2.5/h"), a pint Quantity, a ``{"value", "unit"}``
        mapping, or a bare number when ``default_unit`` is given.
    dimension : str
        A pint dimensionality such as ``"[frequency]"``; ``""`` means dimensionless.
    default_unit : str or None
        The unit of a bare number (``"s"``); None: a bare number is refused for a dimension.
    allow_zero : bool
        Whether zero is accepted.
    allow_negative : bool
        Whether a negative value is accepted.

    Returns
    -------
    pint.Quantity
        The value in the unit given, in the project's registry (:data:`ureg`).

    Raises
    ------
    InputError
        A malformed value, a wrong dimension, or a magnitude out of bounds; the message gives an
        example of what is expected.

    Examples
    --------

    >>> parse_quantity("memory", "24 GiB", "[information]").to("byte").magnitude
    25769803776.0
    >>> parse_quantity("clock", "5 m", "[frequency]")
    Traceback (most recent call last):
    ...
    sizer.errors.InputError: clock: got '5 m'; expected a frequency such as '1.5 GHz'
    """
    if type(raw) is str and len(raw) <= MAX_TEXT_LENGTH:  # catalog figures are parsed again and again
        return _parse_known_text(field, raw, dimension, default_unit, allow_zero, allow_negative)
    return _parse_quantity(field, raw, dimension, default_unit, allow_zero, allow_negative)


def _parse_quantity(field: str, raw: Any, dimension: str, default_unit: str | None, allow_zero: bool,
                    allow_negative: bool) -> pint.Quantity[float]:
    expected = describe_dimension(dimension)
    if isinstance(raw, pint.Quantity):
        quantity = raw if raw._REGISTRY is ureg else Quantity(raw.magnitude, str(raw.units))
    elif isinstance(raw, dict):
        if set(raw) != {"value", "unit"}:
            raise InputError(field, raw, f"an object with exactly 'value' and 'unit' ({expected})")
        value, unit = raw["value"], raw["unit"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(unit, str):
            raise InputError(field, raw, f"a numeric 'value' and a string 'unit' ({expected})")
        quantity = _from_parts(field, raw, _as_float(field, raw, value, expected), unit, expected)
    elif isinstance(raw, bool) or raw is None:
        raise InputError(field, raw, expected)
    elif isinstance(raw, (int, float)):
        if default_unit is None and dimension:
            raise InputError(field, raw, f"{expected}, with its unit")
        quantity = _from_parts(field, raw, _as_float(field, raw, raw, expected), default_unit or "", expected)
    elif isinstance(raw, str):
        quantity = _parse_text(field, raw, expected, default_unit)
    else:
        raise InputError(field, raw, expected)
    if not _has_dimension(quantity, dimension):
        raise InputError(field, raw, expected)
    _check_magnitude(field, raw, float(quantity.magnitude), expected, allow_zero, allow_negative)
    value, base_unit = _base_magnitude(field, raw, quantity, expected)
    _check_magnitude(field, raw, value, expected, allow_zero, allow_negative, base_unit)
    return quantity


# Only successful parses are kept (an error is raised afresh each time); the field only names errors.
_parse_known_text = registered_cache(key=lambda field, raw, dimension, default_unit, allow_zero, allow_negative: (
    raw, dimension, default_unit, allow_zero, allow_negative))(_parse_quantity)


def _as_float(field: str, raw: object, value: int | float, expected: str) -> float:
    """``float(value)``; an integer beyond the float range (10**400) is an InputError, not OverflowError."""
    try:
        return float(value)
    except OverflowError:
        raise InputError(field, raw, f"a magnitude below {MAX_MAGNITUDE:g} ({expected})") from None


def _has_dimension(quantity: pint.Quantity[float], dimension: str) -> bool:
    if not dimension:
        return quantity.dimensionless
    return quantity.dimensionality == ureg.get_dimensionality(dimension)


def _from_parts(field: str, raw: object, value: float, unit: str, expected: str) -> pint.Quantity[float]:
    if not math.isfinite(value):
        raise InputError(field, raw, f"a finite number ({expected})")
    if len(unit) > MAX_TEXT_LENGTH or not re.fullmatch(rf"\s*(?:{_UNIT})?\s*", unit):
        raise InputError(field, raw, expected)
    try:
        units = ureg.parse_units(unit) if unit.strip() else ureg.dimensionless
    except (pint.errors.PintError, AttributeError, TypeError, ValueError, SyntaxError):
        # a word that is no unit: for a count, no unit is wanted at all ("a known unit (a plain number)" said both)
        if expected == DIMENSION_WORDS[""]:
            raise InputError(field, raw, "a number such as 1536, 7e9, 7B or '70 billion'") from None
        raise InputError(field, raw, f"{expected}; '{unit.strip()}' is not a unit sizer knows") from None
    return Quantity(value, units)


# Money as people write it. The words for thousand, million and billion become pint's SI prefixes,
# so no scale factor is written here; a lower-case "m" is left alone (it is milli to pint).
_MONEY_PREFIX = {"k": "k", "K": "k", "M": "M", "B": "G", "bn": "G", "thousand": "k", "million": "M", "billion": "G"}
# thousands grouped by commas, as sizer prints money ("2,000,000 USD"): groups of exactly three digits
_GROUPED = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?"
_MONEY_RE = re.compile(rf"^\s*(?P<dollar>\$)?\s*(?P<number>{_GROUPED}|{_NUMBER})\s*"
                       rf"(?P<scale>thousand|million|billion|k|K|M|bn|B)?"
                       rf"\s*(?P<currency>USD|usd|dollars?)?(?P<per>\s*/\s*{_UNIT})?\s*$")


def money_text(text: str) -> str:
    """Money written as people write it ("$5000", "5k USD", "$2.5/h") in the registry's own form.

    Parameters
    ----------
    text : str
        A value as the user wrote it.

    Returns
    -------
    str
        The same amount with ``USD`` as its unit (``"5 kUSD"``), or ``text`` unchanged when it is
        not money written that way.

    Notes
    -----
    A leading ``$`` means USD; a thousand, million or billion written ``k``, ``M``, ``B``,
    ``bn`` or as the word right after the number (with ``$`` or ``USD``) becomes the SI prefix k,
    M or G; thousands grouped by commas ("2,000,000 USD", as sizer prints money) lose their commas.
    Any other text is returned unchanged, so this only ever widens what parses. An amount with no
    currency at all ("2 million", "2,000,000") is read as USD where a field takes money, since every
    price sizer knows is in USD.

    >>> money_text("$5000"), money_text("5k USD"), money_text("$1.2M"), money_text("$2.5/h")
    ('5000 USD', '5 kUSD', '1.2 MUSD', '2.5 USD/h')
    >>> money_text("2,000,000 USD"), money_text("2 million USD"), money_text("$1,500.50")
    ('2000000 USD', '2 MUSD', '1500.50 USD')
    >>> parse_quantity("budget", "5k USD", "[currency]").to("USD").magnitude
    5000.0
    """
    match = _MONEY_RE.match(text)
    grouped = "," in (match["number"] if match else "")
    if not match or not (match["dollar"] or (match["currency"] and (match["scale"] or grouped))):
        return text
    prefix = _MONEY_PREFIX[match["scale"]] if match["scale"] else ""
    per = re.sub(r"\s+", "", match["per"] or "")
    return f"{match['number'].replace(',', '')} {prefix}USD{per}"


def _parse_text(field: str, raw: str, expected: str, default_unit: str | None) -> pint.Quantity[float]:
    if len(raw) > MAX_TEXT_LENGTH:
        raise InputError(field, raw, f"at most {MAX_TEXT_LENGTH} characters ({expected})")
    money = money_text(raw)
    if money == raw and expected == DIMENSION_WORDS["[currency]"] and (bare := _MONEY_RE.match(raw)) and not bare["currency"]:
        # "2 million", "2,000,000": an amount of money with no currency named is in USD, the one
        # currency every catalog price and every answer uses (issue 42 lists "2 million")
        money = money_text(f"{raw.strip()} USD")
    match = _QUANTITY_RE.match(money)
    if not match or not (match["number"] or match["unit"]):
        raise InputError(field, raw, expected)
    number = match["number"]
    value = float(number) if number else 1.0
    unit = match["unit"] or default_unit or ""
    if match["unit"] is None and default_unit is None and expected != DIMENSION_WORDS[""]:
        raise InputError(field, raw, f"{expected}, with its unit")
    return _from_parts(field, raw, value, unit, expected)


# Multipliers people write after a count ("7B", "125M", "70 billion", "1.5T"). A lower-case
# "m" is a million here, as in model names (gpt3-125m, mpt-125m): a count has no unit, so it
# cannot mean metre, and milli- of a parameter count means nothing. "B" is a billion (10^9,
# short scale) rather than a byte for the same reason; "G" is not taken.
COUNT_MULTIPLIERS: dict[str, int] = {
    "k": 10**3, "thousand": 10**3,
    "m": 10**6, "mn": 10**6, "million": 10**6,
    "b": 10**9, "bn": 10**9, "billion": 10**9,
    "t": 10**12, "tn": 10**12, "trillion": 10**12,
}
_COUNT_RE = re.compile(rf"^\s*(?P<number>{_NUMBER})\s*(?P<suffix>[A-Za-z]+)\s*$")
# A count with its thousands grouped by commas, as sizer prints counts ("1,300,000,000"): read without them.
_GROUPED_COUNT_RE = re.compile(rf"^\s*(?P<number>{_GROUPED})\s*(?P<suffix>[A-Za-z]*)\s*$")
# A count written as a plain decimal number ("7e9", "1536", as the command line passes every count): read by float(),
# as the unit parser reads the number of a text, without pint (whose first parse costs ~1.5 ms of a command)
_PLAIN_COUNT_RE = re.compile(rf"^\s*(?P<number>{_NUMBER})\s*$")


def parse_count(field: str, raw: Any, *, allow_zero: bool = False, integer: bool = False) -> float:
    """Parse a dimensionless count (parameters, samples, tokens, epochs), or raise InputError.

    Parameters
    ----------
    field : str
        The request field the value came from, named in the error.
    raw : Any
        A number, a numeric string, or a number with a multiplier as people write counts
        (:data:`COUNT_MULTIPLIERS`: ``"7B"``, ``"125m"``, ``"70 billion"``, ``"1.5 trillion"``,
        ``"20k"``; case does not matter).
    allow_zero : bool
        Whether zero is accepted.
    integer : bool
        Whether the count must be a whole number.

    Returns
    -------
    float
        The count [1], positive (or zero where allowed) and at most :data:`MAX_MAGNITUDE`.

    Examples
    --------

    >>> parse_count("params", "175e9"), parse_count("params", "7B"), parse_count("params", "125m")
    (175000000000.0, 7000000000.0, 125000000.0)
    >>> parse_count("params", "70 billion"), parse_count("params", "1,300,000,000")
    (70000000000.0, 1300000000.0)
    """
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = _as_float(field, raw, raw, "a plain number")  # fast path: plain numbers need no unit parsing
        _check_magnitude(field, raw, value, "a plain number", allow_zero, False)
        if integer and value != int(value):
            raise InputError(field, raw, "a whole number")
        return value
    if isinstance(raw, str) and len(raw) <= MAX_TEXT_LENGTH and (grouped := _GROUPED_COUNT_RE.match(raw)):
        raw = grouped["number"].replace(",", "") + grouped["suffix"]  # "1,300,000,000" as sizer prints a count
    if isinstance(raw, str) and len(raw) <= MAX_TEXT_LENGTH and (match := _COUNT_RE.match(raw)):
        multiplier = COUNT_MULTIPLIERS.get(match["suffix"].lower())
        if multiplier is not None:  # other words ("percent") go on to pint's dimensionless units
            value = float(match["number"]) * multiplier
            _check_magnitude(field, raw, value, "a plain number", allow_zero, False)
            if integer and value != int(value):
                raise InputError(field, raw, "a whole number")
            return value
    if isinstance(raw, str) and len(raw) <= MAX_TEXT_LENGTH and (plain := _PLAIN_COUNT_RE.match(raw)):
        value = float(plain["number"])  # the same number pint's path gives; one it refuses goes on, for its error
        if (MIN_MAGNITUDE <= value <= MAX_MAGNITUDE or (value == 0 and allow_zero)) and not (integer and value != int(value)):
            return value
    value = parse_quantity(field, raw, "", default_unit="", allow_zero=allow_zero).to("").magnitude
    _check_magnitude(field, raw, float(value), "a plain number", allow_zero, False)
    if integer and value != int(value):
        raise InputError(field, raw, "a whole number")
    return float(value)


def quantity_json(quantity: pint.Quantity[float], unit: str | None = None) -> dict[str, Any]:
    """The JSON form of a quantity: ``{"value": number, "unit": "pint unit"}``.

    Parameters
    ----------
    quantity : pint.Quantity
        The quantity to write [its own unit].
    unit : str or None
        The unit to write it in; None keeps its own.

    Returns
    -------
    dict[str, Any]
        ``value`` as a float and ``unit`` in pint's short form (``"GB"``, ``"USD / h"``).
    """
    if unit is not None:
        quantity = quantity.to(unit)
    return {"value": float(quantity.magnitude), "unit": format(quantity.units, "~")}


# ------------------------------------------------------------------------------------------- request fields
# A request's counts and quantities are parsed here, once, where the request model is built (pydantic calls
# these validators); the core reads the typed values (a float count, a pint Quantity), never the text again.
# A bad value is refused with the field named, as the parsers word it, in an error pydantic collects with the
# request's other bad fields (sizer.workloads.field_check orders them as a form shows them).

TEXT_ERROR = "text_value"  # the type of pydantic's error for a count or quantity its parser refused


def refusal(error: InputError) -> PydanticCustomError:
    """A parser's :class:`~sizer.errors.InputError` as pydantic's error of the field: the same message, of type
    :data:`TEXT_ERROR`, so the edge can tell a refused text from a schema bound (and list it as a form does).

    Parameters
    ----------
    error : InputError
        What the parser raised, naming the field.

    Returns
    -------
    pydantic_core.PydanticCustomError
        An error whose message is ``error.message``.
    """
    return PydanticCustomError(TEXT_ERROR, "{message}", {"message": error.message})


def typed_field(parse: Callable[[str, Any], Result]) -> Callable[[Any, ValidationInfo], Result]:
    """A pydantic validator that reads a field's value with ``parse``, naming the field in an error.

    Parameters
    ----------
    parse : callable
        ``parse(field, raw)``: the value read, or :class:`~sizer.errors.InputError` naming ``field``.

    Returns
    -------
    callable
        ``validate(raw, info)`` for pydantic's ``PlainValidator``.
    """
    def validate(raw: Any, info: ValidationInfo) -> Result:
        try:
            return parse(info.field_name or "value", raw)
        except InputError as error:
            raise refusal(error) from None
    return validate


class ParsedBy:
    """pydantic's ``PlainValidator`` for a field type that a ``PlainSerializer`` after it writes: the same schema,
    without building the schema of the type itself.

    ``PlainValidator`` builds the annotated type's own schema (a dataclass's, a union's; a pint Quantity's, which
    fails) only for the serialiser that the ``PlainSerializer`` then replaces: about a quarter of a request model's
    first build (``sizer recommend``'s ~1.5 ms, benchmarks/startup.py), and ``pydantic.dataclasses`` imported.
    A type without a serialiser after it keeps ``PlainValidator``.

    Parameters
    ----------
    func : callable
        The validator: ``func(raw, info)`` with ``info`` true, else ``func(raw)``; its value, or a pydantic error.
    info : bool
        Whether ``func`` takes pydantic's ``ValidationInfo`` (said here, not read from its signature).
    """

    __slots__ = ("func", "info")

    def __init__(self, func: Callable[..., Any], *, info: bool) -> None:
        self.func = func
        self.info = info

    def __get_pydantic_core_schema__(self, source_type: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """The plain validator's schema, as ``PlainValidator`` makes it but for the serialiser (replaced after).

        Parameters
        ----------
        source_type : type
            The annotated type (not built).
        handler : pydantic.GetCoreSchemaHandler
            pydantic's schema builder (not called).

        Returns
        -------
        pydantic_core.CoreSchema
            A plain validator function schema taking any input.
        """
        if self.info:
            return core_schema.with_info_plain_validator_function(self.func, json_schema_input_schema=core_schema.any_schema())
        return core_schema.no_info_plain_validator_function(self.func, json_schema_input_schema=core_schema.any_schema())


def quantity_text(quantity: pint.Quantity[float]) -> str:
    """A quantity as text that parses back to the same quantity (``"14.0 d"``, ``"2.5 USD / h"``).

    Parameters
    ----------
    quantity : pint.Quantity
        A parsed request value [its own unit].

    Returns
    -------
    str
        Its magnitude (every digit) and its unit in pint's short form.

    >>> quantity_text(parse_quantity("budget", "$50k", "[currency]"))
    '50.0 kUSD'
    """
    unit = format(quantity.units, "~")
    return f"{float(quantity.magnitude)!r} {unit}".strip()


_COUNT_SCHEMA = WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string"}]})
# as the fields were typed before they were parsed here (str | dict, or str | float | dict where a number has a unit)
_QUANTITY_SCHEMA = WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": True}]})
_SECONDS_SCHEMA = WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "number"},
                                            {"type": "object", "additionalProperties": True}]})


def _counted(allow_zero: bool = False, integer: bool = False) -> Callable[[str, Any], float]:
    return lambda field, raw: parse_count(field, raw, allow_zero=allow_zero, integer=integer)


def quantity_field(dimension: str, *, default_unit: str | None = None, allow_zero: bool = False) -> ParsedBy:
    """The pydantic validator of a request field holding a quantity of ``dimension``.

    Parameters
    ----------
    dimension : str
        A pint dimensionality such as ``"[time]"``.
    default_unit : str or None
        The unit of a bare number; None: a bare number is refused.
    allow_zero : bool
        Whether zero is accepted.

    Returns
    -------
    ParsedBy
        Text, a ``{"value", "unit"}`` object or a Quantity into a Quantity of the registry, for ``Annotated``
        before :data:`_AS_TEXT` (back to text that parses the same) and the JSON schema of what is accepted.
    """
    return ParsedBy(typed_field(lambda field, raw: parse_quantity(
        field, raw, dimension, default_unit=default_unit, allow_zero=allow_zero)), info=True)


_AS_TEXT = PlainSerializer(quantity_text, return_type=str)


# A count: "7B", 7e9, "70 billion", "1,300,000,000" (parse_count) -> float [1].
Count = Annotated[float, PlainValidator(typed_field(_counted())), _COUNT_SCHEMA]
CountOrZero = Annotated[float, PlainValidator(typed_field(_counted(allow_zero=True))), _COUNT_SCHEMA]
WholeCount = Annotated[float, PlainValidator(typed_field(_counted(integer=True))), _COUNT_SCHEMA]
# Quantities, each of its dimension -> a pint Quantity in the unit given ("14 d" stays 14 day).
Duration = Annotated[pint.Quantity[float], quantity_field("[time]"), _AS_TEXT, _QUANTITY_SCHEMA]
Seconds = Annotated[pint.Quantity[float], quantity_field("[time]", default_unit="s"), _AS_TEXT, _SECONDS_SCHEMA]  # a bare number is seconds
SecondsOrZero = Annotated[pint.Quantity[float], quantity_field("[time]", default_unit="s", allow_zero=True), _AS_TEXT,
                          _SECONDS_SCHEMA]
Money = Annotated[pint.Quantity[float], quantity_field("[currency]"), _AS_TEXT, _QUANTITY_SCHEMA]
MoneyOrZero = Annotated[pint.Quantity[float], quantity_field("[currency]", allow_zero=True), _AS_TEXT, _QUANTITY_SCHEMA]
MoneyPerTime = Annotated[pint.Quantity[float], quantity_field("[currency] / [time]"), _AS_TEXT, _QUANTITY_SCHEMA]
MoneyPerEnergy = Annotated[pint.Quantity[float], quantity_field("[currency] / [energy]"), _AS_TEXT, _QUANTITY_SCHEMA]
Memory = Annotated[pint.Quantity[float], quantity_field("[information]"), _AS_TEXT, _QUANTITY_SCHEMA]
MemoryOrZero = Annotated[pint.Quantity[float], quantity_field("[information]", allow_zero=True), _AS_TEXT, _QUANTITY_SCHEMA]
Frequency = Annotated[pint.Quantity[float], quantity_field("[frequency]"), _AS_TEXT, _QUANTITY_SCHEMA]
