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
