"""Loading the YAML hardware catalog and finding a device by the name a user types.

The built-in catalog lies in the ``catalog`` package (``catalog/*.yaml``). A user file given
with ``--catalog FILE`` or the ``SIZER_CATALOG`` environment variable adds devices or
overrides built-in ones by id; it is validated the same way, and a broken user file never
changes the built-in catalog.

>>> load_catalog().find("Tesla P40").name
'NVIDIA Tesla P40'
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from sizer.datafile import load_yaml
from sizer.diskcache import cached, file_stamp, key_of
from sizer.errors import CatalogError, DeviceLookupError, InputError
from sizer.hardware.prices import price_files, unmatched_prices, with_prices
from sizer.hardware.schema import CatalogFile, Device, cited, figure_problems, read_figures
from sizer.hardware.variants import Chosen, Variant, families, resolve_variant
from sizer.memo import registered_cache

CATALOG_ENV = "SIZER_CATALOG"
MAX_CATALOG_BYTES = 2_000_000


def builtin_catalog_dir() -> Path:
    """The built-in catalog's folder.

    ``catalog/`` beside ``sizer/`` in a checkout, ``sizer/catalog/`` where the wheel installed it
    (pyproject.toml keeps top-level names out of site-packages). Found by place, not imported: a
    top-level ``catalog`` on the path may be another distribution's.

    Returns
    -------
    Path
        The folder holding the device files, ``prices/``, ``networks/`` and ``templates/``.
    """
    core = Path(__file__).resolve().parent.parent
    installed = core / "catalog"
    return installed if installed.is_dir() else core.parent / "catalog"


@dataclass(frozen=True)
class Catalog:
    """Devices by id, with the file each came from and the citations of their sources."""

    devices: dict[str, Device]
    origin: dict[str, str] = field(default_factory=dict)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)  # file -> key -> citation

    def __iter__(self) -> Iterator[Device]:
        return iter(self.devices.values())

    @functools.cached_property
    def key(self) -> str:
        """A fingerprint of every device and citation, worked out once.

        What caches key a catalog by (:mod:`sizer.memo`), never its identity. Equal catalogs have equal keys.

        Returns
        -------
        str
            A SHA-256 hex digest of the devices' content keys, their files and the sources.
        """
        digest = hashlib.sha256()
        for device_id in sorted(self.devices):
            digest.update(f"{self.devices[device_id].key}\0{self.origin.get(device_id, '')}\0".encode())
        digest.update(json.dumps(self.sources, sort_keys=True, default=str).encode())
        return digest.hexdigest()

    def __len__(self) -> int:
        return len(self.devices)

    def citation(self, device_id: str, key: str) -> str:
        """The full citation of a source key as the file of a device defines it.

        Parameters
        ----------
        device_id : str
            Catalog id of the device whose file defines the key, e.g. ``"h100-sxm5-80gb"``.
        key : str
            Short source key used in that file, e.g. ``"nvidia-p40-datasheet-omegaco"``.

        Returns
        -------
        str
            The citation text; ``key`` itself where the file does not define it.
        """
        return self.sources.get(self.origin.get(device_id, ""), {}).get(key, key)

    def find(self, name: str, field_name: str = "device") -> Device:
        """The one device a user means by ``name`` (see :func:`match_devices`).

        Parameters
        ----------
        name : str
            A device id, name or alias as a user typed it (case-insensitive, at most 100 characters).
        field_name : str, default ``"device"``
            The input field the name came from, named in an error.

        Returns
        -------
        Device
            The single matching catalog entry.

        Raises
        ------
        InputError
            An empty, overlong or non-text name.
        DeviceLookupError
            No match (with close matches), several matches, or a match only by a word too short to choose by.
        """
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            raise InputError(field_name, name, "a device id or name, such as 'Tesla P40' or 'h100-sxm5-80gb'")
        chosen = self.variant(name, field_name)
        if chosen is not None:
            return chosen.device
        matches = match_devices(self, name)
        if len(matches) == 1 and _another_variant(self, name, matches[0]):
            names = [f"{matches[0].name} ({matches[0].id})"]
            raise DeviceLookupError(f"{field_name}: no device is {name!r}; the nearest, {names[0]}, is another card "
                                    f"({' '.join(_another_variant(self, name, matches[0])).upper()} in its name): give its "
                                    "name if that is yours, or add yours with --catalog", names, field_name)
        if len(matches) == 1 and not _too_short(self, name, matches[0]):
            return matches[0]
        if len(matches) == 1:
            names = [f"{matches[0].name} ({matches[0].id})"]
            raise DeviceLookupError(f"{field_name}: {name!r} is too short to choose a device by; did you mean "
                                    f"{names[0]}? Give its id or fuller name", names, field_name)
        if not matches:
            close = candidates(self, name)
            hint = f"; close matches: {', '.join(close)}" if close else "; see `sizer catalog list`"
            raise DeviceLookupError(f"{field_name}: no device matches {name!r}{hint}", close, field_name)
        names = [f"{d.name} ({d.id})" for d in matches]
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        raise DeviceLookupError(
            f"{field_name}: {name!r} is ambiguous; it matches {shown}; give more of the name or an id", names, field_name)

    def variant(self, name: str, field_name: str = "device") -> Chosen | None:
        """The configuration a chip name means (:mod:`sizer.hardware.variants`), with what was assumed.

        A device's id or full name means that entry, never another configuration of its chip.

        Parameters
        ----------
        name : str
            A device name as a user typed it, e.g. ``"M1 Max"`` or ``"M1 Ultra 64 core"``.
        field_name : str, default ``"device"``
            The input field the name came from, named in an error.

        Returns
        -------
        Chosen or None
            The entry and the statement of what the name left open (GPU cores, memory); None where the
            name is an id or full name, or no chip of several configurations.

        Raises
        ------
        DeviceLookupError
            A chip named with a GPU-core count or memory that none of its entries has.
        """
        wanted = name.strip().lower() if isinstance(name, str) else ""
        index = _name_index(self)
        if not wanted or wanted in self.devices or wanted in index.full_names:
            return None
        return resolve_variant(index.families, name, field_name)

    def assumed(self, name: str | None, field_name: str = "device") -> str | None:
        """What was assumed of a configuration the name left open ("M1 Max": its GPU cores, its memory).

        Parameters
        ----------
        name : str or None
            A device name as a user typed it.
        field_name : str, default ``"device"``
            The input field the name came from.

        Returns
        -------
        str or None
            The statement an answer carries (:func:`sizer.hardware.variants.resolve_variant`); None where
            the name chose one entry by itself, or is no device.
        """
        if not isinstance(name, str):
            return None
        try:
            chosen = self.variant(name, field_name)
        except DeviceLookupError:
            return None
        return chosen.statement if chosen is not None else None


def candidates(catalog: "Catalog", name: str, limit: int = 5) -> list[str]:
    """Devices a name that matched none may have meant, best first.

    Those sharing the most of its meaningful words come first ("Radeon 7900" offers Radeons, never
    the Ryzen 7 2700 for its "7"), then spelling neighbours.

    Parameters
    ----------
    catalog : Catalog
        The catalog to search.
    name : str
        The name that matched no device.
    limit : int, default 5
        Most names to offer [1].

    Returns
    -------
    list of str
        Device names, at most ``limit``; empty where nothing is close.
    """
    query = [q for q in _tokens(name) if _meaningful(q)]
    labels = _name_index(catalog).labels
    wanted = name.strip().lower()
    if not query:  # a bare "7" offers the devices with a word "7" (the Ryzen 7 2700), never chooses them
        return [d.name for d in _devices_with_all_tokens(catalog, _tokens(name))][:limit]
    scored = []
    for device in catalog:
        # offered, not chosen: a word may be the start of a longer one here ("gb" offers the GB200)
        shared = max((sum(any(w.startswith(q) for w in words) for q in query) for words in labels[device.id]), default=0)
        if shared:
            likeness = max(difflib.SequenceMatcher(None, wanted, label.lower()).ratio()
                           for label in (device.name, *device.aliases, device.id.replace("-", " ")))
            scored.append((-shared, -likeness, device.name))
    found = [device_name for *_, device_name in sorted(scored)][:limit]
    if found:
        return found
    named = {label: device.name for device in catalog
             for label in (device.id, device.name.lower(), *(a.lower() for a in device.aliases))}
    for label in difflib.get_close_matches(wanted, list(named), n=2 * limit, cutoff=0.6):
        if named[label] not in found and len(found) < limit:
            found.append(named[label])
    return found


def _too_short(catalog: "Catalog", name: str, device: Device) -> bool:
    """True where a name matched one device only by words of two characters or fewer ("M4"): such a
    name is a guess at a family, not a choice, unless it is the device's id, name or alias."""
    wanted = name.strip().lower()
    exact_names = _name_index(catalog).exact
    if wanted == device.id or wanted in exact_names[device.id]:
        return False
    return all(len(q) <= 2 for q in _tokens(wanted) if _meaningful(q))


