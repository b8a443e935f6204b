"""A model's family and size as fine-tuning tools name their configs (torchtune's ``llama3_1/8B``), read from
the model's name as the user gave it; None where the name is not one of the families listed."""
from __future__ import annotations

import re

# sizer's model names (catalog/models.yaml presets, hub ids) -> torchtune's config folder, most specific first
# (torchtune recipes/configs/: llama2, llama3, llama3_1, llama3_2, llama3_3, qwen2_5, qwen3, mistral, gemma, gemma2,
# phi3, phi4)
_FAMILIES = (
    (r"llama-?3\.3", "llama3_3"), (r"llama-?3\.2", "llama3_2"), (r"llama-?3\.1", "llama3_1"), (r"llama-?3", "llama3"),
    (r"llama-?2", "llama2"), (r"qwen-?2\.5", "qwen2_5"), (r"qwen-?3", "qwen3"), (r"mistral", "mistral"),
    (r"gemma-?2", "gemma2"), (r"gemma", "gemma"), (r"phi-?4", "phi4"), (r"phi-?3", "phi3"),
)
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)b\b")


def torchtune_model(model: str | None) -> str | None:
    """torchtune's ``family/SIZE`` for a model name, e.g. ``llama3_1/8B`` for ``llama-3.1-8b``.

    Parameters
    ----------
    model : str or None
        The model's name or hub id as given.

    Returns
    -------
    str or None
        ``family/SIZE``; None where the family or the size is not recognised.

    Examples
    --------
    >>> torchtune_model("llama-3.1-8b"), torchtune_model("meta-llama/Llama-2-7b-hf"), torchtune_model("gpt2")
    ('llama3_1/8B', 'llama2/7B', None)
    """
    if model is None:
        return None
    name = model.rsplit("/", 1)[-1].lower()
    family = next((folder for pattern, folder in _FAMILIES if re.search(pattern, name)), None)
    size = _SIZE.search(name)
    if family is None or size is None:
        return None
    return f"{family}/{size.group(1).upper()}B"
