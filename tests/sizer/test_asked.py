"""A device name is found in the catalog once, at the facade (issue 41, item 1: "the device as its catalog entry").

A request is validated without its catalog, so its device fields stay names; :func:`sizer.asked.on_catalog` finds
each once, where the facade joins request and catalog, and the core takes the entries. Read from the source with
``ast``, so that a ``.find(`` on a catalog added anywhere in ``sizer/``, ``api/`` or ``cli/`` fails here, naming the
file and line; and counted on answers, so that a second lookup of the same name fails too.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sizer import facade
from sizer.asked import Asked, have_sets, on_catalog, reference_device
from sizer.errors import DeviceLookupError, InputError, SizerError
from sizer.hardware.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("sizer", "api", "cli")

# The modules that may call ``.find(`` (a catalog lookup by name), each with the reason (the catalog itself,
# sizer/hardware/catalog.py, defines Catalog.find and calls it nowhere).
FINDS = {
    "sizer/asked.py": "the resolution: on_catalog finds every device a request names, once",
    "api/routers/catalog.py": "GET /v1/catalog/{device}: the question is the lookup itself (a path parameter, no "
                              "request model for the facade to join)",
    "cli/catalog_cmd.py": "sizer catalog show DEVICE: the question is the lookup itself (no request model)",
}

# The modules that may join a request and its catalog (call on_catalog), each with the reason. Everything else takes
# the entries (an Asked), never a name.
JOINS = {
    "sizer/facade.py": "the one join of every question: peak, time, memory, inference, plan, --have, tco",
    "sizer/training/estimates.py": "time_estimate and memory_estimate, public entries for a caller holding a request "
                                   "and a catalog (tests, scripts); the facade calls time_on and memory_on",
    "sizer/serving/estimate.py": "estimate_inference, a public entry for a caller holding a request and a catalog; the "
                                 "facade and the core call serve",
    "sizer/plan/planner.py": "plan, a public entry for a caller holding a request and a catalog; the facade calls plan_on",
    "sizer/plan/recommend.py": "the training ranking, handed its request whole by the facade: its one join (the device "
                               "measured on), kept on its question for the rejected rows' suggestions",
    "sizer/serving/recommend_devices.py": "the serving ranking, handed its request whole by the facade: its one join, "
                                          "where layers are offloaded (host_cpu is its only device name)",
    "sizer/plan/launch_top.py": "a ranked row's setup asked as its own serving question (the row's catalog id)",
}


def _calls(path: Path, name: str) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and ((isinstance(node.func, ast.Attribute) and node.func.attr == name)
                 or (isinstance(node.func, ast.Name) and node.func.id == name))]


def _modules() -> list[Path]:
    return [path for top in SCANNED for path in (ROOT / top).rglob("*.py")]


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("name, allowed", [("find", FINDS), ("find_device", FINDS), ("on_catalog", JOINS)])
def test_a_device_name_is_found_only_where_request_meets_catalog(name, allowed):
    outside = {f"{_relative(path)}:{line}" for path in _modules() if _relative(path) not in allowed
               for line in _calls(path, name)}
    assert outside == set(), f"{name}() outside the join (take the Asked entries instead): " + ", ".join(sorted(outside))


@pytest.mark.parametrize("name, allowed", [("find", FINDS), ("on_catalog", JOINS)])
def test_every_allowance_is_used(name, allowed):
    # an allowance no longer used is removed, so the lists stay the true edge
    assert {module for module in allowed if not _calls(ROOT / module, name)} == set()


def test_the_check_names_a_lookup_added_in_the_core(tmp_path):
    module = tmp_path / "core.py"
    module.write_text("def f(request, catalog):\n    return catalog.find(request.device)\n", encoding="utf-8")
    assert _calls(module, "find") == [2]


def _finds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every name Catalog.find is asked for, from now on."""
    seen: list[str] = []
    real = Catalog.find

    def counted(self: Catalog, name: str, field_name: str = "device") -> object:
        seen.append(name)
        return real(self, name, field_name)

    monkeypatch.setattr(Catalog, "find", counted)
    return seen


