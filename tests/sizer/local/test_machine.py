"""Local inference: the runtime choice, depth, unified memory, every catalog device, held-out accuracy."""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.hardware.catalog import load_catalog
from sizer.local.machine import local_times
from sizer.runtimes import Purpose, runtime, runtimes_for
from sizer.runtimes.formats import weight_format
from sizer.workloads.registry import find_model

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
import local_inference_accuracy  # noqa: E402

LLAMA = runtime("llama.cpp").profile


def _ask(**fields):
    base = dict(model="llama-3-8b", weights="q4_k_m", batch=1, prompt_len=512, output_len=128)
    return estimate_inference(InferenceRequest(**{**base, **fields}))


def test_gguf_defaults_to_llama_cpp_and_says_so():
    r = _ask(device="RTX 4090")
    note = next(a for a in r.assumptions if a.name == "runtime")
    assert note.value.startswith("llama.cpp, not given")
    assert any(a.name == "runtime kernels" for a in r.assumptions)


def test_registry_lists_llama_cpp_as_local():
    assert "llama.cpp" in {r.name for r in runtimes_for(Purpose.LOCAL)}
    assert runtime("llamacpp") is runtime("llama.cpp")


def test_a_runtime_that_cannot_run_it_names_the_field():
    with pytest.raises(InputError, match="runtime"):
        _ask(device="H100 SXM", weights="fp8", runtime="llama.cpp")
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="runtime\n  got 'llama-cpu-9000'; expected one of llama.cpp"):
        _ask(device="RTX 4090", runtime="llama-cpu-9000")  # refused where the request is built


def test_depth_slows_generation_and_prompt():
    arch, device, fmt = find_model("llama-3-8b"), load_catalog().find("RTX 4090"), weight_format("q4_k_m")
    shallow = local_times(arch, device, fmt, LLAMA, prompt_len=512, output_len=128, depth=0)
    deep = local_times(arch, device, fmt, LLAMA, prompt_len=512, output_len=128, depth=8192)
    # at 8k tokens each generated token reads 8192 x 128 KiB = 1 GiB of KV cache beside ~4.9 GB of weights
    assert 1.1 < deep.decode_seconds / shallow.decode_seconds < 1.4
    assert deep.prefill_seconds > 1.2 * shallow.prefill_seconds


def test_depth_in_the_answer():
    plain, deep = _ask(device="RTX 4090"), _ask(device="RTX 4090", depth=16384)
    assert deep.decode_tokens_per_s.expected < plain.decode_tokens_per_s.expected
    assert deep.kv_cache_memory.value > plain.kv_cache_memory.value
    assert any(a.name == "depth" for a in deep.assumptions)


def test_micro_batches_read_the_weights_again():
    arch, device, fmt = find_model("llama-3-8b"), load_catalog().find("RTX 4090"), weight_format("q4_0")
    small = local_times(arch, device, fmt, LLAMA, prompt_len=512, output_len=1, ubatch=16)
    default = local_times(arch, device, fmt, LLAMA, prompt_len=512, output_len=1)
    # llama.cpp PR #11583 (RTX 4090, llama 8B Q4_0 pp512): ubatch 16 at 1597-1937 tokens/s, 512 at 7776-10359
    assert small.prefill_seconds > 2.5 * default.prefill_seconds


def test_apple_gpu_wires_part_of_unified_memory():
    r = _ask(device="apple-m4-max-40c-gpu")
    assert r.device_memory.value == pytest.approx(96, rel=0.01)  # 3/4 of 128 GB
    assert any(a.name == "unified memory" and not a.verified for a in r.assumptions)


def test_70b_q4_k_m_on_two_3090s_fits_and_runs_at_people_s_speed():
    r = _ask(model="llama-3-70b", device="RTX 3090", count=2, split="layer")
    assert r.fits
    # people report about 15-18 tokens/s for 70B Q4_K_M on 2 x RTX 3090 (issue thread figures); a 30 % band
    assert 11 < r.decode_tokens_per_s.expected < 24


@pytest.mark.parametrize("device", [d.id for d in load_catalog().devices.values() if d.kind in ("gpu", "cpu")])
def test_no_catalog_device_crashes(device):
    try:
        r = _ask(device=device)
    except InputError as error:  # a refusal with a sentence is an answer, a traceback is not
        assert "device" in str(error) or "weights" in str(error)
        return
    assert r.decode_tokens_per_s.expected > 0 and r.prefill_tokens_per_s.expected > 0


