"""PNG plots of a validation report (matplotlib, Agg backend: no display needed).

- ``predicted_vs_measured.png``: predicted against measured step time, log-log, with the
  predicted range as error bars and the line y = x;
- ``layers_<run>.png``: per-layer forward and backward time of each CNN run (seed 002);
- ``sweep_<parameter>.png``: step time against each swept MLP hyperparameter (seed 001),
  measured and predicted.
"""
from __future__ import annotations

from pathlib import Path

MS_PER_S = 1000.0
FAMILY_COLOURS = {"mlp": "tab:blue", "cnn": "tab:red", "transformer": "tab:green"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    """Render the figure in memory, then write the file atomically (sizer.datafile)."""
    import io

    from sizer.datafile import write_bytes

    image = io.BytesIO()
    fig.savefig(image, dpi=110, format=path.suffix.lstrip(".") or "png")
    write_bytes(path, image.getvalue(), "out")


def predicted_vs_measured(report: dict, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 6))
    values = []
    for family, colour in FAMILY_COLOURS.items():
        runs = [r for r in report["runs"] if r["family"] == family]
        if not runs:
            continue
        x = [r["measured"]["step_time"]["value"] * MS_PER_S for r in runs]
        y = [r["predicted"]["step_time"]["expected"] * MS_PER_S for r in runs]
        low = [(r["predicted"]["step_time"]["expected"] - r["predicted"]["step_time"]["low"]) * MS_PER_S for r in runs]
        high = [(r["predicted"]["step_time"]["high"] - r["predicted"]["step_time"]["expected"]) * MS_PER_S for r in runs]
        ax.errorbar(x, y, yerr=[low, high], fmt="o", color=colour, label=family, capsize=3, alpha=0.8)
        values += x + y
    if values:
        lo, hi = min(values) / 2, max(values) * 2
        ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="y = x")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured step time [ms]")
    ax.set_ylabel("predicted step time [ms] (expected, bars: low-high)")
    s = report["summary"]
    ax.set_title(f"{report['device']['name']}\nmedian |error| {100 * (s['median_abs_error'] or 0):.0f} %, "
                 f"p90 {100 * (s['p90_abs_error'] or 0):.0f} % (uncalibrated)", fontsize=9)
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def layer_bars(report: dict, run_id: str, path: Path) -> Path:
    plt = _pyplot()
    entry = report["layers"][run_id]
    rows = entry["layers"]
    names = [f"{r['name']} {r['type']}" for r in rows]
    forward = [r["forward"]["value"] * MS_PER_S for r in rows]
    backward = [r["backward"]["value"] * MS_PER_S for r in rows]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.6))
    positions = range(len(rows))
    ax.barh([p - 0.2 for p in positions], forward, height=0.4, label="forward", color="tab:blue")
    ax.barh([p + 0.2 for p in positions], backward, height=0.4, label="backward", color="tab:orange")
    ax.set_yticks(list(positions), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time per step [ms]")
    ax.set_title(f"{run_id}: layers account for {100 * entry['accounted_fraction']:.0f} % of the profiled step "
                 f"({entry['profiled_step_time']['value'] * MS_PER_S:.3g} ms; unprofiled "
                 f"{entry['unprofiled_step_time']['value'] * MS_PER_S:.3g} ms)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def sweep_plot(report: dict, parameter: str, path: Path) -> Path | None:
    runs = [r for r in report["runs"] if (r.get("sweep") or {}).get("parameter") == parameter]
    base = next((r for r in report["runs"] if r["workload"] == "mlp" and r.get("sweep") is None
                 and r["config"]["processes"] == 1), None)
    points = [(r["sweep"]["value"], r) for r in runs]
    if base is not None:
        base_value = base["config"][parameter] if parameter in base["config"] else None
        if base_value is not None:
            points.append((base_value, base))
    if len(points) < 2:
        return None
    numeric = all(isinstance(v, (int, float)) for v, _ in points)
    points.sort(key=lambda item: item[0] if numeric else str(item[0]))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    x = [v for v, _ in points] if numeric else list(range(len(points)))
    measured = [r["measured"]["step_time"]["value"] * MS_PER_S for _, r in points]
    expected = [r["predicted"]["step_time"]["expected"] * MS_PER_S for _, r in points]
    low = [r["predicted"]["step_time"]["low"] * MS_PER_S for _, r in points]
    high = [r["predicted"]["step_time"]["high"] * MS_PER_S for _, r in points]
    ax.plot(x, measured, "o-", color="tab:blue", label="measured (median)")
    ax.plot(x, expected, "s--", color="tab:red", label="predicted (expected)")
    ax.fill_between(x, low, high, color="tab:red", alpha=0.15, label="predicted range")
    if numeric:
        ax.set_xscale("log", base=2)
        ax.set_xticks(x, [str(v) for v in x])
    else:
        ax.set_xticks(x, [str(v) for v, _ in points])
    ax.set_yscale("log")
    ax.set_xlabel(parameter.replace("_", " "))
    ax.set_ylabel("step time [ms]")
    ax.set_title(f"seed-001 MLP: step time against {parameter.replace('_', ' ')} ({report['device']['name']})", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def write_plots(report: dict, out: Path) -> list[Path]:
    written = []
    if report["runs"]:
        written.append(predicted_vs_measured(report, out / "predicted_vs_measured.png"))
    for run in report["runs"]:
        if run["family"] == "cnn" and run["id"] in report["layers"]:
            written.append(layer_bars(report, run["id"], out / f"layers_{run['id']}.png"))
    for parameter in sorted({r["sweep"]["parameter"] for r in report["runs"] if r.get("sweep")}):
        plot = sweep_plot(report, parameter, out / f"sweep_{parameter}.png")
        if plot is not None:
            written.append(plot)
    return written
