"""Pydantic models of the hardware catalog (spec §4).

A catalog file is YAML with two keys: ``sources`` (short key -> full citation) and ``devices``
(a list of :class:`Device`). Every number is a :class:`Sourced` value: a string with its unit
("1531 MHz", "24 GB", "347.1 GB/s") and the key of its source. Models forbid unknown fields so
that a typo in a user file is an error, not a silently ignored value.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import pint
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from sizer.choices import CatalogKindName, DeviceKind, Precision
from sizer.errors import InputError
from sizer.units import Quantity, parse_quantity

# The one precision vocabulary (sizer.choices); a catalog states peaks for stored precisions, every one but
# `mixed`, which each device resolves to one of these.
PRECISIONS: tuple[Precision, ...] = tuple(p for p in Precision if p is not Precision.MIXED)
PriceScope = Literal["gpu", "system-share"]  # a purchase price of the device alone, or its share of a whole machine

_DATE_RE = re.compile(r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$")  # ASCII digits: \d takes "٢٠٢٣"


def _checked_date(date: str) -> str:
    if not _DATE_RE.match(date):
        raise ValueError("date must be YYYY, YYYY-MM or YYYY-MM-DD")
    return date


class Strict(BaseModel):
    # defer_build: validators are built on first use (a catalog read from the disk cache needs none)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# The unit a catalog figure of each dimension is kept in (dimensions written without spaces).
SI_UNITS = {"": "", "[frequency]": "Hz", "[information]": "B", "[information]/[time]": "B/s", "[power]": "W",
            "[computation]/[time]": "FLOP/s", "[time]": "s", "[currency]": "USD", "[currency]/[time]": "USD/hour"}


class Figure(Strict):
    """A catalog figure written as text with its unit, read once into a number (:meth:`si`)."""

    _si: dict[tuple[str | int | float, str, str | None], float] = PrivateAttr(default_factory=dict)
    # (text, dimension, default unit) -> the figure in SI_UNITS
    if TYPE_CHECKING:  # every figure has a value; each kind declares its own type (a price is text only)
        value: str | int | float

    def quantity(self, field: str, dimension: str, default_unit: str | None = None) -> pint.Quantity[Any]:
        """The figure as a quantity of ``dimension``, in its :data:`SI_UNITS` unit.

        Parameters
        ----------
        field : str
            The field's name, for an error.
        dimension : str
            Its pint dimensionality, e.g. ``"[frequency]"``; one outside :data:`SI_UNITS` is parsed each time.
        default_unit : str, optional
            The unit of a bare number.

        Returns
        -------
        pint.Quantity
            The figure, e.g. a clock [Hz] or a bandwidth [B/s].
        """
        unit = SI_UNITS.get(dimension.replace(" ", ""))
        if unit is None:
            return parse_quantity(field, self.value, dimension, default_unit=default_unit)
        return Quantity(self.si(field, dimension, default_unit), unit)

    def si(self, field: str, dimension: str, default_unit: str | None = None) -> float:
        """The figure in the SI unit of its dimension (:data:`SI_UNITS`): parsed once, when the catalog
        is loaded (:func:`sizer.hardware.catalog.load_catalog`), and kept with it, also in the disk cache.

        Parameters
        ----------
        field : str
            The field's name, for an error.
        dimension : str
            Its pint dimensionality, e.g. ``"[information]"``.
        default_unit : str, optional
            The unit of a bare number.

        Returns
        -------
        float
            The magnitude in ``SI_UNITS[dimension]``.
        """
        # keyed by the text too: a copy with another value (model_copy shares this dict) is parsed anew
        key = (self.value, dimension.replace(" ", ""), default_unit)
        value = self._si.get(key)
        if value is None:
            value = float(parse_quantity(field, self.value, dimension, default_unit=default_unit).to(SI_UNITS[key[1]]).magnitude)
            self._si[key] = value
        return value


class Sourced(Figure):
    """A value with its unit, as written in the catalog, and the key of its source.

    ``verified`` says whether the figure was read in the cited source (true) or recalled,
    taken from a low-confidence row, or derived from a rule that was not read (false). A
    figure that does not say is taken as unverified.
    """

    value: str | int | float
    source: str
    verified: bool = False
    note: str | None = None


PurchaseBasis = Literal["list", "street", "price-history median", "analyst estimate", "second-hand"]
"""What a purchase price is: a vendor's list or launch price (MSRP), a price of a new device seen at
retailers or resellers (street), the median of a retailer's price history over a window
(price-history median: condition of the listing not always known), an analyst's or journalist's
estimate of what buyers pay, or the price of a used device (second-hand). A share of a system's
price is not a basis of its own: ``devices_in_system`` > 1 says so (see :func:`sizer.hardware.prices.costing_rank`)."""
Confidence = Literal["low", "medium", "high"]


class Price(Figure):
    """A purchase price with the date it was quoted (YYYY, YYYY-MM or YYYY-MM-DD), its basis and how
    far it can be trusted. ``devices_in_system`` > 1: the price of a whole system (an HGX/DGX node of
    8, a GB200 NVL72 rack of 72), whose ``system`` names it; per device it is value / devices. A
    ``system`` with one device is the machine the chip is only sold in (a Mac, a mini PC): the price
    is that machine's.

    ``scope`` says what the price buys: ``gpu``, the device alone (a card, a module, a baseboard of
    accelerators without a host), to which an owner adds a server, network and power; or
    ``system-share``, the device's share of a whole machine (a DGX node, a rack, a Mac) whose host is
    in the price. Left out, it is ``system-share`` where a ``system`` is named and ``gpu`` otherwise;
    a system without its host (Gaudi 3's eight-accelerator baseboard) says ``scope: gpu``."""

    value: str
    date: str
    source: str
    basis: PurchaseBasis = "list"
    confidence: Confidence = "medium"
    devices_in_system: int = Field(1, ge=1, le=100_000)
    system: str | None = None
    scope: PriceScope | None = None
    verified: bool = False  # read in the cited source (true), or recalled / carried from a secondary quote
    note: str | None = None

    @field_validator("date")
    @classmethod
    def _date_format(cls, date: str) -> str:
        return _checked_date(date)

    @model_validator(mode="after")
    def _scope_of_the_system(self) -> "Price":
        if self.scope is None:  # a named machine holds its host; a device alone does not
            object.__setattr__(self, "scope", "system-share" if self.system or self.devices_in_system > 1 else "gpu")
        return self


Fabric = Literal["InfiniBand", "RoCE", "Ethernet"]
OfferTerm = Literal["on-demand", "spot", "reserved", "reserved 1 year", "reserved 3 years"]
_TERM_SPELLINGS = {"ondemand": "on-demand", "spot": "spot", "reserved": "reserved",
                   "reserved1year": "reserved 1 year", "reserved1y": "reserved 1 year", "1year": "reserved 1 year",
                   "1y": "reserved 1 year", "reserved3years": "reserved 3 years", "reserved3year": "reserved 3 years",
                   "reserved3y": "reserved 3 years", "3years": "reserved 3 years", "3y": "reserved 3 years",
                   # committed use, as CoreWeave and Google name a reservation ('discounts ... for committed usage')
                   "committed": "reserved", "commitment": "reserved", "committed1year": "reserved 1 year",
                   "committed1y": "reserved 1 year", "committed3years": "reserved 3 years", "committed3y": "reserved 3 years"}


def offer_term_spelling(value: object) -> object:
    """A request's offer term as people spell it (``reserved-1y``, ``Reserved 1 Year``, ``on demand``) as the
    catalog's own name; anything else is passed on for the request to refuse naming the field.

    Parameters
    ----------
    value : object
        The term as given.

    Returns
    -------
    object
        The catalog's spelling (``"reserved 1 year"``), or ``value`` unchanged where it names no term.

    >>> offer_term_spelling("reserved-1y"), offer_term_spelling("On Demand"), offer_term_spelling("weekly")
    ('reserved 1 year', 'on-demand', 'weekly')
    """
    if not isinstance(value, str) or len(value) > 40:
        return value
    return _TERM_SPELLINGS.get(re.sub(r"[^a-z0-9]", "", value.lower()), value)


# A request's term: any spelling of offer_term_spelling's, checked as an OfferTerm (the catalog's files stay strict).
OfferTermIn = Annotated[OfferTerm, BeforeValidator(offer_term_spelling)]


class OfferNetwork(Figure):
    """The network between the nodes of a cluster offer, as its seller states it: fabric and bandwidth
    per device in one direction (``value``, e.g. "400 Gbit/s"), and the most devices one job may span."""

    value: str
    fabric: Fabric
    name: str
    max_devices: int | None = Field(None, ge=2)  # None: the source states no limit
    source: str
    note: str | None = None


class CloudPrice(Figure):
    """An offer: an hourly price per device, e.g. "1.006 USD/hour", with what it buys.

    ``devices_in_instance`` is what one rental holds (one GPU, an 8-GPU node, a 4-GPU slice of a
    rack); ``network`` is given where the offer is a multi-node cluster whose seller states the
    network between nodes; a job larger than one instance can only run on such an offer.
    ``term``: on-demand (the default), spot (interruptible) or reserved (with the length where known).
    """

    value: str
    date: str
    source: str
    provider: str
    instance: str
    devices_in_instance: int = Field(ge=1)
    scope: Literal["full instance share", "device only"] = "full instance share"
    term: OfferTerm = "on-demand"
    network: OfferNetwork | None = None
    note: str | None = None

    @field_validator("date")
    @classmethod
    def _date_format(cls, date: str) -> str:
        return _checked_date(date)


class Interconnect(Strict):
    """The link used for gradient all-reduce between devices of this kind."""

    name: str
    bandwidth: Sourced  # per device, one direction
    domain: Sourced | None = None  # devices that share this scale-up fabric (GB200 NVL72: 72); None: a node of 8
    # NVLink bridges joining a few PCIe cards (H100 NVL: pairs): per device, one direction, among bridge_devices
    bridge: Sourced | None = None
    bridge_devices: int = Field(2, ge=2, le=8)


class CpuVector(Strict):
    """What the CPU peak formula needs (spec §3.1): FMA units per core and FP32 lanes per FMA."""

    isa: str
    fp32_lanes_per_fma: int = Field(ge=1, le=64)
    fma_units_per_core: int = Field(ge=1, le=8)
    source: str
    verified: bool = False
    note: str | None = None


class CpuMatrixTiles(Strict):
    """A CPU's matrix tile unit beside its vector units (Intel AMX): dense multiply-accumulate work per
    core per clock cycle, which gives its bf16 (and int8) matrix peak; FP32 stays on the vector units."""

    isa: str
    bf16_flop_per_cycle: int = Field(ge=1, le=65536)  # per core [FLOP/cycle]
    int8_ops_per_cycle: int | None = Field(default=None, ge=1, le=131072)  # per core [OP/cycle]
    source: str
    verified: bool = False
    note: str | None = None


class MeasuredEfficiency(Strict):
    """Fractions of this device's datasheet rates that training kernels reached in measured runs
    (a CPU's ``sizer validate`` report, fitted by ``sizer calibrate``), used in place of the defaults
    of its kind. ``source`` names the report: a figure measured on one machine, never a guess."""

    fp32_matrix: float = Field(gt=0, le=1)  # of the FP32 SIMD peak, in matrix layers [1]
    vector: float = Field(gt=0, le=1)  # of the FP32 SIMD peak, in every other layer [1]
    memory: float = Field(gt=0, le=1)  # of the memory bandwidth [1]
    step_overhead_s: float = Field(ge=0, le=1)  # per optimizer step, outside the kernels [s]
    source: str
    verified: bool = False
    note: str | None = None


class Device(Strict):
    """One GPU, CPU or accelerator, every figure with its source."""

    _key: str | None = PrivateAttr(default=None)

    @property
    def key(self) -> str:
        """The device's whole content as text, worked out once: what caches key a device by
        (:mod:`sizer.memo`), never its identity."""
        if self._key is None:
            self._key = self.model_dump_json()
        return self._key

    @property
    def runtime_kind(self) -> DeviceKind:
        """The kind a runtime tells apart: :attr:`DeviceKind.APPLE` for Apple silicon's GPU (a ``gpu`` of vendor
        Apple), else the catalog's kind; an Apple chip's CPU entry stays a CPU (no Metal, no MLX GPU)."""
        if self.vendor.strip().lower() == "apple" and self.kind is not DeviceKind.CPU:
            return DeviceKind.APPLE
        return self.kind

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> "Device":
        """A copy; one with other figures works its key out anew.

        pydantic copies private attributes, and a kept key would let every keyed cache answer for the original.

        Parameters
        ----------
        update : Mapping, optional
            Fields to replace in the copy (not validated, as in pydantic).
        deep : bool, default False
            Whether to copy nested values too.

        Returns
        -------
        Device
            The copy.
        """
        copy = super().model_copy(update=update, deep=deep)
        if update:
            copy._key = None
        return copy

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,63}$")
    name: str
    aliases: list[str] = []
    vendor: str
    kind: CatalogKindName
    architecture: str
    launch_year: int = Field(ge=1990, le=2100)
    fp32_cores: Sourced | None = None
    cores: Sourced | None = None
    threads: Sourced | None = None
    vector: CpuVector | None = None
    matrix_tiles: CpuMatrixTiles | None = None  # CPUs with AMX: their bf16/int8 matrix peak
    base_clock: Sourced | None = None
    boost_clock: Sourced | None = None
    # CPUs: the clock every core holds under vector load; the FP32 peak uses it where given (not the single-core boost)
    all_core_clock: Sourced | None = None
    peaks: dict[Precision, Sourced] = {}
    # The dense int8 tensor rate: not a training precision, only W8A8 serving's matrix products (SmoothQuant)
    int8_peak: Sourced | None = None
    fp32_peak_discrepancy: str | None = None
    unsupported_precisions: list[Precision] = []
    memory: Sourced
    memory_type: str
    unified_memory: bool = False  # memory shared by CPU and GPU (Apple silicon): ``memory`` is the whole pool
    memory_bandwidth: Sourced
    tdp: Sourced | None = None  # None where the vendor publishes no power figure (recent TPUs, Apple GPUs)
    interconnect: Interconnect | None = None
    efficiency: MeasuredEfficiency | None = None  # measured on this device; else its kind's defaults
    purchase_price: Price | None = None  # per device, new; the one costs use
    purchase_prices: list[Price] = []  # every other purchase quote (systems, street, estimates), for the record
    cloud_prices: list[CloudPrice] = []
    notes: str | None = None

    @field_validator("peaks", "unsupported_precisions")
    @classmethod
    def _stored_precisions_only(cls, named: dict[Precision, Sourced] | list[Precision]
                                ) -> dict[Precision, Sourced] | list[Precision]:
        if Precision.MIXED in named:
            raise ValueError("'mixed' is resolved per device, not a stored precision: name fp32, bf16, fp16 ...")
        return named

    @field_validator("aliases", mode="before")
    @classmethod
    def _aliases_as_text(cls, aliases: object) -> object:
        # YAML reads an alias such as 4090 as a number; a name is text either way.
        if isinstance(aliases, list):
            return [str(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a for a in aliases]
        return aliases

    @model_validator(mode="after")
    def _kind_fields(self) -> "Device":
        if self.kind is DeviceKind.CPU:
            missing = [f for f in ("cores", "vector", "boost_clock") if getattr(self, f) is None]
            if missing:
                raise ValueError(f"a cpu needs {', '.join(missing)}")
        elif self.matrix_tiles is not None:
            raise ValueError("matrix_tiles are a CPU's (AMX); a gpu or accelerator states its peaks")
        elif not self.peaks and self.fp32_cores is None:
            raise ValueError("a gpu or accelerator needs peaks or fp32_cores with boost_clock")
        if self.fp32_cores is not None and self.boost_clock is None:
            raise ValueError("fp32_cores needs boost_clock for R = 2NC")
        clash = set(self.peaks) & set(self.unsupported_precisions)
        if clash:
            raise ValueError(f"precisions both listed and unsupported: {sorted(clash)}")
        return self

    def sourced_fields(self) -> dict[str, Sourced]:
        """Every sourced figure of the entry by its dotted path, to check sources and units.

        Returns
        -------
        dict of str to Sourced
            The figures that are present, keyed e.g. ``"boost_clock"``, ``"peaks.bf16"``, ``"interconnect.bandwidth"``.
        """
        fields: dict[str, Sourced] = {}
        for name in ("fp32_cores", "cores", "threads", "base_clock", "boost_clock", "all_core_clock", "memory",
                     "memory_bandwidth", "tdp", "int8_peak"):
            value = getattr(self, name)
            if value is not None:
                fields[name] = value
        for precision, peak in self.peaks.items():
            fields[f"peaks.{precision}"] = peak
        if self.interconnect is not None:
            fields["interconnect.bandwidth"] = self.interconnect.bandwidth
            if self.interconnect.bridge is not None:
                fields["interconnect.bridge"] = self.interconnect.bridge
        return fields


class CatalogFile(Strict):
    sources: dict[str, str]
    devices: list[Device]


class Link(Strict):
    """A link between devices: inside a node (NVLink, PCIe, xGMI, ICI) or between nodes
    (InfiniBand, RoCE, a cloud network). Bandwidth per device in one direction."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,63}$")
    name: str
    scope: Literal["intra-node", "inter-node"]
    bandwidth: Sourced
    bandwidth_both: Sourced | None = None
    latency: Sourced | None = None
    confidence: Literal["low", "medium", "high"]
    notes: str | None = None


class System(Strict):
    """A node type a large run is built from: which device, how many per node, the link inside
    the node and the network between nodes (ids of :class:`Link`)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,63}$")
    name: str
    aliases: list[str] = []
    device: str
    devices_per_node: Sourced
    intra_node: str
    inter_node: str | None = None
    host_memory: Sourced | None = None  # RAM of the node's host(s), for ZeRO-Offload
    notes: str | None = None


