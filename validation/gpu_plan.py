"""The GPU suite's runs (``sizer validate --suite gpu``): what people train and serve on one data-centre GPU,
each a few seconds on an H100 or H200, with random weights and synthetic data, and the question each run
puts to sizer for the same workload and device.

``gpu_plan("full")`` is the suite; ``gpu_plan("tiny")`` the same runs built small, for the test suite on a
CPU (the shapes differ; the code, the sizer requests and the report are the same).

- ResNet-50 (momentum SGD, torchvision's recipe): FP32 with TF32 disabled, TF32, AMP (fp16 with a loss
  scaler), AMP with channels-last, then (last of all) AMP channels-last on a batch ladder until the card is
  full (the first batch that runs out of memory ends it), so that "fits" is measured, not assumed;
- ViT-B/16 and BERT-large at sequence 128 and 512 (AdamW, bf16 autocast);
- GPT-2 medium and Llama 3.2 1B training steps in bf16 (autocast, FP32 weights and AdamW states), and LoRA
  (r 16 on q and v) over the frozen bf16 1B;
- prefill and decode of Llama 3.2 1B and Llama 3.1 8B in bf16 with SDPA and a KV cache, batch 1 and 16.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")  # fp16 = AMP with a loss scaler; bf16 = autocast to bf16
TASKS = ("train", "prefill", "decode")
RESNET_LADDER = (256, 512, 1024, 1536, 2048, 3072, 4096)  # AMP channels-last batches, until one does not fit
EPOCH_STEPS = 10  # steps per "epoch" asked of sizer: only the step time and memory are compared


@dataclass(frozen=True)
class GpuRun:
    """One run of the GPU suite: what to build and how to drive it, and the request sizer answers for it."""

    run_id: str
    model: str  # a builder of validation.gpu_models / model_zoo: resnet50, vit-b16, bert-large, gpt2-medium, llama-*
    task: str  # train, prefill or decode
    batch: int  # samples (images or sequences) per step
    precision: str  # one of PRECISIONS
    sizer: dict[str, Any]  # the fields of sizer's request (TimeRequest/MemoryRequest or InferenceRequest)
    seq_len: int | None = None  # tokens per sequence (the prompt, for inference)
    resolution: int | None = None  # image side [pixel]
    channels_last: bool = False
    optimizer: str = "adamw"  # momentum (SGD, momentum 0.9) or adamw
    lora_rank: int | None = None
    output_len: int = 0  # decode: tokens generated per sequence
    ladder: str | None = None  # runs of one ladder stop at the first that runs out of memory
    build: dict[str, Any] = field(default_factory=dict)  # builder keyword arguments (the tiny plan's small shapes)
    notes: tuple[str, ...] = ()

    @property
    def tokens_per_sample(self) -> int:
        return self.seq_len or 1


def _training(model: str, batch: int, precision: str, optimizer: str, seq_len: int | None = None,
              **extra: Any) -> dict[str, Any]:
    """sizer's training request for a run: the built-in workload or model preset at this batch, in one pass."""
    request: dict[str, Any] = {"precision": precision, "optimizer": optimizer, "micro_batch": batch}
    if model in ("resnet50", "vit-b-16", "bert-large"):
        request |= {"workload": model, "batch_size": batch, "samples": batch * EPOCH_STEPS}
        if seq_len is not None:
            request["seq_len"] = seq_len
    else:
        request |= {"model": model, "seq_len": seq_len, "batch_size": f"{batch} sequences",
                    "tokens": batch * (seq_len or 1) * EPOCH_STEPS}
    return request | extra


def _serving(model: str, batch: int, prompt: int, output: int) -> dict[str, Any]:
    return {"model": model, "weights": "bf16", "kv_cache": "fp16", "batch": batch, "prompt_len": prompt,
            "output_len": output}


def _resnet(precision: str, batch: int, channels_last: bool = False, ladder: bool = False, tiny: bool = False) -> GpuRun:
    name = {"fp32": "fp32", "tf32": "tf32", "fp16": "amp"}[precision] + ("-cl" if channels_last else "")
    return GpuRun(run_id=f"resnet50-{name}-b{batch}", model="resnet50", task="train", batch=batch, precision=precision,
                  resolution=32 if tiny else 224, channels_last=channels_last, optimizer="momentum",
                  ladder="resnet50-amp-cl" if ladder else None,
                  sizer=_training("resnet50", batch, precision, "momentum"),
                  build={"classes": 10} if tiny else {},
                  notes=("channels-last (NHWC) inputs and weights",) if channels_last else ())


