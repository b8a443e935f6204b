"""Predictions against training times published in the seeds, where no other test asserts them."""
from __future__ import annotations

import pytest

from sizer.facade import TimeRequest, estimate_time


@pytest.mark.xfail(strict=True, reason=(
    "datasheet mode predicts seed 001's MLP 3.6-4.6x too fast: its step overhead (1 ms, fitted on "
    "ResNet-50/BERT runs of NVIDIA and Lambda) is far below the 4.4-6.8 ms a step seed 001 measured, "
    "which include its GPUtil/psutil monitoring and the rest of its Python loop; `sizer calibrate` on "
    "the user's runs is the remedy the spec gives (spec §3.11)"))
@pytest.mark.parametrize("batch, seconds", [(64, 3426.29), (128, 1406.50), (256, 558.14), (512, 346.66)])
def test_seed001_training_time_lies_in_the_predicted_range(batch, seconds):
    # seed 001 Table 4.3 (docs/references.md [seed-001]): 400 epochs of the 75-512-512-512-10 MLP on an
    # RTX 3060 12 GB, Adam, FP32; the training split is 80 % of 101,136 frames (seed 001 §3.2).
    result = estimate_time(TimeRequest(workload="mlp-seed001", samples=80909, epochs=400, batch_size=batch,
                                       device="RTX 3060 12GB", precision="fp32", optimizer="adam"))
    scale = {"s": 1, "minute": 60, "hour": 3600, "day": 86400}[result.training_time.unit]
    assert result.training_time.low * scale <= seconds <= result.training_time.high * scale
