"""sizer/workloads/workload_profile.py: every form of --workload, and every shipped profile answering `time`."""
import math

import pytest

from sizer.errors import InputError
from sizer.facade import TimeRequest, time_estimate
from sizer.workloads.profile import builtin_profile_names
from sizer.workloads.workload_profile import check_served_workload, find_profile

# Names the issue lists (and the measured runs' CSVs use), as people write them -> the shipped profile.
FORGIVING_NAMES = {
    "VGG-16": "vgg16", "vgg16": "vgg16", "VGG-19": "vgg19", "ResNet-18": "resnet18", "ResNet-34": "resnet34",
    "resnet-101": "resnet101", "ResNet-152": "resnet152", "densenet121": "densenet121", "DenseNet-161": "densenet161",
    "DenseNet-201": "densenet201", "MobileNet v2": "mobilenet-v2", "MobileNetV3-Large": "mobilenet-v3-large",
    "MobileNet v3": "mobilenet-v3-large", "mobilenet_v3_small": "mobilenet-v3-small", "Inception v3": "inception-v3",
    "Inception-V1": "googlenet", "GoogLeNet": "googlenet", "SqueezeNet": "squeezenet1-1", "SqueezeNet 1.0": "squeezenet1-0",
    "squeezenet1_1": "squeezenet1-1", "EfficientNet": "efficientnet-b0", "EfficientNet-B0": "efficientnet-b0",
    "vit-b16": "vit-b-16", "vit_b_16": "vit-b-16", "ViT": "vit-b-16", "ViT-L-16": "vit-l-16", "DeiT-S": "deit-small",
    "deit_base_patch16_224": "deit-base", "Swin-T": "swin-t", "ConvNeXt-T": "convnext-tiny", "convnext_tiny": "convnext-tiny",
    "RegNet": "regnet-y-400mf", "regnet_y_400mf": "regnet-y-400mf", "ShuffleNet v2": "shufflenet-v2-x1-0",
    "MNASNet": "mnasnet1-0", "DistilBERT": "distilbert", "distilbert-base-uncased": "distilbert",
    "RoBERTa": "roberta-base", "roberta-large": "roberta-large", "DeBERTa-v3": "deberta-v3-base",
    "microsoft/deberta-v3-base": "deberta-v3-base", "T5": "t5-small", "t5-base": "t5-base", "CLIP": "clip-vit-b-32",
    "clip-vit-base-patch32": "clip-vit-b-32", "Whisper": "whisper-base", "whisper-small": "whisper-small",
    "BERT-large": "bert-large", "bert-large-uncased": "bert-large", "hf:bert-base-uncased": "bert-base",
    "VGG-A": "vgg11-imagenet", "AlexNet OWT": "alexnet-imagenet", "AlexNet": "alexnet", "torchvision:alexnet": "alexnet-imagenet",
    "torchvision:vgg11": "vgg11-imagenet", "torchvision:vgg16": "vgg16", "torchvision:vit_b_16": "vit-b-16",
    "timm:deit_small_patch16_224": "deit-small", "hf:distilbert-base-uncased": "distilbert",
    "hf:openai/whisper-small": "whisper-small",
}


@pytest.mark.parametrize("written, name", FORGIVING_NAMES.items())
def test_names_as_people_write_them_find_the_shipped_profile(written, name):
    assert find_profile(written).name == name


@pytest.mark.parametrize("name", builtin_profile_names())
def test_every_shipped_profile_answers_time_on_one_device(name):
    result = time_estimate(TimeRequest(workload=name, samples=1e5, device="H100 SXM", batch_size=8))
    low, expected, high = result.training_time.low, result.training_time.expected, result.training_time.high
    assert all(math.isfinite(v) for v in (low, expected, high)) and 0 < low <= expected <= high


def test_a_sequence_model_is_found_at_its_profiled_lengths():
    assert find_profile("DistilBERT", 384).seq_len == 384
    assert find_profile("roberta-base", 256).seq_len == 256  # interpolated between 128, 384 and 512


def test_over_http_built_in_names_and_mlp_widths_pass_and_library_models_are_refused():
    for served in ("VGG-16", "vit_b_16", "mlp:784,512,10", None):
        check_served_workload(served)
    with pytest.raises(InputError) as error:
        check_served_workload("timm:convnext_small")
    assert error.value.field == "workload" and "sizer time --workload timm:convnext_small" in error.value.message
    for refused in ("mlp:1", "no-such-net"):
        with pytest.raises(InputError, match="workload"):
            check_served_workload(refused)
