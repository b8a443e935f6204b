"""Files under abuse: an output path that is one of the command's own inputs is refused before anything
is read or written, and CSV cells write a name's control bytes as escapes, as tables do.

The adversarial pass overwrote a user's catalog with ``sweep --catalog mine.yaml -o mine.yaml`` and
found a catalog name's ESC bytes written raw into CSV (formula injection was already handled).
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from sizer import datafile
from sizer.errors import InputError

REPORT = Path(__file__).resolve().parents[2] / "validation" / "reports" / "cpu-quick-2026-11-22.json"

ESCAPING_CATALOG = """\
sources:
  mine: "my own measurement, 2026-11"
devices:
  - id: escaping-gpu
    name: "Plain\\e]0;owned\\a\\e[2J\\u202eGPU"
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


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(result, *words: str) -> str:
    assert result.exit_code == 2, result.output[-500:]
    assert "Traceback" not in result.output
    text = " ".join(result.stderr.split())
    for word in words:
        assert word in text, text
    return text


@pytest.fixture()
def own_catalog(cli, tmp_path) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(cli("catalog", "template").stdout)
    return path


SWEEP = ["sweep", "--params", "7B", "--tokens", "1e10", "--device", "H100 SXM", "--count", "8", "--format", "csv"]


@pytest.mark.parametrize("spelling", ["same", "dotted", "link"])
def test_sweep_never_writes_over_its_own_catalog(cli, own_catalog, spelling):
    before = _digest(own_catalog)
    out = {"same": own_catalog, "dotted": own_catalog.parent / "." / ".." / own_catalog.parent.name / own_catalog.name,
           "link": own_catalog.parent / "link.yaml"}[spelling]
    if spelling == "link":
        out.symlink_to(own_catalog.name)
    _refused(cli(*SWEEP, "--catalog", str(own_catalog), "-o", str(out)), "out", "catalog", "overwrite")
    assert _digest(own_catalog) == before


def test_sweep_never_writes_over_the_catalog_named_by_the_environment(cli, own_catalog, monkeypatch):
    monkeypatch.setenv("SIZER_CATALOG", str(own_catalog))
    before = _digest(own_catalog)
    _refused(cli(*SWEEP, "-o", str(own_catalog)), "out", "catalog")
    assert _digest(own_catalog) == before


def test_sweep_never_writes_over_a_model_config_it_reads(cli, tmp_path):
    config = tmp_path / "config.json"
    shutil.copy(Path(__file__).resolve().parents[1] / "data" / "hf-configs" / "Llama-2-7b-hf" / "config.json", config)
    before = _digest(config)
    _refused(cli("sweep", "--model", str(config), "--tokens", "1e10", "--device", "H100 SXM", "--count", "8",
                 "--format", "json", "-o", str(config)), "out", "model")
    assert _digest(config) == before


def test_sweep_still_writes_a_file_of_its_own(cli, own_catalog, tmp_path):
    out = tmp_path / "rows.csv"
    result = cli(*SWEEP, "--catalog", str(own_catalog), "-o", str(out))
    assert result.exit_code == 0, result.output[-500:]
    assert out.read_text().startswith("workload,")


def test_calibrate_never_writes_over_its_report(cli, tmp_path):
    report = tmp_path / "report.json"
    shutil.copy(REPORT, report)
    before = _digest(report)
    _refused(cli("calibrate", str(report), "--out", str(report)), "out", "report")
    assert _digest(report) == before


def test_check_writable_compares_files_not_spellings(tmp_path):
    source = tmp_path / "a.yaml"
    source.write_text("x: 1\n")
    with pytest.raises(InputError, match="catalog"):
        datafile.check_writable(tmp_path / "." / "a.yaml", "out", {"catalog": str(source)})
    datafile.check_writable(tmp_path / "b.yaml", "out", {"catalog": str(source), "model": [None, str(source)]})


def test_csv_cells_write_control_bytes_as_escapes(cli, tmp_path):
    path = tmp_path / "escaping.yaml"
    path.write_text(ESCAPING_CATALOG)
    table = cli("peak", "escaping-gpu", "--catalog", str(path))
    assert table.exit_code == 0, table.output
    for format in ("csv", "json"):
        result = cli("sweep", "--params", "1e9", "--samples", "1e9", "--device", "escaping-gpu", "--count", "1",
                     "--catalog", str(path), "--format", format)
        assert result.exit_code == 0, result.output[-500:]
        # no raw ESC, BEL or right-to-left override reaches the file, as none reaches the table
        assert not any(ch in result.stdout for ch in ("\x1b", "\x07", "\u202e")), repr(result.stdout[:300])
        assert not any(ch in table.stdout for ch in ("\x1b", "\x07", "\u202e"))
    csv = cli("sweep", "--params", "1e9", "--samples", "1e9", "--device", "escaping-gpu", "--count", "1",
              "--catalog", str(path), "--format", "csv").stdout
    assert "Plain\\x1b]0;owned\\x07\\x1b[2J\\u202eGPU" in csv
    # JSON keeps the name exactly (its own escapes are text, never raw bytes)
    rows = json.loads(cli("sweep", "--params", "1e9", "--samples", "1e9", "--device", "escaping-gpu", "--count", "1",
                          "--catalog", str(path), "--json").stdout)
    assert rows[0]["name"] == "Plain\x1b]0;owned\x07\x1b[2J\u202eGPU"


def test_sweep_refuses_an_out_that_is_a_dangling_link(cli, tmp_path):
    # issue 43: -o wrote through a dangling symbolic link, creating the file where it pointed
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    _refused(cli(*SWEEP, "-o", str(link)), "out:", "dangling symbolic link", "elsewhere.csv")
    assert not (tmp_path / "elsewhere.csv").exists() and link.is_symlink()