# Targets of benchmarks/ACCURACY.md ("Local inference") on the held-out half: generation median <= 10 %,
# prompt median <= 20 %, NVIDIA and Apple apart (today 14.7 / 13.1 % and 5.8 / 13.1 %). NVIDIA generation misses
# its target since the GTX 1050 Ti's community runs were scored (37 held-out runs, about 2x over-predicted):
# it is guarded at today's figure plus 2 points, so it cannot drift further unseen.
GUARDS = {("nvidia", "tg"): 0.167, ("nvidia", "pp"): 0.20, ("apple", "tg"): 0.10, ("apple", "pp"): 0.20}


@pytest.fixture(scope="module")
def held_out_scores():
    runs = local_inference_accuracy.load_runs()
    local_inference_accuracy._annotate(runs)
    return local_inference_accuracy.score([r for r in runs if local_inference_accuracy.held_out(r)])


@pytest.mark.parametrize("family,test", sorted(GUARDS))
def test_held_out_accuracy(held_out_scores, family, test):
    s = held_out_scores[family][test]
    assert s["rows"] >= 10
    assert s["median_abs"] <= GUARDS[(family, test)]


def test_fit_and_held_out_rows_do_not_overlap():
    runs = local_inference_accuracy.load_runs()
    fitted = set(LLAMA.fitted_on)
    assert fitted and not fitted & {r.key for r in runs if local_inference_accuracy.held_out(r)}
    assert statistics.median(r.measured for r in runs) > 0


def test_unequal_cards_split_layers_by_memory():
    r = _ask(model="llama-3-70b", devices=["RTX 3090", "RTX 3060 12GB"])
    layers = {d.device: d.layers for d in r.per_device}
    # 24 GB and 12 GB: 80 layers split 53 / 27 (in proportion to memory, largest remainder)
    assert sorted(layers.values()) == [27, 53]
    assert not r.fits  # 42.5 GB of Q4_K_M weights do not fit 36 GB
    both = _ask(model="llama-3-70b", devices=["RTX 3090", "RTX 4090"])
    assert both.fits and [d.layers for d in both.per_device] == [40, 40]
    # the 4090 reads its half faster (1008 vs 936 GB/s): the pair is faster than two 3090s, slower than two 4090s
    two_3090 = _ask(model="llama-3-70b", device="RTX 3090", count=2, split="layer")
    two_4090 = _ask(model="llama-3-70b", device="RTX 4090", count=2, split="layer")
    speeds = [x.decode_tokens_per_s.expected for x in (two_3090, both, two_4090)]
    assert speeds == sorted(speeds) and speeds[0] < speeds[2]


def test_unequal_cards_need_a_local_runtime():
    with pytest.raises(InputError, match="devices"):
        _ask(devices=["RTX 3090", "RTX 4090"], weights="fp8")


def test_partial_offload_is_slower_and_holds_less():
    full = _ask(model="llama-3-70b", device="RTX 4090", count=2, split="layer")
    part = _ask(model="llama-3-70b", device="RTX 4090", gpu_layers=40)
    assert part.weights_memory.value == pytest.approx(full.weights_memory.value, rel=0.02)  # 40 of 80 layers either way
    assert part.decode_tokens_per_s.expected < 0.5 * full.decode_tokens_per_s.expected


def test_cli_runtime_depth_and_devices(cli):
    ok = cli("inference", "--model", "llama-3-70b", "--devices", "RTX 3090,RTX 4090", "--weights", "q4_k_m",
             "--depth", "4096", "--runtime", "llama.cpp", "--json")
    assert ok.exit_code == 0, ok.output
    assert '"per_device"' in ok.output
    bad = cli("inference", "--model", "llama-3-8b", "--device", "RTX 4090", "--weights", "q4_k_m", "--runtime", "llama")
    assert bad.exit_code == 2 and "Traceback" not in bad.output and "runtime" in bad.output


def test_http_runtime_depth_and_devices():
    from fastapi.testclient import TestClient

    from api.app import create_app

    body = {"model": "llama-3-70b", "weights": "q4_k_m", "prompt_len": 512, "output_len": 128}
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        ok = client.post("/v1/inference", json={**body, "devices": ["RTX 3090", "RTX 4090"], "depth": 4096})
        bad = client.post("/v1/inference", json={**body, "device": "RTX 4090", "depth": -1})
        wrong = client.post("/v1/inference", json={**body, "device": "RTX 4090", "runtime": "llama"})
    assert ok.status_code == 200 and len(ok.json()["per_device"]) == 2, ok.text
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][:2] == ["body", "depth"], bad.text
    assert wrong.status_code == 422 and "runtime" in wrong.text, wrong.text


