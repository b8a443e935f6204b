"""What the training emitters share: refusals naming emit, the batch where the answer chose none."""
import pytest

from sizer.choices import Method, Optimizer, Recompute
from sizer.errors import InputError
from sizer.launch.setups import TrainingSetup
from sizer.launch.training_checks import accumulation, global_batch, model_name, refuse_precision, refuse_split


def _setup(**changes):
    fields = dict(model="llama-2-7b", tp=1, pp=1, cp=1, dp=4, ep=1, interleave=1, zero=1, recompute=Recompute.NONE,
                  micro_batch=2, accumulation=None, global_batch=None, seq_len=4096, layers=32, precision="bf16",
                  optimizer=Optimizer.ADAMW, method=Method.FULL, lora_rank=None, lora_targets=(), offload=False, count=4,
                  devices_per_node=8, device=None, fits=True)
    return TrainingSetup(**{**fields, **changes})


def test_the_batch_where_none_was_chosen():
    assert accumulation(_setup()) == 1 and global_batch(_setup()) == 2 * 1 * 4
    assert global_batch(_setup(accumulation=8, global_batch=64)) == 64 and accumulation(_setup(accumulation=8)) == 8
    assert model_name(_setup(model=None)) == "MODEL"


def test_refusals_name_emit():
    with pytest.raises(InputError) as caught:
        refuse_split("deepspeed", _setup(tp=2, dp=2), "why")
    assert caught.value.field == "emit" and "tp 2" in str(caught.value)
    refuse_split("deepspeed", _setup(), "why")  # data parallel only: nothing to refuse
    with pytest.raises(InputError):
        refuse_precision("torchtune", _setup(precision="fp16"), ("bf16", "fp32"))