LLAMA_7B = {"model": "llama-2-7b", "weights": "fp16", "batch": 1}


@pytest.mark.parametrize("ask, found", [
    (lambda: facade.estimate_time(facade.TimeRequest(model="llama-2-7b", tokens=2e9, device="H100 SXM", count=8)),
     ["H100 SXM"]),
    # does not fit: the suggestions run the engine again on the same entry
    (lambda: facade.estimate_time(facade.TimeRequest(model="llama-2-70b", tokens=2e9, device="RTX 4090", count=1)),
     ["RTX 4090"]),
    (lambda: facade.estimate_memory(facade.MemoryRequest(model="llama-2-7b", device="A100 80GB SXM", count=2)),
     ["A100 80GB SXM"]),
    (lambda: facade.estimate_inference(facade.InferenceRequest(**LLAMA_7B, device="RTX 4090", emit="vllm")),
     ["RTX 4090"]),
    (lambda: facade.answer(facade.PlanRequest(model="llama-2-7b", tokens=2e9, device="H100 SXM", count=8)),
     ["H100 SXM"]),
    (lambda: facade.answer_owned(facade.InferenceRequest(**LLAMA_7B, have=["2x RTX 4090", "1x A100 80GB SXM"])),
     ["2x RTX 4090", "1x A100 80GB SXM"]),
    (lambda: facade.estimate_time(facade.TimeRequest(model="llama-2-7b", tokens=2e9, device="H100 SXM", count=8,
                                                     measured="3000 tokens/s", measured_on="8x A100 80GB SXM")),
     ["H100 SXM", "8x A100 80GB SXM"]),
])
def test_each_name_is_found_once_per_answer(monkeypatch, ask, found):
    seen = _finds(monkeypatch)
    ask()
    # measured_on's count is read before the name is found; have's "2x " likewise
    assert [s.split("x ", 1)[-1] if "x " in s else s for s in seen] == [f.split("x ", 1)[-1] for f in found]


def test_on_catalog_gives_the_entries(catalog):
    request = facade.InferenceRequest(**LLAMA_7B, devices=["RTX 4090", "RTX 3090"], gpu_layers=20,
                                      host_cpu="Ryzen 9 7950X", measured="40 tokens/s", measured_on="2x RTX 3090")
    asked = on_catalog(request, catalog)
    assert isinstance(asked, Asked) and asked.request is request and asked.catalog is catalog
    assert [d.id for d in asked.devices] == ["rtx-4090", "rtx-3090"] and asked.device is asked.devices[0]
    assert asked.host_cpu.id == "ryzen-9-7950x" and asked.host("anything") is asked.host_cpu
    assert asked.measured_on[0] == 2 and asked.measured_on[1].id == "rtx-3090"
    assert asked.have == () and asked.reference is None and asked.assumed is None


def test_again_keeps_the_entries_and_replaces_those_given(catalog):
    asked = on_catalog(facade.TimeRequest(model="llama-2-7b", tokens=2e9, device="H100 SXM", have=["T4"]), catalog)
    t4 = asked.have[0][1]
    other = asked.again(facade.TimeRequest(model="llama-2-7b", tokens=2e9, device=t4.id), device=t4, have=())
    assert other.device is t4 and other.have == () and other.catalog is catalog and asked.device.id == "h100-sxm5-80gb"


def test_a_chip_named_without_its_configuration_says_what_was_assumed(catalog):
    assert on_catalog(facade.PeakRequest(device="M1 Max"), catalog).assumed == catalog.assumed("M1 Max") is not None


def test_no_device_is_the_refusal_that_says_to_give_one(catalog):
    asked = on_catalog(facade.TimeRequest(model="llama-2-7b", tokens=2e9), catalog)
    with pytest.raises(SizerError, match="give a device") as error:
        _ = asked.the_device
    assert error.value.field == "device"


