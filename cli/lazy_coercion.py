"""An option not given costs nothing to read: typer's coercion built only for the values that come.

typer (0.2x) coerces every option's value through a pydantic ``TypeAdapter`` it builds for that
option when it reads the command line, whether the option was given or not: about 0.6 ms each, some
40 ms of ``sizer recommend``'s start-up with its ~70 options against ``sizer peak``'s handful
(benchmarks/startup.py). An option not given reads as ``None`` (``()`` where it takes several) whatever
its type, as typer's own ``RuntimeParam.coerce`` returns before it touches the adapter, so its adapter
is built only when a value comes. A required option, or one with a callback, goes through typer as
before. Where typer has no such parameter class (another version), nothing changes.
"""
from __future__ import annotations

from typing import Any

PATCHED = "_sizer_lazy_coercion"


def install() -> bool:
    """Read an option that was not given without building its coercion (module docstring).

    Returns
    -------
    bool
        Whether typer's parameters now read a missing value so (False: this typer has no lazy
        runtime parameter to skip, and reads as it always did).
    """
    from typer import core

    parameter = getattr(core, "_TyperParameter", None)
    if parameter is None or not hasattr(parameter, "get_runtime_param"):
        return False
    if getattr(parameter.process_value, PATCHED, False):
        return True
    typer_reads = parameter.process_value

    def process_value(self: Any, ctx: Any, value: Any) -> Any:
        if value is None and not self.required and self.callback is None:
            return () if (self.multiple or self.nargs == -1) else None
        return typer_reads(self, ctx, value)

    setattr(process_value, PATCHED, True)
    process_value.__wrapped__ = typer_reads  # type: ignore[attr-defined]  (typer's own, for the tests)
    parameter.process_value = process_value
    return True
