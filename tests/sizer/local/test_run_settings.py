"""A local runtime's run settings: flash attention, the prompt micro-batch and CPU threads."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.facade import InferenceRequest, estimate_inference
from sizer.hardware.catalog import load_catalog
from sizer.local.machine import local_table, run_settings
from sizer.passes.arithmetic import SCORE_BYTES_UNFUSED, unfused_attention_seconds
from sizer.runtimes import runtime
from sizer.runtimes.formats import weight_format
from sizer.workloads.registry import find_model


def _ask(**fields):
    base = dict(model="llama-3-8b", weights="q4_k_m", batch=1, prompt_len=512, output_len=128, device="RTX 4090")
    return estimate_inference(InferenceRequest(**{**base, **fields}))


def _note(result, name):
    return next(a for a in result.assumptions if a.name == name).value


def test_defaults_are_the_runtime_s_and_are_stated():
    r = _ask()
    assert _note(r, "flash attention").startswith("on (llama.cpp's default)")
    assert "passes of 512 tokens (llama.cpp's default" in _note(r, "micro-batch")


def test_flash_attention_off_costs_more_the_deeper_the_context():
    # unfused attention moves its scores through memory: L h q k x 16 B per pass, k growing with depth
    shallow_on, shallow_off = _ask(), _ask(flash_attention=False)
    deep_on, deep_off = _ask(depth=8192), _ask(depth=8192, flash_attention=False)
    loss_shallow = shallow_on.prefill_tokens_per_s.expected / shallow_off.prefill_tokens_per_s.expected
    loss_deep = deep_on.prefill_tokens_per_s.expected / deep_off.prefill_tokens_per_s.expected
    assert 1.0 < loss_shallow < loss_deep
    assert deep_off.decode_tokens_per_s.expected < deep_on.decode_tokens_per_s.expected
    assert _note(deep_off, "flash attention").startswith("off")


def test_unfused_scores_time_is_their_bytes_over_the_bandwidth():
    arch, device, fmt = find_model("llama-3-8b"), load_catalog().find("RTX 4090"), weight_format("q4_k_m")
    table = local_table(device, fmt, runtime("llama.cpp").profile)
    seconds = unfused_attention_seconds(arch, table, 512, 1024)
    # 32 layers x 32 heads x 512 queries x 1024 keys x 16 B, at the table's reached bandwidth
    assert seconds == pytest.approx(32 * 32 * 512 * 1024 * SCORE_BYTES_UNFUSED / float(table.bandwidth[0]))


def test_smaller_micro_batches_read_the_weights_more_often():
    assert _ask(ubatch=128).prefill_tokens_per_s.expected < _ask(ubatch=512).prefill_tokens_per_s.expected
    assert "passes of 128 tokens (given" in _note(_ask(ubatch=128), "micro-batch")


@pytest.mark.parametrize("field, value", [("flash_attention", False), ("ubatch", 256), ("threads", 8)])
def test_a_serving_engine_has_no_such_switch(field, value):
    with pytest.raises(InputError, match=f"^{field}: .*no switch"):
        _ask(device="H100 SXM", weights="fp8", **{field: value})


def test_mlx_has_no_flash_attention_switch_but_a_prefill_step():
    with pytest.raises(InputError, match="^flash_attention: .*mlx has no switch"):
        _ask(device="apple-m4-max-40c-gpu", weights="mlx-q4", flash_attention=False)
    assert "passes of 1024 tokens (given" in _note(_ask(device="apple-m4-max-40c-gpu", weights="mlx-q4", ubatch=1024),
                                                   "micro-batch")


def test_threads_only_on_a_cpu_and_ubatch_at_most_the_batch():
    with pytest.raises(InputError, match="^threads: .*CPU device"):
        _ask(threads=8)
    with pytest.raises(InputError, match="^ubatch: .*logical batch of 2048"):
        _ask(ubatch=4096)


def test_run_settings_without_a_local_runtime_and_nothing_given():
    assert run_settings(None, load_catalog().find("H100 SXM")) == (None, [])


def test_cpu_threads_never_speed_up_when_taken_away():
    cpu = dict(device="Ryzen 9 7950X", weights="q4_0")
    answers = [_ask(threads=t, **cpu) for t in (1, 2, 4, 8, 16, 32)]
    prompt = [r.prefill_tokens_per_s.expected for r in answers]
    decode = [r.decode_tokens_per_s.expected for r in answers]
    assert prompt == sorted(prompt) and decode == sorted(decode)
    assert prompt[4] == pytest.approx(2 * prompt[3], rel=0.01)  # compute: 16 cores against 8
    assert decode[4] == pytest.approx(decode[3])  # bandwidth saturated from ~6 threads
    assert prompt[5] == pytest.approx(prompt[4])  # no more than the 16 physical cores
    assert _ask(**cpu).prefill_tokens_per_s.expected == pytest.approx(prompt[4])  # default: the physical cores
    assert "16 (not given: the 16 physical cores)" in _note(_ask(**cpu), "threads")


def test_cli_options(cli):
    ok = cli("inference", "--model", "llama-3-8b", "--device", "Ryzen 9 7950X", "--weights", "q4_0",
             "--no-flash-attention", "--ubatch", "256", "--threads", "8", "--json")
    assert ok.exit_code == 0, ok.output
    assert "passes of 256 tokens" in ok.output and '"threads"' in ok.output
    bad = cli("inference", "--model", "llama-3-8b", "--device", "H100 SXM", "--no-flash-attention")
    assert bad.exit_code == 2 and "Traceback" not in bad.output and "flash_attention" in bad.output


def test_http_fields():
    from fastapi.testclient import TestClient

    from api.app import create_app

    body = {"model": "llama-3-8b", "weights": "q4_k_m", "device": "RTX 4090", "prompt_len": 512, "output_len": 128}
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        ok = client.post("/v1/inference", json={**body, "flash_attention": False, "ubatch": 256})
        zero = client.post("/v1/inference", json={**body, "ubatch": 0})
        word = client.post("/v1/inference", json={**body, "flash_attention": "sometimes"})
        serving = client.post("/v1/inference", json={**body, "device": "H100 SXM", "weights": "fp8", "threads": 8})
    assert ok.status_code == 200, ok.text
    assert zero.status_code == 422 and zero.json()["detail"][0]["loc"][:2] == ["body", "ubatch"], zero.text
    assert word.status_code == 422 and "flash_attention" in word.text, word.text
    assert serving.status_code == 422 and "threads" in serving.text, serving.text


def test_flash_attention_off_slows_a_split_over_unequal_cards_too():
    cards = dict(model="llama-3-70b", device=None, devices=["RTX 3090", "RTX 4090"], depth=8192)
    on, off = _ask(**cards), _ask(flash_attention=False, **cards)
    assert off.decode_tokens_per_s.expected < on.decode_tokens_per_s.expected
    assert off.prefill_tokens_per_s.expected < on.prefill_tokens_per_s.expected


@pytest.mark.parametrize("extra", [dict(gpu_layers=16), dict(rate=0.5)])
def test_settings_refused_where_the_answer_would_not_use_them(extra):
    with pytest.raises(InputError, match="^ubatch: .*one static batch"):
        _ask(ubatch=256, **extra)


def test_threads_drive_the_layers_offloaded_to_the_host_cpu():
    # with --gpu-layers the layers kept off the card run on the host CPU's threads (llama.cpp -t); they were refused
    # as if the GPU alone computed
    offloaded = dict(model="llama-3.1-70b", weights="q4_k_m", device="RTX 4090", gpu_layers=40)
    decode = [_ask(threads=t, **offloaded).decode_tokens_per_s.expected for t in (2, 4, 16)]
    assert decode[0] < decode[1] <= decode[2]
    assert "4 (given)" in _note(_ask(threads=4, **offloaded), "threads")
