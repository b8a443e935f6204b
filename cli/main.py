"""The `sizer` command line: parses options, calls the core, renders. No formula lives here."""
from __future__ import annotations

from typing import Annotated

import typer

from . import (
    calibrate_cmd,
    catalog_cmd,
    compute_cmd,
    inference_cmd,
    lazy_coercion,
    memory_cmd,
    models_cmd,
    network_cmd,
    peak_cmd,
    plan_cmd,
    profile_cmd,
    recommend_cmd,
    serve_cmd,
    sweep_cmd,
    tco_cmd,
    time_cmd,
    typer_reads,
    validate_cmd,
    workloads_cmd,
)
from .common import HELP_SETTINGS, HelpGroup

lazy_coercion.install()  # before any command reads its options: an option not given builds no coercion
typer_reads.install()  # before any command is built: each command function's parameters read once

# typer >= 0.20 carries its own click; its ClickException is what the standalone runner prints.
ClickException = typer.BadParameter.__mro__[2]


class UserError(ClickException):
    """Printed as one line on stderr, exit status 2, never a traceback."""

    exit_code = 2


UsageError = typer.BadParameter.__mro__[1]


def one_line(error: Exception) -> Exception:
    """A usage mistake (an unknown option or command, a missing value, a bad choice) as one line, exit
    status 2: click prints its usage block and a help hint above the message where the error has a context.
    A bare group or command asked for nothing keeps its help (``no_args_is_help``)."""
    if type(error).__name__ == "NoArgsIsHelpError":  # its message is the help itself
        return error
    return UserError(error.format_message())  # type: ignore[attr-defined]


NUMPY_FLOAT_WARNINGS = r"(overflow|invalid value|divide by zero|underflow) encountered"


class SizerGroup(HelpGroup):
    """The one place where the core's errors become exit code 2 with one clear message."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except UsageError as error:  # `sizer --bogus`
            raise one_line(error) from None

    def invoke(self, ctx):
        import warnings

        from pydantic import ValidationError

        from sizer.facade import SizerError

        try:
            with warnings.catch_warnings():
                # NumPy's floating-point warnings (with their source lines) are not messages for people: a
                # result that overflowed is refused by the finiteness check with one clear sentence instead.
                warnings.filterwarnings("ignore", category=RuntimeWarning, message=NUMPY_FLOAT_WARNINGS)
                return super().invoke(ctx)
        except SizerError as error:
            raise UserError(error.message) from None
        except UsageError as error:  # a command's options, or an unknown command
            raise one_line(error) from None
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "input"
            raise UserError(f"{where}: {first['msg']}") from None


COMMAND_MODULES = (peak_cmd, compute_cmd, time_cmd, memory_cmd, models_cmd, workloads_cmd, plan_cmd, inference_cmd, network_cmd, tco_cmd, recommend_cmd,
                   serve_cmd, profile_cmd, calibrate_cmd, validate_cmd, sweep_cmd)


def _new_app() -> typer.Typer:
    return typer.Typer(name="sizer", cls=SizerGroup, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, rich_markup_mode=None, context_settings=HELP_SETTINGS,
                       help="Which GPU, how many, how long, what cost, will it fit: sizing for training, fine-tuning and serving neural networks.")


app = _new_app()
app.add_typer(catalog_cmd.app, name="catalog")
for module in COMMAND_MODULES:
    module.register(app)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"sizer {version('sizer')}")
        except PackageNotFoundError:
            raise UserError("sizer is not installed as a package, so it has no version; pip install it") from None
        raise typer.Exit()


@app.callback()
def _options(show_version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                                         help="Print the installed version and exit.")] = False) -> None:
    """Which GPU, how many, how long, what cost, will it fit: sizing for training, fine-tuning and serving neural networks."""


def _commands_of(module) -> set[str]:
    probe = typer.Typer()
    module.register(probe)
    return {info.name or info.callback.__name__.replace("_", "-") for info in probe.registered_commands}


def app_for(argv: list[str]) -> typer.Typer:
    """The app to run for ``argv``: when its first argument names a command, an app holding that
    command's module alone (with the same group, options and error handling), else the whole app.

    Typer inspects the signature of every registered command when it builds the click group, about
    a fifth of `sizer peak`'s start-up (benchmarks/startup.py); one command needs only its own.
    """
    name = argv[0] if argv else None
    for module in COMMAND_MODULES:
        if name in _commands_of(module):
            single = _new_app()
            single.callback()(_options)
            module.register(single)
            return single
    return app


def main() -> None:
    import os
    import sys

    if sys.argv[1:2] != ["serve"]:
        # A command validates its own request models only: pydantic's plugin discovery (every installed package's
        # entry points, through importlib.metadata) is ~25 ms of `sizer peak` (benchmarks/startup.py) that no
        # command needs. The service keeps plugins (observability); a user's own setting is kept.
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        app_for(sys.argv[1:])(prog_name="sizer")
    except SystemExit as done:
        if sys.argv[1:2] != ["serve"]:
            end_now(done.code)
        raise


def end_now(code: object) -> None:
    """End the process with ``code`` as ``sys.exit`` would, without tearing the interpreter down object by object.

    Freeing every module, array and model one at a time at exit is ~0.15 s of a command that took 0.6 s (numpy,
    pint, pydantic; benchmarks/startup.py); the system takes the memory back at once. The exit handlers still run
    (``atexit``: logging's flush among them) and the output is flushed first. Only where the main thread is the
    only one left (a thread still running is waited for by a normal exit); where flushing fails (a closed pipe),
    returns, and the normal exit reports it as before.
    """
    import atexit
    import os
    import sys
    import threading

    if threading.active_count() > 1:
        return
    status = 0 if code is None else code if isinstance(code, int) else 1
    try:
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    os._exit(status)


if __name__ == "__main__":
    main()
