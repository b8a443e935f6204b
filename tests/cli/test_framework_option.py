"""--framework on time, plan, memory and recommend (issue 39): the answer names the framework's recipe; a name
it does not know is one line naming the option, exit 2."""
from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("args", [
    ("memory", "--model", "llama-3.1-8b", "--device", "RTX 4090", "--seq-len", "2048"),
    ("time", "--model", "llama-3.1-8b", "--device", "RTX 4090", "--seq-len", "2048", "--tokens", "1e7"),
])
def test_the_answer_names_the_recipe(cli, args):
    result = cli(*args, "--framework", "torchtune", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["recipe"].startswith("torchtune full_finetune_single_device")


def test_plan_keeps_to_the_frameworks_layouts(cli):
    result = cli("plan", "--model", "llama-2-70b", "--tokens", "1e9", "--device", "H100 SXM", "--count", "64",
                 "--framework", "fsdp", "--json")
    assert result.exit_code == 0, result.output
    layouts = json.loads(result.stdout)["layouts"]
    assert layouts and all(o["tp"] == o["pp"] == 1 for o in layouts)  # PyTorch FSDP alone: no TP or PP


def test_recommend_takes_the_option(cli):
    result = cli("recommend", "--model", "llama-3.1-8b", "--tokens", "1e8", "--framework", "unsloth", "--method", "qlora",
                 "--json")
    assert result.exit_code == 0, result.output


def test_an_unknown_framework_is_one_line_naming_the_option(cli):
    result = cli("memory", "--model", "llama-3.1-8b", "--framework", "colossalai")
    assert result.exit_code == 2 and "framework" in result.output and "Traceback" not in result.output