# Words that make another card of the same number: an RTX 4070 Ti is not an RTX 4070, an RX 7900 XT not an RX 7900
VARIANT_WORDS = frozenset({"ti", "super", "xt", "xtx"})


def _another_variant(catalog: "Catalog", name: str, device: Device) -> list[str]:
    """The variant words (:data:`VARIANT_WORDS`) in ``device``'s name that ``name`` leaves out, where ``name`` is
    not one of its labels: "RTX 4070" matches only the RTX 4070 Ti by its words, but names another card."""
    wanted = name.strip().lower()
    if wanted == device.id or wanted in _name_index(catalog).exact[device.id]:
        return []
    asked = set(_tokens(wanted))
    return [word for word in _tokens(device.name) if word in VARIANT_WORDS and word not in asked]


def _tokens(text: str) -> list[str]:
    text = re.sub(r"(\d)\s+(gb|tb)\b", r"\1\2", text.lower())
    return [t for t in re.split(r"[^a-z0-9+]+", text) if t]


def _token_matches(query: str, word: str) -> bool:
    # "sxm" matches "sxm4" (a generation number), but "a10" never matches "a100" or "a10g", and a
    # two-letter word never stands for a longer name ("gb" is not "gb200").
    if query == word:
        return True
    return len(query) >= 3 and query[-1].isalpha() and word.startswith(query) and word[len(query):].isdigit()


