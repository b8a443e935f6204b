"""Links and node types for multi-node estimates: devices per node, the link inside a node and
the network between nodes (``catalog/networks/*.yaml``, from ../shared/data/interconnects.csv).

>>> topology = load_networks().topology("DGX H100")
>>> topology.devices_per_node, topology.intra_node_bandwidth.to("GB/s").magnitude
(8, 450.0)
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pint
from pydantic import ValidationError

from sizer.datafile import load_yaml
from sizer.errors import CatalogError, InputError
from sizer.hardware.catalog import builtin_catalog_dir
from sizer.hardware.schema import Link, NetworksFile, Sourced, System
from sizer.memo import registered_cache
from sizer.units import parse_quantity


@dataclass(frozen=True)
class Topology:
    """What a multi-node estimate needs of a node type; bandwidths per device, one direction."""

    system: str
    device: str  # catalog device id
    devices_per_node: int
    intra_node: str
    intra_node_bandwidth: pint.Quantity[Any]
    inter_node: str | None
    inter_node_bandwidth: pint.Quantity[Any] | None
    inter_node_latency: pint.Quantity[Any] | None
    verified: bool  # every figure used was read in its source
    host_memory: pint.Quantity[Any] | None = None  # RAM of the node's host(s), where the catalog states it
    host_memory_source: str | None = None


_Item = TypeVar("_Item", bound=Link | System)


@dataclass(frozen=True)
class Networks:
    links: dict[str, Link]
    systems: dict[str, System]
    sources: dict[str, str]

    def link(self, name: str) -> Link:
        """A link by id or name (case-insensitive).

        Parameters
        ----------
        name : str
            A link's id or name, e.g. ``"nvlink4"``.

        Returns
        -------
        Link
            The catalog's link: scope, bandwidth per device and direction, latency and sources.

        Raises
        ------
        InputError
            No such link; the message lists close matches.
        """
        return self._find(name, self.links, "link")

    def system(self, name: str) -> System:
        """A node type by id, name or alias (case-insensitive).

        Parameters
        ----------
        name : str
            A node type's id, name or alias, e.g. ``"DGX H100"``.

        Returns
        -------
        System
            The catalog's node type: device, devices per node and the links inside and between nodes.

        Raises
        ------
        InputError
            No such node type; the message lists close matches.
        """
        return self._find(name, self.systems, "system")

    def topology(self, name: str) -> Topology:
        """Devices per node, bandwidth inside and between nodes, and latency of a node type.

        Parameters
        ----------
        name : str
            A node type's id, name or alias (see :meth:`system`).

        Returns
        -------
        Topology
            The node type's figures as quantities: intra- and inter-node bandwidth per device and direction
            [B/s], inter-node latency [s], host memory [B] where stated, and whether every figure was verified.
        """
        system = self.system(name)
        intra = self.links[system.intra_node]
        inter = self.links[system.inter_node] if system.inter_node else None
        used = [system.devices_per_node, intra.bandwidth, *((inter.bandwidth, inter.latency) if inter else ())]
        return Topology(
            system=system.name, device=system.device,
            devices_per_node=int(_value(system.devices_per_node, "devices_per_node", "").magnitude),
            intra_node=intra.name, intra_node_bandwidth=_value(intra.bandwidth, "bandwidth", "[information]/[time]"),
            inter_node=inter.name if inter else None,
            inter_node_bandwidth=_value(inter.bandwidth, "bandwidth", "[information]/[time]") if inter else None,
            inter_node_latency=_value(inter.latency, "latency", "[time]") if inter and inter.latency else None,
            verified=all(s.verified for s in used if s is not None),
            host_memory=_value(system.host_memory, "host_memory", "[information]") if system.host_memory else None,
            host_memory_source=self._source(system.host_memory) if system.host_memory else None)

    def _source(self, sourced: Sourced) -> str:
        """The text of a figure's source key (keys are per file; the first file that has it)."""
        text = next((v for k, v in self.sources.items() if k.split(":", 1)[1] == sourced.source), sourced.source)
        return text + ("" if sourced.verified else " (not verified)")

    def _find(self, name: str, table: dict[str, _Item], what: str) -> _Item:
        wanted = name.strip().lower() if isinstance(name, str) else ""
        labels: dict[str, str] = {}
        for key, entry in table.items():
            names: tuple[str, ...] = (key, entry.name, *getattr(entry, "aliases", ()))
            for label in names:
                labels[label.lower()] = key
        if wanted in labels:
            return table[labels[wanted]]
        close = difflib.get_close_matches(wanted, list(labels), n=5, cutoff=0.5)
        raise InputError(what, name, f"a {what} of the catalog" + (f", such as {', '.join(close)}" if close else
                                                                   f": {', '.join(sorted(table))}"))


def _value(sourced: Sourced, field: str, dimension: str) -> pint.Quantity[Any]:
    return parse_quantity(field, sourced.value, dimension, default_unit="" if dimension == "" else None)


def networks_dir() -> Path:
    """The folder of the built-in link and node-type files.

    Returns
    -------
    Path
        ``networks/`` in the built-in catalog folder (:func:`~sizer.hardware.catalog.builtin_catalog_dir`).
    """
    return builtin_catalog_dir() / "networks"


@registered_cache()
def load_networks(directory: str | None = None) -> Networks:
    """Every link and node type of ``catalog/networks/*.yaml`` (or of ``directory``).

    Parameters
    ----------
    directory : str, optional
        A folder of networks files; the built-in one (:func:`networks_dir`) where None.

    Returns
    -------
    Networks
        Links and node types by id, and the citations keyed ``file:key``.

    Raises
    ------
    CatalogError
        A file that breaks the schema, or an id given twice.
    """
    links: dict[str, Link] = {}
    systems: dict[str, System] = {}
    sources: dict[str, str] = {}
    for path in sorted(Path(directory or networks_dir()).glob("*.yaml")):
        try:
            parsed = NetworksFile.model_validate(load_yaml(path, "catalog"))
        except ValidationError as error:
            raise CatalogError(f"networks file {path}: {error}", "catalog") from None
        for item_id in (*(link.id for link in parsed.links), *(system.id for system in parsed.systems)):
            if item_id in links or item_id in systems:
                raise CatalogError(f"networks file {path}: duplicate id {item_id!r}", "catalog")
        links.update({link.id: link for link in parsed.links})
        systems.update({system.id: system for system in parsed.systems})
        sources.update({f"{path.name}:{key}": text for key, text in parsed.sources.items()})
    return Networks(links, systems, sources)
