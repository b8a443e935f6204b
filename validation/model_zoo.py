"""Models for the built-in workload profiles, with the layer shapes of their reference versions.

torchvision cannot be installed beside this torch build, so ResNet-50 is written here with
torchvision's ``resnet50`` shapes (25,557,032 parameters); BERT follows Devlin et al. 2019
(base: 12 x 768, large: 24 x 1024; with a SQuAD span head, as in the published fine-tuning
measurements); GPT-2 small follows Radford et al. 2019 (12 x 768, 1024 positions, tied
embedding). Attention is written out (matmul, softmax, matmul) so that its FLOP and bytes are
the same on every device. Each factory returns a model with ``example_input(batch)``.
"""
from __future__ import annotations


def _attach_example(model, make):
    model.example_input = make
    return model


def resnet50(classes: int = 1000):
    """ResNet-50 v1.5 (stride on the 3x3 convolution), 224 x 224 inputs."""
    import torch
    import torch.nn as nn

    class Bottleneck(nn.Module):
        def __init__(self, inplanes: int, planes: int, stride: int, downsample: bool):
            super().__init__()
            width = planes
            self.conv1, self.bn1 = nn.Conv2d(inplanes, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, planes * 4, 1, bias=False), nn.BatchNorm2d(planes * 4)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes * 4)) if downsample else None

        def forward(self, x):
            identity = self.downsample(x) if self.downsample is not None else x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + identity)

    layers, inplanes = [], 64
    for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        stage = []
        for index in range(blocks):
            stage.append(Bottleneck(inplanes, planes, stride if index == 0 else 1, index == 0))
            inplanes = planes * 4
        layers.append(nn.Sequential(*stage))
    model = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                          nn.MaxPool2d(3, 2, 1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, classes))
    return _attach_example(model, lambda batch: torch.randn(batch, 3, 224, 224))


def _encoder_block(d_model: int, heads: int, ff: int, causal: bool, pre_norm: bool):
    import math

    import torch
    import torch.nn as nn

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.out = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)

        def forward(self, x):
            batch, length, _ = x.shape
            q, k, v = self.qkv(x).view(batch, length, 3, heads, d_model // heads).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) / math.sqrt(d_model // heads)
            if causal:
                mask = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
                scores = scores.masked_fill(mask, float("-inf"))
            context = scores.softmax(-1) @ v
            return self.out(context.transpose(1, 2).reshape(batch, length, d_model))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention, self.norm1 = SelfAttention(), nn.LayerNorm(d_model)
            self.ff = nn.Sequential(nn.Linear(d_model, ff), nn.GELU(), nn.Linear(ff, d_model))
            self.norm2 = nn.LayerNorm(d_model)

        def forward(self, x):
            if pre_norm:
                x = x + self.attention(self.norm1(x))
                return x + self.ff(self.norm2(x))
            x = self.norm1(x + self.attention(x))
            return self.norm2(x + self.ff(x))

    return Block()


def bert(size: str = "base", seq_len: int = 384, vocab: int = 30522, dims: tuple[int, int, int] | None = None):
    """BERT encoder with a SQuAD span head (start and end logits per token); ``dims`` (layers, width, heads)
    instead of a named size builds the same code smaller (the GPU suite's CPU tests)."""
    import torch
    import torch.nn as nn

    layers, d_model, heads = dims or {"base": (12, 768, 12), "large": (24, 1024, 16)}[size]

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, d_model), nn.Embedding(512, d_model)
            self.segments, self.norm = nn.Embedding(2, d_model), nn.LayerNorm(d_model)
            self.blocks = nn.Sequential(*(_encoder_block(d_model, heads, 4 * d_model, False, False) for _ in range(layers)))
            self.span = nn.Linear(d_model, 2)

        def forward(self, ids):
            positions = torch.arange(ids.shape[1], device=ids.device)
            x = self.norm(self.tokens(ids) + self.positions(positions) + self.segments(torch.zeros_like(ids)))
            return self.span(self.blocks(x))

    return _attach_example(Bert(), lambda batch: torch.randint(0, vocab, (batch, seq_len)))


def bert_base(seq_len: int = 384):
    return bert("base", seq_len)


def bert_large(seq_len: int = 384):
    return bert("large", seq_len)


def gpt2_small(seq_len: int = 1024, vocab: int = 50257):
    """GPT-2 small: 12 pre-norm decoder blocks of 768, tied input and output embedding."""
    import torch
    import torch.nn as nn

    d_model = 768

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, d_model), nn.Embedding(1024, d_model)
            self.blocks = nn.Sequential(*(_encoder_block(d_model, 12, 4 * d_model, True, True) for _ in range(12)))
            self.norm = nn.LayerNorm(d_model)

        def forward(self, ids):
            positions = torch.arange(ids.shape[1], device=ids.device)
            x = self.norm(self.blocks(self.tokens(ids) + self.positions(positions)))
            return x @ self.tokens.weight.t()

    return _attach_example(GPT2(), lambda batch: torch.randint(0, vocab, (batch, seq_len)))


def mlp_seed001():
    """The seed-001 MLP: 75 inputs, 3 hidden blocks of 512 with LeakyReLU, 10 classes."""
    import torch

    from .workloads import build_mlp

    return _attach_example(build_mlp(), lambda batch: torch.randn(batch, 75))


def alexnet(resolution: int = 224):
    import torch

    from .workloads import build_alexnet

    return _attach_example(build_alexnet(10), lambda batch: torch.randn(batch, 3, resolution, resolution))


def vgg11(resolution: int = 224):
    import torch

    from .workloads import build_vgg11

    return _attach_example(build_vgg11(10), lambda batch: torch.randn(batch, 3, resolution, resolution))
