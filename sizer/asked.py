"""A question on its catalog: a request with every device it names found, once, where the facade joins the two.

A request is validated without its catalog (a user's catalog file comes separately: ``--catalog``,
``SIZER_CATALOG``, the service's catalog), so its device fields stay names (``device``, ``devices``,
``host_cpu``, ``have``, ``measured_on``, ``reference``'s device). :func:`on_catalog` finds each of them in
the catalog once, refusing an unknown name with the catalog's close matches, and the core below the facade
takes the entries (:class:`Asked`), never the names: no module outside this one and the catalog calls
``Catalog.find`` on a request's text (``tests/sizer/test_asked.py``).

>>> from sizer.hardware.catalog import load_catalog
>>> from sizer.schemas.time_and_memory import TimeRequest
>>> asked = on_catalog(TimeRequest(model="llama-2-7b", tokens=2e9, device="H100 SXM", have=["8x A100 80GB SXM"]),
...                    load_catalog())
>>> asked.device.id, [(n, d.id) for n, d in asked.have]
('h100-sxm5-80gb', [(8, 'a100-80gb-sxm4')])
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from sizer.errors import DeviceLookupError, InputError, SizerError, require_device
from sizer.hardware.catalog import Catalog
from sizer.hardware.schema import Device

Request = TypeVar("Request", bound=BaseModel, covariant=True)  # an Asked of a TimeRequest is an Asked of a union
Other = TypeVar("Other", bound=BaseModel)
Given = TypeVar("Given", bound=BaseModel)
Entry = TypeVar("Entry")

MAX_HAVE = 8  # hardware sets in one question: a workstation, a lab cluster, a cloud budget ...
MAX_COUNT = 1_000_000
_HAVE = re.compile(r"^\s*(?:([0-9]{1,7})\s*[x×*]\s*)?(\S.*?)\s*$", re.IGNORECASE)
_MEASURED_ON = re.compile(r"^\s*([0-9]{1,5})\s*[x×*]\s*(\S.*)$")


@dataclasses.dataclass(frozen=True)
class Asked(Generic[Request]):
    """A request and the catalog entries of the devices it names (None or empty where it names none).

    Attributes
    ----------
    request : pydantic model
        The question as validated (its device fields still the names the user gave).
    catalog : Catalog
        The catalog the names were found in (prices, achieved factors and rankings read it too).
    device : Device or None
        ``device`` (with ``devices``: the first of them).
    devices : tuple of Device or None
        ``devices``, unequal cards in one machine, in the given order.
    have : tuple of (int, Device)
        ``have``, each hardware set's count [1] and device.
    host_cpu_found, measured_on_found, reference_found : entry, SizerError or None
        ``host_cpu``, the device measured on (``measured_on``, or "... on DEVICE") and ``reference``'s device, or
        the refusal of the name: these are read only where the answer uses them (layers offloaded, a measurement
        rescaled, a reference mode), so an unknown name is refused there, after the checks that came first
        before (read them as :attr:`host_cpu`, :attr:`measured_on`, :attr:`reference`).
    assumed : str or None
        What a chip name without its configuration was taken to mean ("M1 Max": its smallest).
    """

    request: Request
    catalog: Catalog
    device: Device | None = None
    devices: tuple[Device, ...] | None = None
    have: tuple[tuple[int, Device], ...] = ()
    host_cpu_found: Device | SizerError | None = None
    measured_on_found: tuple[int, Device] | SizerError | None = None
    reference_found: Device | SizerError | None = None
    assumed: str | None = None

    @property
    def host_cpu(self) -> Device | None:
        """``host_cpu``'s entry, the CPU that runs offloaded layers (None: not given), or its refusal."""
        return _entry(self.host_cpu_found)

    @property
    def measured_on(self) -> tuple[int, Device] | None:
        """The count [1] and entry of the device a measurement was taken on (None: not given), or its refusal."""
        return _entry(self.measured_on_found)

    @property
    def reference(self) -> Device | None:
        """The entry of ``reference``'s device (None: no reference), or the refusal of the text."""
        return _entry(self.reference_found)

    @property
    def the_device(self) -> Device:
        """The device the question is asked on, or the error that says to give one (:func:`require_device`)."""
        if self.device is None:  # no device named (on_catalog finds every one named): the refusal that says to give one
            require_device(self.request)
            raise SizerError("device: give a device (--device, e.g. 'H100 SXM') or the hardware you have "
                             "(--have '8x A100 80GB SXM')", "device")
        return self.device

    def host(self, default: str) -> Device:
        """The CPU running offloaded layers: ``host_cpu`` where given, else the catalog's ``default`` CPU.

        Parameters
        ----------
        default : str
            The catalog id of the default host (:data:`sizer.passes.layer_offload.DEFAULT_HOST`), not request text.

        Returns
        -------
        Device
            The host's catalog entry.
        """
        given = self.host_cpu
        if given is not None:
            return given
        try:
            return self.catalog.find(default, "host_cpu")
        except DeviceLookupError as error:  # a user's catalog without the default host
            raise InputError("host_cpu", None, "a CPU of the catalog (sizer catalog list)") from error

    def again(self, request: Other, **entries: Any) -> Asked[Other]:
        """The same question rebuilt (another count, a length set's mean, a suggestion's change), its entries kept
        and those in ``entries`` replaced by entries already found (a hardware set's device, the device measured on).

        Parameters
        ----------
        request : pydantic model
            The rebuilt request; a device it names must be the entry given in ``entries`` (or the one kept).
        **entries
            Fields of :class:`Asked` to replace (``device=``, ``devices=None``, ``measured_on_found=None`` ...).

        Returns
        -------
        Asked
            The rebuilt question on the same catalog.
        """
        return dataclasses.replace(self, request=request, **entries)  # type: ignore[arg-type,return-value]


