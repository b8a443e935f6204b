"""Measuring training steps: step time, per-layer forward and backward time (seed 002).

Step time is the median over timed steps after warm-up, the device synchronised before each
clock reading. Per-layer times come from module hooks on every leaf module, in separate
profiled steps (hooks synchronise the device at each layer boundary, which slows a step:
seed 002 saw +235-245 % with TensorFlow's profiler). The fraction of the profiled step the
layers account for is reported; the rest is optimizer update, loss, autograd bookkeeping and
framework overhead (seed 002 found 38-54 % of the iteration unaccounted).
"""
from __future__ import annotations

import statistics
import time
import warnings
from dataclasses import dataclass, field


@dataclass(frozen=True)
class StepBudget:
    """How many steps to run: warm-up, then timed steps until ``min_steps`` and ``seconds`` are
    both reached (or ``max_steps``), then ``profile_steps`` with per-layer hooks."""

    warmup: int = 3
    min_steps: int = 5
    max_steps: int = 30
    seconds: float = 2.0
    profile_steps: int = 3


def synchronizer(torch_device: str):
    import torch

    if torch_device.startswith("cuda"):
        return torch.cuda.synchronize
    return lambda: None


class Trainer:
    """One training step of a model on synthetic batches, as seed 001's loop runs it."""

    def __init__(self, model, data, loss_fn, optimizer, torch_device: str):
        self.model, self.data, self.loss_fn, self.optimizer = model, data, loss_fn, optimizer
        self.sync = synchronizer(torch_device)

    def step(self) -> None:
        inputs, targets = self.data.batch()
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model(inputs), targets)
        loss.backward()
        self.optimizer.step()

    def timed_steps(self, budget: StepBudget) -> list[float]:
        """Seconds per step after ``budget.warmup`` untimed steps."""
        for _ in range(budget.warmup):
            self.step()
        self.sync()
        times: list[float] = []
        started = time.perf_counter()
        while len(times) < budget.max_steps and (len(times) < budget.min_steps or time.perf_counter() - started < budget.seconds):
            t0 = time.perf_counter()
            self.step()
            self.sync()
            times.append(time.perf_counter() - t0)
        return times


@dataclass
class LayerTimes:
    name: str
    kind: str
    forward: list[float] = field(default_factory=list)
    backward: list[float] = field(default_factory=list)


class LayerTimer:
    """Forward and backward time of every leaf module, from hooks around it.

    Forward: from the forward pre-hook to the forward hook. Backward: from the backward
    pre-hook (gradient of the output ready) to the backward hook (gradient of the input
    ready). A layer whose input needs no gradient (the first layer) gets its backward hook
    at once, before its weight gradient is computed; its backward is taken to end at the next
    backward event, or at the end of the backward pass. Intervals never overlap, so the
    layers never add up to more than the step.
    """

    def __init__(self, model, torch_device: str):
        self.sync = synchronizer(torch_device)
        self.layers: dict[str, LayerTimes] = {}
        self.handles = []
        self._forward_start: dict[str, float] = {}
        self._no_input_grad: set[str] = set()
        self._events: list[tuple[float, str, str]] = []  # (time, "pre"/"post", layer) during backward
        for name, module in model.named_modules():
            if any(True for _ in module.children()):
                continue
            self.layers[name] = LayerTimes(name=name or "model", kind=type(module).__name__)
            self.handles += [
                module.register_forward_pre_hook(self._forward_pre(name)),
                module.register_forward_hook(self._forward_post(name)),
                module.register_full_backward_pre_hook(self._backward_pre(name)),
                module.register_full_backward_hook(self._backward_post(name)),
            ]

    def _now(self) -> float:
        self.sync()
        return time.perf_counter()

    def _forward_pre(self, name):
        def hook(module, inputs):
            self._forward_start[name] = self._now()
        return hook

    def _forward_post(self, name):
        def hook(module, inputs, output):
            self.layers[name].forward.append(self._now() - self._forward_start.pop(name))
            if not any(getattr(t, "requires_grad", False) for t in inputs):
                self._no_input_grad.add(name)
        return hook

    def _backward_pre(self, name):
        def hook(module, grad_output):
            self._events.append((self._now(), "pre", name))
        return hook

    def _backward_post(self, name):
        def hook(module, grad_input, grad_output):
            self._events.append((self._now(), "post", name))
        return hook

    def finish_step(self, backward_end: float) -> None:
        """Turn this step's backward events into per-layer intervals (see the class doc)."""
        starts: dict[str, float] = {}
        events = sorted(self._events)
        for index, (moment, kind, name) in enumerate(events):
            if kind == "pre":
                starts[name] = moment
                if name in self._no_input_grad:
                    later = [m for m, k, n in events[index + 1:] if not (k == "post" and n == name)]
                    end = later[0] if later else backward_end
                    self.layers[name].backward.append(end - moment)
                    starts.pop(name)
            elif name in starts:
                self.layers[name].backward.append(moment - starts.pop(name))
        self._events.clear()

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def profiled_steps(trainer: Trainer, steps: int, torch_device: str) -> tuple[list[float], dict[str, LayerTimes]]:
    """Step times with per-layer hooks, and the per-layer times of those steps."""
    timer = LayerTimer(trainer.model, torch_device)
    step_times = []
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            for _ in range(steps):
                inputs, targets = trainer.data.batch()
                trainer.sync()
                t0 = time.perf_counter()
                trainer.optimizer.zero_grad(set_to_none=True)
                loss = trainer.loss_fn(trainer.model(inputs), targets)
                loss.backward()
                trainer.sync()
                timer.finish_step(time.perf_counter())
                trainer.optimizer.step()
                trainer.sync()
                step_times.append(time.perf_counter() - t0)
    finally:
        timer.remove()
    return step_times, timer.layers


def layer_summary(step_times: list[float], layers: dict[str, LayerTimes], unprofiled_step: float) -> dict:
    """Mean forward/backward per layer over the profiled steps, and the fraction they account for."""
    mean_step = statistics.fmean(step_times)
    rows = []
    for layer in layers.values():
        if not layer.forward:
            continue
        forward = statistics.fmean(layer.forward)
        backward = statistics.fmean(layer.backward) if layer.backward else 0.0
        rows.append({"name": layer.name, "type": layer.kind,
                     "forward": {"value": forward, "unit": "s"}, "backward": {"value": backward, "unit": "s"}})
    accounted = sum(r["forward"]["value"] + r["backward"]["value"] for r in rows)
    return {"profiled_step_time": {"value": mean_step, "unit": "s"},
            "unprofiled_step_time": {"value": unprofiled_step, "unit": "s"},
            "profiling_overhead": mean_step / unprofiled_step - 1,
            "accounted": {"value": accounted, "unit": "s"},
            "accounted_fraction": accounted / mean_step,
            "unaccounted_fraction": 1 - accounted / mean_step,
            "method": "forward/backward module hooks on every leaf module, device synchronised at each hook",
            "layers": rows}
