"""sizer.local.split: layers over unequal devices in proportion to memory (llama.cpp
--split-mode layer with its default --tensor-split), and the split's times."""
from __future__ import annotations

import pytest

from sizer.errors import InputError
from sizer.local.machine import local_table, wired_device
from sizer.local.split import layer_shares, split_layers
from sizer.passes.arithmetic import ServingCase, evaluate_serving
from sizer.runtimes import runtime
from sizer.runtimes.formats import weight_format
from sizer.workloads.registry import find_model

LLAMA = runtime("llama.cpp").profile


@pytest.mark.parametrize("layers, memories, shares", [
    (80, [24e9, 24e9], [40, 40]),
    (32, [24e9, 12e9], [21, 11]),  # 21.33 and 10.67: the larger remainder (0.67) gets the last layer
    (80, [24e9, 12e9], [53, 27]),  # 53.33 and 26.67
    (4, [100e9, 1e9, 1e9], [2, 1, 1]),  # each device at least one layer, the floor's overshoot from the largest
])
def test_layers_in_proportion_to_memory(layers, memories, shares):
    assert layer_shares(layers, memories) == shares


def test_more_devices_than_layers_is_refused():
    with pytest.raises(InputError, match="devices"):
        layer_shares(2, [1e9, 1e9, 1e9])


def test_two_equal_devices_take_one_device_time(catalog):
    # each holds half the layers and every token passes both: the step is the time of one device holding all
    arch, fmt = find_model("llama-3-8b"), weight_format("q4_k_m")
    device = catalog.find("RTX 4090")
    case = ServingCase(arch, fmt, 2.0, 512, 128, split="layer")
    split = split_layers(arch, [device, device], fmt, LLAMA, case, 1)
    one = evaluate_serving(case, local_table(wired_device(device)[0], fmt, LLAMA), 0, 1, 1.0)
    assert split.decode_seconds == pytest.approx(float(one.decode_seconds[0]), rel=1e-9)
    assert [s.layers for s in split.shares] == [16, 16] and split.fits
    # each holds half the weights
    assert split.shares[0].weights_memory.value == pytest.approx(float(one.weights[0]) / 2 / 1e9)


def test_a_split_that_does_not_fit_says_which_device(catalog):
    # Llama-3-70B Q4_K_M, about 42 GB of weights, over 24 + 12 GB
    arch, fmt = find_model("llama-3-70b"), weight_format("q4_k_m")
    case = ServingCase(arch, fmt, 2.0, 512, 128, split="layer")
    split = split_layers(arch, [catalog.find("RTX 3090"), catalog.find("RTX 3060 12GB")], fmt, LLAMA, case, 1)
    assert not split.fits and not all(s.fits for s in split.shares)
    assert sum(s.layers for s in split.shares) == arch.layers


def _served(**fields):
    from sizer.facade import InferenceRequest, estimate_inference

    base = dict(model="llama-3-70b", weights="q4_k_m", prompt_len=1024, output_len=256)
    return estimate_inference(InferenceRequest(**{**base, **fields}), suggest=False)


def test_the_largest_batch_of_unequal_devices_does_not_hang_on_the_batch_asked():
    # the most sequences 3090 + 4090 hold is one number, whatever batch the question asked about (it fell from 7 at
    # batch 1 to 1 at batch 8, as the asked batch's activations were charged to every further sequence)
    answers = [_served(devices=["RTX 3090", "RTX 4090"], batch=b) for b in (1, 4, 8)]
    assert len({a.max_batch for a in answers}) == 1
    most = answers[0].max_batch
    assert _served(devices=["RTX 3090", "RTX 4090"], batch=most).fits
    assert not _served(devices=["RTX 3090", "RTX 4090"], batch=most + 1).fits


def test_two_equal_cards_named_as_unequal_devices_answer_as_a_count_of_two():
    # llama.cpp's layer split of two RTX 3090s is the same run asked either way: the same bytes per card
    # (each card holds whole layers, their activations at full width) and the same largest batch
    pair, listed = _served(device="RTX 3090", count=2), _served(devices=["RTX 3090", "RTX 3090"])
    assert pair.memory_per_device.value == pytest.approx(listed.memory_per_device.value, rel=1e-9)
    assert pair.activations_memory.value == pytest.approx(listed.activations_memory.value, rel=1e-9)
    assert pair.max_batch == listed.max_batch


