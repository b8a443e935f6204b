"""How a catalog device is shown: every figure as a quantity with its unit and source.

>>> from sizer.hardware.catalog import load_catalog
>>> view = describe_device(load_catalog().find("Tesla P40"))
>>> view.memory.value, view.memory.unit
(24.0, 'GB')
"""
from __future__ import annotations

from typing import Any

from sizer.choices import Precision
from sizer.formulas.peaks import derived_fp32_peak, supported_precisions
from sizer.formulas.tco import cheapest_cloud_price
from sizer.hardware.schema import FIELD_DIMENSIONS, CloudPrice, Device, Price, Sourced
from sizer.hardware.server_share import purchase_per_device
from sizer.results import Model

DISPLAY_UNITS = {"base_clock": "MHz", "boost_clock": "MHz", "all_core_clock": "MHz", "memory": "GB", "memory_bandwidth": "GB/s", "tdp": "W",
                 "interconnect.bandwidth": "GB/s", "interconnect.bridge": "GB/s"}


class SourcedQuantity(Model):
    value: float
    unit: str
    source: str
    verified: bool = False  # True only for a figure read in its source; False: recalled, derived by an unread rule, or low confidence
    note: str | None = None


class PriceView(Model):
    """A price as shown: per device (USD, or USD/hour for an offer), its date and source; an offer says
    its term, what one rental holds and the network between nodes where its seller states one; a
    purchase says its basis (list, street, price-history median, analyst estimate, second-hand), confidence and
    the system it was quoted for (a share of a DGX node, or the Mac a chip is sold in)."""

    value: float  # per device
    unit: str
    date: str
    source: str
    provider: str | None = None
    instance: str | None = None
    term: str | None = None  # on-demand, spot, reserved ...
    devices_in_instance: int | None = None
    network: str | None = None  # between nodes, where the offer is a cluster
    basis: str | None = None  # list, street, price-history median, analyst estimate or second-hand
    confidence: str | None = None
    devices_in_system: int | None = None  # a system's price: value is its price over these devices
    system: str | None = None
    scope: str | None = None  # a purchase: "gpu" (the device alone; buying adds a server share) or "system-share"
    verified: bool = False
    note: str | None = None


class DeviceSummary(Model):
    id: str
    name: str
    kind: str
    vendor: str
    architecture: str
    launch_year: int
    memory: SourcedQuantity
    memory_bandwidth: SourcedQuantity
    fp32_peak: SourcedQuantity | None
    precisions: list[str]
    sources: list[str]
    peaks: dict[str, SourcedQuantity]  # dense peak per precision [TFLOPS]
    purchase_price: PriceView | None = None  # per device, with its basis and date
    cloud_price: PriceView | None = None  # the cheapest on-demand offer for one device, with its date


class DeviceDetail(DeviceSummary):
    aliases: list[str]
    fp32_cores: SourcedQuantity | None
    cores: SourcedQuantity | None
    threads: SourcedQuantity | None
    base_clock: SourcedQuantity | None
    boost_clock: SourcedQuantity | None
    all_core_clock: SourcedQuantity | None = None  # CPUs: the clock the FP32 peak uses where given
    derived_fp32_peak: SourcedQuantity | None
    fp32_peak_discrepancy: str | None
    memory_type: str
    unified_memory: bool
    tdp: SourcedQuantity | None
    unverified: list[str]
    interconnect: str | None
    interconnect_bandwidth: SourcedQuantity | None
    vector: str | None
    purchase_prices: list[PriceView] = []  # every other purchase quote (systems, street prices, estimates)
    cloud_prices: list[PriceView]
    notes: str | None
    # where the name asked for left a chip's GPU cores or memory open ("M1 Max"): the configuration assumed
    assumed: str | None = None


def _sourced(field: str, sourced: Sourced | None) -> SourcedQuantity | None:
    if sourced is None:
        return None
    if field.startswith("peaks."):
        quantity, unit = sourced.quantity(field, "[computation]/[time]"), "TFLOPS"
    elif field in DISPLAY_UNITS:
        quantity, unit = sourced.quantity(field, FIELD_DIMENSIONS[field][0]), DISPLAY_UNITS[field]
    else:
        quantity, unit = sourced.quantity(field, "", ""), ""
    return SourcedQuantity(value=float(quantity.to(unit).magnitude), unit=unit, source=sourced.source,
                           verified=sourced.verified, note=sourced.note)


def _offer(price: CloudPrice) -> PriceView:
    quantity = price.quantity("cloud_prices", "[currency]/[time]")
    network = price.network
    return PriceView(value=float(quantity.to("USD/hour").magnitude), unit="USD/hour", date=price.date, source=price.source,
                     provider=price.provider, instance=price.instance, term=price.term,
                     devices_in_instance=price.devices_in_instance,
                     network=f"{network.name} ({network.fabric}, {network.value} per device)" if network else None,
                     note=price.note)


