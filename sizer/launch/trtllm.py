"""``trtllm-serve`` for a serving answer (TensorRT-LLM 1.0, PyTorch backend).

Option names as TensorRT-LLM 1.0's ``trtllm-serve`` page names them:
https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/trtllm-serve.html ; the KV-cache type is a key of
the LLM API options file (``--extra_llm_api_options``), ``kv_cache_config.dtype``:
https://nvidia.github.io/TensorRT-LLM/llm-api/reference.html (KvCacheConfig).
"""
from __future__ import annotations

from sizer.choices import KvCache
from sizer.errors import InputError
from sizer.launch.answer import Launch, OptionValue, command_line
from sizer.launch.serving_checks import notes_for
from sizer.launch.setups import ServingSetup
from sizer.launch.tool import Question, Tool

VERSION = "TensorRT-LLM 1.0"
DOCUMENTATION = "https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/trtllm-serve.html"
# The trtllm-serve options this emitter may write, and the LLM API options file's key, as the pages above name them.
OPTIONS = frozenset({
    "--backend", "--tp_size", "--pp_size", "--ep_size", "--max_batch_size", "--max_num_tokens", "--max_seq_len",
    "--kv_cache_free_gpu_memory_fraction", "--extra_llm_api_options", "kv_cache_config.dtype",
})
EXTRA_OPTIONS_FILE = "extra_llm_api_options.yaml"


def launch(setup: ServingSetup) -> Launch:
    """The ``trtllm-serve`` command of a serving setup (and, for an FP8 KV cache, its options file).

    Parameters
    ----------
    setup : ServingSetup
        The answer's setup.

    Returns
    -------
    Launch
        The command; ``--tp_size`` is the answer's tensor-parallel size, ``--max_batch_size`` its batch (or
        the scheduler's limit under load); replicas are separate servers (trtllm-serve has no data parallelism).
    """
    if setup.kv_cache not in (KvCache.FP16, KvCache.BF16, KvCache.FP8):
        raise InputError("emit", "trtllm", f"a tool that stores a {setup.kv_cache.value} KV cache: TensorRT-LLM 1.0's "
                                           "kv_cache_config.dtype takes auto (the model's dtype) or fp8")
    options: dict[str, OptionValue] = {"--backend": "pytorch", "--tp_size": setup.tensor_parallel}
    if setup.pipeline_parallel > 1:
        options["--pp_size"] = setup.pipeline_parallel
    if setup.expert_parallel:  # experts split whole over the replica (sizer.passes.moe_decode)
        options["--ep_size"] = setup.tensor_parallel
    options["--max_batch_size"] = setup.max_running
    if setup.token_budget is not None:
        options["--max_num_tokens"] = setup.token_budget
    options["--max_seq_len"] = setup.max_model_len
    options["--kv_cache_free_gpu_memory_fraction"] = setup.kv_free_share
    config = None
    if setup.kv_cache is KvCache.FP8:
        options["--extra_llm_api_options"] = EXTRA_OPTIONS_FILE
        config = "kv_cache_config:\n  dtype: fp8\n"
    notes = notes_for(setup, "TensorRT-LLM")
    if setup.weights not in ("bf16", "fp16", "fp32"):
        notes.append(f"{setup.weights} weights: TensorRT-LLM reads the quantisation from the checkpoint (a ModelOpt "
                     "export or a Hugging Face quantized checkpoint), so serve one stored in that format")
    if setup.replicas > 1:
        notes.append(f"{setup.replicas} replicas: run {setup.replicas} such servers behind a load balancer "
                     "(trtllm-serve has no data-parallel size)")
    command = command_line(["trtllm-serve", setup.model], options)
    if config is not None:
        notes.append(f"write the configuration below to {EXTRA_OPTIONS_FILE} (an FP8 KV cache)")
    return Launch(tool="trtllm", version=VERSION, command=command, config=config,
                  config_format="yaml" if config else None, options={**options, **({"kv_cache_config.dtype": "fp8"}
                                                                                    if config else {})},
                  documentation=DOCUMENTATION, notes=notes)


TOOL = Tool(name="trtllm", questions=frozenset({Question.SERVING}), version=VERSION, documentation=DOCUMENTATION,
            options=OPTIONS, emit=launch, aliases=("tensorrt-llm", "trt-llm", "trtllm-serve"), runtime="tensorrt-llm")
