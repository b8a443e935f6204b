"""Answers for hardware a user already has ("8x A100 80GB SXM"): fits or not, how long, what it costs
to run, and the method, precision, layout and batch the engine chooses on it (issue 19, item 2).

The text ``"N x DEVICE"`` is parsed once, where it enters, into :class:`Owned` (a count and a
catalog device). Every answer comes from the one engine: training through
:func:`sizer.facade.estimate_time` (or :func:`~sizer.facade.estimate_memory` for a workload
without samples or tokens), serving through :func:`~sizer.facade.estimate_inference`; where the
hardware does not serve, :mod:`sizer.plan.suggestions` lists the changes that would, each
evaluated again.

>>> from sizer.hardware.catalog import load_catalog
>>> owned = parse_have(["8x A100 80GB SXM", "RTX 4090"], load_catalog())
>>> [(o.count, o.device.id) for o in owned]
[(8, 'a100-80gb-sxm4'), (1, 'rtx-4090')]
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from sizer.errors import InputError, SizerError
from sizer.hardware.catalog import Catalog
from sizer.hardware.schema import Device
from sizer.formulas.tco import hourly_price
from sizer.results import Assumption, CostOut, Model, PriceBasis, QuantityOut, RangeOut, Suggestion

MAX_HAVE = 8  # hardware sets in one question: a workstation, a lab cluster, a cloud budget ...
MAX_COUNT = 1_000_000
_HAVE = re.compile(r"^\s*(?:(\d{1,7})\s*[x×*]\s*)?(\S.*?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Owned:
    """Hardware the user has: ``count`` devices of one catalog kind."""

    count: int
    device: Device

    @property
    def label(self) -> str:
        return f"{self.count} x {self.device.name}"


def require_device(request) -> str:
    """The request's device, or an error that says to give one (or the hardware one has)."""
    if getattr(request, "device", None) is None:
        raise SizerError("device: give a device (--device, e.g. 'H100 SXM') or the hardware you have "
                         "(--have '8x A100 80GB SXM')", "device")
    return request.device


def parse_have(values: list[str] | tuple[str, ...] | str | None, catalog: Catalog, field: str = "have") -> tuple[Owned, ...]:
    """The hardware sets named by ``values`` ("8x A100 80GB SXM", "2 × RTX 4090", "T4" for one), or
    InputError naming the field and the entry at fault."""
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    if not values or len(values) > MAX_HAVE:
        raise InputError(field, values, f"1 to {MAX_HAVE} entries such as '8x A100 80GB SXM'")
    owned = []
    for i, text in enumerate(values):
        where = f"{field}[{i}]" if len(values) > 1 else field
        match = _HAVE.match(text) if isinstance(text, str) and len(text) <= 120 else None
        if match is None:
            raise InputError(where, text, "'COUNT x DEVICE', such as '8x A100 80GB SXM' or '1x RTX 4090'")
        count = int(match.group(1) or 1)
        if not 1 <= count <= MAX_COUNT:
            raise InputError(where, text, f"a device count from 1 to {MAX_COUNT:,}")
        owned.append(Owned(count=count, device=catalog.find(match.group(2), where)))
    return tuple(owned)


class OwnedOption(Model):
    """The answer for one hardware set."""

    hardware: str
    device: str
    name: str
    count: int
    fits: bool
    meets_deadline: bool | None = None
    method: str
    precision: str
    layout: dict[str, Any]  # tp, pp, dp, ZeRO, recompute, micro-batch x accumulation (training); weights, KV, batch (serving)
    memory_per_device: QuantityOut
    device_memory: QuantityOut | None
    training_time: RangeOut | None = None
    decode_tokens_per_s: RangeOut | None = None
    cost: CostOut | None = None
    verdict: str
    suggestions: list[Suggestion]


class OwnedResult(Model):
    """``have``: answers for the user's own hardware only, one per hardware set."""

    task: Literal["training", "memory", "inference"]
    workload: str
    options: list[OwnedOption]
    assumptions: list[Assumption]


@dataclass(frozen=True)
class Outcome:
    """One configuration evaluated by the engine, in the terms a suggestion or an answer shows."""

    fits: bool
    memory_per_device: QuantityOut
    device_memory: QuantityOut | None
    training_time: RangeOut | None = None
    decode_tokens_per_s: RangeOut | None = None
    cost: CostOut | None = None
    result: Any = None

    def meets(self, deadline_s: float | None) -> bool | None:
        if deadline_s is None or self.training_time is None:
            return None
        from sizer.results import unit_factor

        return self.training_time.expected * unit_factor(self.training_time.unit, "s") <= deadline_s


