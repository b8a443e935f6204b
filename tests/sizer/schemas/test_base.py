"""sizer/schemas/base.py: the bases every request model builds on, and every request model of sizer.schemas checked
against its own examples."""
import importlib
import inspect
import pkgutil
import re
import types

import pytest

import sizer.schemas
from sizer.errors import InputError
from sizer.schemas.base import DEFAULT_WORKLOAD_DESCRIPTION, RequestModel, WorkloadRequest, default_workload


def _request_models() -> list[type[RequestModel]]:
    found = []
    for info in pkgutil.iter_modules(sizer.schemas.__path__):
        module = importlib.import_module(f"sizer.schemas.{info.name}")
        found += [c for _, c in inspect.getmembers(module, inspect.isclass)
                  if issubclass(c, RequestModel) and c.__module__ == module.__name__]
    return found


def test_the_schemas_hold_the_request_models_of_every_question():
    names = {model.__name__ for model in _request_models()}
    assert {"WorkloadRequest", "TimeRequest", "MemoryRequest", "PlanRequest", "RecommendRequest", "PeakRequest",
            "CellsRequest", "K1Request", "ComplexityRequest", "TcoRequest"} <= names


@pytest.mark.parametrize("model", _request_models(), ids=lambda m: m.__name__)
def test_each_request_model_takes_its_own_examples(model):
    # the examples are what /docs shows a client: each must be a request the model takes
    for example in model.model_json_schema().get("examples", []):
        assert model(**example).model_dump(exclude_unset=True).keys() <= set(model.model_fields)


def test_true_is_never_taken_for_a_number():
    with pytest.raises(InputError) as refused:
        WorkloadRequest(params=True, tokens=1e9)
    assert refused.value.field == "params"


def test_a_copy_with_an_update_is_validated_as_a_new_request():
    request = WorkloadRequest(params=1e9, tokens=1e9)
    assert request.model_copy(update={"optimizer": "sgd"}).optimizer.value == "sgd"  # parsed into the member
    with pytest.raises(Exception) as refused:
        request.model_copy(update={"optimizer": "no-such-optimizer"})
    assert "optimizer" in str(refused.value)


def test_the_default_workload_is_the_one_it_describes():
    assert default_workload().params is not None and default_workload().tokens is not None
    said = re.match(r"(?P<params>[0-9.e]+)-parameter transformer trained on (?P<tokens>[0-9.e]+) tokens",
                    DEFAULT_WORKLOAD_DESCRIPTION)
    assert said is not None
    assert float(said["params"]) == float(default_workload().params)
    assert float(said["tokens"]) == float(default_workload().tokens)
    assert default_workload().optimizer.value.lower() in DEFAULT_WORKLOAD_DESCRIPTION.lower()


def test_the_signature_read_once_is_the_validators_own():
    # pydantic reads the "*" validator's signature for each field from __signature__ (set at import): it must be the
    # one inspect reads from the function's code (a copy without __signature__), info argument included
    kept = RequestModel.__dict__["_no_booleans_for_numbers"].__func__
    fresh = types.FunctionType(kept.__code__, kept.__globals__, kept.__name__, kept.__defaults__, kept.__closure__)
    fresh.__annotations__ = kept.__annotations__
    assert "__signature__" in vars(kept) and not hasattr(fresh, "__signature__")
    assert kept.__signature__ == inspect.signature(fresh)
    assert list(kept.__signature__.parameters) == ["cls", "value", "info"]
