"""A recommendation's price figures per device and count, kept on disk as plain numbers.

Choosing each device's cheapest cloud offer for every count and rendering its price is ~25 ms of
``sizer recommend``'s start-up over the whole catalog (pint quantities per offer,
``benchmarks/startup.py``); the figures a recommendation scales are floats (USD, kWh per device-hour),
so they are kept in the disk cache (:mod:`sizer.diskcache`, entry kind ``offer-prices``), keyed by
the devices' catalog key, the provider, counts and terms, and every core file's stamp (the cost
formulas and their defaults are code). So is each offer chosen, as the plain fields a ranked row shows
(``sizer.formulas.tco.PriceUsed``'s: its price, label, date and source), which
``sizer.plan.recommend._row_price`` reads for the rows shown instead of rendering them again.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from sizer.diskcache import cached, key_of
from sizer.plan.layout_basis import core_stamps

PriceFloats = dict[str, Any]  # arrays by name: floats, and the offers' fields (dicts in an array of objects)


def kept_price_floats(devices_key: tuple[Hashable, ...], provider: str | None, counts: tuple[int, ...],
                      terms: tuple[str, ...], build: Callable[[], PriceFloats]) -> PriceFloats:
    """``build()``'s price arrays, read from the disk cache where a process left them.

    Parameters
    ----------
    devices_key : tuple
        What names the devices by content: their catalog's key and kinds (never an identity).
    provider : str or None
        The cloud provider asked for, or None for any.
    counts : tuple of int
        The device counts priced [1].
    terms : tuple of str
        The offer terms allowed (on-demand, spot, reserved).
    build : callable
        Works the arrays out (devices x counts for the rent and the offers, per device for the others).

    Returns
    -------
    dict
        ``build()``'s arrays, by name [USD or kWh per device-hour; USD per device for the purchase], and the
        offers' fields.
    """
    try:
        key = key_of(core_stamps(), repr(devices_key), provider, counts, terms)
    except OSError:  # a core file unreadable: no stamp to key by, so nothing is kept
        return build()
    return cached("offer-prices", key, build)
