"""Choosing the efficiencies of a prediction: datasheet defaults, a calibration, or a reference run.

>>> parse_reference_throughput("833/s"), parse_reference_throughput("1,200 images/s")
(833.0, 1200.0)
"""
from __future__ import annotations

import re

from sizer.calibration import Calibration, calibrated_efficiencies
from sizer.catalog import Catalog
from sizer.catalog_schema import Device
from sizer.errors import InputError
from sizer.layer_time import Efficiencies, default_efficiencies
from sizer.profile import Profile
from sizer.profile_time import REFERENCE_WEIGHT, Mode, carried_over, reference_efficiencies
from sizer.results import Assumption
from sizer.units import Quantity

_THROUGHPUT_RE = re.compile(r"^\s*([0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,3})?)\s*(?:[a-z]+)?\s*(?:/|per)\s*"
                            r"(s|sec|second|min|minute|h|hour)\s*$", re.IGNORECASE)


def parse_reference_throughput(text: str) -> float:
    """Samples per second from '833/s', '833 images/s', '50000 per hour'."""
    match = _THROUGHPUT_RE.match(text) if isinstance(text, str) and len(text) <= 64 else None
    if not match:
        raise InputError("reference", text, "DEVICE=THROUGHPUT/s, e.g. 'V100 SXM2 16GB=833/s'")
    value = float(match.group(1).replace(",", ""))
    per = Quantity(1, {"sec": "s", "min": "minute", "h": "hour"}.get(match.group(2).lower(), match.group(2).lower()))
    rate = (value / per).to("1/s").magnitude
    if not 0 < rate < 1e12:
        raise InputError("reference", text, "a positive measured throughput")
    return float(rate)


def parse_reference(text: str, catalog: Catalog) -> tuple[Device, float]:
    """'DEVICE=THROUGHPUT/s' -> the catalog device and samples per second."""
    if not isinstance(text, str) or "=" not in text or len(text) > 200:
        raise InputError("reference", text, "DEVICE=THROUGHPUT/s, e.g. 'V100 SXM2 16GB=833/s'")
    name, _, rate = text.rpartition("=")
    return catalog.find(name.strip(), "reference"), parse_reference_throughput(rate)


def choose_efficiencies(profile: Profile, device: Device, *, precision: str, batch_size: float, optimizer: str,
                        catalog: Catalog, reference: str | None = None, reference_batch_size: float | None = None,
                        calibration: Calibration | None = None) -> tuple[Efficiencies, Mode, list[Assumption]]:
    """The efficiencies for ``device``, the mode they come from, and what to tell the user."""
    if reference is not None:
        reference_device, throughput = parse_reference(reference, catalog)
        batch = reference_batch_size or batch_size
        _, factor = reference_efficiencies(profile, reference_device, precision, batch, optimizer, throughput,
                                           default_efficiencies(reference_device))
        efficiency = carried_over(default_efficiencies(device), factor,
                                  f"default efficiencies scaled by {factor:.3g}^{REFERENCE_WEIGHT:g}: {throughput:.4g}/s measured "
                                  f"on {reference_device.name} at batch {batch:g} ran {factor:.3g}x the model's time")
        note = Assumption(name="reference", value=f"{throughput:.4g} {profile.sample}/s on {reference_device.name}, batch {batch:g}",
                          source="given; the workload's efficiency on it carries over to the target (cf. Habitat, ATC'21)")
        return efficiency, "reference", [note]
    if calibration is not None:
        entry = calibration.for_device(device)
        if entry is not None:
            note = Assumption(name="calibration", value=f"kernels x {entry.efficiency_scale:.3g}, "
                                                        f"{Quantity(entry.step_overhead_s, 's').to('ms'):.3g~P} per step, from {entry.runs} runs",
                              source=f"calibration of {calibration.created} ({calibration.source})")
            return calibrated_efficiencies(device, entry), "calibrated", [note]
        note = Assumption(name="calibration", value=f"none for {device.name}; datasheet defaults used",
                          source=f"calibration of {calibration.created} covers {', '.join(d.device_name for d in calibration.devices)}")
        return default_efficiencies(device), "datasheet", [note]
    return default_efficiencies(device), "datasheet", []
