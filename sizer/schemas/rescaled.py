"""How an answer was rescaled by the user's own measurement, a given MFU or a given efficiency (:class:`Rescaled`,
made by :mod:`sizer.measured`); the measurement itself is the request field of :mod:`sizer.schemas.measurement`.

Apart from that field so that a request that has it (``RecommendRequest``, imported in every ``sizer recommend``)
does not make the answer's record too (~0.25 ms, benchmarks/startup.py); an answer that carries one imports it.
"""
from __future__ import annotations

from sizer.results import Model, QuantityOut


class Rescaled(Model):
    """How an answer was rescaled: by a measurement, a given MFU or a given efficiency."""

    basis: str  # "measured", "reference" (measured on another device), "mfu" or "efficiency"
    given: str  # as the user gave it: "2,900 tokens/s", "0.4"
    factor: float  # speed factor: sizer's time / the answer's time (>1: faster than sizer's prediction)
    sizer: QuantityOut | None  # sizer's own figure the measurement is compared with (None: a what-if)
    measured_on: str | None = None  # reference mode: the device (and count) measured on
    statement: str  # the sentence the answer shows
