"""The ``sizer`` command (and ``python -m sizer``): the command line that lies beside this copy of the core.

Installed from the wheel, that is ``sizer.cli``. In a checkout it is the top-level ``cli/`` beside
``sizer/``, imported as ``cli`` when the checkout is on the path (tests, ``PYTHONPATH``): an editable
install maps ``sizer.cli`` to the installed checkout, which need not be the one this core came from.
Nothing here is imported by the core itself.
"""
from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from pathlib import Path


def command_module() -> str:
    """The name of the command line's main module for this copy of the core.

    Returns
    -------
    str
        ``"cli.main"`` in a checkout whose importable ``cli`` package is the one beside this
        ``sizer/``; else ``"sizer.cli.main"`` (the wheel, or an editable install).
    """
    core = Path(__file__).resolve().parent
    if not (core / "cli").is_dir():  # a checkout: cli/ beside sizer/
        found = find_spec("cli")
        if found is not None and found.origin and Path(found.origin).resolve().parent == core.parent / "cli":
            return "cli.main"
    return "sizer.cli.main"  # the wheel; or an editable install, whose finder maps sizer.cli to its checkout's cli/


def main() -> None:
    """Run the ``sizer`` command line of :func:`command_module` (the entry point of ``python -m sizer``)."""
    import_module(command_module()).main()


if __name__ == "__main__":
    main()
