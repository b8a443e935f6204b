"""What a user chose of a typed request, and the request with a change made: how ``--have``, the suggestions and
the framework recipes read and edit a request without turning it into a dict of strings.

A request model's values are typed where it is built (a count a float, a deadline a pint Quantity, a method its
member); a field the user did not give holds its default, or a framework recipe's value. :func:`given` tells the
two apart, as the user's request did; :func:`edited` makes a change with ``model_copy(update=...)``, which
validates it as a new request would be.

>>> from sizer.schemas.base import WorkloadRequest
>>> request = WorkloadRequest(params="7B", tokens="2e10", method="lora")
>>> given(request, "method"), given(request, "optimizer", "adam")
(<Method.LORA: 'lora'>, 'adam')
>>> edited(request, {"method": "qlora", "tokens": None}).model_fields_set == {"params", "method"}
True
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

Request = TypeVar("Request", bound=BaseModel)


def given(request: BaseModel, name: str, default: Any = None) -> Any:
    """A field's value where the user gave it (and not None), else ``default``.

    Parameters
    ----------
    request : BaseModel
        A request model, its values typed.
    name : str
        The field.
    default : Any, optional
        What stands for a field not given (a default the model or a framework's recipe filled is not the user's).

    Returns
    -------
    Any
        The typed value given, or ``default``.
    """
    value = getattr(request, name, None)
    return value if name in request.model_fields_set and value is not None else default


def given_names(request: BaseModel) -> frozenset[str]:
    """The fields the user gave a value other than None.

    Parameters
    ----------
    request : BaseModel
        A request model.

    Returns
    -------
    frozenset of str
        Their names.
    """
    return frozenset(name for name in request.model_fields_set if getattr(request, name, None) is not None)


def edited(request: Request, change: Mapping[str, Any]) -> Request:
    """``request`` with ``change`` made: each value validated as a new request's would be (``model_copy``); a None
    leaves the field not given (its default again, or the layout search's choice).

    Parameters
    ----------
    request : BaseModel
        A request model.
    change : Mapping[str, Any]
        Field name to its new value, or None to drop what the user gave.

    Returns
    -------
    BaseModel
        A new request of the same type.

    Raises
    ------
    pydantic.ValidationError
        A change the request model refuses.
    """
    dropped = {name for name, value in change.items() if value is None}
    if dropped:
        request = rebuilt(type(request), request, given_names(request) - dropped)
    return request.model_copy(update={name: value for name, value in change.items() if value is not None})


def rebuilt(model: type[Request], request: BaseModel, names: Iterable[str], **values: Any) -> Request:
    """A request of another type (a recommendation's workload as a time question) from ``request``'s typed values
    of ``names`` that ``model`` has, and ``values``.

    Parameters
    ----------
    model : type of BaseModel
        The request model to build.
    request : BaseModel
        Where the values come from (already typed: nothing is parsed again).
    names : iterable of str
        The fields to carry over; those ``model`` lacks are left out.
    **values
        Further fields (the device and count of the hardware asked).

    Returns
    -------
    BaseModel
        The request, of type ``model``, given exactly the fields carried and ``values``.
    """
    carried = {name: getattr(request, name) for name in names if name in model.model_fields}
    return model.model_validate({**carried, **values})
