"""Running the suite: each workload built, counted, measured and predicted, then reported."""
from __future__ import annotations

import functools
import statistics
import time
from pathlib import Path
from typing import Callable

from .contention import QUIET_WAIT_SECONDS, contention_of, foreign_cpu_percent, free_cores, wait_for_quiet
from .count import count_model
from .detect import DetectedDevice, cores_in_use, detect_device
from .loads import BYTES_PER_MIB, LoadSampler, current_rss, peak_rss, release_freed_memory, reset_peak_rss
from .measure import StepBudget, Trainer, layer_summary, profiled_steps
from .plans import BUDGETS, plan
from .predict import predict
from .records import run_profile, run_record
from .workloads import SyntheticData, WorkloadSpec, build_model, loss_fn, make_optimizer


def configure_torch(detected: DetectedDevice) -> dict:
    """FP32 everywhere (no TF32 on tensor cores), fixed seed; returns what was set."""
    import torch

    torch.manual_seed(0)
    if detected.kind == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    return {"torch": torch.__version__, "threads": torch.get_num_threads(), "precision": "fp32 (TF32 disabled)"}


def use_free_cores(detected: DetectedDevice, settings: dict) -> DetectedDevice:
    """One torch thread per core that other processes leave free (on a CPU), the prediction made
    for those cores; what was seen is kept in ``settings``."""
    import torch

    if detected.kind != "cpu":
        return detected
    cores = int(detected.device.cores.value)
    foreign = foreign_cpu_percent(1.0)
    threads = min(free_cores(cores, foreign), torch.get_num_threads())
    torch.set_num_threads(threads)
    settings["threads"] = threads
    settings["foreign_cpu_percent_at_start"] = {"value": foreign, "unit": "%",
                                                "method": "psutil: the machine's busy share less this process's, over 1 s"}
    return cores_in_use(detected, threads, foreign) if threads < cores else detected


def measure_with_retry(measure: Callable[[], dict], quiet_wait: float | None = QUIET_WAIT_SECONDS) -> dict:
    """A run measured once more after waiting up to ``quiet_wait`` seconds for quiet when it ran beside
    other work; the quieter of the two is kept, and the report says that it was measured again
    (``quiet_wait`` None: measured once, its contention recorded all the same)."""
    first = measure()
    if quiet_wait is None or not first["measured"]["contention"]["contended"]:
        return first
    wait_for_quiet(quiet_wait)
    second = measure()
    kept = min((first, second), key=lambda run: run["measured"]["contention"]["percent"])
    kept["remeasured"] = {"first_percent": first["measured"]["contention"]["percent"],
                          "second_percent": second["measured"]["contention"]["percent"]}
    return kept


def warm_up_torch(torch_device: str) -> None:
    """One tiny profiled training step, so that what torch loads on first use (autograd, the
    optimizer's kernels, the profiler) is in the process baseline rather than in the first run."""
    import torch

    from .profiler import profile_model

    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(torch_device)
    inputs = torch.randn(8, 16, device=torch_device)
    profile_model(model, inputs, name="warm-up", description="tiny MLP", generated_by="validation warm-up")
    optimizer = torch.optim.Adam(model.parameters())
    torch.nn.functional.mse_loss(model(inputs), torch.zeros(8, 1, device=torch_device)).backward()
    optimizer.step()


