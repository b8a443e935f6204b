"""sizer/workloads/refused.py: the models refused by name (catalog/model_presets/not-supported.yaml), and every row
of ../shared/data/hf-configs/model-shapes-2026-12.csv answered by hub id, as a preset or as a refusal naming the
model's config field, never "unknown model" and never a plain decoder."""
from __future__ import annotations

import csv

import pytest
from pydantic import ValidationError

from sizer.errors import InputError
from sizer.workloads import refused
from sizer.workloads.listing import unsupported_models
from sizer.workloads.names import name_key
from sizer.workloads.refused import RefusedModel, refusal, refused_models
from sizer.workloads.registry import ModelEntry, _index, find_model, lookup, model_source, models_files
from sizer.workloads.shipped import shipped_keys
from tests.conftest import SHARED_DATA

SHAPES = SHARED_DATA / "hf-configs" / "model-shapes-2026-12.csv"


def _rows() -> list[dict[str, str]]:
    if not SHAPES.is_file():
        return []
    return list(csv.DictReader(SHAPES.open(encoding="utf-8")))


@pytest.mark.skipif(not SHAPES.is_file(), reason="../shared/data (the project's reference data) is not beside the checkout")
def test_the_csv_has_its_65_rows():
    assert len(_rows()) == 65


@pytest.mark.parametrize("hub_id", sorted({row["hub_id"] for row in _rows()}) or
                         [pytest.param("", marks=pytest.mark.skip(reason="../shared/data is not beside the checkout"))])
def test_every_row_is_a_preset_with_its_shape_or_a_refusal_naming_a_model_field(hub_id):
    try:
        found = lookup(hub_id)
    except InputError as error:
        assert error.field is not None and error.field.startswith("model."), error.message
        assert "sizer" in error.message and name_key(hub_id) in {name_key(e.name) for e in refused_models()}
        return
    # a preset (or shipped config): the shape the row gives is the one answered
    arch = find_model(hub_id)
    row = next(r for r in _rows() if r["hub_id"] == hub_id and (not r["max_position"] or
                                                                 int(r["max_position"]) == arch.max_context))
    fields = {"n_layers": arch.layers, "hidden": arch.hidden, "n_heads": arch.heads, "n_kv_heads": arch.kv_heads,
              "experts": arch.experts, "top_k": arch.experts_per_token}
    for column, value in fields.items():
        if row[column]:
            assert int(row[column]) == value, (hub_id, column)
    # a mixture's row gives the dense blocks' width or (Llama 4's) each expert's
    assert int(row["intermediate"]) in {arch.ffn_hidden, arch.moe_ffn_hidden}, hub_id
    # the vocabulary: the hub config's where the JAX reference pads it (Gemma 2's 256128 rows, gemma-2-2b preset)
    assert int(row["vocab"]) == arch.vocab or row["source_ref"].startswith("google-deepmind/gemma"), hub_id
    if isinstance(found, ModelEntry):
        assert found.verified is False and found.notes


@pytest.mark.parametrize("name, field", [
    ("LiquidAI/LFM2-1.2B", "model.layer_types"), ("lfm2-1.2b", "model.layer_types"),
    ("google/gemma-3n-E4B-it", "model.text_config.hidden_size_per_layer_input"),
    ("gemma-3n-e2b", "model.text_config.hidden_size_per_layer_input"),
    ("gemma-4-e4b-it", "model.text_config.hidden_size_per_layer_input"),
    ("Qwen/Qwen3.5-0.8B", "model.text_config.layer_types"), ("qwen3.5-4b", "model.text_config.layer_types"),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "model.text_config.cross_attention_layers"),
    ("stepfun-ai/Step-3.7-Flash", "model.num_sliding_attention_heads"),
    ("openbmb/MiniCPM-MoE-8x2B", "model.intermediate_size"),
])
def test_a_refused_model_is_refused_by_hub_id_and_short_name_naming_the_field(name, field):
    with pytest.raises(InputError) as error:
        find_model(name)
    assert error.value.field == field
    assert "sizer" in error.value.message and "@" in error.value.message  # the reason and its source


def test_lfm2_is_refused_for_its_short_convolutions():
    error = refusal("lfm2-1.2b")
    assert error is not None and "hybrid short-convolution blocks" in error.message
    assert "which sizer does not cost" in error.message


def test_no_refused_name_is_a_preset_or_shipped_name():
    names = {name_key(alias) for entry in refused_models() for alias in (entry.name, *entry.aliases)}
    assert not names & set(_index()) and not names & set(shipped_keys())


def test_the_listing_shows_each_refusal_with_its_field_and_reason():
    listed = {m.name: m for m in unsupported_models()}
    for entry in refused_models():
        shown = listed[entry.name]
        assert shown.field == entry.field and shown.reason == refusal(entry.name).message
        assert shown.source == entry.source


def test_a_hub_id_refused_by_name_stays_a_name_on_the_command_line():
    # not a missing file: the refusal naming the field is the answer
    assert model_source("LiquidAI/LFM2-1.2B") == "LiquidAI/LFM2-1.2B"


def test_the_table_is_no_preset_file_and_is_read_only_for_names_no_preset_has():
    assert refused.refused_file() not in models_files()
    refused.refused_models.cache_clear()
    refused._index.cache_clear()
    before = refused.refused_models.cache_info().misses
    lookup("llama-2-7b")
    lookup("Qwen/Qwen3-32B")
    assert refused.refused_models.cache_info().misses == before
    with pytest.raises(InputError):
        lookup("lfm2-1.2b")
    assert refused.refused_models.cache_info().misses == before + 1


def test_an_entry_gives_one_reason():
    base = dict(name="org/model", field="model.layer_types", source="somewhere@abc:file")
    with pytest.raises(ValidationError):
        RefusedModel(**base)
    with pytest.raises(ValidationError):
        RefusedModel(**base, mechanism="hybrid blocks of x", unstated="expert width here")
    with pytest.raises(ValidationError):
        RefusedModel(**{**base, "field": "layer_types"}, mechanism="hybrid blocks of x")
    assert "does not guess" in RefusedModel(**base, unstated="expert width here").reason
