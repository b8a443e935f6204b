"""The weight format a published checkpoint is stored in, from its ``config.json``'s ``quantization_config``.

The serving answers take it as the default weights (``sizer.serving.estimate.served_format``):
a checkpoint published in FP8 is served in FP8 unless the request asks otherwise. Read from the
``quantization_config`` at the top level or, for a multimodal config, in ``text_config``:

* ``quant_method: fp8`` (block scales as DeepSeek-V3 ships, ``weight_block_size``) -> ``fp8``;
* ``mxfp4`` (gpt-oss) -> ``mxfp4``;
* ``modelopt`` (NVIDIA Model Optimizer) with ``quant_algo`` ``NVFP4`` -> ``nvfp4``, ``FP8`` -> ``fp8``;
* ``compressed-tensors`` (vLLM's llm-compressor): its ``config_groups`` weights, by ``type`` and
  ``num_bits`` (FP4 in groups of 16 -> ``nvfp4``, of 32 -> ``mxfp4``; FP8 -> ``fp8``; int8 -> ``w8a8``
  with int8 activations, else ``int8``);
* ``gptq`` / ``awq`` -> ``gptq-int4-g128`` ... by ``bits`` and ``group_size``.

A method, algorithm or group that has no matching weight format (``sizer.runtimes.formats``) is
refused naming the field: a model is never sized in a format other than its checkpoint's
without the request saying so.

>>> config_checkpoint({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}).weights
'fp8'
>>> config_checkpoint({"model_type": "llama"}) is None
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sizer.errors import InputError

FIELD = "model.quantization_config"
# compressed-tensors weights (type, bits, group size or None for any) -> format, and what it is
_COMPRESSED: dict[tuple[object, object, object], str] = {("float", 8, None): "fp8", ("float", 4, 16): "nvfp4", ("float", 4, 32): "mxfp4",
                                                         ("int", 4, 32): "int4-g32"}  # symmetric only (no zero point)
_UNQUANTISED_LISTS = ("ignore", "modules_to_not_convert", "exclude_modules")
# The group sizes of the GPTQ and AWQ int4 formats: sizer.runtimes.formats makes its gptq-int4-g* and awq-int4-g*
# formats from these (inference sits above workloads, so the one list lives here)
GROUPED = {"gptq": (32, 64, 128), "awq": (64, 128)}


@dataclass(frozen=True)
class Checkpoint:
    """A published checkpoint's weight format and the field (or catalog entry) that states it."""

    weights: str  # a weight format name of sizer.runtimes.formats
    stated_by: str  # e.g. "quantization_config.quant_method fp8"
    note: str | None = None  # what of the checkpoint's layout the format does not model


def config_checkpoint(data: dict[str, Any]) -> Checkpoint | None:
    """The checkpoint format a parsed ``config.json`` states, or None where it states none (16-bit).

    Parameters
    ----------
    data : dict of str to Any
        A parsed config.

    Returns
    -------
    Checkpoint or None
        The format and the field that states it.

    Raises
    ------
    InputError
        A ``quantization_config`` that is not an object, or one naming a method, algorithm or group
        sizer has no weight format for (the error names that field).
    """
    where, quant = "quantization_config", data.get("quantization_config")
    text = data.get("text_config")
    if quant is None and isinstance(text, dict) and text.get("quantization_config") is not None:
        where, quant = "text_config.quantization_config", text["quantization_config"]
    if quant is None:
        return None
    field = f"model.{where}"
    if not isinstance(quant, dict):
        raise InputError(field, quant, "an object with a quant_method")
    method = str(quant.get("quant_method", "")).strip().lower()
    weights, said = _weights(quant, method, field)
    skipped = [name for key in _UNQUANTISED_LISTS for name in (quant.get(key) or []) if isinstance(name, str)]
    note = (f"the {len(skipped)} module patterns its {where} leaves unquantised ({', '.join(skipped[:3])}"
            f"{' ...' if len(skipped) > 3 else ''}) are counted in {weights} too"
            if skipped and weights != "mxfp4" else None)  # mxfp4 keeps only the routed experts already
    return Checkpoint(weights, f"{where}.{said}", note)


def _weights(quant: dict[str, Any], method: str, field: str) -> tuple[str, str]:
    """(format name, the key and value that state it) for one quantization_config."""
    if method in ("fp8", "mxfp4"):
        block = quant.get("weight_block_size")
        return method, f"quant_method {method}" + (f", weight_block_size {block}" if block else "")
    if method == "modelopt":
        algo = str(quant.get("quant_algo", "")).strip().upper()
        known = {"NVFP4": "nvfp4", "FP8": "fp8"}
        if algo not in known:
            raise InputError(f"{field}.quant_algo", quant.get("quant_algo"),
                             "NVFP4 or FP8 (a per-layer mix such as MIXED_PRECISION has no single weight format in "
                             "sizer: give the weights to size it in)")
        return known[algo], f"quant_method modelopt, quant_algo {algo}"
    if method == "compressed-tensors":
        return _compressed(quant, field)
    if method in ("gptq", "awq"):
        return _grouped(quant, method, field)
    raise InputError(f"{field}.quant_method", quant.get("quant_method"),
                     "fp8, mxfp4, modelopt, compressed-tensors, gptq or awq (the checkpoint formats sizer sizes; "
                     "give the weights to size another)")


def _compressed(quant: dict[str, Any], field: str) -> tuple[str, str]:
    groups = quant.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise InputError(f"{field}.config_groups", groups, "the quantisation groups of a compressed-tensors checkpoint")
    found = set()
    for name, group in groups.items():
        weights = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(weights, dict):
            raise InputError(f"{field}.config_groups.{name}.weights", weights, "the group's weight quantisation")
        kind, bits, size = weights.get("type"), weights.get("num_bits"), weights.get("group_size")
        inputs = group.get("input_activations")
        if kind == "int" and bits == 8:
            found.add("w8a8" if isinstance(inputs, dict) and inputs.get("num_bits") == 8 else "int8")
            continue
        match = _COMPRESSED.get((kind, bits, size)) or _COMPRESSED.get((kind, bits, None))
        if kind == "int" and weights.get("symmetric") is False:
            match = None  # an asymmetric int4 group also stores a zero point: no format of sizer's sizes it
        if match is None:
            raise InputError(f"{field}.config_groups.{name}.weights", f"{kind} {bits} bits, groups of {size}",
                             "FP8, FP4 in groups of 16 (nvfp4) or 32 (mxfp4), or int8: sizer has no weight format "
                             "for this one (give the weights to size it in, e.g. int4 for 4-bit integers)")
        found.add(match)
    if len(found) > 1:
        raise InputError(f"{field}.config_groups", ", ".join(sorted(found)),
                         "one weight format for every group (a mix has no single format in sizer: give the weights)")
    (weights_format,) = found
    return weights_format, f"quant_method compressed-tensors, config_groups {weights_format}"


def _grouped(quant: dict[str, Any], method: str, field: str) -> tuple[str, str]:
    bits = quant.get("bits", quant.get("w_bit"))
    group = quant.get("group_size", quant.get("q_group_size"))
    if bits != 4 or group not in GROUPED[method]:
        raise InputError(f"{field}.group_size", f"{bits} bits, groups of {group}",
                         f"4 bits in groups of {' or '.join(str(g) for g in GROUPED[method])} (the {method} formats "
                         "sizer has: give the weights to size another)")
    return f"{method}-int{bits}-g{group}", f"quant_method {method}, bits {bits}, group_size {group}"
