"""cli/: every command through CliRunner, tables and --json, and its error paths (exit 2, no traceback)."""
import json

import pytest


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_peak_p40_json(cli):
    data = _json(cli("peak", "Tesla P40", "--json"))
    assert data["peak"] == {"value": pytest.approx(1.175808e13), "unit": "FLOP/s"}
    assert data["sustained"]["low"] == pytest.approx(0.75 * data["peak"]["value"])


def test_peak_cores_clock_and_table(cli):
    assert _json(cli("peak", "--cores", "3840", "--clock", "1531 MHz", "--json"))["peak"]["value"] == pytest.approx(1.175808e13)
    table = cli("peak", "p40")
    assert table.exit_code == 0 and "TFLOP/s" in table.stdout and "derating" in table.stdout


def test_compute_gpt3(cli):
    data = _json(cli("compute", "--params", "175e9", "--samples", "300e9", "--epochs", "1", "--json"))
    assert data["training_compute"]["value"] == pytest.approx(3.15e23)
    assert cli("compute", "--params", "175e9", "--samples", "300e9").exit_code == 0


def test_time_json_and_table(cli):
    args = ("time", "--params", "175e9", "--tokens", "300e9", "--device", "A100 80GB SXM", "--count", "1024",
            "--precision", "bf16", "--sharding", "full")
    data = _json(cli(*args, "--json"))
    for key in ("training_time", "step_time", "throughput", "physical_limit", "bound", "assumptions"):
        assert key in data
    assert data["training_time"]["low"] >= data["physical_limit"]["value"] * 0.999
    assert "training time" in cli(*args).stdout
    # a dense network of 175e9 parameters has no layers to split: its default 512-sample batch cannot be spread
    # over 1,024 devices, so it is raised to 1,024 and the answer says so; a given 512 is refused naming the most
    # devices that can run it (issue 15: a default is never changed silently, a given batch never changed)
    question = ("time", "--params", "175e9", "--samples", "300e9", "--device", "A100 80GB SXM", "--count", "1024")
    raised = cli(*question)
    assert raised.exit_code == 0 and "default batch raised" in raised.output
    # ... and it is not silently a dense one-layer network when a language model is likely meant (spec §3.2's
    # GPT-3 by 300e9 tokens): the answer says how it was read and how to ask for a decoder
    said = json.loads(cli(*question, "--json").stdout)["warnings"]
    assert any("generic dense network" in w and "--tokens" in w for w in said)
    decoder = json.loads(cli("time", "--params", "175e9", "--tokens", "300e9", "--device", "A100 80GB SXM", "--count",
                             "1024", "--json").stdout)
    assert not any("generic dense network" in w for w in decoder["warnings"])
    # the decoder's days are GPT-3's order (Narayanan et al. 2021 §5.1: 34 days), not the dense reading's
    assert decoder["training_time"]["unit"] == "day" and 10 < decoder["training_time"]["expected"] < 60
    refused = cli(*question, "--batch-size", "512")
    assert refused.exit_code == 2 and "batch_size" in refused.output and "at most 512 devices" in refused.output


def test_memory(cli):
    data = _json(cli("memory", "--params", "7e9", "--tokens", "2e10", "--precision", "bf16", "--optimizer", "adamw",
                     "--device", "H100 SXM", "--json"))
    assert data["fits"] is False and data["total"]["unit"] == "GB"
    assert "does NOT fit" in cli("memory", "--params", "7e9", "--tokens", "2e10", "--device", "H100 SXM").stdout


def test_cells_k1_complexity(cli):
    assert _json(cli("cells", "--samples", "10", "--features", "100", "--weights", "1000", "--outputs", "0", "--json"))["cells"] == 2000
    for weights, verdict in (("1000", "exact"), ("5000", "redundant"), ("10", "insufficient")):
        assert _json(cli("k1", "--weights", weights, "--samples", "10", "--features", "100", "--json"))["verdict"] == verdict
    assert _json(cli("complexity", "--layers", "75,512,10", "--json"))["layers"] == 2
    for command in (("cells", "--samples", "10", "--features", "100", "--weights", "1000"),
                    ("k1", "--weights", "5000", "--samples", "10", "--features", "100"), ("complexity", "--layers", "75,512,10")):
        assert cli(*command).exit_code == 0


