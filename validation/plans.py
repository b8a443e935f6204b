"""Which runs each mode makes: ``full`` for real hardware, ``quick`` for CI (a few minutes on
two CPU cores), ``tiny`` for the test suite's miniature run.

The MLP sweeps are seed 001's (§4.2): depth 2-5, width 128-2048, batch 64-512, five
activations, four optimizers, each varied alone around the seed's configuration.
"""
from __future__ import annotations

from dataclasses import replace

from .measure import StepBudget
from .workloads import (
    ACTIVATIONS,
    IMAGENET_10_CLASS_TRAIN,
    IMAGENET_RESOLUTION,
    OPTIMIZERS,
    SEED001_CLASSES,
    SEED001_FEATURES,
    SEED001_SAMPLES,
    SEED001_TRAIN_FRACTION,
    WorkloadSpec,
)

MLP_SWEEPS: dict[str, tuple] = {
    "depth": (2, 3, 4, 5),
    "width": (128, 256, 512, 1024, 2048),
    "batch_size": (64, 128, 256, 512),
    "activation": ACTIVATIONS,
    "optimizer": OPTIMIZERS,
}
QUICK_RESOLUTION = 64
GPT_SEQUENCES = 10_000  # training sequences per epoch assumed for the language model's prediction

BUDGETS = {
    "full": StepBudget(warmup=5, min_steps=10, max_steps=200, seconds=10.0, profile_steps=5),
    "quick": StepBudget(warmup=2, min_steps=5, max_steps=30, seconds=1.5, profile_steps=3),
    "tiny": StepBudget(warmup=1, min_steps=3, max_steps=5, seconds=0.2, profile_steps=2),
}


def seed001_mlp(dataset_samples: int = SEED001_SAMPLES) -> WorkloadSpec:
    """The seed-001 configuration: 75-512-512-512-10, LeakyReLU, Adam lr 1e-4, batch 512."""
    config = {"inputs": SEED001_FEATURES, "depth": 3, "width": 512, "classes": SEED001_CLASSES,
              "activation": "leakyrelu", "dataset_samples": dataset_samples,
              "train_split": SEED001_TRAIN_FRACTION}
    return WorkloadSpec(run_id="mlp-seed001", workload="mlp", config=config, batch_size=512, optimizer="adam",
                        learning_rate=1e-4, train_samples=int(dataset_samples * SEED001_TRAIN_FRACTION))


def mlp_sweep(base: WorkloadSpec, sweeps: dict[str, tuple] = MLP_SWEEPS) -> list[WorkloadSpec]:
    """One run per swept value, all other hyperparameters at the base configuration."""
    runs = []
    for name, values in sweeps.items():
        for value in values:
            if name == "batch_size":
                if value == base.batch_size:
                    continue
                spec = replace(base, batch_size=value)
            elif name == "optimizer":
                if value == base.optimizer:
                    continue
                spec = replace(base, optimizer=value)
            else:
                if base.config[name] == value:
                    continue
                spec = replace(base, config={**base.config, name: value})
            runs.append(replace(spec, run_id=f"mlp-{name}-{value}".replace("_", "-"), sweep=(name, value)))
    return runs


def cnn(workload: str, batch_size: int, resolution: int, train_samples: int = IMAGENET_10_CLASS_TRAIN) -> WorkloadSpec:
    notes = () if resolution == IMAGENET_RESOLUTION else (
        f"input {resolution}x{resolution} instead of ImageNet's {IMAGENET_RESOLUTION}x{IMAGENET_RESOLUTION} (quick mode)",)
    return WorkloadSpec(run_id=f"{workload}-b{batch_size}-{resolution}px", workload=workload,
                        config={"classes": 10, "resolution": resolution}, batch_size=batch_size, optimizer="sgd",
                        learning_rate=0.01, train_samples=train_samples, notes=notes)


def gpt(seq_len: int, d_model: int, layers: int, heads: int, batch_size: int) -> WorkloadSpec:
    return WorkloadSpec(run_id=f"gpt-d{d_model}-l{layers}-s{seq_len}", workload="gpt",
                        config={"vocab": 256, "seq_len": seq_len, "d_model": d_model, "layers": layers, "heads": heads},
                        batch_size=batch_size, optimizer="adamw", learning_rate=3e-4, train_samples=GPT_SEQUENCES,
                        notes=(f"one sample = one sequence of {seq_len} tokens (byte-level vocabulary of 256)",))


def data_parallel(base: WorkloadSpec, processes: int = 2) -> WorkloadSpec:
    return replace(base, run_id=f"{base.run_id}-ddp{processes}", processes=processes,
                   notes=(f"{processes}-process torch.distributed data parallel, global batch {base.batch_size}",))


def plan(mode: str) -> list[WorkloadSpec]:
    """The runs of a mode, in the order they are made."""
    if mode == "tiny":
        base = replace(seed001_mlp(dataset_samples=2048), batch_size=64)
        return [base, *mlp_sweep(base, {"depth": (2,)}),
                cnn("alexnet", 2, QUICK_RESOLUTION), gpt(seq_len=16, d_model=32, layers=1, heads=2, batch_size=2)]
    base = seed001_mlp()
    runs = [base, *mlp_sweep(base)]
    if mode == "quick":
        runs += [cnn("alexnet", 64, QUICK_RESOLUTION), cnn("alexnet", 128, QUICK_RESOLUTION),
                 cnn("vgg11", 12, QUICK_RESOLUTION), gpt(seq_len=64, d_model=128, layers=2, heads=4, batch_size=16)]
    elif mode == "full":
        runs += [cnn("alexnet", 64, IMAGENET_RESOLUTION), cnn("alexnet", 128, IMAGENET_RESOLUTION),
                 cnn("vgg11", 12, IMAGENET_RESOLUTION), gpt(seq_len=256, d_model=384, layers=6, heads=6, batch_size=32)]
    else:
        raise ValueError(f"mode: got {mode!r}; expected full, quick or tiny")
    return [*runs, data_parallel(base)]
