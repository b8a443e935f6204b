"""Terminal output a person reads: tables fit COLUMNS, nothing is cut, numbers and units read well (issue 12 item 10)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli import output

COMMANDS = [
    ("peak", "Tesla P40"),
    ("peak", "--cores", "3840", "--clock", "1.531 GHz"),
    ("compute", "--params", "175e9", "--tokens", "3e11"),
    ("time", "--params", "7e9", "--tokens", "2e10", "--device", "H100 SXM", "-n", "8", "-p", "bf16"),
    ("time", "--workload", "resnet50", "--samples", "1.28e6", "--device", "A100 80GB SXM", "--batch-size", "256", "-p", "bf16"),
    ("memory", "--params", "7e9", "--tokens", "2e10", "--device", "H100 SXM"),
    ("cells", "--samples", "10", "--features", "100", "--weights", "1000"),
    ("k1", "--weights", "1e6", "--samples", "1e4", "--features", "100"),
    ("complexity", "--layers", "75,512,512,10"),
    ("tco", "--device", "H100 SXM", "-n", "8", "--params", "7e9", "--tokens", "2e10", "-p", "bf16"),
    ("recommend", "--params", "1.3e9", "--tokens", "2.6e10"),
    ("recommend", "--buy", "--objective", "pareto", "--params", "1e8", "--samples", "1e6", "--sample-size", "150 kB",
     "--features", "100"),
    ("sweep", "--params", "1e9,7e9", "--tokens", "2e10", "--count", "1,8", "--precision", "bf16,fp32"),
    ("catalog", "list"),
    ("catalog", "show", "H100 SXM"),
]
GROUPS = [(), ("catalog",)]
LEAVES = [(name,) for name in ("peak", "compute", "time", "memory", "cells", "k1", "complexity", "tco", "recommend", "serve",
                               "profile", "calibrate", "validate", "sweep")] + [("catalog", "list"), ("catalog", "show")]


def _run(cli_runner, args, columns: int | None):
    from cli.main import app

    env = {"COLUMNS": str(columns) if columns else None}
    result = cli_runner.invoke(app, list(args), env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def cli_runner():
    from typer.testing import CliRunner

    return CliRunner()


def _too_wide(text: str, columns: int) -> list[str]:
    return [line for line in text.splitlines() if len(line) > columns]


@pytest.mark.parametrize("columns", [80, 120, None], ids=["80", "120", "piped"])
@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
def test_every_table_fits_the_width_and_cuts_no_cell(cli_runner, args, columns):
    text = _run(cli_runner, args, columns)
    limit = columns or output.PIPED_WIDTH  # piped without COLUMNS: the sensible default, not 160
    assert not _too_wide(text, limit), f"lines wider than {limit}:\n" + "\n".join(_too_wide(text, limit))
    assert "…" not in text
    for unreadable in ("e+0", "e+1", "mUSD", "kUSD"):
        assert unreadable not in text


@pytest.mark.parametrize("args", [g + ("--help",) for g in GROUPS] + [leaf + ("--help",) for leaf in LEAVES],
                         ids=lambda a: " ".join(a))
def test_help_at_80_columns_wraps_and_cuts_no_option_name(cli_runner, args):
    text = _run(cli_runner, args, 80)
    assert not _too_wide(text, 80) and "…" not in text
    if "Commands:" in text:  # click's own list cut each summary at 45 characters with "..."
        assert "..." not in text.split("Commands:")[1]


def test_recommend_help_names_every_long_option_in_full(cli_runner):
    text = _run(cli_runner, ("recommend", "--help"), 80)
    assert "--forward-flops-per-sample" in text and "--activation-memory-per-sample" in text


def test_piped_output_honours_columns(cli_runner):
    narrow, wide = _run(cli_runner, ("catalog", "list"), 80), _run(cli_runner, ("catalog", "list"), 200)
    assert max(map(len, narrow.splitlines())) <= 80 < max(map(len, wide.splitlines()))


def test_recommend_uses_its_narrow_layout_at_80_columns(cli_runner):
    narrow, wide = _run(cli_runner, ("recommend", "--top", "3"), 80), _run(cli_runner, ("recommend", "--top", "3"), 250)
    # count joined to the device in one cell (the name may wrap below it: column widths follow the figures), no pareto
    assert re.search(r"│ \d+ ×\s", narrow) and "pareto" not in narrow
    assert "pareto" in wide and not re.search(r"│ \d+ × \w", wide)


def test_version_comes_from_the_package_metadata(cli_runner):
    from importlib.metadata import version

    assert _run(cli_runner, ("--version",), None).strip() == f"sizer {version('sizer')}"


def test_contract_recommend_at_80_columns_in_a_subprocess(tmp_path):
    """What /work/shared/checks/contract-hardening runs: a real process, piped, COLUMNS=80."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", "from cli.main import main; main()", "recommend", "--params", "1.3e9",
                           "--tokens", "2.6e10"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={"COLUMNS": "80", "PYTHONPATH": str(root), "PATH": "/usr/bin:/bin",
                               "SIZER_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert not _too_wide(done.stdout, 80) and "…" not in done.stdout and "Recommendation" in done.stdout


# --- the renderer -------------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (10437.2, "10,440"), (9824.0, "9,824"), (0.75, "0.75"), (24.0, "24"), (0.0, "0"), (7e9, "7,000,000,000"),
    (2.5e20, "2.5×10²⁰"), (-1234.5, "-1,234"), (0.000123, "1.23×10⁻⁴"),
])
def test_numbers_for_people(value, text):
    assert output.fmt(value) == text