class NetworksFile(Strict):
    """``catalog/networks/*.yaml``: sources, links and systems."""

    sources: dict[str, str]
    links: list[Link]
    systems: list[System] = []

    @model_validator(mode="after")
    def _references(self) -> "NetworksFile":
        links = {link.id: link for link in self.links}
        if len(links) != len(self.links):
            raise ValueError("duplicate link id")
        for link in self.links:
            for name in ("bandwidth", "bandwidth_both", "latency"):
                sourced = getattr(link, name)
                if sourced is not None and sourced.source not in self.sources:
                    raise ValueError(f"link {link.id}: {name} source {sourced.source!r} is not in 'sources'")
        for system in self.systems:
            if system.devices_per_node.source not in self.sources:
                raise ValueError(f"system {system.id}: source {system.devices_per_node.source!r} is not in 'sources'")
            for where, link_id, scope in (("intra_node", system.intra_node, "intra-node"),
                                          ("inter_node", system.inter_node, "inter-node")):
                if link_id is not None and (link_id not in links or links[link_id].scope != scope):
                    raise ValueError(f"system {system.id}: {where} {link_id!r} is not an {scope} link of the file")
        return self


# Expected dimension (and default unit for bare numbers) of each sourced field.
FIELD_DIMENSIONS: dict[str, tuple[str, str | None]] = {
    "fp32_cores": ("", ""),
    "cores": ("", ""),
    "threads": ("", ""),
    "base_clock": ("[frequency]", None),
    "boost_clock": ("[frequency]", None),
    "all_core_clock": ("[frequency]", None),
    "memory": ("[information]", None),
    "memory_bandwidth": ("[information] / [time]", None),
    "tdp": ("[power]", None),
    "int8_peak": ("[computation] / [time]", None),
    "interconnect.bandwidth": ("[information] / [time]", None),
    "interconnect.bridge": ("[information] / [time]", None),
}
PEAK_DIMENSION = ("[computation] / [time]", None)


