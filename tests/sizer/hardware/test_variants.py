"""Chips of several GPU-core and memory configurations (sizer/hardware/variants.py) and names as people write them."""

import pytest

from sizer.errors import DeviceLookupError
from sizer.hardware.variants import VariantName, parse_variant_name


@pytest.mark.parametrize("name, parsed", [
    ("M1 Max", VariantName(("m1", "max"), None, None)),
    ("Apple M1 Max 24-core", VariantName(("m1", "max"), 24, None)),
    ("M1 Max (24-core GPU)", VariantName(("m1", "max"), 24, None)),
    ("M1 Ultra 64 core", VariantName(("m1", "ultra"), 64, None)),
    ("M2 Pro 16c", VariantName(("m2", "pro"), 16, None)),
    ("Apple M1 Max (32-core GPU, 32GB)", VariantName(("m1", "max"), 32, 32)),
    # the CPU-core count and the machine around the chip are not the GPU configuration
    ("Apple M2 Max (30-core GPU, 12 CPU cores, 64 GB unified memory)", VariantName(("m2", "max"), 30, 64)),
    ("Mac Studio M2 Ultra, 192 GB", VariantName(("m2", "ultra"), None, 192)),
    ("Apple M4, 8-core GPU (base), 16 GB", VariantName(("m4",), 8, 16)),  # as prices-2026-12.csv writes it
    ("MacBook Pro M3 Max, 128 GB", VariantName(("m3", "max"), None, 128)),
])
def test_a_name_gives_its_chip_gpu_cores_and_memory(name, parsed):
    assert parse_variant_name(name) == parsed


def test_a_cpu_name_is_never_a_gpu_configuration():
    assert parse_variant_name("Apple M1 Max CPU (8P+2E cores, 32GB)") is None
    assert parse_variant_name("Apple M2 Max CPU (ARM_NEON), CPU-only") is None


@pytest.mark.parametrize("name, device_id", [
    # a core count without memory: that variant's smallest memory in the catalog
    ("M1 Max 24-core", "apple-m1-max-24c-32gb-gpu"), ("M1 Max (24-core GPU)", "apple-m1-max-24c-32gb-gpu"),
    ("M2 Pro 16-core", "apple-m2-pro-16c-16gb-gpu"), ("M1 Ultra 64 core", "apple-m1-ultra-64c-64gb-gpu"),
    ("M1 Max 32c", "apple-m1-max-32c-32gb-gpu"), ("M1 7-core", "apple-m1-7c-8gb-gpu"), ("M2 8-core", "apple-m2-8c-8gb-gpu"),
    # a chip alone: its fewest GPU cores, then its smallest memory
    ("M1 Max", "apple-m1-max-24c-32gb-gpu"), ("Apple M1", "apple-m1-7c-8gb-gpu"), ("M2", "apple-m2-8c-8gb-gpu"),
    ("M4 Max", "apple-m4-max-32c-gpu"), ("M3 Ultra", "apple-m3-ultra-60c-96gb-gpu"),
    # the configuration the measurement files name
    ("Apple M1 Max (32-core GPU, 32GB)", "apple-m1-max-32c-32gb-gpu"), ("Apple M3 Max (40-core GPU, 64GB)", "apple-m3-max-40c-64gb-gpu"),
    ("Apple M2 Max (38-core GPU, 12 CPU cores, 32 GB unified memory)", "apple-m2-max-38c-32gb-gpu"),
    ("Apple MacBook Pro M4 Max (40-core GPU), 128 GB", "apple-m4-max-40c-gpu"), ("M4 Max 64GB", "apple-m4-max-40c-64gb-gpu"),
    ("M1 Max 32-core 64 GB", "apple-m1-max-gpu"),
    # an id or an entry's full name is that entry, never another configuration of its chip
    ("apple-m1-max-gpu", "apple-m1-max-gpu"), ("Apple M1 Max (32-core GPU, unified memory)", "apple-m1-max-gpu"),
    # the CPU side of a chip, DGX Spark, the dual-socket Xeon host
    ("Apple M1 Max CPU", "apple-m1-max-cpu"), ("M2 Max CPU", "apple-m2-max-cpu"), ("M2 Ultra CPU", "apple-m2-ultra-cpu"),
    ("Spark", "dgx-spark-gb10"), ("DGX Spark", "dgx-spark-gb10"), ("NVIDIA DGX Spark", "dgx-spark-gb10"),
    ("GB10", "dgx-spark-gb10"), ("2x Intel Xeon E5-2686 v4", "xeon-e5-2686-v4-x2"), ("Xeon E5-2686 v4", "xeon-e5-2686-v4"),
])
def test_names_as_people_write_them_choose_their_entry(catalog, name, device_id):
    assert catalog.find(name).id == device_id


