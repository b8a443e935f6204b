"""The page's forms open on the command line's defaults (issue 42: the page pinned fp16 KV, QLoRA, adamw and a
speed target, so it answered another question than the CLI with the same inputs), read from index.html itself:
each field a form sends is either left out as it opens (empty, so the service's default applies) or holds the
request model's default. Fields that are the question itself (the model, its data) may hold an example."""
from __future__ import annotations

import re
from enum import Enum
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sizer.facade import InferenceRecommendRequest, RecommendRequest

PAGE = Path(__file__).resolve().parents[2] / "api" / "static" / "index.html"
# The question, not a default: what is trained or served and on how much data (the forms open on an example).
QUESTION = {"model", "params", "tokens", "samples", "prompt_len", "output_len"}
PAGE_ONLY = {"preset", "task", "data_mode", "purchase", "viewport"}


class OpeningValues(HTMLParser):
    """Each form's fields as the page opens: an input's value, a select's selected option (else its first)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: dict[str, dict[str, str]] = {}
        self._form: str | None = None
        self._select: str | None = None
        self._chosen = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "form":
            self._form = named.get("id")
            self.forms[self._form or ""] = {}
        elif self._form and tag == "input" and named.get("name") and named.get("type") not in ("radio", "checkbox"):
            self.forms[self._form][str(named["name"])] = named.get("value") or ""
        elif self._form and tag == "select":
            self._select, self._chosen = str(named.get("name")), False
        elif self._form and tag == "option" and self._select:
            first = self._select not in self.forms[self._form]
            if first or ("selected" in named and not self._chosen):
                self.forms[self._form][self._select] = named.get("value") if named.get("value") is not None else ""
                self._option_text = named.get("value") is None
                self._chosen = self._chosen or "selected" in named

    def handle_data(self, data: str) -> None:
        if getattr(self, "_option_text", False) and self._select and self._form:
            self.forms[self._form][self._select] = data.strip()  # an option without a value sends its text
            self._option_text = False

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "form":
            self._form = None


def _opening() -> dict[str, dict[str, str]]:
    parser = OpeningValues()
    parser.feed(PAGE.read_text(encoding="utf-8"))
    return parser.forms


def _same(typed: str, default: str) -> bool:
    try:
        return float(typed) == float(default)
    except ValueError:
        return typed == default


def _default(model, name: str) -> str:
    value = model.model_fields[name].default
    return str(value.value if isinstance(value, Enum) else value)


@pytest.mark.parametrize("form, model", [("recommend-form", RecommendRequest), ("finetune-form", RecommendRequest),
                                         ("serve-form", InferenceRecommendRequest)])
def test_every_field_opens_empty_or_on_the_cli_default(form, model):
    fields = _opening()[form]
    assert fields, form
    differ = {name: (value, _default(model, name)) for name, value in fields.items()
              if name in model.model_fields and name not in QUESTION | PAGE_ONLY and value != ""
              and not _same(value, _default(model, name))}
    assert not differ, f"{form} opens on values the CLI does not default to: {differ}"


def test_the_examples_are_a_current_model_in_plain_numbers():
    forms = _opening()
    assert forms["finetune-form"]["model"] == forms["serve-form"]["model"] == "llama-3.1-8b"
    exponent = re.compile(r"\d[eE][-+]?\d")
    assert not [(f, n, v) for f, fields in forms.items() for n, v in fields.items() if exponent.search(v)]


def test_the_pinned_choices_of_issue_42_are_gone():
    forms = _opening()
    assert forms["serve-form"]["kv_cache"] == "" and forms["serve-form"]["tokens_per_s_per_user"] == ""
    assert forms["finetune-form"]["method"] == ""


@pytest.mark.parametrize("select", ["framework", "ft-framework"])
def test_the_framework_choices_are_the_names_the_api_takes(select):
    # issue 39: the page takes --framework as the CLI does (pre-training and fine-tuning forms), every name and no other
    import re
    from pathlib import Path

    from sizer.frameworks.framework_name import Framework

    page = (Path(__file__).resolve().parents[2] / "api" / "static" / "index.html").read_text(encoding="utf-8")
    start = page.index(f'id="{select}"')
    options = re.findall(r"<option(?: value=\"([^\"]*)\")?>([^<]*)</option>", page[start:page.index("</select>", start)])
    names = [value if value or text.startswith("none") else text for value, text in options]
    assert names[0] == "" and sorted(names[1:]) == sorted(f.value for f in Framework)
