"""sizer/runtimes/local_runtimes.py: llama.cpp and mlx, their fitted kernels and the runtime a question gets."""
import pytest

from sizer.choices import DeviceKind
from sizer.runtimes.formats import weight_format
from sizer.runtimes.local_runtimes import (
    APPLE_GPU_SHARE_LARGE,
    APPLE_GPU_SHARE_SMALL,
    BANDWIDTH_REFERENCE,
    RUNTIMES,
    KernelEfficiency,
    LocalProfile,
    default_local_runtime,
    device_family,
    fitted,
    gpu_share,
    local_efficiencies,
    quant_key,
)


def profile(**changes):
    fields = dict(kernels={("nvidia", "Q4_K"): KernelEfficiency(0.5, 0.8, 10), ("nvidia", "*"): KernelEfficiency(0.4, 0.7),
                           ("*", "Q8_0"): KernelEfficiency(0.3, 0.6), ("*", "*"): KernelEfficiency(0.2, 0.5)},
                  step_overhead={"nvidia": 0.002, "*": 0.001}, bandwidth_exponent={"apple": -0.4, "*": 0.0},
                  flash_attention=True, batch=2048, ubatch=512, offload="layers", fitted_on=("L1",), source="test")
    return LocalProfile(**{**fields, **changes})


def test_kernels_fall_back_from_the_pair_to_the_family_to_the_type_to_any():
    p = profile()
    assert p.kernel("nvidia", "Q4_K").prompt == 0.5
    assert p.kernel("nvidia", "Q6_K").prompt == 0.4  # the family's overall figure
    assert p.kernel("apple", "Q8_0").prompt == 0.3  # the type's, on any family
    assert p.kernel("apple", "Q6_K").prompt == 0.2
    with pytest.raises(KeyError):
        profile(kernels={}).kernel("nvidia", "Q4_K")


def test_overhead_falls_back_to_the_runtime_figure():
    assert profile().overhead("nvidia") == 0.002 and profile().overhead("cpu") == 0.001
    assert profile(step_overhead={}).overhead("cpu") == 0.0


def test_generation_scales_with_bandwidth_by_the_fitted_exponent_and_never_exceeds_one():
    p = profile()
    # exponent 0: the fitted figure at any bandwidth
    assert p.generation("nvidia", "Q4_K", 3e12) == pytest.approx(0.8)
    # apple, exponent -0.4: four times the reference bandwidth reaches 4^-0.4 = 0.574 of the fitted share
    assert p.generation("apple", "Q6_K", 4 * BANDWIDTH_REFERENCE) == pytest.approx(0.5 * 4 ** -0.4)
    # a slow chip with a negative exponent would pass 1: capped
    assert p.generation("apple", "Q6_K", BANDWIDTH_REFERENCE / 1e3) == 1.0


@pytest.mark.parametrize("device, family, kind", [
    ("h100-sxm5-80gb", "nvidia", "gpu"), ("epyc-9654", "cpu", "cpu"), ("apple-m2-max-gpu", "apple", "apple"),
    ("radeon-rx-7900-xtx", "amd", "gpu"), ("arc-a770", "intel", "gpu"),
    ("apple-m2-max-cpu", "cpu", "cpu"),  # an Apple chip's CPU side runs CPU kernels, not Metal or MLX
])
def test_device_family_and_kind(catalog, device, family, kind):
    d = catalog.find(device)
    assert device_family(d) == family and d.runtime_kind is DeviceKind(kind)


@pytest.mark.parametrize("fmt, key", [("q4_k_m", "Q4_K"), ("q8_0", "Q8_0"), ("fp16", "F16"), ("bf16", "F16")])
def test_quant_key_is_the_mix_main_type(fmt, key):
    # llama.cpp's Q4_K_M stores most tensors as Q4_K (llama-quantize), so its kernels are fitted as Q4_K
    assert quant_key(weight_format(fmt)) == key


def test_unified_memory_share_by_size(catalog):
    # macOS: about 3/4 of unified memory above 36 GB, 2/3 below (recalled, unverified: APPLE_GPU_SHARE_SOURCE)
    large = next(d for d in catalog if d.vendor.lower() == "apple" and d.memory.si("memory", "[information]") > 36e9)
    small = next(d for d in catalog if d.vendor.lower() == "apple" and d.memory.si("memory", "[information]") <= 36e9)
    assert gpu_share(large)[0] == APPLE_GPU_SHARE_LARGE and gpu_share(small)[0] == APPLE_GPU_SHARE_SMALL
    assert "unverified" in gpu_share(large)[1]
    assert gpu_share(catalog.find("h100-sxm5-80gb")) is None  # dedicated device memory


def test_the_runtime_a_question_gets_when_it_names_none(catalog):
    h100, cpu, mac = catalog.find("h100-sxm5-80gb"), catalog.find("epyc-9654"), catalog.find("apple-m2-max-gpu")
    llama_cpp, mlx = RUNTIMES
    assert default_local_runtime(h100, weight_format("q4_k_m"))[0] is llama_cpp
    assert default_local_runtime(h100, weight_format("fp16"))[0] is None  # the data-centre serving model
    assert default_local_runtime(cpu, weight_format("fp16"))[0] is llama_cpp
    assert default_local_runtime(mac, weight_format("bf16"))[0] is llama_cpp
    assert default_local_runtime(mac, weight_format("mlx-q4"))[0] is mlx
    assert all(why for _, why in (default_local_runtime(h100, weight_format(f)) for f in ("q4_k_m", "fp16")))


