"""A command's signature read once while typer builds it, not four times.

typer (0.2x) reads a command function's parameters (``typer.utils.get_params_from_function``: its signature, its
type hints with their ``Annotated`` options, a copy of each option's settings) once to make the click parameters and
again to make the callback that calls the function, and as often for the app's own callback: with
``sizer recommend``'s ~76 options that is ~1.1 ms of its start-up more than one reading (benchmarks/startup.py).
Both readings only read what they get (the parameters' names, annotations and settings, never changed), so the
first is kept for the function and given again. A callable that cannot be a key is read afresh each time.
Where typer builds commands otherwise (another version), nothing changes.
"""
from __future__ import annotations

from typing import Any

PATCHED = "_sizer_read_once"


def install() -> bool:
    """Keep typer's reading of each command function's parameters (module docstring).

    Returns
    -------
    bool
        Whether typer now reads each function once (False: this typer builds its commands without that reader,
        and reads as it always did).
    """
    from typer import main

    typer_reads = getattr(main, "get_params_from_function", None)
    if typer_reads is None:
        return False
    if getattr(typer_reads, PATCHED, False):
        return True
    read: dict[Any, Any] = {}

    def get_params_from_function(func: Any) -> Any:
        try:
            return read[func]
        except KeyError:
            read[func] = params = typer_reads(func)
            return params
        except TypeError:  # not hashable: no key to keep it under
            return typer_reads(func)

    setattr(get_params_from_function, PATCHED, True)
    get_params_from_function.__wrapped__ = typer_reads  # type: ignore[attr-defined]  (typer's own, for the tests)
    main.get_params_from_function = get_params_from_function
    return True
