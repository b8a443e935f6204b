"""Every array the layout search returns, for a corpus of questions: saved from one tree, compared on another.

A change meant to make :func:`sizer.engine.search.search` faster must not change one chosen layout or one
number. This script asks a fixed corpus of questions (recommend over the whole catalog for the HTTP contract's
shapes, named models from 1.3B to 405B, a mixture of experts, LoRA, FP8, a given batch, 1,024 devices, headroom;
``plan`` and ``time`` on one device with and without pinned dimensions; a ``sweep``), records every
:class:`~sizer.engine.search.Search` each one's searches return (every array of it, the evaluation's included)
and each answer's JSON, and either saves them or compares them with a saved run: exact equality of every array,
float ones included (NaN equal to NaN).

Usage (nothing is read from the disk cache: a temporary one is used)::

    python benchmarks/search_equivalence.py save /tmp/before.npz     # on the unchanged tree
    python benchmarks/search_equivalence.py compare /tmp/before.npz  # after a change: exit 1 on any difference
    python benchmarks/search_equivalence.py save /tmp/before.npz ../unchanged-checkout  # that tree's sizer
"""
from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import warnings
from typing import Any

os.environ["SIZER_CACHE_DIR"] = tempfile.mkdtemp(prefix="sizer-equivalence-")
if len(sys.argv) > 3:  # another tree's sizer (an unchanged checkout, say), ahead of this environment's own
    sys.meta_path[:] = [finder for finder in sys.meta_path if "editable" not in repr(finder)]
    sys.path.insert(0, os.path.abspath(sys.argv[3]))
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402

import sizer.engine.search as search_module  # noqa: E402
from sizer.errors import InputError  # noqa: E402

RECORDED: dict[str, np.ndarray] = {}
_current = ["?"]
_calls = [0]