def test_the_issue_example_range():
    # the issue's own example: 1.044e+04 (9,824-1.113e+04) must read 10,440 (9,820–11,130)
    assert output.rng(output.Range(9824, 10437, 11131)) == "10,440 (9,820–11,130)"


@pytest.mark.parametrize("value, unit, text", [
    (0.75, "USD/hour", "0.75 USD/h"),     # currency never takes an SI prefix (was 750 mUSD/h)
    (50_000, "USD", "50,000 USD"),
    (0.0055, "s", "5.5 ms"), (90, "s", "90 s"), (600, "s", "10 min"), (5 * 3600, "s", "5 h"), (3 * 86400, "s", "3 days"),
    (86400, "s", "24 h"), (800 * 86400, "s", "2.19 years"), (24, "GB", "24 GB"), (2048, "GB", "2,048 GB"), (0.5, "GB", "500 MB"),
    (3.35e12, "B/s", "3.35 TB/s"), (1.176e13, "FLOP/s", "11.76 TFLOP/s"), (3.15e23, "FLOP", "315 ZFLOP"),
    (1234.5, "sample/s", "1,234 sample/s"), (1.531, "GHz", "1.531 GHz"), (1500, "kWh", "1.5 MWh"),
])
def test_units_chosen_for_people(value, unit, text):
    assert output.qty(output.Value(value, unit)) == text


def test_a_range_keeps_one_unit_and_stacks_on_request():
    hours = output.Range(16.74 * 86400, 17.78 * 86400, 18.97 * 86400, "s")
    assert output.rng(hours) == "17.78 (16.74–18.97) days"
    assert output.rng(hours, stacked=True) == "17.78 days\n(16.74–18.97)"
    assert output.rng(output.Range(0.5e-3, 5.5e-3, 7e-3, "s")) == "5.5 (0.5–7.0) ms"


def test_absent_values_render_as_a_dash():
    assert output.qty(None) == output.rng(None) == "-"


def test_width_reads_columns_even_when_piped(monkeypatch):
    monkeypatch.setenv("COLUMNS", "93")
    assert output.width() == 93
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    assert output.width() == output.PIPED_WIDTH


def test_fit_widths_gives_every_column_its_longest_word():
    texts = [["#", "1", "2"], ["device", "NVIDIA GeForce RTX 4090"], ["time", "17.78 days\n(16.74–18.97)"]]
    assert output.fit_widths(texts, 40) is None  # 37 cells: every column at its natural width
    widths = output.fit_widths(texts, 30)
    assert sum(widths) <= 30 and widths[2] >= len("(16.74–18.97)") and widths[1] >= len("GeForce")


HOSTILE_CATALOG = """\
sources:
  mine: "my own measurement, 2026-11"
devices:
  - id: evil-gpu
    name: "=HYPERLINK(\\"http://x\\")\\e[31m[bold]"
    vendor: Example
    kind: gpu
    architecture: Test
    launch_year: 2026
    fp32_cores: {value: 1000, source: mine}
    boost_clock: {value: 1 GHz, source: mine}
    memory: {value: 8 GB, source: mine}
    memory_type: GDDR6
    memory_bandwidth: {value: 300 GB/s, source: mine}
    tdp: {value: 150 W, source: mine}
"""


def test_catalog_names_can_neither_drive_the_terminal_nor_run_as_csv_formulas(cli, tmp_path):
    # issue 18: a catalog name starting with "=" was written raw into CSV (formula injection), and an
    # ESC sequence in a name reached the terminal raw
    path = tmp_path / "evil.yaml"
    path.write_text(HOSTILE_CATALOG)
    shown = cli("peak", "evil-gpu", "--catalog", str(path))
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.stdout and "\\x1b[31m" in shown.stdout and "[bold]" in shown.stdout
    csv = cli("sweep", "--params", "1e9", "--samples", "1e9", "--device", "evil-gpu", "--count", "1",
              "--catalog", str(path), "--format", "csv")
    assert csv.exit_code == 0, csv.output
    rows = [line for line in csv.stdout.splitlines() if "HYPERLINK" in line]
    assert rows and all(",=" not in row and not row.startswith("=") for row in rows), rows
    assert any("'=HYPERLINK" in row for row in rows), rows


def test_bracketed_reference_keys_are_printed_not_taken_as_markup(capsys, monkeypatch):
    # rich reads "[Korthikanti2022]" as a style tag and drops it: a table of sources lost its keys
    monkeypatch.setenv("COLUMNS", "200")
    output.table("Sources [spec-3.3]", ("assumption", "source"),
                 [("attention", "Korthikanti et al. 2022 [Korthikanti2022]"), ("layout", "[megatron] and [zero]")])
    output.say("see [Korthikanti2022]")
    output.warn("unverified figure [felix-8480]")
    shown = capsys.readouterr().out
    for key in ("[spec-3.3]", "[Korthikanti2022]", "[megatron]", "[zero]", "[felix-8480]"):
        assert shown.count(key) == 1 + (key == "[Korthikanti2022]"), (key, shown)


def test_a_real_answer_keeps_the_reference_keys_of_its_assumptions(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    shown = cli("time", "-m", "gpt2", "--tokens", "1e9", "-d", "H100 SXM5 80GB")
    assert shown.exit_code == 0, shown.output
    assert "docs/references.md [korthikanti]" in shown.stdout, shown.stdout[-3000:]
