"""The typed setups: a model's checkpoint id, and a layout's nodes."""
import pytest

from sizer.choices import Method, Optimizer, Recompute
from sizer.launch.setups import TrainingSetup, model_id


def test_a_shipped_config_is_its_hub_id_and_a_preset_its_name():
    assert model_id("qwen3-32b") == ("Qwen/Qwen3-32B", True)  # catalog/hf_configs/index: Qwen--Qwen3-32B.json
    assert model_id("llama-2-7b") == ("llama-2-7b", False)  # a preset: no hub id in the catalog
    assert model_id(None) == ("MODEL", False)


@pytest.mark.parametrize("count, per_node, nodes, in_node", [(256, 8, 32, 8), (4, 8, 1, 4), (12, 8, 2, 8)])
def test_nodes(count, per_node, nodes, in_node):
    setup = TrainingSetup(model=None, tp=1, pp=1, cp=1, dp=count, ep=1, interleave=1, zero=0, recompute=Recompute.NONE,
                          micro_batch=1, accumulation=1, global_batch=count, seq_len=None, layers=None, precision="bf16",
                          optimizer=Optimizer.ADAMW, method=Method.FULL, lora_rank=None, lora_targets=(), offload=False,
                          count=count, devices_per_node=per_node, device=None, fits=None)
    assert (setup.nodes, setup.devices_in_node) == (nodes, in_node)
