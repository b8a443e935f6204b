"""sizer/workloads/finetune.py and --method full|lora|qlora through time, memory, recommend, CLI and HTTP.

Published figures and their sources:
- Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models" (arXiv:2106.09685):
  Table 4, GPT-3 175B: LoRA 4.7M (r_q = r_v = 1) and 37.7M (r_q = r_v = 8) trained parameters;
  Table 5 (§7.1): r = 4 on W_q and W_v is "18M"; Table 2, RoBERTa-large LoRA: 0.8M (r = 8 on W_q, W_v).
- Dettmers et al. 2023, "QLoRA: Efficient Finetuning of Quantized LLMs" (arXiv:2305.14314):
  abstract, "finetune a 65B parameter model on a single 48GB GPU" (paged optimizers, gradient
  checkpointing, micro-batch 1, §4/Appendix B); §3: double quantisation leaves 0.127 bits of
  constants per parameter; §1: "13B on a 24 GB consumer GPU" is the smaller setting.
- NVIDIA NeMo performance summary (../shared/data/llm-training-benchmarks.csv, NeMo 24.07,
  DGX-H100, FP8, Llama 2 7B, 8 GPUs, TP 1, PP 1, micro-batch 1, global batch 32, 4096 tokens):
  SFT 16,891 and LoRA 24,824 tokens/s per GPU.
"""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from sizer.errors import InputError
from sizer.facade import MemoryRequest, TimeRequest, estimate_memory, estimate_time
from sizer.plan.recommend import recommend
from sizer.schemas.recommendation import RecommendRequest
from sizer.workloads.finetune import lora_params, nf4_bits_per_param
from sizer.workloads.registry import find_model

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# --- trainable parameters ---------------------------------------------------------------------

@pytest.mark.parametrize("model, rank, published, tolerance", [
    ("gpt3-175b", 1, 4.7e6, 0.05e6),  # Table 4: "4.7M", two significant digits: +-0.05M
    ("gpt3-175b", 8, 37.7e6, 0.05e6),  # Table 4: "37.7M", three significant digits
    ("roberta-large", 8, 0.8e6, 0.05e6),  # Table 2: "0.8M", one decimal
])
def test_lora_trainable_parameters_match_the_lora_paper(model, rank, published, tolerance):
    assert abs(lora_params(find_model(model), rank, ("q", "v")) - published) <= tolerance


def test_gpt3_rank_4_on_query_and_value_is_the_18m_of_table_5():
    # Table 5 prints "18M" for r = 4 on W_q, W_v: 96 x 2 x 4 x (12288 + 12288) = 18.87M, written
    # without decimals (truncated), so the check is the whole million
    assert 18e6 <= lora_params(find_model("gpt3-175b"), 4, ("q", "v")) < 19e6


def test_trainable_parameters_grow_linearly_with_rank_and_targets():
    llama = find_model("llama-2-7b")
    assert lora_params(llama, 16, ("q", "v")) == 2 * lora_params(llama, 8, ("q", "v"))
    assert lora_params(llama, 8, ("q", "k", "v", "o")) == 2 * lora_params(llama, 8, ("q", "v"))  # no GQA in 7B


def test_nf4_with_double_quantisation_is_4_127_bits():
    # Dettmers et al. 2023 §3: 8/64 + 32/(64 x 256) = 0.127 bits of constants per parameter
    assert nf4_bits_per_param() == pytest.approx(4.127, abs=5e-4)
    assert nf4_bits_per_param(64, 1) == pytest.approx(4.625)  # without double quantisation: 32/64 = 0.5 bits


# --- the QLoRA paper's memory claims ------------------------------------------------------------

def _memory(model: str, method: str, device: str, seq_len: int = 512, **extra):
    return estimate_memory(MemoryRequest(model=model, tokens=1e6, seq_len=seq_len, micro_batch=1, method=method,
                                         device=device, recompute="full", **extra))


@pytest.mark.parametrize("seq_len", [512, 1024])
def test_qlora_65b_fits_one_48gb_gpu(seq_len):
    # the QLoRA abstract: 65B on a single 48 GB GPU, micro-batch 1 with gradient checkpointing and paged
    # optimizers (§3: the 32-bit Adam states of the 0.8B adapter parameters paged out under memory pressure)
    result = _memory("llama-65b", "qlora", "RTX A6000", seq_len, optimizer="paged-adamw")
    assert result.fits and result.total.value < 48
    # the 4-bit base is about 65e9 x 4.127 / 8 = 33.4 GB plus 16-bit embeddings and head (1 GB)
    assert 34 < result.weights.value < 37


def test_16_bit_lora_of_65b_does_not_fit_48gb():
    result = _memory("llama-65b", "lora", "RTX A6000")
    assert not result.fits and result.weights.value > 120  # 65e9 bf16 weights alone are 130 GB


