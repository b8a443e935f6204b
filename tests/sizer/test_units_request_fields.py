"""The typed request fields of sizer/units.py (and the batch's, sizer/workloads/batch.py): a count or quantity is
read once, where the request model is built, and stays a typed value through copies and JSON."""
from __future__ import annotations

import json
from typing import Annotated, get_args

import pint
import pytest
from pydantic import PlainValidator, create_model

from sizer.errors import InputError
from sizer.plan.recommend import RecommendRequest
from sizer.schemas.measurement import Measured
from sizer.training.estimates import TimeRequest
from sizer.units import Duration, Memory, Money, ParsedBy, SecondsOrZero, parse_count, parse_quantity
from sizer.workloads.batch import BatchField, BatchSize, BatchUnit
from sizer.workloads.source import Source


def test_counts_and_quantities_are_typed_where_the_request_is_built():
    request = RecommendRequest(params="7B", tokens="2e10", batch_size="1536 sequences", deadline="2 weeks",
                               budget="$50k", host_memory="128 GB")
    assert request.params == parse_count("params", "7B") == 7e9 and isinstance(request.params, float)
    assert request.batch_size == BatchSize(1536.0, BatchUnit.SEQUENCE)
    assert isinstance(request.deadline, pint.Quantity) and request.deadline == parse_quantity("deadline", "2 weeks", "[time]")
    assert str(request.deadline.units) == "week"  # the unit as given: a deadline in weeks is said in weeks
    assert request.budget.to("USD").magnitude == pytest.approx(50_000)
    assert request.host_memory.to("B").magnitude == pytest.approx(128e9)


def test_json_of_a_request_reads_back_into_the_same_values():
    request = TimeRequest(params="7B", tokens="2e10", batch_size="4M tokens", checkpoint_interval="3 hours",
                          device="H100 SXM", host_memory="512 GiB")
    dumped = json.loads(request.model_dump_json(exclude_unset=True))
    assert dumped["params"] == 7e9 and dumped["batch_size"] == "4000000.0 tokens"
    again = TimeRequest.model_validate(dumped)
    for name in ("params", "tokens", "batch_size", "checkpoint_interval", "host_memory"):
        assert getattr(again, name) == getattr(request, name), name


def test_a_bare_batch_stays_a_number_in_json():
    assert json.loads(TimeRequest(params=1e9, tokens=1e10, batch_size=2048, device="H100 SXM").model_dump_json())[
        "batch_size"] == 2048.0


def test_a_copy_validates_its_change_and_keeps_the_rest_typed():
    request = RecommendRequest(params="7B", tokens="2e10", deadline="14 d")
    copied = request.model_copy(update={"tokens": "4e10"})
    assert copied.tokens == 4e10 and copied.deadline == request.deadline and copied.params == 7e9
    with pytest.raises(Exception, match="tokens: got 'lots'"):
        request.model_copy(update={"tokens": "lots"})


def test_every_bad_count_and_quantity_is_named_at_once_in_the_order_given():
    with pytest.raises(InputError) as caught:
        RecommendRequest(deadline="5 GHz", params="seven", max_devices=0)
    lines = caught.value.message.splitlines()
    # the model's own bound first, then the texts that do not read in the order they were given
    assert [line.split(":")[0] for line in lines] == ["max_devices", "deadline", "params"]
    assert lines[1] == "deadline: got '5 GHz'; expected a duration such as '7 d' or '36 h'"


def test_an_error_shows_a_typed_value_as_written():
    error = InputError("deadline", parse_quantity("deadline", "14 d", "[time]"), "something")
    assert error.message == "deadline: got '14 d'; expected something"
    assert InputError("batch_size", BatchSize(1536.0, BatchUnit.SEQUENCE), "x").message == \
        "batch_size: got '1536 sequences'; expected x"


def test_the_json_schema_still_takes_text_or_numbers():
    properties = RecommendRequest.model_json_schema()["properties"]
    assert {"type": "string"} in properties["params"]["anyOf"] and {"type": "number"} in properties["params"]["anyOf"]
    assert {"type": "string"} in properties["deadline"]["anyOf"]


def _field_schema(field_type):
    return create_model("One", x=(field_type, ...)).__pydantic_core_schema__["schema"]["fields"]["x"]


@pytest.mark.parametrize("field_type", [Duration, Memory, Money, SecondsOrZero, BatchField, Source, Measured])
def test_parsed_by_builds_the_schema_plain_validator_builds(field_type):
    # ParsedBy skips only the type's own schema, which the PlainSerializer after it replaces: the field's schema
    # (validator, its info argument, input schema, serialiser) is pydantic's PlainValidator's, with the same function
    base, *metadata = get_args(field_type)
    parsed = next(m for m in metadata if isinstance(m, ParsedBy))
    plain = [PlainValidator(parsed.func) if m is parsed else m for m in metadata]
    assert _field_schema(field_type) == _field_schema(Annotated[(base, *plain)])
