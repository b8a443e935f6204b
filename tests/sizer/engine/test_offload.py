"""ZeRO-Offload against host memory (sizer/engine/offload.py, issue 19): the states that leave the
devices must fit in the host's RAM: given, the node type's, or an assumed floor; said either way."""
from __future__ import annotations

import pytest

from sizer import facade
from sizer.errors import SizerError
from sizer.results import unit_factor

# 3e9 parameters trained in full with Adam: ZeRO-Offload keeps the FP32 master weights (4 B) and the two
# FP32 Adam moments (8 B) per parameter on the host (Ren et al. 2021 §4): 12 x 3e9 = 36 GB for one device.
SMALL = dict(params=3e9, tokens=1e8, seq_len=1024, micro_batch=1, method="full", precision="bf16", optimizer="adam")
HOST_BYTES = 12 * 3e9


def _time(catalog, **fields):
    return facade.estimate_time(facade.TimeRequest(**{**SMALL, **fields}), catalog, suggest=False)


def test_host_needs_the_master_weights_and_adam_moments(catalog):
    result = _time(catalog, device="RTX 4090", offload=True, host_memory="64 GB")
    needed = result.host_memory_per_host.value / unit_factor("B", result.host_memory_per_host.unit)
    assert needed == pytest.approx(HOST_BYTES, rel=0.01)
    assert result.fits  # 2 + 2 bytes per parameter stay on the 24 GB card


@pytest.mark.parametrize("host, fits", [("32 GB", False), ("64 GB", True)])
def test_a_host_too_small_for_the_offloaded_states_does_not_fit(catalog, host, fits):
    result = _time(catalog, device="RTX 4090", offload=True, host_memory=host)
    assert result.fits is fits
    assert any("host memory" in w for w in result.warnings) is (not fits)
    said = [a for a in result.assumptions if a.name == "host memory"]
    assert len(said) == 1 and "given" in said[0].value


def test_without_a_figure_the_host_is_assumed_to_hold_its_devices_memory_and_says_so(catalog):
    result = _time(catalog, device="RTX 4090", offload=True)
    (said,) = [a for a in result.assumptions if a.name == "host memory"]
    assert "assumed" in said.value and not said.verified
    assert not result.fits  # 36 GB offloaded against the assumed 24 GB of one RTX 4090's host


def test_node_type_host_memory_is_used_and_counts_the_devices_of_a_host(catalog):
    # DGX H100: 2 TB of system memory for its 8 GPUs (NVIDIA datasheet, catalog/networks/links.yaml)
    result = _time(catalog, device="H100 SXM", count=16, offload=True, system="DGX H100")
    (said,) = [a for a in result.assumptions if a.name == "host memory"]
    assert "DGX H100" in said.value and "by 8 device(s)" in said.value
    assert result.fits


def test_bad_host_memory_names_the_field(catalog):
    with pytest.raises(SizerError) as raised:
        _time(catalog, device="RTX 4090", offload=True, host_memory="fast")
    assert raised.value.field == "host_memory"


def test_offload_is_suggested_only_where_the_host_holds_the_states(catalog):
    def offloads(**extra):
        # the recipe held as given (mixed states, no step in backward): else --have finds a lighter recipe that fits
        result = facade.answer_owned(facade.TimeRequest(**SMALL, have=["1x RTX 4090"], state_precision="mixed",
                                                        optimizer_in_backward=False, **extra), catalog)
        return [s for s in result.options[0].suggestions if s.apply.get("offload")]

    assert not offloads()  # assumed 24 GB of host memory cannot hold 36 GB
    (suggested,) = offloads(host_memory="64 GB")
    again = _time(catalog, device="RTX 4090", offload=True, host_memory="64 GB")
    assert again.fits and again.memory_per_device == suggested.memory_per_device


@pytest.mark.parametrize("device, precision", [("M2 Ultra", "fp32"), ("Xeon Silver 4114", "fp32")])
def test_never_offload_on_unified_memory_or_a_cpu(catalog, device, precision):
    fields = {**SMALL, "precision": precision, "host_memory": "1 TB"}
    result = facade.answer_owned(facade.TimeRequest(**fields, have=[f"1x {device}"]), catalog)
    assert not any(s.apply.get("offload") for s in result.options[0].suggestions)
    with pytest.raises(SizerError):
        _time(catalog, device=device, precision=precision, offload=True)
