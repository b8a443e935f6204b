"""`sizer calibrate`: fit per-device efficiencies and per-step overhead from a validation report."""
from __future__ import annotations

import json as json_module
from pathlib import Path
from typing import Annotated

import typer

from cli import output
from cli.common import JsonOption


def calibrate(report: Annotated[str, typer.Argument(help="report.json written by `sizer validate`.")],
              out: Annotated[str, typer.Option("--out", help="Calibration YAML to write.")] = "calibration.yaml",
              json: JsonOption = False) -> None:
    """Fit, per device, the factor by which kernels run slower than the defaults and the per-step overhead."""
    from sizer.calibration import calibrate_runs, runs_from_report, save_calibration
    from sizer.errors import InputError
    from sizer.results import QuantityOut

    path = Path(report)
    try:
        data = json_module.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError("report", report, f"a readable report.json ({error.__class__.__name__})") from None
    calibration = calibrate_runs(runs_from_report(data), source=str(path))
    save_calibration(calibration, out)
    if json:
        return output.emit_json(calibration)
    output.table(f"Calibration written to {out}", ("device", "runs", "kernel time x", "overhead per step", "fit error (median)"),
                 ((d.device_name, d.runs, f"{d.efficiency_scale:.3g}", output.qty(QuantityOut(value=d.step_overhead_s, unit="s")),
                   f"{d.median_abs_error:.1%}") for d in calibration.devices),
                 caption="Use it with --calibration on `sizer time` and `sizer recommend`.")


def register(app: typer.Typer) -> None:
    app.command()(calibrate)
