"""cli/catalog_cmd.py (template) and cli/models_cmd.py, and memory's table (issue 19 items 4 and 6)."""
import json
import re

import pytest

from sizer.hardware.catalog import load_catalog


def test_template_is_a_commented_entry_that_loads_as_it_stands(cli, tmp_path):
    result = cli("catalog", "template")
    assert result.exit_code == 0
    text = result.stdout
    assert text.count("#") >= 10 and "sources:" in text and "devices:" in text
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    device = load_catalog(path).find("Example GPU")
    assert device.id == "example-gpu" and device.memory.value == "24 GB"
    shown = cli("catalog", "show", "example-gpu", "--catalog", str(path))
    assert shown.exit_code == 0 and "Example GPU" in shown.stdout
    assert json.loads(cli("catalog", "template", "--json").stdout)["template"] == text


def test_every_problem_of_a_user_catalog_is_reported_at_once(cli, tmp_path):
    text = cli("catalog", "template").stdout
    broken = (text.replace("kind: gpu  ", "kind: toaster")
              .replace("1008 GB/s", "1008 GHz")
              .replace("{value: 350 W, source: my-datasheet", "{value: 350 W, source: nowhere"))
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    result = cli("catalog", "list", "--catalog", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "3 problems" in result.output
    for field in ("field kind", "field memory_bandwidth", "field tdp: source 'nowhere'"):
        assert field in result.output, field


def test_models_lists_every_builtin_architecture_with_parameters_context_and_source(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    listed = json.loads(cli("models", "--json").stdout)["models"]
    assert len(listed) >= 50
    llama = next(m for m in listed if m["name"] == "llama-2-7b")
    # Llama 2 7B: 6,738,415,616 parameters from its config.json shape, trained at 4,096 tokens
    assert llama["params_total"] == 6_738_415_616 and llama["context"] == 4096 and llama["source"]
    table = cli("models")
    assert table.exit_code == 0 and "llama-2-7b" in table.stdout and "6.738 billion" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 80


def test_models_names_the_mechanism_each_unsupported_config_holds(cli, monkeypatch):
    # Nemotron-H's hybrid_override_pattern holds Mamba-2 blocks (catalog/hf_configs): the table says the field and
    # the mechanism, not the start of the refusal's quoted value
    monkeypatch.setenv("COLUMNS", "200")
    table = cli("models").stdout
    row = next(line for line in table.splitlines() if "nvidia/Nemotron-H-56B-Base-8K" in line)
    assert "hybrid_override_pattern: Mamba-2 (state-space) blocks" in row and "got" not in row


# --- issue 19 item 6 -----------------------------------------------------------------------------

_GB = {"GB": 1.0, "MB": 1e-3, "kB": 1e-6, "B": 1e-9, "TB": 1e3}


def _rows(text: str) -> dict[str, str]:
    rows = {}
    for line in text.split("Assumptions")[0].splitlines():  # the key-value table, not the assumptions
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 2 and cells[0]:
            rows[cells[0]] = cells[1]
    return rows


def _gb(cell: str) -> float:
    number, unit = re.match(r"([\d,.]+) (\w+)$", cell).groups()
    return float(number.replace(",", "")) * _GB[unit]


@pytest.mark.parametrize("args", [
    ("--model", "llama-3-8b", "--method", "qlora", "--device", "RTX 4090"),  # the command: no --tokens
    ("--model", "llama-3-8b", "--device", "RTX 4090", "--count", "8", "--zero", "3"),  # with the 2 GB ZeRO buckets
    ("--params", "7.5e9", "--count", "64", "--zero", "2", "--precision", "fp16"),
])
def test_memory_table_rows_add_up_to_its_total(cli, monkeypatch, args):
    monkeypatch.setenv("COLUMNS", "120")
    result = cli("memory", *args)
    assert result.exit_code == 0, result.output
    assert "None" not in result.output
    rows = _rows(result.stdout)
    parts = [name for name in rows if name not in ("method", "sharding", "total", "with headroom", "device memory",
                                                    "verdict", "largest micro-batch that fits", "recipe",
                                                    "of which active (allocator peak)", "host memory (offloaded, paged)",
                                                    "layout search would choose")]
    assert len(parts) == 9 and any(p.startswith("ZeRO communication buckets") for p in parts)
    # each row is shown to 4 significant digits: the sum agrees with the total to that rounding
    assert sum(_gb(rows[p]) for p in parts) == pytest.approx(_gb(rows["total"]), rel=2e-3, abs=2e-3)
    totals = json.loads(cli("memory", *args, "--json").stdout)
    fields = ("weights", "gradients", "optimizer_states", "master_weights", "activations", "framework_overhead", "buffers",
              "logits", "dequant_buffer")
    assert sum(totals[f]["value"] for f in fields) == pytest.approx(totals["total"]["value"], rel=1e-9)


def test_memory_without_tokens_and_missing_values_never_say_none(cli):
    result = cli("memory", "--model", "llama-3-8b", "--method", "qlora", "--device", "RTX 4090")
    # the table speaks of no token count (suggestions may offer shorter sequences "of 512 tokens": at its 8,192-token
    # context the FP32 logits leave QLoRA short of 24 GB)
    table = result.output.split("What would make it work")[0].split("Assumptions")[0]
    assert result.exit_code == 0 and "tokens" not in table
    for args in (("compute",), ("time", "--device", "T4"), ("memory",), ("tco", "--device", "T4")):
        bad = cli(*args)
        assert bad.exit_code == 2 and "None" not in bad.output and "not given" in bad.output, (args, bad.output)


def _expected(cell: str) -> float:
    """The expected value of a rendered range "1.621 (1.6–1.7) USD" or quantity "1,599 USD"."""
    return float(cell.split()[0].replace(",", ""))


def test_tco_buy_rows_add_up_to_the_buy_total(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    rows = _rows(cli("tco", "--device", "RTX 4090", "--training-time", "100 h").stdout)
    assert _expected(rows["buy: amortised capital"]) + _expected(rows["buy: energy"]) == pytest.approx(
        _expected(rows["buy: total"]), rel=2e-3)
    names = list(rows)
    assert names.index("capital (whole, not in the total)") > names.index("buy: total")


def test_inference_memory_rows_add_up_to_memory_per_device(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    rows = _rows(cli("inference", "--model", "llama-2-7b", "--device", "T4").stdout)
    parts = ("weights", "KV cache", "activations", "runtime reserve")
    assert sum(_gb(rows[p]) for p in parts) == pytest.approx(_gb(rows["memory per device"]), rel=2e-3, abs=2e-3)
