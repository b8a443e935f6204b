"""`sizer workloads`: the built-in workload profiles, with forward GFLOP per sample, parameters and source."""
from __future__ import annotations

import typer

from . import output
from .common import JsonOption


def workloads(json: JsonOption = False) -> None:
    """Every built-in workload profile --workload accepts: forward GFLOP per sample, parameters, source."""
    from sizer.facade import list_workloads

    listed = list_workloads()
    if json:
        return output.emit_json({"workloads": listed})
    rows = []
    for w in listed:
        lengths = f"\nat {'/'.join(map(str, w.seq_lens))} tokens" if w.seq_lens else ""
        rows.append((w.name, f"{w.forward_gflop:,.3g}" + lengths, output.count(w.params), _short_source(w.source)))
    output.table(f"Built-in workloads: {len(listed)}", ("name", "GFLOP/sample", "parameters", "source"), rows,
                 caption="Use a name with --workload (forgiving: VGG-16, resnet-101, vit_b_16). Also: torchvision:NAME, "
                         "timm:NAME, hf:NAME (profiled on the fly with torch), mlp:W1,W2,... (layer widths). GFLOP is "
                         "forward, per sample (per sequence at the longest length). --json for every field.")


def _short_source(source: str) -> str:
    """A library model as named, else the profiling command's target (``validation.model_zoo:resnet50``)."""
    words = source.split()
    return words[2] if source.startswith("sizer profile ") and len(words) > 2 else source


def register(app: typer.Typer) -> None:
    app.command()(workloads)
