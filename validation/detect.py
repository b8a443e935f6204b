"""The machine at hand as a :class:`sizer.hardware.schema.Device`, so the core can predict for it.

A CUDA device is looked up in the catalog by the name the driver reports (with a few
normalisations; the report says when none matches). The CPU is described from the operating
system: model name, the cores this process may actually use (affinity mask and cgroup quota),
clock, and SIMD width and FMA units from the instruction-set flags. What the OS does not tell
(memory bandwidth, TDP) is an assumption, labelled as one in the device's sources.
"""
from __future__ import annotations

import datetime
import math
import os
import platform
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from sizer.engine.constants import device_efficiencies
from sizer.hardware.catalog import Catalog, load_catalog, match_devices
from sizer.hardware.schema import CpuVector, Device, Interconnect, Sourced
from sizer.units import Quantity

CPUINFO = Path("/proc/cpuinfo")
SYS_CPU = Path("/sys/devices/system/cpu")
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")

# Memory bandwidth is not visible to an unprivileged process (channels and DIMM speed need
# dmidecode). One DDR4-3200 channel, 3200 MT/s x 8 bytes, is a conservative figure for a
# server or desktop share of the memory system.
ASSUMED_CPU_BANDWIDTH = "25.6 GB/s"
ASSUMED_CPU_BANDWIDTH_SOURCE = ("assumed: memory channels and DIMM speed are not visible from the OS; "
                                "one DDR4-3200 channel (3200 MT/s x 8 B), a conservative figure")
ASSUMED_WATTS_PER_CORE = 10
# Processes on one host exchange gradients through shared memory / loopback TCP (gloo).
ASSUMED_LOOPBACK = ("gloo over loopback on one host", "5 GB/s",
                    "assumed: gloo all-reduce between processes on one host (loopback TCP / shared memory)")


@dataclass(frozen=True)
class SimdDescription:
    isa: str
    fp32_lanes_per_fma: int
    fma_units_per_core: int
    source: str


@dataclass(frozen=True)
class DetectedDevice:
    """The device the suite runs on, the core's model of it, and how that model was obtained."""

    kind: str  # "cpu" or "cuda"
    torch_device: str  # "cpu" or "cuda:0"
    device: Device
    catalog_id: str | None
    description: str
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "torch_device": self.torch_device, "name": self.device.name,
                "catalog_id": self.catalog_id, "description": self.description, "notes": list(self.notes),
                "model": self.device.model_dump(mode="json")}


def simd_from_flags(flags: set[str], vendor: str = "") -> SimdDescription:
    """FP32 SIMD lanes per FMA unit and FMA units per core from /proc/cpuinfo flags.

    The FMA unit count is not a flag: it is the common figure for the ISA generation
    (Intel Skylake-SP Gold/Platinum and later: two 512-bit FMA units; Haswell and later and
    AMD Zen 2 and later: two 256-bit FMA units; AMD Zen 4 runs AVX-512 on 256-bit units).

    >>> simd_from_flags({"avx", "avx2", "fma"}).fp32_lanes_per_fma
    8
    >>> simd_from_flags({"sse2"}).isa
    'SSE2'
    """
    if "avx512f" in flags:
        if "amd" in vendor.lower():
            return SimdDescription("AVX-512 (Zen 4: 256-bit datapaths)", 8, 2,
                                   "flags: avx512f; AMD Zen 4 executes AVX-512 on two 256-bit FMA units (assumed)")
        return SimdDescription("AVX-512", 16, 2, "flags: avx512f; two 512-bit FMA units assumed (Xeon Gold/Platinum; Silver/Bronze have one)")
    if "avx2" in flags and "fma" in flags:
        return SimdDescription("AVX2+FMA3", 8, 2, "flags: avx2, fma; two 256-bit FMA units assumed (Intel Haswell+, AMD Zen 2+)")
    if "avx" in flags:
        return SimdDescription("AVX (no FMA)", 8, 1, "flags: avx without fma; one 256-bit multiply-add path assumed")
    if "asimd" in flags or platform.machine() in ("aarch64", "arm64"):
        return SimdDescription("NEON/ASIMD", 4, 2, "flags: asimd; two 128-bit FMA units assumed")
    return SimdDescription("SSE2", 4, 1, "no AVX flag; one 128-bit multiply-add path assumed")


