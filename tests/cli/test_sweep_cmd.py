"""`sizer sweep`: its option checks (one clear message each, exit 2, in the order the options are read),
the workload grid it builds, and the same table written to standard output or to --out."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.sweep_cmd import _workloads


@pytest.mark.parametrize("args, message", [
    (["--params", "1e9", "--tokens", "2e10", "--samples", "5"], "tokens: got '2e10'; expected either --tokens or --samples"),
    (["--params", "1e9"], "samples: not given; expected --samples or --tokens"),
    (["--params", "1e9", "--tokens", "2e10", "--format", "xml"], "format: got 'xml'; expected table, csv or json"),
    (["--tokens", "2e10"], "params: not given; expected --params or --model"),
    (["--params", "1e9", "--model", "llama-2-7b", "--tokens", "2e10"], "expected --params or --model"),
    (["--params", "1e9,,2", "--tokens", "2e10"], "expected a comma-separated list"),
    (["--params", "1e9", "--tokens", "2e10", "--count", "1,x"], "count: got 'x'"),
    # 5,000 x 5,000 workloads on the whole catalog: refused from the list lengths, nothing built
    (["--params", ",".join(["1e9"] * 5000), "--tokens", ",".join(["2e10"] * 5000)], "at most 5,000,000 combinations"),
])
def test_bad_options_are_one_message_and_exit_2(cli: Callable[..., Any], args: list[str], message: str) -> None:
    result = cli("sweep", *args)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_both_samples_and_tokens_is_reported_before_a_bad_format(cli: Callable[..., Any]) -> None:
    result = cli("sweep", "--params", "1e9", "--tokens", "2e10", "--samples", "5", "--format", "xml")
    assert result.exit_code == 2 and "tokens:" in result.stderr and "format" not in result.stderr


def test_the_grid_is_every_size_amount_and_batch_with_unset_options_left_out() -> None:
    found = _workloads([("params", "1e9"), ("model", "llama-2-7b")], "tokens", ["2e10", "4e10"], [None, "64"],
                       {"epochs": None, "optimizer": "adam"})
    assert len(found) == 2 * 2 * 2
    assert found[0] == {"params": "1e9", "tokens": "2e10", "optimizer": "adam"}
    assert found[-1] == {"model": "llama-2-7b", "tokens": "4e10", "batch_size": "64", "optimizer": "adam"}


def test_json_has_a_row_per_combination(cli: Callable[..., Any]) -> None:
    result = cli("sweep", "--params", "1e9", "--samples", "1e6", "-d", "H100 SXM", "--count", "1,8",
                 "--precision", "bf16,fp32", "--json")
    rows = json.loads(result.stdout)
    assert result.exit_code == 0 and len(rows) == 2 * 2
    assert {(r["count"], r["precision"]) for r in rows} == {(1, "bf16"), (8, "bf16"), (1, "fp32"), (8, "fp32")}


def test_csv_to_a_file_is_the_csv_of_standard_output(cli: Callable[..., Any], tmp_path: Path) -> None:
    args = ["sweep", "--params", "1e9", "--tokens", "2e10", "-d", "H100 SXM", "--count", "1,2", "--format", "csv"]
    shown = cli(*args)
    out = tmp_path / "sweep.csv"
    written = cli(*args, "--out", out)
    assert shown.exit_code == written.exit_code == 0 and written.stdout == ""
    assert out.read_text() == shown.stdout and shown.stdout.startswith("workload,params,")


# issue 43's reproducers: the same device by two names was a pandas ValueError traceback, '--count 1,1'
# two identical rows; each distinct question is one CSV row.
@pytest.mark.parametrize("args", [
    ["--device", "H100 SXM", "--device", "h100-sxm5-80gb", "--count", "1"],
    ["--device", "H100 SXM", "--count", "1,1"],
    ["--device", "H100 SXM", "--count", "1", "--precision", "bf16,BF16"],
    ["--device", "H100 SXM", "--count", "1", "--params", "1B,1B"],
])
def test_a_question_asked_twice_is_one_row(cli: Callable[..., Any], args: list[str]) -> None:
    options = ["--params", "1B", "--tokens", "1e10", *args] if "--params" not in args else ["--tokens", "1e10", *args]
    result = cli("sweep", *options, "--format", "csv")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) == 1 + 1  # the header and one row


@pytest.mark.parametrize("count", ["٣", "１", "2,٤", "²"])  # Arabic-Indic, fullwidth, superscript: digits to str.isdigit
def test_counts_are_ascii_digits(cli: Callable[..., Any], count: str) -> None:
    result = cli("sweep", "--params", "1B", "--tokens", "1e10", "--device", "H100 SXM", "--count", count, "--format", "csv")
    assert result.exit_code == 2 and "count: got" in result.stderr and "whole numbers of devices" in result.stderr
