"""sizer/hardware/catalog.py and catalog/*.yaml: validation, provenance, lookup, user files."""
import csv
import textwrap
from pathlib import Path

import pytest

from sizer.device_view import describe_device
from sizer.errors import CatalogError, DeviceLookupError
from sizer.formulas.peaks import derived_fp32_peak, stated_peak
from sizer.hardware.catalog import load_catalog, match_devices
from sizer.hardware.schema import PRECISIONS
from tests.conftest import SHARED_DATA as DATA

# Every device the issue and spec §4 name, as a user would type it.
REQUIRED = [
    "Tesla P40", "K80", "Titan V", "Quadro P600", "RTX 3060", "Quadro RTX 8000", "Titan RTX", "RTX 2080 Ti",
    "GTX 1080 Ti", "RTX 3080", "RTX 3090", "RTX 4090", "RTX 5090", "RTX A4000", "RTX A5000", "RTX A6000",
    "RTX 6000 Ada", "A10", "A10G", "A40", "A100 40GB PCIe", "A100 40GB SXM", "A100 80GB PCIe", "A100 80GB SXM",
    "H100 PCIe", "H100 SXM", "H100 NVL", "GH200", "H200", "B200", "L4", "L40", "L40S", "T4", "P100 PCIe", "P100 SXM2",
    "V100 PCIe", "V100 SXM2 16GB", "V100 SXM2 32GB", "MI250X", "MI300X", "TPU v4", "TPU v5e",
    "Ryzen 7 2700", "Xeon Silver 4114", "Xeon Platinum 8180", "EPYC 9654", "Xeon Platinum 8480+",
]


def test_catalog_is_large_enough(catalog):
    kinds = [d.kind for d in catalog]
    assert sum(k in ("gpu", "accelerator") for k in kinds) >= 35
    assert kinds.count("cpu") >= 10


@pytest.mark.parametrize("name", REQUIRED)
def test_required_device_resolves_to_exactly_one(catalog, name):
    assert len(match_devices(catalog, name)) >= 1, name
    catalog.find(name)  # raises when ambiguous


@pytest.mark.parametrize("name, expected_id_part", [
    ("A10", "a10"), ("p40", "p40"), ("Tesla P40", "p40"), ("H100 SXM", "h100-sxm"), ("h200", "h200"), ("L4", "l4"),
])
def test_whole_word_matching(catalog, name, expected_id_part):
    device = catalog.find(name)
    assert expected_id_part in device.id
    if name == "A10":
        assert "a100" not in device.id and "a10g" not in device.id
    if name.lower() == "h200":
        assert "gh200" not in device.id
    if name == "L4":
        assert "l40" not in device.id


def test_ambiguous_and_unknown_names_list_candidates(catalog):
    with pytest.raises(DeviceLookupError) as ambiguous:
        catalog.find("A100")
    assert len(ambiguous.value.candidates) >= 2 and "ambiguous" in str(ambiguous.value)
    with pytest.raises(DeviceLookupError) as unknown:
        catalog.find("Tesla P41")
    assert "no device matches" in str(unknown.value)


def test_every_figure_has_a_source_and_every_price_a_date(catalog):
    for device in catalog:
        for path, sourced in device.sourced_fields().items():
            assert sourced.source.strip(), (device.id, path)
        if device.purchase_price:
            assert device.purchase_price.date and device.purchase_price.source
        for price in device.cloud_prices:
            assert price.date and price.source and price.provider


def test_two_nc_matches_stated_fp32_peak_or_says_why(catalog):
    """Spec §4: where 2NC and the stated FP32 peak differ by more than 5 %, the entry says why."""
    unexplained = []
    for device in catalog:
        derived, stated = derived_fp32_peak(device), stated_peak(device, "fp32")
        if derived is None or stated is None:
            continue
        gap = abs((derived / stated).to("").magnitude - 1)
        if gap > 0.05 and not device.fp32_peak_discrepancy:
            unexplained.append(f"{device.id}: {gap:.1%}")
    assert not unexplained, unexplained