def _purchase(price: Price) -> PriceView:
    return PriceView(value=purchase_per_device(price), unit="USD", date=price.date, source=price.source,
                     basis=price.basis, confidence=price.confidence, devices_in_system=price.devices_in_system,
                     system=price.system, scope=price.scope, verified=price.verified, note=price.note)


def _summary_fields(device: Device) -> dict[str, Any]:
    """The fields :class:`DeviceSummary` and :class:`DeviceDetail` share, from one catalog entry."""
    sources = sorted({s.source for s in device.sourced_fields().values()})
    return dict(id=device.id, name=device.name, kind=device.kind, vendor=device.vendor, architecture=device.architecture,
                launch_year=device.launch_year, memory=_sourced("memory", device.memory),
                memory_bandwidth=_sourced("memory_bandwidth", device.memory_bandwidth),
                fp32_peak=_sourced("peaks.fp32", device.peaks.get(Precision.FP32)), precisions=supported_precisions(device),
                sources=sources, peaks={p: _sourced(f"peaks.{p}", s) for p, s in device.peaks.items()},
                purchase_price=_purchase(device.purchase_price) if device.purchase_price else None,
                cloud_price=_offer(cheapest) if (cheapest := cheapest_cloud_price(device)) else None)


def summarize_device(device: Device) -> DeviceSummary:
    """The short view of a catalog device, one row of ``sizer devices``.

    Parameters
    ----------
    device : Device
        A validated catalog entry.

    Returns
    -------
    DeviceSummary
        Its name, kind and vendor; memory [GB], memory bandwidth [GB/s] and the dense peak of every
        precision it has [TFLOPS], each with its source and whether it was read there; the cheapest
        on-demand cloud offer and the purchase price per device, with their dates.
    """
    return DeviceSummary(**_summary_fields(device))


def describe_device(device: Device, assumed: str | None = None) -> DeviceDetail:
    """Every figure of a catalog device, as ``sizer device NAME`` shows it.

    Parameters
    ----------
    device : Device
        A validated catalog entry.
    assumed : str, optional
        What the name asked for left open and was assumed (:meth:`sizer.hardware.catalog.Catalog.assumed`).

    Returns
    -------
    DeviceDetail
        The summary (:func:`summarize_device`) and also the cores, clocks [MHz], TDP [W] and
        interconnect bandwidth [GB/s] with their sources; the FP32 peak worked out from cores and
        clock (2NC, seed 004 eq. 1, or the CPU vector formula) beside the catalog's, and any
        discrepancy between them; the fields not verified in their source; every price quote.
    """
    derived = derived_fp32_peak(device)
    return DeviceDetail(
        **_summary_fields(device), aliases=device.aliases,
        fp32_cores=_sourced("fp32_cores", device.fp32_cores), cores=_sourced("cores", device.cores),
        threads=_sourced("threads", device.threads), base_clock=_sourced("base_clock", device.base_clock),
        boost_clock=_sourced("boost_clock", device.boost_clock),
        all_core_clock=_sourced("all_core_clock", device.all_core_clock),
        derived_fp32_peak=SourcedQuantity(value=float(derived.to("TFLOPS").magnitude), unit="TFLOPS",
                                          source="computed: R = 2NC (seed 004 eq. 1) or the CPU FMA/SIMD formula (spec §3.1)",
                                          verified=all(part.verified for part in (device.fp32_cores, device.cores,
                                                                                 device.boost_clock, device.all_core_clock,
                                                                                 device.vector) if part))
        if derived is not None else None,
        fp32_peak_discrepancy=device.fp32_peak_discrepancy,
        memory_type=device.memory_type, unified_memory=device.unified_memory, tdp=_sourced("tdp", device.tdp),
        unverified=[path for path, sourced in device.sourced_fields().items() if not sourced.verified]
        + (["vector"] if device.vector is not None and not device.vector.verified else [])
        + (["matrix_tiles"] if device.matrix_tiles is not None and not device.matrix_tiles.verified else []),
        interconnect=device.interconnect.name if device.interconnect else None,
        interconnect_bandwidth=_sourced("interconnect.bandwidth", device.interconnect.bandwidth) if device.interconnect else None,
        vector=(f"{device.vector.isa}: {device.vector.fma_units_per_core} FMA unit(s) x {device.vector.fp32_lanes_per_fma} FP32 lanes"
                if device.vector else None),
        purchase_prices=[_purchase(p) for p in device.purchase_prices],
        cloud_prices=[_offer(p) for p in device.cloud_prices], notes=device.notes, assumed=assumed)
