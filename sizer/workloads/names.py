"""How model names are compared: the one key the presets and the shipped configs are looked up by.

>>> name_key("Qwen/Qwen3-32B") == name_key("qwen3-32b")
True
"""
from __future__ import annotations

import re

__all__ = ["name_key"]


def name_key(name: str) -> str:
    """The form names are compared in: lower case, no organisation prefix, no ``-hf``, and only
    letters, digits and dots (``"meta-llama/Llama-2-7b-hf"`` -> ``"llama27b"``; dots stay so that
    ``gpt3-1.3b`` and ``gpt3-13b`` differ).

    Parameters
    ----------
    name : str
        A model name as a user or a config writes it.

    Returns
    -------
    str
        The comparison key.

    >>> name_key("meta-llama/Llama-2-7b-hf"), name_key("GPT-3 1.3B")
    ('llama27b', 'gpt31.3b')
    """
    key = name.strip().lower().rsplit("/", 1)[-1]
    key = re.sub(r"[-_ ]hf$", "", key)
    return re.sub(r"[^a-z0-9.]", "", key)
