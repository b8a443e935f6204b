"""Fine-tuning peak memory and step time measured on a CUDA GPU: our own rows beside the published ones.

Runs Llama-shaped models (Llama 3.2 1B and Llama 3.1 8B configurations, random weights: the
memory and time of a step do not depend on the values) through a few training steps with
Hugging Face transformers and peft, as the recipes people copy do, and records for each recipe
the allocator's peak (active) and reserved memory, the memory the process holds beyond that
(CUDA context and libraries), and the median step time.

Needs a CUDA GPU, torch, transformers and peft (the GPU machines' image has them); not part of
``make test``. Writes one JSON file::

    python benchmarks/finetune_probe_gpu.py --out finetune-probe.json

Nothing in sizer is fitted on these rows: they score the fine-tuning memory model out of sample.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

# The two configurations, as their config.json files publish them (meta-llama on Hugging Face).
LLAMA_3_2_1B = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                    num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True, max_position_embeddings=8192,
                    rope_theta=500000.0)
LLAMA_3_1_8B = dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                    num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False, max_position_embeddings=8192,
                    rope_theta=500000.0)

# (model, method, state precision, checkpointing, sequence, micro-batch)
RECIPES = [
    ("llama-3.2-1b", "full", "bf16", False, 2048, 1),
    ("llama-3.2-1b", "full", "bf16", False, 2048, 4),
    ("llama-3.2-1b", "full", "mixed", False, 2048, 1),
    ("llama-3.2-1b", "full", "bf16", True, 2048, 4),
    ("llama-3.2-1b", "lora", "bf16", False, 2048, 4),
    ("llama-3.2-1b", "lora", "bf16", True, 2048, 4),
    ("llama-3.2-1b", "lora", "bf16", False, 512, 1),
    ("llama-3.1-8b", "lora", "bf16", True, 2048, 1),
    ("llama-3.1-8b", "lora", "bf16", True, 2048, 4),
    ("llama-3.1-8b", "lora", "bf16", False, 2048, 1),
    ("llama-3.1-8b", "full", "bf16", True, 2048, 1),
]
DEVICE = "cuda"
STEPS = 4  # the first is warm-up (allocations, kernels); the others are timed


def _model(name: str, precision: str, checkpointing: bool):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    shape = LLAMA_3_2_1B if name == "llama-3.2-1b" else LLAMA_3_1_8B
    config = LlamaConfig(**shape, attn_implementation="sdpa")
    dtype = torch.float32 if precision == "mixed" else torch.bfloat16
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # built in its own precision: no FP32 copy on the way
    try:
        with torch.device(DEVICE):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    return model


def _lora(model):
    from peft import LoraConfig, get_peft_model

    model.enable_input_require_grads()
    return get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                                            target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))


def measure(name: str, method: str, precision: str, checkpointing: bool, sequence: int, batch: int) -> dict:
    """One recipe's peak memory and step time."""
    import torch

    torch.cuda.empty_cache()
    model = _model(name, precision, checkpointing)
    if method == "lora":
        model = _lora(model)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-5, fused=True)
    ids = torch.randint(0, 128256, (batch, sequence), device=DEVICE)
    torch.cuda.reset_peak_memory_stats()  # the peak of training, not of building the random model
    times = []
    for step in range(STEPS):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "mixed"):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if step:
            times.append(time.perf_counter() - start)
    free, total = torch.cuda.mem_get_info()
    row = {"model": name, "method": method, "state_precision": precision, "checkpointing": checkpointing,
           "seq_len": sequence, "micro_batch": batch, "optimizer": "adamw (torch, fused)",
           "lora": "r 16 on q,k,v,o" if method == "lora" else None,
           "params": sum(p.numel() for p in model.parameters()), "trainable_params": sum(p.numel() for p in trainable),
           "peak_active_bytes": torch.cuda.max_memory_allocated(),
           "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
           "outside_allocator_bytes": (total - free) - torch.cuda.memory_reserved(),
           "step_time_s": statistics.median(times), "tokens_per_s": batch * sequence / statistics.median(times)}
    del model, optimizer, loss, ids
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    import peft
    import torch
    import transformers

    rows = []
    for recipe in RECIPES:
        try:
            rows.append(measure(*recipe))
        except Exception as error:  # one recipe that fails (out of memory, an API change) is reported, not fatal
            rows.append({"recipe": list(recipe), "error": f"{type(error).__name__}: {error}"[:300]})
            torch.cuda.empty_cache()
        print(json.dumps(rows[-1]), flush=True)
    report = {"device": torch.cuda.get_device_name(0), "total_memory_bytes": torch.cuda.get_device_properties(0).total_memory,
              "torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
              "date": time.strftime("%Y-%m-%d"), "rows": rows}
    temporary = f"{args.out}.tmp"  # written whole, then renamed: never half a file
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    os.replace(temporary, args.out)


if __name__ == "__main__":
    main()
