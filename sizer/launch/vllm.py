"""``vllm serve`` for a serving answer (vLLM 0.11).

Option names as vLLM 0.11's engine-argument page names them:
https://docs.vllm.ai/en/v0.11.0/configuration/engine_args.html (``vllm serve --help`` prints the same list).
"""
from __future__ import annotations

from sizer.choices import KvCache
from sizer.errors import InputError
from sizer.launch.answer import Launch, OptionValue, command_line
from sizer.launch.serving_checks import notes_for
from sizer.launch.setups import ServingSetup
from sizer.launch.tool import Question, Tool

VERSION = "vLLM 0.11"
DOCUMENTATION = "https://docs.vllm.ai/en/v0.11.0/configuration/engine_args.html"
# The engine arguments this emitter may write, spelled as the page above spells them.
OPTIONS = frozenset({
    "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size", "--enable-expert-parallel",
    "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--kv-cache-dtype",
    "--gpu-memory-utilization", "--quantization", "--dtype",
})
# --quantization choices (same page) for sizer's weight formats; a format missing here is read from the
# checkpoint's own quantization_config (vLLM's default), which the note says.
QUANTIZATION = {"fp8": "fp8", "mxfp4": "mxfp4", "nvfp4": "modelopt_fp4",
                "awq-int4-g64": "awq_marlin", "awq-int4-g128": "awq_marlin",
                "gptq-int4-g32": "gptq_marlin", "gptq-int4-g64": "gptq_marlin", "gptq-int4-g128": "gptq_marlin"}
# --dtype choices (same page) for 16- and 32-bit weights
DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
# --kv-cache-dtype choices (same page): "auto" stores the cache in the model's dtype
KV_CACHE_DTYPE = {KvCache.FP8: "fp8_e4m3", KvCache.BF16: "bfloat16"}


def launch(setup: ServingSetup) -> Launch:
    """The ``vllm serve`` command of a serving setup.

    Parameters
    ----------
    setup : ServingSetup
        The answer's setup.

    Returns
    -------
    Launch
        The command; ``--tensor-parallel-size`` is the answer's tensor-parallel size, ``--data-parallel-size`` its
        replicas, ``--max-num-seqs`` its batch (or the scheduler's limit under load).
    """
    kv = _kv_dtype(setup)
    options: dict[str, OptionValue] = {"--tensor-parallel-size": setup.tensor_parallel}
    if setup.pipeline_parallel > 1:
        options["--pipeline-parallel-size"] = setup.pipeline_parallel
    if setup.dp_attention:  # DP attention: one data-parallel rank per device, experts over all of them
        options["--tensor-parallel-size"] = 1
        options["--data-parallel-size"] = setup.tensor_parallel
    elif setup.replicas > 1:
        options["--data-parallel-size"] = setup.replicas
    if setup.expert_parallel:
        options["--enable-expert-parallel"] = True
    options["--max-model-len"] = setup.max_model_len
    options["--max-num-seqs"] = setup.max_running
    if setup.token_budget is not None:
        options["--max-num-batched-tokens"] = setup.token_budget
    options["--kv-cache-dtype"] = kv
    options["--gpu-memory-utilization"] = setup.memory_share
    notes = notes_for(setup, "vLLM")
    if setup.weights in QUANTIZATION:
        options["--quantization"] = QUANTIZATION[setup.weights]
    elif setup.weights in DTYPE:
        options["--dtype"] = DTYPE[setup.weights]
    elif setup.gguf_file:  # vLLM's "GGUF" page: a single-file model, the quantisation read from the file
        notes.append(f"{setup.weights} weights: serve the .gguf file in place of the model, with --tokenizer of the "
                     "base model (vLLM's GGUF support is experimental)")
    else:
        notes.append(f"{setup.weights} weights: vLLM reads the method from the checkpoint's quantization_config, so "
                     "no --quantization is given; serve a checkpoint stored in that format")
    if setup.replicas > 1 and setup.dp_attention:
        notes.append(f"{setup.replicas} replicas: run {setup.replicas} such servers behind a load balancer "
                     "(--data-parallel-size here is the data-parallel attention inside one)")
    elif setup.replicas > 1:
        notes.append(f"{setup.replicas} replicas of {setup.count} devices as one server (--data-parallel-size); on "
                     "several nodes, or as separate servers behind a load balancer, run one per replica")
    return Launch(tool="vllm", version=VERSION, command=command_line(["vllm", "serve", setup.model], options),
                  options=options, documentation=DOCUMENTATION, notes=notes)


def _kv_dtype(setup: ServingSetup) -> str:
    """``--kv-cache-dtype`` of the answer's KV cache; "auto" where it is the model's 16-bit dtype."""
    if setup.kv_cache in KV_CACHE_DTYPE:
        return KV_CACHE_DTYPE[setup.kv_cache]
    if setup.kv_cache is KvCache.FP16 and setup.weights != "fp32":
        return "auto"
    if setup.kv_cache is KvCache.FP32 and setup.weights == "fp32":
        return "auto"
    raise InputError("emit", "vllm", f"a tool that stores a {setup.kv_cache.value} KV cache with {setup.weights} "
                                     "weights: vLLM 0.11's --kv-cache-dtype takes auto (the model's dtype), "
                                     "bfloat16 or fp8; ask with --kv-cache fp8 or fp16")


TOOL = Tool(name="vllm", questions=frozenset({Question.SERVING}), version=VERSION, documentation=DOCUMENTATION,
            options=OPTIONS, emit=launch, runtime="vllm")
