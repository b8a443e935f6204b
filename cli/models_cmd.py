"""`sizer models`: the built-in architectures, with parameters, training context and source."""
from __future__ import annotations

import re

import typer

from . import output
from .common import JsonOption


def models(json: JsonOption = False) -> None:
    """Every built-in architecture --model accepts: parameters, context length and source."""
    from sizer.facade import list_models

    listed = list_models()
    if json:
        return output.emit_json({"models": listed})
    rows = []
    for m in listed:
        active = "" if m.params_active == m.params_total else f"\n({output.count(m.params_active)} active)"
        rows.append((m.name, output.count(m.params_total) + active, f"{m.context:,}", _short_source(m.source, m.verified)))
    output.table(f"Built-in models: {len(listed)}", ("name", "parameters", "context", "source"), rows,
                 caption="Use a name with --model; parameters count every weight, embeddings included; "
                         "context is the training sequence length in tokens. --json for every field.")


def _short_source(source: str, verified: bool) -> str:
    """The first citation with commits cut to 7 characters; the rest is in --json."""
    first, *rest = [part.strip() for part in source.split(";") if part.strip()] or [source]
    shown = re.sub(r"@([0-9a-f]{7})[0-9a-f]{33}", r"@\1", first)
    return shown + (f" (+{len(rest)} more)" if rest else "") + ("" if verified else " [unverified]")


def register(app: typer.Typer) -> None:
    app.command()(models)