def parse_cpuinfo(text: str) -> dict[str, str]:
    """The first processor block of /proc/cpuinfo as a dict (keys lower-cased)."""
    info: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if info:
                break
            continue
        key, _, value = line.partition(":")
        info.setdefault(key.strip().lower(), value.strip())
    return info


def usable_cpus() -> list[int]:
    """Logical CPUs this process may run on (affinity mask), trimmed to the cgroup CPU quota."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    try:
        quota, period = CGROUP_CPU_MAX.read_text().split()
        if quota != "max":
            cpus = cpus[:max(1, math.ceil(int(quota) / int(period)))]
    except (OSError, ValueError):
        pass
    return cpus


def physical_cores(cpus: list[int]) -> int:
    """Distinct physical cores among the logical CPUs (SMT siblings counted once)."""
    cores = set()
    for cpu in cpus:
        topology = SYS_CPU / f"cpu{cpu}" / "topology"
        try:
            cores.add(((topology / "physical_package_id").read_text().strip(), (topology / "core_id").read_text().strip()))
        except OSError:
            cores.add(("?", str(cpu)))
    return max(1, len(cores))


def _read_khz(path: Path) -> float | None:
    try:
        return float(path.read_text().strip())
    except (OSError, ValueError):
        return None


def cpu_clocks(info: dict[str, str]) -> tuple[Sourced, Sourced]:
    """Base and boost clock: cpufreq limits when the kernel exposes them, else the current clock."""
    freq = SYS_CPU / "cpu0" / "cpufreq"
    max_khz, base_khz = _read_khz(freq / "cpuinfo_max_freq"), _read_khz(freq / "base_frequency")
    current = info.get("cpu mhz")
    if max_khz:
        boost = Sourced(value=f"{Quantity(max_khz, 'kHz').to('MHz').magnitude:.0f} MHz",
                        source="detected: /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        base_value = base_khz or max_khz
        base = Sourced(value=f"{Quantity(base_value, 'kHz').to('MHz').magnitude:.0f} MHz",
                       source="detected: cpufreq base_frequency" if base_khz else "detected: cpufreq (no base_frequency; max used)")
        return base, boost
    if current:
        clock = Sourced(value=f"{float(current):.0f} MHz",
                        source="detected: /proc/cpuinfo 'cpu MHz' (current clock; no cpufreq limits exposed, e.g. in a VM)")
        return clock, clock
    clock = Sourced(value="2 GHz", source="assumed: the OS reports no clock")
    return clock, clock


def describe_cpu(threads_used: int | None = None) -> DetectedDevice:
    """The local CPU, as the OS describes it, in the core's device model."""
    import psutil

    text = CPUINFO.read_text() if CPUINFO.exists() else ""
    info = parse_cpuinfo(text)
    model = info.get("model name") or platform.processor() or platform.machine() or "unknown CPU"
    vendor = info.get("vendor_id", "unknown")
    flags = set((info.get("flags") or info.get("features") or "").split())
    cpus = usable_cpus()
    cores = physical_cores(cpus)
    simd = simd_from_flags(flags, vendor)
    base, boost = cpu_clocks(info)
    total = Quantity(psutil.virtual_memory().total, "B").to("GB").magnitude
    watts = ASSUMED_WATTS_PER_CORE * cores
    notes = [f"{len(cpus)} logical CPUs usable (affinity mask and cgroup quota), {cores} physical cores",
             f"memory bandwidth {ASSUMED_CPU_BANDWIDTH}: {ASSUMED_CPU_BANDWIDTH_SOURCE}"]
    device = Device(
        id="local-cpu", name=f"{model} ({cores} usable cores)", vendor=vendor, kind="cpu",
        architecture=f"{platform.machine()} {simd.isa}", launch_year=datetime.date.today().year,
        cores=Sourced(value=cores, source="detected: sched_getaffinity, cgroup cpu.max, /sys/.../topology"),
        threads=Sourced(value=len(cpus), source="detected: sched_getaffinity and cgroup cpu.max"),
        vector=CpuVector(isa=simd.isa, fp32_lanes_per_fma=simd.fp32_lanes_per_fma,
                         fma_units_per_core=simd.fma_units_per_core, source=f"detected: /proc/cpuinfo {simd.source}"),
        base_clock=base, boost_clock=boost,
        memory=Sourced(value=f"{total:.2f} GB", source="detected: psutil.virtual_memory().total"),
        memory_type="unknown (not visible from the OS)",
        memory_bandwidth=Sourced(value=ASSUMED_CPU_BANDWIDTH, source=ASSUMED_CPU_BANDWIDTH_SOURCE),
        tdp=Sourced(value=f"{watts} W", source=f"assumed: {ASSUMED_WATTS_PER_CORE} W per usable core"),
        interconnect=Interconnect(name=ASSUMED_LOOPBACK[0],
                                  bandwidth=Sourced(value=ASSUMED_LOOPBACK[1], source=ASSUMED_LOOPBACK[2])),
        notes="described from the operating system by validation.detect; launch year unknown (set to this year)")
    entry, found = match_cpu(model)
    notes.append(found)
    if entry is not None:
        device = with_catalog_figures(device, entry, cores)
        notes[1] = (f"memory bandwidth, SIMD units and power from the catalog entry {entry.id!r}, "
                    f"shared by the {cores} usable of its {int(entry.cores.value)} cores")
    notes.append(efficiency_note(device))
    if threads_used is not None:
        notes.append(f"torch uses {threads_used} threads")
    return DetectedDevice(kind="cpu", torch_device="cpu", device=device, catalog_id=entry.id if entry else None,
                          description=f"{model}: {cores} cores, {device.vector.isa}, boost {device.boost_clock.value}",
                          notes=notes)


