"""A chip named without its GPU cores or memory: the facade's answers state the configuration assumed
(sizer.facade._stated over sizer.hardware.variants)."""


def test_the_statement_reaches_the_answers():
    from sizer.facade import MemoryRequest, PeakRequest, estimate_memory, peak

    answer = peak(PeakRequest(device="M1 Ultra"))
    assert answer.assumptions[0].name == "device configuration" and "48 or 64 GPU cores" in answer.assumptions[0].value
    memory = estimate_memory(MemoryRequest(model="gpt2", device="M2 Pro"), suggest=False)
    assert any("16 or 19 GPU cores" in a.value for a in memory.assumptions)
    assert not any(a.name == "device configuration" for a in peak(PeakRequest(device="M2 Pro 19-core")).assumptions)


def test_a_serving_answer_states_it_too():
    from sizer.facade import InferenceRequest, estimate_inference

    answer = estimate_inference(InferenceRequest(model="llama-3-8b", device="M4 Pro"), suggest=False)
    said = [a.value for a in answer.assumptions if a.name == "device configuration"]
    # Ars Technica's table (../shared/data/device-specs-2026-11.csv): M4 Pro with a 16- or 20-core GPU, 24/48/64 GB
    assert said and "16 or 20 GPU cores" in said[0] and "apple-m4-pro-16c-24gb-gpu" in said[0]
