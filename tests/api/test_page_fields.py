"""The page's forms name only fields of the request models they are sent as: a field renamed or removed in
a model cannot leave a form input behind that the service would refuse (or, worse, one it ignores)."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from sizer.facade import InferenceRecommendRequest, InferenceRequest, RecommendRequest

PAGE = Path(__file__).resolve().parents[2] / "api" / "static" / "index.html"
# Inputs the page reads itself and never sends as they are: the preset picker, the form's task, how the data
# size is given (samples or tokens), whether to price a purchase, the chart's view.
PAGE_ONLY = {"preset", "task", "data_mode", "purchase", "viewport"}


class FormInputs(HTMLParser):
    """The ``name`` of every input, select and textarea, by the id of the form holding it."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: dict[str, set[str]] = {}
        self._form: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "form":
            self._form = named.get("id")
            self.forms.setdefault(self._form or "", set())
        elif tag in ("input", "select", "textarea") and self._form and named.get("name"):
            self.forms[self._form].add(str(named["name"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None


def form_inputs() -> dict[str, set[str]]:
    parser = FormInputs()
    parser.feed(PAGE.read_text(encoding="utf-8"))
    return parser.forms


@pytest.mark.parametrize("form, models", [
    ("recommend-form", (RecommendRequest,)),
    ("finetune-form", (RecommendRequest,)),
    # offline and under load to /v1/recommend, one device (a local question) to /v1/inference
    ("serve-form", (InferenceRecommendRequest, InferenceRequest)),
])
def test_every_form_input_is_a_field_of_the_request_it_is_sent_as(form, models):
    inputs = form_inputs()[form]
    assert inputs, f"no inputs found in {form}"
    fields = set().union(*(model.model_fields for model in models))
    stray = sorted(inputs - fields - PAGE_ONLY)
    assert not stray, f"{form} sends fields its request models do not have: {stray}"
