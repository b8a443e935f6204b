"""`sizer models`: every model --model answers (presets and shipped configs), with parameters, training
context and source; the shipped configs and named models the engine refuses, with the reason."""
from __future__ import annotations

import re

import typer

from . import output
from .common import JsonOption

NOT_SUPPORTED_SHOWN = 120  # characters of a refusal in the table (the whole text is in --json)


def models(json: JsonOption = False) -> None:
    """Every model --model accepts: built-in presets and shipped Hugging Face configs (by hub id, e.g.
    Qwen/Qwen3-32B, or short name, qwen3-32b), with parameters, context length and source. --model also
    reads a config.json path."""
    from sizer.facade import configs_answered_by_presets, list_models, unsupported_models

    listed, refused, covered = list_models(), unsupported_models(), configs_answered_by_presets()
    if json:
        return output.emit_json({"models": listed, "not_supported": refused, "answered_by_preset": covered})
    rows = []
    for m in listed:
        active = "" if m.params_active == m.params_total else f"\n({output.count(m.params_active)} active)"
        rows.append((m.name, output.count(m.params_total) + active, f"{m.context:,}", _short_source(m.source, m.verified)))
    presets = sum(m.kind == "preset" for m in listed)
    output.table(f"Models: {presets} built-in presets, {len(listed) - presets} shipped configs",
                 ("name", "parameters", "context", "source"), rows,
                 caption="Use a name with --model (a hub id or the part after its organisation for a shipped config, "
                         "any case), or give a config.json path; parameters count every weight, embeddings included; "
                         "context is the training sequence length in tokens. --json for every field. Shipped configs "
                         "a preset's name covers, answered by the preset: "
                         + ", ".join(f"{hub} -> {name}" for hub, name in covered.items()) + ".")
    if refused:
        output.table(f"Models not supported: {len(refused)}", ("name", "reason"),
                     [(r.name, _short_reason(r.reason)) for r in refused],
                     caption="Shipped configs and the models of catalog/model_presets/not-supported.yaml: each holds the mechanism "
                             "named, which sizer does not model, or leaves a width unstated; an answer for one is refused "
                             "naming that config field.")


def _short_reason(reason: str) -> str:
    """A refusal up to :data:`NOT_SUPPORTED_SHOWN` characters, cut at a word, marked where cut (an unsupported
    model type without the list of supported ones)."""
    head, _, expected = reason.partition("; expected ")
    field = head.split(": got ", 1)[0].removeprefix("model.")
    if expected.startswith("one of the supported model types"):  # the list of types is in --json
        return f"{field}: a model type sizer has no reader for"
    # the refusal names the mechanism as "a model without <mechanism>, which sizer does not cost: ...": show that
    mechanism = expected.removeprefix("a model without ").split(", which sizer does not cost", 1)[0]
    # or what no cited source states: "a model whose <widths> a cited source states; ..."
    unstated = expected.removeprefix("a model whose ").split(" a cited source states", 1)[0]
    if mechanism != expected:
        shown = f"{field}: {mechanism}"
    elif unstated != expected:
        shown = f"{field}: not stated: {unstated}"
    else:
        shown = reason
    if len(shown) <= NOT_SUPPORTED_SHOWN:
        return shown
    return shown[:NOT_SUPPORTED_SHOWN].rsplit(" ", 1)[0] + " ... (--json: all)"


def _short_source(source: str, verified: bool) -> str:
    """The first citation with commits cut to 7 characters; the rest is in --json."""
    first, *rest = [part.strip() for part in source.split(";") if part.strip()] or [source]
    shown = re.sub(r"@([0-9a-f]{7})[0-9a-f]{33}", r"@\1", first)
    return shown + (f" (+{len(rest)} more)" if rest else "") + ("" if verified else " [unverified]")


def register(app: typer.Typer) -> None:
    app.command()(models)
