"""llama-server from a local answer: llama.cpp's documented short options, each the answer's (-ngl the layers on
the GPU, all + 1 when every block is there; -c the context of all slots; -ctk/-ctv the KV type; -ts/-sm the split)."""
import pytest
from launch_text import as_written, command_flags

from sizer.errors import InputError
from sizer.launch import llama_cpp
from sizer.workloads.registry import find_model

BASE = dict(model="llama-3.1-8b", device="RTX 4090", weights="q4_k_m", emit="llama.cpp")


def _checked(launch):
    flags = command_flags(launch.command, 1)  # llama-server
    assert set(flags) <= llama_cpp.OPTIONS and flags == {k: as_written(v) for k, v in launch.options.items()}
    return launch.options


def test_every_block_on_the_gpu_is_all_layers_plus_one(serve):
    result = serve(**BASE)
    options = _checked(result.launch)
    assert options["-ngl"] == find_model("llama-3.1-8b").layers + 1  # the blocks and the output layer
    assert options["-c"] == result.prompt_len + result.output_len
    assert options["-fa"] == "on" and options["-ctk"] == options["-ctv"] == "f16" and result.kv_cache == "fp16"
    assert options["-m"].endswith("Q4_K_M.gguf") and "-t" not in options and "-ts" not in options


def test_offloaded_layers_and_threads(serve):
    options = _checked(serve(**BASE, gpu_layers=20, threads=8).launch)
    assert options["-ngl"] == 20 and options["-t"] == 8


def test_parallel_sequences_quantised_cache_and_no_flash_attention(serve):
    result = serve(**BASE, batch=4, kv_cache="q8_0", flash_attention=True)
    options = _checked(result.launch)
    assert options["-np"] == 4 and options["-c"] == 4 * (result.prompt_len + result.output_len)
    assert options["-ctk"] == options["-ctv"] == "q8_0"
    assert _checked(serve(**BASE, flash_attention=False).launch)["-fa"] == "off"


def test_unequal_devices_split_as_the_answer_split_them(serve):
    result = serve(model="llama-3.1-8b", devices=["RTX 3090", "RTX 4090"], weights="q4_k_m", emit="llama.cpp")
    options = _checked(result.launch)
    assert options["-ts"] == ",".join(str(d.layers) for d in result.per_device) and options["-sm"] == "layer"


def test_a_cpu_run_gives_its_threads_and_no_gpu_layers(serve, catalog):
    result = serve(model="llama-3.1-8b", device="Ryzen 9 7950X", weights="q4_k_m", emit="llama.cpp")
    options = _checked(result.launch)
    assert "-ngl" not in options and options["-t"] == int(catalog.find("Ryzen 9 7950X").cores.value)


def test_a_serving_answer_is_not_launched_by_llama_cpp(serve):
    with pytest.raises(InputError) as caught:
        serve(model="llama-3.1-8b", device="H100 SXM", emit="llama.cpp")
    assert caught.value.field == "emit" and "vllm" in str(caught.value)


def test_under_load_a_gguf_answer_is_a_serving_engines(serve):
    result = serve(model="llama-3.1-8b", device="RTX 4090", weights="q4_k_m", rate=1, emit="vllm")
    assert result.scenario == "load" and result.launch.tool == "vllm"
    with pytest.raises(InputError) as caught:
        serve(model="llama-3.1-8b", device="RTX 4090", weights="q4_k_m", rate=1, emit="llama.cpp")
    assert caught.value.field == "emit" and "under load" in str(caught.value)


def test_an_offload_is_no_split_over_devices(serve):
    options = _checked(serve(model="llama-3.1-70b", device="RTX 4090", weights="q4_k_m", gpu_layers=40,
                             emit="llama.cpp").launch)
    assert options["-ngl"] == 40 and "-ts" not in options and "-sm" not in options
