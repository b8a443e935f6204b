"""catalog/nvidia-older.yaml, nvidia-ada-blackwell-more.yaml, amd-cdna-rdna.yaml and intel-arc-more.yaml: the GPUs issue 37 names
resolve as people write them, without taking names from the devices already there."""
from pathlib import Path

import pytest

from sizer.choices import Precision
from sizer.errors import DeviceLookupError
from sizer.formulas.peaks import stated_peak

NEW_FILES = ("nvidia-older.yaml", "nvidia-ada-blackwell-more.yaml", "amd-cdna-rdna.yaml", "intel-arc-more.yaml")

# (as a user or a measurement file writes it, the catalog id it must mean): the devices issue 37 names, and spellings
# from ../shared/data (serving-tails.csv 'NVIDIA V100S-PCIe-32GB', 'NVIDIA RTX 4090D', 'NVIDIA H20-3e', 'AMD MI100';
# llm-training-benchmarks.csv 'DGX-B300', 'DGX-GB300'; modern-training-runs.csv 'AMD Instinct MI350X')
ISSUE_NAMES = [
    ("MI100", "mi100"), ("AMD MI100", "mi100"), ("Instinct MI100", "mi100"),
    ("H20", "h20-96gb"), ("H20 96GB", "h20-96gb"), ("H20 141GB", "h20-141gb"), ("H20-3e", "h20-141gb"),
    ("NVIDIA H20-3e", "h20-141gb"),
    ("V100S", "tesla-v100s-pcie-32gb"), ("V100S PCIe 32GB", "tesla-v100s-pcie-32gb"),
    ("NVIDIA V100S-PCIe-32GB", "tesla-v100s-pcie-32gb"),
    ("V100 PCIe 32GB", "tesla-v100-pcie-32gb"), ("V100 32GB PCIe", "tesla-v100-pcie-32gb"),
    ("NVIDIA V100-PCIe-32GB", "tesla-v100-pcie-32gb"),
    ("RTX 4090D", "rtx-4090d"), ("RTX 4090 D", "rtx-4090d"), ("4090D", "rtx-4090d"), ("NVIDIA RTX 4090D", "rtx-4090d"),
    ("B300", "b300"), ("DGX-B300", "b300"), ("GB300", "gb300-per-gpu"), ("DGX-GB300", "gb300-per-gpu"),
    ("MI350X", "mi350x"), ("AMD Instinct MI350X", "mi350x"),
    ("TITAN Xp", "titan-xp"), ("Titan Xp", "titan-xp"),
    ("TITAN X (Pascal)", "titan-x-pascal"), ("Titan X Pascal", "titan-x-pascal"),
    ("GTX TITAN X (Maxwell)", "gtx-titan-x-maxwell"), ("GTX Titan X", "gtx-titan-x-maxwell"),
    ("GTX 1080", "gtx-1080"), ("GTX 1070 Ti", "gtx-1070-ti"),
    ("RX Vega 56", "rx-vega-56"), ("RX Vega 64", "rx-vega-64"), ("Vega 64", "rx-vega-64"), ("Radeon VII", "radeon-vii"),
    ("Radeon 780M", "radeon-780m"), ("RX 7800 XT", "rx-7800-xt"), ("RX 5700", "rx-5700"), ("RX 6800", "rx-6800"),
    ("RTX 2070", "rtx-2070"), ("RTX 2060 Max-Q", "rtx-2060-max-q"), ("RTX 4070", "rtx-4070"),
    ("V100 32GB SXM3", "tesla-v100-sxm3-32gb"), ("Intel Arc Pro B60", "arc-pro-b60"),
    # MLPerf system_json and measurement spellings of devices already in the catalog
    ("Intel Gaudi2", "gaudi2"), ("NVIDIA H200-SXM5-141GB", "h200-sxm-141gb"), ("NVIDIA B200-SXM-180GB", "b200"),
    # the CPUs the issue names (catalog/cpus-named.yaml, cpus-measured.yaml, apple-silicon-variants.yaml)
    ("Ryzen 7 3700X", "ryzen-7-3700x"), ("dual Xeon E5-2698 v3", "xeon-e5-2698-v3-x2"),
    ("2x Xeon E5-2680 v3", "xeon-e5-2680-v3-x2"), ("Apple M1 Max CPU", "apple-m1-max-cpu"),
    ("DGX Spark", "dgx-spark-gb10"), ("Spark", "dgx-spark-gb10"),
]

