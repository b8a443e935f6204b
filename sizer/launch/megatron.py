"""Megatron-LM ``pretrain_gpt.py`` arguments for a training layout (Megatron-LM core_r0.13.0).

Option names as ``megatron/training/arguments.py`` of Megatron-LM core_r0.13.0 names them
(https://github.com/NVIDIA/Megatron-LM/blob/core_r0.13.0/megatron/training/arguments.py; the user guide:
https://docs.nvidia.com/megatron-core/developer-guide/latest/user-guide/index.html).
"""
from __future__ import annotations

from sizer.choices import Recompute
from sizer.launch.answer import Launch, OptionValue, command_line
from sizer.launch.setups import TrainingSetup
from sizer.launch.tool import Question, Tool
from sizer.launch.training_checks import global_batch, notes_for, refuse_precision

VERSION = "Megatron-LM core_r0.13.0"
DOCUMENTATION = "https://github.com/NVIDIA/Megatron-LM/blob/core_r0.13.0/megatron/training/arguments.py"
# The arguments this emitter may write, as arguments.py spells them.
OPTIONS = frozenset({
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--num-layers-per-virtual-pipeline-stage",
    "--context-parallel-size", "--expert-model-parallel-size", "--sequence-parallel", "--micro-batch-size",
    "--global-batch-size", "--seq-length", "--num-layers", "--recompute-granularity", "--recompute-method",
    "--recompute-num-layers", "--use-distributed-optimizer", "--bf16", "--fp16", "--fp8-format",
})


def launch(setup: TrainingSetup) -> Launch:
    """The ``torchrun ... pretrain_gpt.py`` arguments of a training layout.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout.

    Returns
    -------
    Launch
        The command: TP, PP, virtual stages, CP, EP, micro and global batch, recomputation, the distributed
        optimizer for ZeRO 1 and more, and the precision, each the answer's.
    """
    refuse_precision("megatron", setup, ("bf16", "fp16", "fp8", "fp32"))
    options: dict[str, OptionValue] = {"--tensor-model-parallel-size": setup.tp,
                                       "--pipeline-model-parallel-size": setup.pp}
    notes = notes_for(setup)
    if setup.interleave > 1 and setup.layers is not None:
        options["--num-layers-per-virtual-pipeline-stage"] = max(1, setup.layers // (setup.pp * setup.interleave))
        if setup.layers % (setup.pp * setup.interleave):
            notes.append(f"{setup.layers} layers do not divide into {setup.pp} x {setup.interleave} virtual stages: "
                         "Megatron-LM needs an even split (or --decoder-first/last-pipeline-num-layers)")
    options["--context-parallel-size"] = setup.cp
    if setup.ep > 1:
        options["--expert-model-parallel-size"] = setup.ep
    if setup.tp > 1:  # sizer's tensor parallelism is Megatron's with sequence parallelism
        options["--sequence-parallel"] = True
    options["--micro-batch-size"] = setup.micro_batch
    options["--global-batch-size"] = global_batch(setup)
    if setup.seq_len is not None:
        options["--seq-length"] = setup.seq_len
    if setup.layers is not None:
        options["--num-layers"] = setup.layers
    if setup.recompute is Recompute.FULL:
        options.update({"--recompute-granularity": "full", "--recompute-method": "uniform", "--recompute-num-layers": 1})
    elif setup.recompute is Recompute.SELECTIVE:
        options["--recompute-granularity"] = "selective"
    if setup.zero >= 1:
        options["--use-distributed-optimizer"] = True
        if setup.zero > 1:
            notes.append(f"ZeRO {setup.zero}: Megatron-LM's distributed optimizer shards the optimizer states and "
                         "master weights (ZeRO 1) and reduce-scatters gradients; it keeps whole parameters, so a "
                         "device holds more than the answer's ZeRO-3 memory")
    if setup.precision in ("bf16", "fp8"):
        options["--bf16"] = True
    elif setup.precision == "fp16":
        options["--fp16"] = True
    if setup.precision == "fp8":
        options["--fp8-format"] = "hybrid"
    notes.append("add the model's own arguments (--hidden-size, --num-attention-heads ...), data and tokenizer; "
                 f"torchrun --nproc_per_node {setup.devices_in_node} --nnodes {setup.nodes} launches "
                 f"{setup.count} devices")
    program = ["torchrun", "--nproc_per_node", str(setup.devices_in_node), "--nnodes", str(setup.nodes),
               "pretrain_gpt.py"]
    return Launch(tool="megatron", version=VERSION, command=command_line(program, options), options=options,
                  documentation=DOCUMENTATION, notes=notes)


TOOL = Tool(name="megatron", questions=frozenset({Question.TRAINING}), version=VERSION, documentation=DOCUMENTATION,
            options=OPTIONS, emit=launch, aliases=("megatron-lm", "megatron-core"))
