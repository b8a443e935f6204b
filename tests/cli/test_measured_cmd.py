"""`--measured`, `--measured-on`, `--mfu` and `--efficiency` on the command line: the same answer as Python and HTTP,
the rescaling said in the table, a wrong kind refused in one line with exit 2."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()
TIME = ["time", "--model", "llama-2-7b", "--device", "H100 SXM", "--count", "8", "--tokens", "1e10"]


def test_the_contract_training_time_is_tokens_over_the_measured_throughput():
    out = runner.invoke(app, [*TIME, "--measured", "20000 tokens/s", "--json"])
    assert out.exit_code == 0, out.output
    t = json.loads(out.output)["training_time"]
    assert t["expected"] * {"hour": 3600, "day": 86400, "minute": 60}[t["unit"]] == pytest.approx(1e10 / 20000, rel=0.02)


def test_the_table_says_by_how_much():
    out = runner.invoke(app, [*TIME, "--measured", "20,000 tokens/s"])
    assert out.exit_code == 0 and "sizer's" in out.output and "rescaled" in out.output


def test_a_ttft_on_time_exits_2_naming_measured():
    out = runner.invoke(app, [*TIME, "--measured", "TTFT 350 ms"])
    assert out.exit_code == 2 and "measured" in out.output and "Traceback" not in out.output


def test_the_contract_mfu_is_reported():
    out = runner.invoke(app, ["time", "--params", "7B", "--tokens", "1e12", "--device", "H100 SXM", "--count", "64",
                              "--mfu", "0.4", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["mfu"] == 0.4
    table = runner.invoke(app, ["time", "--params", "7B", "--tokens", "1e12", "--device", "H100 SXM", "--count", "64",
                                "--mfu", "0.4"])
    assert "40% MFU (given)" in " ".join(table.output.split())


@pytest.mark.parametrize("value", ["0", "1.5"])
def test_an_mfu_out_of_range_exits_2(value):
    out = runner.invoke(app, [*TIME, "--mfu", value])
    assert out.exit_code == 2 and "mfu" in out.output


def test_efficiency_and_measured_on_inference():
    ask = ["inference", "--model", "llama-3.1-8b", "--device", "RTX 3090", "--weights", "q4_k_m", "--json"]
    given = json.loads(runner.invoke(app, [*ask, "--efficiency", "0.6"]).output)
    assert given["rescaled"]["basis"] == "efficiency"
    carried = json.loads(runner.invoke(app, [*ask, "--measured", "100 tokens/s", "--measured-on", "RTX 4090"]).output)
    assert carried["rescaled"]["basis"] == "reference" and "RTX 4090" in carried["rescaled"]["measured_on"]


def test_memory_takes_a_peak_memory():
    out = runner.invoke(app, ["memory", "--model", "llama-2-7b", "--method", "lora", "--device", "RTX 4090",
                              "--measured", "peak memory 18 GiB", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["rescaled"]["basis"] == "measured"


def test_recommend_takes_a_measurement_on_one_device():
    out = runner.invoke(app, ["recommend", "--model", "llama-2-7b", "--tokens", "2e10", "--kind", "gpu",
                              "--measured", "40000 tokens/s on 8x H100 SXM", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["assumptions"][0]["name"] == "measured"
