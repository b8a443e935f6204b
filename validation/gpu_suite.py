"""Running the GPU suite: each run of :func:`validation.gpu_plan.gpu_plan` built on the device, timed,
its peak memory read from the caching allocator, and sizer's answer for the same workload beside it.

No per-layer hooks and no profiler run inside the measured window (hooks forbid in-place activations
and hold tensors of their own); the allocator's statistics are reset before each run, after the
previous run's memory is returned, so ``max_memory_allocated`` is the run's own peak: weights,
gradients, optimizer states, activations, autocast's weight copies, cuDNN/cuBLAS workspaces taken
from the allocator. ``max_memory_reserved`` is what the allocator held from the driver at its peak.
A run that runs out of memory is a measurement too ("does not fit"). Every builder imports torch
lazily.
"""
from __future__ import annotations

import contextlib
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from .gpu_plan import GpuRun, gpu_plan, ladder_stops
from .gpu_predict import predict_run, run_errors

GB = 1e9
SUITE_SECONDS = 270.0  # the whole suite within 5 minutes on an H100 or H200, torch's start-up included
TINY_LLAMA = "tiny"


@dataclass(frozen=True)
class Steps:
    """Warm-up steps (cuDNN's autotuner, the allocator's first segments), then timed steps until both
    ``min_steps`` and ``seconds`` are reached, or ``max_steps``."""

    warmup: int = 2
    min_steps: int = 3
    max_steps: int = 10
    seconds: float = 1.5


FULL_STEPS, TINY_STEPS = Steps(), Steps(warmup=1, min_steps=2, max_steps=2, seconds=0.0)


def _decoder_shape(run: GpuRun):
    from .gpu_models import DECODERS, DecoderShape

    if run.build.get("shape") == TINY_LLAMA:
        return DecoderShape(layers=2, d_model=64, heads=4, kv_heads=2, ffn=128, vocab=100, tied=True)
    return DECODERS[run.model]


def build_model(run: GpuRun):
    """The run's model with random weights, on the current default device and dtype."""
    from . import gpu_models, model_zoo

    extra = {k: v for k, v in run.build.items() if k != "shape"}
    if run.model == "resnet50":
        return model_zoo.resnet50(**extra)
    if run.model == "vit-b16":
        return gpu_models.vit(**extra)
    if run.model == "bert-large":
        return model_zoo.bert("large", seq_len=run.seq_len or 512, **extra)
    if run.model == "gpt2-medium":
        return gpu_models.gpt2(**extra)
    model = gpu_models.llama(_decoder_shape(run))
    return gpu_models.add_lora(model, rank=run.lora_rank) if run.lora_rank else model


def vocabulary(run: GpuRun) -> int:
    """Token ids are drawn below this."""
    if run.model == "bert-large":
        return int(run.build.get("vocab", 30_522))
    if run.model == "gpt2-medium":
        return int(run.build.get("vocab", 50_257))
    return _decoder_shape(run).vocab


def synthetic_batch(run: GpuRun, device: str):
    """Inputs and targets of one step, random, of the run's shapes."""
    import torch

    if run.model in ("resnet50", "vit-b16"):
        images = torch.randn(run.batch, 3, run.resolution, run.resolution, device=device)
        if run.channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        classes = int(run.build.get("classes", 1000))
        return images, torch.randint(0, classes, (run.batch,), device=device)
    ids = torch.randint(0, vocabulary(run), (run.batch, run.seq_len), device=device)
    if run.model == "bert-large":  # SQuAD: a start and an end position per sequence
        return ids, torch.randint(0, run.seq_len, (run.batch, 2), device=device)
    return ids, torch.randint(0, vocabulary(run), (run.batch, run.seq_len), device=device)


def loss_of(run: GpuRun, output, targets):
    import torch.nn.functional as F

    if run.model in ("resnet50", "vit-b16"):
        return F.cross_entropy(output, targets)
    if run.model == "bert-large":  # output (batch, seq, 2): start and end logits over the positions
        return F.cross_entropy(output.transpose(1, 2).reshape(-1, output.shape[1]), targets.reshape(-1))
    return F.cross_entropy(output.reshape(-1, output.shape[-1]).float(), targets.reshape(-1))


def configure(run: GpuRun, cuda: bool) -> None:
    """TF32 on only for the TF32 run. cuDNN's autotuner stays off (PyTorch's default): it tunes every new
    batch and layout again, seconds each, and its trial workspaces would count in the run's peak."""
    import torch

    if cuda:
        allow = run.precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = allow
        torch.backends.cudnn.allow_tf32 = allow
        torch.backends.cudnn.benchmark = False