def test_tco(cli):
    data = _json(cli("tco", "--device", "H100 SXM", "--count", "8", "--training-time", "14 d", "--json"))
    assert data["rent"]["expected"] > 0
    assert data["buy"] is None or data["buy"]["total"]["expected"] > 0
    table = cli("tco", "--device", "T4", "--params", "1e8", "--samples", "1e6", "--epochs", "3")
    assert table.exit_code == 0 and "rent" in table.stdout


def test_recommend_default_says_which_workload(cli):
    result = cli("recommend")
    assert result.exit_code == 0 and "default" in result.stdout
    data = _json(cli("recommend", "--params", "7e9", "--tokens", "2e10", "--precision", "bf16", "--optimizer", "adamw",
                     "--json"))
    assert data["ranked"] and all(r["reason"] for r in data["rejected"])
    first = data["ranked"][0]
    assert {"device", "count", "training_time", "cost"} <= set(first) and {"rent", "buy"} <= set(first["cost"])


def test_recommend_names_every_bad_option_one_line_each(cli):
    result = cli("recommend", "--params", "seven", "--tokens", "2e10", "--budget", "5 GHz")
    assert result.exit_code == 2, result.output
    assert "params: got 'seven'" in result.output and "budget: got '5 GHz'" in result.output
    assert "Traceback" not in result.output


def test_catalog_list_and_show(cli):
    devices = _json(cli("catalog", "list", "--json"))["devices"]
    assert len(devices) >= 45 and all({"id", "name", "kind", "sources"} <= set(d) for d in devices)
    shown = _json(cli("catalog", "show", "Tesla P40", "--json"))
    assert shown["memory"]["value"] == 24 and shown["memory"]["unit"] == "GB" and "unit" in shown["memory_bandwidth"]
    assert "Tesla P40" in cli("catalog", "show", "p40").stdout
    assert cli("catalog", "list", "--kind", "cpu").exit_code == 0


