"""Data-centre serving engines (vLLM, SGLang, TensorRT-LLM): one :class:`~sizer.runtimes.Runtime` each.

Filled by the serving work: each entry's profile holds its formats, parallelism, features, memory
fraction, scheduler defaults and efficiency profile, with the rows it was fitted on.
"""
from __future__ import annotations

from sizer.runtimes.runtime import Runtime

RUNTIMES: tuple[Runtime, ...] = ()
