"""`--have` on recommend, time, memory, plan and inference, and the suggestion tables (cli/owned_output.py)."""
from __future__ import annotations

import json

import pytest

LLAMA = ("--model", "llama-3-8b", "--tokens", "1e8")


@pytest.mark.parametrize("command", ["recommend", "time", "memory", "plan"])
def test_have_answers_for_that_hardware_only(cli, command):
    result = cli(command, *LLAMA, "--method", "full", "--have", "8x A100 80GB SXM", "--have", "1x RTX 4090", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert [o["count"] for o in answer["options"]] == [8, 1]
    assert answer["options"][0]["fits"] and not answer["options"][1]["fits"]
    assert answer["options"][1]["suggestions"]
    assert {o["method"] for o in answer["options"]} == {"full"}  # --method kept


@pytest.mark.parametrize("command", ["recommend", "time", "memory", "plan"])
def test_have_without_method_picks_one_that_fits_and_says_so(cli, command):
    result = cli(command, *LLAMA, "--have", "1x RTX 4090", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    (option,) = answer["options"]
    assert option["fits"] and option["method"] in ("lora", "qlora")
    assert any(a["name"] == "method and precision" and "--method" in a["source"] for a in answer["assumptions"])


def test_have_tables_show_the_verdict_and_the_changes(cli):
    result = cli("time", *LLAMA, "--method", "full", "--have", "1x RTX 4090")
    assert result.exit_code == 0, result.output
    assert "On your hardware" in result.stdout and "does NOT fit" in result.stdout
    assert "What would make it work" in result.stdout and "QLoRA" in result.stdout


def test_inference_have(cli):
    result = cli("inference", "--model", "llama-2-13b", "--have", "1x RTX 4090", "--json")
    assert result.exit_code == 0, result.output
    option = json.loads(result.stdout)["options"][0]
    assert not option["fits"] and all(s["fits"] for s in option["suggestions"])
    assert {"change", "fits", "memory_per_device", "decode_tokens_per_s", "cost"} <= set(option["suggestions"][0])


def test_time_that_does_not_fit_prints_suggestions(cli):
    result = cli("time", *LLAMA, "--device", "RTX 4090", "--json")
    assert result.exit_code == 0, result.output
    suggestions = json.loads(result.stdout)["suggestions"]
    assert suggestions and {"change", "fits", "memory_per_device", "training_time", "cost"} <= set(suggestions[0])
    assert suggestions[0]["cost"]["price_basis"] in ("rent", "buy")


@pytest.mark.parametrize("have", ["0x T4", "8x", "3x no-such-device-xyz"])
def test_bad_have_is_one_line_naming_the_field(cli, have):
    result = cli("time", *LLAMA, "--have", have)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "have" in lines[0] and "Traceback" not in result.output


def test_neither_device_nor_have(cli):
    result = cli("time", *LLAMA)
    assert result.exit_code == 2 and "--have" in result.stderr and "None" not in result.stderr
