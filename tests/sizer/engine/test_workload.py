"""sizer/engine/workload.py: resolving a workload request, defaults stated as assumptions."""
import math

import pytest

from sizer.choices import Precision
from sizer.engine.job import resolve_job
from sizer.engine.workload import MAX_SEARCH_POINTS, MAX_STEPS, check_batch_size, check_search_grid, check_steps, resolve_workload
from sizer.errors import InputError
from sizer.schemas.base import WorkloadRequest


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


def test_steps_round_up_over_every_epoch():
    # 10 samples x 3 epochs at 4 per step: 30 / 4 = 7.5, so 8 optimizer steps (the last one partial)
    workload = resolve_workload(WorkloadRequest(params=1e6, samples=10, epochs=3, batch_size=4))
    assert workload.samples_total == 30 and workload.steps == 8 and workload.sample_word == "sample"
    assert resolve_workload(WorkloadRequest(params=7e9, tokens=2e10)).sample_word == "token"


def test_a_batch_below_one_is_refused_in_the_workload_unit():
    check_batch_size(1)
    with pytest.raises(InputError, match="at least 1 token per step") as error:
        check_batch_size(0.5, "token")
    assert error.value.field == "batch_size"


@pytest.mark.parametrize("samples_total, batch_size, refused", [
    (MAX_STEPS, 1, False), (MAX_STEPS * 2, 1, True), (math.inf, 1, True), (math.nan, 1, True),
])
def test_steps_beyond_the_bound_are_refused_before_any_work(samples_total, batch_size, refused):
    if refused:
        with pytest.raises(InputError, match="optimizer steps"):
            check_steps(samples_total, batch_size)
    else:
        check_steps(samples_total, batch_size)


def test_the_search_grid_counts_powers_of_two_up_to_the_batch():
    # counts 1, 2, 4, ..., 65536 are 17; 4096 / 17 = 240.9, so 240 kinds fit and 241 do not
    check_search_grid(240, 65_536, 1e9)
    with pytest.raises(InputError) as error:
        check_search_grid(241, 65_536, 1e9)
    assert error.value.field == "max_devices"
    # a batch of 8 samples caps the counts at 1, 2, 4, 8 whatever max_devices says
    check_search_grid(MAX_SEARCH_POINTS // 4, 65_536, 8)
    with pytest.raises(InputError):
        check_search_grid(MAX_SEARCH_POINTS // 4 + 1, 65_536, 8)


def test_a_changed_copy_is_validated_like_a_new_request():
    from pydantic import ValidationError

    request = WorkloadRequest(params=1e6, samples=10)
    changed = request.model_copy(update={"precision": "BF16"})
    assert changed.precision is Precision.BF16 and changed.params == 1e6
    with pytest.raises(ValidationError):
        request.model_copy(update={"precision": "fp3"})