def _figures(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any], str | None, str | None]]:
    """(path, figure, dimension, default unit) of every sourced figure, price and citation of a raw
    entry; dimension None: a citation only (the CPU vector description)."""
    figures: list[tuple[str, object, str | None, str | None]] = []
    for name, (dimension, default) in FIELD_DIMENSIONS.items():
        if "." not in name:
            figures.append((name, raw.get(name), dimension, default))
    peaks = raw.get("peaks")
    if isinstance(peaks, dict):
        figures += [(f"peaks.{precision}", peak, *PEAK_DIMENSION) for precision, peak in peaks.items()]
    link = raw.get("interconnect")
    if isinstance(link, dict):
        figures += [(f"interconnect.{name}", link.get(name), *FIELD_DIMENSIONS[f"interconnect.{name}"])
                    for name in ("bandwidth", "bridge")]
    figures.append(("purchase_price", raw.get("purchase_price"), "[currency]", None))
    prices = raw.get("cloud_prices")
    if isinstance(prices, list):
        figures += [(f"cloud_prices[{i}]", price, "[currency] / [time]", None) for i, price in enumerate(prices)]
    quotes = raw.get("purchase_prices")
    if isinstance(quotes, list):
        figures += [(f"purchase_prices[{i}]", quote, "[currency]", None) for i, quote in enumerate(quotes)]
    if isinstance(prices, list):
        figures += [(f"cloud_prices[{i}].network", price.get("network"), "[information] / [time]", None)
                    for i, price in enumerate(prices) if isinstance(price, dict)]
    figures.append(("vector", raw.get("vector"), None, None))
    figures.append(("efficiency", raw.get("efficiency"), None, None))
    return [(path, figure, dimension, default) for path, figure, dimension, default in figures
            if isinstance(figure, dict)]


