"""The four resources seed 001 tracked while training: CPU load, RAM, GPU load, GPU memory.

A background thread samples them with psutil (and NVML through nvidia-ml-py where a GPU and
its driver are present) every ``interval`` seconds; each is summarised as mean and maximum.
Peak process memory on the CPU comes from the kernel's high-water mark (``VmHWM``), reset
before each run through ``/proc/self/clear_refs``, so that short peaks between samples count.
"""
from __future__ import annotations

import ctypes
import gc
import statistics
import threading
from pathlib import Path

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")
BYTES_PER_MIB = 2**20


def release_freed_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS, so the next RSS baseline is clean."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def current_rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (Linux >= 4.0); False where that is not possible."""
    try:
        CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def peak_rss() -> int | None:
    """``VmHWM`` of this process in bytes, or None where /proc is not available."""
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # /proc reports kB (KiB)
    except (OSError, ValueError, IndexError):
        return None
    return None


def _nvml_handle(index: int):
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:  # no driver, no GPU, or nvidia-ml-py missing: GPU loads are simply absent
        return None


class LoadSampler:
    """Samples system CPU %, RAM %, process RSS and (with NVML) GPU % and memory in a thread."""

    def __init__(self, interval: float = 0.1, gpu_index: int | None = None):
        self.interval = interval
        self.samples: dict[str, list[float]] = {"cpu_percent": [], "ram_percent": [], "process_rss_mb": []}
        self._gpu = _nvml_handle(gpu_index) if gpu_index is not None else None
        if self._gpu is not None:
            self.samples.update({"gpu_percent": [], "gpu_memory_percent": [], "gpu_memory_used_mb": []})
        self._children: dict = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "LoadSampler":
        import psutil

        psutil.cpu_percent(None)  # the first call only sets the reference point
        psutil.cpu_times_percent(None)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import psutil

        process = psutil.Process()
        process.cpu_percent(None)
        cpus = psutil.cpu_count() or 1
        while not self._stop.wait(self.interval):
            system = psutil.cpu_percent(None)
            self.samples["cpu_percent"].append(system)
            # CPU used by everything else on the machine: other processes slow a CPU run down
            own = (process.cpu_percent(None) + self._children_cpu(process)) / cpus
            self.samples.setdefault("other_processes_cpu_percent", []).append(max(0.0, system - own))
            steal = getattr(psutil.cpu_times_percent(None), "steal", None)  # a VM's CPU taken by the hypervisor
            if steal is not None:
                self.samples.setdefault("cpu_steal_percent", []).append(steal)
            self.samples["ram_percent"].append(psutil.virtual_memory().percent)
            self.samples["process_rss_mb"].append(process.memory_info().rss / BYTES_PER_MIB)
            if self._gpu is not None:
                self._sample_gpu()

    def _children_cpu(self, process) -> float:
        """CPU % of this process's children (the ranks of a data-parallel run), which are ours."""
        import psutil

        total = 0.0
        try:
            children = process.children(recursive=True)
        except psutil.Error:
            return 0.0
        for child in children:
            tracked = self._children.setdefault(child.pid, child)
            try:
                total += tracked.cpu_percent(None)
            except psutil.Error:
                self._children.pop(child.pid, None)
        return total

    def _sample_gpu(self) -> None:
        import pynvml

        try:
            rates = pynvml.nvmlDeviceGetUtilizationRates(self._gpu)
            memory = pynvml.nvmlDeviceGetMemoryInfo(self._gpu)
        except Exception:  # a transient NVML error loses one sample, not the run
            return
        self.samples["gpu_percent"].append(float(rates.gpu))
        self.samples["gpu_memory_percent"].append(100.0 * memory.used / memory.total)
        self.samples["gpu_memory_used_mb"].append(memory.used / BYTES_PER_MIB)

    def summary(self) -> dict:
        """Mean and maximum of each resource, with its unit and the sample count."""
        units = {"cpu_percent": "%", "cpu_steal_percent": "%", "other_processes_cpu_percent": "%", "ram_percent": "%", "process_rss_mb": "MiB", "gpu_percent": "%",
                 "gpu_memory_percent": "%", "gpu_memory_used_mb": "MiB"}
        out = {}
        for name, values in self.samples.items():
            if values:
                out[name] = {"mean": statistics.fmean(values), "max": max(values), "unit": units[name], "samples": len(values)}
        return out

