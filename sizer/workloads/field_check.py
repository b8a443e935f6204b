"""Every malformed free-text field of a request at once, so that a form marks them all in one round.

The request models take counts and quantities as text ("7B", "14 d", "50000 USD", "1536 sequences")
and the core reads each where it is used, so the first bad one would stop the answer and hide the
others. :func:`text_field_errors` reads every such field of a request with the one parser its name
stands for in every request model (:data:`TEXT_FIELDS`) and returns all the errors;
:func:`every_bad_field` adds the errors of the request model's own checks (types, bounds) and
raises them together as one :class:`~sizer.errors.InputErrors`.

>>> [e.field for e in text_field_errors({"params": "seven", "deadline": "5 GHz", "budget": "50000 USD"})]
['params', 'deadline']
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from sizer.errors import InputError, InputErrors, SizerError
from sizer.units import TEXT_ERROR, parse_count, parse_quantity
from sizer.workloads.batch import parse_batch_size

Model = TypeVar("Model", bound=BaseModel)


def _quantity(dimension: str, default_unit: str | None = None, allow_zero: bool = False) -> Callable[[str, Any], object]:
    return lambda field, raw: parse_quantity(field, raw, dimension, default_unit=default_unit, allow_zero=allow_zero)


# A field name and the parser it means wherever it appears (the same words as the CLI's options).
TEXT_FIELDS: dict[str, Callable[[str, Any], object]] = {
    **dict.fromkeys(("params", "tokens", "samples", "epochs", "micro_batch", "forward_flops_per_sample"), parse_count),
    "batch_size": parse_batch_size,
    "deadline": _quantity("[time]"),
    "time_to_first_token": _quantity("[time]"),
    **dict.fromkeys(("slo_ttft", "slo_tpot", "slo_e2e"), _quantity("[time]", default_unit="s")),
    "think_time": _quantity("[time]", default_unit="s", allow_zero=True),
    "budget": _quantity("[currency]"),
    "host_memory": _quantity("[information]"),
}


def text_field_errors(body: Mapping[str, Any], skip: frozenset[str] = frozenset()) -> list[InputError]:
    """The errors of every free-text field of a request, each read by the parser its name stands for.

    Parameters
    ----------
    body : Mapping[str, Any]
        A request body, or a request model's fields: field name to the value as given (text such as
        ``"7B"`` or ``"14 d"``, a number, or None).
    skip : frozenset[str]
        Fields already reported (by the request model's own checks), left out here.

    Returns
    -------
    list[InputError]
        One error per malformed field of :data:`TEXT_FIELDS`, in the order of ``body``; empty when
        all read. Fields that are None and fields no parser is named for are left out.
    """
    errors: list[InputError] = []
    for field, raw in body.items():
        parse = TEXT_FIELDS.get(field)
        if parse is None or raw is None or field in skip:
            continue
        try:
            parse(field, raw)
        except InputError as error:
            errors.append(error)
    return errors


def in_form_order(items: Sequence[Mapping[str, Any]], given: Mapping[str, Any], at: int = 0) -> list[Mapping[str, Any]]:
    """pydantic's errors of a request as a form lists them: the model's own refusals (a type, a bound) first, in
    the model's order, then the refused counts and quantities (errors of type :data:`sizer.units.TEXT_ERROR`)
    in the order they were given.

    Parameters
    ----------
    items : sequence of mappings
        pydantic's error items (``ValidationError.errors()``), each with its ``loc``.
    given : Mapping[str, Any]
        The request as given, in its order.
    at : int, default 0
        Where the field's name is in ``loc`` [1] (1 over HTTP, whose ``loc`` starts with ``"body"``).

    Returns
    -------
    list of mappings
        The same items, reordered.
    """
    order = {name: position for position, name in enumerate(given)}

    def field(item: Mapping[str, Any]) -> str:
        loc = item.get("loc") or ()
        return str(loc[at]) if len(loc) > at else ""

    texts = [item for item in items if item.get("type") == TEXT_ERROR]
    rest = [item for item in items if item.get("type") != TEXT_ERROR]
    return rest + sorted(texts, key=lambda item: order.get(field(item), len(order)))


def _schema_errors(error: ValidationError, given: Mapping[str, Any]) -> list[SizerError]:
    """A request model's refusals (a type, a bound, a count or quantity that does not read), each naming its
    top-level field, in a form's order (:func:`in_form_order`)."""
    found: list[SizerError] = []
    for item in in_form_order(error.errors(), given):
        field = str(item["loc"][0]) if item.get("loc") else ""
        message = str(item.get("msg", "invalid value")).removeprefix("Value error, ")
        if item.get("type") == TEXT_ERROR:  # a count or quantity refused by its parser: sizer's error, as worded
            refused = InputError(field, item.get("input"), message.partition("; expected ")[2])
            refused.message = message
            found.append(refused)
            continue
        found.append(SizerError(message if message.startswith(f"{field}:") else f"{field}: {message}", field))
    return found


class RequestError(ValidationError, InputError):
    """A request model built in Python with bad fields: sizer's :class:`~sizer.errors.InputError` naming the first
    (``field``), with every bad field in ``message`` (one line each, as the command line prints them) and first in its
    text; still pydantic's ``ValidationError`` (``errors()``, its text after), so code that caught that keeps working.

    Built by :meth:`of`, never by calling the class (pydantic builds its errors itself).
    """

    def __init__(self, *args: object, **kwargs: object) -> None:  # pydantic calls it with its own arguments
        pass

    @classmethod
    def of(cls, error: ValidationError, body: Mapping[str, Any]) -> "RequestError":
        """The error of a request model that refused ``body``.

        Parameters
        ----------
        error : pydantic.ValidationError
            What validating ``body`` raised.
        body : Mapping[str, Any]
            The request as given.

        Returns
        -------
        RequestError
            The same errors, as sizer's error naming each field.
        """
        line_errors: list[Any] = [
            {"type": PydanticCustomError(item["type"], item["msg"].replace("{", "{{").replace("}", "}}")),
             "loc": item["loc"], "input": item.get("input")} for item in error.errors()]
        made = cls.from_exception_data(error.title, line_errors)
        found = request_errors(error, body)
        SizerError.__init__(made, "\n".join(e.message for e in found), found[0].field)
        made.value = getattr(found[0], "value", None)
        made.expected = getattr(found[0], "expected", found[0].message)
        return made

    def __str__(self) -> str:  # sizer's words first, one line per bad field, then pydantic's own text
        return f"{self.message}\n{ValidationError.__str__(self)}"


def request_errors(error: ValidationError, body: Mapping[str, Any]) -> list[SizerError]:
    """A request model's refusals and its free-text fields' errors, one per field (see :func:`every_bad_field`).

    Parameters
    ----------
    error : pydantic.ValidationError
        What validating ``body`` raised.
    body : Mapping[str, Any]
        The request as given.

    Returns
    -------
    list[SizerError]
        One error per bad field, each naming it; never empty.
    """
    schema = _schema_errors(error, body)
    reported = frozenset(e.field for e in schema if e.field is not None)
    return [*schema, *text_field_errors(body, reported)] or [SizerError(str(error), None)]


def every_bad_field(model: type[Model], body: Mapping[str, Any]) -> Model:
    """``body`` validated into ``model``, or every bad field at once.

    Parameters
    ----------
    model : type[BaseModel]
        The request model to build (a subclass of pydantic's ``BaseModel``).
    body : Mapping[str, Any]
        The request as given: field name to value.

    Returns
    -------
    BaseModel
        The validated request, of type ``model``.

    Raises
    ------
    InputErrors
        Every bad field together: the model's own refusals (a type, a bound) and the free-text
        fields' (:func:`text_field_errors`), each naming its field.

    Examples
    --------

    >>> from sizer.plan.recommend import RecommendRequest
    >>> try:
    ...     every_bad_field(RecommendRequest, {"max_devices": 0, "params": "seven"})
    ... except InputErrors as error:
    ...     print([e.field for e in error.errors])
    ['max_devices', 'params']
    """
    try:
        request = model.model_validate(body)
    except ValidationError as error:
        raise InputErrors(request_errors(error, body)) from None
    errors = text_field_errors(body)
    if errors:
        raise InputErrors(errors)
    return request
