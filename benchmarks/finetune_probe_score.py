"""Score sizer's fine-tuning memory and step time on our own H100 rows (benchmarks/finetune_probe_gpu.py).

Nothing in sizer was fitted on these rows: 11 recipes of Llama 3.2 1B and Llama 3.1 8B shapes (full bf16,
full mixed, LoRA r 16 on q,k,v,o; checkpointing on and off) measured with transformers and peft on one
H100 SXM (benchmarks/results/finetune-probe-h100.json). Each is asked through the command line as a user
would (`sizer memory` and `sizer time --json`); sizer's ``active`` memory is compared with
``torch.cuda.max_memory_allocated``, its expected step time with the median measured step.

Run: ``python benchmarks/finetune_probe_score.py`` (prints a row per recipe and the medians).
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from finetune_probe_gpu import LLAMA_3_2_1B  # noqa: E402  the shape the rows were measured on

from sizer.datafile import load_json, parse_json  # noqa: E402  the one guarded reader

ROWS = ROOT / "benchmarks" / "results" / "finetune-probe-h100.json"
SIZER = ROOT / ".venv" / "bin" / "sizer"
TO_GB = {"GB": 1.0, "GiB": 1.073741824, "MB": 1e-3}
TO_S = {"s": 1.0, "ms": 1e-3}


def _ask(*args: str) -> dict:
    done = subprocess.run([str(SIZER), *args, "--json"], capture_output=True, text=True, check=True)
    return parse_json(done.stdout, "sizer --json", " ".join(args[:2]))


def score(rows: list[dict], small_model: str) -> list[dict]:
    """Per measured row: sizer's active memory [GB] and expected step [s] beside the measurement."""
    scored = []
    for row in rows:
        if "error" in row:
            continue
        model = small_model if row["model"] == "llama-3.2-1b" else row["model"]
        recipe = ["--model", model, "--method", row["method"], "--device", "H100 SXM", "--seq-len", str(row["seq_len"]),
                  "--micro-batch", str(row["micro_batch"]), "--state-precision", row["state_precision"],
                  "--precision", "bf16", "--optimizer", "adamw", "--recompute", "full" if row["checkpointing"] else "none"]
        if row["method"] == "lora":
            recipe += ["--lora-rank", "16", "--lora-targets", "q,k,v,o"]
        memory = _ask("memory", *recipe, "--tokens", "1e7")
        timing = _ask("time", *recipe, "--tokens", str(row["seq_len"] * row["micro_batch"] * 1000),
                      "--batch-size", f"{row['micro_batch']} sequences")
        active = memory["active"]["value"] * TO_GB[memory["active"]["unit"]]
        step = timing["step_time"]["expected"] * TO_S[timing["step_time"]["unit"]]
        scored.append({**row, "predicted_active_gb": active, "predicted_step_s": step,
                       "memory_error": active / (row["peak_active_bytes"] / 1e9) - 1,
                       "step_error": step / row["step_time_s"] - 1})
    return scored


def main() -> None:
    rows = load_json(ROWS, "rows")["rows"]
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.json"
        config.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "head_dim": 64,
                                      **LLAMA_3_2_1B}), encoding="utf-8")
        scored = score(rows, str(config))
    for r in scored:
        print(f"{r['model']:13s} {r['method']:4s} {r['state_precision']:5s} checkpointing {int(r['checkpointing'])} "
              f"s{r['seq_len']} b{r['micro_batch']}: memory {r['memory_error']:+.1%}, step {r['step_error']:+.1%}")
    memory = [abs(r["memory_error"]) for r in scored]
    step = [abs(r["step_error"]) for r in scored]
    print(f"{len(scored)} rows: memory median {statistics.median(memory):.1%} (max {max(memory):.1%}); "
          f"step median {statistics.median(step):.1%} (max {max(step):.1%})")


if __name__ == "__main__":
    main()
