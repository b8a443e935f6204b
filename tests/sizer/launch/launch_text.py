"""Reading an emitted command back, as a shell would, to compare it with the answer (the --emit tests)."""
from __future__ import annotations

import shlex


def command_flags(command: str, program_words: int) -> dict[str, object]:
    """A command's flags and values, read back from its text as a shell splits it: a flag followed by a word that is
    not a flag takes it as its value, else it is a switch (True). ``program_words``: the leading words to skip."""
    words = shlex.split(command.replace("\\\n", " "))[program_words:]  # a shell joins continued lines
    found: dict[str, object] = {}
    i = 0
    while i < len(words):
        flag = words[i]
        assert flag.startswith("-"), f"{flag!r} is not a flag in {command!r}"
        if i + 1 < len(words) and not words[i + 1].startswith("-"):
            found[flag], i = words[i + 1], i + 2
        else:
            found[flag], i = True, i + 1
    return found


def as_written(value: object) -> object:
    """An option's value as the command writes it (switches stay True)."""
    if value is True:
        return True
    return f"{value:g}" if isinstance(value, float) else str(value)
