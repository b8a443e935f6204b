"""The project's own error types.

Every error a user can cause is a ``SizerError`` (a ``ValueError``), carrying the name of the
field at fault so that the CLI can print one line and the HTTP layer can answer 422 with the
field path.
"""
from __future__ import annotations

from collections.abc import Sequence


class SizerError(ValueError):
    """Base class of every error a user's input can cause."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InputError(SizerError):
    """A value given by the user is malformed, has the wrong unit or is out of range."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        super().__init__(f"{field}: {_given(value)}; expected {expected}", field)
        self.value = value
        self.expected = expected


def _given(value: object) -> str:
    """What the user gave, in the user's words: a missing value is "not given", never Python's
    ``None``; a long value is cut."""
    if value is None:
        return "not given"
    shown = repr(_as_written(value))
    if len(shown) > 60:
        shown = shown[:57] + "...'"
    return f"got {shown}"


class WrittenByName:
    """A registry entry held by a request field (a runtime, a weight format, a length set): written in the request,
    serialised and quoted in an error by its canonical ``name`` (:func:`_as_written`)."""

    name: str

    def as_written(self) -> str:
        """The entry as a person writes it in a request: its canonical name.

        Returns
        -------
        str
            :attr:`name`.
        """
        return self.name


def _as_written(value: object) -> object:
    """A request's typed value as a person writes it: a quantity as ``'14 day'``, a batch as ``'1536 sequences'``
    (never ``<Quantity(14, 'day')>``); any other value as it is."""
    if hasattr(value, "magnitude") and hasattr(value, "units"):  # a pint Quantity (not imported here: errors is a leaf)
        return f"{value.magnitude:g} {value.units:~}"
    written = getattr(value, "as_written", None)
    return written() if callable(written) else value


class InputErrors(SizerError):
    """Several values given by the user are bad at once; ``errors`` holds one error per field
    (an :class:`InputError`, or a :class:`SizerError` from a request model's own check).

    Raised where a request is checked field by field, so that a form can mark every bad field
    at once instead of one per attempt.
    """

    def __init__(self, errors: Sequence[SizerError]):
        super().__init__("\n".join(error.message for error in errors), errors[0].field)
        self.errors = list(errors)


class CatalogError(SizerError):
    """A catalog file is malformed; the message names the file, the entry and the field."""


class DeviceLookupError(SizerError):
    """A device name matches no catalog entry, or more than one."""

    def __init__(self, message: str, candidates: list[str], field: str = "device") -> None:
        super().__init__(message, field)
        self.candidates = candidates


class EstimateTimeout(SizerError):
    """An estimate ran past the time limit its caller set (see :mod:`sizer.deadline`).

    Raised by the core's loops, so that a request the HTTP service has already answered 503
    stops using the CPU; the service maps it to 503, the command line to exit status 2.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the estimate took longer than {seconds:g} s; try fewer devices (max_devices) "
                         "or a smaller request")
        self.seconds = seconds


def require_device(request: object) -> str:
    """The device a request names, or an error that says to give one.

    Parameters
    ----------
    request : object
        A request model with a ``device`` field (a catalog id or name, or None when not given);
        an object without the field counts as not given.

    Returns
    -------
    str
        The device id or name as the user gave it.

    Raises
    ------
    SizerError
        When no device is given; the message names the ``--device`` option with an example, and
        ``--have`` for the hardware one already has.
    """
    device: str | None = getattr(request, "device", None)  # every request model declares it str | None
    if device is None:
        raise SizerError("device: give a device (--device, e.g. 'H100 SXM') or the hardware you have "
                         "(--have '8x A100 80GB SXM')", "device")
    return device
