"""What the service's start-up built, kept out of the garbage collector's scans.

A full collection (the memory trimmer's every ``memory_trim_interval_s``, api/trim.py, or one Python starts
itself) walks every tracked object while holding the interpreter: after start-up some 125,000 of them
(modules, the catalog, pint's registry, the engine's tables), 80-160 ms on a loaded 2-core machine, during
which every answer in flight waits (``benchmarks/http_load.py --contract-runs``: a stall of ~0.25 s in the
middle of 200 new questions). ``gc.freeze`` moves them to the permanent generation, which no collection scans;
they live as long as the service anyway. The garbage start-up left (the catalog read once to check it,
``sizer serve``) is collected first, so that none of it is kept for good.
"""
from __future__ import annotations

import gc


def freeze_start_up() -> None:
    """Collect start-up's garbage, then keep every object left out of later collections (``gc.freeze``)."""
    gc.collect()
    gc.freeze()
