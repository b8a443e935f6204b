"""`sizer inference`: memory, time to first token and tokens/s of serving a model."""
from __future__ import annotations

import math
from typing import Annotated, Optional

import typer

from . import launch_output, output, owned_output
from .common import (
    CatalogOption,
    HaveOption,
    HostMemoryOption,
    JsonOption,
    ModelOption,
    Params,
    PricingOption,
    answer_owned,
    load,
    sources,
)
from .measured_options import EfficiencyOption, MeasuredOnOption, MeasuredOption, rescaled_rows

Weights = Annotated[Optional[str], typer.Option("--weights", help="fp32, bf16, fp16, fp8, int8, int4, q4_0, q4_k_m, q8_0, gptq-int4-g128, awq-int4-g128, nvfp4, mxfp4 ... (default: the model's published checkpoint format: bf16, mxfp4 for gpt-oss).")]
KvCache = Annotated[str, typer.Option("--kv-cache", help="KV-cache storage: fp32, bf16, fp16, fp8 or int8; under llama.cpp also its q8_0 or q4_0 blocks (-ctk/-ctv).")]
PromptLen = Annotated[Optional[int], typer.Option("--prompt-len", min=1, max=10_000_000, help="Prompt tokens per sequence (default 1024; not with --lengths or --trace, which bring their own).")]
OutputLen = Annotated[Optional[int], typer.Option("--output-len", min=1, max=10_000_000, help="Generated tokens per sequence (default 256; not with --lengths or --trace).")]


Rate = Annotated[Optional[float], typer.Option("--rate", help="Requests per second, Poisson arrivals (serving under load).")]
Users = Annotated[Optional[int], typer.Option("--users", help="Concurrent users in a closed loop (instead of --rate).")]
Prompts = Annotated[Optional[int], typer.Option("--prompts", min=1, max=20_000, help="A finite benchmark of N prompts (vLLM's benchmark_serving --num-prompts, 1000 there) on the replicas given (default one): a rate above capacity queues over them.")]
RuntimeVersion = Annotated[Optional[str], typer.Option("--runtime-version", help="The serving runtime's version, e.g. 0.11.0: its generation's scheduling and fitted CPU costs apply (vLLM V0 before 0.8, V1 from 0.8); default: the profile's, stated.")]
Tuned = Annotated[bool, typer.Option("--tuned", help="Under load with --runtime tensorrt-llm: an engine built and tuned per system as NVIDIA's MLPerf harness builds it (0.9 of the matrix peak in batched iterations instead of 0.6; not verified).")]
RangeRatio = Annotated[Optional[float], typer.Option("--range-ratio", min=0.0, max=0.999, help="vLLM's random dataset (--random-range-ratio): prompt and output lengths uniform within +-R of --prompt-len and --output-len.")]
Burst = Annotated[Optional[int], typer.Option("--burst", min=1, max=20_000, help="N prompts all sent at t = 0 (a benchmark at request rate inf), instead of --rate or --users.")]
ThinkTime = Annotated[Optional[str], typer.Option("--think-time", help="With --users: pause before a user's next request, e.g. '5 s'.")]
LengthsOpt = Annotated[Optional[str], typer.Option("--lengths", help=(
    "Named length set (mean in / out tokens): sharegpt-vllm-sample (202/179, the sample vLLM and SGLang benchmarks "
    "report), sharegpt-multiturn-8k (2,666/481, long multi-turn), azure-conv (1,371/199), azure-code (2,385/24), "
    "arxiv-summarization (2,808/203), mlperf-openorca (628/294). '--lengths list' prints them with their sources."))]