def _flatten(prefix: str, value: Any) -> None:
    """Every array (and scalar) of a Search, by its dotted field path."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _flatten(f"{prefix}.{f.name}", getattr(value, f.name))
    elif isinstance(value, (np.ndarray, float, int, bool, np.generic)):
        RECORDED[prefix] = np.asarray(value)
    elif value is None:
        RECORDED[prefix] = np.asarray("None")


def _recording(original: Any) -> Any:
    def search(*args: Any, **kwargs: Any) -> Any:
        found = original(*args, **kwargs)
        _calls[0] += 1
        _flatten(f"{_current[0]}/search{_calls[0]}", found)
        return found
    return search


def _patch() -> None:
    """Record the searches of every module that imported :func:`search` by name."""
    import sizer.plan.layout_basis as layout_basis
    import sizer.plan.planner as planner
    import sizer.plan.sweep as sweep

    original = search_module.search
    wrapped = _recording(original)
    for module in (search_module, layout_basis, planner, sweep):
        module.search = wrapped  # type: ignore[attr-defined]


def _ask(name: str, run: Any) -> None:
    _current[0], _calls[0] = name, 0
    try:
        answer = run()
    except InputError as error:
        answer = f"InputError: {error}".encode()
    if not isinstance(answer, bytes):
        answer = (answer.model_dump_json() if hasattr(answer, "model_dump_json") else repr(answer)).encode()
    RECORDED[f"{name}/answer"] = np.frombuffer(answer, dtype=np.uint8)


def corpus() -> None:
    """Ask every question of the corpus."""
    from sizer.facade import RecommendRequest, answer, recommend_json
    from sizer.hardware.catalog import load_catalog
    from sizer.plan.sweep import sweep
    from sizer.schemas.plan import PlanRequest
    from sizer.schemas.time_and_memory import TimeRequest

    catalog = load_catalog()
    # the HTTP contract's 200 questions (benchmarks/http_load.py): three shapes, each searched once
    for i in range(0, 200, 1):
        _ask(f"contract{i}", lambda i=i: recommend_json(RecommendRequest(params=7e9 + i * 1e6, tokens=2e10 + i * 1e7,
                                                                          top=10), catalog))
    recommends: dict[str, dict[str, Any]] = {
        "p1.3b": {"params": 1.3e9, "tokens": 2.6e10},
        "p70b": {"params": 70e9, "tokens": 1.4e12},
        "p7.19b": {"params": 7.19e9, "tokens": 2e10},
        "gpt3-1.3b": {"model": "gpt3-1.3b", "tokens": 2.6e10},
        "llama-3-70b": {"model": "llama-3-70b", "tokens": 1e12},
        "llama-3.1-405b": {"model": "llama-3.1-405b", "tokens": 1e12},
        "mixtral": {"model": "mixtral-8x7b", "tokens": 1e11},
        "deepseek-v3": {"model": "deepseek-v3", "tokens": 1e11},
        "lora": {"model": "llama-3-8b", "tokens": 1e9, "method": "lora"},
        "qlora": {"model": "llama-2-13b", "tokens": 1e9, "method": "qlora"},
        "fp8": {"model": "llama-3-8b", "tokens": 1e11, "precision": "fp8"},
        "batch": {"model": "llama-3-8b", "tokens": 1e11, "batch_size": "1536 sequences"},
        "batch-tokens": {"model": "llama-2-7b", "tokens": 1e11, "batch_size": "4M tokens"},
        "micro": {"model": "llama-3-8b", "tokens": 1e11, "micro_batch": 2},
        "max1024": {"model": "llama-3-70b", "tokens": 1e12, "max_devices": 1024},
        "headroom": {"model": "llama-3-8b", "tokens": 1e11, "headroom": True},
        "seq32k": {"model": "llama-3-8b", "tokens": 1e11, "seq_len": 32768},
        "default": {},
        "p13b": {"params": 13e9, "tokens": 2.6e11},
        "p3b-long": {"params": 3e9, "tokens": 2e11, "seq_len": 8192},
        "p175b-batch": {"params": 175e9, "tokens": 3e11, "batch_size": "1536 sequences"},
        "gpt3-175b": {"model": "gpt3-175b", "tokens": 3e11, "max_devices": 4096},
        "deepseek-headroom": {"model": "deepseek-v3", "tokens": 1e11, "headroom": True},
        "mixtral-lora": {"model": "mixtral-8x7b", "tokens": 1e9, "method": "lora"},
        "gpu-only": {"model": "llama-3-8b", "tokens": 1e11, "kinds": ["gpu"]},
        "adam8bit": {"model": "llama-3-8b", "tokens": 1e11, "optimizer": "adam-8bit"},
        "sgd-fp16": {"params": 1e9, "tokens": 1e10, "optimizer": "sgd", "precision": "fp16"},
        "torchtitan": {"model": "llama-3-8b", "tokens": 1e11, "framework": "torchtitan"},
        "offload": {"model": "llama-3-8b", "tokens": 1e9, "method": "lora", "offload_params": True},
    }
    for name, fields in recommends.items():
        _ask(f"recommend-{name}", lambda fields=fields: recommend_json(RecommendRequest(top=10, **fields), catalog))
    plans: dict[str, dict[str, Any]] = {
        "70b-256": {"model": "llama-2-70b", "device": "H100 SXM", "count": 256, "tokens": 2e12},
        "70b-256-tp8": {"model": "llama-2-70b", "device": "H100 SXM", "count": 256, "tokens": 2e12, "tp": 8},
        "70b-64-pp4-il": {"model": "llama-2-70b", "device": "H100 SXM", "count": 64, "tokens": 2e12, "pp": 4,
                          "interleave": 2},
        "405b-1024": {"model": "llama-3.1-405b", "device": "H100 SXM", "count": 1024, "tokens": 1e12},
        "mixtral-64": {"model": "mixtral-8x7b", "device": "H100 SXM", "count": 64, "tokens": 1e11},
        "mixtral-64-ep8": {"model": "mixtral-8x7b", "device": "H100 SXM", "count": 64, "tokens": 1e11, "ep": 8},
        "8b-8-zero3": {"model": "llama-3-8b", "device": "A100 80GB SXM", "count": 8, "tokens": 1e11, "zero": 3},
        "8b-8-micro": {"model": "llama-3-8b", "device": "A100 80GB SXM", "count": 8, "tokens": 1e11, "micro_batch": 1},
        "lora-1": {"model": "llama-3-8b", "device": "RTX 4090", "count": 1, "tokens": 1e8, "method": "lora"},
        "bloom-384": {"params": 176e9, "device": "A100 80GB SXM", "count": 384, "tokens": 3.66e11,
                      "batch_size": "2048 sequences"},
        "nofit": {"model": "llama-3.1-405b", "device": "RTX 4090", "count": 2, "tokens": 1e10},
        "headroom": {"model": "llama-2-70b", "device": "H100 SXM", "count": 64, "tokens": 2e12, "headroom": True},
    }
    for name, fields in plans.items():
        _ask(f"plan-{name}", lambda fields=fields: answer(PlanRequest(**fields), catalog))
    times: dict[str, dict[str, Any]] = {
        "70b-256": {"model": "llama-2-70b", "device": "H100 SXM", "count": 256, "tokens": 2e12},
        "7b-8": {"params": 7e9, "device": "A100 80GB SXM", "count": 8, "tokens": 2e10},
    }
    for name, fields in times.items():
        _ask(f"time-{name}", lambda fields=fields: answer(TimeRequest(**fields), catalog))
    _ask("sweep", lambda: repr(sweep([{"params": 7e9, "tokens": 2e10}, {"model": "llama-3-70b", "tokens": 1e12}],
                                     counts=(1, 8, 64, 512))).encode())


def main() -> int:
    mode, path = sys.argv[1], sys.argv[2]
    print(f"the search of {os.path.dirname(os.path.dirname(search_module.__file__))}")
    _patch()
    corpus()
    if mode == "save":
        np.savez_compressed(path, **RECORDED)
        print(f"saved {len(RECORDED)} arrays to {path}")
        return 0
    before = np.load(path)
    differ = [k for k in sorted(set(before.files) | set(RECORDED))
              if k not in before.files or k not in RECORDED
              or before[k].dtype != RECORDED[k].dtype or before[k].shape != RECORDED[k].shape
              or not np.array_equal(before[k], RECORDED[k], equal_nan=before[k].dtype.kind in "fc")]
    for k in differ[:40]:
        print("differs:", k)
    print(f"{len(RECORDED)} arrays, {len(before.files)} saved; {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