def test_qlora_13b_fits_a_24gb_card_and_full_training_does_not():
    assert _memory("llama-13b", "qlora", "RTX 4090").fits
    assert not _memory("llama-13b", "full", "RTX 4090").fits


def test_only_the_adapters_have_gradients_and_optimizer_states():
    full, lora = _memory("llama-2-7b", "full", "H100 SXM"), _memory("llama-2-7b", "lora", "H100 SXM")
    assert lora.trainable_params == pytest.approx(4.194304e6)  # 32 x 2 x 8 x (4096 + 4096)
    assert lora.optimizer_states.value == pytest.approx(lora.trainable_params * 8 / 1e9)  # Adam: 2 FP32 states
    assert lora.gradients.value < full.gradients.value / 1000
    assert lora.weights.value == pytest.approx(full.weights.value, rel=1e-3)  # the same bf16 base


def test_memory_recomputation_keeps_fewer_activations():
    kept = {policy: estimate_memory(MemoryRequest(model="llama-2-7b", tokens=1e6, seq_len=2048, micro_batch=1,
                                                  method="lora", recompute=policy)).activations.value
            for policy in ("none", "selective", "full")}
    assert kept["full"] < kept["selective"] <= kept["none"] and kept["full"] < kept["none"] / 5


# --- full fine-tuning is the training path -------------------------------------------------------

def test_method_full_is_what_training_gives():
    base = dict(model="llama-2-7b", tokens=1e9, seq_len=2048, device="H100 SXM", count=8, recompute="selective")
    base["batch_size"] = 2048 * 1024  # given: the default batch is a fine-tune's when a method is named
    before, full = estimate_time(TimeRequest(**base)), estimate_time(TimeRequest(**base, method="full"))
    assert full.model_dump() == before.model_dump() and full.method == "full"
    memory = dict(model="llama-2-7b", tokens=1e9, device="H100 SXM", batch_size=2048 * 64)
    assert estimate_memory(MemoryRequest(**memory)).model_dump() == \
        estimate_memory(MemoryRequest(**memory, method="full")).model_dump()


def test_method_full_named_is_the_default_said_aloud():
    # issue 43: --method full is the documented default, so naming it changes nothing (it used to switch to the
    # fine-tuning batch of 64 sequences, up to 4.2x another answer); lora and qlora keep that batch
    base = dict(model="llama-2-7b", tokens=5e7, seq_len=2048, device="H100 SXM", count=8)
    named, unnamed = estimate_time(TimeRequest(**base, method="full")), estimate_time(TimeRequest(**base))
    assert named.batch_size == unnamed.batch_size and named.steps == unnamed.steps
    assert estimate_time(TimeRequest(**base, method="lora")).batch_size == 64


# --- time from the engine --------------------------------------------------------------------------

def _throughput(method: str, precision: str = "fp8", **extra) -> float:
    request = TimeRequest(model="llama-2-7b", tokens=1e9, seq_len=4096, batch_size=4096 * 32, micro_batch=1,
                          device="H100 SXM", count=8, precision=precision, method=method, **extra)
    return estimate_time(request).throughput.expected


def test_lora_speed_up_over_full_training_matches_nemo():
    # NeMo 24.07 on DGX-H100 (same layout for both rows): 24,824 / 16,891 = 1.47 x. The frozen
    # base saves the weight-gradient third of the FLOP (1.5 x at most); the tolerance is 15 %,
    # about the engine's datasheet spread for one configuration (error_spread.yaml)
    ratio = _throughput("lora") / _throughput("full")
    assert ratio == pytest.approx(24824 / 16891, rel=0.15)


def test_qlora_is_slower_than_lora_by_its_dequantisation():
    # same rank and targets: only the base's storage differs
    options = dict(lora_rank=16, lora_targets="all-linear", precision="bf16")
    assert _throughput("qlora", **options) < _throughput("lora", **options)


def test_fine_tuning_compute_counts_the_frozen_base_at_two_forward_passes():
    request = dict(model="llama-2-7b", tokens=1e9, seq_len=2048, device="H100 SXM", count=8)
    full = estimate_time(TimeRequest(**request)).training_compute.value
    lora = estimate_time(TimeRequest(**request, method="lora")).training_compute.value
    assert lora / full == pytest.approx(2 / 3, rel=0.01)  # adapters add ~0.1 % of the FLOP


# --- assumptions in every answer --------------------------------------------------------------------

