"""The bases of the request models: :class:`RequestModel` (true/false is never a number; a bad field is an
:class:`~sizer.errors.InputError` naming it) and :class:`WorkloadRequest` (a training workload, with the CLI's
option names), and the workload a question without one assumes (:func:`default_workload`).

The request model is shared by the CLI and the HTTP service; :func:`sizer.engine.workload.resolve_workload`
checks every field and raises :class:`~sizer.errors.InputError` naming the one at fault.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from sizer.choices import (
    Attention,
    AttentionName,
    Loss,
    LossName,
    Method,
    MethodName,
    Optimizer,
    OptimizerName,
    Precision,
    PrecisionName,
)
from sizer.formulas.compute import BACKWARD_FACTOR, FORWARD_FLOPS_PER_PARAM
from sizer.frameworks.framework_name import FrameworkName
from sizer.units import Count, Memory, MemoryOrZero
from sizer.workloads.batch import BatchField
from sizer.workloads.source import Source

Params = ParamSpec("Params")
Result = TypeVar("Result")


def _signature_read_once(function: Callable[Params, Result]) -> Callable[Params, Result]:
    """``function`` with its signature read once, here: pydantic reads a field validator's signature (does it take
    ``info``?) for each field it applies to, and a ``"*"`` validator applies to every field of every request model
    (RecommendRequest's 48: ~0.5 ms of the first ``sizer recommend`` request, benchmarks/startup.py).

    Parameters
    ----------
    function : callable
        A validator.

    Returns
    -------
    callable
        The same function, its ``__signature__`` set (what :func:`inspect.signature` returns at once).
    """
    function.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    return function


class RequestModel(BaseModel):
    """Base of the request models: true/false is never taken for a number.

    pydantic reads ``true`` as 1 for a number field, so ``{"params": true}`` would have trained a
    one-parameter model; a boolean (alone or in a list) is refused with the field named, except
    in fields that are booleans.
    """

    # Validators are built on first use, not at import: a command that validates none of the request
    # models (``sizer peak`` validates one) does not pay for building them all at start-up.
    model_config = ConfigDict(defer_build=True, frozen=True)

    def __init__(self, /, **data: Any) -> None:
        """A request built in Python: a bad field is sizer's :class:`~sizer.errors.InputError` naming it (every bad
        field in its message, :class:`~sizer.workloads.field_check.RequestError`), as on the command line; it is pydantic's
        ``ValidationError`` too."""
        try:
            super().__init__(**data)
        except ValidationError as error:
            from sizer.workloads.field_check import RequestError

            raise RequestError.of(error, data) from None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with ``update``, validated like a new request (a changed choice is parsed into its member,
        a bad one refused), keeping which fields were set.

        Parameters
        ----------
        update : Mapping, optional
            Fields to change; validated as a new request would be.
        deep : bool, default False
            Whether to copy nested values too (without ``update``).

        Returns
        -------
        Self
            The copy.

        Raises
        ------
        pydantic.ValidationError
            A changed field that a new request would refuse (the API and CLI map it to the field's message).
        """
        if not update:
            return super().model_copy(deep=deep)
        return self.model_validate({**{name: getattr(self, name) for name in self.model_fields_set}, **update})

    @field_validator("*", mode="before")
    @classmethod
    @_signature_read_once
    def _no_booleans_for_numbers(cls, value: object, info: ValidationInfo) -> object:
        items = value if isinstance(value, list) else (value,)
        if any(isinstance(item, bool) for item in items) and not _takes_booleans(cls, info.field_name):
            raise ValueError(f"{info.field_name}: got {value!r}; expected a number or a string, not true/false")
        return value


def _takes_booleans(model: type[BaseModel], field_name: str | None) -> bool:
    field = model.model_fields.get(field_name or "")
    return field is None or "bool" in str(field.annotation)