@pytest.mark.parametrize("args, words", [
    (("k1", "--weights", "1000", "--samples", "0", "--features", "100"), "samples"),
    (("peak", "A100"), "ambiguous"),
    (("peak", "Tesla P41"), "no device matches"),
    (("peak", "--cores", "3840", "--clock", "10**10**10 Hz"), "clock"),
    (("peak", "--cores", "3840", "--clock", "5 m"), "frequency"),
    (("peak", "p40", "--precision", "bf16"), "fp32"),
    (("compute", "--params", "nan", "--samples", "1"), "params"),
    (("time", "--params", "1e9", "--samples", "1e6", "--device", "T4", "--batch-size", "-4"), "batch_size"),
    (("recommend", "--optimizer", "lamb"), "optimizer"),
    (("recommend", "--deadline", "3 GB"), "deadline"),
    (("tco", "--device", "T4", "--training-time", "1 kWh"), "training_time"),
    (("catalog", "show", "nothing-like-this"), "no device matches"),
    (("catalog", "list", "--catalog", "/nonexistent.yaml"), "no such file"),
])
def test_bad_input_exits_2_with_one_message_and_no_traceback(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_time_with_a_workload_profile_and_a_reference(cli):
    data = _json(cli("time", "--workload", "resnet50", "--batch-size", "256", "--device", "H100 SXM", "--precision", "fp16",
                     "--reference", "V100 SXM2 16GB=1200/s", "--json"))
    assert data["mode"] == "reference" and data["throughput"]["expected"] > 1200
    assert {g["kind"] for g in data["layer_groups"]} >= {"conv", "norm"} and all(g["bound"] for g in data["layer_groups"])
    table = cli("time", "--workload", "bert-large", "--seq-len", "384", "--batch-size", "32", "--device", "A100 80GB SXM",
                "--precision", "fp16", "--samples", "88000", "--epochs", "2")
    assert table.exit_code == 0 and "Layer groups" in table.stdout and "training time" in table.stdout


def test_recommend_with_a_workload_profile(cli):
    data = _json(cli("recommend", "--workload", "resnet50", "--samples", "1.28e6", "--epochs", "90", "--batch-size", "256",
                     "--precision", "fp16", "--kind", "gpu", "--json"))
    assert data["ranked"] and data["ranked"][0]["training_time"]["expected"] > 0


@pytest.mark.parametrize("args, words", [
    (("time", "--workload", "resnet50", "--device", "T4"), "batch_size"),
    (("time", "--workload", "nope", "--batch-size", "8", "--device", "T4"), "workload"),
    (("time", "--workload", "resnet50", "--batch-size", "8", "--device", "T4", "--reference", "T4 fast"), "reference"),
    (("time", "--workload", "resnet50", "--batch-size", "8", "--device", "T4", "--calibration", "/nonexistent.yaml"), "calibration"),
    (("calibrate", "/nonexistent-report.json"), "report"),
])
def test_time_modes_bad_input(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2 and words in result.output


def test_a_config_file_is_read_where_the_command_line_names_it(cli):
    # issue 18 item 3: the CLI decides "file" at the edge; the same config.json over HTTP is only a name (refused)
    from pathlib import Path

    from fastapi.testclient import TestClient

    from api.app import create_app

    config = str(Path(__file__).resolve().parents[1] / "data" / "hf-configs" / "Llama-2-7b-hf" / "config.json")
    question = ("--tokens", "1e9", "--device", "H100 SXM", "--count", "8", "--json")
    by_file = _json(cli("time", "--model", config, *question))
    by_name = _json(cli("time", "--model", "llama-2-7b", *question))
    assert by_file["training_compute"]["value"] == pytest.approx(by_name["training_compute"]["value"], rel=1e-9)
    with TestClient(create_app()) as client:
        answer = client.post("/v1/time", json={"model": config, "tokens": 1e9, "device": "H100 SXM"})
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["body", "model"]


def test_numpy_warnings_do_not_print_before_a_clean_error(cli, monkeypatch):
    # issue 18: NumPy's overflow warnings, with their source lines, printed before the one-line error
    import warnings

    import numpy as np

    from sizer import facade

    def overflowing_peak(*args, **kwargs):
        np.array([1e308]) * 10  # what an out-of-range input does inside the engine's arrays
        raise facade.InputError("cores", "1e308", "a realistic core count")

    monkeypatch.setattr(facade, "peak", overflowing_peak)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")  # as a plain `python -m cli.main` run would print it
        result = cli("peak", "--cores", "3840", "--clock", "1 GHz")
    assert result.exit_code == 2
    assert not [w for w in shown if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in shown]
    assert "RuntimeWarning" not in result.output and "overflow" not in result.output, result.output


def test_recommend_inference_gives_the_answer_http_and_python_give_by_default(cli):
    # one serving question, one answer: the CLI's --max-devices default for training (64) is not the serving
    # search's (8, InferenceRecommendRequest), so left out it must not reach the serving request
    from sizer.facade import InferenceRecommendRequest, recommend_inference

    data = _json(cli("recommend", "--inference", "--model", "llama-3-70b", "--kind", "gpu", "--json"))
    python = recommend_inference(InferenceRecommendRequest(model="llama-3-70b", kinds=["gpu"])).model_dump(mode="json")
    assert [(r["device"], r["count"], r["weights"]) for r in data["ranked"]] == \
        [(r["device"], r["count"], r["weights"]) for r in python["ranked"]]
    assert max(r["count"] for r in data["ranked"]) <= 8
    assert data["assumptions"] == python["assumptions"]  # the search over 1, 2, 4 ... 8 devices said alike


def test_inference_on_a_count_that_splits_no_heads_answers_as_replicas(cli):
    # microsoft/phi-4's 40 heads and 10 key/value heads (its config.json) split over 1, 2 or 5 of 8 devices, not 8:
    # 4 replicas of tensor parallel 2 answer (sizer.serving.replicas); pinning the tensor split keeps the refusal
    data = _json(cli("inference", "--model", "phi-4", "--device", "H200 SXM", "--count", "8", "--json"))
    assert data["count"] == 8 and data["fits"]
    [note] = [a for a in data["assumptions"] if a["name"] == "replicas"]
    assert note["value"].startswith("8 devices as 4 replicas of tensor parallel 2")
    pinned = cli("inference", "--model", "phi-4", "--device", "H200 SXM", "--count", "8", "--split", "tensor")
    assert pinned.exit_code == 2 and "count" in pinned.output
