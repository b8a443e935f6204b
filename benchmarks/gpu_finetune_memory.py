"""Peak memory of Hugging Face fine-tuning steps on one GPU, measured (needs torch with CUDA, transformers, peft).

A Llama-3-8B-shaped model (``LlamaConfig`` with its published dimensions, randomly initialised in bf16: memory
does not depend on the values) is trained for two steps per configuration: LoRA (r 8 on q, v; PEFT) and a
full fine-tune in pure bf16, with and without gradient checkpointing, at several sequence lengths and
micro-batches, the loss Hugging Face computes (FP32 logits). Each line of the output is one configuration with
``torch.cuda.max_memory_allocated`` (active) and ``max_memory_reserved``, for comparison with ``sizer memory``'s
``active`` and ``total`` (benchmarks/ACCURACY.md, "Fine-tuning"). Run on the device machine:
``python3 benchmarks/gpu_finetune_memory.py OUT.jsonl`` (memory; ``--speed`` for the timed steps). The committed
results were taken 2026-11-26 on one H100 80GB HBM3 (torch 2.11.0+cu130, transformers 5, peft) by a compact
copy of these loops (the speed run built the model once and switched PEFT's adapters off for the full runs).
"""
from __future__ import annotations

import gc
import json
import sys
import time

import torch

SPEED_CONFIGS = [  # timed: 3 warm-up and 5 timed steps each (benchmarks/hf_finetune_speed_h100.jsonl)
    ("lora", 256, 1, False), ("lora", 512, 1, False), ("lora", 1024, 1, False), ("lora", 2048, 1, False),
    ("lora", 512, 4, False), ("lora", 2048, 4, True), ("full", 512, 1, True), ("full", 2048, 2, True),
]
CONFIGS = [  # (method, seq_len, micro_batch, gradient checkpointing)
    ("lora", 512, 1, False), ("lora", 512, 4, False), ("lora", 2048, 1, False), ("lora", 2048, 1, True),
    ("lora", 8192, 1, True), ("lora", 8192, 2, True), ("full", 2048, 1, True), ("full", 512, 4, True),
]


def llama3_8b_config():
    from transformers import LlamaConfig

    # meta-llama/Meta-Llama-3-8B config.json: the dimensions sizer's registry holds for llama-3-8b
    return LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192,
                       rope_theta=500000.0, tie_word_embeddings=False, attn_implementation="sdpa")


def build(method: str, checkpointing: bool):
    from transformers import LlamaForCausalLM

    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaForCausalLM(llama3_8b_config())
    torch.set_default_dtype(torch.float32)
    model.config.use_cache = False
    if method == "lora":
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "v_proj"]))
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if method == "lora":
            model.enable_input_require_grads()
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trained, lr=1e-5, fused=True)  # states in the parameters' dtype (bf16)
    return model, optimizer


def measure(method: str, seq_len: int, micro: int, checkpointing: bool) -> dict:
    model, optimizer = build(method, checkpointing)
    batch = torch.randint(0, 128256, (micro, seq_len), device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(2):
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / 2
    row = dict(method=method, seq_len=seq_len, micro_batch=micro, checkpointing=checkpointing,
               max_allocated_gb=torch.cuda.max_memory_allocated() / 1e9,
               max_reserved_gb=torch.cuda.max_memory_reserved() / 1e9, seconds_per_step=seconds,
               device=torch.cuda.get_device_name(), torch=torch.__version__)
    del model, optimizer, batch, loss
    gc.collect()
    torch.cuda.empty_cache()
    return row


def _train_step(model, optimizer, batch) -> None:
    """One forward, backward and optimizer step (arguments, not a closure over names the caller deletes)."""
    model(input_ids=batch, labels=batch).loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def time_steps(method: str, seq_len: int, micro: int, checkpointing: bool, warm: int = 3, timed: int = 5) -> dict:
    """Seconds per step after ``warm`` steps, the mean of ``timed`` ones."""
    model, optimizer = build(method, checkpointing)
    batch = torch.randint(0, 128256, (micro, seq_len), device="cuda")
    for _ in range(warm):
        _train_step(model, optimizer, batch)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(timed):
        _train_step(model, optimizer, batch)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / timed
    del model, optimizer, batch
    gc.collect()
    torch.cuda.empty_cache()
    return dict(method=method, seq_len=seq_len, micro_batch=micro, checkpointing=checkpointing, s_per_step=seconds,
                tokens_per_s=seq_len * micro / seconds, device=torch.cuda.get_device_name())


def main(path: str, speed: bool = False) -> None:
    import transformers

    with open(path, "w") as out:
        for config in SPEED_CONFIGS if speed else CONFIGS:
            try:
                row = (time_steps if speed else measure)(*config)
            except torch.cuda.OutOfMemoryError:
                row = dict(zip(("method", "seq_len", "micro_batch", "checkpointing"), config, strict=True), oom=True)
                gc.collect()
                torch.cuda.empty_cache()
            row["transformers"] = transformers.__version__
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            out.flush()


if __name__ == "__main__":
    main(sys.argv[1], speed="--speed" in sys.argv[2:])
