"""A DeepSpeed configuration (``ds_config.json``) for a data-parallel layout (DeepSpeed 0.17).

Keys as DeepSpeed's configuration page names them: https://www.deepspeed.ai/docs/config-json/
"""
from __future__ import annotations

import json

from sizer.launch.answer import Launch, OptionValue
from sizer.launch.setups import TrainingSetup
from sizer.launch.tool import Question, Tool
from sizer.launch.training_checks import accumulation, global_batch, notes_for, refuse_precision, refuse_split

VERSION = "DeepSpeed 0.17"
DOCUMENTATION = "https://www.deepspeed.ai/docs/config-json/"
# The keys (dotted) this emitter may write, as the page above names them.
OPTIONS = frozenset({
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_optimization.stage",
    "zero_optimization.offload_optimizer.device", "bf16.enabled", "fp16.enabled",
})


def launch(setup: TrainingSetup) -> Launch:
    """The ``ds_config.json`` of a data-parallel layout.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout (tensor, pipeline and context parallel sizes 1).

    Returns
    -------
    Launch
        The configuration: ZeRO stage, micro-batch per GPU, accumulation and global batch, precision, the answer's.
    """
    refuse_split("deepspeed", setup, "a DeepSpeed configuration holds ZeRO and the batch only (tensor and pipeline "
                                     "parallelism are set in the model's code)")
    refuse_precision("deepspeed", setup, ("bf16", "fp16", "fp32"))
    config: dict[str, object] = {"train_batch_size": global_batch(setup),
                                 "train_micro_batch_size_per_gpu": setup.micro_batch,
                                 "gradient_accumulation_steps": accumulation(setup)}
    zero: dict[str, object] = {"stage": setup.zero}
    if setup.offload:
        zero["offload_optimizer"] = {"device": "cpu"}
    config["zero_optimization"] = zero
    if setup.precision == "bf16":
        config["bf16"] = {"enabled": True}
    elif setup.precision == "fp16":
        config["fp16"] = {"enabled": True}
    options: dict[str, OptionValue] = {}
    _flatten("", config, options)
    notes = notes_for(setup)
    command = f"deepspeed --num_gpus {setup.devices_in_node} --num_nodes {setup.nodes} train.py --deepspeed ds_config.json"
    notes.append("train.py: your training script, with deepspeed.initialize(config='ds_config.json')")
    return Launch(tool="deepspeed", version=VERSION, command=command, config=json.dumps(config, indent=2) + "\n",
                  config_format="json", options=options, documentation=DOCUMENTATION, notes=notes)


def _flatten(prefix: str, value: object, into: dict[str, OptionValue]) -> None:
    """A nested configuration's leaves under dotted keys."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else key, inner, into)
    else:
        assert isinstance(value, (str, int, float, bool))
        into[prefix] = value


TOOL = Tool(name="deepspeed", questions=frozenset({Question.TRAINING, Question.FINETUNE}), version=VERSION,
            documentation=DOCUMENTATION, options=OPTIONS, emit=launch)
