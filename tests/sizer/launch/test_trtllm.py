"""trtllm-serve from a serving answer: TensorRT-LLM 1.0's documented flags and options-file key, the answer's
values; an AMD device is refused with the reason (TensorRT-LLM runs CUDA kernels only)."""
import pytest
import yaml
from launch_text import as_written, command_flags

from sizer.errors import InputError
from sizer.launch import trtllm
from sizer.runtimes import runtime

BASE = dict(model="llama-3.1-70b", device="H100 SXM", count=4, runtime="trtllm", weights="fp8", emit="trtllm")


def test_every_flag_is_documented_and_is_the_answer(serve):
    result = serve(**BASE, batch=8)
    launch = result.launch
    flags = command_flags(launch.command, 2)  # trtllm-serve MODEL
    assert set(flags) <= trtllm.OPTIONS and flags == {k: as_written(v) for k, v in launch.options.items()}
    assert launch.options["--tp_size"] == result.count and launch.options["--max_batch_size"] == result.batch
    assert launch.options["--max_seq_len"] == result.prompt_len + result.output_len
    assert launch.options["--kv_cache_free_gpu_memory_fraction"] == runtime("tensorrt-llm").profile.kv_free_share
    assert launch.config is None  # a 16-bit cache needs no options file


def test_an_fp8_kv_cache_goes_in_the_options_file(serve):
    launch = serve(**BASE, kv_cache="fp8").launch
    assert launch.options["--extra_llm_api_options"] == trtllm.EXTRA_OPTIONS_FILE
    assert yaml.safe_load(launch.config) == {"kv_cache_config": {"dtype": "fp8"}}
    assert launch.options["kv_cache_config.dtype"] == "fp8" and set(launch.options) <= trtllm.OPTIONS


def test_replicas_are_separate_servers(serve):
    result = serve(**BASE, kv_cache="fp8", rate=40)
    assert result.capacity.replicas > 1
    assert any(f"{result.capacity.replicas} replicas" in note for note in result.launch.notes)


def test_amd_is_refused_with_the_reason(serve):
    with pytest.raises(InputError) as caught:
        serve(model="llama-3.1-70b", device="MI300X", count=4, weights="fp8", emit="trtllm")
    assert caught.value.field == "emit" and "NVIDIA" in str(caught.value)
