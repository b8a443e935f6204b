"""`sizer recommend`: which device, how many, how long, what cost."""
# No `from __future__ import annotations` here: typer reads the command's ~70 option annotations several times
# while it builds the command, and as text each is evaluated again each time (~6 ms of `sizer recommend`'s
# start-up, benchmarks/startup.py); as objects they are read as they are.
from typing import Annotated, Optional

import typer

from . import launch_output, output
from .common import (
    ActivationMemory,
    BatchSize,
    CalibrationOption,
    CatalogOption,
    Epochs,
    ForwardPerSample,
    FrameworkOption,
    HaveOption,
    HostMemoryOption,
    InterruptionsOption,
    JsonOption,
    LoraRankOption,
    LoraTargetsOption,
    MethodOption,
    MicroBatch,
    ModelOption,
    Params,
    Samples,
    SampleSize,
    SeqLen,
    TermOption,
    Tokens,
    WorkloadOption,
    load,
    load_calibration_file,
    show_owned,
    sources,
    workload_request,
)
from .inference_cmd import (
    GpuLayers,
    HostCpu,
    LengthsOpt,
    MaxRunning,
    MaxUtilisation,
    PrefixHit,
    Rate,
    RuntimeOpt,
    RuntimeVersion,
    SloE2e,
    SloPercentile,
    SloTpot,
    SloTtft,
    Split,
    ThinkTime,
    TokenBudget,
    Trace,
    TraceArrivals,
    Users,
    load_fields,
)
from .measured_options import MeasuredOnOption, MeasuredOption, MfuOption

# Options only a serving question reads (with --inference), and only a training question reads: one given to the
# other question is refused naming it, never accepted and ignored (issue 43: a training recommend took --weights 0,
# --rate 0 and --objective '' and said nothing). The fields come from the facade (sizer.facade.fields_not_read,
# derived from the request models, which refuse the same fields over HTTP and in Python); the command line's own
# names for four of them:
OPTION_OF_FIELD = {"time_to_first_token": "ttft", "context_length": "context_len", "terms": "term", "kinds": "kind"}
BOTH_QUESTIONS = ("have", "top")  # command-line options both questions read, though only the training model has them


# Options that steer the command line itself (which question, which catalog, how the answer is printed), fields of
# neither request model, so never refused. Only a shortcut (tests/cli/test_recommend_cmd.py checks that none is a
# field of either model): a training question given nothing else is checked without importing the serving request
# model, and with it the serving modules (about 0.1 s of the command's start-up, benchmarks/startup.py).
COMMAND_LINE_ONLY = ("inference", "buy", "catalog", "json")


def _refuse_options_not_asked(ctx: typer.Context, inference: bool, have: bool) -> None:
    """InputErrors naming every option given on the command line that the question asked does not read (a serving
    option without --inference, a training option with it, a search option beside --inference --have); options left
    at their defaults are not counted."""
    from sizer.facade import InputError, InputErrors, fields_not_read

    def given(fields: tuple[str, ...]) -> list[str]:  # (typer carries its own click: the source is compared by name)
        names = (OPTION_OF_FIELD.get(f, f) for f in fields if f not in BOTH_QUESTIONS)
        return [n for n in names if getattr(ctx.get_parameter_source(n), "name", "DEFAULT") not in ("DEFAULT", "DEFAULT_MAP")]

    if not inference:  # a training question: only an option the training model lacks can be foreign to it
        from sizer.facade import RecommendRequest

        training = {OPTION_OF_FIELD.get(f, f) for f in RecommendRequest.model_fields}
        if all(n in training or n in BOTH_QUESTIONS or n in COMMAND_LINE_ONLY for n in given(tuple(ctx.params))):
            return
    foreign, search = fields_not_read(inference=inference, have=have)
    question, other = ("a serving", "training") if inference else ("a training", "--inference")
    errors = [InputError(name, ctx.params[name], f"no {name.replace('_', '-')} in {question} recommendation (it is an "
                                                 f"option of {other} questions)") for name in given(foreign)]
    errors += [InputError(name, ctx.params[name], f"no {name.replace('_', '-')} with --have (the answer is for the "
                                                  "hardware one has: nothing is searched)") for name in given(search)]
    if errors:
        raise InputErrors(errors)


