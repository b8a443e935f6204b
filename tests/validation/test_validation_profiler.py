"""validation/profiler.py: parameters counted once each, a tied weight included (needs torch)."""
import pytest

torch = pytest.importorskip("torch")

from validation.profiler import profile_model  # noqa: E402


def test_a_tied_output_layer_is_counted_once():
    # T5 and Whisper reuse their embedding as the output layer: one tensor held by two modules; the
    # profile once counted it twice and wrote a negative "(unattributed parameters)" row
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.out = torch.nn.Embedding(100, 16), torch.nn.Linear(16, 100, bias=False)
            self.out.weight = self.embed.weight

        def forward(self, ids):
            return self.out(self.embed(ids))

    model = Tied()
    profile = profile_model(model, torch.randint(0, 100, (2, 8)), name="tied", description="tied")
    assert sum(layer["params"] for layer in profile["layers"]) == sum(p.numel() for p in model.parameters()) == 1600
    assert all(layer["params"] >= 0 for layer in profile["layers"])


def test_a_tensor_two_ops_save_is_one_block_of_memory():
    # the ReLU keeps its output for its backward and the next linear layer keeps the same tensor as its
    # input: autograd holds one block, which the profile once counted twice (ResNet-50 130.6 MB per
    # sample against 86.0 MB of distinct blocks, counted by torch's saved-tensor hooks)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    profile = profile_model(model, torch.randn(4, 8), name="shared", description="linear-relu-linear")
    kept = sum(layer["activation_bytes"] for layer in profile["layers"])
    # per sample: the input (8 FP32 values) that the first layer keeps, the ReLU's output (16) once
    assert kept == (8 + 16) * 4


def test_buffers_are_model_state_not_activations():
    # a buffer (batch norm's running statistics, a fixed scale) that an op saves does not grow with the batch
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(8, 8)
            self.register_buffer("scale", torch.rand(1000, 8))

        def forward(self, x):
            return (self.linear(x).unsqueeze(1) * self.scale).sum(1)  # mul saves the buffer for x's gradient

    profile = profile_model(Scaled(), torch.randn(2, 8), name="scaled", description="linear times a buffer")
    # per sample: the 8 input values the linear layer keeps; the 32 kB buffer is not an activation
    assert sum(layer["activation_bytes"] for layer in profile["layers"]) == 8 * 4
