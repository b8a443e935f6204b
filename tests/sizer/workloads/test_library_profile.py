"""sizer/workloads/library_profile.py: library models profiled on the fly, or refused saying how to install."""
import subprocess
import sys

import pytest

from sizer.errors import InputError
from sizer.workloads import library_profile as lp
from sizer.workloads.workload_profile import find_profile


@pytest.mark.parametrize("name, package", [("torchvision:regnet_x_8gf", "torchvision"), ("timm:convnext_small", "timm"),
                                           ("hf:bert-base-multilingual-cased", "transformers")])
def test_a_library_that_is_not_installed_is_one_message_saying_how_to_install_it(monkeypatch, name, package):
    # simulate an installation without the library (and without torch) whatever this machine has
    monkeypatch.setattr(lp, "_installed", lambda module: False)
    with pytest.raises(InputError) as error:
        find_profile(name)
    assert error.value.field == "workload"
    assert f"pip install 'sizer[validation]' {package}" in error.value.message
    assert "sizer workloads" in error.value.message


def test_a_shipped_profile_of_the_library_model_is_used_without_torch(monkeypatch):
    def no_profiler(name):
        raise AssertionError("the profiler was reached for a shipped profile")

    monkeypatch.setattr(lp, "_installed", lambda module: False)
    monkeypatch.setattr(lp, "validation_module", no_profiler)
    assert find_profile("torchvision:vgg16").name == "vgg16"
    assert find_profile("TorchVision:VGG16").name == "vgg16"
    assert find_profile("torchvision:resnet50").name == "resnet50"


def test_finding_a_shipped_library_profile_imports_no_torch():
    code = ("import sys; from sizer.workloads.workload_profile import find_profile; "
            "find_profile('torchvision:vit_b_16'); find_profile('mlp:784,512,10'); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


class _FakeModels:
    """Stands in for validation/library_models.py: what the profiler is handed, and how often."""

    __file__ = __file__
    built: list = []

    @staticmethod
    def library_versions(library):
        return {"torch": "0.0", "timm": "0.0"}

    @classmethod
    def build(cls, library, name, seq_len):
        if name == "nosuchnet":
            raise RuntimeError("Unknown model (nosuchnet)")  # timm's own wording
        cls.built.append(name)

        class Model:
            sample, seq_len = "sample", None

            @staticmethod
            def example_input(batch):
                return batch
        return Model()


class _FakeProfiler:
    __file__ = __file__

    @staticmethod
    def profile_model(model, example, **described):
        layer = {"name": "fc:matmul", "kind": "matmul", "forward_flops": 2e6, "bytes": 4e3, "params": 1e6}
        return {key: described[key] for key in ("name", "description", "sample", "seq_len", "generated_by",
                                                "source", "versions")} | {"layers": [layer]}


@pytest.fixture()
def fake_library(monkeypatch, tmp_path):
    monkeypatch.setattr(lp, "_installed", lambda module: True)
    monkeypatch.setattr(lp, "validation_module", lambda name: {"profiler": _FakeProfiler, "library_models": _FakeModels}[name])
    monkeypatch.setenv("SIZER_CACHE_DIR", str(tmp_path))
    _FakeModels.built = []
    return _FakeModels


def test_a_library_model_is_profiled_once_then_read_from_the_disk_cache(fake_library):
    first = find_profile("timm:tinynet")
    again = find_profile("timm:tinynet")
    assert first == again and first.source == "timm:tinynet" and first.params == 1e6
    assert fake_library.built == ["tinynet"]  # the second answer came from the cache


def test_an_unknown_library_model_is_refused_naming_workload(fake_library):
    with pytest.raises(InputError) as error:
        find_profile("timm:nosuchnet")
    assert error.value.field == "workload" and "Unknown model" in error.value.message


def test_a_length_for_an_image_model_is_refused(fake_library):
    with pytest.raises(InputError) as error:
        find_profile("timm:tinynet", 128)
    assert error.value.field == "seq_len"