def test_mlx_weights_run_under_mlx_on_apple_only():
    r = _ask(device="apple-m4-max-40c-gpu", weights="mlx-q4")
    assert next(a for a in r.assumptions if a.name == "runtime").value.startswith("mlx, not given")
    # MLX 4-bit: 4 bits + an fp16 scale and bias per 64 weights = 4.5 bits, embeddings and head included
    assert r.weights_memory.value == pytest.approx(find_model("llama-3-8b").params_total() * 4.5 / 8 / 1e9, rel=0.001)
    with pytest.raises(InputError, match="runtime"):
        _ask(device="RTX 4090", weights="mlx-q4", runtime="mlx")


def test_mlx_held_out_accuracy(held_out_scores):
    # 8 + 8 held-out mlx-lm / Rapid-MLX runs (ACCURACY.md "Local inference"): guard at the llama.cpp targets
    assert held_out_scores["mlx:apple"]["tg"]["median_abs"] <= 0.10
    assert held_out_scores["mlx:apple"]["pp"]["median_abs"] <= 0.20


def test_cpu_prompt_on_amx_no_slower_than_without():
    # A Xeon Platinum 8480+ runs llama.cpp's prompt at its AMX bf16 tile peak where the catalog has
    # tiles (56 x 3.8 GHz x 1024 FLOP/cycle) rather than its AVX-512 FP32 peak (x 64): never slower,
    # and generation (memory-bound) unchanged.
    xeon = load_catalog().find("Xeon Platinum 8480+")
    bare = xeon.model_copy(update={"matrix_tiles": None})
    arch, fmt = find_model("llama-3-8b"), weight_format("q4_k_m")
    amx = local_times(arch, xeon, fmt, LLAMA, prompt_len=512, output_len=128)
    avx = local_times(arch, bare, fmt, LLAMA, prompt_len=512, output_len=128)
    assert amx.prefill_seconds < avx.prefill_seconds
    assert amx.decode_seconds == pytest.approx(avx.decode_seconds, rel=0.05)
    # no AMX CPU among the fitted runs: the answer says its prompt speed is an upper estimate
    note = next(a for a in _ask(device="Xeon Platinum 8480+").assumptions if a.name == "runtime kernels")
    assert "AMX tiles" in note.value and "upper estimate" in note.value and not note.verified
    assert "AMX" not in next(a for a in _ask(device="EPYC 9654").assumptions if a.name == "runtime kernels").value


def test_unequal_cards_quote_no_single_card_price():
    # a split over a 3090 and a 4090 is not one offer: no cost, and the price note must not quote either card's rent
    r = _ask(model="llama-3-70b", devices=["RTX 3090", "RTX 4090"])
    assert r.cost_per_million_tokens is None
    notes = {a.name: a.value for a in r.assumptions}
    assert "USD" not in notes["price"] and "unequal devices" in notes["price"]


def test_a_local_answer_takes_its_familys_held_out_range_prompt_and_generation_apart():
    r = _ask(device="apple-m2-max-30c-gpu")
    prompt, generation = LLAMA.spread("apple", "prompt"), LLAMA.spread("apple", "generation")
    d, p = r.decode_tokens_per_s, r.prefill_tokens_per_s
    assert d.low == pytest.approx(d.expected * generation["low"]) and p.high == pytest.approx(p.expected * prompt["high"])
    assert (d.low / d.expected, p.low / p.expected) != (r.total_tokens_per_s.low / r.total_tokens_per_s.expected,) * 2
    note = next(a for a in r.assumptions if a.name == "range")
    assert "local_inference_accuracy" in note.source and "apple" in note.value
    served = estimate_inference(InferenceRequest(model="llama-3-8b", device="H100 SXM", weights="bf16", runtime="vllm"))
    assert "inference_accuracy.py" in next(a for a in served.assumptions if a.name == "range").source


def test_the_committed_ranges_are_the_committed_fits_held_out_errors():
    runs = local_inference_accuracy.load_runs()
    local_inference_accuracy._annotate(runs)
    written = local_inference_accuracy.spreads([r for r in runs if local_inference_accuracy.held_out(r)])
    assert written["llama.cpp"] == runtime("llama.cpp").profile.speed_spread
    assert written["mlx"] == runtime("mlx").profile.speed_spread