Trace = Annotated[Optional[str], typer.Option("--trace", help="CSV file of prompt_len,output_len[,arrival_s] rows.")]
TraceArrivals = Annotated[bool, typer.Option("--trace-arrivals", help="Replay the --trace file's arrival_s column, its gaps scaled to --rate (default: Poisson arrivals at --rate; the column is not used).")]
SloTtft = Annotated[Optional[str], typer.Option("--slo-ttft", help="Time to first token at the percentile, e.g. '2 s'.")]
SloTpot = Annotated[Optional[str], typer.Option("--slo-tpot", help="Time per output token at the percentile, e.g. '100 ms'.")]
SloE2e = Annotated[Optional[str], typer.Option("--slo-e2e", help="End-to-end latency at the percentile, e.g. '30 s'.")]
SloPercentile = Annotated[float, typer.Option("--slo-percentile", help="Percentile the SLOs hold at.")]
Split = Annotated[Optional[str], typer.Option("--split", help="tensor (tensor parallel) or layer (llama.cpp layer split; default for GGUF).")]
MaxRunning = Annotated[Optional[int], typer.Option("--max-running", help="Scheduler's most running requests (default 256).")]
TokenBudget = Annotated[Optional[int], typer.Option("--token-budget", help="Tokens per iteration, chunked prefill (default 2048).")]
MaxUtilisation = Annotated[Optional[float], typer.Option("--max-utilisation", min=0.01, max=1.0, help="Under a load: the most share of the replicas' capacity within the SLOs the load may use when replicas are sized (default 0.7: 30 % headroom).")]
PrefixHit = Annotated[float, typer.Option("--prefix-cache-hit", help="Share of prompt tokens found in the prefix cache (0-0.95).")]
GpuLayers = Annotated[Optional[int], typer.Option("--gpu-layers", help="Layers on the GPU(s); the rest run on the host CPU (llama.cpp -ngl; default: all).")]
RuntimeOpt = Annotated[Optional[str], typer.Option("--runtime", help="llama.cpp (default for GGUF weights, CPUs and Apple silicon) or a serving engine; the choice is stated.")]
Depth = Annotated[int, typer.Option("--depth", min=0, max=10_000_000, help="Tokens already in the KV cache before the prompt (llama-bench -d).")]
DevicesOpt = Annotated[Optional[str], typer.Option("--devices", help="Unequal devices of one machine, comma-separated (e.g. 'RTX 3090,RTX 4090'): llama.cpp's layer split, in proportion to memory.")]
TensorSplit = Annotated[Optional[str], typer.Option("--tensor-split", help="With --devices: llama.cpp -ts ratios, one per device, comma-separated (e.g. '3,1'; default: by memory).")]
FlashAttention = Annotated[Optional[bool], typer.Option("--flash-attention/--no-flash-attention", help="A local runtime's fused attention (llama.cpp -fa; default: the runtime's, stated).")]
Ubatch = Annotated[Optional[int], typer.Option("--ubatch", min=1, max=10_000_000, help="Prompt tokens per pass of a local runtime (llama.cpp -ub, default 512; not --batch, the sequences).")]
Threads = Annotated[Optional[int], typer.Option("--threads", min=1, max=1024, help="CPU threads of a CPU-only llama.cpp run, or of the host CPU running the layers --gpu-layers keeps off the GPU (-t; default: the CPU's physical cores).")]
ExpertParallel = Annotated[bool, typer.Option("--expert-parallel", help="A mixture's experts split whole over the devices (SGLang --ep-size, vLLM --enable-expert-parallel; default: tensor parallel).")]
DpAttention = Annotated[bool, typer.Option("--dp-attention", help="Data-parallel attention with expert parallelism: each device runs its own sequences' attention and KV cache (SGLang --enable-dp-attention, vLLM --data-parallel-size).")]
HostCpu = Annotated[Optional[str], typer.Option("--host-cpu", help="With --gpu-layers: the catalog CPU running offloaded layers (default: Ryzen 9 7950X).")]


def load_fields(rate, users, think_time, lengths, trace, slo_ttft, slo_tpot, slo_e2e, slo_percentile, split, max_running,
                token_budget, prefix_cache_hit, runtime=None, trace_arrivals=False, runtime_version=None) -> dict:
    """The serving-under-load options as request fields; a trace file is read here, through the guarded loader."""
    from sizer.facade import read_text

    if lengths is not None and lengths.strip().lower() == "list":
        from sizer.facade import LENGTH_DISTRIBUTIONS

        for d in LENGTH_DISTRIBUTIONS.values():
            typer.echo(f"{d.label}\n    source: {d.source}")
        raise typer.Exit()
    fields = dict(rate=rate, users=users, think_time=think_time, lengths=lengths, slo_ttft=slo_ttft, slo_tpot=slo_tpot,
                  slo_e2e=slo_e2e, slo_percentile=slo_percentile, split=split, max_running=max_running,
                  token_budget=token_budget, prefix_cache_hit=prefix_cache_hit, runtime=runtime,
                  runtime_version=runtime_version,
                  trace=read_text(trace, "trace") if trace is not None else None, trace_arrivals=trace_arrivals or None)
    return {k: v for k, v in fields.items() if v is not None}


