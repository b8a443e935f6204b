"""The options that correct an answer with the user's own measurement or efficiency (sizer.measured):
``--measured``, ``--measured-on``, ``--mfu`` (training) and ``--efficiency`` (serving and local)."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

MeasuredOption = Annotated[Optional[str], typer.Option(
    "--measured", help="Your measurement of this setup: '2900 tokens/s', '1.2 s/step', 'TTFT 350 ms', '25 ms/token' "
                       "(inference) or 'peak memory 18 GiB' (memory); the answer and every figure from it are rescaled. "
                       "'... on DEVICE' or --measured-on: measured on another device, carried over (reference mode).")]
MeasuredOnOption = Annotated[Optional[str], typer.Option(
    "--measured-on", help="The device (or 'N x DEVICE') the --measured figure was taken on; the engine carries it over "
                          "to --device and --count (reference mode).")]
MfuOption = Annotated[Optional[float], typer.Option(
    "--mfu", help="A what-if model FLOPs utilisation (0-1], e.g. 0.4, in place of the fitted efficiencies.")]
EfficiencyOption = Annotated[Optional[float], typer.Option(
    "--efficiency", help="A what-if fraction (0-1] of the bandwidth and compute roofline, e.g. 0.6, in place of the "
                         "fitted efficiencies.")]


def rescaled_rows(result) -> list[tuple[str, str]]:
    """The table row that says how an answer was rescaled (none where it was not)."""
    rescaled = getattr(result, "rescaled", None)
    return [] if rescaled is None else [("rescaled", rescaled.statement)]
