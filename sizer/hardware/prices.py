"""Price files: offers and purchase prices added to the catalog's devices by id.

``catalog/prices/*.yaml`` holds what a price document says about devices the catalog already
has (each file named after the document it comes from): ``sources`` (short key -> citation) and
``devices`` (id -> ``cloud_prices``, ``purchase_prices`` and ``purchase_price``). Prices live apart
from the device files so that one document's prices are added, checked and replaced together; the
schema is the device entry's (:class:`sizer.hardware.schema.CloudPrice`,
:class:`~sizer.hardware.schema.Price`).

``awaiting`` names ids of devices the catalog does not have yet (other work adds them): their prices
are kept and added once the device is there; any other unknown id is an error (a typo).
``unassigned`` keeps rows whose document does not say which catalog variant they price (a P100 whose
form is not stated), with the reason: read and checked, added to no device.

Where a device has several purchase quotes, the one costs use (``purchase_price``) is chosen by
:func:`costing_rank`; the others stay in ``purchase_prices``.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from sizer.datafile import load_yaml
from sizer.errors import CatalogError, InputError
from sizer.hardware.schema import CloudPrice, Device, Price, Strict, cited, figure_problems

MAX_PRICE_FILE_BYTES = 1_000_000


class DevicePrices(Strict):
    purchase_price: Price | None = None
    purchase_prices: list[Price] = []
    cloud_prices: list[CloudPrice] = []


class UnassignedPrices(DevicePrices):
    """Prices of hardware the document names without saying which catalog device it is."""

    hardware: str  # as the document names it
    reason: str  # why no catalog id is given


class PriceFile(Strict):
    sources: dict[str, str]
    devices: dict[str, DevicePrices]
    awaiting: list[str] = []  # ids of devices not in the catalog yet; their prices wait for them
    unassigned: list[UnassignedPrices] = []


_NEW_ALONE = ("list", "street")
_RANKS = {"price-history median": 1, "analyst estimate": 2, "second-hand": 3}
_CONFIDENCE = {"high": 0, "medium": 1, "low": 2}


def costing_rank(price: Price) -> tuple[int, bool, tuple[int, ...], int]:
    """How far a purchase quote is from the one costs should use: smaller is preferred.

    The rule (docs/prices.md): first a list or street price of a new device alone (or of the one-device
    machine it is only sold in, such as a Mac), then a price-history median, an analyst's estimate, a
    second-hand price, and last a share of a system of several devices; within one rank a quote of
    medium or high confidence before a low one, then the newest date (a year alone counts as before any
    month of it), then the higher confidence. Equal quotes keep their order (the device file's first,
    then price files by name).

    Parameters
    ----------
    price : Price
        A purchase quote.

    Returns
    -------
    tuple
        (rank, low confidence, negated date parts, confidence rank): sort ascending, take the first.

    Examples
    --------
    >>> old = Price(value="1000 USD", date="2020", source="s", basis="list")
    >>> new = Price(value="900 USD", date="2023-10", source="s", basis="street")
    >>> min([old, new], key=costing_rank).date
    '2023-10'
    """
    rank = 4 if price.devices_in_system > 1 else 0 if price.basis in _NEW_ALONE else _RANKS[price.basis]
    date = tuple(-int(part) for part in price.date.split("-")) + (1,)  # '2025' after '2025-06' once negated
    return rank, price.confidence == "low", date, _CONFIDENCE[price.confidence]


def with_costing_price(quotes: list[Price]) -> tuple[Price | None, list[Price]]:
    """The quote costs use (:func:`costing_rank`) and every other quote in its order.

    Parameters
    ----------
    quotes : list of Price
        A device's purchase quotes, its own first.

    Returns
    -------
    tuple of (Price or None, list of Price)
        The chosen quote (None where there is none) and the others.
    """
    if not quotes:
        return None, []
    chosen = min(range(len(quotes)), key=lambda i: costing_rank(quotes[i]))
    return quotes[chosen], [q for i, q in enumerate(quotes) if i != chosen]


def price_files(directory: Path) -> list[Path]:
    """The price files of a catalog directory, in name order.

    Parameters
    ----------
    directory : Path
        A catalog folder; its files are in ``prices/*.yaml``.

    Returns
    -------
    list of Path
        The price files, sorted by name (empty where there is no ``prices/`` folder).
    """
    return sorted((directory / "prices").glob("*.yaml"))


def read_price_file(path: Path) -> PriceFile:
    """A price file checked, every source key replaced by its citation.

    Every problem of the file (units, unknown source keys, schema) is reported at once.

    Parameters
    ----------
    path : Path
        A price file (``sources`` and ``devices``: id -> prices).

    Returns
    -------
    PriceFile
        The file's prices by device id, with full citations as sources.

    Raises
    ------
    CatalogError
        A file that cannot be read, is not a mapping, or breaks the schema; the message lists each problem.
    """
    try:
        data = load_yaml(path, "catalog", MAX_PRICE_FILE_BYTES)
    except InputError as error:
        raise CatalogError(f"price file {path}: not {error.expected}", "catalog") from None
    if not isinstance(data, dict) or not isinstance(data.get("devices"), dict) or not isinstance(data.get("sources"), dict):
        raise CatalogError(f"price file {path}: expected a mapping with 'sources' and 'devices' (id -> prices)", "catalog")
    problems = []
    for device_id, raw in data["devices"].items():
        if isinstance(raw, dict):
            problems += [f"{device_id}, {p}" for p in figure_problems(raw, data["sources"])]
    for index, raw in enumerate(data.get("unassigned") or []):
        if isinstance(raw, dict):
            problems += [f"unassigned {index}, {p}" for p in figure_problems(raw, data["sources"])]
    try:
        parsed = PriceFile.model_validate(data)
    except ValidationError as error:
        problems += [f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in error.errors()]
    if problems:
        raise CatalogError(f"price file {path}: " + "; ".join(problems), "catalog")

    return PriceFile.model_validate({"sources": parsed.sources, "devices": cited(data["devices"], parsed.sources),
                                     "awaiting": parsed.awaiting,
                                     "unassigned": cited(data.get("unassigned") or [], parsed.sources)})


def unmatched_prices(devices: dict[str, Device], path: Path) -> list[str]:
    """The ids a price file prices that the catalog lacks (each is in its ``awaiting`` list, or the file
    does not load).

    Parameters
    ----------
    devices : dict of str to Device
        Catalog devices by id.
    path : Path
        A price file.

    Returns
    -------
    list of str
        Sorted ids whose prices wait for their device.
    """
    return sorted(set(read_price_file(path).devices) - set(devices))


def with_prices(devices: dict[str, Device], path: Path) -> dict[str, Device]:
    """``devices`` with one price file's offers and quotes added.

    The price costs use is chosen again among the device's own quotes and the file's
    (:func:`with_costing_price`); the rest are kept in ``purchase_prices``. An id in the file's
    ``awaiting`` list that the catalog lacks is passed over (:func:`unmatched_prices` lists them).

    Parameters
    ----------
    devices : dict of str to Device
        Catalog devices by id.
    path : Path
        A price file (:func:`read_price_file`).

    Returns
    -------
    dict of str to Device
        A new mapping with the priced devices replaced; ``devices`` is unchanged.

    Raises
    ------
    CatalogError
        The file is broken, or names an id the catalog lacks that its ``awaiting`` list does not name.
    """
    parsed = read_price_file(path)
    unknown = sorted(set(parsed.devices) - set(devices) - set(parsed.awaiting))
    if unknown:
        raise CatalogError(f"price file {path}: no device with id {', '.join(map(repr, unknown))} in the catalog "
                           "(an id of a device still to come belongs in the file's 'awaiting' list)", "catalog")
    merged = dict(devices)
    for device_id, prices in parsed.devices.items():
        if device_id not in devices:
            continue  # awaiting its device
        device = devices[device_id]
        quotes = [*filter(None, [device.purchase_price]), *device.purchase_prices,
                  *filter(None, [prices.purchase_price]), *prices.purchase_prices]
        chosen, others = with_costing_price(quotes)
        merged[device_id] = Device.model_validate({
            **device.model_dump(), "purchase_price": chosen, "purchase_prices": others,
            "cloud_prices": [*device.cloud_prices, *prices.cloud_prices]})
    return merged
