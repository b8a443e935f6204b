"""Issue 19 item 6 over the commands: every table's parts add up to the total it shows, and no
message (table, warning, assumption, reason, suggestion, error) leaks Python's "None"."""
from __future__ import annotations

import json
import re

import pytest

_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0}


def _rows(text: str) -> dict[str, str]:
    rows = {}
    for line in text.split("Assumptions")[0].splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 2 and cells[0]:
            rows[cells[0]] = cells[1]
    return rows


def _seconds(cell: str) -> float:
    number, unit = re.match(r"([\d,.]+)(?: \([^)]*\))? (\w+)", cell).groups()
    return float(number.replace(",", "")) * _SECONDS[unit]


@pytest.mark.parametrize("args", [
    ("--model", "llama-2-7b", "--tokens", "1e9", "--device", "H100 SXM", "--count", "8"),
    ("--model", "llama-2-13b", "--tokens", "1e9", "--device", "A100 80GB SXM", "--count", "16", "--tp", "4", "--pp", "2"),
    ("--workload", "resnet50", "--samples", "1.28e6", "--batch-size", "256", "--device", "T4"),
])
def test_step_time_rows_add_up_to_the_step_time_and_layer_groups_to_the_kernels(cli, monkeypatch, args):
    monkeypatch.setenv("COLUMNS", "200")
    result = cli("time", *args)
    assert result.exit_code == 0, result.output
    rows = _rows(result.stdout)
    # with no layout given, the headline is what runs achieve: the row of what they lose against the best layout too
    parts = [name for name in rows if name.startswith(("kernels", "optimizer update", "overhead", "tensor parallel",
                                                       "pipeline", "context parallel", "data parallel", "expert all-to-all",
                                                       "what runs lose"))]
    assert len(parts) >= 7
    # each row to 4 significant digits; the pipeline row's bubble is inside the kernels (its first figure is the sends)
    total = sum(_seconds(rows[p]) for p in parts)
    assert total == pytest.approx(_seconds(rows["step time"]), rel=2e-3)
    groups = re.findall(r"│ \w+\s+│ \d+\s+│ ([\d,.]+ \w+)\s+│ (\d+)%", result.stdout)
    assert groups
    assert sum(_seconds(t) for t, _ in groups) == pytest.approx(_seconds(rows["kernels"]), rel=2e-3)
    assert sum(int(share) for _, share in groups) == pytest.approx(100, abs=len(groups))  # each rounded to 1 %


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


LLAMA = ("--model", "llama-3-8b", "--tokens", "1e8")
COMMANDS = [
    ("compute", "--params", "7e9", "--tokens", "1e9"),
    ("peak", "H100 SXM", "--precision", "bf16"),
    ("time", *LLAMA, "--device", "RTX 4090"),  # does not fit: suggestions
    ("time", *LLAMA, "--device", "RTX 4090", "--method", "full", "--offload"),  # host memory assumed and refused
    ("time", *LLAMA, "--have", "1x RTX 4090", "--have", "8x H100 SXM"),  # method and precision chosen
    ("memory", "--model", "llama-3-8b", "--method", "qlora", "--device", "RTX 4090"),
    ("memory", "--model", "llama-3-8b", "--have", "1x RTX 4090"),
    ("plan", *LLAMA, "--device", "H100 SXM", "--count", "8"),
    ("tco", "--device", "RTX 4090", "--training-time", "100 h"),
    ("inference", "--model", "llama-2-13b", "--device", "RTX 4090"),
    ("inference", "--model", "llama-2-13b", "--have", "1x RTX 4090"),
    ("recommend", "--model", "llama-2-70b", "--tokens", "1e9", "--max-devices", "8", "--suggest", "1"),
    ("recommend", *LLAMA, "--have", "1x RTX 4090"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:1] + a[-2:]) for a in COMMANDS])
def test_no_message_says_none(cli, monkeypatch, args):
    monkeypatch.setenv("COLUMNS", "160")
    text = cli(*args)
    assert text.exit_code == 0, text.output
    assert not re.search(r"\bNone\b", text.output), text.output
    answer = cli(*args, "--json")
    assert answer.exit_code == 0, answer.output
    leaks = [s for s in _strings(json.loads(answer.stdout)) if re.search(r"\bNone\b", s)]
    assert not leaks


@pytest.mark.parametrize("args, field", [
    (("time", *LLAMA, "--device", "RTX 4090", "--offload", "--host-memory", "lots"), "host_memory"),
    (("time", *LLAMA, "--device", "M2 Ultra", "--precision", "fp32", "--offload"), "offload"),
    (("recommend", *LLAMA, "--suggest", "99"), "suggest"),
])
def test_bad_new_options_are_one_line_naming_the_field(cli, args, field):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert field.replace("_", "-") in result.stderr or field in result.stderr
    assert "None" not in result.stderr and "Traceback" not in result.output


def test_unequal_cards_are_named_one_by_one_and_their_missing_energy_says_why(cli):
    # 3090 + 4090 is not "x 2" of either, and both cards have a power figure in the catalog: the energy is left out
    # because the split is over unequal cards, which the row says instead of "no power figure"
    r = cli("inference", "--model", "llama-3-70b", "--weights", "q4_k_m", "--devices", "RTX 3090,RTX 4090")
    assert r.exit_code == 0, r.output
    title = " ".join(r.output.split("┌")[0].split())
    assert "NVIDIA GeForce RTX 4090, batch 1" in title and " x 2" not in title
    rows = _rows(r.output)
    assert rows["energy per output token"] == "- (not estimated for unequal devices)"


def test_the_serving_tables_batch_counts_say_their_unit(cli):
    # "largest batch that fits: 31" and "batch where decode turns compute-bound: -" carried no unit and no meaning
    r = cli("inference", "--model", "llama-3.1-8b", "--weights", "q4_k_m", "--device", "RTX 4070 Ti")
    assert r.exit_code == 0, r.output
    rows = _rows(r.output)
    assert re.fullmatch(r"[\d,]+ sequences", rows["largest batch that fits"]), rows
    turn = rows["batch where decode turns compute-bound"]
    assert re.fullmatch(r"[\d,]+ sequences", turn) or turn == "- (memory-bound at every batch)", rows