def test_tensor_peaks_are_dense_not_the_sparsity_headline(catalog):
    # H100 SXM's dense BF16 is 989 TFLOPS; 1979 would be the 2:4 sparse figure (NVIDIA H100 datasheet).
    h100 = catalog.find("H100 SXM")
    assert stated_peak(h100, "bf16").to("TFLOPS").magnitude == pytest.approx(989, rel=0.01)
    # RTX 4090: training accumulates in FP32, 165 dense, not 330 (spec §3.1).
    assert stated_peak(catalog.find("RTX 4090"), "fp16").to("TFLOPS").magnitude == pytest.approx(165.2, rel=0.01)


def test_precision_keys_are_known(catalog):
    for device in catalog:
        assert set(device.peaks) <= set(PRECISIONS)


def _write(tmp_path, text, name="user.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


USER_DEVICE = """
sources:
  mine: "my own measurement, 2026-11"
devices:
  - id: {id}
    name: {name}
    vendor: Example
    kind: gpu
    architecture: Test
    launch_year: 2026
    fp32_cores: {{value: 1000, source: mine}}
    boost_clock: {{value: {clock}, source: mine}}
    memory: {{value: 8 GB, source: mine}}
    memory_type: GDDR6
    memory_bandwidth: {{value: 300 GB/s, source: mine}}
    tdp: {{value: 150 W, source: mine}}
"""


def test_user_file_adds_and_overrides(tmp_path):
    path = _write(tmp_path, USER_DEVICE.format(id="my-gpu", name="My GPU 1000", clock="1 GHz")
                  + USER_DEVICE.split("devices:\n")[1].format(id="tesla-p40", name="NVIDIA Tesla P40", clock="1 GHz"))
    merged = load_catalog(path)
    assert merged.find("My GPU 1000").id == "my-gpu"
    assert merged.find("tesla-p40").boost_clock.value == "1 GHz"
    # the built-in catalog is untouched
    assert load_catalog().find("tesla-p40").boost_clock.value != "1 GHz"


def test_user_file_from_environment(tmp_path, monkeypatch):
    path = _write(tmp_path, USER_DEVICE.format(id="env-gpu", name="Env GPU", clock="1 GHz"))
    monkeypatch.setenv("SIZER_CATALOG", str(path))
    assert load_catalog().find("Env GPU").id == "env-gpu"


@pytest.mark.parametrize("mutation, message", [
    (lambda t: t.replace("memory_type: GDDR6", "memory_type: GDDR6\n    colour: red"), "colour"),
    (lambda t: t.replace("300 GB/s", "300 GHz"), "memory_bandwidth"),
    (lambda t: t.replace("{value: 8 GB, source: mine}", "{value: 8 GB, source: nowhere}"), "nowhere"),
    (lambda t: t.replace("kind: gpu", "kind: toaster"), "kind"),
    (lambda t: t.replace("devices:", "devices: [").replace("tdp: {value: 150 W, source: mine}", "tdp: 1"), "not valid YAML"),
    (lambda t: t.replace("id: bad-gpu", "id: Bad GPU!"), "field id"),
])
def test_broken_user_file_names_file_entry_and_field(tmp_path, mutation, message):
    path = _write(tmp_path, mutation(USER_DEVICE.format(id="bad-gpu", name="Bad GPU", clock="1 GHz")))
    with pytest.raises(CatalogError) as error:
        load_catalog(path)
    text = str(error.value)
    assert str(path) in text and message in text
    assert len(load_catalog()) > 40  # the built-in catalog is not damaged


def test_duplicate_ids_in_one_file_name_both_places(tmp_path):
    one = USER_DEVICE.format(id="twin", name="Twin A", clock="1 GHz")
    two = USER_DEVICE.split("devices:\n")[1].format(id="twin", name="Twin B", clock="1 GHz")
    path = _write(tmp_path, one + two)
    with pytest.raises(CatalogError, match=r"duplicate device id 'twin': .*entry 0 and .*entry 1"):
        load_catalog(path)


def test_missing_user_file(tmp_path):
    with pytest.raises(CatalogError, match="no such file"):
        load_catalog(tmp_path / "absent.yaml")


@pytest.mark.parametrize("name", ["7", "{{7*7}}", "${7}", "7 7", "a", "#1", "'; 7 --", "0", "80"])
def test_a_name_without_a_meaningful_word_matches_nothing(catalog, name):
    # issue 12 item 6: "7" and "{{7*7}}" both resolved to "AMD Ryzen 7 2700".
    assert match_devices(catalog, name) == []
    with pytest.raises(DeviceLookupError) as error:
        catalog.find(name)
    assert "no device matches" in str(error.value)


def test_a_bare_number_offers_the_devices_it_appears_in(catalog):
    with pytest.raises(DeviceLookupError) as error:
        catalog.find("7")
    assert "AMD Ryzen 7 2700" in error.value.candidates and "AMD Ryzen 7 2700" in str(error.value)


@pytest.mark.parametrize("name, expected_id_part", [
    ("Ryzen 7 2700", "ryzen-7-2700"), ("2700", "ryzen-7-2700"), ("R7 2700", "ryzen-7-2700"), ("4090", "4090"), ("t4", "t4"),
    ("3700X", "ryzen-7-3700x"),
])
def test_a_meaningful_word_with_a_bare_number_still_matches(catalog, name, expected_id_part):
    assert expected_id_part in catalog.find(name).id

# --- catalog truth -------------------------


def _figures(device):
    """Every sourced figure of a device, the CPU vector description included."""
    figures = dict(device.sourced_fields())
    if device.vector is not None:
        figures["vector"] = device.vector
    return figures


def test_no_figure_cites_a_not_re_read_note_instead_of_a_source(catalog):
    """Issue 12: 132 figures cited 'not re-read in this session' notes; each needs a public source."""
    notes = [(d.id, path) for d in catalog for path, s in _figures(d).items() if "re-read" in s.source]
    notes += [(d.id, "notes") for d in catalog if d.notes and "re-read" in d.notes]
    assert not notes, notes


def test_every_builtin_figure_states_whether_it_was_verified(catalog):
    unstated = [(d.id, path) for d in catalog for path, s in _figures(d).items() if "verified" not in s.model_fields_set]
    assert not unstated, unstated


def test_recalled_and_low_confidence_figures_are_unverified(catalog):
    wrong = [(d.id, path) for d in catalog for path, s in _figures(d).items()
             if s.verified and any(w in f"{s.source} {s.note or ''}" for w in ("recalled", "UNVERIFIED", "LOW CONFIDENCE"))]
    assert not wrong, wrong
    # more-devices.csv marks the A10G tensor peaks and the whole B100 row low confidence
    a10g = catalog.find("A10G")
    assert {"tf32", "fp16", "bf16"} <= set(a10g.peaks)
    assert not any(a10g.peaks[p].verified for p in ("tf32", "fp16", "bf16"))
    assert a10g.peaks["fp32"].verified
    b100 = catalog.find("B100")
    assert not any(s.verified for path, s in b100.sourced_fields().items() if not path.startswith("interconnect"))


def test_rtx_6000_ada_a10g_and_rtx_2060_have_their_missing_precisions(catalog):
    """Issue 12: RTX 6000 Ada was rejected for fp16 and tf32 work, A10G had no tensor peaks, RTX 2060 no fp16."""
    from sizer.formulas.peaks import stated_peak, supported_precisions

    ada = catalog.find("RTX 6000 Ada")
    # more-devices.csv (VladislavDuma table): dense TF32 182, FP16 364 TFLOPS
    assert stated_peak(ada, "tf32").to("TFLOPS").magnitude == pytest.approx(182)
    assert stated_peak(ada, "fp16").to("TFLOPS").magnitude == pytest.approx(364)
    assert {"fp16", "tf32", "bf16", "fp8"} <= set(supported_precisions(ada))
    assert "fp16" in supported_precisions(catalog.find("A10G"))
    # NVIDIA's 52 TFLOPS is the FP16-accumulate rate; training accumulates in FP32 at half that on GeForce
    assert stated_peak(catalog.find("RTX 2060"), "fp16").to("TFLOPS").magnitude == pytest.approx(26)


def _more_devices():
    with open(DATA / "more-devices.csv", newline="") as handle:
        return list(csv.DictReader(handle))


# the name as a user types it, for each row of more-devices.csv
MORE_DEVICE_NAMES = {
    "NVIDIA H800 SXM5 80GB": "H800", "NVIDIA A800 SXM4 80GB": "A800", "NVIDIA H20": "H20", "NVIDIA L20": "L20",
    "NVIDIA RTX 6000 Ada Generation": "RTX 6000 Ada", "NVIDIA A10G (AWS)": "A10G", "NVIDIA GeForce RTX 2060": "RTX 2060",
    "NVIDIA RTX 4000 Ada Generation": "RTX 4000 Ada", "NVIDIA Quadro RTX 4000": "Quadro RTX 4000",
    "Google TPU v3 (per chip)": "TPU v3", "Google TPU v5p (per chip)": "TPU v5p",
    "Google TPU v6e Trillium (per chip)": "TPU v6e", "AMD Instinct MI325X": "MI325X", "AMD Instinct MI355X": "MI355X",
    "Intel Gaudi 2": "Gaudi 2", "Intel Gaudi 3": "Gaudi 3", "NVIDIA B100": "B100",
    "NVIDIA GB200 (per Blackwell GPU)": "GB200", "NVIDIA H200 NVL": "H200 NVL",
    # the rows state the largest configurations (76-core 192 GB, 40-core 128 GB): a bare chip name is the smallest
    "Apple M2 Ultra (GPU)": "M2 Ultra 76-core 192GB", "Apple M3 Max (GPU, 40-core)": "M3 Max 40-core 128GB",
}


@pytest.mark.parametrize("row", _more_devices(), ids=lambda r: r["device"])
def test_every_more_devices_row_is_in_the_catalog_with_its_figures(catalog, row):
    device = catalog.find(MORE_DEVICE_NAMES[row["device"]])
    view = describe_device(device)
    # memory: the csv holds GiB for TPU v3/v5p (its notes say so); vendors round GB/GiB loosely
    assert view.memory.value == pytest.approx(float(row["memory_gb"]), rel=0.08)
    assert view.memory_bandwidth.value == pytest.approx(float(row["memory_bandwidth_gbs"]), rel=0.02)
    for precision in ("fp32", "tf32", "fp16", "bf16", "fp8"):
        column = "fp32_tflops" if precision == "fp32" else f"{precision}_tflops_dense"
        if precision in device.peaks and row[column]:
            if device.id == "rtx-2060" and precision == "fp16":
                continue  # entered at the FP32-accumulate rate, half the csv's marketing figure (see above)
            assert view.peaks[precision].value == pytest.approx(float(row[column]), rel=0.01), precision
    assert device.sourced_fields()["memory"].source.strip()


@pytest.mark.parametrize("name, device_id", [
    ("A100-80GB", "a100-80gb-sxm4"), ("A100 80GB", "a100-80gb-sxm4"), ("H100-80GB", "h100-sxm5-80gb"),
    ("H100", "h100-sxm5-80gb"), ("A100-40GB", "a100-40gb-sxm4"), ("H800", "h800-sxm5-80gb"),
    ("GB200", "gb200-per-gpu"), ("Gaudi3", "gaudi3"), ("H100 PCIe", "h100-pcie-80gb"), ("A100 80GB PCIe", "a100-80gb-pcie"),
])
def test_model_card_names_resolve_to_the_cluster_part(catalog, name, device_id):
    assert catalog.find(name).id == device_id


def test_new_accelerators_carry_their_interconnect(catalog):
    expected = {"H800": "NVLink", "H20": "NVLink", "TPU v5p": "ICI", "TPU v3": "ICI", "MI325X": "Infinity Fabric",
                "Gaudi 2": "RoCE", "Gaudi 3": "RoCE", "B100": "NVLink", "GB200": "NVLink"}
    for name, link in expected.items():
        device = catalog.find(name)
        assert device.interconnect is not None and link in device.interconnect.name, name
    # TPU v5p: Google's 1200 GBps per chip both directions, 600 one way
    assert catalog.find("TPU v5p").interconnect.bandwidth.quantity("bw", "[information]/[time]").to("GB/s").magnitude == 600


def test_apple_gpus_are_unified_memory_gpus(catalog):
    for name in ("M2 Ultra", "M3 Max"):
        device = catalog.find(name)
        assert device.kind == "gpu" and device.unified_memory and device.tdp is None
        assert describe_device(device).unified_memory
    assert not catalog.find("H100").unified_memory


def test_catalog_show_displays_verified(cli):
    result = cli("catalog", "show", "A10G", "--json")
    assert result.exit_code == 0
    import json
    view = json.loads(result.stdout)
    assert view["peaks"]["fp16"]["verified"] is False and view["peaks"]["fp32"]["verified"] is True
    assert "peaks.fp16" in view["unverified"]
    table = cli("catalog", "show", "A10G")
    assert "verified" in table.stdout and "NO" in table.stdout


def test_user_figure_without_verified_is_taken_as_unverified_and_a_typo_is_refused(tmp_path):
    path = _write(tmp_path, USER_DEVICE.format(id="my-gpu", name="My GPU 1000", clock="1 GHz")
                  .replace("{value: 8 GB, source: mine}", "{value: 8 GB, source: mine, verified: true}"))
    device = load_catalog(path).find("My GPU 1000")
    assert device.memory.verified and not device.memory_bandwidth.verified
    typo = _write(tmp_path, USER_DEVICE.format(id="my-gpu", name="My GPU 1000", clock="1 GHz")
                  .replace("{value: 8 GB, source: mine}", "{value: 8 GB, source: mine, verifed: true}"), "typo.yaml")
    with pytest.raises(CatalogError, match="verifed"):
        load_catalog(typo)


# --- links and node types (catalog/networks) ------------------------------------------------

def test_every_interconnects_csv_row_is_a_sourced_link():
    from sizer.hardware.networks import load_networks

    networks = load_networks()
    with open(DATA / "interconnects.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_name = {link.name: link for link in networks.links.values()}
    for row in rows:
        link = by_name[row["name"]]
        assert link.bandwidth.quantity("bw", "[information]/[time]").to("GB/s").magnitude == pytest.approx(
            float(row["bandwidth_per_device_gbs_unidirectional"]))
        assert link.bandwidth.verified == (row["confidence"] != "low")
        assert link.scope == ("intra-node" if row["kind"] == "intra" else "inter-node")


def test_node_topology_for_the_large_scale_engine():
    from sizer.hardware.networks import load_networks

    # interconnects.csv: DGX H100, 8 GPUs, NVLink 4 via NVSwitch 450 GB/s one way, 8x NDR 400 Gb/s = 50 GB/s per GPU
    dgx = load_networks().topology("DGX H100")
    assert dgx.devices_per_node == 8 and dgx.device == "h100-sxm5-80gb"
    assert dgx.intra_node_bandwidth.to("GB/s").magnitude == pytest.approx(450)
    assert dgx.inter_node_bandwidth.to("GB/s").magnitude == pytest.approx(50)
    # DGX A100's HDR InfiniBand: 0.6 us (ml-engineering table)
    assert load_networks().topology("dgx-a100").inter_node_latency.to("us").magnitude == pytest.approx(0.6)
    assert load_networks().topology("p4d.24xlarge").inter_node_bandwidth.to("GB/s").magnitude == pytest.approx(6.25)


def test_unknown_system_lists_candidates():
    from sizer.errors import InputError
    from sizer.hardware.networks import load_networks

    with pytest.raises(InputError, match="DGX H100|dgx-h100"):
        load_networks().system("DGX H1000")


def test_networks_file_refuses_a_dangling_link(tmp_path):
    from sizer.hardware.networks import load_networks

    text = (Path(__file__).resolve().parents[3] / "catalog" / "networks" / "links.yaml").read_text()
    (tmp_path / "links.yaml").write_text(text.replace("intra_node: dgx-h100-nvswitch", "intra_node: no-such-link", 1))
    with pytest.raises(CatalogError, match="no-such-link"):
        load_networks(str(tmp_path))


# --- catalog reach, precision gaps, names matched on meaningful words ---


@pytest.mark.parametrize("name, chosen", [
    ("M1 Pro 16-core", "apple-m1-pro-gpu"), ("M1 Max 32-core 64GB", "apple-m1-max-gpu"), ("Apple M1 8-core", "apple-m1-gpu"),
    ("M2 10-core", "apple-m2-gpu"), ("M2 Pro 19-core", "apple-m2-pro-gpu"), ("M2 Max 38-core 96 GB", "apple-m2-max-gpu"),
    ("M2 Ultra 76-core", "apple-m2-ultra-gpu"), ("Apple M3 10-core", "apple-m3-gpu"), ("M3 Pro 18-core", "apple-m3-pro-gpu"),
    ("M3 Max 40-core 128GB", "apple-m3-max-gpu"),
    ("RX 7900 XTX", "radeon-rx-7900-xtx"), ("Radeon RX 7900 XT", "radeon-rx-7900-xt"), ("Radeon PRO W7900", "radeon-pro-w7900"),
    ("Arc A770", "arc-a770"), ("gb200", "gb200-per-gpu"), ("H100 SXM", "h100-sxm5-80gb"), ("Ryzen 7 2700", "ryzen-7-2700"),
    ("Ryzen 7 3700X", "ryzen-7-3700x"),
])
def test_full_names_choose_their_device(catalog, name, chosen):
    assert catalog.find(name).id == chosen


@pytest.mark.parametrize("name, offered, never", [
    ("GB", "NVIDIA GB200 (per Blackwell GPU)", None),  # two letters never stand for a longer name
    ("Ryzen 7", "AMD Ryzen 7 3700X (ryzen-7-3700x)", None),  # two Ryzen 7s in the catalog: both offered
    ("Radeon 7900", "AMD Radeon RX 7900 XTX (radeon-rx-7900-xtx)", "Ryzen"),
])
def test_short_or_ambiguous_names_get_a_candidate_list_not_a_guess(catalog, name, offered, never):
    with pytest.raises(DeviceLookupError) as error:
        catalog.find(name)
    assert offered in error.value.candidates and len(error.value.candidates) >= 1
    if never:
        assert not any(never in c for c in error.value.candidates)
    assert "None" not in str(error.value)


def _device_specs_more():
    from tests.conftest import SHARED_DATA

    with open(SHARED_DATA / "device-specs-more.csv", newline="") as handle:
        return list(csv.DictReader(handle))


SPEC_DEVICES = {  # device-specs-more.csv name -> catalog id (the M4 family has no FP32 figure: left out); the
    # Apple rows state each chip's largest GPU and memory configuration, which these entries are
    "Apple M1 (GPU)": "apple-m1-gpu", "Apple M1 Pro (GPU)": "apple-m1-pro-gpu", "Apple M1 Max (GPU)": "apple-m1-max-gpu",
    "Apple M1 Ultra (GPU)": "apple-m1-ultra-gpu", "Apple M2 Pro (GPU)": "apple-m2-pro-gpu",
    "Apple M2 Max (GPU)": "apple-m2-max-gpu", "Apple M3 (GPU)": "apple-m3-gpu", "Apple M3 Pro (GPU)": "apple-m3-pro-gpu",
    "Apple M3 Max (GPU)": "apple-m3-max-gpu",
    "AMD Radeon RX 7900 XTX": "RX 7900 XTX", "AMD Radeon RX 7900 XT": "RX 7900 XT",
    "AMD Radeon PRO W7900": "Radeon PRO W7900", "Intel Arc A770": "Arc A770",
}


def test_device_specs_more_figures_are_the_catalogs(catalog):
    """Memory, bandwidth, FP32 peak and board power of device-specs-more.csv, exactly as the rows state
    them (rel 1 % for rounding of the unit conversion)."""
    checked = 0
    for row in _device_specs_more():
        if row["device"] not in SPEC_DEVICES:
            assert row["device"].startswith(("Apple M4", "Apple M2 (GPU)")), row["device"]
            continue
        device = catalog.find(SPEC_DEVICES[row["device"]])
        value = float(row["value"])
        if row["field"] == "memory_gb":
            got = device.memory.quantity("memory", "[information]").to("GB").magnitude
        elif row["field"] == "memory_bandwidth":
            got = device.memory_bandwidth.quantity("bw", "[information]/[time]").to("GB/s").magnitude
        elif row["field"] == "fp32_tflops":
            got = stated_peak(device, "fp32").to("TFLOPS").magnitude
        elif row["field"] == "tdp":
            got = device.tdp.quantity("tdp", "[power]").to("W").magnitude
        else:
            continue
        assert got == pytest.approx(value, rel=0.01), (row["device"], row["field"])
        checked += 1
    assert checked >= 30


def test_every_new_figure_is_marked_unverified(catalog):
    """The data file's figures are press and reseller pages: the catalog marks them unverified."""
    for name in SPEC_DEVICES.values():
        device = catalog.find(name)
        if device.id in ("apple-m2-ultra-gpu", "apple-m3-max-gpu"):
            continue
        assert not any(s.verified for path, s in device.sourced_fields().items() if path != "interconnect.bandwidth"), name


def test_precision_gaps_closed(catalog):
    """RTX 4000 Ada and L20 train in bf16; the H100 NVL has its FP8 rate (2 x its dense BF16 835, as Hopper's SXM
    part: 1979 = 2 x 989)."""
    assert "bf16" in catalog.find("RTX 4000 Ada").peaks and "bf16" in catalog.find("L20").peaks
    l20 = catalog.find("L20")
    assert stated_peak(l20, "bf16") == stated_peak(l20, "fp16")  # Ada: BF16 at the FP16 rate
    nvl = catalog.find("H100 NVL")
    assert stated_peak(nvl, "fp8").to("TFLOPS").magnitude == pytest.approx(2 * 835, rel=1e-3)
    assert not nvl.peaks["fp8"].verified and not l20.peaks["bf16"].verified


def test_apple_peaks_follow_their_generations_rate_per_core(catalog):
    """Derived Apple peaks: cores x the stated figure's TFLOPS per core of the same generation (rel 1 %)."""
    per_core = {"m1": 5.2 / 16, "m2": 27.2 / 76, "m3": 14.2 / 40}
    for name, cores in (("apple-m1-gpu", 8), ("apple-m1-ultra-gpu", 48), ("apple-m2-gpu", 10), ("apple-m2-pro-gpu", 19),
                        ("apple-m2-max-gpu", 38), ("apple-m3-gpu", 10), ("apple-m3-pro-gpu", 18), ("apple-m1-7c-8gb-gpu", 7),
                        ("apple-m2-8c-8gb-gpu", 8), ("apple-m2-max-38c-32gb-gpu", 38)):
        generation = name.split("-")[1]
        device = catalog.find(name)
        assert device.unified_memory and device.tdp is None
        assert stated_peak(device, "fp32").to("TFLOPS").magnitude == pytest.approx(per_core[generation] * cores, rel=0.01)


def test_catalog_figures_are_si_floats_read_once_at_load(catalog, monkeypatch):
    # issue 18 item 3: a loaded catalog carries its figures in SI units; using them parses no text
    import sizer.hardware.schema as schema

    device = catalog.find("H100 SXM")
    monkeypatch.setattr(schema, "parse_quantity", lambda *a, **k: pytest.fail("a catalog figure parsed at use"))
    assert device.memory.si("memory", "[information]") == 80e9
    assert device.memory.quantity("memory", "[information]").to("GB").magnitude == pytest.approx(80)
    assert device.memory_bandwidth.si("memory_bandwidth", "[information]/[time]") > 1e12


def test_a_copied_figure_with_another_value_is_read_anew(catalog):
    tdp = catalog.find("T4").tdp
    assert tdp.si("tdp", "[power]") == 70.0
    assert tdp.model_copy(update={"value": "300 W"}).si("tdp", "[power]") == 300.0


@pytest.mark.parametrize("name, nearest", [("RTX 4060", "rtx-4060-ti-16gb"), ("GTX 1050", "gtx-1050-ti")])
def test_a_card_the_catalog_lacks_is_not_answered_as_its_ti(catalog, name, nearest):
    # the catalog has the RTX 4060 Ti and no RTX 4060: "RTX 4060" matched it by its words and the answer was for
    # another card (more compute, another price), named only in the answer's title (the RTX 4070 and GTX 1080, the
    # first examples, are in the catalog now)
    with pytest.raises(DeviceLookupError, match="another card") as error:
        catalog.find(name)
    assert any(nearest in c for c in error.value.candidates)
    assert catalog.find(name + " Ti").id == nearest  # the variant's own name still chooses it


@pytest.mark.parametrize("name, chosen", [("RTX 3090", "rtx-3090"), ("3090 Ti", "rtx-3090-ti"),
                                          ("Radeon 7900 XTX", "radeon-rx-7900-xtx"), ("rtx-4070-ti", "rtx-4070-ti")])
def test_names_that_include_the_variant_or_have_no_variant_still_choose(catalog, name, chosen):
    assert catalog.find(name).id == chosen