def test_an_llmfit_run_whose_file_fills_the_card_is_left_out_as_offloaded():
    # 8 GB RTX 2080: Gemma 2 27B Q4_K_M (about 16 GB) cannot be a whole-GPU run; Llama 3.1 8B (4.9 GB) can.
    # Unified memory and CPUs never offload.
    offloaded = local_inference_accuracy._offloaded
    assert offloaded("rtx-2080", "gemma-2-27b", "Q4_K_M")
    assert not offloaded("rtx-2080", "llama-3.1-8b", "Q4_K_M")
    assert not offloaded("dgx-spark-gb10", "gemma-2-27b", "Q4_K_M")
    assert not offloaded("intel-n100", "gemma-2-27b", "Q4_K_M")


@pytest.mark.parametrize("device, weights", [("tpu-v5e", "q4_k_m"), ("gaudi3", "q8_0"), ("RTX 4090", "mlx-q4")])
def test_a_format_whose_only_runtime_cannot_run_on_the_device_is_refused(device, weights):
    # GGUF runs under llama.cpp (GPUs, CPUs, Apple silicon), MLX's formats under mlx (Apple silicon): the default
    # runtime a format picks is held to the devices it runs on, as a named one is
    with pytest.raises(InputError, match="weights") as error:
        _ask(device=device, weights=weights)
    assert "does not run on" in str(error.value)


@pytest.mark.parametrize("device, weights, engine, field", [("Ryzen 9 7950X", "bf16", "tensorrt-llm", "device"),
                                                            ("RTX 4090", "mlx-q4", "vllm", "weights"),
                                                            ("V100 SXM2 16GB", "awq-int4-g128", "vllm", "weights")])
def test_a_serving_engine_that_cannot_run_the_question_is_refused_without_load(device, weights, engine, field):
    # without a rate the engine was not asked whether it runs on the device or loads the format at all
    with pytest.raises(InputError) as error:
        _ask(device=device, weights=weights, runtime=engine)
    assert error.value.field == field, str(error.value)
    from fastapi.testclient import TestClient

    from api.app import create_app

    body = {"model": "llama-3-8b", "device": device, "weights": weights, "runtime": engine}
    with TestClient(create_app()) as client:
        answer = client.post("/v1/inference", json=body)
    assert answer.status_code == 422 and field in answer.text, answer.text


@pytest.mark.parametrize("fields", [dict(device="RTX 4090", depth=131072, prompt_len=1024, output_len=256),
                                    dict(device="RTX 3090", count=2, model="llama-3-70b", prompt_len=1024),
                                    dict(device="apple-m2-pro-gpu", weights="q8_0", depth=60000)])
def test_the_largest_batch_that_fits_is_the_batch_the_verdict_lets_fit(fields):
    # "fits" at batch 1 beside "largest batch that fits: 0" (a 128k context on a 4090): the largest batch took a full
    # prefill chunk of activations where fewer sequences have fewer prompt tokens to hold
    first = _ask(**fields)
    assert first.fits and first.max_batch >= 1
    assert _ask(**{**fields, "batch": first.max_batch}).fits
    assert not _ask(**{**fields, "batch": first.max_batch + 1}).fits


@pytest.mark.parametrize("device, weights", [("apple-m4-max-40c-gpu", "int4"), ("Ryzen 9 7950X", "awq-int4-g128"),
                                             ("apple-m2-pro-gpu", "int8")])
def test_a_data_centre_format_on_a_mac_or_a_cpu_is_refused_with_the_local_formats(device, weights):
    # no local runtime loads these, and no data-centre engine runs on a Mac or a CPU: they were answered by the
    # data-centre serving model with its GPU efficiencies, stating no runtime
    with pytest.raises(InputError, match="weights") as error:
        _ask(device=device, weights=weights)
    assert "q4_k_m" in str(error.value)


def test_gpt_oss_published_mxfp4_runs_under_llama_cpp_on_a_mac_and_a_cpu():
    # gpt-oss ships in MXFP4, which ggml stores as its own block type and llama.cpp runs
    # (../shared/data/local-inference-measurements.csv line 705: gpt-oss-20b-MXFP4.gguf on an M4 Pro via llamacpp)
    for device in ("apple-m4-pro-20c-gpu", "Ryzen 9 7950X"):
        r = estimate_inference(InferenceRequest(model="gpt-oss-20b", device=device, prompt_len=512, output_len=128))
        assert r.weights == "mxfp4" and r.decode_tokens_per_s.expected > 0
        assert next(a for a in r.assumptions if a.name == "runtime").value.startswith("llama.cpp, not given")


