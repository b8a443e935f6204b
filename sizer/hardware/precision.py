"""Numeric precisions a training run can use, and how many bytes each stores per value."""
from __future__ import annotations

from sizer.choices import Precision, parse_choice
from sizer.errors import InputError

# Bytes per stored value, for every precision of the one vocabulary (sizer.choices.Precision) but
# `mixed`, which each device resolves to one of these. TF32 is an FP32 storage format computed on tensor cores.
PRECISION_BYTES: dict[Precision, float] = {Precision.FP64: 8, Precision.FP32: 4, Precision.TF32: 4, Precision.FP16: 2,
                                           Precision.BF16: 2, Precision.FP8: 1, Precision.FP4: 0.5}
# Precisions trained with FP32 master weights (mixed precision, Micikevicius et al. 2018).
MIXED_PRECISIONS = (Precision.FP16, Precision.BF16, Precision.FP8, Precision.FP4)
# Precisions whose GEMMs run below 16 bits with per-tensor/per-block scales (Transformer Engine recipes):
# casts and scales cost time, attention stays 16-bit (sizer/engine/devices.py).
SCALED_PRECISIONS = (Precision.FP8, Precision.FP4)
MASTER_WEIGHT_BYTES = 4
# FP8 training keeps 16-bit weight and gradient copies; only the matmul inputs are FP8
# (NVIDIA Transformer Engine documentation, "FP8 primer"); NVFP4 training likewise (NVIDIA 2025,
# "Pretraining Large Language Models with NVFP4": BF16 weights and gradients, FP32 masters and moments).
LOW_PRECISION_COPY_BYTES = dict.fromkeys(MIXED_PRECISIONS, 2)


def check_precision(value: object, field: str = "precision") -> Precision:
    """A stored precision read from a file, the parse where a calibration file's text enters.

    Parameters
    ----------
    value : object
        The text of a precision, any of :class:`~sizer.choices.Precision` but ``mixed`` (case-insensitive).
    field : str, default ``"precision"``
        The field named in an error.

    Returns
    -------
    Precision
        The enum member.

    Raises
    ------
    InputError
        An unknown name, or ``mixed``; the message lists the stored precisions.

    Examples
    --------
    >>> check_precision("BF16")
    <Precision.BF16: 'bf16'>
    """
    return stored_precision(parse_choice(Precision, value, field), field)


def stored_precision(precision: Precision, field: str = "precision") -> Precision:
    """``precision`` where it is stored as such (every member but ``mixed``), else InputError listing those.

    Parameters
    ----------
    precision : Precision
        A precision of the one vocabulary.
    field : str, default ``"precision"``
        The field named in an error.

    Returns
    -------
    Precision
        ``precision`` itself.

    Raises
    ------
    InputError
        ``mixed``, which each device resolves to a stored precision first.

    Examples
    --------
    >>> stored_precision(Precision.MIXED)
    Traceback (most recent call last):
    ...
    sizer.errors.InputError: precision: got 'mixed'; expected one of fp64, fp32, tf32, fp16, bf16, fp8, fp4
    """
    if precision not in PRECISION_BYTES:
        raise InputError(field, precision.value, f"one of {', '.join(PRECISION_BYTES)}")
    return precision


def weight_bytes(precision: Precision) -> float:
    """Bytes per weight and per gradient as stored during training at this precision.

    FP8 and FP4 training keep 16-bit weight and gradient copies (:data:`LOW_PRECISION_COPY_BYTES`);
    every other precision stores them at its own width (:data:`PRECISION_BYTES`).

    Parameters
    ----------
    precision : Precision
        A stored precision (not ``mixed``).

    Returns
    -------
    float
        Bytes per weight [B].
    """
    return LOW_PRECISION_COPY_BYTES.get(precision, PRECISION_BYTES[precision])


def storage_scale(precision: Precision) -> float:
    """Bytes of a stored activation relative to FP32 (profiles are counted at FP32).

    Parameters
    ----------
    precision : Precision
        A stored precision (not ``mixed``).

    Returns
    -------
    float
        :func:`weight_bytes` over 4 bytes [1]: 0.5 for bf16, 1 for fp32.
    """
    return weight_bytes(precision) / PRECISION_BYTES[Precision.FP32]
