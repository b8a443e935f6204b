"""sizer/engine/eager.py: an eager adapter fine-tune is timed with its own GEMM-size half-point and launch time."""
from __future__ import annotations

import numpy as np

from sizer.choices import Precision
from sizer.engine import eager
from sizer.engine.devices import cached_device_table


def test_the_adapter_table_scales_only_the_half_point_and_the_launch(catalog):
    table = cached_device_table((catalog.find("A10G"), catalog.find("H100 SXM")), Precision.MIXED, True)
    adapted = eager.adapter_table(table)
    assert np.array_equal(adapted.matrix_half, table.matrix_half * eager.ADAPTER_MATRIX_HALF_SCALE)
    assert np.array_equal(adapted.launch, table.launch * eager.ADAPTER_LAUNCH_SCALE)
    # everything else is the device's: the peaks, bandwidths and memory an adapter step runs on
    for name in ("peak", "bandwidth", "memory", "rates"):
        assert np.array_equal(getattr(adapted, name), getattr(table, name)), name


def test_the_chosen_constants_lie_on_their_grids_and_are_said():
    # chosen on the fit part of litgpt's timed runs from these grids (benchmarks/finetune_accuracy.py)
    assert eager.ADAPTER_MATRIX_HALF_SCALE in eager.MATRIX_HALF_SCALE_GRID
    assert eager.ADAPTER_LAUNCH_SCALE in eager.LAUNCH_SCALE_GRID
    note = eager.eager_note()
    assert f"x{eager.ADAPTER_MATRIX_HALF_SCALE:g}" in note and f"x{eager.ADAPTER_LAUNCH_SCALE:g}" in note
