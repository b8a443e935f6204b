"""Answers for hardware a user already has ("8x A100 80GB SXM"): fits or not, how long, what it costs
to run, and the method, precision, layout and batch the engine chooses on it.

The text ``"N x DEVICE"`` is found in the catalog once, where the facade joins request and catalog
(:func:`sizer.asked.have_sets`), and each set is an :class:`Owned` here (a count and a catalog device). Every answer comes from the one engine: training through
:func:`sizer.training.estimates.time_on` (or :func:`~sizer.training.estimates.memory_on` for a workload
without samples or tokens), serving through :func:`~sizer.serving.estimate.serve`, each set's device the entry
the facade found (:mod:`sizer.asked`); where the
hardware does not serve, :mod:`sizer.plan.suggestions` lists the changes that would, each
evaluated again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from sizer.asked import Asked
from sizer.formulas.tco import Pricing, hourly_price
from sizer.hardware.schema import Device
from sizer.request_edits import given, given_names, rebuilt
from sizer.results import CostOut, QuantityOut, RangeOut
from sizer.schemas.base import WorkloadRequest
from sizer.schemas.serving import InferenceResult
from sizer.schemas.serving_requests import InferenceRequest
from sizer.schemas.time_and_memory import MemoryRequest, MemoryResult, TimeRequest, TimeResult
from sizer.serving.estimate import serve, serve_on_every_device
from sizer.training import estimates

Request = TypeVar("Request", bound=WorkloadRequest | InferenceRequest)


@dataclass(frozen=True)
class Owned:
    """Hardware the user has: ``count`` devices of one catalog kind."""

    count: int
    device: Device

    @property
    def label(self) -> str:
        """The hardware as a person writes it, ``"8 x A100 80GB SXM"``."""
        return f"{self.count} x {self.device.name}"


@dataclass(frozen=True)
class Outcome:
    """One configuration evaluated by the engine, in the terms a suggestion or an answer shows."""

    fits: bool
    memory_per_device: QuantityOut
    device_memory: QuantityOut | None
    training_time: RangeOut | None = None
    decode_tokens_per_s: RangeOut | None = None
    cost: CostOut | None = None
    result: TimeResult | MemoryResult | InferenceResult | None = None  # the engine's full answer

    def meets(self, deadline_s: float | None) -> bool | None:
        """Whether the expected training time is within the deadline.

        Parameters
        ----------
        deadline_s : float or None
            The deadline [s]; None where none was asked.

        Returns
        -------
        bool or None
            True where the expected training time is at most ``deadline_s``; None where there is no
            deadline or no training time (a memory question, a served model).
        """
        if deadline_s is None or self.training_time is None:
            return None
        from sizer.results import unit_factor

        return self.training_time.expected * unit_factor(self.training_time.unit, "s") <= deadline_s

    @property
    def trained(self) -> TimeResult | MemoryResult:
        """The engine's answer behind a training outcome (:func:`evaluate_training`)."""
        assert isinstance(self.result, (TimeResult, MemoryResult)), "not a training outcome"
        return self.result

    @property
    def served(self) -> InferenceResult:
        """The engine's answer behind a serving outcome (:func:`evaluate_serving`)."""
        assert isinstance(self.result, InferenceResult), "not a serving outcome"
        return self.result


def run_cost(device: Device, count: int, hours: tuple[float, float, float], cloud: str | None = None,
             pricing: Pricing = "any") -> CostOut | None:
    """Running ``count`` devices for ``hours`` (low, expected, high) at the device's hourly price of
    ``pricing``: by default a cloud offer that runs ``count`` devices (rent) where the catalog has one,
    else the amortised purchase plus energy (buy).

    Parameters
    ----------
    device : Device
        The catalog device, with its cloud offers and purchase price.
    count : int
        Devices run at once [1]; an offer must be able to run this many.
    hours : tuple of float
        The run's length (low, expected, high) [hour].
    cloud : str, optional
        A provider whose offers alone are used.
    pricing : {"any", "rent", "buy"}, default "any"
        Which price to use (:func:`sizer.formulas.tco.hourly_price`).

    Returns
    -------
    CostOut or None
        The cost (low, expected, high) [USD] and its basis (rent or buy); None where the catalog has no
        price of that basis for the device.
    """
    price = hourly_price(device, cloud, pricing=pricing, count=count)
    if price.hourly is None:
        return None
    per_hour = float(price.hourly.to("USD/hour").magnitude) * count
    return CostOut(low=per_hour * hours[0], expected=per_hour * hours[1], high=per_hour * hours[2], unit="USD",
                   price_basis="buy" if price.basis == "amortised purchase" else "rent", price=price.label)


# Every field of a training request but the hardware it runs on (and a reference run, measured on one
# device): derived from the request model, so a new field reaches --have and the suggestions untouched
PER_HARDWARE = frozenset({"device", "count", "have", "reference", "reference_batch_size"})
TRAINING_FIELDS = tuple(name for name in TimeRequest.model_fields if name not in PER_HARDWARE)
SERVING_HARDWARE = frozenset({"have", "device", "count"})  # what --have replaces in a serving request