def measure_run(spec: WorkloadSpec, detected: DetectedDevice, budget: StepBudget, process_baseline: int = 0) -> dict:
    """Build, count, time and profile one single-process run; the core's prediction beside it.

    On a CPU the memory compared is what the process holds at its peak (RSS, VmHWM): the
    prediction is ``process_baseline`` (the RSS of the process with torch loaded, measured once
    at the start of the suite) plus the core's memory for the model.
    """
    import torch

    torch_device, cuda = detected.torch_device, detected.kind == "cuda"
    torch.manual_seed(0)
    data = SyntheticData(spec, torch_device)
    release_freed_memory()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        baseline = torch.cuda.memory_allocated()
    else:
        baseline = current_rss()
        # what earlier runs left in the heap (freed, not returned to the OS) is not this run's
        leftover = max(0, baseline - process_baseline) if process_baseline else 0
        hwm_reset = reset_peak_rss()
    model = build_model(spec).to(torch_device)
    loss = loss_fn(spec)
    inputs, targets = data.batch()
    counts = count_model(model, inputs, targets, loss, spec.tokens_per_sample)
    profile = run_profile(spec, model, inputs)
    trainer = Trainer(model, data, loss, make_optimizer(spec, model.parameters()), torch_device)
    before = foreign_cpu_percent()
    with LoadSampler(gpu_index=0 if cuda else None) as sampler:
        times = trainer.timed_steps(budget)
    step = statistics.median(times)
    profile_times, layers = profiled_steps(trainer, budget.profile_steps, torch_device)
    if cuda:
        peak, method = torch.cuda.max_memory_allocated() - baseline, "CUDA caching allocator peak (max_memory_allocated) above the data"
    else:
        high = peak_rss() if hwm_reset else None
        peak = (high if high is not None else max(current_rss(), int(sampler.summary()["process_rss_mb"]["max"] * BYTES_PER_MIB))) - leftover
        method = ("process peak RSS (VmHWM, reset before the run): all the process holds, torch's own memory included, "
                  "less what earlier runs left in the heap" if high is not None else
                  "process RSS, sampled (psutil): all the process holds, less what earlier runs left in the heap")
    measured = {"step_time": {"value": step, "unit": "s"},
                "step_time_min": {"value": min(times), "unit": "s"}, "step_time_max": {"value": max(times), "unit": "s"},
                "timed_steps": len(times), "warmup_steps": budget.warmup,
                "throughput": {"value": spec.batch_size / step, "unit": "sample / s"},
                "peak_memory": {"value": max(peak, 0), "unit": "B"}, "peak_memory_method": method,
                "loads": sampler.summary()}
    measured["contention"] = contention_of(before, measured["loads"].get("other_processes_cpu_percent"))
    predicted = predict(spec, counts, detected.device, profile=profile, process_baseline=0 if cuda else process_baseline)
    result = run_record(spec, detected, counts, measured, predicted, profile)
    result["_layers"] = layer_summary(profile_times, layers, step)
    del trainer, model, data
    release_freed_memory()
    return result


def run_suite(mode: str = "quick", device: str = "auto", out: str | Path | None = None,
              specs: list[WorkloadSpec] | None = None, budget: StepBudget | None = None,
              on_progress: Callable[[str, int, int], None] | None = None,
              quiet_wait: float | None = QUIET_WAIT_SECONDS) -> dict:
    """Measure every run of ``mode`` (or ``specs``) and, with ``out``, write the report there.

    ``quiet_wait``: seconds a contended run waits for the machine to fall quiet before it is measured
    again (:func:`measure_with_retry`); None measures each run once, contended or not (the report still
    says which were), for a caller whose neighbours never fall quiet: the test suite's own workers."""
    from .distributed import measure_data_parallel
    from .report import build_report, write_report

    started = time.perf_counter()
    detected = detect_device(device)
    settings = configure_torch(detected)
    detected = use_free_cores(detected, settings)
    warm_up_torch(detected.torch_device)
    release_freed_memory()
    process_baseline = current_rss()  # the process with torch loaded and warm, no model: measured once, here
    settings["process_baseline_rss"] = {"value": process_baseline, "unit": "B",
                                        "method": "psutil RSS after importing torch and one tiny profiled training "
                                                  "step (its lazily loaded kernels and profiler), before any run"}
    specs = specs if specs is not None else plan(mode)
    budget = budget or BUDGETS[mode]
    runs, failures = [], []
    for index, spec in enumerate(specs):
        if on_progress:
            on_progress(spec.run_id, index, len(specs))
        try:
            # partial, not a lambda: it binds this iteration's spec, whenever the retry calls it
            if spec.processes > 1:
                runs.append(measure_with_retry(functools.partial(measure_data_parallel, spec, detected, budget), quiet_wait))
            else:
                runs.append(measure_with_retry(functools.partial(measure_run, spec, detected, budget, process_baseline),
                                               quiet_wait))
        except Exception as error:  # one failing run is reported, never hides the others
            failures.append({"id": spec.run_id, "error": f"{type(error).__name__}: {error}"})
    if on_progress:
        on_progress("report", len(specs), len(specs))
    report = build_report(runs, failures, detected, settings, mode, time.perf_counter() - started)
    if out is not None:
        write_report(report, Path(out))
    return report
