"""validation/gpu_plan.py, gpu_models.py, gpu_predict.py, gpu_suite.py, gpu_report.py: the GPU suite's runs, the
question each puts to sizer, the models at their reference shapes (built on the meta device), and the report,
run end to end on a CPU at tiny sizes. The suite itself needs CUDA; its one CUDA test skips without it."""
from __future__ import annotations

import csv
import json

import pytest

from sizer.workloads.profile import load_profile
from sizer.workloads.registry import find_model
from validation.gpu_plan import GpuRun, gpu_plan, ladder_stops
from validation.gpu_predict import predict_run, run_errors

torch = pytest.importorskip("torch")

from validation import gpu_models  # noqa: E402
from validation.gpu_suite import build_model, run_gpu_suite  # noqa: E402


def test_the_tiny_plan_is_the_full_plan_made_small():
    full, tiny = gpu_plan("full"), gpu_plan("tiny")
    assert len({run.run_id for run in full}) == len(full)  # ids name the runs in the report
    # the same runs in the same order, apart from the ladder's length and the sizes
    key = lambda run: (run.model, run.task, run.precision, run.channels_last, run.lora_rank, run.optimizer)  # noqa: E731
    assert {key(run) for run in full} == {key(run) for run in tiny}
    assert {run.model for run in full} == {"resnet50", "vit-b16", "bert-large", "gpt2-medium", "llama-3.2-1b",
                                          "llama-3.1-8b"}
    assert {run.precision for run in full if run.model == "resnet50"} == {"fp32", "tf32", "fp16"}
    assert {run.seq_len for run in full if run.model == "bert-large"} == {128, 512}
    with pytest.raises(ValueError, match="size"):
        gpu_plan("huge")


def test_a_ladder_stops_at_its_first_out_of_memory():
    runs = [run for run in gpu_plan("full") if run.ladder]
    assert [run.batch for run in runs] == sorted(run.batch for run in runs)
    failed = next(run for run in runs if run.batch == 1536)
    left = ladder_stops(gpu_plan("full"), failed)
    assert [run.batch for run in left if run.ladder] == [256, 512, 1024]
    assert len([run for run in left if not run.ladder]) == len([run for run in gpu_plan("full") if not run.ladder])


@pytest.fixture(scope="module")
def predictions():
    return {run.run_id: predict_run(run, "H100 SXM") for run in gpu_plan("full")}


def test_every_run_is_a_question_sizer_answers(predictions):
    for run in gpu_plan("full"):
        answer = predictions[run.run_id]
        figure = answer["step_time"] if run.task == "train" else answer["tokens_per_s"]
        assert 0 < figure["low"] <= figure["expected"] <= figure["high"], run.run_id
        assert answer["memory_active_GB"] > 0 and answer["memory_total_GB"] > answer["memory_active_GB"]


def test_the_ladder_is_asked_at_each_batch(predictions):
    # the micro-batch reaches sizer: memory grows with the batch, and the verdict turns at sizer's largest batch
    ladder = [run for run in gpu_plan("full") if run.ladder]
    memory = [predictions[run.run_id]["memory_active_GB"] for run in ladder]
    assert memory == sorted(memory) and memory[-1] > 3 * memory[0]
    for run in ladder:
        answer = predictions[run.run_id]
        assert answer["fits"] is (run.batch <= answer["largest_micro_batch"])


def test_lora_asks_for_the_adapters_the_run_trains(predictions):
    full = next(run for run in gpu_plan("full") if run.model == "llama-3.2-1b" and run.task == "train" and not run.lora_rank)
    lora = next(run for run in gpu_plan("full") if run.lora_rank)
    assert predictions[lora.run_id]["memory_active_GB"] < predictions[full.run_id]["memory_active_GB"]
    with torch.device("meta"):
        model = gpu_models.add_lora(gpu_models.llama(gpu_models.LLAMA_3_2_1B), rank=lora.lora_rank)
    # r (in + out) on q (2048 -> 2048) and v (2048 -> 512) of each of 16 blocks (Hu et al. 2021)
    assert gpu_models.trainable_parameters(model) == 16 * 16 * ((2048 + 2048) + (2048 + 512))
    from sizer.facade import MemoryRequest, estimate_memory

    answer = estimate_memory(MemoryRequest(device="H100 SXM", **lora.sizer), suggest=False)
    assert answer.trainable_params == gpu_models.trainable_parameters(model)


