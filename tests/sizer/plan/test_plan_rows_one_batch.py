"""``sizer plan`` rows compare like with like: every row runs one batch, the asked one where any layout
runs it; "fastest first" then holds; and no row is shown twice.

The adversarial pass found rows that ran up to 16x the asked batch ranked among those that ran it
("fastest first", though a larger batch takes fewer steps), and byte-identical rows in 26 of 142
plans where nothing fits (the same layout reached twice by the search's variants).
"""
from __future__ import annotations

import json

import pytest

from sizer.plan.planner import plan
from sizer.schemas.plan import PlanRequest

# (model, device, count, batch in tokens): each showed mixed batches or repeated rows before
CASES = [
    ("llama-2-7b", "H100 SXM", 8, 3 * 4096),  # rows at 3 and 4 sequences
    ("llama-2-7b", "A100 80GB SXM", 2, 3 * 4096),
    ("llama-2-7b", "RTX 4090", 64, 3 * 4096),
    ("llama-2-7b", "RTX 4090", 2, None),  # nothing fits: repeated rows
    ("llama-2-7b", "RTX 4090", 2, 3 * 4096),  # nothing fits, and mixed batches
    ("llama-2-70b", "RTX 4090", 2, 16 * 4096),
]


@pytest.mark.parametrize("model, device, count, batch", CASES)
def test_rows_run_one_batch_fastest_first_each_once(model, device, count, batch):
    r = plan(PlanRequest(model=model, tokens=1e10, device=device, count=count, batch_size=batch, shown=30))
    assert r.layouts
    batches = {row.batch_size for row in r.layouts}
    assert len(batches) == 1, batches
    if batch is not None and not r.warnings:  # no batch change announced: the asked batch
        assert batches == {batch / 4096}
    rows = [json.dumps(row.model_dump(), sort_keys=True) for row in r.layouts]
    assert len(set(rows)) == len(rows)
    layouts = [(o.tp, o.pp, o.cp, o.ep, o.zero, o.recompute, o.interleave, o.micro_batch, o.accumulation)
               for o in r.layouts]
    assert len(set(layouts)) == len(layouts)
    if r.fitting:
        times = [row.training_time.expected for row in r.layouts]
        assert times == sorted(times)
    else:
        memory = [row.memory_per_device.value for row in r.layouts]
        assert memory == sorted(memory)


def test_the_caption_names_the_batch_and_the_order(cli):
    fits = cli("plan", "--model", "llama-2-7b", "--tokens", "1e10", "--device", "H100 SXM", "-n", "8",
               "--batch-size", str(3 * 4096))
    assert fits.exit_code == 0, fits.output[-500:]
    text = " ".join(fits.stdout.split())
    assert "every row at a batch of 3" in text and "fastest first" in text
    short = cli("plan", "--model", "llama-2-70b", "--tokens", "1e10", "--device", "RTX 4090", "-n", "2")
    text = " ".join(short.stdout.split())
    assert "closest to fitting first" in text and "fastest first" not in text
