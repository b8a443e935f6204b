"""An Axolotl configuration (YAML) for a fine-tune (Axolotl 0.12).

Keys as Axolotl's configuration reference names them: https://docs.axolotl.ai/docs/config-reference.html
"""
from __future__ import annotations

from sizer.choices import Method, Optimizer, Recompute
from sizer.launch.answer import Launch, OptionValue
from sizer.launch.setups import TrainingSetup, model_id
from sizer.launch.tool import Question, Tool
from sizer.launch.training_checks import accumulation, notes_for, refuse_precision, refuse_split

VERSION = "Axolotl 0.12"
DOCUMENTATION = "https://docs.axolotl.ai/docs/config-reference.html"
# The keys this emitter may write, as the reference above names them.
OPTIONS = frozenset({
    "base_model", "adapter", "load_in_4bit", "lora_r", "lora_alpha", "lora_target_modules", "micro_batch_size",
    "gradient_accumulation_steps", "sequence_len", "gradient_checkpointing", "bf16", "fp16", "tf32", "optimizer",
    "deepspeed",
})
# sizer's adapted matrices -> Hugging Face module names (Llama-style)
_MODULES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj", "up": "up_proj",
            "down": "down_proj"}
# sizer's optimizers -> Axolotl's optimizer names (transformers' OptimizerNames)
_OPTIMIZER = {Optimizer.ADAMW: "adamw_torch_fused", Optimizer.ADAM: "adamw_torch_fused",
              Optimizer.ADAM_8BIT: "adamw_bnb_8bit", Optimizer.ADAMW_8BIT: "adamw_bnb_8bit",
              Optimizer.PAGED_ADAMW: "paged_adamw_32bit", Optimizer.PAGED_ADAMW_8BIT: "paged_adamw_8bit",
              Optimizer.ADAFACTOR: "adafactor", Optimizer.SGD: "sgd"}


def launch(setup: TrainingSetup) -> Launch:
    """The Axolotl YAML of a fine-tune, and the command that runs it.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's setup (data parallel only).

    Returns
    -------
    Launch
        The configuration: adapter, 4-bit base (QLoRA), rank, micro-batch, accumulation, sequence length,
        checkpointing, precision and the ZeRO stage (DeepSpeed), the answer's.
    """
    refuse_split("axolotl", setup, "Axolotl trains data-parallel (DeepSpeed ZeRO or FSDP)")
    refuse_precision("axolotl", setup, ("bf16", "fp16", "fp32"))
    base, known = model_id(setup.model)
    config: dict[str, OptionValue | list[str]] = {"base_model": base}
    if setup.method is not Method.FULL:
        config["adapter"] = "qlora" if setup.method is Method.QLORA else "lora"
        config["load_in_4bit"] = setup.method is Method.QLORA
        if setup.lora_rank is not None:
            config["lora_r"] = setup.lora_rank
            config["lora_alpha"] = 2 * setup.lora_rank
        config["lora_target_modules"] = [_MODULES[t] for t in setup.lora_targets if t in _MODULES]
    config["micro_batch_size"] = setup.micro_batch
    config["gradient_accumulation_steps"] = accumulation(setup)
    if setup.seq_len is not None:
        config["sequence_len"] = setup.seq_len
    config["gradient_checkpointing"] = setup.recompute is not Recompute.NONE
    config["bf16"] = setup.precision == "bf16"
    config["fp16"] = setup.precision == "fp16"
    if setup.optimizer in _OPTIMIZER:
        config["optimizer"] = _OPTIMIZER[setup.optimizer]
    if setup.count > 1 and setup.zero >= 1:
        config["deepspeed"] = f"deepspeed_configs/zero{setup.zero}.json"
    notes = notes_for(setup)
    notes.append("add datasets: and output_dir: (not sized here)")
    if not known:
        notes.append(f"base_model {base!r}: put the checkpoint's Hugging Face id or local path in its place")
    if setup.count > 1:
        notes.append(f"axolotl train launches accelerate on every visible GPU: make {setup.count} visible")
    if setup.count > 1 and setup.zero == 0:
        notes.append("ZeRO 0: plain data parallelism (every device a full replica), no deepspeed: key")
    options: dict[str, OptionValue] = {k: (",".join(v) if isinstance(v, list) else v) for k, v in config.items()}
    command = "axolotl train config.yaml"
    return Launch(tool="axolotl", version=VERSION, command=command, config=_yaml(config), config_format="yaml",
                  options=options, documentation=DOCUMENTATION, notes=notes)


def _yaml(config: dict[str, OptionValue | list[str]]) -> str:
    """Flat YAML: scalars and lists of words."""
    def scalar(v: OptionValue) -> str:
        return ("true" if v else "false") if isinstance(v, bool) else str(v)
    lines = []
    for key, value in config.items():
        if isinstance(value, list):
            lines.append(f"{key}:" + "".join(f"\n  - {item}" for item in value))
        else:
            lines.append(f"{key}: {scalar(value)}")
    return "\n".join(lines) + "\n"


TOOL = Tool(name="axolotl", questions=frozenset({Question.FINETUNE, Question.TRAINING}), version=VERSION,
            documentation=DOCUMENTATION, options=OPTIONS, emit=launch)
