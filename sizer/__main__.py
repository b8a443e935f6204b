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


# The cyclic collector's thresholds for a command: a young generation of 200,000 objects (mypy's setting; Python's
# default is 700), then a collection of an older generation every 30 of the one below (default 10)
COMMAND_GC_THRESHOLDS = (200_000, 30, 30)


def fewer_collections(argv: list[str]) -> None:
    """Collect reference cycles less often in a command (not in ``sizer serve``, which keeps its own settings,
    api/heap.py): its start-up leaves some 90,000 objects the collector tracks (numpy, pint, pydantic, typer, the
    core's modules, models and catalog), which the default thresholds walk again and again in some 150 collections,
    30-50 ms of CPU: about a tenth of `sizer peak` (benchmarks/startup.py). Cycles are still collected, later; no
    answer depends on when.

    Parameters
    ----------
    argv : list of str
        The command's arguments, without the program's name.
    """
    if argv[:1] != ["serve"]:
        import gc

        gc.set_threshold(*COMMAND_GC_THRESHOLDS)


# BLAS threads a command starts: one. A command's arrays are a few thousand rows of element-wise work, and OpenBLAS's
# pool (one thread per core, started when numpy is imported) spins while it waits: about 90 ms of CPU taken from the
# other cores each command (`sizer peak` 0.40 -> 0.30 s CPU, the same wall time; a search's time unchanged)
COMMAND_BLAS_THREADS = "1"


def one_blas_thread(argv: list[str]) -> None:
    """Start numpy's BLAS with one thread in a command: not in ``sizer serve``, nor in ``sizer validate`` (which
    measures torch training on this machine's cores, and torch may use the same library), nor where the user set the
    count. Set before numpy is imported, which reads it once (:data:`COMMAND_BLAS_THREADS`).

    Parameters
    ----------
    argv : list of str
        The command's arguments, without the program's name.
    """
    if argv[:1] not in (["serve"], ["validate"]):
        import os

        os.environ.setdefault("OPENBLAS_NUM_THREADS", COMMAND_BLAS_THREADS)


def main() -> None:
    """Run the ``sizer`` command line of :func:`command_module` (the entry point of ``python -m sizer``)."""
    import sys

    one_blas_thread(sys.argv[1:])  # before numpy is imported
    fewer_collections(sys.argv[1:])  # before the command line's modules are imported: most of the objects
    import_module(command_module()).main()


if __name__ == "__main__":
    main()
