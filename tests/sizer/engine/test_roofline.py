"""sizer/engine/roofline.py: the per-layer roofline (Williams, Waterman & Patterson 2009,
docs/references.md [roofline]) and the parallel parts of a step, on layers computed by hand.

A layer's time is max(FLOP / achieved peak, bytes / achieved bandwidth, kernels x launch time).
With launches and overheads set to zero and a single device, the step of one GEMM is exactly
that maximum, so the expected values below are arithmetic on datasheet figures: H100 SXM5 dense
BF16 989 TFLOPS and 3350 GB/s HBM3 (../shared/data/gpu-specs.csv). rtol 1e-3 covers the catalog's
989.4 against the csv's rounded 989; everything else is exact.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizer.choices import Precision
from sizer.engine.constants import ONE_SHOT_ALLREDUCE_LATENCIES, SERVING_ALLREDUCES_PER_BLOCK, Efficiencies
from sizer.engine.devices import build_device_table
from sizer.engine.layers import LayerTable, layer_table
from sizer.engine.roofline import (
    Configs,
    expert_layout,
    group_link,
    is_multiple,
    matrix_size_factor,
    model_flops_per_sample,
    model_parallel_seconds,
    optimizer_bytes_per_param,
    recompute_factors,
    step_seconds,
)
from sizer.engine.step_inputs import INFERENCE, TRAINING, Shape, training_passes
from sizer.hardware.catalog import load_catalog
from sizer.workloads.profile import Layer, Profile

H100_BF16 = 989e12  # FLOP/s, dense (gpu-specs.csv)
H100_BW = 3350e9  # B/s (gpu-specs.csv)
# no launch cost, no per-step overhead: the step is the roofline alone
EFF = Efficiencies(matrix=0.5, tf32=0.5, fp32_matrix=0.5, vector=0.5, memory=0.8, launch=0.0, step_overhead=0.0,
                   source="test")
RTOL = 1e-3


@pytest.fixture(scope="module")
def h100():
    return build_device_table((load_catalog().find("H100 SXM"),), "bf16", (EFF,))


def _gemm(m: int, n: int, k: int) -> LayerTable:
    """One GEMM per sample: an (m x k) activation times a (k x n) weight; activations counted at FP32
    (the profile convention: the table's storage scale halves them at BF16)."""
    layer = Layer(name="gemm", kind="matmul", forward_flops=2.0 * m * n * k, bytes=4.0 * (m * k + m * n),
                  params=float(k * n), kernels=1)
    return layer_table(Profile(name="gemm", description="one GEMM", sample="sample", generated_by="by hand",
                               layers=[layer]))


def _inference(layers, table, **config):
    configs = Configs.of(0, config.pop("count", 1), config.pop("micro_batch", 1), config.pop("accumulation", 1), 0,
                         **config)
    return step_seconds(layers, table, configs, optimizer_state_bytes=0.0, kind=INFERENCE)


def test_a_large_gemm_is_compute_bound(h100):
    # 8192^3 GEMM: 2 x 8192^3 = 1.0995e12 FLOP at 0.5 x 989 TFLOPS = 2.22 ms; its bytes
    # (activations 2 x 8192^2 x 2 B + weights 8192^2 x 2 B = 4.0e8 B) at 0.8 x 3350 GB/s = 0.15 ms
    m = n = k = 8192
    parts = _inference(_gemm(m, n, k), h100)
    compute = 2.0 * m * n * k / (H100_BF16 * EFF.matrix)
    memory = (2.0 * (m * k + m * n) + 2.0 * k * n) / (H100_BW * EFF.memory)
    assert compute > memory
    assert parts.step[0] == pytest.approx(compute, rel=RTOL)
    assert parts.compute[0] == pytest.approx(parts.step[0]) and parts.memory[0] == 0


def test_a_matrix_vector_product_is_memory_bound(h100):
    # one token through an 8192 x 8192 weight (decode): 1.3e8 FLOP, but 8192^2 x 2 B of weights to read
    m, n, k = 1, 8192, 8192
    parts = _inference(_gemm(m, n, k), h100)
    compute = 2.0 * m * n * k / (H100_BF16 * EFF.matrix)
    memory = (2.0 * (m * k + m * n) + 2.0 * k * n) / (H100_BW * EFF.memory)
    assert memory > compute
    assert parts.step[0] == pytest.approx(memory, rel=RTOL)
    assert parts.memory[0] == pytest.approx(parts.step[0]) and parts.compute[0] == 0


def test_the_step_is_the_larger_of_the_two_limits_for_any_gemm(h100):
    for m, n, k in [(1, 4096, 4096), (64, 4096, 4096), (256, 8192, 1024), (4096, 4096, 4096), (16, 16, 16)]:
        step = _inference(_gemm(m, n, k), h100).step[0]
        compute = 2.0 * m * n * k / (H100_BF16 * EFF.matrix)
        memory = (2.0 * (m * k + m * n) + 2.0 * k * n) / (H100_BW * EFF.memory)
        assert step == pytest.approx(max(compute, memory), rel=RTOL), (m, n, k)


def test_launch_bound_layers_cost_their_kernels(catalog):
    # 1e-5 s per launch, a tiny layer of 100 kernels: 1 ms whatever its FLOP (inference: 1 x the kernels)
    eff = Efficiencies(matrix=0.5, tf32=0.5, fp32_matrix=0.5, vector=0.5, memory=0.8, launch=1e-5, step_overhead=0.0,
                       source="test")
    table = build_device_table((catalog.find("H100 SXM"),), "bf16", (eff,))
    layer = Layer(name="tiny", kind="elementwise", forward_flops=1e3, bytes=1e3, kernels=100)
    layers = layer_table(Profile(name="t", description="t", generated_by="by hand", layers=[layer]))
    parts = _inference(layers, table)
    assert parts.step[0] == pytest.approx(100 * 1e-5) and parts.launch[0] == pytest.approx(1e-3)


def test_training_is_three_forward_passes_of_flop(h100):
    # seed 004 eq. 3: O_b = 3 (backward about twice the forward); a compute-bound GEMM, no optimizer state
    layers = _gemm(8192, 8192, 8192)
    train = step_seconds(layers, h100, Configs.of(0, 1, 1, 1, 0), optimizer_state_bytes=0.0, kind=TRAINING)
    assert train.kernels[0] == pytest.approx(3 * _inference(layers, h100).kernels[0], rel=1e-12)
    assert model_flops_per_sample(layers, TRAINING) == 3 * 2.0 * 8192 ** 3
    training, frozen = training_passes(3.0)
    assert frozen.flops == 2.0  # frozen weights: forward plus the input-gradient half of the backward pass


def test_micro_batches_and_the_pipeline_bubble(h100):
    # 1F1B: (m + (pp - 1) / v) micro-batch slots of one stage, each stage 1/pp of the layers (Narayanan et al. 2021)
    layers = _gemm(4096, 4096, 4096)
    one = _inference(layers, h100, accumulation=1).kernels[0]
    assert _inference(layers, h100, accumulation=8).kernels[0] == pytest.approx(8 * one, rel=1e-12)
    staged = _inference(layers, h100, count=4, pp=4, accumulation=8)
    assert staged.kernels[0] == pytest.approx(one / 4 * (8 + 3), rel=1e-12)
    assert staged.bubble[0] == pytest.approx(one / 4 * 3, rel=1e-12)
    interleaved = _inference(layers, h100, count=4, pp=4, accumulation=8, interleave=3)
    assert interleaved.bubble[0] == pytest.approx(one / 4 * 3 / 3, rel=1e-12)


def test_tensor_parallelism_divides_compute_bound_work(h100):
    layers = _gemm(8192, 8192, 8192)
    alone, split = _inference(layers, h100).kernels[0], _inference(layers, h100, count=4, tp=4).kernels[0]
    assert split == pytest.approx(alone / 4, rel=1e-12)
    # and the physical limit per device with it: model FLOP / tp with each unit's FLOP at its own peak
    assert _inference(layers, h100, count=4, tp=4).physical_limit[0] == pytest.approx(2.0 * 8192 ** 3 / 4 / H100_BF16,
                                                                                       rel=RTOL)


def test_tensor_parallel_collectives_follow_korthikanti(h100):
    # Korthikanti et al. 2022 §4.2.2: 4 all-gathers/reduce-scatters per block per pass, each moving
    # (t-1)/t of A = s h b bytes; training: forward and backward passes. 2 blocks, h = 4096, s = 2048,
    # BF16, tp = 8 on NVLink 4 (450 GB/s per direction, interconnects.csv), latency per collective step apart
    shape = Shape(blocks=2, hidden=4096, tokens_per_sample=2048)
    configs = Configs.of(0, 8, 1, 1, 0, tp=8)
    tp, pp, cp = model_parallel_seconds(h100, configs, shape, backward=True)
    activation = 2048 * 4096 * 2.0
    per_collective = 7 / 8 * activation / 450e9 + 7 * h100.link_latency[0]
    assert tp[0] == pytest.approx(4 * per_collective * 2 * 2, rel=1e-9)
    assert pp[0] == 0 and cp[0] == 0
    assert model_parallel_seconds(h100, configs, None, backward=True)[0][0] == 0


def test_serving_pays_two_one_shot_all_reduces_per_block_inside_a_node(h100):
    # Megatron's tensor split needs one all-reduce after attention and one after the MLP (Shoeybi et al.
    # 2019 §3); inside a node runtimes run them one-shot: 2 (t-1)/t of A moved, a fixed two link
    # latencies whatever t (constants.ONE_SHOT_ALLREDUCE_LATENCIES, recalled, marked unverified)
    shape = Shape(blocks=2, hidden=4096, tokens_per_sample=2048)
    configs = Configs.of(0, 8, 1, 1, 0, tp=8)
    tp, _, _ = model_parallel_seconds(h100, configs, shape, backward=False)
    activation = 2048 * 4096 * 2.0
    one_shot = 2 * 7 / 8 * activation / 450e9 + ONE_SHOT_ALLREDUCE_LATENCIES * h100.link_latency[0]
    assert tp[0] == pytest.approx(SERVING_ALLREDUCES_PER_BLOCK * one_shot * 2, rel=1e-9)


def test_optimizer_bytes_per_parameter():
    # mixed-precision Adam: read gradient and weight, write weight (3 x 2 B), read/write the FP32 master
    # (2 x 4 B) and both FP32 moments (2 x 8 B) = 30 B per parameter
    assert optimizer_bytes_per_param(np.asarray([2.0]), np.asarray([4.0]), 8.0)[0] == 30.0


@given(st.floats(1e3, 1e15), st.floats(1e3, 1e15))
def test_the_gemm_size_curve_is_half_at_the_half_point_and_rises(x, half):
    f = matrix_size_factor(np.asarray(x), np.asarray(half))
    assert 0 < f < 1 and matrix_size_factor(np.asarray(x * 2), np.asarray(half)) >= f
    assert matrix_size_factor(np.asarray(half), np.asarray(half)) == pytest.approx(0.5)
    assert matrix_size_factor(np.asarray(x), np.asarray(0.0)) == 1.0


def test_recomputation_reruns_attention_or_every_layer():
    layers = layer_table(Profile(name="b", description="b", generated_by="by hand", layers=[
        Layer(name="qkv", kind="matmul", forward_flops=1e9, bytes=1e6),
        Layer(name="scores", kind="attention", forward_flops=2e8, bytes=1e6)]))
    factors = recompute_factors(layers, np.asarray([0, 1, 2]), TRAINING)
    assert factors.tolist() == [[0, 0], [0, 1], [1, 1]]  # none, selective (attention), full (Korthikanti §5)
    assert recompute_factors(layers, np.asarray([2]), INFERENCE).tolist() == [[0, 0]]


def test_expert_layout_carves_ep_from_the_data_parallel_ranks():
    # Megatron-Core: ep divides dp -> experts keep tp (ETP = TP), dp/ep replicas of each expert
    etp, replicas = expert_layout(np.asarray([2.0]), np.asarray([16.0]), np.asarray([4.0]))
    assert (etp[0], replicas[0]) == (2.0, 4.0)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4096), st.integers(1, 8192), st.integers(1, 8192), st.floats(1.01, 8))