def test_every_answer_states_what_the_method_assumes():
    time = estimate_time(TimeRequest(model="llama-2-7b", tokens=1e9, device="H100 SXM", method="qlora"))
    memory = _memory("llama-2-7b", "qlora", "H100 SXM")
    ranked = recommend(RecommendRequest(model="llama-2-7b", tokens=1e8, method="qlora", max_devices=2, kinds=["gpu"]))
    for assumptions in (time.assumptions, memory.assumptions, ranked.assumptions):
        names = {a.name for a in assumptions}
        assert {"fine-tuning", "QLoRA base", "QLoRA adapters"} <= names
    assert "qlora" in ranked.workload


def test_recommend_replicates_a_qlora_7b_on_consumer_cards_where_full_training_must_shard():
    kinds = dict(model="llama-2-7b", tokens=1e8, seq_len=1024, max_devices=8, kinds=["gpu"])
    card = "NVIDIA GeForce RTX 4090"
    qlora = next(r for r in recommend(RecommendRequest(**kinds, method="qlora")).ranked if r.name == card)
    full = next(r for r in recommend(RecommendRequest(**kinds)).ranked if r.name == card)
    # QLoRA: a 4-bit 7B base and its adapters fit one 24 GB card as a plain replica (the search may still
    # shard for speed: a smaller share of the base leaves room for a larger micro-batch); full training's
    # 16 bytes per parameter (112 GB) only fit with everything split over the 8 cards: ZeRO-3, or tensor x
    # pipeline parallelism over all 8 (the complete layout search finds either)
    assert qlora.memory_per_device.value <= 24
    replica = estimate_time(TimeRequest(model="llama-2-7b", tokens=1e8, seq_len=1024, method="qlora", device=card,
                                        count=1, zero=0, micro_batch=1))
    assert replica.fits
    assert full.zero == 3 or full.tp * full.pp == full.count == 8


# --- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fields, field", [
    (dict(lora_rank=8), "lora_rank"),  # LoRA options with full training
    (dict(method="lora", lora_targets="q,x"), "lora_targets"),
    (dict(method="lora", lora_rank=5000), "lora_rank"),  # above the smallest adapted dimension (4096)
    (dict(method="qlora", precision="fp32"), "precision"),
])
def test_bad_fine_tuning_options_name_their_field(fields, field):
    with pytest.raises(InputError) as error:
        estimate_memory(MemoryRequest(model="llama-2-7b", tokens=1e6, **fields))
    assert error.value.field == field


def test_lora_needs_a_transformer_and_gate_needs_a_gated_ffn():
    with pytest.raises(InputError, match="transformer"):
        estimate_memory(MemoryRequest(workload="resnet50", batch_size=32, method="lora"))
    with pytest.raises(InputError, match="no gate"):
        estimate_memory(MemoryRequest(model="gpt2", tokens=1e6, method="lora", lora_targets="gate"))
    # all-linear on a model without a gate adapts the matrices it has
    assert estimate_memory(MemoryRequest(model="gpt2", tokens=1e6, method="lora", lora_targets="all-linear")).trainable_params > 0


@pytest.mark.parametrize("args, words", [
    (("memory", "--model", "llama-2-7b", "--tokens", "1e6", "--method", "dora"), "method"),
    (("time", "--model", "llama-2-7b", "--tokens", "1e6", "--device", "H100 SXM", "--lora-rank", "8"), "lora_rank"),
    (("recommend", "--model", "llama-2-7b", "--tokens", "1e6", "--method", "lora", "--lora-targets", "wq"), "lora_targets"),
])
def test_cli_refuses_bad_fine_tuning_options_with_exit_2(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output


def test_cli_memory_json_carries_the_method(cli):
    result = cli("memory", "--model", "llama-65b", "--method", "qlora", "--device", "RTX A6000", "--seq-len", "512",
                 "--micro-batch", "1", "--recompute", "full", "--tokens", "1e6", "--json")
    answer = json.loads(result.stdout)
    assert result.exit_code == 0 and answer["method"] == "qlora" and answer["fits"] is True


@pytest.fixture(scope="module")
def client():
    from api.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_http_time_body_takes_the_method(client):
    body = {"model": "llama-2-7b", "tokens": 1e9, "device": "H100 SXM", "method": "lora", "lora_rank": 16,
            "lora_targets": "q,k,v,o"}
    answer = client.post("/v1/time", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["method"] == "lora" and answer.json()["trainable_params"] == pytest.approx(32 * 4 * 16 * 8192)


@pytest.mark.parametrize("body, field", [
    ({"method": "lora", "lora_targets": "everything"}, "lora_targets"),
    ({"method": "lora", "lora_rank": 0}, "lora_rank"),
])
def test_http_refuses_bad_fine_tuning_fields_with_422(client, body, field):
    response = client.post("/v1/memory", json={"model": "llama-2-7b", "tokens": 1e6, **body})
    assert response.status_code == 422 and field in response.text
