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
    """``N_na = η_b · S · (N + N_M) + η_w · N_w + η_v · N_v`` (seed 003 eq. 1).

    ``samples`` S, ``input_features`` N, ``output_features`` N_M, ``weights`` N_w (weights and
    thresholds), ``variables`` N_v (extra algorithm variables); the η are memory cells per
    training-data element, per weight and per variable.
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


def estimate_cells(samples, features, outputs, weights, *, variables=0, eta_b=1, eta_w=1, eta_v=1,
                   cell_size="4 B") -> CellsResult:
    """Seed 003 eq. 1 with every input checked, and the count in bytes for a cell size."""
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
