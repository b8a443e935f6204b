"""Price files: offers and purchase prices added to the catalog's devices by id.

``catalog/prices/*.yaml`` holds what a price document says about devices the catalog already
has (each file named after the document it comes from): ``sources`` (short key -> citation) and
``devices`` (id -> ``cloud_prices``, ``purchase_prices`` and, where the device has none, the
``purchase_price`` costs use). Prices live apart from the device files so that one document's
prices are added, checked and replaced together; the schema is the device entry's
(:class:`sizer.hardware.schema.CloudPrice`, :class:`~sizer.hardware.schema.Price`).
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


class PriceFile(Strict):
    sources: dict[str, str]
    devices: dict[str, DevicePrices]


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
    try:
        parsed = PriceFile.model_validate(data)
    except ValidationError as error:
        problems += [f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in error.errors()]
    if problems:
        raise CatalogError(f"price file {path}: " + "; ".join(problems), "catalog")

    return PriceFile.model_validate({"sources": parsed.sources, "devices": cited(data["devices"], parsed.sources)})


def with_prices(devices: dict[str, Device], path: Path) -> dict[str, Device]:
    """``devices`` with one price file's offers and quotes added.

    A device's own purchase price is kept; the file's stands in where it has none, and is added to
    ``purchase_prices`` otherwise.

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
        The file is broken, or names an id the catalog lacks.
    """
    parsed = read_price_file(path)
    unknown = sorted(set(parsed.devices) - set(devices))
    if unknown:
        raise CatalogError(f"price file {path}: no device with id {', '.join(map(repr, unknown))} in the catalog", "catalog")
    merged = dict(devices)
    for device_id, prices in parsed.devices.items():
        device = devices[device_id]
        extra = [prices.purchase_price] if prices.purchase_price is not None and device.purchase_price is not None else []
        merged[device_id] = Device.model_validate({
            **device.model_dump(), "purchase_price": (device.purchase_price or prices.purchase_price),
            "purchase_prices": [*device.purchase_prices, *extra, *prices.purchase_prices],
            "cloud_prices": [*device.cloud_prices, *prices.cloud_prices]})
    return merged
