"""The user's own measurement as a request field, typed at the edge (:data:`Measured`); how an answer was rescaled
by it is :class:`~sizer.schemas.rescaled.Rescaled` (a module of its own: a request that has the field, imported in
every ``sizer recommend``, needs no answer's record), and :mod:`sizer.measured` does the rescaling.

A measurement (``--measured "2900 tokens/s"``, ``"1.2 s/step"``, ``"TTFT 350 ms"``, ``"peak memory 18 GiB"``) is
parsed once, at the edge, into a :class:`Measurement`: its kind and its magnitude in SI units.

>>> parse_measured("2,900 tokens/s").kind, parse_measured("2,900 tokens/s").value
(<MeasuredKind.THROUGHPUT: 'throughput'>, 2900.0)
>>> parse_measured("TTFT 350 ms").value
0.35
"""
# No `from __future__ import annotations`: pydantic would evaluate each field's annotation from its text (compiled and
# eval'd; imported in every `sizer recommend`, for RecommendRequest); as objects they are read as they are.

import math
import re
from enum import StrEnum
from typing import Annotated, NamedTuple

from pydantic import PlainSerializer, WithJsonSchema

from sizer.errors import InputError, SizerError
from sizer.units import ParsedBy, parse_quantity


class MeasuredKind(StrEnum):
    """What a measurement measures."""

    THROUGHPUT = "throughput"  # samples or tokens per second
    STEP_TIME = "step time"  # seconds per optimizer step
    TTFT = "time to first token"
    TOKEN_LATENCY = "time per output token"
    PEAK_MEMORY = "peak memory"
    DURATION = "duration"  # a bare time: the command's own (a step on training, the first token on serving)


_DIMENSIONS = ((MeasuredKind.THROUGHPUT, "[samples]/[time]"), (MeasuredKind.STEP_TIME, "[time]/[steps]"),
               (MeasuredKind.TOKEN_LATENCY, "[time]/[samples]"), (MeasuredKind.PEAK_MEMORY, "[information]"),
               (MeasuredKind.DURATION, "[time]"))
_LABELS = ((r"ttft|time to first token|first token", MeasuredKind.TTFT),
           (r"tpot|itl|time per (?:output )?token|per-token latency|token latency", MeasuredKind.TOKEN_LATENCY),
           (r"step time|step|iteration time|iteration", MeasuredKind.STEP_TIME),
           (r"peak memory|peak|memory|vram", MeasuredKind.PEAK_MEMORY),
           (r"throughput|speed|rate", MeasuredKind.THROUGHPUT))
# Patterns as text: compiled by re's own cache where a measurement is first read, not when a request model that has
# the field is imported (most questions give none)
_LABEL_RE = rf"^\s*(?P<label>{'|'.join(p for p, _ in _LABELS)})\s*[:=]?\s*(?P<rest>.*)$"
_ON_RE = r"^(?P<what>.*?)\s+on\s+(?P<on>\S.*)$"
_GROUPED_RE = r"(?<![0-9.])([0-9]{1,3}(?:,[0-9]{3})+)(?![0-9])"
_WORDS = ((r"\btoks?\b", re.IGNORECASE, "token"), (r"\bseqs?\b", re.IGNORECASE, "sequence"),
          (r"\bimg\b", re.IGNORECASE, "image"), (r"\bit\b", 0, "step"))
FIELD = "measured"
EXPECTED = ("a throughput ('2900 tokens/s'), a step time ('1.2 s/step'), a time to first token ('TTFT 350 ms'), a "
            "time per output token ('25 ms/token') or a peak memory ('peak memory 18 GiB'); optionally 'on DEVICE'")


class Measurement(NamedTuple):
    """One measurement the user made, typed at the edge (a NamedTuple: a frozen dataclass costs ~0.5 ms to create,
    a sixth of importing this module in every `sizer recommend`, benchmarks/startup.py).

    Attributes
    ----------
    kind : MeasuredKind
        What it measures.
    value : float
        Its magnitude in SI units (1/s, s or B).
    text : str
        As the user wrote it.
    on : str or None
        The device it was taken on, where the text says "... on DEVICE" (reference mode).
    """

    kind: MeasuredKind
    value: float
    text: str
    on: str | None = None


def parse_measured(raw: object, field: str = FIELD) -> Measurement:
    """A measurement as people write it, typed: its kind from its unit or label, its magnitude in SI units.

    Parameters
    ----------
    raw : str
        ``"2,900 tokens/s"``, ``"1.2 s/step"``, ``"1.2 s"``, ``"TTFT 350 ms"``, ``"25 ms/token"``,
        ``"peak memory 18 GiB"``, ``"18 GiB"``; any may end in ``" on DEVICE"``.
    field : str
        The field named in an error.

    Returns
    -------
    Measurement
        Kind, SI magnitude (1/s, s or B), the text, and the device it was taken on (or None).

    Raises
    ------
    InputError
        Naming ``field``: not a text, no number, a unit of no measured kind, a label and a unit that disagree,
        a value not above 0.
    """
    if isinstance(raw, Measurement):
        return raw
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 200:
        raise InputError(field, raw, EXPECTED)
    text = raw.strip()
    what, on = text, None
    split = re.match(_ON_RE, text, re.IGNORECASE)
    if split is not None:
        what, on = split.group("what"), split.group("on").strip()
    label = None
    labelled = re.match(_LABEL_RE, what, re.IGNORECASE)
    if labelled is not None and labelled.group("rest")[:1].strip() not in ("", "/"):
        label = next(kind for pattern, kind in _LABELS if re.fullmatch(pattern, labelled.group("label"), re.IGNORECASE))
        what = labelled.group("rest")
    what = re.sub(_GROUPED_RE, lambda m: m.group(1).replace(",", ""), what)  # "2,900" is 2900
    for pattern, flags, word in _WORDS:
        what = re.sub(pattern, word, what, flags=flags)
    for kind, dimension in _DIMENSIONS:
        try:
            quantity = parse_quantity(field, what, dimension)
        except SizerError:
            continue
        value = float(quantity.to(_SI[kind]).magnitude)
        if not (value > 0 and math.isfinite(value)):
            raise InputError(field, raw, "a measurement above 0")
        if kind is MeasuredKind.DURATION and label is not None:
            if label not in (MeasuredKind.STEP_TIME, MeasuredKind.TTFT, MeasuredKind.TOKEN_LATENCY):
                raise InputError(field, raw, f"a {label.value} in a unit of its kind ({EXPECTED})")
            kind = label
        elif label is not None and label is not kind:
            raise InputError(field, raw, f"a {label.value} in a unit of its kind ({EXPECTED})")
        return Measurement(kind, value, text, on)
    raise InputError(field, raw, EXPECTED)


_SI = {MeasuredKind.THROUGHPUT: "sample/s", MeasuredKind.STEP_TIME: "s/step", MeasuredKind.TOKEN_LATENCY: "s/sample",
       MeasuredKind.PEAK_MEMORY: "B", MeasuredKind.DURATION: "s"}


def _validate(raw: object) -> Measurement:
    return parse_measured(raw)


# The request field: a text in JSON and on the command line, a Measurement inside the core (parsed once, here).
Measured = Annotated[Measurement, ParsedBy(_validate, info=False), PlainSerializer(lambda m: m.text, return_type=str),
                     WithJsonSchema({"type": "string", "description": EXPECTED,
                                     "examples": ["2900 tokens/s", "1.2 s/step", "TTFT 350 ms", "peak memory 18 GiB"]})]

