"""`sizer calibrate`: fit per-device efficiencies and per-step overhead from a validation report."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import output
from .common import JsonOption

MAX_REPORT_BYTES = 50_000_000  # a report holds a per-layer profile per run: ~20 kB each


def calibrate(report: Annotated[str, typer.Argument(help="report.json written by `sizer validate`.")],
              out: Annotated[str, typer.Option("--out", help="Calibration YAML to write.")] = "calibration.yaml",
              json: JsonOption = False) -> None:
    """Fit, per device, the factor by which kernels run slower than the defaults and the per-step overhead."""
    from sizer.facade import QuantityOut, calibrate_runs, check_writable, load_json, runs_from_report, save_calibration

    path = Path(report)
    check_writable(out, "out", {"report": report})  # the fit would replace the report it was read from
    data = load_json(path, "report", MAX_REPORT_BYTES)
    calibration = calibrate_runs(runs_from_report(data, str(path)), source=str(path))
    save_calibration(calibration, out)
    if json:
        return output.emit_json(calibration)
    output.table(f"Calibration written to {out}", ("device", "runs", "kernel time x", "overhead per step", "fit error (median)"),
                 ((d.device_name, d.runs, f"{d.efficiency_scale:.3g}", output.qty(QuantityOut(value=d.step_overhead_s, unit="s")),
                   f"{d.median_abs_error:.1%}") for d in calibration.devices),
                 caption="Use it with --calibration on `sizer time` and `sizer recommend`.")


def register(app: typer.Typer) -> None:
    app.command()(calibrate)