@pytest.mark.parametrize("devices, weights, named", [
    (["apple-m2-max-gpu", "RTX 3090"], "mlx-q4", "apple-m2-max-gpu"),  # MLX on an NVIDIA card, a Mac with a 3090
    (["RTX 3090", "apple-m2-max-gpu"], "q4_k_m", "apple-m2-max-gpu"),  # a Mac's chip takes no second GPU
    (["apple-m2-max-gpu", "apple-m2-ultra-gpu"], "q4_k_m", "apple-m2-max-gpu"),  # nor a second chip
    (["Ryzen 9 7950X", "RTX 3090"], "q4_k_m", "gpu_layers"),  # the CPU runs offloaded layers (-ngl), not a share
])
def test_devices_one_machine_cannot_split_layers_over_are_refused(devices, weights, named):
    # only the first device was held to the runtime: the rest took their memory's share of the layers, whatever
    # they were (a 7950X took 23 of 32 layers for its 64 GB of RAM)
    with pytest.raises(InputError, match="devices") as error:
        _served(model="llama-3-8b", devices=devices, weights=weights)
    assert named in str(error.value)


def test_an_unknown_device_among_unequal_devices_names_the_devices_field():
    with pytest.raises(Exception, match="devices: no device matches 'nope'"):
        _served(model="llama-3-8b", devices=["nope", "RTX 3090"])


def test_unequal_cards_that_do_not_fit_are_offered_the_widest_gguf_mix_that_does():
    # 70B at Q8_0 (75 GB) on RTX 3090 + RTX 4090 (48 GB): the answer said "does not fit" and offered nothing
    from sizer.facade import InferenceRequest, estimate_inference

    asked = InferenceRequest(model="llama-3-70b", weights="q8_0", devices=["RTX 3090", "RTX 4090"])
    result = estimate_inference(asked)
    assert not result.fits
    (offer,) = result.suggestions
    again = estimate_inference(asked.model_copy(update=offer.apply), suggest=False)
    assert again.fits and again.decode_tokens_per_s == offer.decode_tokens_per_s
    from sizer.runtimes.gguf import GGUF_MIXES

    # the widest that fits: every mix between Q8_0 and the offer (widest first) does not
    wider = GGUF_MIXES[GGUF_MIXES.index("Q8_0") + 1:GGUF_MIXES.index(offer.apply["weights"].upper())]
    assert wider and not any(estimate_inference(asked.model_copy(update={"weights": m.lower()}), suggest=False).fits
                             for m in wider)


def _split(**fields):
    from sizer.facade import InferenceRequest, estimate_inference
    base = dict(model="llama-3-70b", weights="q4_k_m", batch=1, prompt_len=512, output_len=128,
                devices=["RTX 3090", "RTX 4090"])
    return estimate_inference(InferenceRequest(**{**base, **fields}))


def test_tensor_split_ratios_set_the_layers_and_the_faster_card_with_more_layers_is_faster():
    # llama.cpp -ts 3,1 over 80 layers: 60 and 20 (by memory, two 24 GB cards: 40 and 40)
    by_memory = _split()
    three_one, one_three = _split(tensor_split=[3, 1]), _split(tensor_split=[1, 3])
    assert [d.layers for d in by_memory.per_device] == [40, 40]
    assert [d.layers for d in three_one.per_device] == [60, 20]
    assert [d.layers for d in one_three.per_device] == [20, 60]
    # the RTX 4090 streams 1008 GB/s, the 3090 936 GB/s (catalog): more layers on the 4090 decode faster
    speeds = [r.decode_tokens_per_s.expected for r in (three_one, by_memory, one_three)]
    assert speeds == sorted(speeds) and speeds[0] < speeds[2]
    # 60 layers of the 70B's Q4_K_M (about 32 GB) do not fit one 24 GB card
    assert not three_one.fits and not three_one.per_device[0].fits and three_one.per_device[1].fits


@pytest.mark.parametrize("fields, match", [
    (dict(tensor_split=[3, 1, 1]), "^tensor_split: .*2 ratios"),
    (dict(tensor_split=[1, 0]), "^tensor_split: .*at least one layer"),
    (dict(tensor_split=[-1, 2]), "^tensor_split: .*non-negative"),
    (dict(devices=None, device="RTX 3090", tensor_split=[1, 1]), "^tensor_split: .*name the devices"),
])
def test_bad_tensor_split_is_refused_naming_it(fields, match):
    with pytest.raises(InputError, match=match):
        _split(**fields)


def test_row_split_is_refused_with_the_reason():
    with pytest.raises(InputError, match=r"^split: .*row split \(-sm row\) is not modelled: .*no row-split run"):
        _split(devices=None, device="RTX 3090", count=2, split="row")
