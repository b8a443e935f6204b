"""Training compute (spec §3.2; seed 004 eq. 3).

>>> training_compute(175e9, 300e9, 1).to("FLOP")
<Quantity(3.15e+23, 'FLOP')>
"""
from __future__ import annotations

from typing import Any

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
                     backward_factor: float = BACKWARD_FACTOR) -> pint.Quantity[Any]:
    r"""Training compute from the parameter count.

    .. math::

        C_{train} = O_f \, O_b \, P \, S \, E

    Parameters
    ----------
    params : float
        Parameters P [1].
    samples : float
        Training samples per epoch S [1] (tokens for a language model).
    epochs : float
        Epochs E [1].
    forward_flops_per_param : float, default 2
        Forward FLOP per parameter per sample O_f [FLOP] (one multiply, one add).
    backward_factor : float, default 3
        Forward-plus-backward multiplier O_b [1] (the backward pass costs about twice the forward).

    Returns
    -------
    pint.Quantity
        C_train [FLOP].

    References
    ----------
    [seed-004-eq3], [spec-3.2]

    Examples
    --------
    GPT-3: 175e9 parameters, 300e9 tokens, one epoch gives 3.15e23 FLOP (spec §3.2).
    """
    return Quantity(forward_flops_per_param * backward_factor * params * samples * epochs, "FLOP")


def training_compute_from_forward(forward_flops_per_sample: pint.Quantity[Any], samples: float, epochs: float,
                                  backward_factor: float = BACKWARD_FACTOR) -> pint.Quantity[Any]:
    r"""Training compute from a counted forward pass, for layers that reuse weights.

    .. math::

        C_{train} = O_b \, F_{fwd} \, S \, E

    Parameters
    ----------
    forward_flops_per_sample : pint.Quantity
        Forward FLOP of one sample F_fwd [FLOP], counted from a layer description or a real model.
    samples : float
        Training samples per epoch S [1].
    epochs : float
        Epochs E [1].
    backward_factor : float, default 3
        Forward-plus-backward multiplier O_b [1].

    Returns
    -------
    pint.Quantity
        C_train [FLOP].

    References
    ----------
    [spec-3.2], [seed-004-eq3]

    Examples
    --------
    >>> training_compute_from_forward(Quantity(1.4e9, "FLOP"), 1.28e6, 90).to("FLOP")
    <Quantity(4.8384e+17, 'FLOP')>
    """
    compute: pint.Quantity[Any] = (backward_factor * forward_flops_per_sample * samples * epochs).to("FLOP")
    return compute


class ComputeResult(Model):
    training_compute: QuantityOut
    forward_flops_per_sample: QuantityOut
    formula: str
    assumptions: list[Assumption]
