"""What ``--emit`` adds to an answer: the launch command or configuration of the chosen setup, in one tool.

:class:`Launch` is the field every answer that chooses (or is given) a setup carries as ``launch`` when
it is asked for; :func:`command_line` writes a tool's flags as one command a shell runs.

>>> print(command_line(["vllm", "serve", "m"], {"--tensor-parallel-size": 4, "--enable-expert-parallel": True}))
vllm serve m \\
  --tensor-parallel-size 4 \\
  --enable-expert-parallel
"""
from __future__ import annotations

import shlex

from sizer.results import Model

# A flag's or a key's value: a switch (True), a number or a word.
OptionValue = str | int | float | bool


class Launch(Model):
    """The launch command or configuration of an answer's setup in one tool (``--emit``).

    Attributes
    ----------
    tool : str
        The tool's name as ``--emit`` takes it (``vllm``, ``llama.cpp``, ``megatron`` ...).
    version : str
        The tool and the version whose documentation names the options (``vLLM 0.11``).
    command : str or None
        The command to run (None where the tool reads a configuration file only).
    config : str or None
        The configuration file's text (TOML, JSON, YAML or Python), or None.
    config_format : str or None
        ``toml``, ``json``, ``yaml`` or ``python``; None without a configuration.
    options : dict
        Every flag or configuration key emitted (a file's keys dotted: ``zero_optimization.stage``) and its
        value, as the command or the configuration writes it.
    documentation : str
        The page that names the options.
    notes : list of str
        What the answer assumed that the command cannot say, and what a user must fill in.
    """

    tool: str
    version: str
    command: str | None = None
    config: str | None = None
    config_format: str | None = None
    options: dict[str, OptionValue]
    documentation: str
    notes: list[str] = []


def command_line(program: list[str], options: dict[str, OptionValue]) -> str:
    """A command with its flags, one flag a line (``\\`` continued), values quoted for a POSIX shell.

    Parameters
    ----------
    program : list of str
        The program and its positional arguments (``["vllm", "serve", "MODEL"]``).
    options : dict
        Flag -> value; True writes the flag alone (a switch), False leaves it out.

    Returns
    -------
    str
        The command.
    """
    parts = [" ".join(shlex.quote(p) for p in program)]
    for flag, value in options.items():
        if value is False:
            continue
        parts.append(flag if value is True else f"{flag} {shlex.quote(_word(value))}")
    return " \\\n  ".join(parts)


def _word(value: OptionValue) -> str:
    """A value as a command line writes it: 0.9 not 0.90000001, 4 not 4.0."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
