"""sizer/workloads/mlp_profile.py: ``mlp:W1,W2,...`` counted analytically, as torch counts the same layers."""
import pytest

from sizer.errors import InputError
from sizer.workloads.mlp_profile import mlp_profile, widths
from sizer.workloads.profile import load_profile


def test_the_seed_mlp_widths_give_torchs_profile_row_for_row():
    # catalog/workloads/mlp-seed001.yaml was counted by torch (sizer profile validation.model_zoo:mlp_seed001):
    # 75 inputs, 3 hidden layers of 512 with LeakyReLU, 10 classes
    torch_count = load_profile("mlp-seed001")
    analytic = mlp_profile("mlp:75,512,512,512,10")
    assert analytic.params == torch_count.params == 569_354
    assert analytic.forward_flops == torch_count.forward_flops
    assert [layer.model_dump() for layer in analytic.layers] == [layer.model_dump() for layer in torch_count.layers]


def test_dense_layers_count_2_in_out_flop_and_in_out_plus_out_parameters():
    profile = mlp_profile("mlp: 784, 512 ,10")
    assert profile.name == "mlp:784,512,10"
    assert profile.forward_flops == 2 * 784 * 512 + 2 * 512 * 10
    assert profile.params == 784 * 512 + 512 + 512 * 10 + 10
    assert [layer.kind for layer in profile.layers] == ["matmul", "elementwise", "matmul"]
    assert profile.input_shape == [784]


@pytest.mark.parametrize("text", ["mlp:", "mlp:784", "mlp:784,0,10", "mlp:784,-5,10", "mlp:7.5,10", "mlp:a,b",
                                  "mlp:784,99999999,10", "mlp:" + ",".join(["8"] * 70)])
def test_a_malformed_width_list_is_refused_naming_workload(text):
    with pytest.raises(InputError) as error:
        widths(text)
    assert error.value.field == "workload" and "mlp:784,512,10" in error.value.message
