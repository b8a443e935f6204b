"""What a question costs to answer, in CPU-seconds, priced from its fields before any of it runs.

A service answers cheap questions where they arrive and hands the others to worker processes
(``api.deps.run_estimate``); it must know which is which *before* the work starts, from the
request alone, in microseconds. The price is an order of magnitude, not a forecast: it is built
from the work the question implies, each term scaled by a cost per unit measured on this code
(benchmarks/README.md, "Prices of questions"; one core of a 2-core shared machine, Dec 2026):

- **one estimate** (time, memory, plan, inference without load) on ``c`` devices costs about
  :data:`ESTIMATE_S` per layout dimension searched, :math:`E (1 + \\log_2 c)` [s]
  (7B on 8 H100: 0.01-0.04 s; DeepSeek-V3 memory on 4,096: 0.25 s);
- **a ``have`` list** of ``n`` entries answers the question ``n`` times: ``n`` times the price of
  one, each at its own count;
- **a serving load** (rate or users) adds its simulated iterations
  (:func:`sizer.serving.load_price.serving_iterations`) at :data:`ITERATION_S` each (llama-3.1-8b at
  10 requests/s with a TTFT limit: 12,000 iterations, 0.07 s);
- **a ranking over the catalog** (``recommend`` without ``have``) is one question per device kept
  by ``kinds``, each searching layouts up to ``max_devices``: :math:`D R (1 + \\log_2 m)` with the
  per-device cost ``R`` of serving (:data:`RANK_SERVING_S`) or training (:data:`RANK_TRAINING_S`),
  plus the ranking's simulated iterations under a load (the 64-byte DeepSeek-V3 body on 200
  devices with ``max_devices`` 64: 4.2 s priced, 3.5-4.2 s measured).

>>> from sizer.training.estimates import TimeRequest
>>> one = TimeRequest(params="7B", tokens="1e10", device="H100 SXM", count=8)
>>> eight = TimeRequest(params="7B", tokens="1e10", have=["8x H100 SXM"] * 8)
>>> round(estimate_seconds(eight) / estimate_seconds(one), 6)
8.0
"""
from __future__ import annotations

import math
import re
from typing import Any

ESTIMATE_S = 0.01  # [s] one estimate per layout dimension (time 7B on 8 H100: 0.009-0.044 s measured)
ITERATION_S = 6e-6  # [s] one simulated serving iteration (12,004 iterations: 0.068 s; 3,170: 0.02 s measured)
RANK_SERVING_S = 0.003  # [s] one catalog device ranked for serving, per layout dimension (DeepSeek-V3, 64: 0.02 s)
RANK_TRAINING_S = 0.001  # [s] one catalog device ranked for training, per layout dimension (DeepSeek-V3, 1,024: 1.07 s
#                            over ~200 devices, first asked)
_HAVE_COUNT = re.compile(r"^\s*(\d{1,7})\s*[x×*]", re.IGNORECASE)


def _layout_dimensions(count: Any) -> float:
    """:math:`1 + \\log_2 c` [1]: how many ways ``count`` devices split, as the layout searches grow."""
    try:
        devices = max(1.0, float(count))
    except (TypeError, ValueError):
        devices = 1.0
    return 1.0 + math.log2(devices) if math.isfinite(devices) else 1.0 + math.log2(65536)


def _have_counts(request: Any) -> list[float]:
    """The device count of each ``have`` entry (``"8x H100 SXM"``: 8; no count written: 1); [] without ``have``."""
    have = getattr(request, "have", None) or []
    counts = []
    for entry in have:
        match = _HAVE_COUNT.match(str(entry))
        counts.append(float(match.group(1)) if match else 1.0)
    return counts


def _serving_iterations(request: Any) -> float:
    from sizer.schemas.serving_requests import InferenceRequest
    from sizer.serving.load_price import serving_iterations

    return serving_iterations(request) if isinstance(request, InferenceRequest) else 0.0


def estimate_seconds(request: Any) -> float:
    """CPU-seconds [s] one question on named hardware costs: a time, memory, plan or inference request (or a
    recommendation's, with ``have``), once per ``have`` entry.

    Parameters
    ----------
    request : pydantic model
        The request: its ``count`` [devices] (or each ``have`` entry's), and for serving its load.

    Returns
    -------
    float
        The price [s] (see the module).
    """
    serving = _serving_iterations(request) * ITERATION_S
    counts = _have_counts(request) or [getattr(request, "count", None) or 1]
    return sum(ESTIMATE_S * _layout_dimensions(count) + serving for count in counts)


def ranking_seconds(request: Any, devices: int, serving: bool, iterations: float = 0.0) -> float:
    """CPU-seconds [s] a ranking over ``devices`` catalog devices costs (``recommend`` without ``have``).

    Parameters
    ----------
    request : pydantic model
        The recommendation's request: its ``max_devices`` [devices].
    devices : int
        Catalog devices ranked (those of the asked ``kinds``) [1].
    serving : bool
        A serving ranking (``"task": "inference"``), else a training one.
    iterations : float
        The ranking's simulated serving iterations [1]
        (:func:`sizer.serving.load_price.recommend_serving_iterations`; 0 without a load).

    Returns
    -------
    float
        The price [s] (see the module).
    """
    per_device = RANK_SERVING_S if serving else RANK_TRAINING_S
    return devices * per_device * _layout_dimensions(getattr(request, "max_devices", None)) + iterations * ITERATION_S
