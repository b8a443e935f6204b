"""Rack-scale NVLink domains and TPU slices: devices per node from the catalog (sizer.engine.devices,
catalog/networks/links.yaml)."""
from sizer.engine.devices import node_layout
from sizer.hardware.networks import load_networks


def test_gb200_sits_72_to_an_nvlink_domain(catalog):
    # GB200 NVL72 datasheet column: 72 Blackwell GPUs on one NVLink Switch domain
    per_node, _ = node_layout(catalog.find("GB200"))
    assert per_node == 72
    assert node_layout(catalog.find("H100 SXM"))[0] == 8  # DGX/HGX H100: 8 GPUs per NVLink domain


def test_rack_and_pod_systems():
    networks = load_networks()
    nvl72 = networks.topology("GB200 NVL72")
    assert nvl72.devices_per_node == 72
    assert nvl72.intra_node_bandwidth.to("GB/s").magnitude == 900  # NVLink 5: 18 links x 50 GB/s per direction
    assert networks.topology("NVL36").devices_per_node == 36
    pod = networks.topology("TPU v5p pod")
    assert pod.intra_node_bandwidth.to("GB/s").magnitude == 600  # Google: 1200 GBps ICI per chip both ways


def test_expert_parallel_all_to_all_stays_on_nvlink_inside_nvl72(catalog):
    from sizer.facade import TimeRequest, estimate_time

    result = estimate_time(TimeRequest(model="qwen3-30b-a3b", tokens=1e9, device="GB200", count=64, ep=64, zero=1),
                           catalog)
    where = next(a.value for a in result.assumptions if a.name == "expert parallel")
    assert "inside one node" in where and "NVLink" in where
