"""sizer/hardware/nodes.py: the link inside a node and the node layout, from catalog entries."""
import pytest

from sizer.hardware.nodes import (
    DATACENTRE_NETWORK,
    FALLBACK_LINK,
    OFFICE_NETWORK,
    LinkSpeed,
    device_link,
    node_layout,
)


def test_a_device_link_is_the_catalog_interconnect_per_direction(catalog):
    # NVLink 4.0: 18 links x 25 GB/s = 450 GB/s per direction (catalog, from ../shared/data/interconnects.csv)
    link = device_link(catalog.find("h100-sxm5-80gb"))
    assert link.name == "NVLink 4.0"
    assert link.bandwidth == pytest.approx(450e9)
    assert "450 GB/s" in link.source


def test_an_entry_without_an_interconnect_falls_back_to_pcie4_and_says_so(catalog):
    # PCIe 4.0 x16: 16 GT/s x 16 lanes, 128b/130b = 31.5 GB/s per direction (PCI-SIG)
    cpu = catalog.find("epyc-9654")
    assert cpu.interconnect is None
    link = device_link(cpu)
    assert link is FALLBACK_LINK and link.bandwidth == pytest.approx(31.5e9) and "assumed" in link.name


@pytest.mark.parametrize("device, per_node, network", [
    ("h100-sxm5-80gb", 8, DATACENTRE_NETWORK),  # DGX H100: 8 GPUs on NVLink, 8 x 400 Gb/s NICs
    ("gb200-per-gpu", 72, DATACENTRE_NETWORK),  # GB200 NVL72: the catalog's interconnect.domain
    ("rtx-4090", 4, OFFICE_NETWORK),  # PCIe cards: a 4-GPU workstation
    ("tesla-p40", 4, OFFICE_NETWORK),
    ("epyc-9654", 1, OFFICE_NETWORK),  # a CPU is its own node
])
def test_node_layout_by_fabric(catalog, device, per_node, network):
    assert node_layout(catalog.find(device)) == (per_node, network)


def test_the_assumed_networks_are_the_cited_line_rates():
    # 400 Gb/s NDR = 50 GB/s; 100 Gb/s Ethernet = 12.5 GB/s (bits / 8)
    assert DATACENTRE_NETWORK.bandwidth == pytest.approx(400e9 / 8)
    assert OFFICE_NETWORK.bandwidth == pytest.approx(100e9 / 8)
    assert DATACENTRE_NETWORK.latency < OFFICE_NETWORK.latency


def test_a_link_is_frozen():
    link = LinkSpeed("x", 1.0, 1e-6, "test")
    with pytest.raises(AttributeError):
        link.bandwidth = 2.0


def test_an_nvlink_bridge_joins_h100_nvl_pairs_and_nothing_else(catalog):
    # NVIDIA's H100 datasheet: H100 NVL cards are bridged in pairs at 600 GB/s both directions (300 one way);
    # between pairs and to the host, PCIe 5.0 x16 at 63 GB/s per direction
    from sizer.hardware.nodes import bridge_link

    assert bridge_link(catalog.find("H100 NVL")) == (pytest.approx(300e9), 2)
    assert bridge_link(catalog.find("H100 SXM")) == (0.0, 1)  # NVLink switch: its interconnect is the link itself
    assert bridge_link(catalog.find("epyc-9654")) == (0.0, 1)
