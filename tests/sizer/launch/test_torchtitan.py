"""A torchtitan TOML from a training layout: the keys JobConfig defines, the layout's degrees and batches."""
import tomllib

import pytest

from sizer.errors import InputError
from sizer.launch import torchtitan


def test_the_toml_is_the_layout(train):
    result = train(model="llama-2-70b", device="H100 SXM", count=256, tokens=2e12, emit="torchtitan")
    layout, launch = result.layout, result.launch
    config = tomllib.loads(launch.config)
    flat = {f"{s}.{k}": v for s, keys in config.items() for k, v in keys.items()}
    assert flat == launch.options and set(flat) <= torchtitan.OPTIONS
    p = config["parallelism"]
    assert (p["tensor_parallel_degree"], p["pipeline_parallel_degree"], p["context_parallel_degree"]) == \
        (layout.tp, layout.pp, layout.cp)
    assert p["data_parallel_replicate_degree"] * p["data_parallel_shard_degree"] == layout.dp
    assert config["activation_checkpoint"]["mode"] == layout.recompute
    assert config["training"]["global_batch_size"] == result.batch_size
    if layout.pp > 1:  # the per-rank batch is split into micro-batches by the pipeline
        assert p["pipeline_parallel_microbatch_size"] == layout.micro_batch
        assert config["training"]["local_batch_size"] == layout.micro_batch * layout.accumulation


def test_replicas_without_sharding(train):
    result = train(model="llama-2-7b", device="H100 SXM", count=8, tokens=1e10, zero=0, tp=1, pp=1, cp=1,
                   emit="torchtitan")
    p = tomllib.loads(result.launch.config)["parallelism"]
    assert p["data_parallel_replicate_degree"] == 8 and p["data_parallel_shard_degree"] == 1


def test_fp16_is_refused(train):
    with pytest.raises(InputError) as caught:
        train(model="llama-2-7b", device="V100 SXM2 32GB", count=8, tokens=1e9, precision="fp16", emit="torchtitan")
    assert caught.value.field == "emit" and "fp16" in str(caught.value)
