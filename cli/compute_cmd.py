"""`sizer compute`: training compute C = O_f O_b P S E."""
from __future__ import annotations

from typing import Annotated

import typer

from . import output
from .common import Epochs, ForwardPerSample, JsonOption, Params, Samples, Tokens, workload_request


def compute(params: Params = None, samples: Samples = None, epochs: Epochs = "1", tokens: Tokens = None,
            forward_flops_per_param: Annotated[float, typer.Option("--forward-flops-per-param", min=0.0, help="O_f (2 for dense layers).")] = 2.0,
            backward_factor: Annotated[float, typer.Option("--backward-factor", min=1.0, help="O_b (3: backward costs twice the forward).")] = 3.0,
            forward_flops_per_sample: ForwardPerSample = None, json: JsonOption = False) -> None:
    """Training compute in FLOP: forward and backward passes over every sample (about 6 FLOP per parameter per token)."""
    from sizer.facade import estimate_compute

    request = workload_request(params=params, samples=samples, epochs=epochs, tokens=tokens,
                               forward_flops_per_param=forward_flops_per_param, backward_factor=backward_factor,
                               forward_flops_per_sample=forward_flops_per_sample)
    result = estimate_compute(request)
    if json:
        return output.emit_json(result)
    output.key_values("Training compute", [("training compute", output.qty(result.training_compute)),
                                           ("forward per sample", output.qty(result.forward_flops_per_sample)),
                                           ("formula", result.formula)])
    output.assumptions(result.assumptions)


def register(app: typer.Typer) -> None:
    app.command()(compute)