def gpu_plan(size: str = "full") -> list[GpuRun]:
    """The runs of the suite (``full``) or of its miniature for CPU tests (``tiny``), in the order they are made."""
    if size not in ("full", "tiny"):
        raise ValueError(f"size: got {size!r}; expected full or tiny")
    tiny = size == "tiny"
    cnn_batch = 2 if tiny else 256
    runs = [_resnet("fp32", 2 if tiny else 128, tiny=tiny), _resnet("tf32", cnn_batch, tiny=tiny),
            _resnet("fp16", cnn_batch, tiny=tiny)]
    runs.append(_resnet("fp16", cnn_batch, channels_last=True, ladder=True, tiny=tiny))  # the ladder's first rung
    vit_batch = 2 if tiny else 256
    runs.append(GpuRun(run_id=f"vit-b16-bf16-b{vit_batch}", model="vit-b16", task="train", batch=vit_batch,
                       precision="bf16", resolution=32 if tiny else 224,
                       sizer=_training("vit-b-16", vit_batch, "bf16", "adamw"),
                       build={"image": 32, "d_model": 32, "layers": 1, "heads": 2, "classes": 10} if tiny else {}))
    for seq, batch in ((128, 128), (512, 32)):
        run_seq, run_batch = (16, 2) if tiny else (seq, batch)
        runs.append(GpuRun(run_id=f"bert-large-s{seq}-bf16-b{run_batch}", model="bert-large", task="train", batch=run_batch,
                           precision="bf16", seq_len=run_seq,
                           sizer=_training("bert-large", run_batch, "bf16", "adamw", seq_len=seq),
                           build={"dims": (1, 32, 2), "vocab": 100} if tiny else {},
                           notes=("BERT-large with a SQuAD span head, explicit attention (validation.model_zoo)",)))
    gpt_seq, gpt_batch = (16, 2) if tiny else (1024, 16)
    runs.append(GpuRun(run_id=f"gpt2-medium-s1024-bf16-b{gpt_batch}", model="gpt2-medium", task="train", batch=gpt_batch,
                       precision="bf16", seq_len=gpt_seq,
                       sizer=_training("gpt2-medium", gpt_batch, "bf16", "adamw", seq_len=1024),
                       build={"d_model": 32, "layers": 1, "heads": 2, "vocab": 100, "positions": 64} if tiny else {}))
    llama_seq, llama_batch = (16, 2) if tiny else (2048, 4)
    tiny_llama = {"shape": "tiny"} if tiny else {}
    runs.append(GpuRun(run_id=f"llama-3.2-1b-s2048-bf16-b{llama_batch}", model="llama-3.2-1b", task="train",
                       batch=llama_batch, precision="bf16", seq_len=llama_seq,
                       sizer=_training("Llama-3.2-1B", llama_batch, "bf16", "adamw", seq_len=2048), build=tiny_llama))
    runs.append(GpuRun(run_id=f"llama-3.2-1b-lora16-s2048-bf16-b{llama_batch}", model="llama-3.2-1b", task="train",
                       batch=llama_batch, precision="bf16", seq_len=llama_seq, lora_rank=16,
                       sizer=_training("Llama-3.2-1B", llama_batch, "bf16", "adamw", seq_len=2048, method="lora",
                                       lora_rank=16, lora_targets="q,v"),
                       build=tiny_llama, notes=("LoRA r 16, alpha 32 on q and v over the frozen bf16 model",)))
    prompt, output = (16, 4) if tiny else (2048, 128)
    for model, preset in (("llama-3.2-1b", "Llama-3.2-1B"), ("llama-3.1-8b", "llama-3.1-8b")):
        for batch in (1, 16):
            for task in ("prefill", "decode"):
                runs.append(GpuRun(run_id=f"{model}-{task}-p2048-b{batch}", model=model, task=task, batch=batch,
                                   precision="bf16", seq_len=prompt, output_len=output,
                                   sizer=_serving(preset, batch, 2048, 128), build=tiny_llama))
    # last: should the suite's time run out, only the largest batches of the ladder are left out
    ladder = (4,) if tiny else RESNET_LADDER[1:]
    return runs + [_resnet("fp16", batch, channels_last=True, ladder=True, tiny=tiny) for batch in ladder]


def ladder_stops(runs: list[GpuRun], failed: GpuRun) -> list[GpuRun]:
    """The runs left after ``failed`` ran out of memory: the larger batches of its ladder are skipped."""
    return [run for run in runs if run.ladder is None or run.ladder != failed.ladder or run.batch < failed.batch]


def with_batch(run: GpuRun, batch: int) -> GpuRun:
    """The same run at another batch (a test's helper)."""
    return replace(run, batch=batch, run_id=f"{run.run_id}-b{batch}")
