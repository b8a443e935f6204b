"""sizer/hardware/schema.py: the pydantic models of the catalog (spec §4): every figure sourced,
unknown fields refused, the rules of each kind of device, and the figure check on raw entries.

Loading whole files (names of file, entry and field in the message) is tested in
tests/sizer/hardware/test_catalog.py; here the models themselves.
"""
import pytest
from pydantic import ValidationError

from sizer.hardware.schema import CloudPrice, Device, NetworksFile, Price, Sourced, figure_problems, read_figures

SOURCES = {"ds": "a datasheet"}


def _gpu(**changes) -> dict:
    # NVIDIA Tesla T4 datasheet: 2560 CUDA cores, 1590 MHz boost, 16 GB GDDR6 at 320 GB/s, 70 W
    raw = {"id": "t4-copy", "name": "T4 copy", "vendor": "NVIDIA", "kind": "gpu", "architecture": "Turing",
           "launch_year": 2018, "fp32_cores": {"value": 2560, "source": "ds"},
           "boost_clock": {"value": "1590 MHz", "source": "ds"}, "memory": {"value": "16 GB", "source": "ds"},
           "memory_type": "GDDR6", "memory_bandwidth": {"value": "320 GB/s", "source": "ds"},
           "tdp": {"value": "70 W", "source": "ds"}}
    raw.update(changes)
    return {k: v for k, v in raw.items() if v is not None}


def test_a_valid_entry_reads_its_figures_in_si_units():
    device = Device.model_validate(_gpu())
    read_figures(device)
    assert device.boost_clock.si("boost_clock", "[frequency]") == 1.59e9
    assert device.memory_bandwidth.si("memory_bandwidth", "[information]/[time]") == 320e9
    assert device.tdp.quantity("tdp", "[power]").to("W").magnitude == 70


def test_an_unknown_field_is_an_error_not_ignored():
    with pytest.raises(ValidationError, match="boost_clok"):
        Device.model_validate(_gpu(boost_clok={"value": "1 GHz", "source": "ds"}))
    with pytest.raises(ValidationError, match="verifed"):
        Sourced.model_validate({"value": "1 GHz", "source": "ds", "verifed": True})


def test_a_figure_is_unverified_unless_it_says_so():
    # a figure recalled rather than read is marked unverified in a field (developers' guide)
    assert Sourced(value="1 GHz", source="ds").verified is False


def test_entries_are_frozen():
    device = Device.model_validate(_gpu())
    with pytest.raises(ValidationError):
        device.name = "renamed"


@pytest.mark.parametrize("changes, message", [
    (dict(kind="cpu"), "a cpu needs cores, vector"),
    (dict(fp32_cores=None), "needs peaks or fp32_cores"),
    (dict(boost_clock=None), "fp32_cores needs boost_clock"),
    (dict(peaks={"bf16": {"value": "65 TFLOPS", "source": "ds"}}, unsupported_precisions=["bf16"]),
     "both listed and unsupported"),
    (dict(peaks={"fp12": {"value": "1 TFLOPS", "source": "ds"}}), "fp12"),
    (dict(id="T4 Copy"), "id"),
    (dict(launch_year=1890), "launch_year"),
])
def test_kind_rules_and_field_limits(changes, message):
    with pytest.raises(ValidationError, match=message):
        Device.model_validate(_gpu(**changes))


def test_numeric_aliases_become_names():
    # YAML reads `aliases: [4090]` as a number; a name is text
    assert Device.model_validate(_gpu(aliases=[4090, "T4c"])).aliases == ["4090", "T4c"]


@pytest.mark.parametrize("date, ok", [("2024", True), ("2024-06", True), ("2024-06-30", True), ("June 2024", False),
                                      ("24-06", False), ("2024/06", False)])
def test_a_price_carries_a_date_in_iso_form(date, ok):
    raw = {"value": "10000 USD", "date": date, "source": "ds"}
    if ok:
        assert Price.model_validate(raw).date == date
    else:
        with pytest.raises(ValidationError, match="YYYY"):
            Price.model_validate(raw)