def autocast(run: GpuRun, device: str):
    import torch

    kind = "cuda" if device.startswith("cuda") else "cpu"
    if run.precision == "fp16":
        return torch.autocast(kind, dtype=torch.float16 if kind == "cuda" else torch.bfloat16)
    if run.precision == "bf16":
        return torch.autocast(kind, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _optimizer(run: GpuRun, model):
    import torch

    trainable = [p for p in model.parameters() if p.requires_grad]
    if run.optimizer == "momentum":
        return torch.optim.SGD(trainable, lr=0.1, momentum=0.9, weight_decay=1e-4)
    return torch.optim.AdamW(trainable, lr=1e-4)


class Memory:
    """The caching allocator's peak for one run (CUDA), or nothing measured (CPU)."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")

    def start(self) -> None:
        import gc

        import torch

        gc.collect()
        if self.cuda:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            self.base_allocated = torch.cuda.memory_allocated()
            self.base_reserved = torch.cuda.memory_reserved()

    def sync(self) -> None:
        import torch

        if self.cuda:
            torch.cuda.synchronize()

    def read(self) -> dict:
        import torch

        if not self.cuda:
            return {"peak_allocated_GB": None, "peak_reserved_GB": None,
                    "method": "not measured: no caching allocator on a CPU"}
        free, total = torch.cuda.mem_get_info()
        return {"peak_allocated_GB": (torch.cuda.max_memory_allocated() - self.base_allocated) / GB,
                "peak_reserved_GB": (torch.cuda.max_memory_reserved() - self.base_reserved) / GB,
                "device_used_after_GB": (total - free) / GB, "device_total_GB": total / GB,
                "method": "torch.cuda.max_memory_allocated / max_memory_reserved since the run's start, less what "
                          "was held before it; device_used_after: the whole device (CUDA context included)"}


@contextlib.contextmanager
def default_dtype(dtype):
    """Tensors made inside are of ``dtype`` unless told otherwise (a model built in its storage precision)."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def _timed(step: Callable[[], None], sync: Callable[[], None], steps: Steps) -> list[float]:
    for _ in range(steps.warmup):
        step()
    sync()
    times: list[float] = []
    started = time.perf_counter()
    while len(times) < steps.max_steps and (len(times) < steps.min_steps or time.perf_counter() - started < steps.seconds):
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def measure_training(run: GpuRun, device: str, steps: Steps) -> dict:
    """Median step time and the allocator's peak of ``steps`` training steps of ``run``."""
    import torch

    memory = Memory(device)
    memory.start()
    if run.lora_rank:  # LoRA trains FP32 adapters over a frozen base loaded in bf16, as peft's recipes do
        from .gpu_models import add_lora

        with default_dtype(torch.bfloat16), torch.device(device):
            base = build_model(replace(run, lora_rank=None))
        model = add_lora(base, rank=run.lora_rank)
    else:
        with torch.device(device):
            model = build_model(run)
    if run.channels_last:
        model = model.to(memory_format=torch.channels_last)
    model.train()
    optimizer = _optimizer(run, model)
    scaler = torch.amp.GradScaler(enabled=run.precision == "fp16" and memory.cuda)
    inputs, targets = synthetic_batch(run, device)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with autocast(run, device):
            loss = loss_of(run, model(inputs), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    times = _timed(step, memory.sync, steps)
    seconds = statistics.median(times)
    result = {"step_time_s": seconds, "step_time_min_s": min(times), "timed_steps": len(times),
              "throughput": run.batch / seconds, "throughput_unit": "sample / s",
              "tokens_per_s": run.batch * run.tokens_per_sample / seconds, **memory.read()}
    return result  # the model, its states and the batch go with this frame


def measure_inference(run: GpuRun, device: str, steps: Steps) -> dict:
    """Prefill tokens/s of all sequences (every prompt through the model, logits of the last position) or
    decode tokens/s per sequence (one token at a time against the KV cache), in bf16: the figures sizer's
    ``prefill_tokens_per_s`` and ``decode_tokens_per_s`` state."""
    import torch

    memory = Memory(device)
    memory.start()
    dtype = torch.bfloat16
    with default_dtype(dtype), torch.device(device):  # built in bf16 on the device: no FP32 copy on the way
        model = build_model(run).eval()
    prompt = run.seq_len or 1
    ids = torch.randint(0, vocabulary(run), (run.batch, prompt), device=device)
    cache = model.new_cache(run.batch, prompt + run.output_len, dtype, device)
    with torch.inference_mode():
        if run.task == "prefill":
            times = _timed(lambda: model(ids, cache=cache, start=0, last_only=True), memory.sync, steps)
            seconds = statistics.median(times)
            rate = run.batch * prompt / seconds  # every sequence's prompt, as sizer states prefill
            result = {"prefill_time_s": seconds, "timed_steps": len(times), "tokens_per_s_unit": "all sequences"}
        else:
            token = model(ids, cache=cache, start=0, last_only=True).argmax(-1)
            memory.sync()

            def generate() -> None:
                nonlocal token
                for position in range(prompt, prompt + run.output_len):
                    token = model(token, cache=cache, start=position, last_only=True).argmax(-1)

            times = _timed(generate, memory.sync, Steps(warmup=1, min_steps=min(steps.min_steps, 3), max_steps=3,
                                                        seconds=0.0))
            seconds = statistics.median(times)
            rate = run.output_len / seconds  # per sequence, as sizer states decode
            result = {"decode_time_s": seconds, "output_len": run.output_len, "timed_repeats": len(times),
                      "tokens_per_s_unit": "per sequence", "tokens_per_s_all_sequences": rate * run.batch}
    result |= {"tokens_per_s": rate, **memory.read()}
    return result


def _out_of_memory(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.cuda.OutOfMemoryError) or "out of memory" in str(error).lower()


def measure(run: GpuRun, device: str, steps: Steps) -> dict:
    """The run measured; out of memory is recorded as such (the run did not fit)."""
    try:
        configure(run, device.startswith("cuda"))
        if run.task == "train":
            return measure_training(run, device, steps)
        return measure_inference(run, device, steps)
    except Exception as error:
        if not _out_of_memory(error):
            raise
        return {"out_of_memory": True, "error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}


def record(run: GpuRun, measured: dict, predicted: dict | None) -> dict:
    """One run as the report keeps it (the existing suite's shape: id, config, measured, predicted, error)."""
    config = {"model": run.model, "task": run.task, "batch_size": run.batch, "precision": run.precision,
              "seq_len": run.seq_len, "resolution": run.resolution, "channels_last": run.channels_last,
              "optimizer": run.optimizer, "lora_rank": run.lora_rank, "output_len": run.output_len,
              "ladder": run.ladder}
    error = run_errors(run, measured, predicted) if predicted and "error" not in predicted else {}
    return {"id": run.run_id, "workload": run.model, "task": run.task, "config": config, "notes": list(run.notes),
            "measured": measured, "predicted": predicted, "error": error}


def run_gpu_suite(size: str = "full", device: str = "auto", out: str | Path | None = None, *,
                  predict_for: str | None = None, seconds: float = SUITE_SECONDS, steps: Steps | None = None,
                  runs: list[GpuRun] | None = None,
                  on_progress: Callable[[str, int, int], None] | None = None) -> dict:
    """Measure every run of the GPU suite and predict each for the detected device (or ``predict_for``, a
    catalog name); with ``out``, write ``report.json``, ``runs.csv`` and ``summary.md`` there.

    Runs left when ``seconds`` have passed are reported as skipped, so the command ends in time.
    """
    import torch

    from .detect import detect_device
    from .gpu_report import build_gpu_report, write_gpu_report

    started = time.perf_counter()
    detected = detect_device(device)
    if size == "full" and detected.kind != "cuda":
        raise ValueError("--suite gpu needs a CUDA GPU (found none); the CPU suite is `sizer validate`")
    torch.manual_seed(0)
    target = predict_for or detected.catalog_id
    pending = list(runs if runs is not None else gpu_plan(size))
    steps = steps or (FULL_STEPS if size == "full" else TINY_STEPS)
    total, records, failures = len(pending), [], []
    settings = {"torch": torch.__version__, "size": size, "predicted_for": target,
                "cudnn_benchmark": False, "steps": steps.__dict__,
                "precision": "per run: fp32 (TF32 off), tf32, fp16 (AMP with a loss scaler), bf16 (autocast)"}
    while pending:
        run = pending.pop(0)
        if on_progress:
            on_progress(run.run_id, total - len(pending) - 1, total)
        if time.perf_counter() - started > seconds:
            failures.append({"id": run.run_id, "error": f"skipped: the suite's {seconds:.0f} s were spent"})
            continue
        try:
            measured = measure(run, detected.torch_device, steps)
        except Exception as error:  # one failing run is reported, never hides the others
            failures.append({"id": run.run_id, "error": f"{type(error).__name__}: {error}"})
            continue
        if measured.get("out_of_memory"):
            pending = ladder_stops(pending, run)
        try:
            predicted = predict_run(run, target) if target else {"error": "the device is not in the catalog"}
        except Exception as error:  # a question sizer refuses is reported beside the measurement
            predicted = {"error": f"{type(error).__name__}: {error}"}
        records.append(record(run, measured, predicted))
        if out is not None:  # after every run: a run killed from outside still leaves what it measured
            write_gpu_report(build_gpu_report(records, failures, detected, settings, time.perf_counter() - started),
                             Path(out))
    if on_progress:
        on_progress("report", total, total)
    report = build_gpu_report(records, failures, detected, settings, time.perf_counter() - started)
    if out is not None:
        write_gpu_report(report, Path(out))
    return report