def figure_problems(raw: dict[str, Any], sources: dict[str, str]) -> list[str]:
    """Every figure of a raw catalog entry with the wrong unit, and every source key the file lacks.

    Checked on the raw entry (before the schema), so that they are reported together with its other problems.

    Parameters
    ----------
    raw : dict
        One device entry (or a price file's entry) as read from YAML.
    sources : dict of str to str
        The file's ``sources``: short key -> citation.

    Returns
    -------
    list of str
        One line per problem, each naming the field; empty for a sound entry.
    """
    problems = []
    for path, figure, dimension, default in _figures(raw):
        value = figure.get("value")
        if dimension is not None and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            try:
                parse_quantity(path, value, dimension, default_unit=default)
            except InputError as error:
                problems.append(f"field {error.message}")
        source = figure.get("source")
        if isinstance(source, str) and source not in sources:
            problems.append(f"field {path}: source {source!r} is not in the file's 'sources'")
    return problems


def read_figures(device: Device) -> None:
    """Parse every sourced figure and price of a device into SI units once (:meth:`Figure.si`), and work out its key.

    So that no later use parses text or writes the entry out; called as the catalog is loaded, before it
    is kept in the disk cache.

    Parameters
    ----------
    device : Device
        A checked catalog entry; its private caches are filled in place.
    """
    for path, sourced in device.sourced_fields().items():
        dimension, default = PEAK_DIMENSION if path.startswith("peaks.") else FIELD_DIMENSIONS[path]
        sourced.si(path, dimension, default)
    if device.purchase_price is not None:
        device.purchase_price.si("purchase_price", "[currency]")
    for quote in device.purchase_prices:
        quote.si("purchase_prices", "[currency]")
    for price in device.cloud_prices:
        price.si("cloud_prices", "[currency]/[time]")
        if price.network is not None:
            price.network.si("cloud_prices.network", "[information]/[time]")
    device.key  # noqa: B018 - worked out now, so that it is kept with the catalog too (caches key devices by it)


__all__ = ["CatalogFile", "CloudPrice", "Confidence", "CpuVector", "DeviceKind", "Fabric", "OfferNetwork", "OfferTerm", "PurchaseBasis", "Device", "InputError", "Interconnect", "Link", "MeasuredEfficiency",
           "NetworksFile", "System",
           "PRECISIONS", "Precision", "Price", "SI_UNITS", "Sourced", "figure_problems", "read_figures"]


def cited(node: object, sources: dict[str, str]) -> object:
    """``node`` (a catalog or price file's raw data) with every ``source`` key replaced by its full citation.

    Parameters
    ----------
    node : object
        Raw YAML data: mappings, lists and scalars.
    sources : dict of str to str
        The file's ``sources``: short key -> citation.

    Returns
    -------
    object
        A copy of ``node``; a ``source`` that is not a key of ``sources`` raises KeyError.
    """
    if isinstance(node, dict):
        return {k: (sources[v] if k == "source" and isinstance(v, str) else cited(v, sources)) for k, v in node.items()}
    if isinstance(node, list):
        return [cited(item, sources) for item in node]
    return node