def test_a_cloud_price_is_for_at_least_one_device():
    raw = {"value": "2 USD/hour", "date": "2025", "source": "ds", "provider": "p", "instance": "i"}
    assert CloudPrice.model_validate(raw | {"devices_in_instance": 8}).scope == "full instance share"
    with pytest.raises(ValidationError, match="devices_in_instance"):
        CloudPrice.model_validate(raw | {"devices_in_instance": 0})


def test_figure_problems_names_every_bad_field_at_once():
    raw = _gpu(memory={"value": "16 GHz", "source": "ds"}, tdp={"value": "70 W", "source": "nowhere"},
               peaks={"fp16": {"value": "65 TB", "source": "ds"}})
    problems = figure_problems(raw, SOURCES)
    assert any(p.startswith("field memory") for p in problems)
    assert any("tdp" in p and "'nowhere'" in p for p in problems)
    assert any("peaks.fp16" in p for p in problems)
    assert len(problems) == 3
    assert figure_problems(_gpu(), SOURCES) == []


def test_sourced_fields_list_every_figure_by_path():
    device = Device.model_validate(_gpu(peaks={"fp16": {"value": "65 TFLOPS", "source": "ds"}},
                                        interconnect={"name": "PCIe", "bandwidth": {"value": "16 GB/s", "source": "ds"}}))
    assert set(device.sourced_fields()) == {"fp32_cores", "boost_clock", "memory", "memory_bandwidth", "tdp", "peaks.fp16",
                                            "interconnect.bandwidth"}


def test_two_entries_with_different_content_have_different_keys():
    a, b = Device.model_validate(_gpu()), Device.model_validate(_gpu(tdp={"value": "75 W", "source": "ds"}))
    assert a.key != b.key and a.key == Device.model_validate(_gpu()).key


def test_a_copy_with_other_figures_has_another_key():
    device = Device.model_validate(_gpu())
    read_figures(device)  # as load_catalog does: the key is worked out at load
    copy = device.model_copy(update={"boost_clock": Sourced(value="1000 MHz", source="ds")})
    assert copy.key != device.key


def _links(**system_changes) -> dict:
    return {"sources": {"s": "a source"},
            "links": [{"id": "nv", "name": "NV", "scope": "intra-node", "bandwidth": {"value": "450 GB/s", "source": "s"},
                       "confidence": "medium"},
                      {"id": "ib", "name": "IB", "scope": "inter-node", "bandwidth": {"value": "50 GB/s", "source": "s"},
                       "confidence": "high"}],
            "systems": [{"id": "node", "name": "Node", "device": "h100-sxm5-80gb",
                         "devices_per_node": {"value": 8, "source": "s"}, "intra_node": "nv", "inter_node": "ib"}
                        | system_changes]}


def test_a_networks_file_checks_its_references():
    assert NetworksFile.model_validate(_links()).systems[0].inter_node == "ib"
    # a network between nodes used inside one, and a source the file lacks, are refused by name
    with pytest.raises(ValidationError, match="intra_node 'ib'"):
        NetworksFile.model_validate(_links(intra_node="ib"))
    with pytest.raises(ValidationError, match="'t'"):
        NetworksFile.model_validate(_links(devices_per_node={"value": 8, "source": "t"}))


# --- offer terms as people spell them (issue 42: `--term reserved-1y`, as the README spells it, was refused) ---

@pytest.mark.parametrize("written, term", [("reserved-1y", "reserved 1 year"), ("Reserved 1 Year", "reserved 1 year"),
                                           ("reserved_3y", "reserved 3 years"), ("on demand", "on-demand"),
                                           ("SPOT", "spot"), ("reserved", "reserved")])
def test_a_request_takes_an_offer_term_as_people_spell_it(written, term):
    from sizer.facade import TcoRequest
    from sizer.schemas.recommendation import RecommendRequest

    assert TcoRequest(device="H100 SXM", count=8, training_time="14 d", terms=[written]).terms == [term]
    assert RecommendRequest(params="7B", tokens="2e10", terms=[written]).terms == [term]


def test_a_term_that_is_none_is_still_refused_naming_the_field():
    from sizer.facade import TcoRequest

    with pytest.raises(ValidationError, match="terms"):
        TcoRequest(device="H100 SXM", count=8, training_time="14 d", terms=["weekly"])
