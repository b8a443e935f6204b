"""sizer/workloads/shipped.py and the registry's names for it: every shipped config answerable by hub id,
short name and short form; presets keep every name they had; a name two configs share is refused naming both."""
from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest

from sizer.errors import InputError
from sizer.workloads import shipped
from sizer.workloads.names import name_key
from sizer.workloads.registry import _index, builtin_entries, find_model, lookup, model_entry
from sizer.workloads.shipped import ShippedConfig, configs_dir, find_shipped, shipped_configs

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT.parent / "shared" / "data" / "hf-configs"  # the data folder the configs were copied from


def test_every_indexed_config_is_shipped_and_every_shipped_config_is_indexed():
    files = {path.name for path in configs_dir().glob("*.json")}
    indexed = [config.file for config in shipped_configs()]
    assert len(indexed) == len(set(indexed)) == len(files) == 82
    assert set(indexed) == files


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is beside the checkout only")
def test_the_configs_and_the_index_are_the_data_folders_bytes():
    for path in [*configs_dir().glob("*.json"), configs_dir() / "index-2026-12.csv"]:
        assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256((DATA / path.name).read_bytes()).digest(), path


def test_verified_follows_the_index_confidence():
    rows = {row["hub_id"]: row["confidence"] for row in
            csv.DictReader((configs_dir() / "index-2026-12.csv").open(encoding="utf-8"))}
    for config in shipped_configs():
        assert config.verified is (rows[config.hub_id] == "high"), config.hub_id
    assert find_model("qwen2.5-32b").verified is True  # high in the index
    assert find_model("nvidia/Llama-3.1-70B-Instruct-FP8").verified is False  # medium
    assert "catalog/hf_configs/Qwen--Qwen2.5-32B.json" in find_model("qwen2.5-32b").source


@pytest.mark.parametrize("name, hub_id", [
    ("Qwen/Qwen3-32B", "Qwen/Qwen3-32B"),  # the hub id
    ("qwen/qwen3-32b", "Qwen/Qwen3-32B"),  # any case
    ("qwen3-32b", "Qwen/Qwen3-32B"),  # the part after the organisation
    ("Qwen3-32B-FP8", "Qwen/Qwen3-32B-FP8"),  # a quantisation word is never dropped: another checkpoint
    ("qwen2.5-32b", "Qwen/Qwen2.5-32B"),
    ("deepseek-r1", "deepseek-ai/DeepSeek-R1"),  # its own name, not R1-0528's short form
    ("deepseek-r1-0528", "deepseek-ai/DeepSeek-R1-0528"),
    ("kimi-k2", "moonshotai/Kimi-K2-Instruct"),  # a short form: -Instruct dropped
    ("mistral-nemo", "mistralai/Mistral-Nemo-Instruct-2407"),  # -Instruct-2407 dropped
    ("Qwen/Qwen2.5-32B-Instruct", "Qwen/Qwen2.5-32B"),  # names.yaml: the Instruct model's shape is the base's
    ("qwen3-coder-480b", "Qwen/Qwen3-Coder-480B-A35B-Instruct"),  # names.yaml alias
])
def test_shipped_configs_answer_by_hub_id_short_name_and_short_form(name, hub_id):
    found = lookup(name)
    assert isinstance(found, ShippedConfig) and found.hub_id == hub_id


@pytest.mark.parametrize("name, preset", [
    ("llama-3.3-70b", "llama-3.3-70b"), ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),
    ("deepseek-v3", "deepseek-v3"), ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
    ("gpt-oss-120b", "gpt-oss-120b"), ("openai/gpt-oss-120b", "gpt-oss-120b"),
    ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
    ("qwen3-30b-a3b-instruct-2507", None),  # a shipped config: the Instruct-2507 release (not the base preset)
    ("qwen2.5-7b", "qwen2.5-7b"),  # the preset (base), not Qwen2.5-7B-Instruct's short form
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "llama-4-maverick"),
    ("mistral-7b-instruct-v0.3", "mistral-7b-v0.3"),
])
def test_presets_answer_first(name, preset):
    found = lookup(name)
    if preset is None:
        assert isinstance(found, ShippedConfig) and found.hub_id == "Qwen/Qwen3-30B-A3B-Instruct-2507"
    else:
        assert found.name == preset


