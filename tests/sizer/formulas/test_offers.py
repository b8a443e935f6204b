"""sizer/formulas/tco.py: a job is priced only from offers that can run it (instance size, the network
a cluster offer states between nodes, its term), and a system's price is split over its devices."""
import pytest

from sizer.formulas.tco import cheapest_cloud_price, hourly_price, network_between_nodes, offer_runs
from sizer.hardware.schema import CloudPrice, OfferNetwork, Price
from sizer.hardware.server_share import purchase_per_device

NDR = 50e9  # 400 Gb/s per device, one direction [B/s]: the time model's data-centre network (engine constants)


def _offer(devices: int, network: str | None = None, max_devices: int | None = None, term: str = "on-demand"):
    net = None if network is None else OfferNetwork(value=network, fabric="InfiniBand", name="IB", source="s",
                                                    max_devices=max_devices)
    return CloudPrice(value="3 USD/hour", date="2026-09-20", source="s", provider="P", instance="i",
                      devices_in_instance=devices, term=term, network=net)


def test_an_offer_runs_a_job_inside_one_instance_only_up_to_its_size():
    assert offer_runs(_offer(8), 8, NDR)
    assert offer_runs(_offer(8), 1, NDR)
    assert not offer_runs(_offer(1), 2, NDR)  # two single-GPU rentals are not a 2-GPU node
    assert not offer_runs(_offer(8), 16, NDR)  # 8-GPU nodes whose network nobody states


def test_a_cluster_offer_runs_across_nodes_where_its_network_matches_the_time_model():
    assert offer_runs(_offer(8, "400 Gbit/s"), 512, NDR)
    assert not offer_runs(_offer(8, "50 Gbit/s"), 16, NDR)  # p4d: 400 Gb/s for 8 GPUs is 50 Gb/s each
    assert not offer_runs(_offer(8, "400 Gbit/s", max_devices=512), 1024, NDR)  # beyond the seller's limit


def test_the_network_needed_is_the_engines(catalog):
    bandwidth, name = network_between_nodes(catalog.find("h100-sxm5-80gb"))
    assert bandwidth == pytest.approx(NDR) and "400 Gb/s" in name


def test_64_h100_are_priced_at_a_cluster_rate_not_a_marketplace_gpu(catalog):
    """The issue's example: 64-512 H100s were priced at a single Vast.ai GPU (1.80 USD/h). Multi-node H100
    offers in the data run 3.2-6.9 USD/GPU-hour (../shared/data/cluster-and-purchase-prices.csv), so the
    contract's floor is 2.5."""
    device = catalog.find("h100-sxm5-80gb")
    one = cheapest_cloud_price(device, count=1)
    many = cheapest_cloud_price(device, count=64)
    assert one.devices_in_instance == 1
    assert many.network is not None and many.term == "on-demand"
    assert many.si("cloud_prices", "[currency]/[time]") >= 2.5
    price = hourly_price(device, pricing="rent", count=64)
    assert price.basis == "cloud" and price.date == many.date and price.kind == "on-demand"
    assert "between nodes" in price.label and many.date in price.label


def test_mi300x_has_no_offer_for_a_512_device_job(catalog):
    """MI300X's 1.50 USD/h marketplace price is for one GPU: it must not price 512 of them."""
    device = catalog.find("mi300x")
    assert cheapest_cloud_price(device, count=1) is not None
    assert cheapest_cloud_price(device, count=512) is None
    price = hourly_price(device, pricing="rent", count=512)
    assert price.hourly is None and "runs 512 devices" in price.source
    assert hourly_price(device, pricing="any", count=512).basis == "amortised purchase"


def test_spot_and_reserved_offers_count_only_when_asked(catalog):
    device = catalog.find("h100-sxm5-80gb")
    assert cheapest_cloud_price(device, count=8).term == "on-demand"
    assert cheapest_cloud_price(device, count=8, terms=("spot",)).term == "spot"
    reserved = cheapest_cloud_price(device, count=64, terms=("reserved",))  # AWS Capacity Blocks, EFA 3200 Gb/s
    assert reserved.term == "reserved" and reserved.network is not None


def test_a_system_price_is_split_over_its_devices(catalog):
    # DGX B200: 515,000 USD for 8 GPUs (vengineer.hatenablog.com, 2025-03-16) -> 64,375 USD each
    assert purchase_per_device(Price(value="515000 USD", date="2025-03-16", source="s", devices_in_system=8)) == 64375
    gaudi = catalog.find("gaudi3").purchase_price  # Intel's 125,000 USD kit of eight (y-ic.de, 2024)
    assert gaudi.devices_in_system == 8 and purchase_per_device(gaudi) == pytest.approx(15625)
    price = hourly_price(catalog.find("gaudi3"), pricing="buy")
    assert price.kind == "list" and price.date == "2024" and "one of 8" in price.label
