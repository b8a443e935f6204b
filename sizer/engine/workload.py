"""What is being trained: the workload a user describes, resolved into checked numbers.

A workload is either sample-based (``samples`` and ``epochs``; one sample = one input) or
token-based (``tokens``; a language model, one "sample" = one token, batch sizes in tokens).
The request model is shared by the CLI and the HTTP service; :func:`resolve_workload` checks
every field and raises :class:`~sizer.errors.InputError` naming the one at fault.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import pint

from sizer.choices import (
    Optimizer,
    Precision,
)
from sizer.errors import InputError
from sizer.results import Assumption
from sizer.schemas.base import WorkloadRequest
from sizer.units import Quantity
from sizer.workloads.batch import BatchUnit, batch_in_workload_units

DEFAULT_SEQ_LEN = 2048
DEFAULT_TOKEN_BATCH = 4 * 1024 * 1024  # tokens per step, as in Llama 2 pre-training (Touvron et al. 2023, §2.2; docs/references.md [touvron])
DEFAULT_SAMPLE_BATCH = 512  # the seed-001 MLP's batch
# Bounds on the work one request may ask for. A trillion steps of 1 ms each take 30 years; the
# longest published runs have a few million steps (Llama 2: 2e12 tokens / 4M = 5e5).
MAX_STEPS = 1e12
# Device-count pairs a recommendation may try: the built-in catalog times 17 counts (1 to 65,536)
# is about 1,100; a user catalog of hundreds of devices still fits.
MAX_SEARCH_POINTS = 4096


class Workload(NamedTuple):  # a record: a NamedTuple costs a third of a frozen dataclass's start-up (Python 3.11); its
    # repr (part of a kept search's key, sizer.plan.layout_basis) is the same text
    """A checked workload. In token mode ``samples`` are tokens and batches count tokens."""

    params: float
    samples: float
    epochs: float
    batch_size: float
    precision: Precision
    optimizer: Optimizer
    forward_flops_per_sample: pint.Quantity[Any]
    backward_factor: float
    token_mode: bool
    seq_len: int | None
    activation_memory_per_sample: pint.Quantity[Any] | None
    activation_model: str
    sample_size: pint.Quantity[Any] | None
    assumptions: tuple[Assumption, ...]

    @property
    def samples_total(self) -> float:
        """Samples over every epoch [sample] (tokens in token mode [token]).
        """
        return self.samples * self.epochs

    @property
    def steps(self) -> float:
        """Optimizer steps over the run [1]: the samples of every epoch over the batch, rounded up.
        """
        return math.ceil(self.samples_total / self.batch_size)

    @property
    def sample_word(self) -> str:
        """The word for what the workload counts: ``"token"`` in token mode, else ``"sample"``.
        """
        return "token" if self.token_mode else "sample"


def resolve_workload(request: WorkloadRequest, *, need_samples: bool = True, need_params: bool = True) -> Workload:
    """Check a workload request and fill in the documented defaults.

    ``need_params=False``: the layers come from a model or a profile, which count their own
    parameters and FLOP; ``params`` and ``forward_flops_per_sample`` are then NaN until
    :func:`sizer.engine.job.resolve_job` sets them from the layers (never a made-up count).

    Parameters
    ----------
    request : WorkloadRequest
        The request (counts and quantities read where it was built).
    need_samples : bool, default True
        Whether samples (or tokens) must be given; False lets one sample stand in where only a step is asked.
    need_params : bool, default True
        Whether a parameter count must be given.

    Returns
    -------
    Workload
        Parsed counts, choices, FLOP per sample [FLOP], activation memory per sample [B] where known,
        and the assumptions made.

    Raises
    ------
    InputError
        A missing or malformed field, or one that contradicts another; the message names the field.
    """
    assumptions: list[Assumption] = []
    if request.params is None and need_params:
        raise InputError("params", None, "the number of parameters, e.g. 7e9")
    params = request.params if request.params is not None else math.nan
    if request.tokens is not None and request.samples is not None:
        raise InputError("tokens", request.tokens, "either tokens or samples, not both")
    token_mode = request.tokens is not None
    if request.tokens is not None:
        samples = request.tokens
    elif request.samples is not None:
        samples = request.samples
    elif need_samples:
        raise InputError("samples", None, "the number of training samples (or tokens for a language model)")
    else:
        samples = 1.0
    epochs = float(request.epochs)
    precision, optimizer = request.precision, request.optimizer

    seq_len = request.seq_len
    if token_mode and seq_len is None:
        seq_len = DEFAULT_SEQ_LEN
        assumptions.append(Assumption(name="sequence length", value=f"{DEFAULT_SEQ_LEN} tokens",
                                      source="default; give --seq-len"))
    if request.batch_size is not None:
        given = request.batch_size
        batch_size = batch_in_workload_units(given, token_mode=token_mode, seq_len=seq_len)
        check_batch_size(batch_size, "token" if token_mode else "sample")
        if token_mode and given.unit in (BatchUnit.SEQUENCE, BatchUnit.SAMPLE):
            assumptions.append(Assumption(name="batch size", value=f"{given.count:,.0f} sequences of {seq_len} tokens = "
                                          f"{batch_size:,.0f} tokens per step", source="given"))
    else:
        batch_size = float(DEFAULT_TOKEN_BATCH if token_mode else DEFAULT_SAMPLE_BATCH)
        source = "Llama 2 pre-training batch (Touvron et al. 2023)" if token_mode else "seed 001 MLP batch"
        assumptions.append(Assumption(name="batch size", value=f"{batch_size:.0f} {'tokens' if token_mode else 'samples'} per step",
                                      source=f"default ({source}); give --batch-size"))

    check_steps(samples * epochs, batch_size)

    if request.forward_flops_per_sample is not None:
        forward = Quantity(request.forward_flops_per_sample, "FLOP")
        assumptions.append(Assumption(name="forward FLOP per sample", value=f"{forward.magnitude:.4g} FLOP",
                                      source="given (C_train = O_b F_fwd S E, spec §3.2)"))
    else:
        forward = Quantity(request.forward_flops_per_param * params, "FLOP")
        assumptions.append(Assumption(name="forward FLOP per sample", value=f"O_f P = {request.forward_flops_per_param:g} x P",
                                      source="seed 004 eq. 3 (dense layers: one multiply and one add per weight)"))

    activation, activation_model = _activation_memory(request, params, token_mode, seq_len, assumptions)
    sample_size = request.sample_size
    return Workload(params=params, samples=samples, epochs=epochs, batch_size=batch_size, precision=precision,
                    optimizer=optimizer, forward_flops_per_sample=forward,
                    backward_factor=request.backward_factor, token_mode=token_mode, seq_len=seq_len,
                    activation_memory_per_sample=activation, activation_model=activation_model,
                    sample_size=sample_size, assumptions=tuple(assumptions))


def check_batch_size(batch_size: float, sample_word: str = "sample") -> None:
    """Refuse a batch of less than one sample (or token) per step: it makes the step count absurd or infinite.

    Parameters
    ----------
    batch_size : float
        Samples (or tokens) per optimizer step [1].
    sample_word : str, default ``"sample"``
        What the batch counts, named in the error.

    Raises
    ------
    InputError
        A batch below one.
    """
    if batch_size < 1:
        raise InputError("batch_size", batch_size, f"at least 1 {sample_word} per step")


def check_steps(samples_total: float, batch_size: float) -> None:
    """Refuse a workload of more than :data:`MAX_STEPS` optimizer steps, before any work is done.

    Parameters
    ----------
    samples_total : float
        Samples (or tokens) over every epoch [1].
    batch_size : float
        Samples (or tokens) per step [1].

    Raises
    ------
    InputError
        Too many steps (or an infinite or undefined count), naming ``batch_size``.

    >>> check_steps(2e12, 4e6)
    >>> check_steps(1e30, 1)
    Traceback (most recent call last):
    ...
    sizer.errors.InputError: batch_size: got 1; expected a batch that makes at most 1e+12 optimizer steps of the 1e+30 samples (this one makes 1e+30); give a larger batch_size or fewer samples
    """
    steps = samples_total / batch_size
    if not steps <= MAX_STEPS:  # also catches inf and nan
        raise InputError("batch_size", _plain(batch_size),
                         f"a batch that makes at most {MAX_STEPS:g} optimizer steps of the {samples_total:g} samples "
                         f"(this one makes {steps:.3g}); give a larger batch_size or fewer samples")


def check_search_grid(devices: int, max_devices: int, batch_size: float) -> None:
    """Refuse a recommendation search over more than :data:`MAX_SEARCH_POINTS` device-count pairs, up front.

    The counts tried are 1, 2, 4, ... up to ``max_devices`` (and no more than one sample per device).

    Parameters
    ----------
    devices : int
        Device kinds to try [1].
    max_devices : int
        Most devices of one kind [1].
    batch_size : float
        Samples per step [1]; no count exceeds it.

    Raises
    ------
    InputError
        A grid above :data:`MAX_SEARCH_POINTS`, naming ``max_devices``.
    """
    counts = math.floor(math.log2(max(1.0, min(float(max_devices), batch_size)))) + 1
    if devices * counts > MAX_SEARCH_POINTS:
        raise InputError("max_devices", max_devices,
                         f"a search of at most {MAX_SEARCH_POINTS:,} device-count pairs ({devices} devices x {counts} "
                         "counts asked for); give a smaller max_devices, fewer kinds, or a smaller catalog")


def _plain(value: float) -> float | int:
    """``1.0`` shown as ``1`` in a message."""
    return int(value) if float(value).is_integer() and abs(value) < 1e15 else value


def _activation_memory(request: WorkloadRequest, params: float, token_mode: bool, seq_len: int | None,
                       assumptions: list[Assumption]) -> tuple[pint.Quantity[Any] | None, str]:
    if request.activation_memory_per_sample is not None:
        if token_mode:
            raise InputError("activation_memory_per_sample", request.activation_memory_per_sample,
                             "no figure for a language model: its layer graph counts the activations per layer "
                             "(Korthikanti et al. 2022); choose --recompute or --attention instead")
        return request.activation_memory_per_sample.to("byte"), "given"
    if token_mode:  # a transformer's layer graph keeps its own activations (sizer.workloads.layer_graph)
        return None, "layer-graph"
    assumptions.append(Assumption(name="activations", value="not counted",
                                  source="unknown for a parameter count alone; give --activation-memory-per-sample"))
    return None, "none"


