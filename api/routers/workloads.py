"""`GET /v1/workloads`: the built-in workload profiles by name, with forward GFLOP per sample, parameters,
profiled lengths and source (`sizer workloads` prints the same)."""
from __future__ import annotations

from fastapi import APIRouter

from sizer.facade import Model, WorkloadSummary, list_workloads

router = APIRouter(prefix="/v1", tags=["catalog"])


class WorkloadList(Model):
    """The JSON of `sizer workloads --json`."""

    workloads: list[WorkloadSummary]


@router.get("/workloads", response_model=WorkloadList,
            summary="Built-in workload profiles by name, with forward GFLOP per sample, parameters and source")
def list_builtin_workloads() -> WorkloadList:
    return WorkloadList(workloads=list_workloads())