def test_more_flop_or_bytes_never_take_less_time(m, n, k, factor):
    table = build_device_table((load_catalog().find("H100 SXM"),), "bf16", (EFF,))
    base = _inference(_gemm(m, n, k), table).step[0]
    bigger = _inference(_gemm(int(m * factor) + 1, n, k), table).step[0]
    assert bigger >= base
    # and never beats the physical limit: model FLOP with each unit's FLOP at its own peak
    parts = _inference(_gemm(m, n, k), table)
    assert parts.step[0] >= parts.physical_limit[0] * (1 - 1e-12)


def test_a_tensor_parallel_pair_of_h100_nvl_talks_over_its_nvlink_bridge_a_group_of_four_over_pcie(catalog):
    # H100 NVL: bridged pairs at 300 GB/s per direction; four cards span two pairs and meet over PCIe 5.0 (63 GB/s)
    table = build_device_table((catalog.find("H100 NVL"),), Precision.BF16)
    bandwidth, _ = group_link(table, np.zeros(3, dtype=np.int64), np.array([1.0, 2.0, 4.0]))
    assert bandwidth.tolist() == pytest.approx([300e9, 300e9, 63e9])


def test_70b_decode_on_a_bridged_h100_nvl_pair_beats_the_same_pair_over_pcie(catalog):
    from sizer.facade import InferenceRequest, estimate_inference
    from sizer.hardware.catalog import Catalog

    nvl = catalog.find("H100 NVL")
    unbridged = nvl.model_copy(update={"interconnect": nvl.interconnect.model_copy(update={"bridge": None})})
    ask = InferenceRequest(model="llama-3-70b", device="H100 NVL", count=2, weights="fp8", batch=64)
    bridged = estimate_inference(ask, catalog).total_tokens_per_s.expected
    over_pcie = estimate_inference(ask, Catalog(devices={**catalog.devices, nvl.id: unbridged})).total_tokens_per_s.expected
    assert bridged > 1.1 * over_pcie  # the two all-reduces per block of a 64-sequence decode step move 300 vs 63 GB/s


