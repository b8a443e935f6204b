"""sizer/choices.py: every spelling of every choice parses to its member, once, at the boundary."""
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from sizer.choices import (
    Attention,
    Method,
    Mode,
    Optimizer,
    Precision,
    PrecisionName,
    Recompute,
    RecomputeName,
    Sharding,
    parse_choice,
    recompute_index,
    zero_stage_of,
)
from sizer.errors import InputError

KINDS = (Precision, Optimizer, Sharding, Method, Attention, Recompute, Mode)
MEMBERS = [member for kind in KINDS for member in kind]


@st.composite
def spelling(draw, member):
    """The member's name as a user may type it: any case, '-' or '_', spaces around."""
    letters = [draw(st.sampled_from([c.lower(), c.upper()])) for c in member.value]
    text = "".join(letters)
    if draw(st.booleans()):
        text = text.replace("-", "_")
    return draw(st.sampled_from(["", " ", "\t"])) + text + draw(st.sampled_from(["", " ", "\n"]))


@given(st.sampled_from(MEMBERS).flatmap(lambda m: st.tuples(st.just(m), spelling(m))))
def test_every_spelling_of_every_choice_parses_to_its_member(case):
    member, text = case
    assert parse_choice(type(member), text, "field") is member


@pytest.mark.parametrize("kind", KINDS)
def test_a_member_passes_through_unchanged(kind):
    for member in kind:
        assert parse_choice(kind, member, "field") is member


@pytest.mark.parametrize("value", ["lamb", "", None, 3, ["adam"], "adam w"])
def test_an_unknown_choice_names_the_field_and_lists_every_name(value):
    with pytest.raises(InputError, match="^optimizer: ") as error:
        parse_choice(Optimizer, value, "optimizer")
    assert all(member.value in error.value.expected for member in Optimizer)


def test_no_two_members_of_a_choice_read_alike():
    # parse_choice folds case and '_' to '-': two values that fold alike could never both be chosen
    for kind in KINDS:
        folded = [member.value.lower().replace("_", "-") for member in kind]
        assert len(set(folded)) == len(folded) and folded == [m.value for m in kind], kind


def test_full_sharding_is_zero_stage_3():
    # FSDP FULL_SHARD shards parameters, gradients and optimizer state: ZeRO stage 3 (Rajbhandari et al. 2020)
    assert zero_stage_of(Sharding.FULL) == 3 and zero_stage_of(Sharding.NONE) == 0


def test_recompute_codes_follow_the_amount_recomputed():
    # none < selective (attention only) < full (every layer), Korthikanti et al. 2022 §5
    assert [recompute_index(r) for r in (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)] == [0, 1, 2]
    assert recompute_index(None) is None


class _Request(BaseModel):
    precision: PrecisionName
    recompute: RecomputeName | None = None


def test_a_named_field_normalises_a_valid_name():
    assert _Request(precision=" BF16 ").precision == "bf16"
    assert _Request(precision="fp32", recompute="Full").recompute == "full"


def test_a_named_field_turns_a_valid_name_into_the_member():
    assert _Request(precision=" BF16 ").precision is Precision.BF16
    assert _Request(precision="fp32", recompute="Full").recompute is Recompute.FULL


def test_a_named_field_refuses_an_unknown_name_with_the_other_bad_fields():
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        _Request(precision="fp12", recompute="some")
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [(("precision",), "choice"), (("recompute",), "choice")]
    assert "got 'fp12'; expected one of fp64, fp32" in str(caught.value)


def test_a_named_field_serialises_to_its_name():
    assert _Request(precision="BF16").model_dump(mode="json") == {"precision": "bf16", "recompute": None}


def test_the_schema_lists_the_names():
    schema = _Request.model_json_schema()["properties"]["precision"]
    assert schema["type"] == "string" and schema["enum"] == [p.value for p in Precision]
