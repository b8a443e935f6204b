"""A Python snippet for a one-GPU fine-tune with Unsloth (Unsloth 2025.10, with TRL's ``SFTConfig``).

Argument names as Unsloth's documentation names them
(https://docs.unsloth.ai/get-started/fine-tuning-llms-guide/lora-hyperparameters-guide and
https://docs.unsloth.ai/basics/tutorials-how-to-fine-tune-and-run-llms) and TRL's ``SFTConfig``
(https://huggingface.co/docs/trl/sft_trainer).
"""
from __future__ import annotations

from sizer.choices import Method, Recompute
from sizer.errors import InputError
from sizer.launch.answer import Launch, OptionValue
from sizer.launch.setups import TrainingSetup, model_id
from sizer.launch.tool import Question, Tool
from sizer.launch.training_checks import accumulation, notes_for, refuse_precision

VERSION = "Unsloth 2025.10"
DOCUMENTATION = "https://docs.unsloth.ai/get-started/fine-tuning-llms-guide/lora-hyperparameters-guide"
# The arguments this emitter may write (function.argument), as the pages above name them.
OPTIONS = frozenset({
    "from_pretrained.model_name", "from_pretrained.max_seq_length", "from_pretrained.load_in_4bit",
    "from_pretrained.full_finetuning", "get_peft_model.r", "get_peft_model.lora_alpha",
    "get_peft_model.target_modules", "get_peft_model.use_gradient_checkpointing",
    "SFTConfig.per_device_train_batch_size", "SFTConfig.gradient_accumulation_steps", "SFTConfig.bf16",
    "SFTConfig.fp16",
})
_MODULES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj", "up": "up_proj",
            "down": "down_proj"}


def launch(setup: TrainingSetup) -> Launch:
    """The Unsloth snippet of a one-GPU fine-tune.

    Parameters
    ----------
    setup : TrainingSetup
        The answer's setup (one device).

    Returns
    -------
    Launch
        The snippet: the 4-bit base (QLoRA), the adapter rank, checkpointing, micro-batch and accumulation,
        the answer's.
    """
    if setup.count > 1:
        raise InputError("emit", "unsloth", f"a tool that trains on {setup.count} devices: Unsloth's open-source "
                                            "release trains on one GPU; use --emit torchtune or axolotl, or --count 1")
    refuse_precision("unsloth", setup, ("bf16", "fp16"))
    name, known = model_id(setup.model)
    full = setup.method is Method.FULL
    options: dict[str, OptionValue] = {"from_pretrained.model_name": name}
    if setup.seq_len is not None:
        options["from_pretrained.max_seq_length"] = setup.seq_len
    options["from_pretrained.load_in_4bit"] = setup.method is Method.QLORA
    options["from_pretrained.full_finetuning"] = full
    checkpointing = "unsloth" if setup.recompute is not Recompute.NONE else False
    if not full:
        options["get_peft_model.r"] = setup.lora_rank or 8
        options["get_peft_model.lora_alpha"] = 2 * (setup.lora_rank or 8)
        options["get_peft_model.target_modules"] = ",".join(_MODULES[t] for t in setup.lora_targets if t in _MODULES)
        options["get_peft_model.use_gradient_checkpointing"] = checkpointing
    options["SFTConfig.per_device_train_batch_size"] = setup.micro_batch
    options["SFTConfig.gradient_accumulation_steps"] = accumulation(setup)
    options["SFTConfig.bf16"] = setup.precision == "bf16"
    options["SFTConfig.fp16"] = setup.precision == "fp16"
    code = _snippet(options, full)
    notes = notes_for(setup)
    notes.append("add your dataset to SFTTrainer(...) and call trainer.train()")
    if not known:
        notes.append(f"model_name {name!r}: put the checkpoint's Hugging Face id or local path in its place")
    return Launch(tool="unsloth", version=VERSION, config=code, config_format="python", options=options,
                  documentation=DOCUMENTATION, notes=notes)


def _snippet(options: dict[str, OptionValue], full: bool) -> str:
    """The Python code of the options, one call per function."""
    def args(function: str) -> str:
        chosen = {k.split(".", 1)[1]: v for k, v in options.items() if k.startswith(function + ".")}
        if "target_modules" in chosen:
            chosen["target_modules"] = str(chosen["target_modules"]).split(",")  # type: ignore[assignment]
        return ", ".join(f"{k}={v!r}" for k, v in chosen.items())
    lines = ["from unsloth import FastLanguageModel", "from trl import SFTConfig, SFTTrainer", "",
             f"model, tokenizer = FastLanguageModel.from_pretrained({args('from_pretrained')})"]
    if not full:
        lines.append(f"model = FastLanguageModel.get_peft_model(model, {args('get_peft_model')})")
    lines.append(f"args = SFTConfig({args('SFTConfig')})")
    lines.append("trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=DATASET, args=args)")
    return "\n".join(lines) + "\n"


TOOL = Tool(name="unsloth", questions=frozenset({Question.FINETUNE}), version=VERSION, documentation=DOCUMENTATION,
            options=OPTIONS, emit=launch)