def run_cost(device: Device, count: int, hours: tuple[float, float, float], cloud: str | None = None) -> CostOut | None:
    """Running ``count`` devices for ``hours`` (low, expected, high) at the device's hourly price: a cloud
    price (rent) where the catalog has one, else the amortised purchase plus energy (buy)."""
    price = hourly_price(device, cloud)
    if price.hourly is None:
        return None
    per_hour = float(price.hourly.to("USD/hour").magnitude) * count
    return CostOut(low=per_hour * hours[0], expected=per_hour * hours[1], high=per_hour * hours[2], unit="USD",
                   price_basis="buy" if price.basis == "amortised purchase" else "rent", price=price.label)


TRAINING_FIELDS = ("params", "samples", "epochs", "tokens", "batch_size", "precision", "optimizer", "forward_flops_per_param",
                   "backward_factor", "forward_flops_per_sample", "seq_len", "activation_memory_per_sample", "sample_size",
                   "model", "workload", "attention", "micro_batch", "method", "lora_rank", "lora_targets",
                   "zero", "tp", "pp", "ep", "interleave", "recompute", "sharding", "offload", "hybrid_shard", "headroom",
                   "overlap_allreduce", "calibration")


def training_fields(request) -> dict[str, Any]:
    """The workload and layout fields of any training request, as given (defaults left to the engine)."""
    given = request.model_dump(exclude_unset=True, exclude_none=True)
    fields = {k: v for k, v in given.items() if k in TRAINING_FIELDS}
    # the defaults that name no layout (the CLI passes them explicitly): the search chooses
    for key, default in (("sharding", "none"), ("offload", False), ("hybrid_shard", False), ("overlap_allreduce", False)):
        if fields.get(key) == default:
            del fields[key]
    if type(request).__name__ == "MemoryRequest" and fields.get("recompute") == "none":
        del fields["recompute"]  # memory's default, not a choice
    if getattr(request, "calibration", None) is not None:
        fields["calibration"] = request.calibration
    return fields


def evaluate_training(fields: dict[str, Any], device: Device, count: int, catalog: Catalog,
                      cloud: str | None = None) -> Outcome:
    """The engine's answer for a training request's ``fields`` on ``count`` × ``device``: the time
    engine where the workload has samples or tokens, the memory model alone where it has neither."""
    from sizer import facade

    fields = {k: v for k, v in fields.items() if v is not None}
    if fields.get("samples") is None and fields.get("tokens") is None:
        allowed = set(facade.MemoryRequest.model_fields)
        request = facade.MemoryRequest(**{k: v for k, v in fields.items() if k in allowed}, device=device.id, count=count)
        memory = facade.estimate_memory(request, catalog)
        needed = memory.required_with_headroom or memory.total
        return Outcome(fits=bool(memory.fits), memory_per_device=needed, device_memory=memory.device_memory, result=memory)
    allowed = set(facade.TimeRequest.model_fields)
    request = facade.TimeRequest(**{k: v for k, v in fields.items() if k in allowed}, device=device.id, count=count)
    time = facade.estimate_time(request, catalog, suggest=False)
    cost = None
    if time.training_time is not None:
        from sizer.results import unit_factor

        factor = unit_factor(time.training_time.unit, "hour")
        t = time.training_time
        cost = run_cost(device, count, (t.low * factor, t.expected * factor, t.high * factor), cloud)
    return Outcome(fits=time.fits, memory_per_device=time.memory_per_device, device_memory=time.device_memory,
                   training_time=time.training_time, cost=cost, result=time)


def evaluate_serving(fields: dict[str, Any], device: Device, count: int, catalog: Catalog) -> Outcome:
    """The engine's answer for an inference request's ``fields`` on ``count`` × ``device``."""
    from sizer import facade

    allowed = set(facade.InferenceRequest.model_fields) - {"have"}
    request = facade.InferenceRequest(**{k: v for k, v in fields.items() if k in allowed and v is not None},
                                      device=device.id, count=count)
    result = facade.estimate_inference(request, catalog, suggest=False)
    cost = result.cost_per_million_tokens
    return Outcome(fits=result.fits, memory_per_device=result.memory_per_device, device_memory=result.device_memory,
                   decode_tokens_per_s=result.decode_tokens_per_s,
                   cost=None if cost is None else CostOut(low=cost.low, expected=cost.expected, high=cost.high,
                                                          unit=cost.unit, price_basis=_serving_basis(device),
                                                          price="per million output tokens at the device's hourly price"),
                   result=result)


def _serving_basis(device: Device) -> PriceBasis:
    return "buy" if hourly_price(device).basis == "amortised purchase" else "rent"


