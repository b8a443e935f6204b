"""Options shared by several commands, and the one place domain errors become exit code 2."""
from __future__ import annotations

from typing import Annotated, Optional

import typer
from typer.core import TyperGroup

HELP_SETTINGS = {"max_content_width": 120}
"""Help wraps to the terminal (COLUMNS included), up to 120 columns."""


class HelpGroup(TyperGroup):
    """Lists each command with its whole first line of help, wrapped, instead of click's cut-off summary.

    Help is click's plain formatter (the Typer apps set ``rich_markup_mode=None``): it wraps option
    names and texts to the terminal instead of cutting them with "…" as rich's panels do at 80 columns.
    """

    def format_commands(self, ctx, formatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, (command.short_help or command.help or "").strip().split("\n\n")[0].replace("\n", " ")))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

StatePrecisionOption = Annotated[Optional[str], typer.Option("--state-precision", help="Precision of the training state: mixed (16-bit weights and gradients, FP32 master weights and optimizer states; the default) or bf16 (every state in bf16, no master copy, as torchtune runs). FP8 compute with FP32 master: --precision fp8.")]
OptimizerInBackwardOption = Annotated[Optional[bool], typer.Option("--optimizer-in-backward", help="The optimizer step fused into the backward pass: one tensor's gradient at a time, no gradient accumulation (torchtune optimizer_in_bwd).")]
OffloadParamsOption = Annotated[Optional[bool], typer.Option("--offload-params", help="Parameters, gradients and optimizer states in host memory (FSDP CPUOffload, ZeRO-Infinity offload_param).")]
OffloadActivationsOption = Annotated[Optional[bool], typer.Option("--offload-activations", help="Saved activations in host memory, two blocks' worth on the device (torchtune activation offloading).")]
LossOption = Annotated[Optional[str], typer.Option("--loss", help="standard (FP32 logits and their gradient; the default), chunked (torchtune's chunked cross-entropy) or fused (Liger / Cut Cross-Entropy: no logits held).")]


FrameworkOption = Annotated[Optional[str], typer.Option("--framework", help="The training framework whose documented recipe sets what is not given (state precision, optimizer, loss, recomputation, sharding) and whose layouts the search keeps to: torchtune, unsloth, axolotl, llama-factory, hf-trainer, deepspeed, fsdp, megatron, nemo, torchtitan, maxtext or litgpt.")]
SampleTokensOption = Annotated[Optional[int], typer.Option("--sample-tokens", min=1, help="Mean real tokens of a sample padded to --seq-len (padded batches: the rest is padding, computed but not learned from). Leave out for packed or full-length sequences.")]


def recipe_fields(state_precision, optimizer_in_backward, offload_params, offload_activations, loss,
                  sample_tokens=None) -> dict:
    """The recipe options as request fields (None where not given: the defaults stay the request's)."""
    return {"state_precision": state_precision, "optimizer_in_backward": optimizer_in_backward or None,
            "offload_params": offload_params or None, "offload_activations": offload_activations or None, "loss": loss,
            "sample_tokens": sample_tokens}


