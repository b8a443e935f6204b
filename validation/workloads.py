"""The models the suite trains, on synthetic data of the right shapes (no downloads).

- the seed-001 MLP: 75 OpenPose keypoint values in, hidden blocks of a linear layer and an
  activation, 10 classes, Adam lr 1e-4, cross-entropy, batch 512, on data shaped like its
  101,136 x 75 keypoint set split 80/20 (seed 001 §3.2-3.3);
- the seed-002 CNNs, AlexNet and VGG-11, with torchvision's layer shapes and 10 classes
  (seed 002 §2.3.11, ImageNet with 10 classes);
- a small GPT-style decoder language model.

Activations are never in-place: a full backward hook (per-layer timing) forbids it. Every
builder imports torch lazily.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SEED001_SAMPLES = 101_136  # keypoint frames in the seed-001 data set
SEED001_FEATURES = 75  # values extracted by OpenPose per frame
SEED001_CLASSES = 10
SEED001_TRAIN_FRACTION = 0.8
IMAGENET_RESOLUTION = 224
IMAGENET_10_CLASS_TRAIN = 13_000  # 10 ImageNet classes x about 1,300 training images (seed 002)

ACTIVATIONS = ("relu", "leakyrelu", "tanh", "sigmoid", "silu")
OPTIMIZERS = ("adagrad", "rmsprop", "sgd", "adam")
# torch optimizer -> the core's optimizer name (spec §3.8 state copies: SGD 0, Adagrad 1, RMSProp 1, Adam 2).
CORE_OPTIMIZER = {"adagrad": "adagrad", "rmsprop": "rmsprop", "sgd": "sgd", "adam": "adam", "adamw": "adamw"}


@dataclass(frozen=True)
class WorkloadSpec:
    """One training run to measure: what to build, how to feed it, which sweep it belongs to."""

    run_id: str
    workload: str  # "mlp", "alexnet", "vgg11", "gpt"
    config: dict[str, Any]
    batch_size: int
    optimizer: str = "adam"
    learning_rate: float = 1e-4
    train_samples: int = 0
    sweep: tuple[str, Any] | None = None  # (hyperparameter, value)
    notes: tuple[str, ...] = ()
    processes: int = 1  # data-parallel ranks (validation.distributed)

    @property
    def tokens_per_sample(self) -> int:
        """Positions that reuse every weight within one sample: the sequence length of a language model."""
        return int(self.config.get("seq_len", 1)) if self.workload == "gpt" else 1

    @property
    def family(self) -> str:
        return {"mlp": "mlp", "alexnet": "cnn", "vgg11": "cnn", "gpt": "transformer"}[self.workload]


def activation(name: str):
    import torch.nn as nn

    return {"relu": nn.ReLU, "leakyrelu": nn.LeakyReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "silu": nn.SiLU}[name]()


def build_mlp(inputs: int = SEED001_FEATURES, depth: int = 3, width: int = 512, classes: int = SEED001_CLASSES,
              act: str = "leakyrelu"):
    """Seed-001 MLP: ``depth`` hidden blocks (linear layer then activation) of ``width`` units.

    Depth 3, width 512 has 569,354 parameters (seed 001 reports 0.6-0.8 M).
    """
    import torch.nn as nn

    layers: list = []
    features = inputs
    for _ in range(depth):
        layers += [nn.Linear(features, width), activation(act)]
        features = width
    layers.append(nn.Linear(features, classes))
    return nn.Sequential(*layers)


def build_alexnet(classes: int = 10):
    """AlexNet with torchvision's layer shapes (Krizhevsky 2014 "one weird trick" variant)."""
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),
        nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(),
        nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.AdaptiveAvgPool2d((6, 6)), nn.Flatten(),
        nn.Dropout(0.5), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(),
        nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(),
        nn.Linear(4096, classes))


VGG11_CHANNELS = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")  # Simonyan & Zisserman 2015, config A


def build_vgg11(classes: int = 10):
    """VGG-11 (configuration A) with torchvision's layer shapes, no batch norm."""
    import torch.nn as nn

    layers: list = []
    channels = 3
    for item in VGG11_CHANNELS:
        if item == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(channels, item, 3, padding=1), nn.ReLU()]
            channels = item
    layers += [nn.AdaptiveAvgPool2d((7, 7)), nn.Flatten(),
               nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(0.5),
               nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(0.5), nn.Linear(4096, classes)]
    return nn.Sequential(*layers)


