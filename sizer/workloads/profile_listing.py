"""The built-in workload profiles as a list (``sizer workloads``, ``GET /v1/workloads``): name, forward
GFLOP per sample, parameters, the lengths profiled and where each came from.

>>> rows = {w.name: w for w in list_workloads()}
>>> rows["resnet50"].params, rows["bert-large"].seq_lens
(25557032, [128, 384, 512])
"""
from __future__ import annotations

from sizer.memo import registered_cache
from sizer.results import Model, unit_factor
from sizer.workloads.profile import builtin_profile_names, builtin_variants


class WorkloadSummary(Model):
    name: str
    description: str
    sample: str  # what one sample is: "sample" (an image, a row) or "sequence"
    forward_gflop: float  # forward GFLOP of one sample, at the longest profiled length for a sequence model
    params: int
    seq_lens: list[int]  # the profiled sequence lengths (empty for a model without one)
    source: str  # the library model it was profiled from (torchvision:vgg16), else the command that made it
    versions: dict[str, str]  # torch and the library that built it, where recorded


@registered_cache()
def _summaries() -> tuple[WorkloadSummary, ...]:
    """Built once: the built-in profiles do not change while the process runs."""
    rows = []
    for name in builtin_profile_names():
        variants = builtin_variants(name)
        longest = variants[-1]
        rows.append(WorkloadSummary(
            name=name, description=longest.description, sample=longest.sample,
            forward_gflop=round(longest.forward_flops * unit_factor("FLOP", "GFLOP"), 4), params=int(longest.params),
            seq_lens=[v.seq_len for v in variants if v.seq_len is not None],
            source=longest.source or longest.generated_by,
            versions=longest.versions or ({"torch": longest.torch_version} if longest.torch_version else {})))
    return tuple(rows)


def list_workloads() -> list[WorkloadSummary]:
    """Every built-in workload profile, sorted by name.

    Returns
    -------
    list of WorkloadSummary
        Name, forward GFLOP per sample, parameters, profiled lengths and source of each.
    """
    return list(_summaries())
