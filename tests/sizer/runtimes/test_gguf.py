"""GGUF mixes as stored: per-tensor types and file sizes against published files."""
import pytest

from sizer.errors import InputError
from sizer.passes.arithmetic import stored_weight_bytes
from sizer.runtimes.formats import weight_format
from sizer.runtimes.gguf import bits_per_weight, gguf_bytes, gguf_tensors, use_more_bits
from sizer.workloads.registry import find_model

# Published GGUF sizes, ../shared/data/gguf-file-sizes.csv: ddh0/UnquantizedEmbeddingTesting sizes.txt (ls -l
# bytes, Meta-Llama-3-8B-Instruct) and Hugging Face file pages (decimal GB, bartowski / mradermacher static).
# Tolerance 2 %: the file adds its metadata (tokenizer: ~8 MB for Llama 3) and pages round to 3 digits.
PUBLISHED = [
    ("llama-3-8b", "Q4_K_M", 4_920_733_984), ("llama-3-8b", "Q4_K_S", 4_692_668_704),
    ("llama-3-8b", "Q3_K_L", 4_321_956_128), ("llama-3-8b", "Q3_K_M", 4_018_917_664),
    ("llama-3-8b", "Q3_K_S", 3_664_498_976), ("llama-3-8b", "Q2_K", 3_179_131_168),
    ("llama-3.1-70b", "Q4_K_M", 42.5e9), ("llama-3.1-70b", "Q4_K_S", 40.3e9), ("llama-3.1-70b", "Q2_K", 26.4e9),
    ("qwen2.5-72b", "Q4_K_M", 47.4e9), ("qwen2.5-72b", "Q3_K_M", 37.7e9), ("qwen2.5-72b", "Q3_K_L", 39.5e9),
    ("qwen2.5-72b", "Q3_K_S", 34.5e9), ("qwen2.5-72b", "Q4_K_S", 43.9e9), ("qwen2.5-72b", "Q2_K", 29.8e9),
    ("qwen2.5-72b", "Q5_K_M", (27.9 + 26.5) * 1e9), ("qwen2.5-7b", "Q4_K_M", 4.68e9),
]


# gpt-oss-20b, published in MXFP4: unsloth/gpt-oss-20b-GGUF's files keep the experts in MXFP4 (11.5-11.7 GB for
# every mix), DevQuasar's Q8_0 re-quantised them (22.3 GB); the mixes were 4-44 % over before the experts were kept
PUBLISHED += [("gpt-oss-20b", "Q2_K", 11.5e9), ("gpt-oss-20b", "Q3_K_S", 11.5e9), ("gpt-oss-20b", "Q3_K_M", 11.5e9),
              ("gpt-oss-20b", "Q4_0", 11.5e9), ("gpt-oss-20b", "Q4_1", 11.6e9), ("gpt-oss-20b", "Q4_K_S", 11.6e9),
              ("gpt-oss-20b", "Q4_K_M", 11.6e9), ("gpt-oss-20b", "Q5_K_M", 11.7e9), ("gpt-oss-20b", "Q8_0", 22.3e9)]


@pytest.mark.parametrize("model,mix,published", PUBLISHED)
def test_file_size_within_two_percent(model, mix, published):
    assert gguf_bytes(find_model(model), mix) == pytest.approx(published, rel=0.02)


def test_block_scales_counted():
    # ggml-common.h: block_q4_K 144 B per 256 weights, block_q6_K 210 B, block_q8_0 34 B per 32
    assert (bits_per_weight("Q4_K"), bits_per_weight("Q6_K"), bits_per_weight("Q8_0")) == (4.5, 6.5625, 8.5)


def test_q4_k_m_keeps_head_and_chosen_layers_wider():
    tensors = gguf_tensors(find_model("llama-3-8b"), "Q4_K_M")
    types = {(t.role, t.ggml_type) for t in tensors}
    assert ("output", "Q6_K") in types and ("token_embd", "Q4_K") in types
    downs = [t.ggml_type for t in tensors if t.role == "ffn_down"]
    assert downs == ["Q6_K" if use_more_bits(i, 32) else "Q4_K" for i in range(32)]


def test_q4_0_quantises_the_embedding():
    tensors = {t.role: t.ggml_type for t in gguf_tensors(find_model("llama-3-8b"), "Q4_0")}
    assert tensors["token_embd"] == "Q4_0" and tensors["output"] == "Q6_K"


def test_rows_off_the_block_fall_back():
    # Qwen2.5-72B's ffn_down rows are 29568 long, not a multiple of 256: Q4_K falls back to Q5_0 (llama-quant.cpp)
    tensors = gguf_tensors(find_model("qwen2.5-72b"), "Q4_K_S")
    assert {t.ggml_type for t in tensors if t.role == "ffn_down"} <= {"Q5_0", "Q5_1"}


def test_more_bits_never_smaller():
    arch = find_model("llama-3-8b")
    sizes = [gguf_bytes(arch, m) for m in ("Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S",
                                            "Q5_K_M", "Q6_K", "Q8_0", "F16")]
    assert sizes == sorted(sizes)


def test_served_bytes_are_the_files():
    arch = find_model("llama-3-8b")
    per_param = stored_weight_bytes(arch, weight_format("Q5-K-M"))
    assert per_param * arch.params_total() == pytest.approx(gguf_bytes(arch, "Q5_K_M"))


def test_unknown_mix_names_the_field():
    with pytest.raises(InputError, match="weights"):
        weight_format("q7_k_m")


@pytest.mark.parametrize("model", ["falcon-7b", "gpt2-xl", "llama-3-8b"])
def test_f16_file_stores_each_weight_once(model):
    # An F16 GGUF keeps every weight matrix once at 16 bits, so its tensors hold the model's parameter count;
    # a GELU FFN (Falcon, GPT-2) has no gate matrix (llama.cpp convert_hf_to_gguf writes ffn_gate only for
    # gated FFNs). Tolerance 0.5 %: GPT-2's learned position embeddings and biases are not GGUF weight tensors here.
    arch = find_model(model)
    tensors = gguf_tensors(arch, "F16")
    assert sum(t.weights for t in tensors) == pytest.approx(arch.params_total(), rel=0.005)
    assert any(t.role == "ffn_gate" for t in tensors) == (arch.ffn_type in ("swiglu", "geglu"))
