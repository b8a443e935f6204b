"""sizer/workloads/request.py: resolving a workload request, defaults stated as assumptions."""
import pytest

from sizer.errors import InputError
from sizer.workloads.request import WorkloadRequest, resolve_workload, transformer_activation_bytes_per_token, transformer_shape


def test_token_workload_defaults_are_stated():
    workload = resolve_workload(WorkloadRequest(params=7e9, tokens=2e10))
    assert workload.token_mode and workload.seq_len == 2048 and workload.batch_size == 4 * 1024 * 1024
    names = {a.name for a in workload.assumptions}
    assert {"sequence length", "batch size", "activations"} <= names


def test_transformer_shape_matches_known_models():
    # GPT-3 175B: d = 12288, L = 96 (Brown et al. 2020); Llama 2 7B: d = 4096, L = 32
    gpt3 = transformer_shape(175e9)
    assert gpt3.layers == 96 and abs(gpt3.hidden - 12288) / 12288 < 0.01
    llama = transformer_shape(7e9)
    assert abs(llama.layers - 32) <= 1 and abs(llama.hidden - 4096) / 4096 < 0.05


def test_korthikanti_activation_formula():
    # per layer per token 34 h bytes with flash attention, plus 5 a s without it
    shape = transformer_shape(1.3e9)
    flash = transformer_activation_bytes_per_token(shape, 2048)
    assert flash == 34 * shape.hidden * shape.layers
    assert transformer_activation_bytes_per_token(shape, 2048, flash_attention=False) == flash + 5 * shape.heads * 2048 * shape.layers


@pytest.mark.parametrize("fields, field", [
    (dict(samples=10), "params"), (dict(params=1e6), "samples"), (dict(params=1e6, samples=10, tokens=10), "tokens"),
    (dict(params=1e6, samples=10, precision="fp4"), "precision"), (dict(params=-1, samples=10), "params"),
    (dict(params=1e6, samples=10, epochs=0), "epochs"), (dict(params=1e6, samples=10, activation_memory_per_sample="5 s"),
                                                        "activation_memory_per_sample"),
])
def test_bad_workloads_name_the_field(fields, field):
    with pytest.raises(InputError) as error:
        resolve_workload(WorkloadRequest(**fields))
    assert error.value.field == field