HaveOption = Annotated[Optional[list[str]], typer.Option("--have", help="Hardware you already have, e.g. '8x A100 80GB SXM' (repeatable): the answer is for it only, with what would make the job work there.")]
HostMemoryOption = Annotated[Optional[str], typer.Option("--host-memory", help="RAM of one host, e.g. '128 GB': checked against what --offload (or an offload suggestion) puts there, or the layers --gpu-layers leaves on the host. Default: the --system node type's, else assumed equal to the memory of the devices on the host (training); the --host-cpu's catalog figure (inference).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
CatalogOption = Annotated[Optional[str], typer.Option("--catalog", help="A YAML file adding or overriding devices (also SIZER_CATALOG).")]
DeviceOption = Annotated[str, typer.Option("--device", "-d", help="Device id or any unambiguous part of its name, e.g. 'A100 80GB SXM'.")]
CountOption = Annotated[int, typer.Option("--count", "-n", min=1, max=1_000_000, help="Number of devices (data parallel).")]
PrecisionOption = Annotated[Optional[str], typer.Option("--precision", "-p", help="mixed (bf16, else fp16; the default), fp32, tf32, fp16, bf16, fp8 or fp4. With --have and none given: the best the hardware runs (mixed or fp8).")]
ModelOption = Annotated[Optional[str], typer.Option("--model", "-m", help="A model by name: a built-in preset (llama-3.3-70b, gpt3-175b, bert-large ...) or a shipped Hugging Face config by hub id or short name (Qwen/Qwen3-32B, qwen3-32b, deepseek-r1); `sizer models` lists them. Or a config.json path.")]
ZeroOption = Annotated[Optional[int], typer.Option("--zero", min=0, max=3, help="ZeRO stage 0-3 (FSDP FULL_SHARD is 3).")]
TpOption = Annotated[Optional[int], typer.Option("--tp", min=1, max=1024, help="Tensor-parallel size (Megatron style, sequence parallel). No layout given: the search chooses.")]
PpOption = Annotated[Optional[int], typer.Option("--pp", min=1, max=1024, help="Pipeline-parallel stages (1F1B).")]
InterleaveOption = Annotated[Optional[int], typer.Option("--interleave", min=1, max=64, help="Virtual pipeline chunks per stage (interleaved 1F1B). Not given: the search chooses.")]
CpOption = Annotated[Optional[int], typer.Option("--cp", min=1, max=1024, help="Context-parallel size (ring attention over the sequence). Not given: the search chooses.")]
RecomputeOption = Annotated[Optional[str], typer.Option("--recompute", help="Activation recomputation: none, selective or full.")]
EpOption = Annotated[Optional[int], typer.Option("--ep", min=1, max=1024, help="Expert-parallel size (a mixture of experts): divides the experts and the data-parallel size. No layout given: the search chooses.")]
DpOption = Annotated[Optional[int], typer.Option("--dp", min=1, help="Data-parallel size (default: count / (tp x pp)).")]
MethodOption = Annotated[Optional[str], typer.Option("--method", help="full (every weight trained; the default), lora or qlora (adapters over a frozen base; QLoRA's in 4-bit NF4). With --have and none given: the best that fits a fine-tune.")]
LoraRankOption = Annotated[Optional[int], typer.Option("--lora-rank", min=1, max=65536, help="LoRA rank r (default 8 for lora, 64 for qlora).")]
LoraTargetsOption = Annotated[Optional[str], typer.Option("--lora-targets", help="Adapted matrices: q,k,v,o,gate,up,down, attention, mlp or all-linear (default q,v for lora, all-linear for qlora).")]
MicroBatch = Annotated[Optional[str], typer.Option("--micro-batch", help="Samples per device per pass (sequences for a language model); default: the largest that fits.")]

Params = Annotated[Optional[str], typer.Option("--params", help="Parameters, e.g. 7e9, 7B or '70 billion'.")]
Samples = Annotated[Optional[str], typer.Option("--samples", help="Training samples per epoch.")]
Epochs = Annotated[str, typer.Option("--epochs", help="Passes over the samples.")]
PricingOption = Annotated[str, typer.Option("--pricing", help="rent (cloud prices only; devices without one listed apart), "
                                            "buy (amortised purchase plus energy) or any (rent, else the amortised purchase, labelled).")]
TermOption = Annotated[Optional[list[str]], typer.Option("--term", help="Offer terms a rent may have: on-demand "
                                                          "(default), spot, reserved, 'reserved 1 year', 'reserved 3 "
                                                          "years'; repeat for several.")]
Tokens = Annotated[Optional[str], typer.Option("--tokens", help="Training tokens (language models), instead of --samples.")]
BatchSize = Annotated[Optional[str], typer.Option("--batch-size", help="Global batch per step: '1536 sequences', '4M tokens' or '512 samples' (a bare number counts tokens with --tokens, else samples).")]
Optimizer = Annotated[Optional[str], typer.Option("--optimizer", help="sgd, momentum, adam (the default), adamw, adagrad, rmsprop, lion, adafactor, or bitsandbytes' adam-8bit, adamw-8bit, paged-adamw, paged-adamw-8bit (paged states live in unified memory, counted as host memory).")]
SeqLen = Annotated[Optional[int], typer.Option("--seq-len", min=1, help="Sequence length of a token workload.")]
ForwardPerSample = Annotated[Optional[str], typer.Option("--forward-flops-per-sample", help="Forward FLOP per sample, if known (convolutions, attention).")]
ActivationMemory = Annotated[Optional[str], typer.Option("--activation-memory-per-sample", help="Activation memory per sample, e.g. '12 MB'.")]
SampleSize = Annotated[Optional[str], typer.Option("--sample-size", help="Bytes of one stored sample, e.g. '150 kB' (host-side check).")]
Derating = Annotated[Optional[float], typer.Option("--derating", help="Fraction lost from peak (default range 0.15-0.25, expected 0.20).")]


def workload_request(cls=None, **fields):
    """Build a WorkloadRequest (or subclass) from CLI options, dropping options not given; a --model
    or --workload that names a file becomes a file reference here, at the edge (sizer.workloads.source).
    Every bad option is named at once (sizer.workloads.field_check), one line each."""
    from sizer.facade import WorkloadRequest, every_bad_field

    cls = cls or WorkloadRequest
    return every_bad_field(cls, sources({k: v for k, v in fields.items() if v is not None}))


def sources(fields: dict) -> dict:
    """``fields`` with ``model`` and ``workload`` read as the command line means them: a file path
    (``config.json``, a profile ``.yaml``, any existing file) or a name (a hub id such as ``Qwen/Qwen3-32B``
    the registry knows stays a name). Each reader is imported only where its field is given (the model
    registry is not loaded by a question without a model)."""
    from sizer import facade

    for name, reader in (("model", "model_source"), ("workload", "profile_source")):
        if fields.get(name) is not None:
            fields[name] = getattr(facade, reader)(fields[name])
    return fields


def answer_owned(request, catalog_file: str | None, json: bool) -> None:
    """Answer a request with ``have`` for that hardware only, as JSON or tables."""
    from sizer.facade import answer_owned as run

    return show_owned(run(request, load(catalog_file)), json)


def show_owned(result, json: bool) -> None:
    """An answer on the hardware one has (``have``), as JSON or tables."""
    from . import output, owned_output

    return output.emit_json(result) if json else owned_output.owned(result)


def load(catalog_file: str | None):
    """The catalog with the user's file (or SIZER_CATALOG) merged in."""
    from sizer.facade import load_catalog

    return load_catalog(catalog_file)


WorkloadOption = Annotated[Optional[str], typer.Option("--workload", help=(
    "Workload profile: a built-in name (vgg16, resnet-101, vit-b16, distilbert ...; `sizer workloads` lists them), "
    "torchvision:NAME, timm:NAME or hf:NAME (profiled on the fly; needs torch and the library), "
    "mlp:W1,W2,... (layer widths, no torch) or a profile YAML file."))]
CalibrationOption = Annotated[Optional[str], typer.Option("--calibration", help="Calibration file from `sizer calibrate`.")]


def load_calibration_file(path: str | None):
    """The calibration a file holds, or None."""
    if path is None:
        return None
    from sizer.facade import load_calibration

    return load_calibration(path)


InterruptionsOption = Annotated[Optional[bool], typer.Option(
    "--interruptions/--no-interruptions",
    help="Also show the training time with interruptions (failures, checkpoints, restarts); default: where the run "
         "expects at least one failure (about 50,700 device-hours).")]
