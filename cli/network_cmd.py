"""`sizer cells`, `sizer k1`, `sizer complexity`: the analytic expressions of Jamgharyan's hardware recommendations
(docs/references.md [seed-003])."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from . import output
from .common import JsonOption


def cells(samples: Annotated[str, typer.Option("--samples", help="S, samples in the training set.")],
          features: Annotated[str, typer.Option("--features", help="N, input features per sample.")],
          weights: Annotated[str, typer.Option("--weights", help="N_w, weights and thresholds.")],
          outputs: Annotated[str, typer.Option("--outputs", help="N_M, output features.")] = "1",
          variables: Annotated[str, typer.Option("--variables", help="N_v, extra algorithm variables.")] = "0",
          eta_b: Annotated[str, typer.Option("--eta-b", help="Cells per training-data element.")] = "1",
          eta_w: Annotated[str, typer.Option("--eta-w", help="Cells per weight.")] = "1",
          eta_v: Annotated[str, typer.Option("--eta-v", help="Cells per variable.")] = "1",
          cell_size: Annotated[str, typer.Option("--cell-size", help="Bytes per cell, e.g. '4 B'.")] = "4 B",
          json: JsonOption = False) -> None:
    """Memory cells a training run holds: its data, weights and variables (Jamgharyan's count)."""
    from sizer import facade

    result = facade.cells(facade.CellsRequest(samples=samples, features=features, outputs=outputs, weights=weights,
                                                    variables=variables, eta_b=eta_b, eta_w=eta_w, eta_v=eta_v,
                                                    cell_size=cell_size))
    if json:
        return output.emit_json(result)
    output.key_values("Memory cells (training data, weights, variables)", [
        ("cells", output.fmt(result.cells)), ("  training data", output.fmt(result.training_data_cells)),
        ("  weights", output.fmt(result.weight_cells)), ("  variables", output.fmt(result.variable_cells)),
        ("memory", output.qty(result.memory))])
    output.assumptions(result.assumptions)


def k1(weights: Annotated[str, typer.Option("--weights", help="N_w, weights and thresholds.")],
       samples: Annotated[str, typer.Option("--samples", help="S, samples in the training set.")],
       features: Annotated[str, typer.Option("--features", help="N, features per sample.")],
       tolerance: Annotated[float, typer.Option("--tolerance", help="|K1 - 1| that still counts as K1 = 1.")] = 0.01,
       json: JsonOption = False) -> None:
    """Whether a network can memorise its training set: K1 = weights / (samples x features), above 1 redundant, below 1 not."""
    from sizer import facade

    result = facade.k1(facade.K1Request(weights=weights, samples=samples, features=features, tolerance=tolerance))
    if json:
        return output.emit_json(result)
    output.key_values("K1 = weights / (samples x features)", [
        ("K1", output.fmt(result.k1)), ("verdict", result.verdict), ("meaning", result.meaning)])


def complexity(layers: Annotated[str, typer.Option("--layers", help="Input width then layer widths, e.g. '75,512,512,10'.")],
               operation_time: Annotated[str, typer.Option("--operation-time", help="Time of one multiply-add.")] = "1 ns",
               inputs: Annotated[Optional[str], typer.Option("--inputs", help="Fan-in of the first layer (then --layers are all neuron layers).")] = None,
               json: JsonOption = False) -> None:
    """Operations of a feed-forward network run one neuron at a time (T1) and with a processor per neuron (T2)."""
    from sizer import facade

    widths = [w.strip() for w in layers.split(",")]
    result = facade.complexity(facade.ComplexityRequest(layers=widths, operation_time=operation_time, inputs=inputs))
    if json:
        return output.emit_json(result)
    output.key_values("Complexity: one neuron at a time (T1), a processor per neuron (T2)", [
        ("layers", result.layers), ("neurons", result.neurons), ("T1 sequential", output.qty(result.sequential)),
        ("T2 parallel", output.qty(result.parallel)), ("T1 / T2", output.fmt(result.speedup))])
    output.assumptions(result.assumptions)


def register(app: typer.Typer) -> None:
    for command in (cells, k1, complexity):
        app.command()(command)
