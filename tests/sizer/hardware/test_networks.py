"""sizer/hardware/networks.py: links and node types read from catalog/networks/*.yaml.

tests/sizer/hardware/test_catalog.py checks every interconnects.csv row and the DGX H100 topology;
here: lookups, what a topology says when a figure is missing or unverified, and the loader's refusals.
"""
import shutil

import pytest

from sizer.errors import CatalogError, InputError
from sizer.hardware.networks import load_networks, networks_dir


@pytest.fixture(scope="module")
def networks():
    return load_networks()


def test_a_link_is_found_by_id_or_name_in_any_case(networks):
    by_id = networks.link("nvlink4")
    assert networks.link(by_id.name.upper()) is by_id
    assert networks.link("  NVLINK4 ") is by_id


def test_an_unknown_link_names_the_field_and_close_matches(networks):
    with pytest.raises(InputError, match="link") as error:
        networks.link("nvlink9")
    assert "nvlink" in error.value.expected


def test_a_hopeless_name_lists_every_system(networks):
    # nothing close: the message lists the catalog's systems so that the user can pick one
    with pytest.raises(InputError) as error:
        networks.system("zzzzzzzzzzzz")
    assert all(key in error.value.expected for key in networks.systems)


def test_every_system_names_a_catalog_device(networks, catalog):
    for system in networks.systems.values():
        assert system.device in catalog.devices, f"{system.id}: device {system.device} not in the catalog"


def test_every_link_carries_both_directions_at_least_one(networks):
    # interconnects.csv: bandwidth_both is the two directions together, never less than one direction
    for link in networks.links.values():
        if link.bandwidth_both is not None:
            one = link.bandwidth.quantity("bandwidth", "[information]/[time]")
            both = link.bandwidth_both.quantity("bandwidth_both", "[information]/[time]")
            assert both >= one, link.id


def test_nvlink4_carries_twice_its_one_way_bandwidth(networks):
    # interconnects.csv, NVLink 4.0: 18 links x 25 GB/s = 450 GB/s per direction, 900 both (ml-engineering)
    link = networks.link("nvlink4")
    assert link.bandwidth.quantity("b", "[information]/[time]").to("GB/s").magnitude == pytest.approx(450)
    assert link.bandwidth_both.quantity("b", "[information]/[time]").to("GB/s").magnitude == pytest.approx(900)


def test_host_memory_is_reported_with_its_source_and_marked_unverified(networks):
    # AWS p4d.24xlarge: 1,152 GiB instance memory (aws.amazon.com/ec2/instance-types/p4); recalled in the
    # catalog (verified: false), so the topology's source text says "not verified"
    p4d = networks.topology("aws-p4d")
    assert p4d.host_memory.to("GiB").magnitude == pytest.approx(1152)
    assert p4d.host_memory_source.endswith("(not verified)")
    assert "aws.amazon.com" in p4d.host_memory_source


def test_a_topology_is_verified_only_if_every_figure_it_uses_is(networks):
    for key, system in networks.systems.items():
        topology = networks.topology(key)
        used = [system.devices_per_node, networks.links[system.intra_node].bandwidth]
        if system.inter_node:
            inter = networks.links[system.inter_node]
            used += [inter.bandwidth] + ([inter.latency] if inter.latency else [])
        assert topology.verified == all(s.verified for s in used), key


def test_a_system_without_a_network_between_nodes_has_no_inter_node_figures(networks):
    single = [key for key, system in networks.systems.items() if system.inter_node is None]
    assert single, "the catalog has a node type without an inter-node network (a scale-up domain)"
    topology = networks.topology(single[0])
    assert topology.inter_node is None and topology.inter_node_bandwidth is None and topology.inter_node_latency is None


def test_the_same_id_in_two_files_is_refused(tmp_path):
    for name in ("a.yaml", "b.yaml"):
        shutil.copy(networks_dir() / "links.yaml", tmp_path / name)
    with pytest.raises(CatalogError, match="duplicate id"):
        load_networks(str(tmp_path))


def test_an_unknown_field_is_refused_naming_it(tmp_path):
    text = (networks_dir() / "links.yaml").read_text(encoding="utf-8")
    (tmp_path / "links.yaml").write_text(text.replace("confidence:", "confidance: high\n    confidence:", 1), encoding="utf-8")
    with pytest.raises(CatalogError, match="confidance"):
        load_networks(str(tmp_path))
