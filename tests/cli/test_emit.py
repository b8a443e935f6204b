"""--emit on the command line: the answer's tables, then a "Launch (TOOL VERSION):" section with the command;
--json carries the same as "launch"; a tool that does not fit the question exits 2 naming emit."""
import json

import pytest

SERVE = ("inference", "--model", "llama-3.1-70b", "--device", "H100 SXM", "--count", "4", "--runtime", "vllm",
         "--weights", "fp8", "--emit", "vllm")
TRAIN = ("time", "--model", "llama-2-70b", "--device", "H100 SXM", "--count", "256", "--tokens", "2e12",
         "--emit", "megatron")


@pytest.mark.parametrize("args, version", [(SERVE, "vLLM 0.11"), (TRAIN, "Megatron-LM core_r0.13.0")])
def test_text_and_json_say_the_same(cli, args, version):
    text = cli(*args)
    assert text.exit_code == 0, text.output
    answer = json.loads(cli(*args, "--json").output)
    launch = answer["launch"]
    assert launch["version"] == version
    section = text.output[text.output.index(f"Launch ({version}):"):]
    assert launch["command"] in section  # printed as it is, to be copied
    assert text.output.index("Assumptions") < text.output.index("Launch (")  # after the answer


def test_the_contract_examples(cli):
    served = json.loads(cli(*SERVE, "--json").output)
    assert served["launch"]["options"]["--tensor-parallel-size"] == served["count"] == 4
    trained = json.loads(cli(*TRAIN, "--json").output)
    options, layout = trained["launch"]["options"], trained["layout"]
    assert options["--tensor-model-parallel-size"] == layout["tp"]
    assert options["--pipeline-model-parallel-size"] == layout["pp"]
    local = cli("inference", "--model", "llama-3.1-8b", "--device", "RTX 4090", "--weights", "q4_k_m",
                "--emit", "llama.cpp")
    assert local.exit_code == 0 and "llama-server" in local.output and "-ngl 33" in local.output
    tuned = cli("memory", "--model", "llama-3.1-8b", "--method", "lora", "--device", "RTX 4090", "--emit", "torchtune")
    assert tuned.exit_code == 0 and "tune run lora_finetune_single_device" in tuned.output


def test_no_emit_prints_no_launch(cli):
    answer = cli("inference", "--model", "llama-3.1-8b", "--device", "H100 SXM")
    assert answer.exit_code == 0 and "Launch (" not in answer.output


@pytest.mark.parametrize("args", [
    ("time", "--model", "llama-2-7b", "--device", "H100 SXM", "--count", "8", "--tokens", "1e10", "--emit", "vllm"),
    ("inference", "--model", "llama-3.1-8b", "--device", "H100 SXM", "--emit", "llama.cpp"),
    ("inference", "--model", "llama-3.1-70b", "--device", "MI300X", "--count", "4", "--emit", "trtllm"),
    ("memory", "--model", "llama-3.1-8b", "--method", "lora", "--emit", "megatron"),
    ("plan", "--model", "llama-2-7b", "--device", "H100 SXM", "--count", "8", "--emit", "nope"),
])
def test_a_tool_that_does_not_fit_exits_2_naming_emit(cli, args):
    refused = cli(*args)
    assert refused.exit_code == 2 and "emit" in refused.output and "Traceback" not in refused.output


RANKED = ("recommend", "--inference", "--model", "llama-3.1-70b", "--weights", "fp8", "--tokens-per-s-per-user", "30")


def test_a_serving_ranking_launches_its_first_row(cli):
    # issue 42: --emit on every answer that chooses a setup; recommend --inference chooses the first row
    answer = json.loads(cli(*RANKED, "--emit", "vllm", "--json").output)
    top, options = answer["ranked"][0], answer["launch"]["options"]
    assert options["--tensor-parallel-size"] == top["tp"] * 1 == top["count"]
    assert options["--max-num-seqs"] == top["batch"]  # the concurrent sequences the row was ranked at
    assert options["--quantization"] == "fp8" and top["weights"] == "fp8"
    assert answer["launch"]["version"] == "vLLM 0.11"
    text = cli(*RANKED, "--emit", "vllm")
    assert text.exit_code == 0 and text.output.index("Assumptions") < text.output.index("Launch (vLLM")


def test_a_training_ranking_refuses_emit_naming_it(cli):
    result = cli("recommend", "--model", "llama-2-7b", "--tokens", "1e11", "--emit", "megatron")
    assert result.exit_code == 2 and "emit" in result.output and "Traceback" not in result.output