def _deadline_seconds(request) -> float | None:
    deadline = getattr(request, "deadline", None)
    if deadline is None:
        return None
    from sizer.units import parse_quantity

    return float(parse_quantity("deadline", deadline, "[time]").to("s").magnitude)


def answer_training(request, catalog: Catalog) -> OwnedResult:
    """Train (or, without samples and tokens, hold) the request's workload on each hardware set of
    ``request.have`` only: its verdict, time and cost, the layout the engine chose, and, where it does
    not fit or misses the deadline, the changes that would work."""
    from sizer.plan.suggestions import training_suggestions

    owned = parse_have(request.have, catalog)
    fields = training_fields(request)
    cloud = getattr(request, "cloud", None)
    deadline_s = _deadline_seconds(request)
    options, workload = [], ""
    for have in owned:
        outcome = evaluate_training(fields, have.device, have.count, catalog, cloud)
        result = outcome.result
        workload = getattr(result, "workload", "") or workload
        meets = outcome.meets(deadline_s)
        ok = outcome.fits and meets is not False
        suggestions = [] if ok else training_suggestions(fields, have, catalog, outcome, deadline_s=deadline_s, cloud=cloud)
        options.append(OwnedOption(
            hardware=have.label, device=have.device.id, name=have.device.name, count=have.count, fits=outcome.fits,
            meets_deadline=meets, method=result.method, precision=result.precision, layout=_training_layout(result),
            memory_per_device=outcome.memory_per_device, device_memory=outcome.device_memory,
            training_time=outcome.training_time if outcome.fits else None, cost=outcome.cost if outcome.fits else None,
            verdict=_verdict(outcome, meets, suggestions),
            suggestions=suggestions))
    task = "memory" if fields.get("samples") is None and fields.get("tokens") is None else "training"
    if not workload:
        workload = "training memory"
    return OwnedResult(task=task, workload=workload, options=options, assumptions=_assumptions(owned, task))


def answer_inference(request, catalog: Catalog) -> OwnedResult:
    """Serve the request's model on each hardware set of ``request.have`` only."""
    from sizer.plan.suggestions import serving_suggestions

    owned = parse_have(request.have, catalog)
    fields = request.model_dump(exclude_unset=True, exclude_none=True)
    fields.pop("have", None)
    fields.pop("device", None)
    fields.pop("count", None)
    options, workload = [], ""
    for have in owned:
        outcome = evaluate_serving(fields, have.device, have.count, catalog)
        result = outcome.result
        workload = f"serving {result.model}, {result.prompt_len} in / {result.output_len} out"
        suggestions = [] if outcome.fits else serving_suggestions(fields, have, catalog, outcome)
        options.append(OwnedOption(
            hardware=have.label, device=have.device.id, name=have.device.name, count=have.count, fits=outcome.fits,
            method="inference", precision=result.weights,
            layout={"tp": have.count, "weights": result.weights, "kv_cache": result.kv_cache, "batch": result.batch,
                    "largest_batch": result.max_batch},
            memory_per_device=outcome.memory_per_device, device_memory=outcome.device_memory,
            decode_tokens_per_s=outcome.decode_tokens_per_s if outcome.fits else None, cost=outcome.cost if outcome.fits else None,
            verdict=_verdict(outcome, None, suggestions), suggestions=suggestions))
    return OwnedResult(task="inference", workload=workload, options=options, assumptions=_assumptions(owned, "inference"))


def _training_layout(result) -> dict[str, Any]:
    layout = getattr(result, "layout", None)
    if layout is not None:
        return layout.model_dump()
    return {"zero": result.zero, "recompute": result.recompute, "micro_batch": result.micro_batch}


def _verdict(outcome: Outcome, meets: bool | None, suggestions: list[Suggestion]) -> str:
    if outcome.fits and meets is not False:
        return "fits" + (" and meets the deadline" if meets else "")
    problem = "misses the deadline" if outcome.fits else "does NOT fit"
    if suggestions:
        return f"{problem}; {len(suggestions)} change(s) below would work"
    return f"{problem}; no single change sizer tries makes it work"


def _assumptions(owned: tuple[Owned, ...], task: str) -> list[Assumption]:
    notes = [Assumption(name="hardware", value="; ".join(o.label for o in owned) + ": answered for these only",
                        source="given (have)")]
    if task != "memory":
        notes.append(Assumption(name="cost", value="rent where a cloud rents the device (price_basis rent); else the purchase "
                                "amortised over 3 years plus energy (price_basis buy)", source="sizer/formulas/tco.py"))
    if task == "training":
        notes.append(Assumption(name="layout", value="the engine's layout search on the given count (ZeRO stage, tensor "
                                "parallel inside a node, recomputation, largest micro-batch that fits)",
                                source="sizer/engine/search.py"))
    return notes
