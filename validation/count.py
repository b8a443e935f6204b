"""What a real model costs per sample, counted by torch rather than by hand (spec §7).

- forward FLOP with :class:`torch.utils.flop_counter.FlopCounterMode` (matrix products and
  convolutions; element-wise operations and bias additions are not counted by torch);
- forward + backward FLOP the same way, giving the model's own ``O_b``;
- activation memory: the bytes autograd saves for the backward pass in one forward pass
  (``torch.autograd.graph.saved_tensors_hooks``), parameters and the input batch excluded.

Each is compared with the core's analytic figure ``O_f · P`` (seed 004 eq. 3).
"""
from __future__ import annotations

from dataclasses import dataclass

from sizer.formulas.compute import FORWARD_FLOPS_PER_PARAM


@dataclass(frozen=True)
class ModelCounts:
    params: int
    bias_params: int
    forward_flops_per_sample: float
    training_flops_per_sample: float
    activation_bytes_per_sample: float
    tokens_per_sample: int = 1

    @property
    def analytic_forward_flops_per_sample(self) -> float:
        """``O_f · P`` per token with O_f = 2 (seed 004 eq. 3), the core's default, times the tokens
        in a sample (a language-model sample here is one sequence)."""
        return FORWARD_FLOPS_PER_PARAM * self.params * self.tokens_per_sample

    @property
    def counted_backward_factor(self) -> float:
        """Forward + backward FLOP over forward FLOP: the measured ``O_b`` (the core assumes 3)."""
        return self.training_flops_per_sample / self.forward_flops_per_sample

    def as_dict(self) -> dict:
        analytic = self.analytic_forward_flops_per_sample
        weights_only = FORWARD_FLOPS_PER_PARAM * (self.params - self.bias_params) * self.tokens_per_sample
        return {
            "counted": {"value": self.forward_flops_per_sample, "unit": "FLOP"},
            "analytic": {"value": analytic, "unit": "FLOP"},
            "analytic_weights_only": {"value": weights_only, "unit": "FLOP"},
            "relative_difference": self.forward_flops_per_sample / analytic - 1,
            "counted_training": {"value": self.training_flops_per_sample, "unit": "FLOP"},
            "counted_backward_factor": self.counted_backward_factor,
            "per": "sample (forward pass)", "tokens_per_sample": self.tokens_per_sample,
            "method": "torch.utils.flop_counter.FlopCounterMode on one batch, divided by the batch size; "
                      "analytic = O_f P (x tokens per sample) with O_f = 2 (seed 004 eq. 3)",
        }


def count_parameters(model) -> tuple[int, int]:
    """All parameters, and those that are biases (named ``*.bias``)."""
    total = sum(p.numel() for p in model.parameters())
    bias = sum(p.numel() for name, p in model.named_parameters() if name.endswith("bias"))
    return total, bias


def count_model(model, inputs, targets, loss_fn, tokens_per_sample: int = 1) -> ModelCounts:
    """FLOP and saved-activation bytes per sample for one batch of ``inputs``."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    batch = inputs.shape[0]
    with FlopCounterMode(display=False) as forward_counter:
        with torch.no_grad():
            model(inputs)
    with FlopCounterMode(display=False) as training_counter:
        loss_fn(model(inputs), targets).backward()
    model.zero_grad(set_to_none=True)

    excluded = {p.untyped_storage().data_ptr() for p in model.parameters()}
    excluded.add(inputs.untyped_storage().data_ptr())
    saved: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in excluded:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = model(inputs)
    del output
    params, bias = count_parameters(model)
    return ModelCounts(params=params, bias_params=bias,
                       forward_flops_per_sample=forward_counter.get_total_flops() / batch,
                       training_flops_per_sample=training_counter.get_total_flops() / batch,
                       activation_bytes_per_sample=sum(saved.values()) / batch, tokens_per_sample=tokens_per_sample)
