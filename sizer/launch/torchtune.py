"""``tune run`` for a fine-tune (torchtune 0.6): a recipe, a config and key=value overrides.

Recipe, config and override names as torchtune 0.6 names them: the recipes page
https://docs.pytorch.org/torchtune/0.6/recipes/recipes_overview.html , the LoRA single-device recipe
https://docs.pytorch.org/torchtune/0.6/recipes/lora_finetune_single_device.html and the configs page
https://docs.pytorch.org/torchtune/0.6/deep_dives/configs.html (``tune ls`` lists recipes and configs).
"""
from __future__ import annotations

import shlex

from sizer.choices import Method, Recompute
from sizer.launch.answer import Launch, OptionValue
from sizer.launch.finetune_names import torchtune_model
from sizer.launch.setups import TrainingSetup
from sizer.launch.tool import Question, Tool
from sizer.launch.training_checks import accumulation, notes_for, refuse_precision, refuse_split

VERSION = "torchtune 0.6"
DOCUMENTATION = "https://docs.pytorch.org/torchtune/0.6/recipes/recipes_overview.html"
# The recipes and the config keys this emitter may override, as the pages above name them.
RECIPES = frozenset({"lora_finetune_single_device", "lora_finetune_distributed", "full_finetune_single_device",
                     "full_finetune_distributed"})
OPTIONS = frozenset({
    "--nproc_per_node", "--nnodes", "--config", "batch_size", "gradient_accumulation_steps",
    "enable_activation_checkpointing", "dtype", "tokenizer.max_seq_len", "model.lora_rank", "model.lora_alpha",
    "model.lora_attn_modules", "model.apply_lora_to_mlp", "fsdp_cpu_offload",
})
# sizer's adapted matrices -> torchtune's lora_attn_modules names
_ATTENTION = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "output_proj"}


def launch(setup: TrainingSetup) -> Launch:
    """The ``tune run`` command of a fine-tune.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's setup (data parallel only: torchtune's recipes shard with FSDP).

    Returns
    -------
    Launch
        The command: the recipe for the method and device count, the config of the model, and the answer's
        micro-batch, accumulation, recomputation, precision and adapter rank as overrides.
    """
    refuse_split("torchtune", setup, "torchtune's recipes train data-parallel with FSDP")
    refuse_precision("torchtune", setup, ("bf16", "fp32"))
    adapters = setup.method is not Method.FULL
    recipe = ("lora_finetune" if adapters else "full_finetune") + ("_single_device" if setup.count == 1 else "_distributed")
    if setup.framework is not None and setup.framework in RECIPES:  # a recipe the request named (--framework)
        recipe = setup.framework
    family = torchtune_model(setup.model)
    suffix = {Method.LORA: "lora", Method.QLORA: "qlora", Method.FULL: "full"}[setup.method]
    single = "_single_device" if setup.count == 1 else ""
    config = f"{family}_{suffix}{single}" if family else f"MODEL_{suffix}{single}"
    options: dict[str, OptionValue] = {}
    if setup.count > 1:
        options["--nproc_per_node"] = setup.devices_in_node
        if setup.nodes > 1:
            options["--nnodes"] = setup.nodes
    options["--config"] = config
    overrides: dict[str, OptionValue] = {
        "batch_size": setup.micro_batch, "gradient_accumulation_steps": accumulation(setup),
        "enable_activation_checkpointing": setup.recompute is not Recompute.NONE, "dtype": setup.precision}
    if setup.seq_len is not None:
        overrides["tokenizer.max_seq_len"] = setup.seq_len
    if adapters and setup.lora_rank is not None:
        overrides["model.lora_rank"] = setup.lora_rank
        overrides["model.lora_alpha"] = 2 * setup.lora_rank
        attention = [_ATTENTION[t] for t in setup.lora_targets if t in _ATTENTION]
        if attention:
            overrides["model.lora_attn_modules"] = "[" + ",".join(attention) + "]"
        overrides["model.apply_lora_to_mlp"] = any(t in ("gate", "up", "down") for t in setup.lora_targets)
    if setup.offload and setup.count > 1:
        overrides["fsdp_cpu_offload"] = True
    options.update(overrides)
    notes = notes_for(setup)
    if family is None:
        notes.append("MODEL: torchtune's config folder and size of your model (llama3_1/8B ...; `tune ls` lists them)")
    else:
        notes.append(f"config {config}: torchtune's configs/{config}.yaml (`tune ls` lists those that exist)")
    if adapters:
        notes.append("lora_alpha is written as 2 x rank (torchtune's configs' ratio); it does not change the memory")
    if setup.recompute is Recompute.SELECTIVE:
        notes.append("selective recomputation: torchtune checkpoints whole layers, so it recomputes more (time) "
                     "and keeps less (memory) than the answer")
    if setup.count > 1 and setup.zero < 3:
        notes.append(f"ZeRO {setup.zero}: torchtune's distributed recipes shard parameters, gradients and states "
                     "(FSDP, ZeRO 3): a device holds at most the answer's memory")
    words = " \\\n  ".join(shlex.quote(f"{k}={v}") for k, v in overrides.items())
    head = ["tune", "run"] + ([f"--nproc_per_node {setup.devices_in_node}"] if setup.count > 1 else []) \
        + ([f"--nnodes {setup.nodes}"] if setup.nodes > 1 and setup.count > 1 else [])
    command = " ".join([*head, recipe, "--config", config]) + " \\\n  " + words
    return Launch(tool="torchtune", version=VERSION, command=command, options={"recipe": recipe, **options},
                  documentation=DOCUMENTATION, notes=notes)


TOOL = Tool(name="torchtune", questions=frozenset({Question.FINETUNE, Question.TRAINING}), version=VERSION,
            documentation=DOCUMENTATION, options=OPTIONS | {"recipe"}, emit=launch)