def build_gpt(vocab: int = 256, seq_len: int = 128, d_model: int = 256, layers: int = 4, heads: int = 4):
    """A small GPT-style decoder (Radford et al. 2019 block layout: pre-norm, causal attention, 4x MLP)."""
    import torch
    import torch.nn as nn

    class CausalAttentionCore(nn.Module):
        """softmax(q k^T / sqrt(d_head) + causal mask) v, as a leaf module so per-layer timing sees it."""

        def __init__(self):
            super().__init__()
            self.register_buffer("mask", torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool)), persistent=False)

        def forward(self, q, k, v):
            s = q.shape[-2]
            scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
            scores = scores.masked_fill(~self.mask[:s, :s], float("-inf"))
            return scores.softmax(-1) @ v  # explicit matmuls, so the FLOP counter sees the attention

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.core = CausalAttentionCore()
            self.proj = nn.Linear(d_model, d_model)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(x).view(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            return self.proj(self.core(q, k, v).transpose(1, 2).reshape(b, s, d))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attn = nn.LayerNorm(d_model), Attention()
            self.ln2 = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, d_model), nn.Embedding(seq_len, d_model)
            self.blocks = nn.Sequential(*(Block() for _ in range(layers)))
            self.ln_f, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, vocab, bias=False)

        def forward(self, idx):
            position = torch.arange(idx.shape[1], device=idx.device)
            return self.head(self.ln_f(self.blocks(self.tokens(idx) + self.positions(position))))

    return GPT()


def build_model(spec: WorkloadSpec):
    c = spec.config
    if spec.workload == "mlp":
        return build_mlp(c["inputs"], c["depth"], c["width"], c["classes"], c["activation"])
    if spec.workload == "alexnet":
        return build_alexnet(c["classes"])
    if spec.workload == "vgg11":
        return build_vgg11(c["classes"])
    if spec.workload == "gpt":
        return build_gpt(c["vocab"], c["seq_len"], c["d_model"], c["layers"], c["heads"])
    raise ValueError(f"unknown workload {spec.workload!r}")


class SyntheticData:
    """Random inputs and labels of the workload's shapes, drawn once and indexed per step.

    For the MLP the whole seed-001-shaped set (samples x 75) is drawn and split 80/20; batches
    come from the training part in order, as a DataLoader without shuffling would give them.
    """

    def __init__(self, spec: WorkloadSpec, device: str, seed: int = 0):
        import torch

        generator = torch.Generator().manual_seed(seed)
        c = spec.config
        self.batch_size = spec.batch_size
        if spec.workload == "mlp":
            total = c.get("dataset_samples", SEED001_SAMPLES)
            inputs = torch.randn(total, c["inputs"], generator=generator)
            labels = torch.randint(0, c["classes"], (total,), generator=generator)
            split = int(total * SEED001_TRAIN_FRACTION)
            self.inputs, self.labels = inputs[:split].to(device), labels[:split].to(device)
        elif spec.workload in ("alexnet", "vgg11"):
            pool = 2 * spec.batch_size  # distinct images; the input pipeline is not what is measured
            r = c["resolution"]
            self.inputs = torch.randn(pool, 3, r, r, generator=generator).to(device)
            self.labels = torch.randint(0, c["classes"], (pool,), generator=generator).to(device)
        else:
            pool = 2 * spec.batch_size
            tokens = torch.randint(0, c["vocab"], (pool, c["seq_len"] + 1), generator=generator)
            self.inputs, self.labels = tokens[:, :-1].contiguous().to(device), tokens[:, 1:].contiguous().to(device)
        self.position = 0

    def batch(self):
        n = self.inputs.shape[0]
        if self.position + self.batch_size > n:
            self.position = 0
        start = self.position
        self.position += self.batch_size
        return self.inputs[start:start + self.batch_size], self.labels[start:start + self.batch_size]


def loss_fn(spec: WorkloadSpec):
    import torch.nn.functional as F

    if spec.workload == "gpt":
        return lambda logits, target: F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
    return F.cross_entropy


def make_optimizer(spec: WorkloadSpec, parameters):
    import torch

    classes = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD,
               "adagrad": torch.optim.Adagrad, "rmsprop": torch.optim.RMSprop}
    return classes[spec.optimizer](parameters, lr=spec.learning_rate)
