"""sizer/workloads/request.py: resolving a workload request, defaults stated as assumptions."""
import pytest

from sizer.engine.job import resolve_job
from sizer.errors import InputError
from sizer.workloads.request import WorkloadRequest, resolve_workload


def test_token_workload_defaults_are_stated():
    workload = resolve_workload(WorkloadRequest(params=7e9, tokens=2e10))
    assert workload.token_mode and workload.seq_len == 2048 and workload.batch_size == 4 * 1024 * 1024
    names = {a.name for a in workload.assumptions}
    assert {"sequence length", "batch size"} <= names


def test_a_language_model_counts_its_activations_from_its_layer_graph():
    # the generated decoder's layers keep activations (Korthikanti et al. 2022), never zero; the parameter-count
    # rule's FLOP and activation notes are not shown beside the graph's
    job = resolve_job(WorkloadRequest(params=7e9, tokens=2e10))
    assert job.layers.total_activation_bytes > 0
    names = {a.name for a in job.assumptions}
    assert "layers" in names and "forward FLOP per sample" not in names and "activations" not in names
    with pytest.raises(InputError, match="activation_memory_per_sample"):
        resolve_job(WorkloadRequest(params=7e9, tokens=2e10, activation_memory_per_sample="1 MB"))


@pytest.mark.parametrize("fields, field", [
    (dict(samples=10), "params"), (dict(params=1e6), "samples"), (dict(params=1e6, samples=10, tokens=10), "tokens"),
    (dict(params=-1, samples=10), "params"),
    (dict(params=1e6, samples=10, epochs=0), "epochs"), (dict(params=1e6, samples=10, activation_memory_per_sample="5 s"),
                                                        "activation_memory_per_sample"),
])
def test_bad_workloads_name_the_field(fields, field):
    with pytest.raises(InputError) as error:
        resolve_workload(WorkloadRequest(**fields))
    assert error.value.field == field


def test_an_unknown_precision_is_refused_where_the_request_is_built():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="precision\n  got 'fp3'; expected one of"):
        WorkloadRequest(params=1e6, samples=10, precision="fp3")
    with pytest.raises(ValidationError, match="method\n  got 'dora'; expected one of full, lora, qlora"):
        WorkloadRequest(params=1e6, samples=10, method="dora")