def _meaningful(token: str) -> bool:
    """A word that can pick a device: two or more characters with a letter ("t4", "sxm", "ryzen"),
    or a number of three or more digits ("4090", "2700", and "8480+" as Intel writes a model). A lone
    digit or letter ("7", "a") cannot."""
    number = token.rstrip("+")
    if number.isdigit():
        return len(number) >= 3
    return len(token) >= 2 and any(character.isalpha() for character in token)


def _devices_with_all_tokens(catalog: Catalog, query: list[str]) -> list[Device]:
    """Devices one of whose labels has a word for every word of the query."""
    if not query:
        return []
    labels = _name_index(catalog).labels
    return [device for device in catalog
            if any(all(any(_token_matches(q, w) for w in words) for q in query) for words in labels[device.id])]


def match_devices(catalog: Catalog, name: str) -> list[Device]:
    """Devices a name can mean: an exact id, name or alias first, else whole-word matches.

    Matching is case-insensitive and by whole words, so "A10" means the A10 and not the A100
    or A10G, while "H100 SXM" finds the "H100 SXM5 80GB". A name must contain a meaningful
    word (see :func:`_meaningful`): "7" or "{{7*7}}" match nothing, though "Ryzen 7" does.

    Parameters
    ----------
    catalog : Catalog
        The catalog to search.
    name : str
        A device id, name, alias or some of its words.

    Returns
    -------
    list of Device
        Every device the name can mean (one for an exact id, name or alias); empty for none.
    """
    wanted = name.strip().lower()
    if wanted in catalog.devices:
        return [catalog.devices[wanted]]
    return list(_matches(catalog, wanted))


@registered_cache(key=lambda catalog, wanted: (catalog.key, wanted))
def _matches(catalog: Catalog, wanted: str) -> tuple[Device, ...]:
    """The devices a lower-case name means (a service asked the same name again answers from here)."""
    exact_names = _name_index(catalog).exact
    exact = [d for d in catalog if wanted in exact_names[d.id]]
    if exact:
        return tuple(exact)
    query = _tokens(wanted)
    return tuple(_devices_with_all_tokens(catalog, query)) if any(_meaningful(q) for q in query) else ()


