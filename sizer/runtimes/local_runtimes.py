"""Desktop runtimes (llama.cpp, MLX, ExLlamaV2 ...): one :class:`~sizer.runtimes.Runtime` each.

Filled by the local-inference work: each entry's profile holds its kernel classes and their
efficiencies per quantisation type for prompt and for generation, with the rows they were fitted on.
"""
from __future__ import annotations

from sizer.runtimes.runtime import Runtime

RUNTIMES: tuple[Runtime, ...] = ()