def test_two_macs_are_not_one_machine():
    # a count of Apple chips was answered as one machine's layer split (or MLX's tensor parallel), the network between
    # them neglected; the refusal names count
    for weights in ("q4_k_m", "mlx-q4"):
        with pytest.raises(InputError, match="count"):
            _ask(model="llama-3-70b", device="apple-m2-ultra-gpu", count=2, weights=weights)


def test_two_cpus_are_not_one_layer_split():
    # a count of CPUs under llama.cpp was answered as a layer split over two CPUs, each holding half the layers in its
    # own memory with nothing between them; a CPU-only run is one machine's cores, so the refusal names count
    with pytest.raises(InputError, match="count"):
        _ask(model="llama-3-8b", device="ryzen-9-7950x", count=2, weights="q4_k_m")
    assert _ask(model="llama-3-8b", device="ryzen-9-7950x", count=1, weights="q4_k_m").decode_tokens_per_s.expected > 0


def test_the_prefill_a_local_answer_states_is_the_one_it_times():
    # llama.cpp runs each prompt in micro-batches, one sequence after another, which is how the time to first token
    # is computed; the answer said "all prompts of the batch at once", the data-centre engine's prefill
    one, two = _ask(device="RTX 4090", batch=1), _ask(device="RTX 4090", batch=2)
    note = next(a for a in two.assumptions if a.name == "prefill").value
    assert "passes of 512 tokens" in note and "one after another" in note and "at once" not in note
    assert two.time_to_first_token.expected == pytest.approx(2 * one.time_to_first_token.expected, rel=1e-9)


def test_an_offloaded_run_shows_the_cards_and_the_hosts_share_of_layers_weights_and_kv_cache():
    # 70B Q4_K_M with 60 of 80 layers on two RTX 4090s: the host's share was only a sentence in the assumptions
    r = _ask(model="llama-3-70b", device="RTX 4090", count=2, gpu_layers=60, prompt_len=1024, output_len=256)
    cards, host = r.per_device[:-1], r.per_device[-1]
    assert [c.layers for c in cards] == [30, 30] and host.layers == 20 and host.device == "AMD Ryzen 9 7950X"
    assert all(c.memory.value == pytest.approx(r.memory_per_device.value) for c in cards)
    # every weight is on a card or on the host: two cards' halves of 60 layers' and the host's 20 layers' bytes
    whole = _ask(model="llama-3-70b", device="H100 SXM").weights_memory.value  # all 80 layers on one device
    assert 2 * cards[0].weights_memory.value + host.weights_memory.value == pytest.approx(whole, rel=1e-6)
    assert host.kv_cache_memory.value == pytest.approx(r.kv_cache_memory.value * 2 * 20 / 60, rel=1e-6)
    # the answer is still for the two cards, not for "RTX 4090 + 7950X"
    assert r.device == "NVIDIA GeForce RTX 4090" and r.count == 2 and r.cost_per_million_tokens is not None


def test_the_data_centre_default_is_stated_as_the_runtime_too():
    # bf16 on an RTX 4090 is sized by the data-centre model under vLLM's memory shares: the answer named no runtime
    # at all, where the contract says the default is chosen by device and format and stated
    card = next(a for a in _ask(device="RTX 4090", weights="bf16").assumptions if a.name == "runtime").value
    assert card.startswith("vllm, not given") and "--runtime llama.cpp" in card
    tpu = next(a for a in _ask(device="tpu-v5e", weights="bf16").assumptions if a.name == "runtime").value
    assert tpu.startswith("vllm, not given") and "llama.cpp" not in tpu  # llama.cpp does not run on a TPU
    named = next(a for a in _ask(device="RTX 4090", weights="bf16", runtime="sglang").assumptions if a.name == "runtime")
    assert named.value.startswith("sglang (given)")


def test_a_local_runtime_holds_one_micro_batch_of_activations_not_a_serving_chunk():
    # llama.cpp sizes its compute buffers for one micro-batch (-ub 512), where a data-centre engine prefills chunks of
    # up to 8192 tokens: 70B Q4_K_M on two RTX 3090s with an 8k prompt was "does not fit" for 1.4 GB of activations
    long, short = (_ask(model="llama-3-70b", device="RTX 3090", count=2, prompt_len=p) for p in (8192, 1024))
    assert long.fits and long.activations_memory.value == pytest.approx(short.activations_memory.value)
    assert "one micro-batch of 512" in next(a for a in long.assumptions if a.name == "activations").value
    served = [_ask(model="llama-3-70b", device="H100 SXM", count=2, weights="bf16", prompt_len=p) for p in (8192, 1024)]
    assert served[0].activations_memory.value > 4 * served[1].activations_memory.value  # the engine's chunk grows