# names that meant a device before these files and must still mean it
KEPT = [("GTX 1080 Ti", "gtx-1080-ti"), ("GTX 1070", "gtx-1070"), ("RTX 4090", "rtx-4090"), ("RTX 4070 Ti", "rtx-4070-ti"),
        ("V100 PCIe", "tesla-v100-pcie-16gb"), ("B200", "b200"), ("GB200", "gb200-per-gpu"), ("MI300X", "mi300x"),
        ("RX 7900 XT", "radeon-rx-7900-xt"), ("RTX 2060", "rtx-2060"), ("H200", "h200-sxm-141gb"),
        # a vendor word with the base card's name matched its new D, Ti, SUPER or Max-Q sibling too: aliases keep it
        ("NVIDIA RTX 4090", "rtx-4090"), ("GeForce RTX 4090", "rtx-4090"), ("GeForce GTX 1070", "gtx-1070"),
        ("NVIDIA RTX 2060", "rtx-2060"), ("GeForce RTX 4070 Ti", "rtx-4070-ti"), ("NVIDIA RTX 3090", "rtx-3090")]


@pytest.mark.parametrize("name, device_id", ISSUE_NAMES + KEPT)
def test_a_name_people_write_means_its_device(catalog, name, device_id):
    assert catalog.find(name).id == device_id


def test_titan_x_alone_names_two_cards_and_lists_both(catalog):
    # NVIDIA sold a Maxwell (2015) and a Pascal (2016) card both called TITAN X
    with pytest.raises(DeviceLookupError, match="ambiguous") as error:
        catalog.find("TITAN X")
    assert {"gtx-titan-x-maxwell", "titan-x-pascal"} <= {c.rsplit("(", 1)[-1].rstrip(")") for c in error.value.candidates}


@pytest.mark.parametrize("file_name", NEW_FILES)
def test_every_device_of_the_new_files_loads_with_a_stated_fp32_peak_and_its_memory(catalog, file_name):
    devices = [d for d in catalog if Path(catalog.origin[d.id]).name == file_name]
    assert devices, file_name
    for device in devices:
        assert device.kind == "gpu"
        peak = stated_peak(device, Precision.FP32)
        assert peak is not None and peak.to("TFLOP/s").magnitude > 1, device.id
        assert device.memory.si("memory", "[information]") >= 6e9, device.id


def test_dual_xeon_e5_v3_without_a_model_lists_both_hosts(catalog):
    # "dual Xeon E5 v3" names no model: the two hosts are listed, neither guessed
    with pytest.raises(DeviceLookupError, match="ambiguous") as error:
        catalog.find("dual Xeon E5 v3")
    assert {"xeon-e5-2680-v3-x2", "xeon-e5-2698-v3-x2"} <= {c.rsplit("(", 1)[-1].rstrip(")") for c in error.value.candidates}


def test_recalled_cpu_figures_are_unverified(catalog):
    # catalog/cpus-named.yaml is recalled from vendor pages throughout: no figure may claim to be read
    for device in catalog:
        if Path(catalog.origin[device.id]).name == "cpus-named.yaml":
            assert device.kind == "cpu"
            assert not any(f.verified for f in device.sourced_fields().values()), device.id


def test_derived_and_recalled_figures_of_the_new_files_are_unverified(catalog):
    # a tensor peak worked out by a rule, or a datasheet figure recalled rather than read, never claims to be read
    for device in catalog:
        if Path(catalog.origin[device.id]).name not in NEW_FILES:
            continue
        for path, figure in device.sourced_fields().items():
            if figure.source.endswith(("-rule", "-recalled")) or "DERIVED" in (figure.note or ""):
                assert not figure.verified, (device.id, path)
