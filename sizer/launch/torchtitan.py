"""A torchtitan job configuration (TOML) for a training layout (torchtitan 0.1).

Keys as torchtitan's ``JobConfig`` names them (``torchtitan/config/job_config.py``;
https://github.com/pytorch/torchtitan/blob/main/docs/composability.md and the train configs under
``torchtitan/models/llama3/train_configs/``).
"""
from __future__ import annotations

from sizer.launch.answer import Launch, OptionValue
from sizer.launch.setups import TrainingSetup
from sizer.launch.tool import Question, Tool
from sizer.launch.training_checks import global_batch, model_name, notes_for, refuse_precision

VERSION = "torchtitan 0.1"
DOCUMENTATION = "https://github.com/pytorch/torchtitan/blob/main/torchtitan/config/job_config.py"
# The TOML keys (section.key) this emitter may write, as job_config.py names them.
OPTIONS = frozenset({
    "parallelism.data_parallel_replicate_degree", "parallelism.data_parallel_shard_degree",
    "parallelism.tensor_parallel_degree", "parallelism.pipeline_parallel_degree",
    "parallelism.pipeline_parallel_schedule", "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.context_parallel_degree", "parallelism.expert_parallel_degree", "activation_checkpoint.mode",
    "training.local_batch_size", "training.global_batch_size", "training.seq_len", "training.mixed_precision_param",
})
_MIXED = {"bf16": "bfloat16", "fp8": "bfloat16", "fp32": "float32"}


def launch(setup: TrainingSetup) -> Launch:
    """The torchtitan TOML of a training layout, and the command that runs it.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's layout.

    Returns
    -------
    Launch
        The configuration: the parallel degrees, the activation checkpointing mode and the batches, the answer's.
    """
    refuse_precision("torchtitan", setup, ("bf16", "fp8", "fp32"))
    sharded = setup.zero >= 1  # FSDP2 (fully_shard) is torchtitan's data parallelism with any sharding
    parallelism: dict[str, OptionValue] = {
        "data_parallel_replicate_degree": 1 if sharded else setup.dp,
        "data_parallel_shard_degree": setup.dp if sharded else 1,
        "tensor_parallel_degree": setup.tp, "pipeline_parallel_degree": setup.pp}
    if setup.pp > 1:
        parallelism["pipeline_parallel_schedule"] = "Interleaved1F1B" if setup.interleave > 1 else "1F1B"
        parallelism["pipeline_parallel_microbatch_size"] = setup.micro_batch
        stages = setup.pp * setup.interleave
        if setup.layers is not None and setup.layers % stages == 0:
            parallelism["pipeline_parallel_layers_per_stage"] = setup.layers // stages
    parallelism["context_parallel_degree"] = setup.cp
    if setup.ep > 1:
        parallelism["expert_parallel_degree"] = setup.ep
    per_rank = setup.micro_batch * (setup.accumulation or 1) if setup.pp > 1 else setup.micro_batch
    training: dict[str, OptionValue] = {"local_batch_size": per_rank, "global_batch_size": global_batch(setup)}
    if setup.seq_len is not None:
        training["seq_len"] = setup.seq_len
    training["mixed_precision_param"] = _MIXED[setup.precision]
    sections: dict[str, dict[str, OptionValue]] = {"parallelism": parallelism,
                                                   "activation_checkpoint": {"mode": setup.recompute.value},
                                                   "training": training}
    options = {f"{section}.{key}": value for section, keys in sections.items() for key, value in keys.items()}
    notes = notes_for(setup)
    if setup.zero in (1, 2):
        notes.append(f"ZeRO {setup.zero}: torchtitan's FSDP2 shards parameters too (ZeRO 3), so a device holds less "
                     "than the answer says and moves more per step")
    if setup.pp > 1 and "pipeline_parallel_layers_per_stage" not in parallelism:
        notes.append(f"{setup.layers} layers do not split evenly into {setup.pp} x {setup.interleave} stages: set "
                     "[parallelism] pipeline_parallel_layers_per_stage (or module_fqns_per_model_part) yourself")
    if setup.precision == "fp8":
        notes.append("fp8: add [model] converters = [\"float8\"] (torchao Float8Linear)")
    notes.append(f"[model] and [job] are your model's ({model_name(setup)}); torchrun --nproc_per_node "
                 f"{setup.devices_in_node} --nnodes {setup.nodes} -m torchtitan.train --job.config_file job.toml")
    command = (f"torchrun --nproc_per_node {setup.devices_in_node} --nnodes {setup.nodes} -m torchtitan.train "
               "--job.config_file job.toml")
    return Launch(tool="torchtitan", version=VERSION, command=command, config=_toml(sections), config_format="toml",
                  options=options, documentation=DOCUMENTATION, notes=notes)


def _toml(sections: dict[str, dict[str, OptionValue]]) -> str:
    """TOML of flat sections (strings quoted, booleans lower case)."""
    def value(v: OptionValue) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return f'"{v}"' if isinstance(v, str) else str(v)
    return "\n".join(f"[{name}]\n" + "".join(f"{k} = {value(v)}\n" for k, v in keys.items())
                     for name, keys in sections.items())


TOOL = Tool(name="torchtitan", questions=frozenset({Question.TRAINING}), version=VERSION,
            documentation=DOCUMENTATION, options=OPTIONS, emit=launch)
