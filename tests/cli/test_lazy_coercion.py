"""cli/lazy_coercion.py: an option not given is read without building typer's coercion for it, and reads as typer
reads it (None, or () where it takes several); a given, required or called-back option goes through typer."""
from typing import Annotated, Optional

import pytest
import typer
import typer.main
from typer import core

from cli import lazy_coercion
from cli.main import app_for


def _command():
    app = typer.Typer()

    @app.command()
    def ask(count: Annotated[Optional[int], typer.Option("--count", min=1, max=8)] = None,
            kinds: Annotated[Optional[list[str]], typer.Option("--kind")] = None,
            storage: Annotated[str, typer.Option("--storage")] = "nvme",
            rate: Annotated[Optional[float], typer.Option("--rate")] = None,
            headroom: Annotated[bool, typer.Option("--headroom")] = False,
            name: Annotated[str, typer.Option("--name")] = ...) -> dict:
        return dict(count=count, kinds=kinds, storage=storage, rate=rate, headroom=headroom, name=name)

    return typer.main.get_command(app)


def _read(args: list[str]) -> tuple[dict, int]:
    command = _command()
    answer = command.main(args, standalone_mode=False)
    ours = {"count", "kinds", "storage", "rate", "headroom", "name"}  # not typer's own --install-completion ...
    return answer, sum(p._runtime_param is not None for p in command.params if p.name in ours)


@pytest.mark.parametrize("args", [["--name", "x"], ["--name", "x", "--count", "3", "--kind", "gpu", "--kind", "cpu"],
                                  ["--name", "x", "--rate", "2.5", "--storage", "hdd", "--headroom"]])
def test_options_read_as_typer_reads_them(monkeypatch, args):
    assert lazy_coercion.install()
    lazy, _ = _read(args)
    monkeypatch.setattr(core._TyperParameter, "process_value", core._TyperParameter.process_value.__wrapped__)
    assert lazy == _read(args)[0]


def test_only_the_options_given_build_their_coercion(monkeypatch):
    assert lazy_coercion.install() and lazy_coercion.install()  # once, however often asked
    _, built = _read(["--name", "x", "--count", "3"])
    assert built == 3  # --name, --count and --storage's default "nvme" (a value): not --kind, --rate, --headroom
    monkeypatch.setattr(core._TyperParameter, "process_value", core._TyperParameter.process_value.__wrapped__)
    assert _read(["--name", "x", "--count", "3"])[1] == 5  # typer alone builds every option's (a bool flag's aside)


def test_a_bad_or_missing_value_is_still_refused():
    with pytest.raises(typer.BadParameter.__mro__[1]):  # click's UsageError: exit 2 on the command line
        _read(["--count", "3"])  # --name is required
    with pytest.raises(typer.BadParameter):
        _read(["--name", "x", "--count", "9"])  # above its max


def test_sizer_recommend_builds_the_coercion_of_few_of_its_options():
    assert lazy_coercion.install()
    command = typer.main.get_command(app_for(["recommend"])).commands["recommend"]
    command.make_context("recommend", ["--params", "7e9", "--tokens", "2e10", "--json"])  # reads every option
    built = [p.name for p in command.params if p._runtime_param is not None]
    assert len(command.params) > 60 and {"params", "tokens"} <= set(built) and len(built) < 15, built