def training_request(request: WorkloadRequest) -> TimeRequest:
    """The workload and layout of any training request, as given (defaults left to the engine), as a time question
    with no hardware: what ``--have`` and the suggestions evaluate on each device and count, and edit.

    Parameters
    ----------
    request : WorkloadRequest
        A training request of any command (time, memory, recommend, plan): its hardware fields
        (:data:`PER_HARDWARE`) are left out, and so are layout defaults the CLI sends explicitly.

    Returns
    -------
    TimeRequest
        Given exactly the fields the user gave (their values typed, as ``request`` holds them).
    """
    names = {name for name in estimates.chosen_names(request) if name in TRAINING_FIELDS}
    if getattr(request, "calibration", None) is not None:  # time and recommend take one; memory does not
        names.add("calibration")
    return rebuilt(TimeRequest, request, names)


def evaluate_training(request: TimeRequest, device: Device, count: int, question: Asked[Any],
                      cloud: str | None = None) -> Outcome:
    """The engine's answer for a training request on ``count`` × ``device``: the time engine where the workload
    has samples or tokens, the memory model alone where it has neither.

    Parameters
    ----------
    request : TimeRequest
        The training request (:func:`training_request`, possibly edited); its hardware is replaced.
    device : Device
        The device to run on.
    count : int
        Devices [1].
    question : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): the devices and their prices, and the entries
        the request names besides its hardware (the device measured on).
    cloud : str, optional
        A provider whose prices cost the run.

    Returns
    -------
    Outcome
        Whether it fits, memory per device [GB], training time and cost where the run has a length, and
        the engine's full answer (``result``: a TimeResult or a MemoryResult).
    """
    names = given_names(request) - PER_HARDWARE
    if request.samples is None and request.tokens is None:
        asked = rebuilt(MemoryRequest, request, names, device=device.id, count=count)
        memory = estimates.memory_on(_on(question, asked, device))
        needed = memory.required_with_headroom or memory.total
        return Outcome(fits=bool(memory.fits), memory_per_device=needed, device_memory=memory.device_memory, result=memory)
    time = estimates.time_on(_on(question, rebuilt(TimeRequest, request, names, device=device.id, count=count), device))
    cost = None
    if time.training_time is not None:
        from sizer.results import unit_factor

        factor = unit_factor(time.training_time.unit, "hour")
        t = time.training_time
        cost = run_cost(device, count, (t.low * factor, t.expected * factor, t.high * factor), cloud,
                        given(request, "pricing", "any"))
    return Outcome(fits=time.fits, memory_per_device=time.memory_per_device, device_memory=time.device_memory,
                   training_time=time.training_time, cost=cost, result=time)


def evaluate_serving(request: InferenceRequest, device: Device, count: int, question: Asked[Any],
                     every_device: bool = False) -> Outcome:
    """The engine's answer for an inference request on ``count`` × ``device``.

    Parameters
    ----------
    request : InferenceRequest
        The inference request; its hardware (``have``, ``device``, ``count``) is replaced.
    device : Device
        The device to serve on.
    count : int
        Devices [1]: tensor parallel, or replicas of a tensor-parallel size that splits the heads where the count
        does not (:func:`sizer.serving.estimate.serve`).
    question : Asked
        The question on its catalog (:func:`sizer.asked.on_catalog`): the devices and their prices, and the entries
        the request names besides its hardware (the host CPU, the device measured on).
    every_device : bool
        Answer a count that does not split the heads as replicas even where the split or a local runtime was given
        (:func:`sizer.serving.estimate.serve_on_every_device`), rather than refuse it.

    Returns
    -------
    Outcome
        Whether it fits, memory per device [GB], decode throughput [token/s] and the cost per million
        output tokens [USD] where a price is known, and the engine's full answer (an InferenceResult).
    """
    served = rebuilt(InferenceRequest, request, given_names(request) - SERVING_HARDWARE, device=device.id, count=count)
    result = (serve_on_every_device if every_device else serve)(_on(question, served, device))
    cost = result.cost_per_million_tokens
    return Outcome(fits=result.fits, memory_per_device=result.memory_per_device, device_memory=result.device_memory,
                   decode_tokens_per_s=result.decode_tokens_per_s,
                   cost=None if cost is None else CostOut(low=cost.low, expected=cost.expected, high=cost.high,
                                                          unit=cost.unit, price_basis=cost.price_basis,
                                                          price="per million output tokens at the device's hourly price"),
                   result=result)


def _on(question: Asked[Any], request: Request, device: Device) -> Asked[Request]:
    """The question asked again on a hardware set: its device that set's (already found), no other set."""
    return question.again(request, device=device, devices=None, have=())