def test_every_preset_name_still_means_its_preset():
    # the names a preset had before configs were shipped keep their meaning: a preset's name is looked up first
    for entry in builtin_entries():
        for alias in (entry.name, entry.display_name, *entry.aliases):
            assert lookup(alias) is entry, alias


def test_a_short_name_two_configs_share_is_refused_naming_both():
    with pytest.raises(InputError, match="Qwen/Qwen3-VL-32B-Instruct and Qwen/Qwen3-VL-32B-Thinking"):
        lookup("qwen3-vl-32b")
    assert lookup("Qwen/Qwen3-VL-32B-Thinking").hub_id == "Qwen/Qwen3-VL-32B-Thinking"  # the hub id always works


def test_a_short_name_of_two_organisations_is_ambiguous(monkeypatch):
    # no two shipped hub ids share the part after the organisation today: the rule is checked on a made-up pair
    base = shipped_configs()[0]
    twins = (ShippedConfig(**{**base.__dict__, "hub_id": "org-a/Twin-7B"}),
             ShippedConfig(**{**base.__dict__, "hub_id": "org-b/Twin-7B"}))
    monkeypatch.setattr(shipped, "shipped_configs", lambda: twins)
    shipped._names.cache_clear()
    try:
        with pytest.raises(InputError, match="org-a/Twin-7B and org-b/Twin-7B"):
            find_shipped("twin-7b")
        assert find_shipped("ORG-B/twin-7b").hub_id == "org-b/Twin-7B"
    finally:
        shipped._names.cache_clear()


def test_an_unknown_name_offers_presets_and_hub_ids():
    with pytest.raises(InputError, match=r"did you mean .*Qwen/Qwen3-32B") as error:
        lookup("qwen3-31b")
    assert "sizer models" in str(error.value)
    with pytest.raises(InputError, match="did you mean"):
        model_entry("qwen3-32b")  # a shipped config has no preset entry


def test_no_preset_name_hides_a_shipped_configs_own_name_except_the_same_model():
    # a preset whose name is a shipped config's hub id answers for it: it must be that model (same shape)
    from sizer.workloads.listing import configs_answered_by_presets

    covered = configs_answered_by_presets()
    assert set(covered) == {c.hub_id for c in shipped_configs() if name_key(c.hub_id) in _index()}
    for hub_id, preset in covered.items():
        if hub_id == "google-bert/bert-base-cased":  # the preset is bert-base-uncased: 30522 tokens, the cased 28996
            continue
        config = shipped.shipped_architecture(hub_id)
        assert config.params_total() == pytest.approx(find_model(preset).params_total(), rel=1e-3), hub_id


def test_names_yaml_names_only_indexed_configs_and_known_formats():
    from sizer.runtimes.formats import WEIGHT_FORMATS

    named = [c for c in shipped_configs() if c.aliases or c.checkpoint_weights]
    assert named and all(c.checkpoint_weights in (None, *WEIGHT_FORMATS) for c in named)
    assert all(c.checkpoint_source for c in named if c.checkpoint_weights)


def test_the_index_is_read_without_parsing_a_config(monkeypatch):
    # start-up stays cheap: names come from the index; a config is parsed only when its model is asked
    from sizer.workloads import hf_config

    def no_parse(path):
        raise AssertionError(f"parsed {path}")

    monkeypatch.setattr(hf_config, "load_json", no_parse)
    shipped._names.cache_clear()
    assert lookup("qwen3-32b").hub_id == "Qwen/Qwen3-32B"
    with pytest.raises(AssertionError, match="parsed"):
        shipped.config_data("Qwen/Qwen3-32B")


def test_the_shape_only_presets_are_unverified_and_say_what_was_taken_from_where():
    from sizer.datafile import load_yaml
    from sizer.workloads.registry import models_files

    (extra,) = models_files()[1:]
    entries = load_yaml(extra, "model")["models"]
    assert len(entries) >= 20
    for entry in entries:
        assert entry["verified"] is False and "taken from" in entry["notes"] or "as " in entry["notes"], entry["name"]
        assert "@" in entry["source"], entry["name"]  # a repository at a commit (or the spec page for Llama 3.3)
        assert model_entry(entry["name"]).verified is False


