"""A default said aloud never changes an answer (issue 43: --method full, the documented default, switched a
named model to the fine-tuning batch, up to 4.2x the training time): every field of the time and recommend
requests given its own default answers exactly as the request without it."""
from __future__ import annotations

from pydantic_core import PydanticUndefined

from sizer.facade import RecommendRequest, TimeRequest, estimate_time, recommend

TIME = {"model": "llama-2-7b", "tokens": 1e10, "device": "H100 SXM", "count": 8}
RECOMMEND = {"params": "1B", "tokens": 1e10, "kinds": ["gpu"], "max_devices": 8}


def _defaults(model, given):
    """(field, default) of every field of ``model`` with a default that is not None and not among ``given``."""
    for name, field in model.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if name not in given and default is not None and default is not PydanticUndefined:
            yield name, default


def test_the_issue_reproducer_method_full_is_the_default(cli):
    args = ("time", "--model", "llama-2-7b", "--tokens", "1e10", "--device", "H100 SXM", "--count", "8", "--json")
    unsaid, said = cli(*args), cli(*args, "--method", "full")
    assert unsaid.exit_code == 0 and said.exit_code == 0, said.output
    assert said.stdout == unsaid.stdout


def test_every_default_of_a_time_request_said_aloud_changes_nothing(catalog):
    answer = estimate_time(TimeRequest(**TIME), catalog, suggest=False).model_dump_json()
    fields = list(_defaults(TimeRequest, TIME))
    assert any(name == "method" for name, _ in fields)
    for name, default in fields:
        assert estimate_time(TimeRequest(**TIME, **{name: default}), catalog, suggest=False).model_dump_json() == answer, name


def test_every_default_of_a_recommend_request_said_aloud_changes_nothing(catalog):
    answer = recommend(RecommendRequest(**RECOMMEND), catalog).model_dump_json()
    for name, default in _defaults(RecommendRequest, RECOMMEND):
        assert recommend(RecommendRequest(**RECOMMEND, **{name: default}), catalog).model_dump_json() == answer, name
