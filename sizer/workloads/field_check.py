"""Every malformed field of a request at once, so that a form marks them all in one round.

The request models type every field where the request is built: counts and quantities given as text ("7B", "14 d",
"50000 USD", "1536 sequences") are parsed by their fields (sizer/units.py, sizer/workloads/batch.py), choices and
registry names by theirs (sizer/choices.py), and every model forbids a field it lacks. pydantic reports every bad
field of a body in one error; :func:`every_bad_field` raises them together as one
:class:`~sizer.errors.InputErrors`, each naming its field, in a form's order (:func:`in_form_order`).

>>> from sizer.schemas.recommendation import RecommendRequest
>>> try:
...     every_bad_field(RecommendRequest, {"params": "seven", "deadline": "5 GHz", "budget": "50000 USD"})
... except InputErrors as error:
...     print([e.field for e in error.errors])
['params', 'deadline']
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from sizer.errors import InputError, InputErrors, SizerError
from sizer.units import TEXT_ERROR

Model = TypeVar("Model", bound=BaseModel)


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
    """A request model's refusals, one per field (see :func:`every_bad_field`).

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
    return _schema_errors(error, body) or [SizerError(str(error), None)]


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
        Every bad field together: a type, a bound, a count or quantity that does not read, a name no vocabulary
        holds, a field the model lacks; each naming its field.

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
    return request
