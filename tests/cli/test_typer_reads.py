"""cli/typer_reads.py: typer reads a command function's parameters once while it builds the command, and builds the
same command as when it reads them each time."""
import typer.main

from cli import typer_reads
from cli.main import app_for

SETTINGS = ("name", "opts", "secondary_opts", "default", "required", "multiple", "nargs", "bare_type", "help",
            "is_flag", "min", "max", "metavar", "hidden", "envvar", "show_default", "count", "is_eager")


def _built(argv):
    command = typer.main.get_command(app_for(argv))
    params = (*command.params, *command.commands[argv[0]].params)
    return [tuple(repr(getattr(p, setting, None)) for setting in SETTINGS) for p in params]


def test_installed_once_however_often_asked():
    assert typer_reads.install() and typer_reads.install()
    assert getattr(typer.main.get_params_from_function, typer_reads.PATCHED)
    assert not hasattr(typer.main.get_params_from_function.__wrapped__, typer_reads.PATCHED)


def test_each_function_is_read_once(monkeypatch):
    typer_own = typer.main.get_params_from_function
    typer_own = getattr(typer_own, "__wrapped__", typer_own)
    read = []

    def counted(func):
        read.append(func.__name__)
        return typer_own(func)

    monkeypatch.setattr(typer.main, "get_params_from_function", counted)  # typer's own reader, counted
    typer.main.get_command(app_for(["recommend"]))
    assert read.count("recommend") > 1  # typer alone reads the command's function more than once
    read.clear()
    assert typer_reads.install()  # keeping the counted reader's readings
    typer.main.get_command(app_for(["recommend"]))
    typer.main.get_command(app_for(["recommend"]))
    assert read.count("recommend") == 1 and len(read) == len(set(read))


def test_the_command_is_built_as_typer_builds_it(monkeypatch):
    assert typer_reads.install()
    kept = _built(["recommend"])
    monkeypatch.setattr(typer.main, "get_params_from_function", typer.main.get_params_from_function.__wrapped__)
    assert kept == _built(["recommend"]) and len(kept) > 70
