"""NeMo 2 recipe overrides for a training layout (NeMo 2.4, ``nemo llm pretrain --factory RECIPE key=value``).

Override names as NeMo 2's pretraining recipes name them (``MegatronStrategy``, ``MegatronDataSampler``,
``OptimizerConfig``, the model's ``TransformerConfig``):
https://docs.nvidia.com/nemo-framework/user-guide/latest/nemo-2.0/quickstart.html and
https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/performance-guide.html
"""
from __future__ import annotations

from sizer.choices import Recompute
from sizer.launch.answer import Launch, OptionValue, command_line
from sizer.launch.setups import TrainingSetup
from sizer.launch.tool import Question, Tool
from sizer.launch.training_checks import global_batch, notes_for, refuse_precision

VERSION = "NeMo 2.4"
DOCUMENTATION = "https://docs.nvidia.com/nemo-framework/user-guide/latest/nemo-2.0/quickstart.html"
# The recipe keys this emitter may override, as NeMo 2's recipes name them.
OPTIONS = frozenset({
    "trainer.num_nodes", "trainer.devices", "trainer.strategy.tensor_model_parallel_size",
    "trainer.strategy.pipeline_model_parallel_size", "trainer.strategy.virtual_pipeline_model_parallel_size",
    "trainer.strategy.context_parallel_size", "trainer.strategy.expert_model_parallel_size",
    "trainer.strategy.sequence_parallel", "data.micro_batch_size", "data.global_batch_size", "data.seq_length",
    "model.config.recompute_granularity", "model.config.recompute_method", "model.config.recompute_num_layers",
    "optim.config.use_distributed_optimizer", "optim.config.bf16", "optim.config.fp16",
})


def launch(setup: TrainingSetup) -> Launch:
    """The ``nemo llm pretrain`` command with the layout as recipe overrides.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout.

    Returns
    -------
    Launch
        The command; every ``trainer.strategy.*`` size, ``data.*`` batch and recomputation key is the answer's.
    """
    refuse_precision("nemo", setup, ("bf16", "fp16", "fp8", "fp32"))
    options: dict[str, OptionValue] = {
        "trainer.num_nodes": setup.nodes, "trainer.devices": setup.devices_in_node,
        "trainer.strategy.tensor_model_parallel_size": setup.tp,
        "trainer.strategy.pipeline_model_parallel_size": setup.pp}
    if setup.interleave > 1:
        options["trainer.strategy.virtual_pipeline_model_parallel_size"] = setup.interleave
    options["trainer.strategy.context_parallel_size"] = setup.cp
    options["trainer.strategy.expert_model_parallel_size"] = setup.ep
    options["trainer.strategy.sequence_parallel"] = setup.tp > 1
    options["data.micro_batch_size"] = setup.micro_batch
    options["data.global_batch_size"] = global_batch(setup)
    if setup.seq_len is not None:
        options["data.seq_length"] = setup.seq_len
    if setup.recompute is Recompute.FULL:
        options.update({"model.config.recompute_granularity": "full", "model.config.recompute_method": "uniform",
                        "model.config.recompute_num_layers": 1})
    elif setup.recompute is Recompute.SELECTIVE:
        options["model.config.recompute_granularity"] = "selective"
    options["optim.config.use_distributed_optimizer"] = setup.zero >= 1
    if setup.precision in ("bf16", "fp8"):
        options["optim.config.bf16"] = True
    elif setup.precision == "fp16":
        options["optim.config.fp16"] = True
    notes = notes_for(setup)
    notes.append("RECIPE: the NeMo 2 recipe of your model (llama3_8b, llama3_70b ...; `nemo llm pretrain --help` "
                 "lists them); its model and data keys stay the recipe's")
    if setup.precision == "fp8":
        notes.append("fp8: use the recipe's FP8 precision plugin (bf16_with_fp8_mixed) for the trainer")
    program = ["nemo", "llm", "pretrain", "--factory", "RECIPE"]
    command = command_line(program, {}) + " \\\n  " + " \\\n  ".join(f"{k}={_word(v)}" for k, v in options.items())
    return Launch(tool="nemo", version=VERSION, command=command, options=options, documentation=DOCUMENTATION,
                  notes=notes)


def _word(value: OptionValue) -> str:
    """A value as NeMo-Run's command-line overrides write it (Python literals)."""
    return str(value) if not isinstance(value, float) else f"{value:g}"


TOOL = Tool(name="nemo", questions=frozenset({Question.TRAINING}), version=VERSION, documentation=DOCUMENTATION,
            options=OPTIONS, emit=launch, aliases=("nemo2", "nemo-2"))
