"""sizer/workloads/profile.py: reading workload profiles, interpolating between sequence lengths."""
import pytest

from sizer.errors import InputError
from sizer.workloads.profile import builtin_profile_names, load_profile
from sizer.workloads.source import FileRef


def test_builtin_profiles_cover_the_issue_list():
    assert {"mlp-seed001", "alexnet", "vgg11", "resnet50", "bert-base", "bert-large", "gpt2-small"} <= set(builtin_profile_names())


def test_resnet50_profile_matches_the_known_model():
    profile = load_profile("resnet50")
    # torchvision resnet50: 25,557,032 parameters, 4.1 GMAC = 8.2 GFLOP forward at 224x224 (He et al. 2016)
    assert profile.params == 25_557_032
    assert profile.forward_flops == pytest.approx(8.18e9, rel=0.01)
    assert "sizer profile" in profile.generated_by


def test_mlp_profile_counts_2p_flop():
    profile = load_profile("mlp-seed001")
    weights = sum(layer.params for layer in profile.layers)
    biases = 512 * 3 + 10
    # a dense layer does one multiply and one add per weight (seed 004 eq. 3); biases add no counted FLOP
    assert profile.forward_flops == pytest.approx(2 * (weights - biases))


def test_seq_len_exact_and_interpolated():
    at384 = load_profile("bert-large", 384)
    at128, at512 = load_profile("bert-large", 128), load_profile("bert-large", 512)
    middle = load_profile("bert-large", 256)
    assert at384.seq_len == 384 and middle.seq_len == 256
    assert at128.forward_flops < middle.forward_flops < at384.forward_flops < at512.forward_flops
    # matmul FLOP grow linearly with the sequence: the quadratic through 3 points reproduces them
    linear = at128.forward_flops + (at384.forward_flops - at128.forward_flops) * (256 - 128) / (384 - 128)
    assert middle.forward_flops == pytest.approx(linear, rel=0.02)
    assert middle.params == at384.params


@pytest.mark.parametrize("name, seq_len, field", [("no-such-model", None, "workload"), ("resnet50", 128, "seq_len"),
                                                   ("bert-base", 0, "seq_len"), ("", None, "workload")])
def test_bad_profile_requests(name, seq_len, field):
    with pytest.raises(InputError) as error:
        load_profile(name, seq_len)
    assert error.value.field == field


def test_profile_file_by_path(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text("name: tiny\ndescription: two layers\ngenerated_by: hand\nlayers:\n"
                    "  - {name: fc, kind: matmul, forward_flops: 2000, bytes: 400, params: 1000}\n"
                    "  - {name: act, kind: elementwise, forward_flops: 0, bytes: 80}\n")
    assert load_profile(FileRef(str(path))).params == 1000
    path.write_text("name: tiny\ndescription: x\ngenerated_by: hand\nlayers:\n  - {name: fc, kind: teleport, forward_flops: 1, bytes: 1}\n")
    with pytest.raises(InputError, match="kind"):
        load_profile(FileRef(str(path)))


@pytest.mark.parametrize("layers", ["[]", "[{name: a, kind: matmul, forward_flops: 0, bytes: 0}]"])
def test_an_empty_profile_is_refused(tmp_path, layers):
    # issue 18: a profile with no layers (or none with FLOP) gave a 0-FLOP "training run" of 31 s
    path = tmp_path / "empty.yaml"
    path.write_text(f"name: empty\ndescription: nothing\ngenerated_by: hand\nlayers: {layers}\n")
    with pytest.raises(InputError, match="forward FLOP above zero"):
        load_profile(FileRef(str(path)))


def test_an_empty_profile_is_one_message_on_the_command_line(tmp_path, cli):
    path = tmp_path / "empty.yaml"
    path.write_text("name: empty\ndescription: nothing\ngenerated_by: hand\nlayers: []\n")
    result = cli("time", "--workload", str(path), "--samples", "1e6", "--device", "H100 SXM", "--batch-size", "32")
    assert result.exit_code == 2 and "workload" in result.stderr and "Traceback" not in result.output
