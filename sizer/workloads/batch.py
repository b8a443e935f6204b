"""A global batch as people write it: "1536 sequences", "4M tokens", "512 samples" or a bare number.

A language model's batch is said in sequences (Llama 2: 4M tokens = 1,024 sequences of 4,096
tokens; GPT-3: 1,536 sequences of 2,048 tokens = 3.2M tokens, Brown et al. 2020, Table 2.1) as
often as in tokens. :func:`parse_batch_size` reads the text once, where the request enters;
:func:`batch_in_workload_units` turns it into the workload's unit (tokens for a language model,
samples otherwise) once the sequence length is known.

>>> parse_batch_size("batch_size", "1536 sequences")
BatchSize(count=1536.0, unit=<BatchUnit.SEQUENCE: 'sequence'>)
>>> batch_in_workload_units(parse_batch_size("batch_size", "1536 sequences"), token_mode=True, seq_len=2048)
3145728.0
>>> batch_in_workload_units(parse_batch_size("batch_size", "4M"), token_mode=True, seq_len=4096)
4000000.0
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import PlainSerializer, WithJsonSchema

from sizer.errors import InputError
from sizer.units import MAX_TEXT_LENGTH, ParsedBy, parse_count, typed_field


class BatchUnit(enum.Enum):
    """What a batch counts. ``WORKLOAD``: a bare number, in the workload's own unit (tokens with
    ``tokens``, else samples), as the request model's ``batch_size`` has always been read."""

    WORKLOAD = "workload"
    TOKEN = "token"
    SEQUENCE = "sequence"
    SAMPLE = "sample"


# the words after the count, singular or plural; "seq" as in --seq-len
_WORDS = {"token": BatchUnit.TOKEN, "tokens": BatchUnit.TOKEN, "sequence": BatchUnit.SEQUENCE,
          "sequences": BatchUnit.SEQUENCE, "seq": BatchUnit.SEQUENCE, "seqs": BatchUnit.SEQUENCE,
          "sample": BatchUnit.SAMPLE, "samples": BatchUnit.SAMPLE}
_BATCH_RE = re.compile(r"^\s*(?P<count>.*?)\s*(?P<word>[A-Za-z]+)\s*$")
EXPECTED = "a batch such as '1536 sequences', '4M tokens' or '512 samples' (a bare number: tokens with tokens, else samples)"


@dataclass(frozen=True)
class BatchSize:
    """A batch as given: ``count`` of ``unit`` per optimizer step."""

    count: float
    unit: BatchUnit

    def as_written(self) -> str | float:
        """The batch as a person writes it, for an error that names it.

        Returns
        -------
        str or float
            ``1536.0`` for a bare count [1], ``"1536 sequences"`` for a count of what it counts.
        """
        return self.count if self.unit is BatchUnit.WORKLOAD else f"{self.count:g} {self.unit.value}s"


def parse_batch_size(field: str, raw: object) -> BatchSize:
    """Read a batch: a count (as :func:`sizer.units.parse_count` reads one: ``1536``, ``"4M"``) and,
    optionally, the word for what it counts (:data:`_WORDS`).

    Parameters
    ----------
    field : str
        The input field, named in an error.
    raw : object
        A count, or text such as ``"1536 sequences"``, ``"4M tokens"``, ``"512 samples"``.

    Returns
    -------
    BatchSize
        The count and its unit (:class:`BatchUnit.WORKLOAD` for a bare number).

    Raises
    ------
    InputError
        Naming ``field`` where the text is neither.

    >>> parse_batch_size("batch_size", "4M tokens")
    BatchSize(count=4000000.0, unit=<BatchUnit.TOKEN: 'token'>)
    >>> parse_batch_size("batch_size", "lots of sequences")
    Traceback (most recent call last):
    ...
    sizer.errors.InputError: batch_size: got 'lots of sequences'; expected a batch such as '1536 sequences', '4M tokens' or '512 samples' (a bare number: tokens with tokens, else samples)
    """
    if isinstance(raw, BatchSize):  # already read (a request copied with model_copy)
        return raw
    if isinstance(raw, str) and len(raw) <= MAX_TEXT_LENGTH and (match := _BATCH_RE.match(raw)) \
            and match["word"].lower() in _WORDS:
        if not match["count"]:
            raise InputError(field, raw, EXPECTED)
        try:
            count = parse_count(field, match["count"])
        except InputError:
            raise InputError(field, raw, EXPECTED) from None
        return BatchSize(count, _WORDS[match["word"].lower()])
    try:
        return BatchSize(parse_count(field, raw), BatchUnit.WORKLOAD)
    except InputError as error:
        if isinstance(raw, str) and not re.search(r"\d", raw):  # words only: say what a batch looks like
            raise InputError(field, raw, EXPECTED) from None
        raise error


def batch_in_workload_units(batch: BatchSize, *, token_mode: bool, seq_len: int | None, field: str = "batch_size") -> float:
    """The batch in the workload's unit: tokens for a language model (a sequence is ``seq_len``
    tokens), samples otherwise (a sequence is one sample).

    Parameters
    ----------
    batch : BatchSize
        As :func:`parse_batch_size` read it.
    token_mode : bool
        Whether the workload counts tokens (``tokens`` given).
    seq_len : int or None
        Tokens per sequence [token]; needed for sequences or samples in token mode.
    field : str, default ``"batch_size"``
        The input field, named in an error.

    Returns
    -------
    float
        Tokens per step [token] in token mode, else samples per step [sample].
    """
    if batch.unit is BatchUnit.WORKLOAD:
        return batch.count
    if not token_mode:
        if batch.unit is BatchUnit.TOKEN:
            raise InputError(field, f"{batch.count:g} tokens", "samples or sequences: tokens are counted for a language "
                             "model only (give tokens instead of samples)")
        return batch.count
    if batch.unit is BatchUnit.TOKEN:
        return batch.count
    if seq_len is None:
        raise InputError(field, f"{batch.count:g} {batch.unit.value}s", "tokens, or a sequence length to count sequences in")
    return batch.count * seq_len


def batch_text(batch: BatchSize) -> float | str:
    """A batch as a request writes it: the bare count, or the count and what it counts (``"1536.0 sequences"``).

    Parameters
    ----------
    batch : BatchSize
        As :func:`parse_batch_size` read it.

    Returns
    -------
    float or str
        What :func:`parse_batch_size` reads back into the same batch.
    """
    if batch.unit is BatchUnit.WORKLOAD:
        return batch.count
    return f"{batch.count!r} {batch.unit.value}s"


# The request field: a count or text as given, a BatchSize inside the core (read once, where the request is built).
BatchField = Annotated[BatchSize, ParsedBy(typed_field(parse_batch_size), info=True),
                       PlainSerializer(batch_text, return_type=float | str),
                       WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string"}]})]
