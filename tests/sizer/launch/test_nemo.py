"""NeMo 2 recipe overrides from a training layout: the keys its recipes define, the layout's values."""
from sizer.launch import nemo


def test_the_overrides_are_the_layout(train):
    result = train(model="llama-2-70b", device="H100 SXM", count=256, tokens=2e12, emit="nemo")
    layout, launch = result.layout, result.launch
    written = dict(line.strip().rstrip(" \\").split("=", 1) for line in launch.command.splitlines()[1:])
    assert set(written) == set(launch.options) <= nemo.OPTIONS
    assert {k: str(v) for k, v in launch.options.items()} == written  # the text says what the field says
    o = launch.options
    assert o["trainer.strategy.tensor_model_parallel_size"] == layout.tp
    assert o["trainer.strategy.pipeline_model_parallel_size"] == layout.pp
    assert o.get("trainer.strategy.virtual_pipeline_model_parallel_size", 1) == layout.interleave
    assert o["trainer.strategy.context_parallel_size"] == layout.cp
    assert o["trainer.strategy.expert_model_parallel_size"] == layout.ep
    assert o["data.micro_batch_size"] == layout.micro_batch and o["data.global_batch_size"] == result.batch_size
    assert o["trainer.num_nodes"] * o["trainer.devices"] == result.count
    assert o["optim.config.use_distributed_optimizer"] is (layout.zero >= 1)