def inference(model: ModelOption = None, params: Params = None, device: Annotated[Optional[str], typer.Option("--device", "-d", help="Device id or any unambiguous part of its name (or --have).")] = None, count: Annotated[int, typer.Option("--count", "-n", min=1, max=1024, help="Devices: tensor parallel, or a layer split for GGUF weights (--split).")] = 1,
              weights: Weights = None, kv_cache: KvCache = "fp16",
              batch: Annotated[int, typer.Option("--batch", min=1, max=1_000_000, help="Concurrent sequences.")] = 1,
              prompt_len: PromptLen = None, output_len: OutputLen = None,
              rent_price: Annotated[Optional[str], typer.Option("--rent-price", help="Per device, e.g. '2.5 USD/hour'.")] = None,
              pricing: PricingOption = "rent",
              rate: Rate = None, users: Users = None, think_time: ThinkTime = None, lengths: LengthsOpt = None,
              trace: Trace = None, trace_arrivals: TraceArrivals = False, slo_ttft: SloTtft = None, slo_tpot: SloTpot = None, slo_e2e: SloE2e = None,
              slo_percentile: SloPercentile = 99.0, split: Split = None, max_running: MaxRunning = None,
              token_budget: TokenBudget = None, prefix_cache_hit: PrefixHit = 0.0, prompts: Prompts = None, burst: Burst = None,
              range_ratio: RangeRatio = None, max_utilisation: MaxUtilisation = None,
              gpu_layers: GpuLayers = None, host_cpu: HostCpu = None, host_memory: HostMemoryOption = None,
              runtime: RuntimeOpt = None, runtime_version: RuntimeVersion = None, depth: Depth = 0, devices: DevicesOpt = None, tensor_split: TensorSplit = None,
              flash_attention: FlashAttention = None, ubatch: Ubatch = None, threads: Threads = None,
              expert_parallel: ExpertParallel = False, dp_attention: DpAttention = False, tuned: Tuned = False,
              measured: MeasuredOption = None, measured_on: MeasuredOnOption = None, efficiency: EfficiencyOption = None,
              have: HaveOption = None, emit: launch_output.EmitOption = None, catalog: CatalogOption = None,
              json: JsonOption = False) -> None:
    """Serving a model: memory per device, time to first token, decode tokens/s, cost per token;
    with --rate or --users, latency percentiles, capacity and replicas under continuous batching;
    with --have, the answer on that hardware only."""
    from sizer.facade import InferenceRequest, estimate_inference

    fields = dict(model=model, params=params, device=device, count=count, weights=weights, kv_cache=kv_cache, batch=batch,
                  prompt_len=prompt_len, output_len=output_len, rent_price=rent_price, have=have, gpu_layers=gpu_layers,
                  host_cpu=host_cpu, host_memory=host_memory, runtime=runtime, depth=depth or None,
                  devices=[d.strip() for d in devices.split(",")] if devices is not None else None,
                  tensor_split=_ratios(tensor_split), pricing=pricing,
                  flash_attention=flash_attention, ubatch=ubatch, threads=threads, measured=measured,
                  measured_on=measured_on, efficiency=efficiency, emit=emit,
                  prompts=prompts, burst=burst, range_ratio=range_ratio, expert_parallel=expert_parallel or None,
                  dp_attention=dp_attention or None, max_utilisation=max_utilisation, tuned=tuned or None)
    fields.update(load_fields(rate, users, think_time, lengths, trace, slo_ttft, slo_tpot, slo_e2e, slo_percentile, split,
                              max_running, token_budget, prefix_cache_hit, runtime, trace_arrivals,
                              runtime_version))
    request = InferenceRequest(**sources({k: v for k, v in fields.items() if v is not None}))
    if have:
        return answer_owned(request, catalog, json)
    result = estimate_inference(request, load(catalog))
    if json:
        return output.emit_json(result)
    if result.scenario == "load":
        render_load(result)
        return launch_output.show(result.launch)
    # counts of sequences say so; no turn means memory-bound at every batch sizer tries (65,536 sequences)
    turn = ("- (memory-bound at every batch)" if result.compute_bound_batch is None
            else f"{result.compute_bound_batch:,} sequences")
    # unequal devices are named one by one ("RTX 3090 + RTX 4090"), never as a count of one kind
    unequal = result.per_device is not None and result.device == " + ".join(d.device for d in result.per_device)
    on = result.device if unequal else f"{result.device} x {result.count}"
    no_energy = "- (not estimated for unequal devices)" if unequal else "- (no power figure)"
    output.key_values(f"Serving {result.model} ({result.weights}, KV {result.kv_cache}) on {on}, "
                      f"batch {result.batch}, {result.prompt_len} in / {result.output_len} out", [
        *rescaled_rows(result),
        ("weights", output.qty(result.weights_memory)), ("KV cache", output.qty(result.kv_cache_memory)),
        ("activations", output.qty(result.activations_memory)), ("runtime reserve", output.qty(result.reserve_memory)),
        ("memory per device", output.qty(result.memory_per_device)), ("device memory", output.qty(result.device_memory)),
        ("verdict", "fits" if result.fits else "does NOT fit"), ("largest batch that fits", f"{result.max_batch:,} sequences"),
        ("time to first token", output.rng(result.time_to_first_token)),
        ("prefill tokens/s", output.rng(result.prefill_tokens_per_s)),
        ("decode tokens/s per sequence", output.rng(result.decode_tokens_per_s)),
        ("decode latency per token", output.rng(result.decode_latency)),
        ("total output tokens/s", output.rng(result.total_tokens_per_s)),
        ("decode bound at this batch", result.decode_bound), ("batch where decode turns compute-bound", turn),
        ("cost per million output tokens", "-" if result.cost_per_million_tokens is None else output.rng(result.cost_per_million_tokens)),
        ("energy per output token", no_energy if result.energy_per_token is None else output.rng(result.energy_per_token)),
        *((f"{d.device}", f"{d.layers} layers, {output.qty(d.memory)} of {output.qty(d.device_memory)}"
           f"{'' if d.fits else ' (does NOT fit)'}") for d in result.per_device or ())])
    owned_output.suggestions(result.suggestions)
    output.assumptions(result.assumptions)
    launch_output.show(result.launch)