def _refusal(call):
    with pytest.raises(SizerError) as error:
        call()
    return error.value.field, error.value.message


def test_an_unknown_device_is_refused_as_the_catalog_refuses_it(catalog):
    # the same field and message, close matches included, as Catalog.find gives (what every answer said before)
    expected = _refusal(lambda: catalog.find("H100 SXMM"))
    assert _refusal(lambda: on_catalog(facade.TimeRequest(params=7e9, tokens=1e9, device="H100 SXMM"), catalog)) == expected
    assert _refusal(lambda: facade.estimate_time(facade.TimeRequest(params=7e9, tokens=1e9, device="H100 SXMM"),
                                                 catalog)) == expected
    assert isinstance(pytest.raises(DeviceLookupError, catalog.find, "H100 SXMM").value.candidates, list)


def test_unknown_names_in_the_other_fields_name_their_field(catalog):
    def asked(**fields):
        return on_catalog(facade.InferenceRequest(**LLAMA_7B, **fields), catalog)

    assert _refusal(lambda: asked(devices=["RTX 4090", "RTX 9999"]))[0] == "devices"
    assert _refusal(lambda: asked(have=["2x RTX 4090", "1x RTX 9999"]))[0] == "have[1]"
    # found at the join, refused where the answer reads them (layers offloaded, a measurement rescaled, the engine's
    # reference mode): the checks that came first before still come first
    on_cpu = asked(device="RTX 4090", gpu_layers=20, host_cpu="Ryzen 99")
    assert _refusal(lambda: on_cpu.host("ryzen-9-7950x")) == (
        "host_cpu", "host_cpu: got 'Ryzen 99'; expected a CPU of the catalog (sizer catalog list)")
    measured = asked(device="RTX 4090", measured="40 tokens/s", measured_on="2x RTX 9999")
    field, message = _refusal(lambda: measured.measured_on)
    assert field == "measured_on" and "a catalog device (" in message
    for text in ("V1000 XYZ=833/s", "V100 at 833/s"):
        referenced = on_catalog(facade.TimeRequest(params=7e9, tokens=1e9, device="T4", reference=text), catalog)
        assert _refusal(lambda referenced=referenced: referenced.reference)[0] == "reference"


@pytest.mark.parametrize("request_, field, expected", [
    # a measurement's device with a memory question: refused as a peak memory of another setup, as before
    (lambda: facade.MemoryRequest(model="llama-2-7b", device="T4", measured="peak memory 18 GiB on RTX 9999"),
     "measured", "a peak memory of the setup asked"),
    # the device measured on without a measurement: the measurement is asked for, as before
    (lambda: facade.TimeRequest(model="llama-2-7b", tokens=1e9, device="T4", measured_on="RTX 9999"),
     "measured_on", "a measurement too"),
    # a host CPU without offloaded layers: the layers are asked for, as before
    (lambda: facade.InferenceRequest(**LLAMA_7B, device="RTX 4090", host_cpu="Ryzen 99"),
     "host_cpu", "gpu_layers below the model's layers as well"),
])
def test_an_unknown_name_the_answer_does_not_read_keeps_the_earlier_refusal(catalog, request_, field, expected):
    with pytest.raises(SizerError) as error:
        facade.answer(request_(), catalog)
    assert error.value.field == field and expected in error.value.message


def test_have_sets_read_counts_and_entries(catalog):
    assert [(n, d.id) for n, d in have_sets(["8x A100 80GB SXM", "RTX 4090"], catalog)] == [
        (8, "a100-80gb-sxm4"), (1, "rtx-4090")]
    assert have_sets(None, catalog) == ()
    with pytest.raises(InputError, match="device count"):
        have_sets("0x T4", catalog)


def test_reference_device_is_the_name_before_the_rate(catalog):
    assert reference_device("V100 SXM2 16GB=833/s", catalog).id == catalog.find("V100 SXM2 16GB").id
    assert reference_device(None, catalog) is None
