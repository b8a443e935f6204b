"""python -m sglang.launch_server from a serving answer: SGLang 0.5's documented flags, the answer's values."""
import pytest
from launch_text import as_written, command_flags

from sizer.errors import InputError
from sizer.launch import sglang
from sizer.runtimes import runtime

BASE = dict(model="llama-3.1-70b", device="H100 SXM", count=4, runtime="sglang", weights="fp8", kv_cache="fp8",
            emit="sglang")


def test_every_flag_is_documented_and_is_the_answer(serve):
    result = serve(**BASE, rate=20)
    launch = result.launch
    flags = command_flags(launch.command, 3)  # python -m sglang.launch_server
    assert set(flags) <= sglang.OPTIONS and flags == {k: as_written(v) for k, v in launch.options.items()}
    profile = runtime("sglang").profile
    assert launch.options["--tp-size"] == result.count
    assert launch.options["--dp-size"] == result.capacity.replicas > 1
    assert launch.options["--max-running-requests"] == profile.max_running
    assert launch.options["--chunked-prefill-size"] == profile.token_budget
    assert launch.options["--context-length"] == result.prompt_len + result.output_len
    assert launch.options["--kv-cache-dtype"] == "fp8_e4m3" and launch.options["--quantization"] == "fp8"
    assert launch.options["--mem-fraction-static"] == profile.memory_share
    assert launch.version == sglang.VERSION


def test_a_static_batch_is_the_running_limit(serve):
    result = serve(**{**BASE, "batch": 16})
    assert result.launch.options["--max-running-requests"] == 16 == result.batch
    assert "--dp-size" not in result.launch.options


def test_an_answer_sized_for_vllm_is_refused(serve):
    with pytest.raises(InputError) as caught:
        serve(**{**BASE, "runtime": "vllm"})
    assert caught.value.field == "emit" and "vllm" in str(caught.value)