def _ratios(text: str | None) -> list[float] | None:
    """``--tensor-split 3,1`` as numbers; InputError naming tensor_split for anything else."""
    if text is None:
        return None
    from sizer.facade import InputError

    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise InputError("tensor_split", text, "comma-separated numbers, one per device (e.g. '3,1')") from None


def _pct(p) -> str:
    """'p50 / p90 / p99 unit', each with its range where the answer gives one: '40.8 (28.1–191) / ...'."""
    if p is None:
        return "-"
    if p.low is None:
        return f"{p.p50:.3g} / {p.p90:.3g} / {p.p99:.3g} {p.unit}"
    return " / ".join(f"{_g(getattr(p, k))} ({_g(getattr(p.low, k))}{output.DASH}{_g(getattr(p.high, k))})"
                      for k in ("p50", "p90", "p99")) + f" {p.unit}"


def _g(value: float) -> str:
    """Three significant figures without an exponent: 0.0123, 12.3, 1,230, 12,300."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    return f"{value:,.{max(0, 2 - math.floor(math.log10(abs(value))))}f}"


def _ranged(q) -> str:
    """A figure under load with its range where it has one: '1,280 (300–1,280)'."""
    return f"{q.value:.4g}" if q.low is None else f"{_g(q.value)} ({_g(q.low)}{output.DASH}{_g(q.high)})"


def render_load(result) -> None:
    """`sizer inference --rate/--users`: latency percentiles, capacity and replicas."""
    lat, cap, ld = result.latency, result.capacity, result.load
    asked = (f"{ld.request_rate.value:g} requests/s" if ld.request_rate else
             next((a.value.split(" (")[0] for a in result.assumptions if a.name == "load"), f"{ld.users} users"))
    saturated = [("saturated", f"{cap.utilisation:.2f} x capacity: the queue grows over the benchmark")] \
        if cap.utilisation > 1 and ld.request_rate else []
    cost = result.cost_per_million_tokens
    slo = ", ".join(f"{k} {v.value:.4g} {v.unit}" for k, v in cap.slo.items()) or "none"
    output.key_values(f"Serving {result.model} ({result.weights}) on {result.device} x {result.count} ({result.split} split) "
                      f"under {asked}, {ld.prompt_len.mean:.0f} in / {ld.output_len.mean:.0f} out (mean)", [
        *rescaled_rows(result),
        ("time to first token p50/p90/p99", _pct(lat.ttft if lat else None)),
        ("time per output token p50/p90/p99", _pct(lat.tpot if lat else None)),
        ("end-to-end p50/p90/p99", _pct(lat.e2e if lat else None)),
        (f"SLOs at p{cap.percentile:g}", slo), ("SLOs met", "yes" if cap.slo_met else "NO"),
        ("max requests/s per replica", _ranged(cap.max_request_rate)),
        ("replicas", "-" if cap.replicas is None else cap.replicas), ("utilisation", f"{cap.utilisation:.0%}"), *saturated,
        ("output tokens/s (all replicas)", _ranged(result.output_tokens_per_s)),
        ("prompt + output tokens/s (all replicas)", _ranged(result.prompt_and_output_tokens_per_s)),
        ("cost per million output tokens", "-" if cost is None else f"{output.rng(cost)} ({cost.price_basis})"),
        ("energy per output token", "-" if result.energy_per_token is None else output.rng(result.energy_per_token)),
        ("memory per device", output.qty(result.memory_per_device)), ("device memory", output.qty(result.device_memory))])
    output.assumptions(result.assumptions)


def _basis(price) -> str:
    """A row's price basis and date, beside its cost: " (rent 2026-09-20)", " (buy, street 2023-10)"."""
    if price is None:
        return ""
    kind = f", {price.purchase_basis}" if price.purchase_basis else ""
    return f" ({price.price_basis}{kind}{' ' + price.date if price.date else ''})"