@registered_cache(key=lambda catalog: catalog.key)
def _name_index(catalog: Catalog) -> _NameIndex:
    """Per device id: its lower-case name and aliases, and the words of each label; and the chip families
    by GPU-core configuration; computed once per catalog (a lookup used to re-split every label of every
    device: 1.8 ms a request)."""
    exact = {d.id: (d.name.lower(), *(a.lower() for a in d.aliases)) for d in catalog}
    labels = {d.id: [_tokens(label) for label in (d.name, *d.aliases, d.id.replace("-", " "))] for d in catalog}
    return _NameIndex(exact, labels, families(catalog), frozenset(d.name.lower() for d in catalog))


class _NameIndex(NamedTuple):
    exact: dict[str, tuple[str, ...]]  # id -> lower-case name and aliases
    labels: dict[str, list[list[str]]]  # id -> the words of each label
    families: dict[tuple[str, ...], list[Variant]]  # chip words -> its GPU-core and memory configurations
    full_names: frozenset[str]  # every device's lower-case name


def _read_file(path: Path) -> CatalogFile:
    """A catalog file parsed and checked. Every problem of every entry is reported at once (one
    line each, naming the entry and the field), so that a user's file is mended in one round."""
    try:
        data = load_yaml(path, "catalog", MAX_CATALOG_BYTES)
    except InputError as error:
        raise CatalogError(f"catalog file {path}: not {error.expected}", "catalog") from None
    if not isinstance(data, dict):
        raise CatalogError(f"catalog file {path}: expected a mapping with 'sources' and 'devices'", "catalog")
    problems = _problems(data)
    if problems:
        raise CatalogFileErrors(path, problems)
    return _with_citations(CatalogFile.model_validate(data), data)


class CatalogFileErrors(CatalogError):
    """Every problem of one catalog file; ``problems`` holds one line each ("entry 2 (my-gpu), field
    memory: ...")."""

    def __init__(self, path: Path, problems: list[str]):
        if len(problems) == 1:
            message = f"catalog file {path}, {problems[0]}"
        else:
            message = f"catalog file {path}: {len(problems)} problems\n" + "\n".join(f"  {p}" for p in problems)
        super().__init__(message, "catalog")
        self.problems = problems


def _problems(data: dict[str, object]) -> list[str]:
    """Every problem of a catalog file's data: its own keys, each entry's fields and units, and each
    source key that the file's ``sources`` lacks."""
    problems = [f"field {key}: extra field, not allowed (a file has 'sources' and 'devices')"
                for key in data if key not in ("sources", "devices")]
    sources = data.get("sources")
    if not isinstance(sources, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items()):
        problems.append("field sources: a mapping of short keys to full citations")
        sources = {}
    devices = data.get("devices")
    if not isinstance(devices, list):
        return problems + ["field devices: a list of device entries"]
    for index, raw in enumerate(devices):
        if not isinstance(raw, dict):
            problems.append(f"entry {index}: a mapping of a device's fields")
            continue
        entry = f"entry {index} ({raw.get('id', '?')})"
        try:
            Device.model_validate(raw)
        except ValidationError as error:
            problems += [f"{entry}, field {_location(e['loc'])}: {e['msg']}" for e in error.errors()]
        problems += [f"{entry}, {problem}" for problem in figure_problems(raw, sources)]
    return problems


