"""`sizer inference --prompts/--burst` (issue 38): the benchmark on the deployment as given, the same answer as
Python and HTTP, a saturated run said in the table, contradictions refused with exit 2 naming the option's field."""
from __future__ import annotations

import json

from sizer.facade import InferenceRequest, estimate_inference

# AccelMark RTX 3090 suite A (shared/data/serving-tails.csv): Llama-3-8B, 300 prompts at 5 requests/s, p99 TTFT 29.7 s
ARGS = ("inference", "-m", "llama-3-8b", "-d", "rtx-3090", "--rate", "5", "--prompt-len", "502", "--output-len", "200",
        "--prompts", "300")


def test_a_saturated_benchmark_says_so_in_the_table(cli):
    result = cli(*ARGS)
    assert result.exit_code == 0, result.output
    assert "saturated" in result.stdout and "x capacity" in result.stdout


def test_the_cli_gives_the_python_answer(cli):
    result = cli(*ARGS, "--json")
    assert result.exit_code == 0, result.output
    python = estimate_inference(InferenceRequest(model="llama-3-8b", device="rtx-3090", rate=5, prompt_len=502,
                                                 output_len=200, prompts=300))
    body = json.loads(result.stdout)
    assert body["latency"]["ttft"]["p99"] == python.latency.ttft.p99
    assert body["capacity"]["utilisation"] == python.capacity.utilisation > 1


def test_a_burst_with_a_rate_is_refused_naming_burst(cli):
    result = cli("inference", "-m", "llama-3-8b", "-d", "rtx-3090", "--burst", "100", "--rate", "3")
    assert result.exit_code == 2
    assert "burst" in result.output