def match_cpu(model: str, catalog: Catalog | None = None) -> tuple[Device | None, str]:
    """The catalog CPU named by the OS's model name, and a note saying how it was found (or why not).

    A VM often reports a family only ("AMD EPYC"): several entries match, and none is taken.
    """
    catalog = catalog or load_catalog()
    words = re.sub(r"\((R|TM)\)|\bCPU\b|\bProcessor\b|@.*$|\b\w+-Core\b", " ", model, flags=re.IGNORECASE)
    name = " ".join(words.split())
    matches = [d for d in match_devices(catalog, name) if d.kind == "cpu"] if name else []
    if len(matches) == 1:
        return matches[0], f"catalog entry {matches[0].id!r} matched by the model name {model!r}"
    if matches:
        return None, (f"the model name {model!r} matches {len(matches)} catalog CPUs ({', '.join(d.id for d in matches[:5])}"
                      f"{', ...' if len(matches) > 5 else ''}): none taken; figures from the OS and assumptions")
    return None, f"no catalog CPU matches the model name {model!r}: figures from the OS and assumptions"


def efficiency_note(device: Device) -> str:
    """Where the CPU's efficiencies come from: measured on this processor (its catalog entry's
    ``efficiency``), or, as a warning, the generic CPU defaults that were fitted on one other VM."""
    used = device_efficiencies(device)
    if device.efficiency is not None:
        return f"efficiencies {used.source}"
    return (f"warning: efficiencies: the catalog holds none measured on this processor, so the generic CPU defaults "
            f"are used (FP32 matrix {used.fp32_matrix:g}, vector {used.vector:g}, memory {used.memory:g} of peak, "
            f"{used.step_overhead * 1e3:g} ms per step; {used.source}); step times may be off by tens of percent "
            "(sizer calibrate fits this machine)")


