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


class SelectOptions(HTMLParser):
    """The (value, text) of every option of one select, by its id."""

    def __init__(self, select_id: str) -> None:
        super().__init__()
        self.select_id, self.inside, self.options = select_id, False, []
        self._value: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "select":
            self.inside = named.get("id") == self.select_id
        elif tag == "option" and self.inside:
            self._value = named.get("value") or ""

    def handle_data(self, data: str) -> None:
        if self._value is not None:
            self.options.append((self._value, data))
            self._value = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.inside = False


def test_the_serve_form_lists_every_named_length_set_with_its_means():
    # the CLI's --lengths list (sizer.simulator.traffic.LENGTH_DISTRIBUTIONS): the same sets, the same means
    from sizer.simulator.traffic import LENGTH_DISTRIBUTIONS

    parser = SelectOptions("sv-lengths")
    parser.feed(PAGE.read_text(encoding="utf-8"))
    offered = {value: text for value, text in parser.options if value}
    assert set(offered) == set(LENGTH_DISTRIBUTIONS)
    for name, lengths in LENGTH_DISTRIBUTIONS.items():
        prompt, output = lengths.means()  # a filtered set's are its sample's (issue 38)
        means = f"mean {prompt:,.0f} in / {output:,.0f} out"
        assert means in offered[name], (name, offered[name], means)


def test_the_serve_form_offers_every_kv_cache_type():
    # the page's KV-cache choices are sizer.choices.KvCache's members: a type added to the enum (llama.cpp's q8_0 and
    # q4_0) must be askable from the page too
    from sizer.choices import KvCache

    parser = SelectOptions("sv-kv_cache")
    parser.feed(PAGE.read_text(encoding="utf-8"))
    assert {value for value, _ in parser.options if value} == {k.value for k in KvCache}
