"""``python -m sglang.launch_server`` for a serving answer (SGLang 0.5).

Option names as SGLang 0.5's server-arguments page names them:
https://docs.sglang.ai/advanced_features/server_arguments.html (``python -m sglang.launch_server --help``).
"""
from __future__ import annotations

from sizer.choices import KvCache
from sizer.errors import InputError
from sizer.launch.answer import Launch, OptionValue, command_line
from sizer.launch.serving_checks import notes_for
from sizer.launch.setups import ServingSetup
from sizer.launch.tool import Question, Tool

VERSION = "SGLang 0.5"
DOCUMENTATION = "https://docs.sglang.ai/advanced_features/server_arguments.html"
# The server arguments this emitter may write, spelled as the page above spells them.
OPTIONS = frozenset({
    "--model-path", "--tp-size", "--pp-size", "--dp-size", "--enable-dp-attention", "--ep-size", "--context-length",
    "--max-running-requests", "--chunked-prefill-size", "--kv-cache-dtype", "--mem-fraction-static",
    "--quantization", "--dtype",
})
# --quantization choices (same page) for sizer's weight formats
QUANTIZATION = {"fp8": "fp8", "mxfp4": "mxfp4", "nvfp4": "modelopt_fp4", "w8a8": "w8a8_int8",
                "awq-int4-g64": "awq_marlin", "awq-int4-g128": "awq_marlin",
                "gptq-int4-g32": "gptq_marlin", "gptq-int4-g64": "gptq_marlin", "gptq-int4-g128": "gptq_marlin"}
DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
# --kv-cache-dtype choices (same page): auto (the model's dtype), fp8_e5m2, fp8_e4m3
KV_CACHE_DTYPE = {KvCache.FP8: "fp8_e4m3"}


def launch(setup: ServingSetup) -> Launch:
    """The ``sglang.launch_server`` command of a serving setup.

    Parameters
    ----------
    setup : ServingSetup
        The answer's setup.

    Returns
    -------
    Launch
        The command; ``--tp-size`` is the answer's tensor-parallel size, ``--dp-size`` its replicas,
        ``--max-running-requests`` its batch (or the scheduler's limit under load).
    """
    options: dict[str, OptionValue] = {"--model-path": setup.model, "--tp-size": setup.tensor_parallel}
    if setup.pipeline_parallel > 1:
        options["--pp-size"] = setup.pipeline_parallel
    if setup.expert_parallel:  # experts split whole over the replica (sizer.passes.moe_decode)
        options["--ep-size"] = setup.tensor_parallel
    if setup.dp_attention:  # one attention rank per device, each with its own sequences and KV cache
        options["--enable-dp-attention"] = True
        options["--dp-size"] = setup.tensor_parallel
    elif setup.replicas > 1:
        options["--dp-size"] = setup.replicas
    options["--context-length"] = setup.max_model_len
    options["--max-running-requests"] = setup.max_running
    if setup.token_budget is not None:
        options["--chunked-prefill-size"] = setup.token_budget
    options["--kv-cache-dtype"] = _kv_dtype(setup)
    options["--mem-fraction-static"] = setup.memory_share
    notes = notes_for(setup, "SGLang")
    if setup.weights in QUANTIZATION:
        options["--quantization"] = QUANTIZATION[setup.weights]
    elif setup.weights in DTYPE:
        options["--dtype"] = DTYPE[setup.weights]
    else:
        notes.append(f"{setup.weights} weights: SGLang reads the method from the checkpoint's quantization_config")
    if setup.replicas > 1 and setup.dp_attention:
        notes.append(f"{setup.replicas} replicas: run {setup.replicas} such servers behind a router (--dp-size here is "
                     "the data-parallel attention inside one)")
    elif setup.replicas > 1:
        notes.append(f"{setup.replicas} replicas as one server (--dp-size, a router in front); data-parallel attention "
                     "(--enable-dp-attention, sizer's --dp-attention) is another layout")
    return Launch(tool="sglang", version=VERSION,
                  command=command_line(["python", "-m", "sglang.launch_server"], options),
                  options=options, documentation=DOCUMENTATION, notes=notes)


def _kv_dtype(setup: ServingSetup) -> str:
    if setup.kv_cache in KV_CACHE_DTYPE:
        return KV_CACHE_DTYPE[setup.kv_cache]
    if setup.kv_cache in (KvCache.FP16, KvCache.BF16) and setup.weights != "fp32":
        return "auto"
    raise InputError("emit", "sglang", f"a tool that stores a {setup.kv_cache.value} KV cache with {setup.weights} "
                                       "weights: SGLang 0.5's --kv-cache-dtype takes auto (the model's dtype), "
                                       "fp8_e5m2 or fp8_e4m3; ask with --kv-cache fp8 or fp16")


TOOL = Tool(name="sglang", questions=frozenset({Question.SERVING}), version=VERSION, documentation=DOCUMENTATION,
            options=OPTIONS, emit=launch, runtime="sglang")
