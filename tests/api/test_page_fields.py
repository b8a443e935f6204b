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


def listed(select_id: str) -> dict[str, str]:
    """What the page lists in a select: the list its data-choices attribute names, as GET /v1/choices gives it."""
    from fastapi.testclient import TestClient

    from api.app import create_app

    page = PAGE.read_text(encoding="utf-8")
    start = page.index(f'id="{select_id}"')
    tag = page[page.rindex("<select", 0, start):page.index(">", start)]
    name = tag.split('data-choices="')[1].split('"')[0]
    with TestClient(create_app()) as client:
        return {c["value"]: c["label"] for c in client.get("/v1/choices").json()[name]}


def test_the_serve_form_lists_every_named_length_set_with_its_means():
    # the CLI's --lengths list (sizer.simulator.traffic.LENGTH_DISTRIBUTIONS): the same sets, the same means
    from sizer.simulator.traffic import LENGTH_DISTRIBUTIONS

    offered = listed("sv-lengths")
    assert set(offered) == set(LENGTH_DISTRIBUTIONS)
    for name, lengths in LENGTH_DISTRIBUTIONS.items():
        prompt, output = lengths.means()  # a filtered set's are its sample's (issue 38)
        means = f"mean {prompt:,.0f} in / {output:,.0f} out"
        assert means in offered[name], (name, offered[name], means)


def test_the_serve_form_offers_every_kv_cache_type():
    # the page's KV-cache choices are sizer.choices.KvCache's members: a type added to the enum (llama.cpp's q8_0 and
    # q4_0) must be askable from the page too
    from sizer.choices import KvCache

    assert set(listed("sv-kv_cache")) == {k.value for k in KvCache}
