"""cli/workloads_cmd.py (`sizer workloads`) and the reach of --workload on the command line."""
import json

import pytest

from sizer.workloads import library_profile
from sizer.workloads.profile import builtin_profile_names


def test_workloads_lists_every_builtin_profile_with_gflop_params_and_source(cli):
    listed = json.loads(cli("workloads", "--json").stdout)["workloads"]
    assert [w["name"] for w in listed] == builtin_profile_names()
    by_name = {w["name"]: w for w in listed}
    assert all(w["forward_gflop"] > 0 and w["params"] > 0 and w["source"] for w in listed)
    assert by_name["vgg16"]["source"] == "torchvision:vgg16" and by_name["vgg16"]["versions"]["torchvision"]
    assert by_name["bert-large"]["seq_lens"] == [128, 384, 512]
    table = cli("workloads")
    assert table.exit_code == 0 and "vgg16" in table.stdout and "timm:NAME" in table.stdout


@pytest.mark.parametrize("command", ["time", "memory", "recommend"])  # plan takes --model only
def test_workload_help_names_every_form(cli, monkeypatch, command):
    monkeypatch.setenv("COLUMNS", "200")
    text = " ".join(cli(command, "--help").stdout.split())
    for form in ("sizer workloads", "torchvision:NAME", "timm:NAME", "hf:NAME", "mlp:W1,W2,..."):
        assert form in text, (command, form)


def test_a_missing_library_is_exit_2_with_how_to_install_it(cli, monkeypatch):
    monkeypatch.setattr(library_profile, "_installed", lambda module: False)
    result = cli("time", "--workload", "torchvision:regnet_x_8gf", "--samples", "1e6", "--device", "H100 SXM",
                 "--batch-size", "32")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "workload" in result.stderr and "pip install 'sizer[validation]' torchvision" in result.stderr


def test_mlp_widths_and_forgiving_names_answer_time(cli):
    for workload in ("mlp:784,512,10", "VGG-16", "hf:openai/whisper-small"):
        result = cli("time", "--workload", workload, "--samples", "1e6", "--device", "H100 SXM", "--batch-size", "32")
        assert result.exit_code == 0, (workload, result.output)


def test_profile_of_a_library_model_without_the_library_is_exit_2_naming_it(cli, monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "timm" else real(name, *a))
    result = cli("profile", "timm:convnext_tiny", "--out", tmp_path / "p.yaml")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "pip install" in result.stderr and not (tmp_path / "p.yaml").exists()
