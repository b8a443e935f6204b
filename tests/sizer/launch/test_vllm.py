"""vllm serve from a serving answer: every flag is one vLLM 0.11 documents and says what the answer chose."""
import pytest
from launch_text import as_written, command_flags

from sizer.errors import InputError
from sizer.launch import vllm
from sizer.runtimes import runtime

BASE = dict(model="llama-3.1-70b", device="H100 SXM", count=4, runtime="vllm", weights="fp8", emit="vllm")


def test_every_flag_is_documented_and_is_the_answer(serve):
    result = serve(**BASE)
    launch = result.launch
    assert launch.tool == "vllm" and launch.version == vllm.VERSION and launch.documentation.startswith("https://")
    flags = command_flags(launch.command, 3)  # vllm serve MODEL
    assert set(flags) <= vllm.OPTIONS
    assert flags == {k: as_written(v) for k, v in launch.options.items()}  # the text says what the field says
    assert launch.options["--tensor-parallel-size"] == result.count  # a tensor split of the answer's devices
    assert launch.options["--max-num-seqs"] == result.batch
    assert launch.options["--max-model-len"] == result.prompt_len + result.output_len
    assert launch.options["--quantization"] == "fp8" and result.weights == "fp8"
    assert launch.options["--kv-cache-dtype"] == "auto" and result.kv_cache == "fp16"  # the model's 16-bit dtype
    assert launch.options["--gpu-memory-utilization"] == runtime("vllm").profile.memory_share
    assert "--data-parallel-size" not in launch.options  # one replica without a load


def test_under_load_the_replicas_and_the_scheduler_limit(serve):
    result = serve(**{**BASE, "kv_cache": "fp8", "rate": 20})
    options = result.launch.options
    assert result.capacity.replicas > 1  # the case this test needs: more than one replica
    assert options["--data-parallel-size"] == result.capacity.replicas
    assert options["--max-num-seqs"] == runtime("vllm").profile.max_running  # the scheduler's limit the answer used
    assert options["--max-num-batched-tokens"] == runtime("vllm").profile.token_budget
    assert options["--kv-cache-dtype"] == "fp8_e4m3" and result.kv_cache == "fp8"


def test_a_layer_split_is_pipeline_parallel(serve):
    result = serve(model="llama-3.1-8b", device="RTX 4090", count=2, runtime="vllm", split="layer", emit="vllm")
    assert result.split == "layer"
    assert result.launch.options["--pipeline-parallel-size"] == 2 and result.launch.options["--tensor-parallel-size"] == 1


def test_bf16_weights_name_the_dtype_not_a_quantization(serve):
    options = serve(model="llama-3.1-8b", device="H100 SXM", weights="bf16", emit="vllm").launch.options
    assert options["--dtype"] == "bfloat16" and "--quantization" not in options


def test_a_kv_cache_vllm_does_not_store_is_refused_naming_emit(serve):
    with pytest.raises(InputError) as caught:
        serve(model="llama-3.1-8b", device="H100 SXM", kv_cache="int8", emit="vllm")
    assert caught.value.field == "emit" and "kv-cache-dtype" in str(caught.value)


def test_an_answer_sized_for_another_engine_is_refused(serve):
    with pytest.raises(InputError) as caught:
        serve(**{**BASE, "runtime": "sglang"})
    assert caught.value.field == "emit" and "sglang" in str(caught.value)
