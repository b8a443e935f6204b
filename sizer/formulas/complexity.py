"""Sequential and parallel complexity of a feed-forward network (spec §3.6; seed 003 eq. 2, 3).

>>> sequential_complexity([[1.0, 2.0], [3.0]]), parallel_complexity([[1.0, 2.0], [3.0]])
(6.0, 5.0)
"""
from __future__ import annotations

from collections.abc import Sequence

from sizer.errors import InputError
from sizer.results import Assumption, Model, QuantityOut
from sizer.units import Quantity, parse_count, parse_quantity

MAX_NEURONS = 10_000_000


def sequential_complexity(neuron_times: Sequence[Sequence[float]]) -> float:
    r"""Complexity of a feed-forward network computed by one processing element.

    .. math::

        T_1 = \sum_{\mu=1}^{M} \sum_{i=1}^{N_\mu} T^{(\mu, i)}

    Parameters
    ----------
    neuron_times : sequence of sequences of float
        ``neuron_times[μ][i]`` is the time of neuron i of layer μ, T^(μ,i) [s] (or any one
        unit of time, which the result keeps).

    Returns
    -------
    float
        T_1, the sum of all neuron times [s].

    References
    ----------
    [seed-003-eq2], [spec-3.6]
    """
    return float(sum(sum(layer) for layer in neuron_times))


def parallel_complexity(neuron_times: Sequence[Sequence[float]]) -> float:
    r"""Complexity of the same network with one processing element per neuron.

    .. math::

        T_2 = \sum_{\mu=1}^{M} \max_i T^{(\mu, i)}

    Parameters
    ----------
    neuron_times : sequence of sequences of float
        ``neuron_times[μ][i]`` is the time of neuron i of layer μ, T^(μ,i) [s].

    Returns
    -------
    float
        T_2, the sum over layers of the slowest neuron's time [s].

    References
    ----------
    [seed-003-eq3], [spec-3.6]
    """
    return float(sum(max(layer) for layer in neuron_times))


class ComplexityResult(Model):
    layers: int
    neurons: int
    sequential: QuantityOut
    parallel: QuantityOut
    speedup: float
    assumptions: list[Assumption]


def estimate_complexity(layer_sizes: Sequence[object], operation_time: object = "1 ns",
                        inputs: object | None = None) -> ComplexityResult:
    r"""T1, T2 and their ratio for layers of the given widths, each neuron costing its fan-in.

    A neuron of layer μ does one multiply-add per input (its fan-in: the previous layer's
    width, :math:`N_{\mu-1}`) at ``operation_time`` t each, so

    .. math::

        T_1 = \sum_\mu N_\mu N_{\mu-1} t, \qquad T_2 = \sum_\mu N_{\mu-1} t

    Parameters
    ----------
    layer_sizes : list of int
        Layer widths [1]; without ``inputs`` the first is the input layer.
    operation_time : quantity, default ``"1 ns"``
        Time of one multiply-add [s].
    inputs : int, optional
        Width of the input layer [1], when ``layer_sizes`` holds only the computing layers.

    Returns
    -------
    ComplexityResult
        Layer and neuron counts, T1 and T2 [s], their ratio (speed-up) [1] and the assumptions.

    Raises
    ------
    InputError
        No layers, a width that is not a positive integer, more than ``MAX_NEURONS`` neurons,
        or an operation time that is not a time.

    References
    ----------
    [seed-003-eq2], [seed-003-eq3], [spec-3.6]

    Examples
    --------
    >>> estimate_complexity([75, 512, 10]).speedup
    74.13...
    """
    if not isinstance(layer_sizes, (list, tuple)) or not layer_sizes:
        raise InputError("layers", layer_sizes, "a list of layer widths such as [512, 512, 10]")
    widths = [int(parse_count(f"layers[{i}]", w, integer=True)) for i, w in enumerate(layer_sizes)]
    if sum(widths) > MAX_NEURONS:
        raise InputError("layers", layer_sizes, f"at most {MAX_NEURONS:,} neurons in all")
    step = parse_quantity("operation_time", operation_time, "[time]").to("s").magnitude
    if inputs is None:
        if len(widths) < 2:
            raise InputError("layers", layer_sizes, "the input width then at least one layer width, e.g. [75, 512, 10]")
        fan_in, widths = widths[0], widths[1:]
    else:
        fan_in = int(parse_count("inputs", inputs, integer=True))
    # every neuron of a layer has the same fan-in, so sum = width x time and max = time
    t1 = t2 = 0.0
    for width in widths:
        t1 += width * fan_in * step
        t2 += fan_in * step
        fan_in = width
    return ComplexityResult(layers=len(widths), neurons=sum(widths), sequential=QuantityOut.of(Quantity(t1, "s"), "s"),
                            parallel=QuantityOut.of(Quantity(t2, "s"), "s"), speedup=t1 / t2,
                            assumptions=[Assumption(name="time per neuron", value=f"fan-in x {operation_time}",
                                                    source="seed 003 eq. 2-3 with T(mu,i) = fan-in x operation time")])