def _location(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "(whole entry)"


def _with_citations(parsed: CatalogFile, data: dict[str, object]) -> CatalogFile:
    """The file's devices with every source key replaced by its full citation."""
    return CatalogFile.model_validate({"sources": parsed.sources, "devices": cited(data["devices"], parsed.sources)})


def _merge(files: list[Path], allow_override: bool, base: Catalog | None = None,
           prices: Sequence[Path] = ()) -> Catalog:
    devices = dict(base.devices) if base else {}
    origin = dict(base.origin) if base else {}
    sources = dict(base.sources) if base else {}
    seen_here: dict[str, str] = {}
    for path in files:
        parsed = _read_file(path)
        sources[str(path)] = parsed.sources
        for index, device in enumerate(parsed.devices):
            place = f"{path} entry {index}"
            if device.id in seen_here:
                raise CatalogError(f"duplicate device id {device.id!r}: {seen_here[device.id]} and {place}", "catalog")
            if device.id in devices and not allow_override:
                raise CatalogError(f"duplicate device id {device.id!r}: {origin[device.id]} and {place}", "catalog")
            seen_here[device.id] = place
            devices[device.id] = device
            origin[device.id] = str(path)
    for path in prices:  # offers and purchase prices of a price document, by device id (sizer.hardware.prices)
        devices = with_prices(devices, path)
    for device_id in seen_here:
        read_figures(devices[device_id])  # SI floats from here on (checked already: figure_problems)
    catalog = Catalog(devices, origin, sources)
    catalog.key  # noqa: B018 - worked out once, and kept with a cached catalog
    return catalog


@registered_cache()
def _builtin() -> Catalog:
    # models.yaml beside the device files holds architectures (sizer.workloads.registry), not devices.
    files = sorted(path for path in builtin_catalog_dir().glob("*.yaml") if path.name != "models.yaml")
    # Parsing and checking ~60 entries is a fifth of a second; the parsed catalog is cached on
    # disk under a key of the files' sizes and times and of the code that checks them.
    import pydantic

    prices = price_files(builtin_catalog_dir())
    code = [Path(__file__), Path(__file__).with_name("schema.py"), Path(__file__).with_name("prices.py"),
            Path(__file__).parent.parent / "units.py"]
    try:
        key = key_of(pydantic.VERSION, [file_stamp(path) for path in (*files, *prices, *code)])
    except OSError:
        return _merge(files, allow_override=False, prices=prices)
    catalog: Catalog = cached("catalog", key, lambda: _keyed(_merge(files, allow_override=False, prices=prices)))
    return catalog


def _keyed(catalog: Catalog) -> Catalog:
    """The catalog with each device's content key worked out (kept with it in the disk cache: a command
    ranking every device does not write each one as JSON again to key its caches)."""
    for device in catalog:
        device.key  # noqa: B018 (computed once, stored on the device)
    return catalog


def catalog_template() -> str:
    """A commented user catalog with one entry to fill in (``catalog/templates/device.yaml``).

    It loads as it stands, so a user can copy it and change the figures.

    Returns
    -------
    str
        The template's YAML text.
    """
    return (builtin_catalog_dir() / "templates" / "device.yaml").read_text(encoding="utf-8")


def load_catalog(user_file: str | os.PathLike[str] | None = None) -> Catalog:
    """The built-in catalog, plus a user file that adds or overrides devices by id.

    Parameters
    ----------
    user_file : str or os.PathLike, optional
        A user catalog file (same schema as the built-in files); defaults to the ``SIZER_CATALOG``
        environment variable, and to none where that is unset.

    Returns
    -------
    Catalog
        The devices with their files and citations; the built-in one (cached) where no user file is given.

    Raises
    ------
    CatalogError
        A user file that does not exist or breaks the schema (every problem listed at once).
    """
    builtin = _builtin()
    user_file = user_file or os.environ.get(CATALOG_ENV) or None
    if not user_file:
        return builtin
    path = Path(user_file)
    if not path.is_file():
        raise CatalogError(f"catalog file {path}: no such file", "catalog")
    return _merge([path], allow_override=True, base=builtin)


def awaiting_prices(devices: dict[str, Device], directory: Path | None = None) -> dict[str, list[str]]:
    """Ids the built-in price files price that no catalog device has yet, with the files that price them.

    Parameters
    ----------
    devices : dict of str to Device
        Catalog devices by id.
    directory : Path, optional
        A catalog folder; the built-in one where not given.

    Returns
    -------
    dict of str to list of str
        id -> names of the price files whose prices wait for that device (empty where every id matches).
    """
    if directory is None:
        directory = builtin_catalog_dir()
    waiting: dict[str, list[str]] = {}
    for path in price_files(directory):
        for device_id in unmatched_prices(devices, path):
            waiting.setdefault(device_id, []).append(path.name)
    return dict(sorted(waiting.items()))