def test_a_chip_named_without_its_cores_says_which_variant_was_assumed(catalog):
    said = catalog.assumed("M1 Max")
    # mtech.news (../shared/data/device-specs-2026-11.csv): the M1 Max has a 24- or 32-core GPU, 32 or 64 GB
    assert "the M1 Max comes with 24 or 32 GPU cores" in said and "24-core variant with 32 GB" in said
    assert "'M1 Max 32-core'" in said and "apple-m1-max-24c-32gb-gpu" in said
    memory_only = catalog.assumed("M1 Max 24-core")
    assert "GPU-core count" not in memory_only and "with 32 or 64 GB" in memory_only and "'M1 Max 24-core 64GB'" in memory_only


@pytest.mark.parametrize("name", ["M1 Max 32-core 64GB", "apple-m1-max-gpu", "Apple M1 Max (32-core GPU, unified memory)",
                                  "RTX 4090", "M4 Max 64GB", "no such device"])
def test_a_name_that_chooses_its_configuration_states_nothing(catalog, name):
    assert catalog.assumed(name) is None


def test_a_core_count_the_chip_lacks_is_refused_with_its_entries(catalog):
    with pytest.raises(DeviceLookupError) as error:
        catalog.find("M1 Max 28-core")
    assert "24 or 32 GPU cores" in str(error.value) and "Apple M1 Max (32-core GPU, unified memory) (apple-m1-max-gpu)" \
        in error.value.candidates


@pytest.mark.parametrize("name", ["Apple", "Max", "M1 Max Ultra"])
def test_names_of_no_one_chip_are_still_refused(catalog, name):
    with pytest.raises(DeviceLookupError):
        catalog.find(name)


def test_every_apple_chip_has_each_gpu_core_variant(catalog):
    # mtech.news and Ars Technica's tables (../shared/data/device-specs-2026-11.csv) list these GPU-core variants
    variants = {"M1": (7, 8), "M1 Pro": (14, 16), "M1 Max": (24, 32), "M1 Ultra": (48, 64), "M2": (8, 10), "M2 Pro": (16, 19),
                "M2 Max": (30, 38), "M2 Ultra": (60, 76), "M3": (8, 10), "M3 Pro": (14, 18), "M3 Max": (30, 40)}
    for chip, cores in variants.items():
        for n in cores:
            device = catalog.find(f"{chip} {n}-core")
            assert device.unified_memory and f"({n}-core GPU)" in device.architecture, (chip, n)


def test_a_digit_and_letter_suffix_is_a_whole_word(catalog):
    # the catalog's own RTX 4090 D and V100S (catalog/nvidia-ada-blackwell-more.yaml, nvidia-older.yaml)
    assert catalog.find("RTX 4090D").id == "rtx-4090d" and catalog.find("GeForce RTX 4090D").id == "rtx-4090d"
    assert catalog.find("4090D").id == "rtx-4090d"
    assert catalog.find("RTX 4090").id == "rtx-4090"  # the 4090 is not the 4090D, nor the other way round
    assert catalog.find("Tesla V100S").id == "tesla-v100s-pcie-32gb" and catalog.find("V100S").id == "tesla-v100s-pcie-32gb"
    assert all(d.id != "tesla-v100s-pcie-32gb" for d in _matching(catalog, "V100 PCIe"))


def _matching(catalog, name):
    from sizer.hardware.catalog import match_devices

    return match_devices(catalog, name)


def test_the_apple_price_rows_join_by_id_and_by_name(catalog):
    """prices-2026-12.csv keys Apple rows by catalog id and names the cheapest Mac's chip, GPU cores and memory: the
    id is an entry, and the name resolves to an entry of the same chip and GPU-core count (its memory configuration)."""
    import csv

    from tests.conftest import SHARED_DATA

    path = SHARED_DATA / "prices-2026-12.csv"
    if not path.exists():
        pytest.skip(f"{path} is not beside this checkout")
    with open(path, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["catalog_id"].startswith("apple-")]
    assert len(rows) >= 20
    for row in rows:
        keyed, named = catalog.devices[row["catalog_id"]], catalog.find(row["hardware"])
        if row["catalog_id"] == "apple-m2-ultra-gpu":
            # the file's own caveat ('does not name a GPU-core count'): the 76-core entry was given the cheapest
            # M2 Ultra's price, the 60-core one's
            assert named.architecture != keyed.architecture
            continue
        assert named.architecture == keyed.architecture, (row["catalog_id"], row["hardware"], named.id)


@pytest.mark.parametrize("name", ["M1 Max ٣٢-core", "M1 Max ٣٢GB", "M1 Max ３２c"])  # issue 43: counts in ASCII digits only
def test_cores_and_memory_are_read_from_ascii_digits_only(name):
    parsed = parse_variant_name(name)
    assert parsed.gpu_cores is None and parsed.memory_gb is None
