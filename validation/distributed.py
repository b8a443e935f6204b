"""A data-parallel run: the seed-001 MLP on 2 processes with ``torch.distributed`` (spec §3.3).

Each rank trains a DistributedDataParallel replica on its half of the global batch; gradients
are all-reduced with gloo on the CPU and NCCL on GPUs. On one host the CPU is shared: each
rank gets half of the cores, and the core predicts for ``n`` devices of that half-CPU. With
fewer GPUs than ranks, NCCL cannot run (one rank per GPU), so the run falls back to gloo on
the CPU and says so.
"""
from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from sizer.datafile import load_json, write_text

from .contention import contention_of, foreign_cpu_percent
from .count import count_model
from .detect import DetectedDevice, cpu_share, describe_cpu
from .loads import LoadSampler, current_rss, peak_rss, reset_peak_rss
from .measure import StepBudget, Trainer
from .predict import predict
from .workloads import SyntheticData, WorkloadSpec, build_model, loss_fn, make_optimizer

TIMEOUT_S = 300


def _rank_main(rank: int, world: int, spec: WorkloadSpec, budget: StepBudget, backend: str, store: str,
               out_dir: str, threads: int) -> None:
    """Body of one rank (module level, so that the spawn start method can import it)."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    dist.init_process_group(backend, init_method=f"file://{store}", rank=rank, world_size=world)
    try:
        torch_device = f"cuda:{rank}" if backend == "nccl" else "cpu"
        if backend == "nccl":
            torch.cuda.set_device(rank)
        local = replace(spec, batch_size=spec.batch_size // world)
        data = SyntheticData(local, torch_device, seed=rank)
        baseline = current_rss()
        reset_peak_rss()
        model = DistributedDataParallel(build_model(spec).to(torch_device))
        trainer = Trainer(model, data, loss_fn(spec), make_optimizer(spec, model.parameters()), torch_device)
        dist.barrier()
        times = trainer.timed_steps(budget)
        peak = (peak_rss() or current_rss()) - baseline
        write_text(Path(out_dir, f"rank{rank}.json"), json.dumps({"times": times, "peak_memory": peak}), "rank")
    finally:
        dist.destroy_process_group()


def _run_ranks(spec: WorkloadSpec, budget: StepBudget, backend: str, threads: int) -> list[dict]:
    import torch.multiprocessing as mp

    # a fixed step count on every rank: a time budget could stop the ranks at different steps
    fixed = replace(budget, min_steps=budget.min_steps, max_steps=budget.min_steps, seconds=0.0)
    with tempfile.TemporaryDirectory(prefix="sizer-ddp-") as tmp:
        context = mp.start_processes(_rank_main, args=(spec.processes, spec, fixed, backend, str(Path(tmp, "store")), tmp, threads),
                                     nprocs=spec.processes, join=False, start_method="spawn")
        deadline = time.monotonic() + TIMEOUT_S
        try:
            while not context.join(timeout=1.0):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"data-parallel ranks did not finish within {TIMEOUT_S} s")
        finally:
            for process in context.processes:
                if process.is_alive():
                    process.kill()
        return [load_json(Path(tmp, f"rank{r}.json"), "rank") for r in range(spec.processes)]


def measure_data_parallel(spec: WorkloadSpec, detected: DetectedDevice, budget: StepBudget) -> dict:
    """Measure the run on ``spec.processes`` ranks and predict it for as many devices."""
    import torch

    from .records import run_profile, run_record

    notes = list(spec.notes)
    if detected.kind == "cuda" and torch.cuda.device_count() >= spec.processes:
        backend, device, threads = "nccl", detected.device, 1
    else:
        if detected.kind == "cuda":
            notes.append(f"only {torch.cuda.device_count()} GPU(s): NCCL needs one per rank, so gloo on the CPU is measured")
            detected = describe_cpu(torch.get_num_threads())
        backend = "gloo"
        device = cpu_share(detected, spec.processes)
        threads = max(1, int(detected.device.cores.value) // spec.processes)
        notes.append(f"each rank uses {threads} of {detected.device.cores.value} cores; predicted for "
                     f"{spec.processes} x {device.name}")
    before = foreign_cpu_percent()
    with LoadSampler(gpu_index=0 if backend == "nccl" else None) as sampler:
        ranks = _run_ranks(spec, budget, backend, threads)
    step = statistics.median(ranks[0]["times"])
    measured = {"step_time": {"value": step, "unit": "s"},
                "step_time_min": {"value": min(ranks[0]["times"]), "unit": "s"},
                "step_time_max": {"value": max(ranks[0]["times"]), "unit": "s"},
                "timed_steps": len(ranks[0]["times"]), "warmup_steps": budget.warmup,
                "throughput": {"value": spec.batch_size / step, "unit": "sample / s"},
                "peak_memory": {"value": max(0, max(r["peak_memory"] for r in ranks)), "unit": "B"},
                "peak_memory_method": "largest per-rank peak RSS (VmHWM) above the RSS before the model was built",
                "loads": sampler.summary(), "backend": backend}
    measured["contention"] = contention_of(before, measured["loads"].get("other_processes_cpu_percent"))
    model = build_model(spec)
    local = replace(spec, batch_size=min(spec.batch_size // spec.processes, 64))
    inputs, targets = SyntheticData(local, "cpu").batch()
    counts = count_model(model, inputs, targets, loss_fn(spec))
    profile = run_profile(spec, model, inputs)
    predicted = predict(spec, counts, device, count=spec.processes, profile=profile)
    record = run_record(replace(spec, notes=tuple(notes)), detected, counts, measured, predicted, profile)
    record["_layers"] = None
    return record