def test_the_fitted_profiles_name_their_rows_and_have_a_fallback():
    # benchmarks/local_inference_accuracy.py writes local_fit.yaml from the fit half of the measurements
    for name in ("llama.cpp", "mlx"):
        raw = fitted()[name]
        assert raw["fitted_on"] and "*/*" in raw["kernels"]


def test_local_efficiencies_take_the_fitted_kernels(catalog):
    h100 = catalog.find("h100-sxm5-80gb")
    llama_cpp = RUNTIMES[0]
    fmt = weight_format("q4_k_m")
    kernel = llama_cpp.profile.kernel("nvidia", "Q4_K")
    eff = local_efficiencies(llama_cpp.profile, h100, fmt)
    assert eff.matrix == kernel.prompt and eff.memory == pytest.approx(llama_cpp.profile.generation(
        "nvidia", "Q4_K", h100.memory_bandwidth.si("memory_bandwidth", "[information]/[time]")))
    assert eff.step_overhead == llama_cpp.profile.overhead("nvidia")


def test_thread_shares_compute_to_the_cores_bandwidth_to_saturation(catalog):
    from sizer.runtimes.local_runtimes import THREADS_SATURATING_BANDWIDTH, thread_shares

    ryzen = catalog.find("Ryzen 9 7950X")  # 16 physical cores (catalog)
    assert thread_shares(ryzen, None) == (1.0, 1.0)
    assert thread_shares(ryzen, 4) == pytest.approx((0.25, 4 / THREADS_SATURATING_BANDWIDTH))
    assert thread_shares(ryzen, 64) == (1.0, 1.0)
    # 4 x 18.27 / 12.65 tokens/s: the i9-13900K's tg128 on 4 and 8 threads (local-inference-measurements.csv)
    assert THREADS_SATURATING_BANDWIDTH == pytest.approx(5.78, abs=0.01)
    assert thread_shares(catalog.find("RTX 4090"), 4) == (1.0, 1.0)  # a GPU computes on itself


@pytest.mark.parametrize("name", ["exllamav2", "ExLlamaV2", "exl2"])
def test_exllamav2_is_refused_as_not_modelled_with_the_reason(name):
    from sizer.errors import InputError
    from sizer.runtimes import runtime

    with pytest.raises(InputError, match=r"^runtime: .*ExLlamaV2 is not modelled: .*2 ExLlama \(v1\) runs"):
        runtime(name)


def test_spread_is_the_familys_with_enough_runs_else_the_runtimes_and_always_holds_the_expected():
    spread = {"apple": {"generation": {"low": 0.9, "high": 1.05, "n": 14}, "prompt": {"low": 0.8, "high": 1.2, "n": 3}},
              "amd": {"prompt": {"low": 1.5, "high": 1.6, "n": 8}},  # a biased family: the expected lies below both
              "*": {"generation": {"low": 0.5, "high": 1.1, "n": 40}, "prompt": {"low": 0.7, "high": 1.5, "n": 20}}}
    p = profile(speed_spread=spread)
    assert p.spread("apple", "generation") == {"low": 0.9, "high": 1.05, "n": 14}
    assert p.spread("apple", "prompt") == {"low": 0.7, "high": 1.5, "n": 20}  # 3 held-out runs: too few of its own
    assert p.spread("cpu", "generation") == {"low": 0.5, "high": 1.1, "n": 40}
    assert p.spread("amd", "prompt") == {"low": 1.0, "high": 1.6, "n": 8}
    assert profile().spread("apple", "generation") is None


@pytest.mark.parametrize("name", ["mlc-llm", "MLC_LLM", "mlc"])
def test_mlc_llm_is_refused_as_not_modelled_with_the_reason(name):
    from sizer.errors import InputError
    from sizer.runtimes import runtime

    with pytest.raises(InputError, match=r"^runtime: .*MLC-LLM is not modelled: .*no MLC-LLM run"):
        runtime(name)


@pytest.mark.parametrize("device", ["RTX 3060 12GB", "Apple M2 Max", "Ryzen 9 7950X"])
def test_an_exllamav2_int4_question_is_refused_with_the_reason_on_every_device(device):
    # issue 40's example (int4 under ExLlamaV2): the data holds no v2 run on any device, so the answer is a refusal
    # naming runtime, with the devices it runs on, never the llama.cpp or serving figure
    from pydantic import ValidationError

    from sizer.facade import InferenceRequest

    with pytest.raises(ValidationError, match=r"runtime\s+got 'exllamav2'.*ExLlamaV2 is not modelled: .*CUDA and ROCm"):
        InferenceRequest(model="llama-2-7b", weights="gptq-int4-g128", device=device, runtime="exllamav2")