def test_is_multiple_answers_as_the_floating_point_remainder():
    """The search's whole-number test (a quotient that rounds to a whole number) against np.mod(x, y) == 0: whole
    dividends and divisors up to 2**53, fractions, NaN, infinities, zero and negative divisors."""
    rng = np.random.default_rng(41)
    x = np.concatenate([rng.integers(-5000, 5000, 20000), rng.integers(-2 ** 52, 2 ** 52, 5000),
                        2.0 ** 53 - rng.integers(1, 100, 100), rng.random(1000) * 100,
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 2.0 ** 60, 2.0 ** 53]]).astype(float)
    divisors = [rng.integers(1, 70, len(x)), np.full(len(x), 3), rng.integers(-9, 9, len(x)), rng.random(len(x)) * 4,
                np.exp2(rng.integers(0, 6, len(x))), rng.integers(1, 2 ** 40, len(x)), rng.integers(2 ** 50, 2 ** 53, len(x))]
    with np.errstate(all="ignore"):
        for y in (np.asarray(d, dtype=float) for d in divisors):
            for part in (slice(0, 20000), slice(20000, None), slice(None)):  # with and without the fallback's values
                assert np.array_equal(is_multiple(x[part], y[part]), np.mod(x[part], y[part]) == 0)
            multiples = rng.integers(1, 1000, len(x)) * np.where(y == 0, 1.0, np.abs(y))
            multiples[multiples >= 2 ** 53] = 1.0
            assert np.array_equal(is_multiple(multiples, y), np.mod(multiples, y) == 0)


