"""The training frameworks a request may name (``--framework``): one ``StrEnum``, parsed where input enters.

Kept apart from the registry (:mod:`sizer.frameworks`) so that the request model imports the names without
loading the catalog of recipes.

>>> from sizer.choices import parse_choice
>>> parse_choice(Framework, "LLaMA_Factory", "framework")
<Framework.LLAMA_FACTORY: 'llama-factory'>
"""
from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from sizer.choices import named


class Framework(StrEnum):
    """A fine-tuning or training framework whose documented recipes set the engine's knobs
    (``sizer/frameworks/frameworks.yaml`` says each one's defaults and where they were read)."""

    TORCHTUNE = "torchtune"
    UNSLOTH = "unsloth"
    AXOLOTL = "axolotl"
    LLAMA_FACTORY = "llama-factory"
    HF_TRAINER = "hf-trainer"
    DEEPSPEED = "deepspeed"
    FSDP = "fsdp"
    MEGATRON = "megatron"
    NEMO = "nemo"
    TORCHTITAN = "torchtitan"
    MAXTEXT = "maxtext"
    LITGPT = "litgpt"


if TYPE_CHECKING:  # to the type checker the field holds its member, as it does once validated
    FrameworkName = Framework
else:
    FrameworkName = named(Framework)