def recommend(ctx: typer.Context, params: Params = None, model: ModelOption = None, samples: Samples = None, epochs: Epochs = "1", tokens: Tokens = None,
              precision: Annotated[Optional[str], typer.Option("--precision", "-p", help="mixed (default: bf16, else fp16), fp32, tf32, fp16, bf16, fp8 or fp4.")] = None,
              optimizer: Annotated[Optional[str], typer.Option("--optimizer", help="sgd, momentum, adam, adamw, adagrad or rmsprop.")] = None,
              batch_size: BatchSize = None, micro_batch: MicroBatch = None, seq_len: SeqLen = None, workload: WorkloadOption = None,
              calibration: CalibrationOption = None,
              method: MethodOption = None, lora_rank: LoraRankOption = None, lora_targets: LoraTargetsOption = None,
              framework: FrameworkOption = None,
              forward_flops_per_sample: ForwardPerSample = None, activation_memory_per_sample: ActivationMemory = None,
              sample_size: SampleSize = None,
              deadline: Annotated[Optional[str], typer.Option("--deadline", help="Longest acceptable training time, e.g. '14 d'.")] = None,
              budget: Annotated[Optional[str], typer.Option("--budget", help="Most money to spend, e.g. '50000 USD'.")] = None,
              max_devices: Annotated[Optional[int], typer.Option("--max-devices", min=1, max=65536, help="Largest device count to consider (default: 64 for training; with --inference 8, the largest tensor-parallel group, as over HTTP).")] = None,
              cloud: Annotated[Optional[str], typer.Option("--cloud", help="Cloud provider for rent prices (AWS, GCP, Lambda, RunPod, Vast.ai, ...).")] = None,
              term: TermOption = None,
              pricing: Annotated[Optional[str], typer.Option("--pricing", help="rent (default: cloud prices; devices without one listed apart), buy (amortised purchase + energy) or any (rent, else buy; each cost labelled).")] = None,
              buy: Annotated[bool, typer.Option("--buy", help="Same as --pricing buy.")] = False,
              objective: Annotated[Optional[str], typer.Option("--objective", help="time, cost or pareto (default time); with --inference: cost, latency or throughput (default cost).")] = None,
              kind: Annotated[Optional[list[str]], typer.Option("--kind", help="Limit to gpu, accelerator or cpu (repeatable).")] = None,
              features: Annotated[Optional[str], typer.Option("--features", help="Input features per sample, for the K1 verdict.")] = None,
              headroom: Annotated[bool, typer.Option("--headroom", help="Reserve 25-30 % extra memory for reference copies of the weights (Jamgharyan's recommendation).")] = False,
              storage: Annotated[str, typer.Option("--storage", help="hdd, sata-ssd, nvme or ramdisk (with --sample-size).")] = "nvme",
              top: Annotated[int, typer.Option("--top", min=1, help="Rows of the ranked table to print.")] = 15,
              inference: Annotated[bool, typer.Option("--inference", help="Serve the model instead of training it (with --model or --params).")] = False,
              weights: Annotated[Optional[str], typer.Option("--weights", help="With --inference: pin the weight format, fp16, bf16, fp8, w8a8, int8, int4, q4_k_m, gptq-int4-g128 ... (default: searched: bf16, fp8 or w8a8, awq-int4-g128).")] = None,
              kv_cache: Annotated[Optional[str], typer.Option("--kv-cache", help="With --inference: pin the KV-cache storage, fp16, bf16, fp8 or int8 (default: searched: fp16, fp8).")] = None,
              prompt_len: Annotated[Optional[int], typer.Option("--prompt-len", min=1, max=10_000_000, help="With --inference: prompt tokens (default 1024; not with --lengths or --trace, which bring their own).")] = None,
              output_len: Annotated[Optional[int], typer.Option("--output-len", min=1, max=10_000_000, help="With --inference: generated tokens (default 256; not with --lengths or --trace).")] = None,
              context_len: Annotated[Optional[int], typer.Option("--context-len", min=2, help="With --inference: tokens a sequence must hold.")] = None,
              batch: Annotated[Optional[int], typer.Option("--batch", min=1, help="With --inference: concurrent sequences (default: the most that serve).")] = None,
              tokens_per_s_per_user: Annotated[Optional[float], typer.Option("--tokens-per-s-per-user", help="With --inference: decode tokens/s each sequence needs.")] = None,
              total_tokens_per_s: Annotated[Optional[float], typer.Option("--total-tokens-per-s", help="With --inference: output tokens/s over all sequences.")] = None,
              ttft: Annotated[Optional[str], typer.Option("--ttft", help="With --inference: longest time to first token, e.g. '500 ms'.")] = None,
              rate: Rate = None, users: Users = None, think_time: ThinkTime = None, lengths: LengthsOpt = None,
              trace: Trace = None, trace_arrivals: TraceArrivals = False, slo_ttft: SloTtft = None, slo_tpot: SloTpot = None, slo_e2e: SloE2e = None,
              slo_percentile: SloPercentile = 99.0, split: Split = None, max_running: MaxRunning = None,
              token_budget: TokenBudget = None, prefix_cache_hit: PrefixHit = 0.0, max_utilisation: MaxUtilisation = None,
              consumer: Annotated[bool, typer.Option("--consumer", help="With --inference: also rank consumer and workstation devices (GeForce, Radeon, Apple, RTX A6000 ...); default: data-centre devices only.")] = False,
              host_memory: HostMemoryOption = None, interruptions: InterruptionsOption = None,
              suggest: Annotated[Optional[int], typer.Option("--suggest", min=0, max=16, help="Rejected devices (the nearest to working first) that get the changes that would make them work, each evaluated again; 0: none. Not given: 3 where no device serves the question, else none.")] = None,
              gpu_layers: GpuLayers = None, host_cpu: HostCpu = None, runtime: RuntimeOpt = None,
              runtime_version: RuntimeVersion = None,
              disaggregated: Annotated[bool, typer.Option("--disaggregated", help="With --inference --rate: also size disaggregated prefill and decode pools (DistServe/Splitwise) for the leading rows.")] = False,
              mfu: MfuOption = None, measured: MeasuredOption = None, measured_on: MeasuredOnOption = None,
              emit: launch_output.EmitOption = None,
              have: HaveOption = None, catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Rank every catalog device for a workload; without workload options, a built-in default.
    With --inference: the cheapest devices and counts that serve a model at a target."""
    from sizer.facade import recommend as run
    from sizer.facade import recommend_model

    _refuse_options_not_asked(ctx, inference, bool(have))
    question = recommend_model(inference=inference, have=bool(have))  # the request model the question takes
    if inference:
        from .inference_cmd import render_recommendation

        fields = dict(model=model, params=params, weights=weights, kv_cache=kv_cache, prompt_len=prompt_len,
                      output_len=output_len, context_length=context_len, batch=batch,
                      tokens_per_s_per_user=tokens_per_s_per_user, total_tokens_per_s=total_tokens_per_s,
                      time_to_first_token=ttft, max_devices=max_devices, kinds=kind, objective=objective,
                      gpu_layers=gpu_layers, host_cpu=host_cpu, host_memory=host_memory,
                      disaggregated=disaggregated or None, pricing=pricing or ("buy" if buy else None), emit=emit,
                      consumer=consumer or None, max_utilisation=max_utilisation)
        fields.update(load_fields(rate, users, think_time, lengths, trace, slo_ttft, slo_tpot, slo_e2e, slo_percentile,
                                  split, max_running, token_budget, prefix_cache_hit, runtime, trace_arrivals,
                                  runtime_version))
        if have:  # the serving request on each set, as HTTP's recommend with "have" answers it (the load kept)
            served = {k: v for k, v in fields.items() if k in question.model_fields and v is not None}
            return show_owned(run(question(**sources(served), have=have), load(catalog)), json)
        result = run(question(**sources({k: v for k, v in fields.items() if v is not None})), load(catalog))
        if json:
            return output.emit_json(result)
        render_recommendation(result, top)
        return launch_output.show(result.launch)

    request = workload_request(question, params=params, samples=samples, tokens=tokens,
                               epochs=epochs, precision=precision,
                               optimizer=optimizer, batch_size=batch_size, seq_len=seq_len, framework=framework,
                               forward_flops_per_sample=forward_flops_per_sample,
                               activation_memory_per_sample=activation_memory_per_sample, sample_size=sample_size,
                               deadline=deadline, budget=budget, max_devices=max_devices,
                               purchase="buy" if buy else "rent", pricing=pricing, cloud=cloud, objective=objective, kinds=kind,
                               terms=term,
                               features=features, headroom=headroom, storage=storage, workload=workload, model=model,
                               micro_batch=micro_batch,
                               calibration=load_calibration_file(calibration),
                               method=method, lora_rank=lora_rank, lora_targets=lora_targets, have=have,
                               host_memory=host_memory, suggest=suggest, interruptions=interruptions, mfu=mfu,
                               measured=measured, measured_on=measured_on)
    if json and not have:  # written straight from the fields the core built, as the HTTP service writes it
        from sizer.facade import recommend_json

        return output.emit_json_bytes(recommend_json(request, load(catalog), indent=2))
    result = run(request, load(catalog))  # with have: an answer on each hardware set
    if have:
        return show_owned(result, json)
    _print_ranked(result, top)
    if result.unpriced:
        side = {"rent": "rent", "buy": "purchase", "any": "rent or purchase"}[result.pricing]
        output.table(f"Without a {side} price ({len(result.unpriced)}); not ranked by cost",
                     ("device", "count", "training time"),
                     ((r.name, r.count, output.rng(r.training_time)) for r in result.unpriced[:top]),
                     caption=f"These serve but the catalog has no {side} price for them"
                             + ("" if result.pricing == "any" else "; --pricing any or buy prices them by purchase" if side == "rent"
                                else "; --pricing rent or any prices them by rent") + ".")
    if result.rejected:
        output.table("Rejected", ("device", "reason"), ((r.name, r.reason) for r in result.rejected))
        from .owned_output import suggestions

        for r in result.rejected:  # the few nearest to working (--suggest), each change evaluated again
            suggestions(r.suggestions, f"What would make {r.name} work (each evaluated again; cheapest first)")
    if result.k1:
        output.key_values("K1 = weights / (samples x features)", [("K1", output.fmt(result.k1.k1)), ("verdict", result.k1.verdict)])
    if result.host:
        output.key_values("Host side", [("data set in RAM", output.qty(result.host.dataset_memory)),
                                        ("read rate needed", output.qty(result.host.required_read_rate)),
                                        ("advice", result.host.advice)])
    output.assumptions(result.assumptions)


def _price_said(price) -> str:
    """The kind and date of the price behind a row's cost ("on-demand 2026-11-09", "street 2026")."""
    return "" if price is None else f" [{price.kind}{', ' + price.date if price.date else ''}]"


def _price_lines(price) -> str:
    """The same, under a stacked cost in the narrow table: the kind and the date on lines of their own."""
    return "" if price is None else f"\n{price.kind}\n{price.date}"


def _print_ranked(result, top: int) -> None:
    """The ranked table; where it does not fit, count joins the device, pareto the rank, and ranges go under."""
    cost_column = {"rent": "rent cost", "buy": "buy cost (amortised + energy)", "any": "cost (rent, or (b) buy)"}[result.pricing]
    wide, narrow = [], []
    lost = any(r.training_time_with_interruptions for r in result.ranked[:top])
    for r in result.ranked[:top]:
        cost = r.cost.buy if r.price_basis == "buy" else r.cost.rent
        mark = " (b)" if result.pricing == "any" and r.price_basis == "buy" else ""
        memory = output.share(r.memory_per_device, r.device_memory)
        with_lost = (output.rng(r.training_time_with_interruptions) if r.training_time_with_interruptions else "-",) \
            if lost else ()
        wide.append((r.rank, r.name, r.count, output.rng(r.training_time), *with_lost,
                     output.rng(cost) + mark + _price_said(r.price), memory, r.bound, "*" if r.pareto else ""))
        narrow_lost = (output.rng(r.training_time_with_interruptions, stacked=True)
                       if r.training_time_with_interruptions else "-",) if lost else ()
        narrow.append((f"{r.rank}{' *' if r.pareto else ''}", f"{r.count} × {r.name}", output.rng(r.training_time, stacked=True),
                       *narrow_lost, output.rng(cost, stacked=True) + mark + _price_lines(r.price), memory, r.bound))
    marked = ("(b): no rent price, the amortised purchase cost (capital over the lifetime plus energy) instead; "
              "* marks the Pareto front of each basis. " if result.pricing == "any" else "* marks the Pareto front (time against cost). ")
    output.table(f"Recommendation ({result.workload}); ranked by {result.objective}",
                 ("#", "device", "count", "training time", *(("with interruptions",) if lost else ()), cost_column,
                  "memory need / has", "bound", "pareto"), wide,
                 narrow=(("#", "count × device", "training time", *(("with interruptions",) if lost else ()), cost_column,
                          "memory", "bound"), narrow),
                 caption=f"{len(result.ranked)} devices can do it at a known price, {len(result.unpriced)} without one, "
                         f"{len(result.rejected)} cannot; showing the top "
                         f"{min(top, len(result.ranked))}. Each device at the count and layout the assumptions name. "
                         "Ranges are expected (low–high); memory is needed / on the device; [the price's term or "
                         "purchase basis, and date]; " + marked +
                         "--json for everything." + (f" Nothing ranked: {result.limited_by}." if result.limited_by else ""))


def register(app: typer.Typer) -> None:
    app.command()(recommend)
