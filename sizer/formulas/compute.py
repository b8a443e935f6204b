"""Training compute (spec §3.2; seed 004 eq. 3).

>>> training_compute(175e9, 300e9, 1).to("FLOP")
<Quantity(3.15e+23, 'FLOP')>
"""
from __future__ import annotations

import pint

from sizer.results import Assumption, Model, QuantityOut
from sizer.units import Quantity

FORWARD_FLOPS_PER_PARAM = 2.0  # one multiply and one add per weight per sample (dense layers)
# O_b: forward + backward = 3 x forward (seed 004 eq. 3): the backward pass computes gradients with
# respect to inputs and to weights, each about one forward pass of FLOP. The engine's one O_b.
BACKWARD_FACTOR = 3.0
COMPUTE_SOURCE = "seed 004 eq. 3, C_train = O_f O_b P S E"


def training_compute(params: float, samples: float, epochs: float,
                     forward_flops_per_param: float = FORWARD_FLOPS_PER_PARAM,
                     backward_factor: float = BACKWARD_FACTOR) -> pint.Quantity:
    """``C_train = O_f · O_b · P · S · E`` [FLOP] (seed 004 eq. 3).

    ``params`` P, ``samples`` S (tokens for a language model), ``epochs`` E,
    ``forward_flops_per_param`` O_f, ``backward_factor`` O_b.
    Worked example (spec §3.2): GPT-3, 175e9 parameters, 300e9 tokens, 1 epoch -> 3.15e23 FLOP.
    """
    return Quantity(forward_flops_per_param * backward_factor * params * samples * epochs, "FLOP")


def training_compute_from_forward(forward_flops_per_sample: pint.Quantity, samples: float, epochs: float,
                                  backward_factor: float = BACKWARD_FACTOR) -> pint.Quantity:
    """``C_train = O_b · F_fwd · S · E`` [FLOP] (spec §3.2), for layers that reuse weights.

    ``forward_flops_per_sample`` F_fwd [FLOP], counted from a layer description or a real model.

    >>> training_compute_from_forward(Quantity(1.4e9, "FLOP"), 1.28e6, 90).to("FLOP")
    <Quantity(4.8384e+17, 'FLOP')>
    """
    return (backward_factor * forward_flops_per_sample * samples * epochs).to("FLOP")


class ComputeResult(Model):
    training_compute: QuantityOut
    forward_flops_per_sample: QuantityOut
    formula: str
    assumptions: list[Assumption]