def test_llama_3_3_70b_is_llama_3_1_70b_s_architecture():
    # meta-llama/llama-models sku_list.py gives both the same arch_args
    assert find_model("llama-3.3-70b").params_total() == find_model("llama-3.1-70b").params_total()
    assert find_model("meta-llama/Llama-3.3-70B-Instruct").name == "llama-3.3-70b"


@pytest.mark.parametrize("name, billions", [
    # the sizes the hub ids state ("OLMo-2-1124-7B": 7B): the FFN, tying and biases the presets took from
    # siblings keep each within 10 % of it
    ("gemma-3-1b", 1), ("qwen2-1.5b", 1.5), ("qwen2.5-1.5b", 1.5), ("olmo-2-7b", 7), ("olmo-2-13b", 13),
    ("olmo-2-32b", 32), ("glm-4-9b", 9), ("tinyllama-1.1b", 1.1), ("codellama-7b", 7), ("codellama-13b", 13),
    ("mistral-7b-v0.3", 7), ("qwen2-7b", 7), ("qwen2.5-coder-32b", 32), ("llama-3.3-70b", 70),
])
def test_shape_only_presets_match_their_stated_sizes(name, billions):
    assert find_model(name).params_total() / 1e9 == pytest.approx(billions, rel=0.1)


@pytest.mark.parametrize("name, billions, active", [
    # The sizes the hub ids state, within 10 % as above (a one- or two-digit label is the model's name, rounded by up
    # to ~7 %: tests/sizer/workloads/test_hf_config_folder.py): the FFN type, norms, tying and biases the presets took
    # from transformers' configuration classes or siblings keep each within it. "A2.7B", "A3B", "A22B": active.
    ("gemma-3-270m", 0.27, None), ("smollm2-360m", 0.36, None), ("smollm3-3b", 3, None), ("starcoder2-7b", 7, None),
    ("stablelm-2-zephyr-1.6b", 1.6, None), ("aya-23-8b", 8, None), ("qwen3-vl-4b", 4, None), ("qwen3-vl-8b", 8, None),
    ("qwen3-vl-30b-a3b", 30, 3), ("qwen3-vl-235b-a22b", 235, 22), ("deepseek-moe-16b", 16, None),
    ("qwen1.5-moe-a2.7b", None, 2.7),
    # phi-2's name states no size: 2.7B is its model card's (recalled); Ministral 3 3B's language model is 3.4B on
    # its model card (recalled, as the preset's notes say): the "3B" counts in a way the card does not explain
    ("phi-2", 2.7, None), ("ministral-3-3b", 3.4, None),
])
def test_the_presets_completed_from_family_configs_match_their_stated_sizes(name, billions, active):
    arch = find_model(name)
    if billions is not None:
        assert arch.params_total() / 1e9 == pytest.approx(billions, rel=0.1)
    if active is not None:
        assert arch.moe and arch.params_active() / 1e9 == pytest.approx(active, rel=0.12)


@pytest.mark.parametrize("preset, sibling", [
    # text models of the same shape as a shipped config or preset: the same weights, the vision tower not counted
    # (Qwen3-VL-2B's "2B" counts its ~0.4B vision tower, so its own label is no check: 1.72B here)
    ("qwen3-vl-2b", "Qwen/Qwen3-1.7B"), ("qwen3-vl-4b", "Qwen/Qwen3-4B"), ("qwen3-vl-8b", "Qwen/Qwen3-8B"),
    ("qwen3-vl-30b-a3b", "Qwen/Qwen3-30B-A3B"), ("qwen3-vl-235b-a22b", "Qwen/Qwen3-235B-A22B"),
    ("phi-3.5-vision", "phi-3.5-mini"), ("internlm2-7b", "internlm2.5-7b"),
])
def test_text_models_count_their_siblings_weights(preset, sibling):
    arch, other = find_model(preset), find_model(sibling)
    assert (arch.params_total(), arch.params_active()) == (other.params_total(), other.params_active())