def render_recommendation(result, top: int) -> None:
    """The ranked table of `sizer recommend --inference`."""
    if result.scenario == "load":
        return render_load_recommendation(result, top)
    rows = [(r.rank, f"{r.name} ({r.weights}, KV {r.kv_cache})", r.count, r.batch, output.rng(r.decode_tokens_per_s), output.rng(r.total_tokens_per_s),
             output.rng(r.time_to_first_token), f"{r.memory_per_device.value:.3g} / {r.device_memory.value:.3g} GB",
             "-" if r.rent_per_hour is None else f"{r.rent_per_hour.value:.3g}" + _basis(r.price),
             "-" if r.cost_per_million_tokens is None else output.rng(r.cost_per_million_tokens)) for r in result.ranked[:top]]
    output.table(f"Serving {result.model} ({result.weights}), {result.prompt_len} in / {result.output_len} out; ranked by {result.objective}",
                 ("#", "device", "count", "batch", "tokens/s per user", "total tokens/s", "first token", "memory need / has",
                  "USD/hour (basis, date)", "USD per M tokens"), rows,
                 caption=f"{len(result.ranked)} devices serve, {len(result.rejected)} cannot; showing {min(top, len(result.ranked))}. "
                         "USD/hour per replica; rent: a cloud offer; buy: the amortised purchase plus energy. --json for everything.")
    if result.rejected:
        output.table("Rejected", ("device", "reason"), ((r.name, r.reason) for r in result.rejected))
    output.assumptions(result.assumptions)


def render_load_recommendation(result, top: int) -> None:
    """`sizer recommend --inference --rate/--users`: deployments under load, ranked by the objective."""
    def cost(r):
        c = r.cost_per_million_tokens
        return "-" if c is None else f"{c.value:.3g}" + _basis(r.price)
    rows = [(r.rank, r.name, f"{r.weights} / {r.kv_cache}", (f"{r.prefill_replicas}p+{r.decode_replicas}d x {r.count}"
                                                              if r.deployment == "disaggregated" else f"{r.replicas} x {r.count}"),
             f"{r.max_request_rate.value:.3g}" + ("" if r.capacity_searched else " (b)"),
             f"{r.utilisation:.0%} ({r.headroom:.0%})", f"{r.latency.ttft.p99:.3g}", "-" if r.latency.tpot is None else f"{r.latency.tpot.p99:.3g}", cost(r))
            for r in result.ranked[:top]]
    ld = result.load
    asked = f"{ld.request_rate.value:g} req/s" if ld.request_rate else f"{ld.users} users"
    output.table(f"Serving {result.model} ({result.weights}) at {asked}; ranked by {result.objective}",
                 ("#", "device", "weights / KV", "replicas x n", "req/s each", "load (headroom)", "TTFT p99 ms",
                  "TPOT p99 ms", "USD/M tok"), rows,
                 caption=f"{len({r.device for r in result.ranked})} devices serve, {len(result.rejected)} cannot; "
                         f"showing {min(top, len(result.ranked))} of {len(result.ranked)} rows. "
                         "rent: a cloud offer; buy: the amortised purchase plus energy (with the price's date). (b): the share of the load it was shown to meet, "
                         "not bisected (a lower bound). load (headroom): each replica's load over its capacity, and the "
                         "share left (with (b): at most, and at least). Np+Md: disaggregated, N prefill and M decode replicas. "
                         "--json for everything.")
    if result.rejected:
        output.table("Rejected", ("device", "reason"), ((r.name, r.reason) for r in result.rejected))
    output.assumptions(result.assumptions)


def register(app: typer.Typer) -> None:
    app.command()(inference)
