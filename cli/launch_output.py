"""``--emit TOOL``: the option, and the "Launch" section printed after an answer's tables.

The command and the configuration are printed as plain text (no table, no wrapping), so that they can be
copied into a shell or a file as they are; JSON carries the same as the answer's ``launch`` field.
"""
from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from .output import control_escaped

EmitOption = Annotated[Optional[str], typer.Option(
    "--emit", help="Print the chosen setup's launch command or configuration in a tool: vllm, sglang, trtllm "
                   "(serving), llama.cpp (local), megatron, nemo, torchtitan, deepspeed (training layouts), "
                   "torchtune, axolotl, unsloth (fine-tunes). --json carries it as 'launch'.")]


def show(launch) -> None:
    """Print a :class:`~sizer.launch.Launch` (nothing where the answer has none): the command, the configuration
    file's text, then the notes.

    Parameters
    ----------
    launch : Launch or None
        The answer's ``launch`` field.
    """
    if launch is None:
        return
    lines = ["", f"Launch ({launch.version}):"]
    if launch.command:
        lines += ["", *launch.command.splitlines()]
    if launch.config:
        lines += ["", f"# {launch.config_format} configuration", *launch.config.splitlines()]
    if launch.notes:
        lines += ["", "Notes:", *(f"- {note}" for note in launch.notes)]
    lines += ["", f"Options as named by {launch.documentation}"]
    sys.stdout.write("\n".join(control_escaped(line) for line in lines) + "\n")
