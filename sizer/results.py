"""Typed result models shared by the core, the CLI and the HTTP service.

A quantity is ``{"value", "unit"}`` and a range ``{"low", "expected", "high", "unit"}`` in
JSON; inside the core they are built from pint quantities by :meth:`QuantityOut.of` and
:meth:`RangeOut.of`, so a unit is never lost on the way out.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pint
import pydantic_core
from pydantic import BaseModel, ConfigDict

from sizer.choices import PriceBasis as PriceBasis  # re-exported: the one definition is sizer.choices
from sizer.errors import SizerError
from sizer.memo import registered_cache
from sizer.units import Quantity

T = TypeVar("T")


class Model(BaseModel):
    # defer_build: validators and serializers are built on first use, not for every result class at start-up
    model_config = ConfigDict(frozen=True, defer_build=True)


def time_unit(seconds: float) -> str:
    """A unit a person reads a duration in.

    Parameters
    ----------
    seconds : float
        The duration [s].

    Returns
    -------
    str
        ``"day"`` from 3 days, ``"hour"`` from 2 hours, ``"minute"`` from 10 minutes, else ``"s"``.
    """
    if seconds >= 3 * unit_factor("day", "s"):
        return "day"
    if seconds >= 2 * unit_factor("hour", "s"):
        return "hour"
    return "minute" if seconds >= 600 else "s"


@registered_cache()
def unit_factor(from_unit: str, to_unit: str) -> float:
    """The factor that takes a magnitude in ``from_unit`` to ``to_unit``, asked of pint once per pair.

    Parameters
    ----------
    from_unit : str
        The unit of the magnitudes to convert, in pint's words (``"s"``, ``"FLOP/s"``).
    to_unit : str
        The unit wanted, of the same dimension.

    Returns
    -------
    float
        The magnitude in ``to_unit`` of one ``from_unit`` [1] (``unit_factor("hour", "s") == 3600``).
    """
    return float(Quantity(1.0, from_unit).to(to_unit).magnitude)


class QuantityOut(Model):
    """A quantity as it leaves the core: a number and the unit it is in (``{"value", "unit"}`` in JSON)."""

    value: float
    unit: str

    @classmethod
    def of(cls, quantity: pint.Quantity[Any], unit: str) -> "QuantityOut":
        """A pint quantity, shown in ``unit``.

        Parameters
        ----------
        quantity : pint.Quantity
            The quantity [its own unit].
        unit : str
            The unit to show it in, of the same dimension.

        Returns
        -------
        QuantityOut
            The magnitude in ``unit`` and ``unit``.
        """
        return cls(value=float(quantity.to(unit).magnitude), unit=unit)

    @classmethod
    def convert(cls, value: float, from_unit: str, unit: str) -> "QuantityOut":
        """A plain magnitude in ``from_unit`` (the engine's SI floats), shown in ``unit``.

        Parameters
        ----------
        value : float
            The magnitude [from_unit].
        from_unit : str
            Its unit, in pint's words.
        unit : str
            The unit to show it in, of the same dimension.

        Returns
        -------
        QuantityOut
            The magnitude in ``unit`` and ``unit`` (built without validation: the engine's numbers).
        """
        return cls.model_construct(value=float(value) * unit_factor(from_unit, unit), unit=unit)  # checked numbers

    def quantity(self) -> pint.Quantity[float]:
        """The value as a pint quantity again.

        Returns
        -------
        pint.Quantity
            ``value`` in ``unit``, in the project's registry.
        """
        return Quantity(self.value, self.unit)


class RangeOut(Model):
    """A range as it leaves the core: low, expected and high in one unit."""

    low: float
    expected: float
    high: float
    unit: str

    @classmethod
    def of(cls, estimate: "Estimate", unit: str) -> "RangeOut":
        """An :class:`Estimate`'s three bounds, shown in ``unit``.

        Parameters
        ----------
        estimate : Estimate
            The range of pint quantities.
        unit : str
            The unit to show it in, of the bounds' dimension.

        Returns
        -------
        RangeOut
            The bounds' magnitudes in ``unit``.
        """
        return cls(low=float(estimate.low.to(unit).magnitude),
                   expected=float(estimate.expected.to(unit).magnitude),
                   high=float(estimate.high.to(unit).magnitude), unit=unit)

    @classmethod
    def of_seconds(cls, seconds: tuple[float, float, float], unit: str) -> "RangeOut":
        """A range given in seconds as plain floats, shown in ``unit``.

        Parameters
        ----------
        seconds : tuple of (float, float, float)
            Low, expected and high duration [s], in that order (low <= expected <= high).
        unit : str
            The unit of time to show them in (``"hour"``, ``"day"``).

        Returns
        -------
        RangeOut
            The durations in ``unit`` (built without validation: the engine's numbers).
        """
        factor = unit_factor("s", unit)
        low, expected, high = (float(s) * factor for s in seconds)
        assert low <= expected <= high, seconds
        return cls.model_construct(low=low, expected=expected, high=high, unit=unit)  # engine floats, ordered


class Assumption(Model):
    """One input the answer depends on, with where its value comes from."""

    name: str
    value: str
    source: str
    verified: bool = True  # False: recalled rather than read in the cited source


@dataclass(frozen=True)
class Estimate:
    """A low / expected / high triple of pint quantities, ordered low <= expected <= high."""

    low: pint.Quantity[Any]
    expected: pint.Quantity[Any]
    high: pint.Quantity[Any]

    def __post_init__(self) -> None:
        assert self.low <= self.expected <= self.high, (self.low, self.expected, self.high)

    @classmethod
    def exact(cls, value: pint.Quantity[Any]) -> "Estimate":
        """A range with no spread: a value known exactly (given by the user).

        Parameters
        ----------
        value : pint.Quantity
            The value [its own unit].

        Returns
        -------
        Estimate
            ``value`` as low, expected and high.
        """
        return cls(value, value, value)

    def map(self, function: Callable[[pint.Quantity[Any]], pint.Quantity[Any]]) -> "Estimate":
        """Apply a monotonically increasing function to every bound.

        Parameters
        ----------
        function : Callable[[pint.Quantity], pint.Quantity]
            A function that never lowers a larger input below a smaller one's result (a cost of a
            duration), so the bounds stay ordered.

        Returns
        -------
        Estimate
            ``function`` of low, expected and high.
        """
        return Estimate(function(self.low), function(self.expected), function(self.high))

    def __add__(self, other: "Estimate | pint.Quantity[Any]") -> "Estimate":
        if isinstance(other, Estimate):
            return Estimate(self.low + other.low, self.expected + other.expected, self.high + other.high)
        return self.map(lambda bound: bound + other)

    def __mul__(self, factor: "Estimate | pint.Quantity[Any] | float") -> "Estimate":
        if isinstance(factor, Estimate):
            return Estimate(self.low * factor.low, self.expected * factor.expected, self.high * factor.high)
        return self.map(lambda bound: bound * factor)

    __rmul__ = __mul__

    def to(self, unit: str) -> "Estimate":
        """The range in another unit.

        Parameters
        ----------
        unit : str
            A unit of the bounds' dimension.

        Returns
        -------
        Estimate
            The same bounds, converted to ``unit``.
        """
        return self.map(lambda bound: bound.to(unit))

    def out(self, unit: str) -> RangeOut:
        """The range as it leaves the core (:meth:`RangeOut.of`).

        Parameters
        ----------
        unit : str
            The unit to show it in.

        Returns
        -------
        RangeOut
            The bounds' magnitudes in ``unit``.
        """
        return RangeOut.of(self, unit)


def non_finite_path(value: Any, path: str = "") -> str | None:
    """The path of the first number in ``value`` (a model, mapping or list) that is not finite, or None.

    Parameters
    ----------
    value : Any
        A result model, or plain data (dicts, lists, tuples, numbers, strings).
    path : str
        The path of ``value`` itself inside the whole result; ``""`` at the top.

    Returns
    -------
    str or None
        The dotted path (``"time.high"``, ``"ranked[1].cost.low"``) of the first float that is
        inf or NaN; ``"result"`` when ``value`` itself is one; None when every float is finite.

    Examples
    --------
    >>> non_finite_path({"time": {"low": 1.0, "high": float("inf")}})
    'time.high'
    """
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, float):
        return None if math.isfinite(value) else path or "result"
    if isinstance(value, dict):
        return next((p for k, v in value.items() if (p := non_finite_path(v, f"{path}.{k}" if path else str(k)))), None)
    if isinstance(value, (list, tuple)):
        return next((p for i, v in enumerate(value) if (p := non_finite_path(v, f"{path}[{i}]"))), None)
    return None


# A number that JSON cannot hold, as pydantic-core writes it in "constants" mode: a bare token after
# ``[``, ``:`` or ``,`` (a string holding these letters is quoted, and at worst sends us to the walk)
_NON_FINITE = re.compile(rb"[\[:,](?:-?Infinity|NaN)[,\]}]")


def _suspect(data: bytes) -> bool:
    """Whether JSON bytes may hold a non-finite number (a substring search first: the pattern is slower)."""
    return (b"Infinity" in data or b"NaN" in data) and _NON_FINITE.search(data) is not None


def plain_data(value: Any) -> Any:
    """Models inside ``value`` as plain data (a model written by its own serializer writes inf as null).

    Parameters
    ----------
    value : Any
        A model, or dicts, lists and tuples that may hold models.

    Returns
    -------
    Any
        The same data with every model replaced by its ``model_dump()`` and every tuple by a list.
    """
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: plain_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v) for v in value]
    return value


def _json_constants(value: Any, plain: bool = False, indent: int | None = None) -> bytes | None:
    """``value`` as JSON with non-finite numbers as bare tokens (in Rust), or None where it cannot be written."""
    try:
        return pydantic_core.to_json(value if plain else plain_data(value), inf_nan_mode="constants", indent=indent)
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError, RecursionError):
        return None


def _all_finite(value: Any) -> bool:
    """True when every number in ``value`` is surely finite; False where it may not be (then
    :func:`non_finite_path` looks, in Python)."""
    data = _json_constants(value)
    return data is not None and not _suspect(data)


def finite_json(result: Any, *, plain: bool = False, indent: int | None = None) -> bytes:
    """A result (a model, or the fields of one) as JSON bytes, checked finite as :func:`ensure_finite`
    checks it: one rendering serves both, no second pass over the result.

    Parameters
    ----------
    result : Any
        A result model, or the fields of one (a dict that may hold models).
    plain : bool
        True where the caller built ``result`` from dicts, lists and numbers alone (no model inside: a
        model's own serializer writes inf as null, which the check cannot see), so it is written
        without the walk in Python that turns models into data.
    indent : int or None
        Spaces per level of nesting [1]; None writes compact JSON.

    Returns
    -------
    bytes
        The UTF-8 JSON text.

    Raises
    ------
    SizerError
        Naming the first number that is not finite (JSON has no inf or NaN).

    Examples
    --------
    >>> finite_json(RangeOut(low=1.0, expected=2.0, high=3.0, unit="s"))
    b'{"low":1.0,"expected":2.0,"high":3.0,"unit":"s"}'
    """
    data = _json_constants(result, plain, indent)
    if data is None or _suspect(data):
        ensure_finite(result)  # names the number, or finds the tokens were inside a string
        data = result.model_dump_json(indent=indent).encode("utf-8") if isinstance(result, BaseModel) \
            else pydantic_core.to_json(result, indent=indent)
    return data


def ensure_finite(result: T) -> T:
    """The result, or a :class:`~sizer.errors.SizerError` naming the first number in it that is not finite.

    Every result leaves the core through here on its way to JSON or a table (JSON has no inf or
    NaN; pydantic would write ``null``), so that no input can produce ``nan`` with success.

    Parameters
    ----------
    result : Any
        A result model, or plain data holding numbers.

    Returns
    -------
    Any
        ``result`` itself, unchanged, when every number in it is finite.

    Raises
    ------
    SizerError
        Naming the path of the first number that is not finite (:func:`non_finite_path`).
    """
    if _all_finite(result):  # the common case, in C: no walk of the result in Python
        return result
    where = non_finite_path(result)
    if where is not None:
        raise SizerError(f"the inputs give a result that is not a finite number ({where}); use values in a realistic range")
    return result




class CostOut(Model):
    """What running costs, as a range, and on which basis: ``rent`` (a cloud or given price) or ``buy``
    (the purchase amortised over its lifetime, plus energy)."""

    low: float
    expected: float
    high: float
    unit: str
    price_basis: PriceBasis
    price: str  # the hourly price and where it comes from


class Suggestion(Model):
    """One change that makes the job work, evaluated again by the engine. ``apply`` holds the request
    fields it changes (null: leave it to sizer), so a client can ask again with them."""

    change: str
    apply: dict[str, Any]
    fits: bool
    meets_deadline: bool | None = None
    memory_per_device: QuantityOut
    device_memory: QuantityOut | None = None
    training_time: RangeOut | None = None
    decode_tokens_per_s: RangeOut | None = None
    cost: CostOut | None = None
