"""Choices are parsed once, where input enters: every spelling of every choice a training request takes
(any case, ``-`` or ``_``, surrounding blanks), sent through the CLI and through HTTP, reaches the core as
the enum member; a name outside the vocabulary is refused there, naming the field."""
from __future__ import annotations

import typing
from enum import StrEnum

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizer import facade
from sizer.errors import SizerError
from sizer.facade import TimeRequest


def choice_kind(annotation: object) -> type[StrEnum] | None:
    """The enum a field's annotation takes (``Precision``, ``Recompute | None`` ...), or None."""
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return annotation
    return next((kind for arg in typing.get_args(annotation) if (kind := choice_kind(arg)) is not None), None)


CHOICES = {name: kind for name, field in TimeRequest.model_fields.items()
           if (kind := choice_kind(field.annotation)) is not None}
BASE = {"model": "llama-2-7b", "tokens": "1e9", "device": "H100 SXM", "count": 8}


class Received(SizerError):
    """Raised by the stand-in core once it has seen the request: the answer itself is not the point here."""

    def __init__(self) -> None:
        super().__init__("received")


@pytest.fixture()
def received(monkeypatch):
    seen: list[TimeRequest] = []

    def core(request, catalog=None, **_):
        seen.append(request)
        raise Received()

    monkeypatch.setattr(facade, "estimate_time", core)
    return seen


def test_the_training_request_has_its_choices():
    assert {"precision", "optimizer", "attention", "method", "state_precision", "loss", "recompute",
            "sharding"} <= set(CHOICES)


def spellings(value: str) -> st.SearchStrategy[str]:
    """How people type a name: any case, with ``_`` for ``-``, padded with blanks."""
    return st.tuples(st.sampled_from([value, value.upper(), value.title(), value.replace("-", "_")]),
                     st.sampled_from(["", " "])).map(lambda parts: parts[1] + parts[0] + parts[1])


choice = st.sampled_from(sorted(CHOICES)).flatmap(
    lambda field: st.sampled_from(list(CHOICES[field])).flatmap(
        lambda member: spellings(member.value).map(lambda text: (field, member, text))))
RELAXED = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@RELAXED
@given(choice)
def test_every_spelling_through_http_reaches_the_core_as_the_member(received, case):
    from api.app import create_app

    field, member, text = case
    received.clear()
    with TestClient(create_app()) as client:
        client.post("/v1/time", json={**BASE, field: text})
    assert len(received) == 1
    value = getattr(received[0], field)
    assert value is member and isinstance(value, CHOICES[field])


@RELAXED
@given(choice)
def test_every_spelling_through_the_cli_reaches_the_core_as_the_member(received, cli, case):
    field, member, text = case
    received.clear()
    flags = [f"--{name.replace('_', '-')}" if not isinstance(value, int) else f"--{name}" for name, value in BASE.items()]
    args = [part for flag, value in zip(flags, BASE.values(), strict=True) for part in (flag, str(value))]
    result = cli("time", *args, f"--{field.replace('_', '-')}", text)
    assert len(received) == 1, result.output
    value = getattr(received[0], field)
    assert value is member and isinstance(value, CHOICES[field])


@pytest.mark.parametrize("field", sorted(CHOICES))
def test_an_unknown_name_is_refused_where_it_enters(received, cli, field):
    from api.app import create_app

    with TestClient(create_app()) as client:
        answer = client.post("/v1/time", json={**BASE, field: "no-such-choice"})
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["body", field]
    result = cli("time", "--model", "llama-2-7b", "--device", "H100 SXM", f"--{field.replace('_', '-')}", "no-such-choice")
    assert result.exit_code == 2 and field in result.output and "Traceback" not in result.output
    assert received == []  # the core never saw either
