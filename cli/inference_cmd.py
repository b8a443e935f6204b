"""`sizer inference`: memory, time to first token and tokens/s of serving a model."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from cli import output, owned_output
from cli.common import CatalogOption, HaveOption, JsonOption, ModelOption, Params, answer_owned, load

Weights = Annotated[str, typer.Option("--weights", help="fp32, bf16, fp16, fp8, int8, int4, q4_0, q4_k_m, q8_0, gptq-int4-g128, awq-int4-g128, nvfp4 ...")]
KvCache = Annotated[str, typer.Option("--kv-cache", help="KV-cache storage: fp32, bf16, fp16, fp8 or int8.")]
PromptLen = Annotated[int, typer.Option("--prompt-len", min=1, max=10_000_000, help="Prompt tokens per sequence.")]
OutputLen = Annotated[int, typer.Option("--output-len", min=1, max=10_000_000, help="Generated tokens per sequence.")]


def inference(model: ModelOption = None, params: Params = None, device: Annotated[Optional[str], typer.Option("--device", "-d", help="Device id or any unambiguous part of its name (or --have).")] = None, count: Annotated[int, typer.Option("--count", "-n", min=1, max=1024, help="Devices, tensor parallel.")] = 1,
              weights: Weights = "bf16", kv_cache: KvCache = "fp16",
              batch: Annotated[int, typer.Option("--batch", min=1, max=1_000_000, help="Concurrent sequences.")] = 1,
              prompt_len: PromptLen = 1024, output_len: OutputLen = 256,
              rent_price: Annotated[Optional[str], typer.Option("--rent-price", help="Per device, e.g. '2.5 USD/hour'.")] = None,
              have: HaveOption = None, catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Serving a model: memory per device, time to first token, decode tokens/s, cost per token."""
    from sizer.facade import InferenceRequest, estimate_inference

    fields = dict(model=model, params=params, device=device, count=count, weights=weights, kv_cache=kv_cache, batch=batch,
                  prompt_len=prompt_len, output_len=output_len, rent_price=rent_price, have=have)
    request = InferenceRequest(**{k: v for k, v in fields.items() if v is not None})
    if have:
        return answer_owned(request, catalog, json)
    result = estimate_inference(request, load(catalog))
    if json:
        return output.emit_json(result)
    turn = "-" if result.compute_bound_batch is None else result.compute_bound_batch
    output.key_values(f"Serving {result.model} ({result.weights}, KV {result.kv_cache}) on {result.device} x {result.count}, "
                      f"batch {result.batch}, {result.prompt_len} in / {result.output_len} out", [
        ("weights", output.qty(result.weights_memory)), ("KV cache", output.qty(result.kv_cache_memory)),
        ("activations", output.qty(result.activations_memory)), ("runtime reserve", output.qty(result.reserve_memory)),
        ("memory per device", output.qty(result.memory_per_device)), ("device memory", output.qty(result.device_memory)),
        ("verdict", "fits" if result.fits else "does NOT fit"), ("largest batch that fits", result.max_batch),
        ("time to first token", output.rng(result.time_to_first_token)),
        ("prefill tokens/s", output.rng(result.prefill_tokens_per_s)),
        ("decode tokens/s per sequence", output.rng(result.decode_tokens_per_s)),
        ("decode latency per token", output.rng(result.decode_latency)),
        ("total output tokens/s", output.rng(result.total_tokens_per_s)),
        ("decode bound at this batch", result.decode_bound), ("batch where decode turns compute-bound", turn),
        ("cost per million output tokens", "-" if result.cost_per_million_tokens is None else output.rng(result.cost_per_million_tokens)),
        ("energy per output token", output.rng(result.energy_per_token))])
    owned_output.suggestions(result.suggestions)
    output.assumptions(result.assumptions)


def render_recommendation(result, top: int) -> None:
    """The ranked table of `sizer recommend --inference`."""
    rows = [(r.rank, r.name, r.count, r.batch, output.rng(r.decode_tokens_per_s), output.rng(r.total_tokens_per_s),
             output.rng(r.time_to_first_token), f"{r.memory_per_device.value:.3g} / {r.device_memory.value:.3g} GB",
             "-" if r.rent_per_hour is None else f"{r.rent_per_hour.value:.3g}",
             "-" if r.cost_per_million_tokens is None else output.rng(r.cost_per_million_tokens)) for r in result.ranked[:top]]
    output.table(f"Serving {result.model} ({result.weights}), {result.prompt_len} in / {result.output_len} out; cheapest first",
                 ("#", "device", "count", "batch", "tokens/s per user", "total tokens/s", "first token", "memory need / has",
                  "USD/hour", "USD per M tokens"), rows,
                 caption=f"{len(result.ranked)} devices serve, {len(result.rejected)} cannot; showing {min(top, len(result.ranked))}. --json for everything.")
    if result.rejected:
        output.table("Rejected", ("device", "reason"), ((r.name, r.reason) for r in result.rejected))
    output.assumptions(result.assumptions)


def register(app: typer.Typer) -> None:
    app.command()(inference)
