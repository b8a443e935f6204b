"""sizer/workloads/source.py: a model or profile named by the edge, as a name or a file, never guessed
by the core; a request over HTTP cannot name a file."""
import json

import pytest
from pydantic import BaseModel, ValidationError

from sizer.workloads.source import MAX_NAME_LENGTH, FileRef, Source, is_file_ref, model_source, profile_source


class _Request(BaseModel):
    model: Source


def test_a_name_stays_a_name_and_a_file_ref_stays_a_file():
    assert _Request(model="llama-2-7b").model == "llama-2-7b"
    ref = FileRef("my/config.json")
    assert _Request(model=ref).model is ref


def test_json_cannot_make_a_file_reference():
    # whatever a JSON body holds, it is a name (or refused): the server never opens a path a client gave
    request = _Request.model_validate_json(json.dumps({"model": "/etc/passwd"}))
    assert not is_file_ref(request.model)
    with pytest.raises(ValidationError):
        _Request.model_validate_json(json.dumps({"model": {"path": "/etc/passwd"}}))


def test_a_too_long_name_or_a_non_string_is_refused_naming_the_field():
    with pytest.raises(ValidationError, match="model"):
        _Request(model="x" * (MAX_NAME_LENGTH + 1))
    with pytest.raises(ValidationError, match="model"):
        _Request(model=7)
    assert _Request(model="x" * MAX_NAME_LENGTH).model == "x" * MAX_NAME_LENGTH


def test_a_file_is_written_as_file_path_when_serialised():
    assert _Request(model=FileRef("a.json")).model_dump() == {"model": "file:a.json"}
    assert _Request(model="gpt2").model_dump() == {"model": "gpt2"}
    assert _Request.model_json_schema()["properties"]["model"]["maxLength"] == MAX_NAME_LENGTH


def test_file_refs_compare_by_path():
    assert FileRef("a.yaml") == FileRef("a.yaml") and FileRef("a.yaml") != "a.yaml"
    assert len({FileRef("a.yaml"), FileRef("a.yaml"), FileRef("b.yaml")}) == 2
    assert str(FileRef("a.yaml")) == "a.yaml"


@pytest.mark.parametrize("typed, is_file", [("config.json", True), ("CONFIG.JSON", True), ("models/llama", True),
                                            ("llama-2-7b", False), ("mistral-7b", False)])
def test_the_cli_reads_model_as_a_file_only_by_its_form(typed, is_file):
    assert is_file_ref(model_source(typed)) is is_file


@pytest.mark.parametrize("typed, is_file", [("p.yaml", True), ("p.yml", True), ("resnet50", False), ("p.json", False)])
def test_the_cli_reads_a_workload_as_a_file_only_by_its_form(typed, is_file):
    assert is_file_ref(profile_source(typed)) is is_file


def test_an_existing_file_is_a_file_whatever_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymodel").write_text("{}")
    assert model_source("mymodel") == FileRef("mymodel")
    assert model_source(None) is None and model_source(3) == 3