def with_catalog_figures(device: Device, entry: Device, cores: int) -> Device:
    """The OS description with the catalog entry's figures: SIMD units, memory bandwidth and power
    (the last two shared in proportion to the usable cores), the efficiencies measured on it if
    any, and its clocks where the OS reported none."""
    share = min(1.0, cores / float(entry.cores.value)) if entry.cores is not None else 1.0
    bandwidth = entry.memory_bandwidth.quantity("memory_bandwidth", "[information]/[time]") * share
    update = {"memory_bandwidth": Sourced(value=f"{bandwidth.to('GB/s').magnitude:.4g} GB/s",
                                          source=f"catalog {entry.id}: {entry.memory_bandwidth.source}, x {share:.3g} "
                                                 "(usable cores / cores)"),
              "memory_type": entry.memory_type,
              "efficiency": entry.efficiency}  # measured on the processor, whatever share of it runs here
    if entry.vector is not None:
        update["vector"] = entry.vector
    if entry.tdp is not None:
        watts = entry.tdp.quantity("tdp", "[power]") * share
        update["tdp"] = Sourced(value=f"{watts.to('W').magnitude:.4g} W",
                                source=f"catalog {entry.id}: {entry.tdp.source}, x {share:.3g} (usable cores / cores)")
    if str(device.boost_clock.source).startswith("assumed") and entry.boost_clock is not None:
        update["base_clock"], update["boost_clock"] = entry.base_clock or entry.boost_clock, entry.boost_clock
    return device.model_copy(update=update)


