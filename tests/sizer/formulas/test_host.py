"""sizer/formulas/host.py: RAM for the data set, storage read rate against the storage class."""
import pytest

from sizer.errors import InputError
from sizer.formulas.host import dataset_bytes, estimate_host, required_read_rate
from sizer.units import Quantity


def test_read_rate_and_dataset_size():
    # 2000 samples/s x 150 kB = 300 MB/s; 1e6 samples x 150 kB = 150 GB
    assert required_read_rate(Quantity(2000, "sample/s"), Quantity(150, "kB")).to("MB/s").magnitude == pytest.approx(300)
    assert dataset_bytes(1e6, Quantity(150, "kB")).to("GB").magnitude == pytest.approx(150)


def test_hdd_too_slow_nvme_fine():
    slow = estimate_host(1e6, Quantity(150, "kB"), Quantity(2000, "sample/s"), "hdd")
    fast = estimate_host(1e6, Quantity(150, "kB"), Quantity(2000, "sample/s"), "nvme")
    assert not slow.storage_keeps_up and "too slow" in slow.advice
    assert fast.storage_keeps_up


def test_unknown_storage_class():
    with pytest.raises(InputError, match="storage"):
        estimate_host(1, Quantity(1, "kB"), Quantity(1, "sample/s"), "floppy")