class WorkloadRequest(RequestModel):
    """A training workload, with the CLI's option names."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"params": 7e9, "tokens": 2e10, "precision": "bf16", "optimizer": "adamw"}]})

    params: Count | None = Field(None, description="parameters (weights and biases), e.g. 7e9")
    samples: Count | None = Field(None, description="training samples per epoch")
    epochs: Count = Field(1, description="passes over the samples")
    tokens: Count | None = Field(None, description="training tokens (language models), instead of samples")
    batch_size: BatchField | None = Field(None, description="global batch per step: '1536 sequences', '4M tokens' or "
                                         "'512 samples'; a bare number is tokens with tokens, else samples")
    precision: PrecisionName = Field(Precision.MIXED, description="mixed (bf16 where the device has it, else fp16, else fp32), "
                                                 "fp32, tf32, fp16, bf16, fp8 or fp4 (NVFP4, where the device has an FP4 peak)")
    optimizer: OptimizerName = Field(Optimizer.ADAM, description="sgd, momentum, adam, adamw, adagrad, rmsprop, adam-8bit, "
                                                          "adamw-8bit, paged-adamw, paged-adamw-8bit, adafactor or lion")
    forward_flops_per_param: float = Field(FORWARD_FLOPS_PER_PARAM, gt=0, le=1e6)
    backward_factor: float = Field(BACKWARD_FACTOR, ge=1, le=100)
    forward_flops_per_sample: Count | None = Field(None, description="FLOP per sample of the forward pass, if known")
    seq_len: int | None = Field(None, ge=1, le=10_000_000, description="sequence length (token workloads)")
    activation_memory_per_sample: MemoryOrZero | None = Field(None, description="activation memory per sample, e.g. '12 MB'")
    sample_size: Memory | None = Field(None, description="bytes of one stored training sample, e.g. '150 kB'")
    model: Source | None = Field(None, description="an architecture by name (llama-2-7b, gpt3-175b, "
                                                                "bert-large ...) or, on the command line, a config.json")
    workload: Source | None = Field(None, description="a built-in workload profile (resnet50, bert-large, "
                                                                   "...) or, on the command line, a profile file")
    attention: AttentionName = Field(Attention.FLASH, description="flash (keeps softmax statistics only) or standard (keeps the "
                                                "s x s attention scores): Korthikanti et al. 2022's two cases")
    micro_batch: Count | None = Field(None, description="samples per device per forward/backward pass "
                                                            "(sequences for a language model); default: the largest that fits")
    method: MethodName = Field(Method.FULL, description="full (every weight trained), lora or qlora (adapters over a frozen "
                                            "base; QLoRA's base in 4-bit NF4)")
    lora_rank: int | None = Field(None, ge=1, le=65536, description="LoRA rank r (default 8 for lora, 64 for qlora)")
    lora_targets: str | None = Field(None, max_length=200, description="adapted matrices: q,k,v,o,gate,up,down, "
                                     "attention, mlp or all-linear (default q,v for lora, all-linear for qlora)")
    state_precision: PrecisionName = Field(Precision.MIXED, description="precision of the training state: mixed (16-bit "
                                           "weights and gradients, FP32 master weights and optimizer states) or bf16 "
                                           "(every state in bf16, no master copy, as torchtune runs)")
    optimizer_in_backward: bool = Field(False, description="the optimizer step fused into the backward pass: no full "
                                                           "gradient buffer, no gradient accumulation (torchtune optimizer_in_bwd)")
    offload_params: bool = Field(False, description="parameters, gradients and optimizer states in host memory (FSDP "
                                                    "CPUOffload, ZeRO-Infinity offload_param)")
    offload_activations: bool = Field(False, description="saved activations in host memory (torchtune activation offloading)")
    sample_tokens: int | None = Field(None, ge=1, le=10_000_000, description="mean real tokens of a sample padded to "
                                      "seq_len (padded batches: the rest of each sequence is padding, computed but not "
                                      "learned from); leave out for packed or full-length sequences")
    loss: LossName = Field(Loss.STANDARD, description="standard (FP32 logits and their gradient), chunked (torchtune's "
                                                   "chunked cross-entropy) or fused (Liger / Cut Cross-Entropy: no logits)")
    framework: FrameworkName | None = Field(None, description="the training framework whose documented recipe sets the "
                                            "fields not given (state precision, optimizer, loss, recomputation, "
                                            "sharding) and whose layouts the search keeps to: torchtune, unsloth, "
                                            "axolotl, llama-factory, hf-trainer, deepspeed, fsdp, megatron, nemo, "
                                            "torchtitan, maxtext or litgpt (sizer/frameworks/frameworks.yaml)")

    @model_validator(mode="after")
    def _framework_recipe(self) -> Self:
        """A named framework's recipe fills the fields left at their default (sizer.frameworks.apply); they stay
        unset, so a copy with another method or count takes that one's recipe."""
        if self.framework is None:
            return self
        from sizer.frameworks.apply import filled

        given = {name: getattr(self, name) for name in self.model_fields_set}
        count = getattr(self, "count", 1)
        for name, value in filled(self.framework, self.method, count if isinstance(count, int) else 1, given,
                                  set(type(self).model_fields)).items():
            object.__setattr__(self, name, value)  # frozen: set once, here, as validation does
        return self


def default_workload() -> WorkloadRequest:
    """The workload of a question that names none (``sizer recommend`` alone).

    Returns
    -------
    WorkloadRequest
        1.3e9 parameters, 2.6e10 tokens, mixed precision, AdamW (:data:`DEFAULT_WORKLOAD_DESCRIPTION`). Built
        when first asked, not at import: building it builds the request model's validator, which a command
        that asks another question (``sizer peak``) need not pay for at start-up (benchmarks/startup.py).
        Not kept: with the validator built, one costs ~0.01 ms, 0.4 % of a new question over HTTP (under the
        1 % a cache must save, docs/caching.md).
    """
    return WorkloadRequest(**DEFAULT_WORKLOAD_FIELDS)


# The default workload as given (what :func:`default_workload` validates): a request model that has the workload
# fields validates the same defaults with its own validator (a recommendation: no second model's validator built)
DEFAULT_WORKLOAD_FIELDS: dict[str, Any] = dict(params=1.3e9, tokens=2.6e10, precision="mixed", optimizer="adamw")


# 20 tokens per parameter: docs/references.md [hoffmann]
DEFAULT_WORKLOAD_DESCRIPTION = ("1.3e9-parameter transformer trained on 2.6e10 tokens (20 tokens per parameter, "
                                "Hoffmann et al. 2022), mixed precision (bf16, else fp16), AdamW")
