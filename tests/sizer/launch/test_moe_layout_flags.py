"""--emit writes the expert and attention split the answer assumed (issue 38 item 5): SGLang, vLLM, trtllm-serve."""
from launch_text import as_written, command_flags

from sizer.launch import sglang, trtllm, vllm

BASE = dict(model="deepseek-v3", device="H200", count=8)


def test_sglang_writes_ep_and_dp_attention(serve):
    launch = serve(**BASE, runtime="sglang", emit="sglang", dp_attention=True).launch
    flags = command_flags(launch.command, 3)
    assert set(flags) <= sglang.OPTIONS and flags == {k: as_written(v) for k, v in launch.options.items()}
    assert launch.options["--ep-size"] == 8 and launch.options["--dp-size"] == 8
    assert launch.options["--enable-dp-attention"] is True


def test_vllm_writes_data_parallel_ranks_and_expert_parallel(serve):
    launch = serve(**BASE, runtime="vllm", emit="vllm", dp_attention=True).launch
    assert set(command_flags(launch.command, 3)) <= vllm.OPTIONS
    assert launch.options["--tensor-parallel-size"] == 1 and launch.options["--data-parallel-size"] == 8
    assert launch.options["--enable-expert-parallel"] is True


def test_trtllm_writes_its_expert_parallel_size(serve):
    launch = serve(**BASE, runtime="tensorrt-llm", emit="trtllm", expert_parallel=True).launch
    assert set(command_flags(launch.command, 2)) <= trtllm.OPTIONS
    assert launch.options["--ep_size"] == 8 and launch.options["--tp_size"] == 8


def test_the_plain_layout_writes_no_expert_flags(serve):
    launch = serve(**BASE, runtime="sglang", emit="sglang").launch
    assert "--ep-size" not in launch.options and "--enable-dp-attention" not in launch.options
    assert any("left off" in note for note in launch.notes)
