"""What to change when a job does not fit or misses its deadline.

Each candidate change is one edit of the request (another method, an 8-bit optimizer, ZeRO-Offload,
recomputation, more devices with the layout search, a shorter sequence, a smaller micro-batch; for
serving a weight or KV-cache format, a smaller batch, more devices) and is evaluated again by the
one engine (:func:`sizer.plan.owned.evaluate_training` / ``evaluate_serving``). Only changes that
then fit (and meet the deadline, where one was missed) are listed, cheapest first, then fastest.
Where no single change works, a few that are usually taken together are tried as one.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from sizer.asked import Asked
from sizer.choices import GGML_KV_CACHES, DeviceKind, KvCache, Method, Precision, Split
from sizer.errors import SizerError
from sizer.formulas.peaks import supported_precisions
from sizer.hardware.nodes import node_layout
from sizer.plan.owned import Outcome, Owned, evaluate_serving, evaluate_training, training_request
from sizer.plan.owned_choice import reads_as_fine_tune
from sizer.request_edits import edited, given, given_names
from sizer.results import Suggestion, unit_factor
from sizer.runtimes.formats import KV_CACHE_BYTES, WEIGHT_FORMATS, WeightFormat
from sizer.runtimes.gguf import GGUF_MIXES
from sizer.runtimes.local_runtimes import default_local_runtime
from sizer.schemas.serving import InferenceResult
from sizer.schemas.serving_requests import InferenceRequest
from sizer.schemas.time_and_memory import MemoryResult

if TYPE_CHECKING:
    from sizer.schemas.time_and_memory import MemoryRequest, TimeRequest, TimeResult

MORE_DEVICES = (2, 4, 8, 16, 32, 64)  # multiples of the given count tried, smallest first
MAX_SUGGESTED_DEVICES = 65_536
SHORTEST_SEQUENCE = 256
LAYOUT_FIELDS = ("zero", "tp", "pp", "ep", "recompute", "sharding", "offload", "hybrid_shard", "micro_batch")
EIGHT_BIT = {"adam": "adam-8bit", "adamw": "adamw-8bit", "paged-adamw": "paged-adamw-8bit"}
Change = tuple[str, dict[str, Any]]  # a description and the edit of the request that makes the change


def _training_changes(request: TimeRequest, have: Owned, outcome: Outcome, missed_deadline: bool) -> list[Change]:
    """(description, request edit) of every single change worth evaluating."""
    changes: list[Change] = []
    chosen = given_names(request)
    fixed = [k for k in LAYOUT_FIELDS if k in chosen]
    if fixed:
        changes.append(("let sizer choose the layout (ZeRO stage, recomputation, micro-batch)", {k: None for k in fixed}))
    if not missed_deadline:
        changes += _memory_changes(request, have, outcome)
    precision = given(request, "precision", Precision.MIXED)
    if missed_deadline and precision is not Precision.FP8 and Precision.FP8 in supported_precisions(have.device):
        changes.append(("train in fp8 (Transformer Engine-style scaling; check convergence)", {"precision": "fp8"}))
    return changes + _more_devices(request, have)


def _memory_changes(request: TimeRequest, have: Owned, outcome: Outcome) -> list[Change]:
    """The changes that need less memory on the same hardware, in the order tried: the method, the
    optimizer, recomputation, offload, the recipe, shorter sequences, a smaller micro-batch.

    Parameters
    ----------
    request : TimeRequest
        The training request (typed values; a field the user gave is :func:`~sizer.request_edits.given`).
    have : Owned
        The hardware (its device decides whether offload is possible).
    outcome : Outcome
        The request evaluated (its sequence length, whether it reads as a fine-tune).
    """
    transformer = request.model is not None or request.tokens is not None
    method = given(request, "method", Method.FULL)
    timed = request.samples is not None or request.tokens is not None
    changes = _method_changes(request, outcome, method)
    changes += _recompute_and_offload_changes(request, have, method, transformer, timed)
    from sizer.frameworks.suggest import framework_changes

    changes += framework_changes(request, have.count)  # a framework's whole recipe first (one option to type)
    changes += recipe_changes(request, timed)
    if transformer:
        changes += _sequence_changes(request, outcome)
    micro = given(request, "micro_batch")
    if micro is not None and float(micro) > 1:
        changes.append(("a micro-batch of 1 (gradient accumulation makes up the batch)", {"micro_batch": 1}))
    return changes


def _method_changes(request: TimeRequest, outcome: Outcome, method: Method) -> list[Change]:
    """Adapters instead of every weight (for a fine-tune only) and 8-bit optimizer states.

    Parameters
    ----------
    request : TimeRequest
        The training request (typed values; a field the user gave is :func:`~sizer.request_edits.given`).
    outcome : Outcome
        The request evaluated (whether it reads as a fine-tune).
    method : Method
        The fine-tuning method asked (full, lora, qlora).
    """
    changes: list[Change] = []
    # adapters for a fine-tune only: a pre-training run (20 tokens per parameter or more) trains every weight
    adapters = method is not Method.FULL or reads_as_fine_tune(request, outcome)
    if adapters and method is Method.FULL:
        changes.append(("fine-tune with LoRA adapters instead of every weight (Hu et al. 2021)", {"method": "lora"}))
    if adapters and method in (Method.FULL, Method.LORA):
        changes.append(("QLoRA: adapters over a 4-bit NF4 base (Dettmers et al. 2023)", {"method": "qlora"}))
    optimizer = str(given(request, "optimizer", "adam")).lower()
    if optimizer in EIGHT_BIT and method is Method.FULL:
        changes.append((f"8-bit optimizer states (bitsandbytes {EIGHT_BIT[optimizer]})", {"optimizer": EIGHT_BIT[optimizer]}))
    return changes


def _recompute_and_offload_changes(request: TimeRequest, have: Owned, method: Method, transformer: bool,
                                   timed: bool) -> list[Change]:
    """Full recomputation where the layout search would not try it, and ZeRO-Offload where the device has
    a host memory apart and the run is timed.

    Parameters
    ----------
    request : TimeRequest
        The training request (typed values; a field the user gave is :func:`~sizer.request_edits.given`).
    have : Owned
        The hardware.
    method : Method
        The fine-tuning method asked.
    transformer : bool
        Whether the workload is a transformer (a model or tokens given).
    timed : bool
        Whether the request gives the samples or tokens to train on.
    """
    changes: list[Change] = []
    # the time engine's layout search already tries every recomputation unless one is pinned (or the layout
    # is given whole, with offload or hybrid sharding): only then can asking for full recomputation help
    searched = timed and given(request, "recompute") is None and not given(request, "offload") \
        and not given(request, "hybrid_shard")
    if transformer and given(request, "recompute") != "full" and not searched:
        changes.append(("recompute activations in the backward pass (full recomputation)", {"recompute": "full"}))
    # ZeRO-Offload needs a host memory of its own (not a CPU's or unified memory) and time to train; the
    # engine checks that the host holds the states (sizer.engine.offload) and the change is kept only then
    separate = have.device.kind is not DeviceKind.CPU and not have.device.unified_memory
    if not given(request, "offload") and method is Method.FULL and separate and timed:
        changes.append(("offload optimizer states and master weights to host memory (ZeRO-Offload)", {"offload": True}))
    return changes


def _sequence_changes(request: TimeRequest, outcome: Outcome) -> list[Change]:
    """Sequences of half the length, a quarter ..., down to :data:`SHORTEST_SEQUENCE` tokens, longest first.

    Parameters
    ----------
    request : TimeRequest
        The training request (typed values; a field the user gave is :func:`~sizer.request_edits.given`).
    outcome : Outcome
        The request evaluated (the sequence length it assumed, where none is given).
    """
    changes: list[Change] = []
    seq = given(request, "seq_len")
    current = int(seq) if seq else _sequence(outcome)
    shorter = current // 2 if current else None
    while shorter and shorter >= SHORTEST_SEQUENCE:
        changes.append((f"train on sequences of {shorter} tokens instead of {current}", {"seq_len": shorter}))
        shorter //= 2
    return changes


def _more_devices(request: TimeRequest, have: Owned) -> list[Change]:
    """The given count times each of :data:`MORE_DEVICES`, up to :data:`MAX_SUGGESTED_DEVICES`, the layout searched.

    Parameters
    ----------
    request : TimeRequest
        The training request (typed values; a field the user gave is :func:`~sizer.request_edits.given`).
    have : Owned
        The hardware: its device and count [1].
    """
    changes: list[Change] = []
    for factor in MORE_DEVICES:
        count = have.count * factor
        if count > MAX_SUGGESTED_DEVICES:
            break
        changes.append((f"{count} x {have.device.name} ({count - have.count} more), layout searched",
                        {"count": count, **{k: None for k in LAYOUT_FIELDS if k in given_names(request)}}))
    return changes


def recipe_changes(request: TimeRequest, timed: bool) -> list[Change]:
    """Training-state recipe changes (:mod:`sizer.engine.recipe`) a request has not made yet, offered before
    bigger hardware: each is a line of a trainer's configuration.

    Parameters
    ----------
    request : TimeRequest
        The training request (typed values; a field the user gave is :func:`~sizer.request_edits.given`).
    timed : bool
        Whether the request gives the samples or tokens to train on (the layout search then tries
        recomputation itself).

    Returns
    -------
    list of (str, dict)
        Each change as a sentence and the edit of the request that makes it, most usual first.
    """
    changes: list[Change] = []
    offloaded = bool(given(request, "offload") or given(request, "offload_params"))
    full = given(request, "method", Method.FULL) is Method.FULL
    precision = str(given(request, "precision", "mixed")).lower()
    if full and str(given(request, "state_precision", "mixed")).lower() == "mixed" and precision in ("mixed", "bf16"):
        changes.append(("pure bf16 states: weights, gradients and optimizer states in bf16, no FP32 master (torchtune "
                        "dtype bf16)", {"state_precision": "bf16"}))
    if full and not offloaded and not str(given(request, "optimizer", "adam")).lower().startswith("paged"):
        changes.append(("paged 8-bit AdamW (bitsandbytes PagedAdamW8bit): states in unified memory, paged to the host",
                        {"optimizer": "paged-adamw-8bit"}))
    if full and not offloaded and not given(request, "optimizer_in_backward"):
        changes.append(("the optimizer step in the backward pass (torchtune optimizer_in_bwd): no gradient buffer",
                        {"optimizer_in_backward": True}))
    if request.model is not None and str(given(request, "loss", "standard")).lower() == "standard":
        changes.append(("chunked cross-entropy (torchtune CEWithChunkedOutputLoss): 16-bit logits", {"loss": "chunked"}))
    if request.model is not None and not given(request, "offload_activations"):
        changes.append(("activation offload to host memory (torchtune enable_activation_offloading)",
                        {"offload_activations": True}))
    if full and not offloaded and precision in ("mixed", "bf16"):
        recompute = {} if timed else {"recompute": "full"}
        changes.append(("torchtune's low-memory recipe: pure bf16, paged 8-bit AdamW, step in backward, checkpointing",
                        {"state_precision": "bf16", "optimizer": "paged-adamw-8bit", "optimizer_in_backward": True,
                         **recompute}))
    return changes


def _sequence(outcome: Outcome) -> int | None:
    for note in getattr(outcome.result, "assumptions", []):
        if note.name == "sequence length":
            try:
                return int(str(note.value).split()[0])
            except ValueError:
                return None
    return None


def _combined(request: TimeRequest, outcome: Outcome) -> list[Change]:
    """Changes usually taken together, tried where no single one works."""
    combos: list[Change] = []
    if request.model is not None and reads_as_fine_tune(request, outcome):
        combos.append(("QLoRA with full recomputation and a micro-batch of 1",
                       {"method": "qlora", "recompute": "full", "micro_batch": 1}))
        combos.append(("QLoRA, full recomputation, micro-batch 1, sequences of 512 tokens",
                       {"method": "qlora", "recompute": "full", "micro_batch": 1, "seq_len": 512}))
    return combos


def training_suggestions(request: TimeRequest, have: Owned, question: Asked[Any], outcome: Outcome, *,
                         deadline_s: float | None = None, cloud: str | None = None) -> list[Suggestion]:
    """The changes that make a training job fit (or meet ``deadline_s`` [s]) on ``have``, each evaluated
    again by the engine; cheapest first.

    Parameters
    ----------
    request : TimeRequest
        The training request (typed values; a field the user gave is :func:`~sizer.request_edits.given`).
    have : Owned
        The hardware: its device and count [1].
    question : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): the devices and their prices, and the
        entries its request names besides its hardware.
    outcome : Outcome
        The request evaluated on ``have``.
    deadline_s : float, optional
        The deadline [s]; where the job fits, the changes that meet it.
    cloud : str, optional
        The provider whose prices cost each change.

    Returns
    -------
    list of Suggestion
        The changes that work, each with its memory per device [GB], training time and cost [USD]:
        changes on the hardware as it is first, then more devices; each group cheapest first.
    """
    missed = outcome.fits and deadline_s is not None
    found = _try(_training_changes(request, have, outcome, missed), request, have, question, deadline_s, cloud,
                 stop_at_first_count=True)
    if not missed and all("count" in s.apply for s in found):  # nothing works on the hardware as it is: try changes together
        found += _try(_combined(request, outcome), request, have, question, deadline_s, cloud, stop_at_first_count=True)
    return _ranked(found)


def _try(changes: list[Change], request: TimeRequest, have: Owned, question: Asked[Any], deadline_s: float | None,
         cloud: str | None, *, stop_at_first_count: bool) -> list[Suggestion]:
    found: list[Suggestion] = []
    done: set[str] = set()  # kinds of change already answered: the smallest count, the longest sequence that works
    for change, edit in changes:
        count = edit.get("count", have.count)
        kind = "count" if "count" in edit else "seq_len" if set(edit) == {"seq_len"} else None
        if stop_at_first_count and kind is not None and kind in done:
            continue  # tried smallest count and longest sequence first: the first that works is the suggestion
        try:
            outcome = evaluate_training(edited(request, {k: v for k, v in edit.items() if k != "count"}), have.device,
                                        count, question, cloud)
        except (SizerError, ValidationError):  # a change this request cannot take
            continue  # a change this workload cannot take (recomputation of a non-transformer ...)
        meets = outcome.meets(deadline_s)
        if not outcome.fits or meets is False:
            continue
        if kind is not None:
            done.add(kind)
        host = getattr(outcome.result, "host_memory_per_host", None)
        if host is not None:
            change += f" ({host.value:.3g} {host.unit} of host memory per host)"
        found.append(Suggestion(change=change, apply=edit, fits=True, meets_deadline=meets,
                                memory_per_device=outcome.memory_per_device, device_memory=outcome.device_memory,
                                training_time=outcome.training_time, cost=outcome.cost))
    return found


def _ranked(found: list[Suggestion]) -> list[Suggestion]:
    """Changes on the hardware as it is (a framework's recipe first, then a recipe, a method, a shorter sequence)
    before more devices; each group cheapest first."""
    def key(s: Suggestion) -> tuple[bool, bool, float, float, float]:
        cost = s.cost.expected if s.cost is not None else math.inf
        seconds = s.training_time.expected * unit_factor(s.training_time.unit, "s") if s.training_time else math.inf
        return ("count" in s.apply, "framework" not in s.apply, cost, seconds, s.memory_per_device.value)
    return sorted(found, key=key)


SERVING_WEIGHTS = ("fp8", "int8", "awq-int4-g128", "q4_k_m")
# The narrower KV caches tried, widest first: llama.cpp's ggml blocks, then the data-centre engines' 8-bit types; the
# runtime that stores the cache keeps those it stores (its refusal, sizer.runtimes), never a runtime's name compared here
NARROWER_KV = (*sorted(GGML_KV_CACHES, key=lambda k: -KV_CACHE_BYTES[k]), KvCache.FP8, KvCache.INT8)


def _kv_changes(request: InferenceRequest, have: Owned, fmt: WeightFormat) -> list[Change]:
    """The narrower KV caches the runtime storing the cache stores: the one named, else the local runtime the device
    and weights run under (llama.cpp for a GGUF mix), else the data-centre model (no ggml blocks)."""
    named = given(request, "runtime")  # the Runtime, found where the request was built
    entry = named if named is not None else default_local_runtime(have.device, fmt)[0]
    kv = KvCache(given(request, "kv_cache", "fp16"))  # typed where the request was built
    stored = [k for k in NARROWER_KV if (entry.refusal(kv_cache=k) is None if entry is not None
                                         else k not in GGML_KV_CACHES)]
    return [(f"KV cache in {k.value}", {"kv_cache": k.value}) for k in stored if k is not kv]


def _offload_change(request: InferenceRequest, have: Owned, result: InferenceResult | None) -> Change | None:
    """The most layers that fit on a GPU with separate host memory, the rest offloaded to the CPU (llama.cpp -ngl):
    device memory of the weights and KV cache scales with the layers kept, activations and reserve do not."""
    if result is None or have.device.kind is DeviceKind.CPU or have.device.unified_memory or request.rate or request.users:
        return None
    from sizer.workloads.registry import find_model

    scaled = result.weights_memory.value + result.kv_cache_memory.value
    room = result.device_memory.value - result.activations_memory.value - result.reserve_memory.value
    try:
        layers = find_model(result.model).layers if request.model else None
    except (SizerError, KeyError, LookupError):  # a model given as a config file: its layers are not looked up again
        layers = None
    if layers is None or scaled <= 0 or room <= 0:
        return None
    share = (request.gpu_layers or layers) / layers
    keep = min(math.floor(layers * room / (scaled / share)), layers - 1)
    if keep < 1:
        return None
    return (f"keep {keep} of {layers} layers on the GPU, the rest in host memory on the CPU (llama.cpp --n-gpu-layers)",
            {"gpu_layers": keep})


def serving_suggestions(request: InferenceRequest, have: Owned, question: Asked[Any], outcome: Outcome) -> list[Suggestion]:
    """The changes that make a served model fit on ``have`` (a weight or KV-cache format, a smaller
    batch, a shorter context, more devices in tensor parallel), each evaluated again; cheapest first.

    Parameters
    ----------
    request : InferenceRequest
        The serving request (typed values; its hardware is replaced by ``have``).
    have : Owned
        The hardware: its device and count [1].
    question : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): the devices and their prices, and the
        entries its request names besides its hardware.
    outcome : Outcome
        The request evaluated on ``have``.

    Returns
    -------
    list of Suggestion
        The changes that fit, each with its memory per device [GB], decode throughput [token/s] and cost
        per million output tokens [USD]; cheapest first, then fastest.
    """
    changes = _serving_changes(request, have, outcome)
    found: list[Suggestion] = []
    counted = narrowed = False
    for change, edit in changes:
        if (counted and "count" in edit) or (narrowed and "GGUF mix" in change):  # the fewest devices, the widest mix
            continue
        try:
            tried = evaluate_serving(edited(request, {k: v for k, v in edit.items() if k != "count"}), have.device,
                                     edit.get("count", have.count), question)
        except (SizerError, ValidationError):  # a change this request cannot take
            continue
        if not tried.fits:
            continue
        counted = counted or "count" in edit
        narrowed = narrowed or "GGUF mix" in change
        found.append(Suggestion(change=change, apply=edit, fits=True, memory_per_device=tried.memory_per_device,
                                device_memory=tried.device_memory, decode_tokens_per_s=tried.decode_tokens_per_s,
                                cost=tried.cost))
    return sorted(found, key=lambda s: (s.cost.expected if s.cost else math.inf,
                                        -(s.decode_tokens_per_s.expected if s.decode_tokens_per_s else 0.0)))


def _serving_changes(request: InferenceRequest, have: Owned, outcome: Outcome) -> list[Change]:
    """(description, request edit) of every serving change worth evaluating, in the order tried: weight and
    KV-cache formats, a smaller batch, layers offloaded to the CPU, shorter prompts, more devices.

    Parameters
    ----------
    request : InferenceRequest
        The serving request (typed values).
    have : Owned
        The hardware: its device and count [1].
    outcome : Outcome
        The request evaluated (its batch [sequence] and the largest that fits).
    """
    changes: list[Change] = []
    fmt: WeightFormat = given(request, "weights", WEIGHT_FORMATS["bf16"])  # the format, found where the request was built
    weights = fmt.name
    if weights.upper() in GGUF_MIXES:  # a llama.cpp user keeps to GGUF: the narrower mixes, widest first
        changes += [(f"weights in {mix.lower()} (a narrower GGUF mix)", {"weights": mix.lower()})
                    for mix in GGUF_MIXES[GGUF_MIXES.index(weights.upper()) + 1:]]
    else:
        changes += [(f"weights in {fmt}", {"weights": fmt}) for fmt in SERVING_WEIGHTS if fmt != weights]
    changes += _kv_changes(request, have, fmt)
    result = outcome.result if isinstance(outcome.result, InferenceResult) else None
    if result is not None and result.batch > 1:
        largest = max(1, int(result.max_batch))
        if largest < result.batch:
            changes.append((f"serve {largest} sequence(s) at once instead of {result.batch}", {"batch": largest}))
    offload = _offload_change(request, have, result)
    if offload is not None:
        changes.append(offload)
    prompt = int(given(request, "prompt_len", 1024))
    if prompt > 512:
        changes.append((f"prompts of at most {prompt // 2} tokens", {"prompt_len": prompt // 2}))
    split = "llama.cpp's layer split" if result is not None and result.split == Split.LAYER else "tensor parallel"
    # a Mac has one chip and a desk CPU one socket: more of them is not a change to the machine the user has
    one_chip = have.device.runtime_kind in (DeviceKind.CPU, DeviceKind.APPLE)
    per_node, _ = node_layout(have.device)
    counts = [] if one_chip else [have.count * f for f in MORE_DEVICES[:3] if have.count * f <= per_node]  # inside a node
    for count in counts:
        changes.append((f"{count} x {have.device.name} in {split} ({count - have.count} more)", {"count": count}))
    if counts:  # a full node may need lighter weights too (70B on four 24 GB cards): GGUF keeps to narrower GGUF mixes
        gguf = weights.upper() in GGUF_MIXES
        lighter = ([mix.lower() for mix in GGUF_MIXES[GGUF_MIXES.index(weights.upper()) + 1:]] if gguf
                   else [other for other in SERVING_WEIGHTS if other != weights])
        for other in lighter:
            named = f"{other} (a narrower GGUF mix)" if gguf else other
            changes.append((f"{counts[-1]} x {have.device.name} in {split} with weights in {named}",
                            {"count": counts[-1], "weights": other}))
    return changes


def unequal_devices_suggestions(asked: Asked[InferenceRequest]) -> list[Suggestion]:
    """Where a layer split over unequal devices (``devices``) does not fit: the widest narrower GGUF mix that fits on
    the same devices, evaluated again (the other changes vary one device kind's count, which these devices have not).

    Parameters
    ----------
    asked : Asked of InferenceRequest
        The serving request, with ``devices`` (found in the catalog) and GGUF ``weights``.

    Returns
    -------
    list of Suggestion
        The mix with its memory on the fullest device [GB] and decode throughput [token/s]; empty where the weights
        are not a GGUF mix or no narrower one fits.
    """
    from sizer.serving.estimate import serve

    request = asked.request
    weights = request.weights.gguf_mix if request.weights is not None else None
    if weights not in GGUF_MIXES:
        return []
    for mix in (m.lower() for m in GGUF_MIXES[GGUF_MIXES.index(weights) + 1:]):
        try:
            tried = serve(asked.again(request.model_copy(update={"weights": mix})))
        except (SizerError, ValidationError):  # a change this request cannot take
            continue
        if tried.fits:
            return [Suggestion(change=f"weights in {mix} (a narrower GGUF mix)", apply={"weights": mix}, fits=True,
                               memory_per_device=tried.memory_per_device, device_memory=tried.device_memory,
                               decode_tokens_per_s=tried.decode_tokens_per_s)]
    return []


def suggestions_for(asked: Asked[TimeRequest | MemoryRequest | InferenceRequest],
                    result: TimeResult | MemoryResult | InferenceResult) -> list[Suggestion]:
    """The changes that would make a ``time``, ``memory`` or ``inference`` answer that does not fit work on its
    device and count.

    Parameters
    ----------
    asked : Asked of TimeRequest, MemoryRequest or InferenceRequest
        The request answered, on its catalog (the devices and their prices; its device's entry).
    result : TimeResult, MemoryResult or InferenceResult
        Its answer, which does not fit.

    Returns
    -------
    list of Suggestion
        The changes that work on ``device`` (at the request's count, or more devices), cheapest first.
    """
    request, device = asked.request, asked.the_device
    have = Owned(count=request.count, device=device)
    # a memory answer's figure is its total; a time or serving answer's, its memory per device
    needed = result.total if isinstance(result, MemoryResult) else result.memory_per_device
    outcome = Outcome(fits=False, memory_per_device=needed, device_memory=result.device_memory, result=result)
    if isinstance(result, InferenceResult):
        assert isinstance(request, InferenceRequest), "a serving answer comes from a serving request"
        return serving_suggestions(request, have, asked, outcome)  # its hardware replaced by evaluate_serving
    assert not isinstance(request, InferenceRequest), "a training answer comes from a training request"
    return training_suggestions(training_request(request), have, asked, outcome, cloud=getattr(request, "cloud", None))
