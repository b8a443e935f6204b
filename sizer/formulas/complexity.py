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
    """``T1 = Σ_μ Σ_i T^(μ,i)``: one processing element computes every neuron (seed 003 eq. 2)."""
    return float(sum(sum(layer) for layer in neuron_times))


def parallel_complexity(neuron_times: Sequence[Sequence[float]]) -> float:
    """``T2 = Σ_μ max_i T^(μ,i)``: one processing element per neuron (seed 003 eq. 3)."""
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
    """T1, T2 and their ratio for layers of the given widths, each neuron costing its fan-in.

    A neuron of layer μ does one multiply-add per input (its fan-in: the previous layer's
    width) at ``operation_time`` each. Without ``inputs``, the first width is the input layer.

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
