"""``mlp:784,512,10``: a multilayer perceptron's profile from its layer widths, without torch.

Each dense layer from ``n_in`` to ``n_out`` units is one matrix multiply and bias add (one kernel):
forward FLOP ``2 n_in n_out`` per sample, ``n_in n_out + n_out`` parameters, and it reads its input and
writes its output (``4 (n_in + n_out)`` bytes at FP32) and keeps its input for the backward pass.
Each hidden layer is followed by an activation function (LeakyReLU, as in the seed-001 MLP): one
elementwise kernel reading and writing ``n_out`` values and keeping its input. Rows are laid out as
``sizer profile`` lays out an ``nn.Sequential`` of Linear and activation modules, so that the same
widths give the same profile as torch's count (``catalog/workloads/mlp-seed001.yaml``; tested).

>>> p = mlp_profile("mlp:75,512,512,512,10")
>>> int(p.params), int(p.forward_flops)
(569354, 1135616)
"""
from __future__ import annotations

from itertools import pairwise

from sizer.errors import InputError
from sizer.workloads.profile import Layer, Profile

PREFIX = "mlp:"
FP32_BYTES = 4
MAX_LAYERS = 64
MAX_WIDTH = 1_000_000
EXPECTED = (f"mlp:W1,W2,... with 2 to {MAX_LAYERS + 1} layer widths from 1 to {MAX_WIDTH:,} units, inputs first "
            "and outputs last, e.g. mlp:784,512,10")


def is_mlp(name: object) -> bool:
    """Whether a workload name is an ``mlp:`` width list.

    Parameters
    ----------
    name : object
        A request's workload (a name, a file reference or anything a request may hold).

    Returns
    -------
    bool
        True for a string starting with ``mlp:`` (any case, spaces around it ignored).

    >>> is_mlp("MLP:784,512,10"), is_mlp("vgg16")
    (True, False)
    """
    return isinstance(name, str) and name.strip().lower().startswith(PREFIX)


def widths(name: str) -> list[int]:
    """The layer widths of ``mlp:W1,W2,...``.

    Parameters
    ----------
    name : str
        The workload as written, e.g. ``mlp:784,512,10``.

    Returns
    -------
    list of int
        The widths [unit], inputs first.

    Raises
    ------
    InputError
        Fewer than two widths, a width that is not a whole number from 1 to 1,000,000, or too many.
    """
    parts = [part.strip() for part in name.strip()[len(PREFIX):].split(",")]
    if not 2 <= len(parts) <= MAX_LAYERS + 1 or not all(part.isdigit() and len(part) <= 7 for part in parts):
        raise InputError("workload", name, EXPECTED)
    found = [int(part) for part in parts]
    if not all(1 <= width <= MAX_WIDTH for width in found):
        raise InputError("workload", name, EXPECTED)
    return found


def mlp_profile(name: str) -> Profile:
    """The per-sample profile of the multilayer perceptron ``mlp:W1,W2,...``.

    Parameters
    ----------
    name : str
        ``mlp:`` and the layer widths [unit], inputs first, outputs last.

    Returns
    -------
    Profile
        One matmul row per dense layer and one elementwise row per activation, per sample at FP32.

    Raises
    ------
    InputError
        A malformed width list (:func:`widths`).
    """
    sizes = widths(name)
    layers: list[Layer] = []
    for index, (n_in, n_out) in enumerate(pairwise(sizes)):
        layers.append(Layer(name=f"{2 * index}:matmul", kind="matmul", forward_flops=2.0 * n_in * n_out,
                            bytes=FP32_BYTES * float(n_in + n_out), params=float(n_in * n_out + n_out),
                            activation_bytes=FP32_BYTES * float(n_in), kernels=1))
        if index < len(sizes) - 2:  # an activation after every hidden layer, none after the output
            layers.append(Layer(name=f"{2 * index + 1}:elementwise", kind="elementwise", forward_flops=0.0,
                                bytes=2.0 * FP32_BYTES * n_out, activation_bytes=FP32_BYTES * float(n_out), kernels=1))
    canonical = PREFIX + ",".join(str(width) for width in sizes)
    return Profile(name=canonical, description=f"multilayer perceptron {' -> '.join(map(str, sizes))} with LeakyReLU",
                   input_shape=[sizes[0]], generated_by="sizer.workloads.mlp_profile (dense layers, counted analytically)",
                   layers=layers)
