"""`sizer validate`: train real torch models, measure them, and compare with the core's predictions."""
from __future__ import annotations

import os
from typing import Annotated

import typer

DeviceChoice = Annotated[str, typer.Option("--device", help="auto (CUDA when present), cpu or cuda.")]
OutDir = Annotated[str, typer.Option("--out", help="Directory for report.json, runs.csv, summary.md and the plots.")]
Quick = Annotated[bool, typer.Option("--quick", help="The CI-sized suite: a few minutes on two CPU cores, smaller CNN inputs.")]
Suite = Annotated[str, typer.Option("--suite", help="cpu: the seed models (MLP sweeps, AlexNet, VGG-11, a small GPT; "
                                                    "any device); gpu: ResNet-50, ViT-B/16, BERT-large, GPT-2 medium, "
                                                    "Llama 3.2 1B training, LoRA, 1B and 8B prefill and decode, about "
                                                    "4.5 minutes on an H100 (needs CUDA).")]


def _fail(message: str) -> None:
    """A user's mistake: raised as the core's error, so that cli/main.py's SizerGroup, the one place errors
    become exit code 2, prints it (ARCHITECTURE.md)."""
    from sizer.facade import SizerError

    raise SizerError(message, message.split(":", 1)[0])


def validate(quick: Quick = False, device: DeviceChoice = "auto", out: OutDir = "validation-report",
             suite: Suite = "cpu") -> None:
    """Measure torch training runs (MLP sweeps, AlexNet, VGG-11, a small GPT; or, with --suite gpu, what people
    train and serve on a data-centre GPU) against the core's predictions."""
    from .siblings import sibling

    deps = sibling("validation.deps")
    MissingDependency, require_validation_extra = deps.MissingDependency, deps.require_validation_extra

    if device not in ("auto", "cpu", "cuda"):
        _fail(f"--device: got {device!r}; expected auto, cpu or cuda")
    if os.path.islink(out) and not os.path.exists(out):  # found before the runs, not when their report is written
        _fail(f"--out: got {out!r}; expected a folder, not a dangling symbolic link (it points to {os.readlink(out)!r})")
    try:
        require_validation_extra()
    except MissingDependency as error:
        _fail(str(error))

    if suite not in ("cpu", "gpu"):
        _fail(f"--suite: got {suite!r}; expected cpu or gpu")
    from . import output
    if suite == "gpu":
        if quick:
            _fail("--quick: the GPU suite has one size; give --suite gpu alone")
        _validate_gpu(device, out)
        return
    run_suite = sibling("validation.runner").run_suite

    mode = "quick" if quick else "full"
    with output.progress("validate") as progress:  # on standard error: the summary table alone goes to stdout
        task = progress.add_task("starting", total=None)

        def advance(name: str, done: int, total: int) -> None:
            progress.update(task, description=output.terminal_text(name), completed=done, total=total)

        try:
            report = run_suite(mode, device, out, on_progress=advance)
        except ValueError as error:
            _fail(str(error))
    for note in report["device"]["notes"]:  # e.g. efficiencies not measured on this processor
        if note.startswith("warning: "):
            output.warn(note.removeprefix("warning: "))
    s = report["summary"]
    pct = lambda v: "-" if v is None else f"{100 * v:.0f} %"  # noqa: E731
    output.key_values(f"Validation ({mode}) on {report['device']['name']}", [
        ("runs", f"{s['n_runs']} measured, {s['n_failed']} failed"),
        ("wall time", output.qty(output.Value(report["wall_time"]["value"], report["wall_time"]["unit"]))),
        ("step time |error| median / p90", f"{pct(s['uncontended']['median_abs_error'])} / "
                                           f"{pct(s['uncontended']['p90_abs_error'])} (uncalibrated, "
                                           f"{s['uncontended']['n_runs']} runs without competing load)"),
        ("inside predicted range", f"{s['uncontended']['within_predicted_range']} of {s['uncontended']['n_runs']}"),
        ("kept out (contended)", f"{len(s['excluded_from_headline'])}; all runs: |error| median "
                                 f"{pct(s['median_abs_error'])} / p90 {pct(s['p90_abs_error'])}"),
        ("layers account for (median)", pct(s["layers_accounted_fraction"]["median"])),
        ("report", f"{out}/report.json, runs.csv, summary.md, *.png")])
    for failure in report["failures"]:
        typer.echo(f"failed: {failure['id']}: {failure['error']}", err=True)
    if report["failures"]:
        raise typer.Exit(code=1)


def _validate_gpu(device: str, out: str) -> None:
    """Run the GPU suite (validation/gpu_suite.py) and print its summary; exit 1 where a run failed."""
    from . import output
    from .siblings import sibling

    run_gpu_suite = sibling("validation.gpu_suite").run_gpu_suite
    with output.progress("validate --suite gpu") as progress:
        task = progress.add_task("starting", total=None)

        def advance(name: str, done: int, total: int) -> None:
            progress.update(task, description=output.terminal_text(name), completed=done, total=total)

        try:
            report = run_gpu_suite("full", device, out, on_progress=advance)
        except ValueError as error:
            _fail(str(error))
    s = report["summary"]
    pct = lambda v: "-" if v is None else f"{100 * v:.0f} %"  # noqa: E731
    output.key_values(f"GPU validation on {report['device']['name']}", [
        ("runs", f"{s['n_runs']} measured, {s['n_failed']} failed or skipped"),
        ("wall time", output.qty(output.Value(report["wall_time"]["value"], report["wall_time"]["unit"]))),
        ("time |error| median / p90", f"{pct(s['time']['median_abs_error'])} / {pct(s['time']['p90_abs_error'])}; "
                                      f"{s['time']['within_range']} of {s['time']['n']} inside the range"),
        ("peak memory |error| median / p90", f"{pct(s['peak_memory']['median_abs_error'])} / "
                                             f"{pct(s['peak_memory']['p90_abs_error'])}"),
        ("\"fits\" agrees", f"{s['fits_agrees']['agree']} of {s['fits_agrees']['n']}"),
        ("report", f"{out}/report.json, runs.csv, summary.md")])
    for failure in report["failures"]:
        typer.echo(f"failed: {failure['id']}: {failure['error']}", err=True)
    if report["failures"]:
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    app.command()(validate)
