"""Step-time constants of eager PyTorch adapter fine-tunes (LoRA, QLoRA), apart from pre-training's.

Pre-training runs are fused, compiled Megatron-style kernels at thousands of tokens per micro-batch;
the engine's GEMM-size curve (:func:`sizer.engine.roofline.matrix_size_factor`, half-point
``matrix_half`` fitted on MosaicML runs) and launch time come from those. An adapter fine-tune runs a
frozen base at a hundred to a few thousand tokens per micro-batch in eager PyTorch (litgpt, Hugging
Face PEFT). These constants replace the two there, for LoRA/QLoRA jobs only (a full fine-tune is a
training run like any other); each is fitted on the fit part of litgpt's published timed runs by
``benchmarks/finetune_accuracy.py`` (``fit_eager_constants``) and nowhere else.

Why two: at 128-512 tokens per micro-batch pre-training's half-point (16 GFLOP per kernel) leaves a fifth of
the tensor rate to a 4096 x 4096 GEMM, and litgpt's LoRA steps at micro-batch 1 on an A10G run about twice
that fast; the same steps on an A100, and Hugging Face PEFT's on an H100, stop getting shorter below some
hundreds of tokens, as each of an eager step's many small operations costs its dispatch. Candidates
scored on the fit part (mean of its median and p90 throughput error; benchmarks/ACCURACY.md, "Fine-tuning"):
today's constants 28.0 %; launch time alone (x2) 26.3 %; half-point alone (x0.5) 27.6 %; both (x0.125,
x3) 22.7 %, chosen; an asynchronous host-dispatch floor under each micro-batch instead of the per-layer
launch time (best: half-point x0, 80 us per kernel) 23.6 %, not kept.

MLPerf's tuned LoRA submissions are not eager: a job with ``eager=False`` keeps the table's constants.
"""
from __future__ import annotations

from dataclasses import replace

from sizer.engine import devices

# The GEMM-size half-point of an adapter fine-tune, as a multiple of the device table's (1: unchanged), and its
# time per kernel launch, as a multiple of the table's (eager dispatch of each operation: 3 x 20 us = 60 us on the
# GPUs). Chosen on the fit part from the grids below (median and p90 of the throughput error, averaged).
ADAPTER_MATRIX_HALF_SCALE = 0.125
ADAPTER_LAUNCH_SCALE = 3.0
MATRIX_HALF_SCALE_GRID = (1.0, 0.5, 0.25, 0.125, 0.0)
LAUNCH_SCALE_GRID = (1.0, 2.0, 3.0, 4.0)
# The rows: ../shared/data/finetune-measurements.csv, Lightning-AI/litgpt resource-tables.md (time_per_1000_iterations)
# and config_hub/finetune/README.md (training_runtime) single-GPU rows of the models whose name hashes even.
SOURCE = ("fitted on the fit part of litgpt's timed LoRA/QLoRA runs (benchmarks/finetune_accuracy.py; "
          "benchmarks/ACCURACY.md, Fine-tuning)")


def adapter_table(table: devices.DeviceTable) -> devices.DeviceTable:
    """The device table an adapter fine-tune is timed with.

    Parameters
    ----------
    table : DeviceTable
        The devices' table as pre-training times them.

    Returns
    -------
    DeviceTable
        The same, with the GEMM-size half-point [FLOP] scaled by :data:`ADAPTER_MATRIX_HALF_SCALE` [1] and
        the launch time per kernel [s] by :data:`ADAPTER_LAUNCH_SCALE` [1].
    """
    return replace(table, matrix_half=table.matrix_half * ADAPTER_MATRIX_HALF_SCALE,
                   launch=table.launch * ADAPTER_LAUNCH_SCALE)


def eager_note() -> str:
    """The eager adapter constants in words, for the answer's assumptions.

    Returns
    -------
    str
        Both multiples and the frameworks they were fitted on.
    """
    return (f"GEMM-size half-point x{ADAPTER_MATRIX_HALF_SCALE:g} and launch time x{ADAPTER_LAUNCH_SCALE:g} of the "
            "device's (an eager framework's adapter step: litgpt, Hugging Face PEFT)")