def cpu_share(detected: DetectedDevice, processes: int) -> Device:
    """The local CPU split between ``processes`` ranks of a data-parallel run on one host."""
    device = detected.device
    cores = int(device.cores.value)
    share = max(1, cores // processes)
    bandwidth = device.memory_bandwidth.quantity("memory_bandwidth", "[information]/[time]") / processes
    return device.model_copy(update={
        "id": f"local-cpu-share-{processes}", "name": f"{device.name}, 1/{processes} ({share} cores)",
        "cores": Sourced(value=share, source=f"{device.cores.source}; divided between {processes} processes"),
        "memory_bandwidth": Sourced(value=f"{bandwidth.to('GB/s').magnitude:.4g} GB/s",
                                    source=f"{device.memory_bandwidth.source}; divided between {processes} processes")})


def cores_in_use(detected: DetectedDevice, cores: int, foreign_percent: float) -> DetectedDevice:
    """The local CPU as far as a run may use it: ``cores`` of its cores, the rest taken by other
    processes (``foreign_percent`` of the machine when the suite started); memory bandwidth and
    the efficiencies stay the whole processor's."""
    device = detected.device
    total = int(device.cores.value)
    source = f"{device.cores.source}; {total - cores} of {total} taken by other processes ({foreign_percent:.0f} % CPU)"
    share = device.model_copy(update={
        "id": f"{device.id}-free-{cores}", "name": f"{device.name}, {cores} free",
        "cores": Sourced(value=cores, source=source), "threads": Sourced(value=cores, source=source)})
    note = (f"other processes took {foreign_percent:.0f} % of the CPU when the suite started: "
            f"torch uses {cores} thread(s), one on each free core, and is predicted for those cores")
    kept = [line for line in detected.notes if not line.startswith("torch uses ")]  # said again, with the count
    return replace(detected, device=share, notes=[*kept, note])


# Driver names that the catalog spells differently (the SXM H100 reports its memory type).
CUDA_NAME_HINTS: tuple[tuple[str, str], ...] = ((r"\bH100 80GB HBM3\b", "H100 SXM5 80GB"),
                                                 (r"\bH100 PCIe\b", "H100 PCIe 80GB"))


def cuda_name_candidates(name: str) -> list[str]:
    """Names to try for a driver-reported GPU name, most specific first.

    >>> cuda_name_candidates("NVIDIA A100-SXM4-80GB")[:2]
    ['NVIDIA A100-SXM4-80GB', 'NVIDIA A100 SXM4 80GB']
    """
    names = [name]
    for pattern, replacement in CUDA_NAME_HINTS:
        if re.search(pattern, name):
            names.append(re.sub(pattern, replacement, name))
    spaced = re.sub(r"[-_]+", " ", name).strip()
    names.append(spaced)
    words = spaced.split()
    while len(words) > 2:  # drop trailing words ("HBM3", "PCIe") until something matches
        words = words[:-1]
        names.append(" ".join(words))
    return list(dict.fromkeys(names))


def match_cuda_device(name: str, total_memory_bytes: float | None, catalog: Catalog | None = None) -> tuple[Device | None, str]:
    """The catalog entry for a driver-reported GPU name, and a note on how it was found."""
    catalog = catalog or load_catalog()
    for candidate in cuda_name_candidates(name):
        if not any(ch.isdigit() for ch in candidate):
            continue
        matches = [d for d in match_devices(catalog, candidate) if d.kind == "gpu"]
        if len(matches) > 1 and total_memory_bytes:
            memory = Quantity(total_memory_bytes, "B")
            matches = [d for d in matches
                       if 0.85 <= (memory / d.memory.quantity("memory", "[information]")).to("").magnitude <= 1.15]
        if len(matches) == 1:
            return matches[0], f"catalog entry {matches[0].id!r} matched by name {candidate!r}"
        if len(matches) > 1:
            return None, f"{name!r} is ambiguous in the catalog: {', '.join(d.id for d in matches)}"
    return None, f"no catalog entry matches {name!r}"


def describe_cuda(index: int = 0, catalog: Catalog | None = None) -> DetectedDevice:
    """A CUDA device mapped to its catalog entry; when none matches, a model built from the
    driver's figures with the missing ones (cores per SM, bandwidth) labelled assumed."""
    import torch

    name = torch.cuda.get_device_name(index)
    props = torch.cuda.get_device_properties(index)
    device, note = match_cuda_device(name, props.total_memory, catalog)
    notes = [note]
    if device is not None:
        return DetectedDevice(kind="cuda", torch_device=f"cuda:{index}", device=device, catalog_id=device.id,
                              description=f"{name} -> {device.name}", notes=notes)
    notes.append("predictions use figures from the driver; cores per SM and memory bandwidth are assumed")
    return DetectedDevice(kind="cuda", torch_device=f"cuda:{index}", device=_device_from_driver(name, props, index),
                          catalog_id=None, description=f"{name} (not in the catalog)", notes=notes)


# FP32 cores per SM by compute capability major version (NVIDIA CUDA C programming guide,
# "Arithmetic instructions" throughput table); 8.x other than 8.0 has 128.
CORES_PER_SM = {6: 64, 7: 64, 8: 64, 9: 128, 10: 128, 12: 128}


def _device_from_driver(name: str, props, index: int) -> Device:
    cores_per_sm = CORES_PER_SM.get(props.major, 64)
    if props.major == 8 and props.minor != 0:
        cores_per_sm = 128
    clock_mhz, bandwidth = 1500.0, "500 GB/s"
    clock_source, bandwidth_source = "assumed: 1.5 GHz", "assumed: NVML did not report memory clock and bus width"
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        clock_mhz = float(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM))
        clock_source = "detected: NVML max SM clock"
        memory_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
        rate = Quantity(2 * memory_mhz, "MHz") * Quantity(bus_bits, "bit")
        bandwidth = f"{rate.to('GB/s').magnitude:.4g} GB/s"
        bandwidth_source = "detected: NVML max memory clock x bus width x 2 (double data rate)"
    except Exception:  # NVML missing or not supported on this device: keep the assumptions
        pass
    return Device(
        id="local-gpu", name=name, vendor="NVIDIA", kind="gpu", architecture=f"compute capability {props.major}.{props.minor}",
        launch_year=datetime.date.today().year,
        fp32_cores=Sourced(value=props.multi_processor_count * cores_per_sm,
                           source=f"detected SMs x {cores_per_sm} FP32 cores per SM (assumed from compute capability)"),
        boost_clock=Sourced(value=f"{clock_mhz:.0f} MHz", source=clock_source),
        memory=Sourced(value=f"{Quantity(props.total_memory, 'B').to('GB').magnitude:.2f} GB", source="detected: torch.cuda"),
        memory_type="unknown", memory_bandwidth=Sourced(value=bandwidth, source=bandwidth_source),
        tdp=Sourced(value="300 W", source="assumed"))


def detect_device(requested: str = "auto") -> DetectedDevice:
    """``auto`` picks CUDA when torch sees a GPU, else the CPU; ``cuda`` without one is an error."""
    import torch

    if requested not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device: got {requested!r}; expected auto, cpu or cuda")
    if requested == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: cuda was asked for but torch sees no CUDA device; use --device cpu or auto")
    if requested == "cuda" or (requested == "auto" and torch.cuda.is_available()):
        return describe_cuda(0)
    return describe_cpu(torch.get_num_threads())
