"""sizer/engine/step_inputs.py: the passes over the layers (as multiples of the forward pass), the model's shape and
the names the engine codes its results by."""
from sizer.choices import Recompute
from sizer.engine.step_inputs import BOUNDS, FROZEN, INFERENCE, RECOMPUTE, TRAINING, Shape, training_passes
from sizer.formulas.compute import BACKWARD_FACTOR


def test_frozen_weights_skip_the_weight_gradient_half_of_the_backward_pass():
    # O_frozen = 1 + (O_b - 1) / 2 (seed 004's O_b = 3 gives 2)
    training, frozen = training_passes(3.0)
    assert (training.flops, frozen.flops) == (3.0, 2.0)
    assert frozen.trained is training and training.backward and training.updates
    assert (TRAINING.flops, FROZEN.flops) == (BACKWARD_FACTOR, 1.0 + (BACKWARD_FACTOR - 1.0) / 2.0)


def test_inference_is_one_forward_pass_with_no_update():
    assert (INFERENCE.flops, INFERENCE.activation_bytes, INFERENCE.kernels, INFERENCE.weight_reads) == (1, 1, 1, 1)
    assert not INFERENCE.backward and not INFERENCE.updates


def test_codes_name_the_recomputation_policies_in_engine_order():
    assert RECOMPUTE == tuple(policy.value for policy in Recompute)
    assert BOUNDS[0] == "compute" and len(set(BOUNDS)) == len(BOUNDS)


def test_a_shape_defaults_to_a_dense_model_attending_in_every_block():
    shape = Shape(blocks=32, hidden=4096, tokens_per_sample=2048.0)
    assert (shape.kv_width, shape.attention_blocks, shape.moe_blocks, shape.routed_per_token) == (0, 0, 0, 0.0)