def _params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def test_the_models_have_the_shapes_sizer_is_asked_about():
    # built full size on the meta device (no memory): the parameters of the workload or preset each run names
    with torch.device("meta"):
        vit = gpu_models.vit()
        gpt2 = gpu_models.gpt2()
        small = gpu_models.llama(gpu_models.LLAMA_3_2_1B)
        large = gpu_models.llama(gpu_models.LLAMA_3_1_8B)
        plan = {run.model: run for run in gpu_plan("full")}
        resnet, bert = build_model(plan["resnet50"]), build_model(plan["bert-large"])
    assert _params(vit) == load_profile("vit-b-16").params == 86_567_656  # torchvision vit_b_16
    assert _params(gpt2) == find_model("gpt2-medium").params_total() == 354_823_168  # Hugging Face gpt2-medium
    assert _params(small) == find_model("Llama-3.2-1B").params_total() == 1_235_814_400
    assert _params(large) == find_model("llama-3.1-8b").params_total() == 8_030_261_248
    assert _params(resnet) == load_profile("resnet50").params == 25_557_032  # torchvision resnet50
    assert _params(bert) == load_profile("bert-large", 128).params


def test_out_of_memory_is_a_verdict_and_the_errors_have_a_sign():
    run = gpu_plan("full")[0]
    assert run_errors(run, {"out_of_memory": True}, {"fits": False})["fits_agrees"] is True
    assert run_errors(run, {"out_of_memory": True}, {"fits": True})["fits_agrees"] is False
    predicted = {"fits": True, "step_time": {"low": 0.5, "expected": 1.0, "high": 2.0}, "memory_active_GB": 12.0}
    errors = run_errors(run, {"step_time_s": 0.8, "peak_allocated_GB": 10.0}, predicted)
    assert errors["time"] == pytest.approx(0.25) and errors["within_range"] is True  # predicted too slow: +
    assert errors["peak_memory"] == pytest.approx(0.2)
    decode = next(r for r in gpu_plan("full") if r.task == "decode")
    speed = run_errors(decode, {"tokens_per_s": 200.0, "peak_allocated_GB": 1.0},
                       {"fits": True, "tokens_per_s": {"low": 100.0, "expected": 250.0, "high": 300.0},
                        "memory_active_GB": 1.0})
    # sizer says 250 tokens/s where 200 ran: too fast, a time per token 20 % short
    assert speed["tokens_per_s"] == pytest.approx(0.25) and speed["time"] == pytest.approx(-0.2)


def _one_of_each(plan: list[GpuRun]) -> list[GpuRun]:
    """One run of each model and task (the CPU shares its two cores with other work)."""
    seen, chosen = set(), []
    for run in plan:
        key = (run.model, run.task, bool(run.lora_rank))
        if key not in seen and run.model != "llama-3.1-8b":
            seen.add(key)
            chosen.append(run)
    return chosen


def test_the_tiny_suite_runs_on_a_cpu_and_writes_the_report(tmp_path):
    runs = _one_of_each(gpu_plan("tiny"))
    report = run_gpu_suite("tiny", "cpu", tmp_path, predict_for="H100 SXM", runs=runs)
    assert report["failures"] == [] and report["summary"]["n_runs"] == len(runs)
    kept = json.loads((tmp_path / "report.json").read_text())
    assert [run["id"] for run in kept["runs"]] == [run.run_id for run in runs]
    for run in kept["runs"]:
        seconds = run["measured"].get("step_time_s") or 1 / run["measured"]["tokens_per_s"]
        assert seconds > 0 and run["predicted"]["device"] == "NVIDIA H100 SXM5 80GB"
        assert "time" in run["error"] and run["error"]["fits_agrees"] is True
    rows = list(csv.DictReader((tmp_path / "runs.csv").open()))
    assert [row["id"] for row in rows] == [run.run_id for run in runs]
    summary = (tmp_path / "summary.md").read_text()
    assert all(run.run_id in summary for run in runs)


def test_the_full_suite_refuses_a_machine_without_cuda(tmp_path):
    with pytest.raises(ValueError, match="CUDA"):
        run_gpu_suite("full", "cpu", tmp_path)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_tiny_suite_on_cuda_reads_the_allocator(tmp_path):
    report = run_gpu_suite("tiny", "cuda", tmp_path, predict_for="H100 SXM")
    assert report["failures"] == []
    for run in report["runs"]:
        measured = run["measured"]
        assert 0 < measured["peak_allocated_GB"] <= measured["peak_reserved_GB"]


def test_a_kept_report_is_predicted_again_with_todays_core():
    from validation.gpu_predict import repredict_report

    report = {"suite": "gpu", "settings": {"size": "full", "predicted_for": "H100 SXM"},
              "runs": [{"id": "resnet50-amp-b256", "measured": {"step_time_s": 0.1, "peak_allocated_GB": 12.0}},
                       {"id": "a-run-the-plan-dropped", "measured": {"step_time_s": 1.0}}]}
    (record,) = repredict_report(report)
    active = record["predicted"]["memory_active_GB"]
    assert record["id"] == "resnet50-amp-b256" and record["error"]["peak_memory"] == pytest.approx(active / 12.0 - 1)
    assert record["error"]["time"] == pytest.approx(record["predicted"]["step_time"]["expected"] / 0.1 - 1)