def test_layer_groups_by_one_integer_key_are_lexsorts_groups_in_its_order():
    """The per-layer roofline's groups (one representative row per distinct input, in lexsort's order: the matrix
    product over them then sums exactly as before) from one integer key where every column is whole, and from
    lexsort where one is not (a fraction, NaN)."""
    from sizer.engine.roofline import _layer_groups

    rng = np.random.default_rng(41)
    for trial in range(40):
        n = 2000  # some 480 distinct inputs at most: grouping pays
        columns = [rng.integers(0, 5, n).astype(float), rng.choice([1.0, 2.0, 4.0, 1536.0], n),
                   rng.choice([1.0, 8.0], n), np.ones(n), rng.choice([1.0, 64.0], n), rng.integers(0, 3, n)]
        if trial % 4 == 1:
            columns[1][rng.integers(0, n)] = 2.5  # not whole: lexsort's way
        if trial % 4 == 2:
            columns[1][rng.integers(0, n)] = np.nan  # its own group
        weight = rng.choice([0.5, 2.0], n) if trial % 4 == 3 else None
        found = _layer_groups(*columns[:5], columns[5].astype(np.int64), weight, None)
        keys = columns + ([weight] if weight is not None else [])
        order = np.lexsort(keys)
        change = np.r_[True, np.any([k[order][1:] != k[order][:-1] for k in keys], axis=0)]
        assert found is not None
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = np.cumsum(change) - 1
        assert found[0].tolist() == order[change].tolist() and found[1].tolist() == inverse.tolist()
