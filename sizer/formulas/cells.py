"""Memory-cell count of the model-synthesis algorithm (spec §3.5; seed 003 eq. 1).

>>> memory_cell_count(samples=10, input_features=100, output_features=10, weights=1000)
2100
"""
from __future__ import annotations

from sizer.results import Assumption, Model, QuantityOut
from sizer.units import parse_count, parse_quantity


def memory_cell_count(samples: float, input_features: float, output_features: float, weights: float,
                      cells_per_data_element: float = 1, cells_per_weight: float = 1,
                      variables: float = 0, cells_per_variable: float = 1) -> float:
    r"""Memory cells used by the model-synthesis algorithm.

    .. math::

        N_{na} = \eta_b S (N + N_M) + \eta_w N_w + \eta_v N_v

    Parameters
    ----------
    samples : float
        Training specimens in the sample, S [1].
    input_features : float
        Features characterising one instance, N [1].
    output_features : float
        Output features, N_M [1].
    weights : float
        Weights and thresholds (biases) of the network, N_w [1].
    cells_per_data_element : float, default 1
        Memory cells per element of training data, η_b [cell].
    cells_per_weight : float, default 1
        Memory cells per weight, η_w [cell].
    variables : float, default 0
        Additional variables of the algorithm, N_v [1].
    cells_per_variable : float, default 1
        Memory cells per additional variable, η_v [cell].

    Returns
    -------
    float
        The number of memory cells N_na [cell].

    References
    ----------
    [seed-003-eq1], [spec-3.5]
    """
    return (cells_per_data_element * samples * (input_features + output_features)
            + cells_per_weight * weights + cells_per_variable * variables)


class CellsResult(Model):
    cells: float
    training_data_cells: float
    weight_cells: float
    variable_cells: float
    memory: QuantityOut
    assumptions: list[Assumption]


def estimate_cells(samples: float | str, features: float | str, outputs: float | str, weights: float | str, *,
                   variables: float | str = 0, eta_b: float | str = 1, eta_w: float | str = 1,
                   eta_v: float | str = 1, cell_size: object = "4 B") -> CellsResult:
    r"""Memory-cell count with every input checked, and its size in bytes.

    .. math::

        N_{na} = \eta_b S (N + N_M) + \eta_w N_w + \eta_v N_v, \qquad
        \text{memory} = N_{na} \cdot \text{cell size}

    Parameters
    ----------
    samples : count
        Training specimens S [1]; a number or a count string such as ``"1e6"``.
    features : count
        Input features N [1].
    outputs : count
        Output features N_M [1] (zero allowed).
    weights : count
        Weights and thresholds N_w [1].
    variables : count, default 0
        Additional algorithm variables N_v [1].
    eta_b, eta_w, eta_v : count, default 1
        Cells per data element, per weight and per variable [cell].
    cell_size : str, Quantity or mapping, default ``"4 B"``
        Bytes per cell [B] (one FP32 value by default).

    Returns
    -------
    CellsResult
        The cell count and its three terms [cell], the memory [GB] and the assumptions.

    Raises
    ------
    InputError
        A count that is negative, not finite or not a number, or a cell size that is not
        an amount of information; the message names the field.

    References
    ----------
    [seed-003-eq1], [spec-3.5]
    """
    s, n, m = parse_count("samples", samples), parse_count("features", features), parse_count("outputs", outputs, allow_zero=True)
    w, v = parse_count("weights", weights), parse_count("variables", variables, allow_zero=True)
    eb, ew, ev = (parse_count(name, value, allow_zero=True) for name, value in (("eta_b", eta_b), ("eta_w", eta_w), ("eta_v", eta_v)))
    size = parse_quantity("cell_size", cell_size, "[information]")
    cells = memory_cell_count(s, n, m, w, eb, ew, v, ev)
    return CellsResult(cells=cells, training_data_cells=eb * s * (n + m), weight_cells=ew * w, variable_cells=ev * v,
                       memory=QuantityOut.of(size * cells, "GB"),
                       assumptions=[Assumption(name="cell size", value=f"{size:~P}", source="given or default (one FP32 value)"),
                                    Assumption(name="formula", value="N_na = eta_b S (N + N_M) + eta_w N_w + eta_v N_v",
                                               source="seed 003 eq. 1")])