def on_catalog(request: Given, catalog: Catalog) -> Asked[Given]:
    """The request with every device it names found in ``catalog``: called once per question, by the facade.

    Parameters
    ----------
    request : pydantic model
        A validated request (any question's; a field it lacks counts as not given).
    catalog : Catalog
        Where the names are found.

    Returns
    -------
    Asked
        The request and its entries.

    Raises
    ------
    InputError
        Naming the field: a device or hardware set the catalog does not have
        (:class:`~sizer.errors.DeviceLookupError`, with the close matches), or text not of the field's form. A host
        CPU, device measured on or reference device is found here too, its refusal kept for where the answer reads
        it (:attr:`Asked.host_cpu` ...), so that every error is the one, and comes where, it did before.
    """
    names = getattr(request, "devices", None)
    devices = tuple(catalog.find(name, "devices") for name in names) if names is not None else None
    device_name = getattr(request, "device", None)
    if devices:  # unequal cards: the first is the request's device (a device beside them is refused by serving)
        device: Device | None = devices[0]
    else:
        device = catalog.find(device_name) if device_name is not None else None
    measured = getattr(request, "measured", None)
    on = getattr(request, "measured_on", None) or getattr(measured, "on", None)
    return Asked(request=request, catalog=catalog, device=device, devices=devices,
                 have=have_sets(getattr(request, "have", None), catalog),
                 host_cpu_found=_refusal_kept(_host, getattr(request, "host_cpu", None), catalog),
                 measured_on_found=_refusal_kept(_measured_on, on, catalog),
                 reference_found=_refusal_kept(reference_device, getattr(request, "reference", None), catalog),
                 assumed=catalog.assumed(device_name) if device_name is not None else None)


def _entry(found: Entry | SizerError | None) -> Entry | None:
    if isinstance(found, SizerError):
        raise found
    return found


def _refusal_kept(find: Callable[[str, Catalog], Entry | None], text: str | None,
                  catalog: Catalog) -> Entry | SizerError | None:
    """The entry ``text`` names, or the refusal, kept for where the answer reads it; None where not given."""
    if text is None:
        return None
    try:
        return find(text, catalog)
    except SizerError as error:
        return error


def _host(name: str, catalog: Catalog) -> Device:
    try:
        return catalog.find(name, "host_cpu")
    except DeviceLookupError as error:
        raise InputError("host_cpu", name, "a CPU of the catalog (sizer catalog list)") from error


def _measured_on(text: str, catalog: Catalog) -> tuple[int, Device]:
    """'RTX 4090', '8x H100 SXM', '8 x H100 SXM' -> (count, the catalog entry)."""
    found = _MEASURED_ON.match(text)
    name, count = (found.group(2), int(found.group(1))) if found else (text, 1)
    if count < 1:
        raise InputError("measured_on", text, "a device, or a count and a device ('8x H100 SXM')")
    try:
        return count, catalog.find(name, "measured_on")
    except SizerError as error:
        raise InputError("measured_on", text, f"a catalog device ({error.message})") from error


def reference_device(text: str | None, catalog: Catalog) -> Device | None:
    """The device of a reference measurement ``'DEVICE=THROUGHPUT/s'`` (its throughput is the engine's to read).

    Parameters
    ----------
    text : str or None
        For example ``'V100 SXM2 16GB=833/s'`` (at most 200 characters); None: no reference.
    catalog : Catalog
        Where the device is found.

    Returns
    -------
    Device or None
        The catalog entry; None without a reference.

    Raises
    ------
    InputError
        ``reference`` not of the form, or a device the catalog does not have.
    """
    if text is None:
        return None
    if not isinstance(text, str) or "=" not in text or len(text) > 200:
        raise InputError("reference", text, "DEVICE=THROUGHPUT/s, e.g. 'V100 SXM2 16GB=833/s'")
    name, _, _ = text.rpartition("=")
    return catalog.find(name.strip(), "reference")


def have_sets(values: list[str] | tuple[str, ...] | str | None, catalog: Catalog,
              field: str = "have") -> tuple[tuple[int, Device], ...]:
    """The hardware sets named by ``values`` ("8x A100 80GB SXM", "2 × RTX 4090", "T4" for one), each its count
    and catalog entry, or InputError naming the field and the entry at fault.

    Parameters
    ----------
    values : list of str, tuple of str, str or None
        1 to :data:`MAX_HAVE` entries ``"COUNT x DEVICE"``; the count [1] (1 to :data:`MAX_COUNT`) may be
        left out for one device; the device is any name the catalog finds.
    catalog : Catalog
        The devices the names are found in.
    field : str, default "have"
        The request field the values came from, named in an error (``have[1]`` for the second entry).

    Returns
    -------
    tuple of (int, Device)
        One per entry, in the given order; empty where ``values`` is None.

    Raises
    ------
    InputError
        Naming the field and the entry: too many or no entries, an entry not of the form, a count out of
        range, or a device the catalog does not have.
    """
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    if not values or len(values) > MAX_HAVE:
        raise InputError(field, values, f"1 to {MAX_HAVE} entries such as '8x A100 80GB SXM'")
    sets = []
    for i, text in enumerate(values):
        where = f"{field}[{i}]" if len(values) > 1 else field
        match = _HAVE.match(text) if isinstance(text, str) and len(text) <= 120 else None
        if match is None:
            raise InputError(where, text, "'COUNT x DEVICE', such as '8x A100 80GB SXM' or '1x RTX 4090'")
        count = int(match.group(1) or 1)
        if not 1 <= count <= MAX_COUNT:
            raise InputError(where, text, f"a device count from 1 to {MAX_COUNT:,}")
        sets.append((count, catalog.find(match.group(2), where)))
    return tuple(sets)
