"""A framework's recipe as a change to try where a training job does not fit (``--have`` and the suggestions):
each documented recipe is a whole set of knobs a user turns on with one option (``--framework torchtune``),
tried before the knobs one at a time.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from sizer.choices import Method
from sizer.frameworks import framework
from sizer.frameworks.framework_name import Framework
from sizer.request_edits import given

# the frameworks whose recipes save memory on the hardware one has, per method, in the order tried: torchtune's
# single-device full fine-tune (pure bf16, paged 8-bit AdamW, step in backward, checkpointing, chunked loss) and
# its FSDP2 recipes; Unsloth on one device; FSDP + QLoRA (Answer.AI) on several, then with CPU offload
FULL = (Framework.TORCHTUNE,)
ADAPTERS = (Framework.TORCHTUNE, Framework.UNSLOTH, Framework.FSDP)
SINGLE_DEVICE_ONLY = (Framework.UNSLOTH,)
OFFLOADED = (Framework.FSDP,)  # FSDP CPUOffload(offload_params=True): Answer.AI's 70B QLoRA on two 24 GB cards


def framework_changes(request: BaseModel, count: int) -> list[tuple[str, dict[str, Any]]]:
    """(sentence, request edit) for each framework recipe worth trying; none where the request names a framework
    or offloads (a recipe's paged states and step in backward do not combine with offload).

    Parameters
    ----------
    request : pydantic.BaseModel
        The training request (a :class:`~sizer.schemas.base.WorkloadRequest`, named by its base: this package sits
        below the schemas) (the ``method``, ``framework`` and ``offload`` the user gave).
    count : int
        Devices [1]: single-device and distributed recipes differ.

    Returns
    -------
    list of (str, dict)
        Such as ``("torchtune's full_finetune_single_device recipe (...)", {"framework": "torchtune"})``.
    """
    if given(request, "framework") is not None or given(request, "offload") or given(request, "offload_params"):
        return []
    method = given(request, "method", Method.FULL)
    changes: list[tuple[str, dict[str, Any]]] = []
    for name in FULL if method is Method.FULL else ADAPTERS:
        if name in SINGLE_DEVICE_ONLY and count > 1:
            continue
        spec = framework(name)
        recipe = spec.recipe(method, count)
        if recipe is None:
            continue
        knobs = ", ".join(f"{k.replace('_', ' ')} {v}" if not isinstance(v, bool) else k.replace("_", " ")
                          for k, v in recipe.knobs.items() if v is not False)
        changes.append((f"{spec.name}'s {recipe.name} recipe ({knobs}; --framework {spec.name})", {"framework": spec.name}))
        if name in OFFLOADED and count > 1:
            changes.append((f"{spec.name}'s {recipe.name} recipe with the parameters offloaded to host memory "
                            f"(CPUOffload; --framework {spec.name} --offload-params)",
                            {"framework": spec.name, "offload_params": True}))
    return changes
