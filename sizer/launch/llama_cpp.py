"""``llama-server`` for a local answer under llama.cpp.

Option names as llama.cpp's server README names them (build b6700, October 2025, when ``-fa`` takes
``on|off|auto``): https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md
"""
from __future__ import annotations

from sizer.choices import KvCache
from sizer.launch.answer import Launch, OptionValue, command_line
from sizer.launch.setups import LocalSetup
from sizer.launch.tool import Question, Tool

VERSION = "llama.cpp b6700"
DOCUMENTATION = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md"
# The short options this emitter writes, as the README above lists them (long forms: --model, --n-gpu-layers,
# --ctx-size, --parallel, --flash-attn, --cache-type-k, --cache-type-v, --threads, --tensor-split, --split-mode,
# --ubatch-size).
OPTIONS = frozenset({"-m", "-ngl", "-c", "-np", "-fa", "-ctk", "-ctv", "-t", "-ts", "-sm", "-ub"})
# -ctk/-ctv types (README: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)
CACHE_TYPE = {KvCache.FP32: "f32", KvCache.FP16: "f16", KvCache.BF16: "bf16", KvCache.Q8_0: "q8_0",
              KvCache.Q4_0: "q4_0"}
# -sm: a layer split, or each matrix split by rows (README: none, layer, row)
SPLIT_MODE = {"layer": "layer", "tensor": "row"}


def launch(setup: LocalSetup) -> Launch:
    """The ``llama-server`` command of a local setup.

    Parameters
    ----------
    setup : LocalSetup
        The answer's setup.

    Returns
    -------
    Launch
        The command: ``-ngl`` the blocks on the GPU (all ``layers + 1`` with the output layer, where every block
        fits), ``-c`` the context of all parallel sequences, ``-ctk/-ctv`` the KV type, ``-ts``/``-sm`` the split.
    """
    from sizer.errors import InputError

    if setup.kv_cache not in CACHE_TYPE:
        raise InputError("emit", "llama.cpp", f"a tool that stores a {setup.kv_cache.value} KV cache "
                                              "(llama.cpp's -ctk/-ctv take f32, f16, bf16, q8_0, q4_0)")
    # the GGUF file as people publish it (bartowski, unsloth): the name and the type in upper case
    file = f"{setup.model.rsplit('/', 1)[-1]}-{setup.weights.upper()}.gguf"
    options: dict[str, OptionValue] = {"-m": file}
    if setup.on_gpu:
        options["-ngl"] = setup.gpu_layers if setup.gpu_layers is not None else setup.layers + 1
    options["-c"] = setup.context * setup.sequences
    if setup.sequences > 1:
        options["-np"] = setup.sequences
    options["-fa"] = "on" if setup.flash_attention else "off"
    options["-ctk"] = CACHE_TYPE[setup.kv_cache]
    options["-ctv"] = CACHE_TYPE[setup.kv_cache]
    if setup.threads is not None:
        options["-t"] = setup.threads
    if setup.layer_shares:
        options["-ts"] = ",".join(str(s) for s in setup.layer_shares)
        options["-sm"] = SPLIT_MODE[setup.split]
    if setup.ubatch is not None:
        options["-ub"] = setup.ubatch
    notes = [f"{file}: the {setup.weights} GGUF file of the model (a local path; -hf REPO:{setup.weights.upper()} "
             "downloads one from Hugging Face)"]
    if setup.on_gpu and setup.gpu_layers is None:
        notes.append(f"-ngl {setup.layers + 1}: all {setup.layers} blocks and the output layer on the GPU")
    elif setup.gpu_layers is not None:
        notes.append(f"-ngl {setup.gpu_layers}: {setup.gpu_layers} of {setup.layers} blocks on the GPU, the rest and "
                     "the output layer on the CPU (-t threads)")
    if setup.sequences > 1:
        notes.append(f"-c {setup.context * setup.sequences}: {setup.sequences} parallel slots (-np) of "
                     f"{setup.context} tokens each")
    if not setup.fits:
        notes.append("the answer found this does NOT fit the memory: llama-server will fail to allocate")
    return Launch(tool="llama.cpp", version=VERSION, command=command_line(["llama-server"], options), options=options,
                  documentation=DOCUMENTATION, notes=notes)


TOOL = Tool(name="llama.cpp", questions=frozenset({Question.LOCAL}), version=VERSION, documentation=DOCUMENTATION,
            options=OPTIONS, emit=launch, aliases=("llamacpp", "llama-cpp", "llama-server"), runtime="llama.cpp")
