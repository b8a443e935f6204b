"""Reading an answer's setup from its request and result: the values are the answer's."""
from sizer import facade
from sizer.asked import on_catalog
from sizer.plan.launch_readers import local_runtime_of, memory_setup, serving_setup, time_setup
from sizer.runtimes import runtime


def test_a_serving_answer_under_load(catalog):
    request = facade.InferenceRequest(model="llama-3.1-70b", device="H100 SXM", count=4, weights="fp8", rate=20)
    result = facade.estimate_inference(request)
    setup = serving_setup(request, result, on_catalog(request, catalog), runtime("sglang"))
    assert setup.tensor_parallel == 4 and setup.replicas == result.capacity.replicas
    assert setup.engine == "vllm"  # the default engine ran the load
    assert setup.max_running == runtime("vllm").profile.max_running and setup.memory_share == 0.88  # SGLang's
    assert local_runtime_of(request, on_catalog(request, catalog)) is None


def test_a_local_answer_is_under_llama_cpp(catalog):
    request = facade.InferenceRequest(model="llama-3.1-8b", device="RTX 4090", weights="q4_k_m")
    assert local_runtime_of(request, on_catalog(request, catalog)).name == "llama.cpp"


def test_a_time_answer_and_a_memory_answer(catalog):
    request = facade.TimeRequest(model="llama-2-7b", device="H100 SXM", count=16, tokens=1e10, method="lora")
    result = facade.estimate_time(request)
    setup = time_setup(request, result, on_catalog(request, catalog))
    assert (setup.tp, setup.pp, setup.dp) == (result.layout.tp, result.layout.pp, result.layout.dp)
    assert setup.accumulation == result.layout.accumulation and setup.global_batch == result.batch_size
    assert setup.lora_rank == 8 and setup.method.value == "lora" and setup.seq_len == 4096
    memory = facade.MemoryRequest(model="llama-2-7b", device="H100 SXM", count=2, zero=3, method="qlora")
    answered = facade.estimate_memory(memory)
    tuned = memory_setup(memory, answered, on_catalog(memory, catalog))
    assert tuned.accumulation is None and tuned.zero == 3 and tuned.dp == 2 and tuned.micro_batch == answered.micro_batch


def test_a_static_answer_on_a_count_that_splits_no_heads_is_its_replicas(catalog):
    # phi-4's 40 heads and 10 key/value heads (its config.json): 8 devices serve as 4 replicas of tensor parallel 2
    # (sizer.passes.arithmetic.tensor_replicas); 10 sequences spread 3, 3, 2, 2: --max-num-seqs is the busiest's
    request = facade.InferenceRequest(model="phi-4", device="H200 SXM", count=8, batch=10)
    result = facade.estimate_inference(request)
    setup = serving_setup(request, result, on_catalog(request, catalog), runtime("vllm"))
    assert (setup.tensor_parallel, setup.replicas, setup.count, setup.max_running) == (2, 4, 2, 3)
    two = facade.InferenceRequest(model="llama-2-7b", device="H100 SXM", count=2, batch=10)  # 32 heads: one replica
    setup = serving_setup(two, facade.estimate_inference(two), on_catalog(two, catalog), runtime("vllm"))
    assert (setup.tensor_parallel, setup.replicas, setup.max_running) == (2, 1, 10)
